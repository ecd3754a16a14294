"""Armonia delegation work requests: delegation, leases, budget slices, permissions."""
