"""Named crash points: a fault hook that kills this process at a chosen instant.

When the environment variable REFERENCE_CRASH_AT names a point at launch,
the process sends itself SIGKILL on reaching it: no reply, no rollback by this process, no
cleanup, as an OOM kill or a power cut would leave things. The store alone
decides what survived. Unset (or naming another point), every point is a no-op.
"""

from __future__ import annotations

import os
import signal
from enum import StrEnum
from typing import Final

CRASH_ENV: Final = "REFERENCE_CRASH_AT"


class CrashPoint(StrEnum):
    CLAIM_COMMITTED = "claim_committed"
    """A claim has committed; its lease is not yet reported to the caller."""
    RESULT_WRITTEN = "result_written"
    """A publish has committed the result and the returned budget; no reply yet."""
    GATE_COUNTED = "gate_counted"
    """The allowance gate has counted and admitted a wake, whose run is not inserted yet."""


_NAMED: Final = os.environ.get(CRASH_ENV)
"""Read once, at import: the gate passes a point on every decision, so the check must be cheap."""


def reached(point: CrashPoint) -> None:
    """Die here, at once, when this is the point the environment named at launch."""
    if point.value == _NAMED:
        os.kill(os.getpid(), signal.SIGKILL)
