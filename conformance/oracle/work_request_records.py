"""What the work-request model remembers of each campaign, session and request: plain records
the oracle copies (one level deep) before each try of a search, and compares by the fields its
operations change."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NotRequired, TypedDict, TypeVar

from conformance.driver import Completion, DelegationKind, Lease, Permissions

T = TypeVar("T")


@dataclass
class CampaignRecord:
    campaign_id: str
    environment_id: str
    total: int
    available: int
    root_spent: int = 0


@dataclass
class SessionRecord:
    session_id: str
    campaign_id: str
    permissions: Permissions
    depth: int
    request_id: str | None
    """The request this session serves; None for a root session."""
    delegations: int = 0
    kept_slots: int = 0
    """Refused delegations that used up a count-cap slot under WR-4's slot-kept reading."""


@dataclass
class RequestRecord:
    request_id: str
    kind: DelegationKind
    environment_id: str
    campaign_id: str
    originating_session_id: str
    child_session_id: str
    deliverable: str
    acceptance_checks: list[str]
    budget_slice: int
    permissions: Permissions
    assignee: str | None
    remaining: int
    generation: int
    """The generation of the newest grant, or what the unclaimed request reported."""
    claimed: bool = False
    spent: int = 0
    holder: str | None = None
    expires_at: datetime | None = None
    completion: Completion | None = None

    def lease(self) -> Lease:
        """The lease as the port reports it: closed when the request completed."""
        closed_at = self.completion.completed_at if self.completion else None
        return Lease(
            holder=self.holder,
            generation=self.generation,
            expires_at=self.expires_at,
            closed_at=closed_at,
        )


def clone(record: T) -> T:
    """A copy of a record one level deep: a new object holding the same field values."""
    twin = object.__new__(type(record))
    twin.__dict__.update(record.__dict__)
    return twin


def changing(request: RequestRecord) -> tuple[object, ...]:
    """A request's fields that operations change, after its id."""
    completion = request.completion
    closed = None if completion is None else (completion.result_ref, completion.completed_at)
    return (
        request.request_id,
        request.remaining,
        request.spent,
        request.generation,
        request.claimed,
        request.holder,
        request.expires_at,
        closed,
        None if completion is None else completion.budget_returned,
    )


class Delegated(TypedDict):
    """A delegation as the implementation made it: what was asked, the grants given (narrowed,
    if it narrowed them), its identifiers, and the generation its unclaimed lease reports."""

    kind: DelegationKind
    deliverable: str
    acceptance_checks: list[str]
    budget_slice: int
    permissions: Permissions
    assignee: str | None
    request_id: str
    child_session_id: str
    generation: NotRequired[int]
