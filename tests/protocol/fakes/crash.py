"""Crashes mid-run: the process exits while the harness waits for a reply."""

import sys

from fake_protocol import serve


def crash(seq: int, args: dict[str, object]) -> None:
    print("panic: runtime error: index out of range [3] with length 3", file=sys.stderr, flush=True)
    sys.exit(2)


serve(crash)
