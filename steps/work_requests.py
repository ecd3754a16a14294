"""Work-request step definitions (REQ-ARMONIA-WORKREQ-001)."""
