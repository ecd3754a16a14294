"""Exits before reading anything, as an implementation that cannot open its store would."""

import sys

print("fatal: cannot open store: permission denied", file=sys.stderr, flush=True)
sys.exit(1)
