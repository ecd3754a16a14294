"""The wire: protocol v1 (its messages, schemas and codec) and the reference served over it."""
