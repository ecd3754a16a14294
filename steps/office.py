"""Office step definitions (REQ-OFFICE-ASSIGN-RATE-001 to -003)."""
