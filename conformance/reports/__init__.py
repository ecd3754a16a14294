"""Every report is derived from a results stream; none reads anything else of a run."""
