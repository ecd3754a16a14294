"""A wake on its way into the run queue, and what the queue tells its producer."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from conformance.reference.office.classifier import PayloadFacts, read_payload


@dataclass(frozen=True)
class Wake:
    """One request to run an agent; the payload text is kept exactly as produced.

    `facts` is what the coalescer, the gate and the inserted run read off the
    payload: read here, once, rather than once by each of them.
    """

    agent_id: str
    reason: str
    payload: str
    dedup_key: str | None
    facts: PayloadFacts = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", read_payload(self.payload))


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
