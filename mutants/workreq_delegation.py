"""Mutants of delegation: permission narrowing, caps, what a request records, how children draw."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.orm import Session

from conformance.adapters.edits import edited
from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.errors import PermissionEscalation
from conformance.reference.workreq import delegation
from conformance.reference.workreq import service as workreq_service
from conformance.reference.workreq.budget_ledger import reserve_slice
from conformance.reference.workreq.delegation import DelegationKind, DelegationOrder
from conformance.reference.workreq.delegation import _record_request as reference_record_request
from conformance.reference.workreq.models import Campaign, DelegationSession, WorkRequestRecord
from conformance.reference.workreq.permissions import PermissionSet, ensure_narrowing
from conformance.reference.workreq.settings import WorkRequestSettings
from conformance.reference.workreq.store import find_campaign, find_session


def no_narrowing_check(requested: PermissionSet, held: PermissionSet) -> None:
    """The union mutant grants more than was asked, so it checks nothing."""


def record_with_union(
    tx: Session,
    order: DelegationOrder,
    kind: DelegationKind,
    originator: DelegationSession,
    campaign: Campaign,
    now: datetime,
) -> WorkRequestRecord:
    """Grants the child its originator's set plus whatever it asked for."""
    held = PermissionSet.from_lists(originator.tools, originator.devices)
    asked = order.permissions
    union = PermissionSet(asked.tools | held.tools, asked.devices | held.devices)
    widened = replace(order, permissions=union)
    return reference_record_request(tx, widened, kind, originator, campaign, now)


def record_without_checks(
    tx: Session,
    order: DelegationOrder,
    kind: DelegationKind,
    originator: DelegationSession,
    campaign: Campaign,
    now: datetime,
) -> WorkRequestRecord:
    """Does not persist the acceptance checks."""
    unchecked = replace(order, acceptance_checks=())
    return reference_record_request(tx, unchecked, kind, originator, campaign, now)


def record_subagent_inline(
    tx: Session,
    order: DelegationOrder,
    kind: DelegationKind,
    originator: DelegationSession,
    campaign: Campaign,
    now: datetime,
) -> WorkRequestRecord:
    """Runs a subagent inside its originator's budget: its session is not tied to its request."""
    record = reference_record_request(tx, order, kind, originator, campaign, now)
    if kind is DelegationKind.SUBAGENT:
        tx.execute(
            update(DelegationSession)
            .where(DelegationSession.session_id == record.child_session_id)
            .values(request_id=None)
        )
    return record


def ensure_pooled_narrowing(requested: PermissionSet, held: PermissionSet) -> None:
    """Checks tools and devices as one pool of names, so a device can pass for a tool."""
    excess = (requested.tools | requested.devices) - (held.tools | held.devices)
    if excess:
        raise PermissionEscalation(f"the originator lacks {sorted(excess)}")


def delegate_checking_root(
    tx: Session, order: DelegationOrder, settings: WorkRequestSettings, now: datetime
) -> WorkRequestRecord:
    """The reference delegation, but permissions are checked against the lineage's root session."""
    kind = delegation._validated_kind(order)
    originator = find_session(tx, order.originating_session_id)
    campaign = find_campaign(tx, originator.campaign_id)
    delegation._ensure_assignee_is_member(tx, campaign, order.assignee)
    delegation._ensure_depth_allows_child(originator, settings)
    delegation._take_child_slot(tx, originator, settings)
    root = originator
    while root.parent_session_id is not None:
        root = find_session(tx, root.parent_session_id)
    ensure_narrowing(order.permissions, PermissionSet.from_lists(root.tools, root.devices))
    reserve_slice(tx, originator, order.budget_slice)
    return delegation._record_request(tx, order, kind, originator, campaign, now)


MUTANTS = [
    Mutant(
        "child_granted_union",
        "AC-ARMONIA-WORKREQ-001.2",
        Capability.WORK_REQUESTS,
        "grants the child the union of its originator's set and the requested one",
        lambda: [
            Patch(delegation, "ensure_narrowing", no_narrowing_check),
            Patch(delegation, "_record_request", record_with_union),
        ],
    ),
    Mutant(
        "grandchild_checked_against_root",
        "AC-ARMONIA-WORKREQ-001.2",
        Capability.WORK_REQUESTS,
        "checks a nested delegation's permissions against the root session, not its originator",
        lambda: [Patch(workreq_service, "delegate_request", delegate_checking_root)],
    ),
    Mutant(
        "tools_and_devices_pooled",
        "AC-ARMONIA-WORKREQ-001.2",
        Capability.WORK_REQUESTS,
        "checks tool and device grants as one pool of names",
        lambda: [Patch(delegation, "ensure_narrowing", ensure_pooled_narrowing)],
    ),
    Mutant(
        "depth_cap_off_by_one",
        "AC-ARMONIA-WORKREQ-001.8",
        Capability.WORK_REQUESTS,
        "compares the originator's depth with the cap, allowing one level too many",
        lambda: [
            edited(
                delegation,
                "_ensure_depth_allows_child",
                "if originator.depth + 1 > settings.max_depth:",
                "if originator.depth > settings.max_depth:",
            )
        ],
    ),
    Mutant(
        "count_cap_off_by_one",
        "AC-ARMONIA-WORKREQ-001.8",
        Capability.WORK_REQUESTS,
        "lets a session delegate while its count equals the cap, one request too many",
        lambda: [
            edited(
                delegation,
                "_take_child_slot",
                ".where(DelegationSession.children_count < settings.max_children_per_session)",
                ".where(DelegationSession.children_count <= settings.max_children_per_session)",
            )
        ],
    ),
    Mutant(
        "acceptance_checks_not_stored",
        "AC-ARMONIA-WORKREQ-001.10",
        Capability.WORK_REQUESTS,
        "does not persist a request's acceptance checks",
        lambda: [Patch(delegation, "_record_request", record_without_checks)],
    ),
    Mutant(
        "subagent_draws_on_campaign",
        "AC-ARMONIA-WORKREQ-001.11",
        Capability.WORK_REQUESTS,
        "runs a subagent inside its originator's budget, so its usage never touches its slice",
        lambda: [Patch(delegation, "_record_request", record_subagent_inline)],
    ),
]
