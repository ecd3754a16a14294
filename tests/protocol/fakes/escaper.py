"""Leaves a process that escapes it (setsid, then a second fork), then hangs on its first action.

The escaped process and the fake itself write their pids into $ESCAPER_PIDS
(when it is given and writable), so a test can check that nothing of it
outlives the harness.
"""

import os
import sys
import time
from pathlib import Path

from fake_protocol import DESCRIPTION, OFFICE, serve

DESCRIPTION["office"] = OFFICE

pids = Path(os.environ.get("ESCAPER_PIDS", "/nonexistent"))


def note(kind: str) -> None:
    if pids.is_dir():
        (pids / str(os.getpid())).write_text(kind)


note("implementation")
if os.fork() == 0:
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    note("escaped")
    sys.stdin.close()
    time.sleep(300)
    os._exit(0)


def hang(seq: int, args: dict[str, object]) -> None:
    time.sleep(300)


serve(hang, trigger="mutation_effects")
