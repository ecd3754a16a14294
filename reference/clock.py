"""Time as the reference sees it: injected, so that a harness can own it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware UTC with microsecond precision."""
        ...


class SystemClock:
    """The wall clock, for production use (frozen by freezegun in tests)."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime) -> None:
        self._now = to_utc(start)

    def now(self) -> datetime:
        return self._now

    def set(self, instant: datetime) -> None:
        self._now = to_utc(instant)

    def advance(self, delta: timedelta) -> datetime:
        self._now = self._now + delta
        return self._now


def to_utc(instant: datetime) -> datetime:
    """Reject naive instants: an instant without a zone is ambiguous."""
    if instant.tzinfo is None:
        raise ValueError(f"naive datetime {instant.isoformat()} has no time zone")
    return instant.astimezone(UTC)
