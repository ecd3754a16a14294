"""Waiting for a process a test expects to end: a kill, or an exit, takes a moment to land."""

from __future__ import annotations

import os
import time


def outlives(pid: int, seconds: float = 3.0) -> bool:
    """Whether the process still runs (or is still unreaped) after `seconds`; polled, so it
    answers as soon as the process is gone."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.05)
    return True
