"""What the work-request service answers: plain immutable values, detached from the store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from conformance.reference.workreq.liveness import reported_state
from conformance.reference.workreq.models import DelegationSession, StoredRequest
from conformance.reference.workreq.permissions import PermissionSet


@dataclass(frozen=True)
class LeaseView:
    holder: str | None
    generation: int
    expires_at: datetime | None
    closed_at: datetime | None


@dataclass(frozen=True)
class RequestView:
    """Every field of the data contract; `state` is as reported at the instant it was read."""

    request_id: str
    kind: str
    environment_id: str
    campaign_id: str
    originating_session_id: str
    child_session_id: str
    deliverable: str
    acceptance_checks: tuple[str, ...]
    budget_slice: int
    budget_spent: int
    permissions: PermissionSet
    assignee: str | None
    lease: LeaseView
    state: str
    result_ref: str | None


@dataclass(frozen=True)
class CompletionView:
    request_id: str
    holder: str
    generation: int
    result_ref: str
    completed_at: datetime
    budget_returned: int


@dataclass(frozen=True)
class SessionView:
    """A session with the two numbers the caps compare: its depth and its delegations."""

    session_id: str
    campaign_id: str
    request_id: str | None
    depth: int
    delegations: int


@dataclass(frozen=True)
class BudgetView:
    campaign_id: str
    total: int
    available: int
    reserved: int
    spent: int

    @property
    def is_conserved(self) -> bool:
        return self.total == self.available + self.reserved + self.spent


def lease_view(record: StoredRequest) -> LeaseView:
    return LeaseView(
        holder=record.lease_holder,
        generation=record.lease_generation,
        expires_at=record.lease_expires_at,
        closed_at=record.lease_closed_at,
    )


def request_view(record: StoredRequest, now: datetime) -> RequestView:
    return RequestView(
        request_id=record.request_id,
        kind=record.kind,
        environment_id=record.environment_id,
        campaign_id=record.campaign_id,
        originating_session_id=record.originating_session_id,
        child_session_id=record.child_session_id,
        deliverable=record.deliverable,
        acceptance_checks=tuple(record.acceptance_checks),
        budget_slice=record.budget_slice,
        budget_spent=record.spent,
        permissions=PermissionSet.from_lists(record.tools, record.devices),
        assignee=record.assignee,
        lease=lease_view(record),
        state=reported_state(record, now),
        result_ref=record.result_ref,
    )


def session_view(session: DelegationSession) -> SessionView:
    return SessionView(
        session_id=session.session_id,
        campaign_id=session.campaign_id,
        request_id=session.request_id,
        depth=session.depth,
        delegations=session.children_count,
    )
