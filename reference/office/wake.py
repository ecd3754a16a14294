"""A wake on its way into the run queue, and what the queue tells its producer."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class Wake:
    """One request to run an agent; the payload text is kept exactly as produced."""

    agent_id: str
    reason: str
    payload: str
    dedup_key: str | None


class Outcome(StrEnum):
    QUEUED = "queued"
    COALESCED = "coalesced"
    DEDUPLICATED = "deduplicated"
    RATE_LIMITED = "rate_limited"
    NONE = "none"
    """No enqueue was attempted, or it errored."""


@dataclass(frozen=True)
class EnqueueResult:
    outcome: Outcome
    run_id: str | None = None
