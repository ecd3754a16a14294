"""The reference's delegation limits, declared here once and reported through describe()."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True)
class WorkRequestSettings:
    """Depth and count caps on delegation, and how long a claim or heartbeat lasts."""

    max_depth: int = 3
    max_children_per_session: int = 4
    lease_seconds: float = 30.0

    @property
    def lease_duration(self) -> timedelta:
        return timedelta(seconds=self.lease_seconds)


SETTINGS = WorkRequestSettings()
