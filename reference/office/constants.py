"""The Office run queue's fixed values, declared once and shared by code and tests."""

from __future__ import annotations

from datetime import timedelta
from typing import Final

ASSIGNMENT_ALLOWANCE: Final = 5
"""N: admitted agent-initiated assignment wakes per task per window (at least 1)."""

ASSIGNMENT_WINDOW: Final = timedelta(minutes=10)
"""W: the rolling window the allowance is counted over, (now - W, now]."""

COALESCE_WINDOW: Final = timedelta(seconds=5)
"""A queued run requested strictly within this span absorbs a matching wake."""

DEDUP_LOOKBACK: Final = timedelta(hours=24)
"""A keyed wake whose key was requested within this span is a redelivery."""

TASK_ASSIGNED: Final = "task_assigned"
"""The wake reason the allowance gate binds."""

AGENT_ACTOR: Final = "agent"
"""The only actor type that puts a wake in the gate's scope."""

NO_COALESCE_KEY_PREFIX: Final = "task_comment:"
"""Wakes keyed with this prefix never merge into another run."""

RUN_STATUSES: Final = frozenset({"queued", "claimed", "running", "finished", "failed", "cancelled"})
QUEUED: Final = "queued"

assert ASSIGNMENT_ALLOWANCE >= 1, "an allowance of 0 would refuse every agent assignment wake"
