"""Delegation: a session spawn or a subagent becomes a durable work request plus a child session.

Refusals come in a fixed order (bad input, unknown originator, depth cap,
count cap, permission escalation, budget), and the caller runs all of this in
one transaction, so a refusal at any step writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from uuid import uuid4

from sqlalchemy import update
from sqlalchemy.orm import Session

from conformance.reference.errors import CountCap, DepthCap, InvalidInput
from conformance.reference.workreq.budget_ledger import reserve_slice
from conformance.reference.workreq.models import (
    Campaign,
    DelegationSession,
    State,
    WorkRequestRecord,
)
from conformance.reference.workreq.permissions import PermissionSet, ensure_narrowing
from conformance.reference.workreq.registry import require_amount, require_id
from conformance.reference.workreq.settings import WorkRequestSettings
from conformance.reference.workreq.store import (
    conditional_update,
    find_campaign,
    find_session,
    is_member,
)


class DelegationKind(StrEnum):
    """Both ways an agent delegates; each creates a work request the same way."""

    SPAWN = "spawn"
    SUBAGENT = "subagent"


@dataclass(frozen=True)
class DelegationOrder:
    kind: str
    originating_session_id: str
    deliverable: str
    acceptance_checks: tuple[str, ...]
    budget_slice: int
    permissions: PermissionSet
    assignee: str | None


def delegate(
    tx: Session, order: DelegationOrder, settings: WorkRequestSettings, now: datetime
) -> WorkRequestRecord:
    kind = _validated_kind(order)
    originator = find_session(tx, order.originating_session_id)
    campaign = find_campaign(tx, originator.campaign_id)
    _ensure_assignee_is_member(tx, campaign, order.assignee)
    _ensure_depth_allows_child(originator, settings)
    _take_child_slot(tx, originator, settings)
    ensure_narrowing(
        order.permissions, PermissionSet.from_lists(originator.tools, originator.devices)
    )
    reserve_slice(tx, originator, order.budget_slice)
    return _record_request(tx, order, kind, originator, campaign, now)


def _validated_kind(order: DelegationOrder) -> DelegationKind:
    """Refusals that need no lookup: the order's own shape."""
    try:
        kind = DelegationKind(order.kind)
    except ValueError:
        raise InvalidInput(f"unknown delegation kind {order.kind!r}") from None
    require_id(order.deliverable, "the deliverable")
    require_amount(order.budget_slice, "a budget slice")
    if order.assignee is not None:
        require_id(order.assignee, "the assignee")
    return kind


def _ensure_assignee_is_member(tx: Session, campaign: Campaign, assignee: str | None) -> None:
    if assignee is not None and not is_member(tx, campaign.environment_id, assignee):
        raise InvalidInput(f"assignee {assignee!r} is not a member of the environment")


def _ensure_depth_allows_child(
    originator: DelegationSession, settings: WorkRequestSettings
) -> None:
    if originator.depth + 1 > settings.max_depth:
        raise DepthCap(
            f"a child of session {originator.session_id!r} would have depth "
            f"{originator.depth + 1}, beyond the cap of {settings.max_depth}"
        )


def _take_child_slot(
    tx: Session, originator: DelegationSession, settings: WorkRequestSettings
) -> None:
    """Count the new child against the originator's cap, decided by the database."""
    taken = conditional_update(
        tx,
        update(DelegationSession)
        .where(DelegationSession.session_id == originator.session_id)
        .where(DelegationSession.children_count < settings.max_children_per_session)
        .values(children_count=DelegationSession.children_count + 1),
    )
    if not taken:
        raise CountCap(
            f"session {originator.session_id!r} already has "
            f"{settings.max_children_per_session} delegated requests"
        )


def _record_request(
    tx: Session,
    order: DelegationOrder,
    kind: DelegationKind,
    originator: DelegationSession,
    campaign: Campaign,
    now: datetime,
) -> WorkRequestRecord:
    request_id = f"wr-{uuid4().hex}"
    child = DelegationSession(
        session_id=f"cs-{uuid4().hex}",
        campaign_id=campaign.campaign_id,
        principal=originator.principal,
        parent_session_id=originator.session_id,
        depth=originator.depth + 1,
        tools=order.permissions.tool_list(),
        devices=order.permissions.device_list(),
        request_id=request_id,
        children_count=0,
    )
    tx.add(child)
    tx.flush()
    record = WorkRequestRecord(
        request_id=request_id,
        kind=kind,
        environment_id=campaign.environment_id,
        campaign_id=campaign.campaign_id,
        originating_session_id=originator.session_id,
        parent_request_id=originator.request_id,
        child_session_id=child.session_id,
        deliverable=order.deliverable,
        acceptance_checks=list(order.acceptance_checks),
        budget_slice=order.budget_slice,
        spent=0,
        carved=0,
        tools=order.permissions.tool_list(),
        devices=order.permissions.device_list(),
        assignee=order.assignee,
        lease_generation=0,
        state=State.OPEN,
        created_at=now,
    )
    tx.add(record)
    tx.flush()
    return record
