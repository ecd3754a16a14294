"""The kit's own tests: each folder mirrors a package of the kit (see docs/kit.md)."""
