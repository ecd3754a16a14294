"""Prints its whole environment (and terminal colour codes) to stderr, then crashes."""

import os
import sys

from fake_protocol import DESCRIPTION, OFFICE, serve

DESCRIPTION["office"] = OFFICE


def leak(seq: int, args: dict[str, object]) -> None:
    for name, value in sorted(os.environ.items()):
        print(f"\x1b[31m{name}={value}\x1b[0m", file=sys.stderr, flush=True)
    sys.exit(3)


serve(leak, trigger="mutation_effects")
