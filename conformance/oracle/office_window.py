"""The assignment allowance as a rolling window over admitted agent wakes.

A task's allowance counts the agent-initiated wakes admitted for it whose
request instant, as persisted, lies in the half-open window (t - W, t]. A new agent wake at
t is refused when that count has reached N. Refusals leave no trace, so they
never consume the allowance.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from conformance.driver import OfficeConstants


class OfficeWindowOracle:
    """Admission decisions for agent wakes, task by task."""

    def __init__(self, allowance: int, window: timedelta) -> None:
        if allowance < 1:
            raise ValueError(f"allowance must be at least 1, got {allowance}")
        if window <= timedelta(0):
            raise ValueError(f"window must be positive, got {window}")
        self.allowance = allowance
        self.window = window
        self._admitted: defaultdict[str, list[datetime]] = defaultdict(list)

    @classmethod
    def from_constants(cls, constants: OfficeConstants) -> OfficeWindowOracle:
        """The oracle for the constants an implementation reports."""
        return cls(constants.allowance, timedelta(seconds=constants.window_seconds))

    def admitted(self, task_id: str) -> tuple[datetime, ...]:
        """The request instants of the agent wakes admitted for `task_id`, oldest first."""
        return tuple(self._admitted[task_id])

    def in_window(self, task_id: str, now: datetime) -> int:
        """How many admitted agent wakes of `task_id` lie in (now - W, now]."""
        start = now - self.window
        return sum(1 for instant in self._admitted[task_id] if start < instant <= now)

    def admits(self, task_id: str, now: datetime) -> bool:
        """Whether an agent wake for `task_id` at `now` would be admitted."""
        return self.in_window(task_id, now) < self.allowance

    def offer(self, task_id: str, now: datetime) -> bool:
        """Decide an agent wake at `now`, remembering it when admitted."""
        admitted = self.admits(task_id, now)
        if admitted:
            self.record(task_id, now)
        return admitted

    def resync(self, task_id: str, stored: list[datetime]) -> None:
        """Take `task_id`'s counted wakes from the store as it reads now (after a merge, which
        may move a run into or out of the count)."""
        self._admitted[task_id] = sorted(stored)

    def record(self, task_id: str, requested_at: datetime) -> None:
        """Remember an admitted agent wake at the request instant the implementation stored,
        which may be `now` cut to fewer digits: the window is over persisted instants."""
        self._admitted[task_id].append(requested_at)
