"""Mutants of the defects adversarial implementations once slipped past the suite.

Each stands for a false pass that was found by writing a wrong implementation:
out-of-scope wakes eating the allowance, a gate that refuses everything behind
unchecked setups, claims answered but never stored, a gate skipped on the
concurrent path, budget handed back in later snapshots, the delegation kind
ignored, subagent requests that do not outlive a restart, a completion closed
twice under a race, a lost update on a campaign's budget, a claim granted over
a live lease, and refused delegations that still leave a trace. The suite must
now kill each by its own criterion.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any
from unittest.mock import patch
from uuid import uuid4

from sqlalchemy import Select, delete, func, or_, select, update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.mutants.office_count import counting_with
from conformance.reference import app
from conformance.reference.errors import InsufficientBudget
from conformance.reference.office import service as office_service
from conformance.reference.office.constants import ASSIGNMENT_WINDOW, TASK_ASSIGNED
from conformance.reference.office.gate import AllowanceGate
from conformance.reference.office.models import Run
from conformance.reference.office.wake import Wake
from conformance.reference.workreq import budget_ledger, delegation, lease
from conformance.reference.workreq import service as workreq_service
from conformance.reference.workreq.budget_ledger import snapshot as reference_snapshot
from conformance.reference.workreq.delegation import DelegationKind, DelegationOrder
from conformance.reference.workreq.lease import Completion, refuse_unless_current
from conformance.reference.workreq.lease import claim as reference_claim
from conformance.reference.workreq.models import (
    Campaign,
    DelegationSession,
    State,
    WorkRequestRecord,
    remaining_expression,
)
from conformance.reference.workreq.registry import require_amount, require_id
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.settings import WorkRequestSettings
from conformance.reference.workreq.store import Executor, find_campaign, find_session
from conformance.reference.workreq.views import BudgetView, CompletionView, LeaseView

# --------------------------------------------------------------------------
# Office
# --------------------------------------------------------------------------


def count_every_non_user_run(task_id: str, now: datetime) -> Select[int]:
    """Counts every assignment run not stamped "user": producers without an actor, "Agent"
    and the like eat the agent allowance."""
    return (
        select(func.count())
        .select_from(Run)
        .where(
            Run.task_key == task_id,
            Run.reason == TASK_ASSIGNED,
            or_(Run.actor_type.is_(None), Run.actor_type != "user"),
            Run.requested_at > now - ASSIGNMENT_WINDOW,
            Run.requested_at <= now,
        )
    )


class RefusingGate(AllowanceGate):
    """Refuses every in-scope wake, whatever the count."""

    def refuses(self, observed: int) -> bool:
        return True


class GatelessWorkerGate(AllowanceGate):
    """Lets every wake through when it is evaluated on a worker of a concurrent batch."""

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
        if threading.current_thread() is not threading.main_thread():
            return True
        return super().admits(session, wake, now)


# --------------------------------------------------------------------------
# Work requests: storage
# --------------------------------------------------------------------------


def claim_without_storing(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    """Answers the lease a claim would grant and writes nothing of it."""
    stored = lease.read_lease(tx, request_id, holder)
    lease.refuse_claim(stored, holder, now)
    return LeaseView(
        holder=holder, generation=stored.generation + 1, expires_at=now + duration, closed_at=None
    )


def every_kind_is_spawn(order: DelegationOrder) -> DelegationKind:
    """Takes every delegation for a session spawn."""
    require_id(order.deliverable, "the deliverable")
    require_amount(order.budget_slice, "a budget slice")
    return DelegationKind.SPAWN


class ForgetfulSubagents(WorkRequestService):
    """Keeps subagent requests for the life of the coordinator only: a new one forgets them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if threading.current_thread() is not threading.main_thread():
            return
        with self._db.transaction() as tx:
            children = select(WorkRequestRecord.child_session_id).where(
                WorkRequestRecord.kind == DelegationKind.SUBAGENT
            )
            gone = list(tx.scalars(children))
            tx.execute(
                delete(WorkRequestRecord).where(WorkRequestRecord.kind == DelegationKind.SUBAGENT)
            )
            tx.execute(delete(DelegationSession).where(DelegationSession.session_id.in_(gone)))


# --------------------------------------------------------------------------
# Work requests: races
# --------------------------------------------------------------------------


def complete_by_stale_read(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    result_ref: str,
    now: datetime,
) -> Completion:
    """Checks the fence on the request as first read, then writes without restating it, and
    closes the slice at the remaining it read, with no once-only guard: racing completions of
    one request each close it and each give that back."""
    refuse_unless_current(lease.read_lease(tx, request_id, holder), holder, generation, now)
    returned, campaign_id, parent_request_id = tx.execute(
        select(
            remaining_expression(),
            WorkRequestRecord.campaign_id,
            WorkRequestRecord.parent_request_id,
        ).where(WorkRequestRecord.request_id == request_id)
    ).one()
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(
            state=State.COMPLETED,
            result_ref=result_ref,
            lease_closed_at=now,
            completed_at=now,
            returned=returned,
        )
    )
    view = CompletionView(request_id, holder, generation, result_ref, now, returned)
    return Completion(view, campaign_id, parent_request_id)


def delegate_on_a_stale_figure(
    tx: Session, order: DelegationOrder, settings: WorkRequestSettings, now: datetime
) -> WorkRequestRecord:
    """Reads the campaign's available budget first, and reserves a root slice by writing back
    that figure less the slice: delegations made at once all read the same figure, and every
    deduction but the last is lost."""
    originator = find_session(tx, order.originating_session_id)
    read = find_campaign(tx, originator.campaign_id).available

    def reserve(tx: Session, source: DelegationSession, amount: int) -> None:
        if source.request_id is not None:
            budget_ledger.reserve_slice(tx, source, amount)
            return
        if amount > read:
            raise InsufficientBudget(f"slice {amount} exceeds the {read} available")
        tx.execute(
            update(Campaign)
            .where(Campaign.campaign_id == source.campaign_id)
            .values(available=read - amount)
        )

    with patch.object(delegation, "reserve_slice", reserve):
        return delegation.delegate(tx, order, settings, now)


def claim_over_live_lease(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    """Grants the next generation to any claimant of an uncompleted request, live lease or not."""
    stored = lease.read_lease(tx, request_id, holder)
    lease.refuse_outsider(stored, holder)
    if stored.state == State.COMPLETED:
        return reference_claim(tx, request_id, holder, now, duration)
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(
            lease_generation=WorkRequestRecord.lease_generation + 1,
            lease_holder=holder,
            lease_expires_at=now + duration,
            state=State.IN_PROGRESS,
        )
    )
    granted = lease.read_lease(tx, request_id, holder)
    return LeaseView(granted.holder, granted.generation, granted.expires_at, closed_at=None)


_handed_back: set[str] = set()
"""Campaigns a concurrent batch has delegated from: later snapshots of them hand back 70."""


def reserve_and_remember_batches(tx: Session, originator: DelegationSession, amount: int) -> None:
    budget_ledger.reserve_slice(tx, originator, amount)
    if threading.current_thread() is not threading.main_thread():
        _handed_back.add(originator.campaign_id)


def snapshot_handing_back(tx: Executor, campaign_id: str) -> BudgetView:
    """After a concurrent batch, reports up to 70 of the reserved budget as available again,
    keeping every snapshot balanced and never negative."""
    view = reference_snapshot(tx, campaign_id)
    if campaign_id not in _handed_back:
        return view
    moved = min(70, view.reserved)
    return BudgetView(
        view.campaign_id, view.total, view.available + moved, view.reserved - moved, view.spent
    )


# --------------------------------------------------------------------------
# Work requests: refused delegations that leave a trace
# --------------------------------------------------------------------------


def delegate_leaving_the_child(
    tx: Session, order: DelegationOrder, settings: WorkRequestSettings, now: datetime
) -> WorkRequestRecord:
    """Creates the child session in a transaction of its own, before the checks that may refuse."""
    originator = find_session(tx, order.originating_session_id)
    with Session(tx.get_bind()) as own, own.begin():
        own.add(
            DelegationSession(
                session_id=f"cs-orphan-{uuid4().hex}",
                campaign_id=originator.campaign_id,
                principal=originator.principal,
                parent_session_id=originator.session_id,
                depth=originator.depth + 1,
                tools=order.permissions.tool_list(),
                devices=order.permissions.device_list(),
                request_id=None,
                children_count=0,
            )
        )
    return delegation.delegate(tx, order, settings, now)


MUTANTS = [
    Mutant(
        "non_user_actor_counts",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        'counts every assignment run not stamped "user": actorless producers and "Agent" count',
        lambda: [Patch(office_service, "AllowanceGate", counting_with(count_every_non_user_run))],
    ),
    Mutant(
        "refuses_every_agent_wake",
        "AC-OFFICE-ASSIGN-RATE-003.5",
        Capability.OFFICE,
        "refuses every in-scope wake, the first of a task included",
        lambda: [Patch(office_service, "AllowanceGate", RefusingGate)],
    ),
    Mutant(
        "gateless_concurrent_path",
        "AC-OFFICE-ASSIGN-RATE-002.1",
        Capability.OFFICE,
        "wakes evaluated on a concurrent batch's workers skip the gate",
        lambda: [Patch(office_service, "AllowanceGate", GatelessWorkerGate)],
    ),
    Mutant(
        "claim_not_stored",
        "AC-ARMONIA-WORKREQ-001.3",
        Capability.WORK_REQUESTS,
        "answers a claim with the lease it would grant, and stores nothing of it",
        lambda: [Patch(lease, "claim", claim_without_storing)],
    ),
    Mutant(
        "kind_not_kept",
        "AC-ARMONIA-WORKREQ-001.11",
        Capability.WORK_REQUESTS,
        "records every delegation as a session spawn, subagents included",
        lambda: [Patch(delegation, "_validated_kind", every_kind_is_spawn)],
    ),
    Mutant(
        "subagent_requests_not_durable",
        "AC-ARMONIA-WORKREQ-001.11",
        Capability.WORK_REQUESTS,
        "keeps subagent requests for the life of the coordinator only",
        lambda: [Patch(app, "WorkRequestService", ForgetfulSubagents)],
    ),
    Mutant(
        "completion_closed_twice_in_a_race",
        "AC-ARMONIA-WORKREQ-001.6",
        Capability.WORK_REQUESTS,
        "fences a completion on a stale read, so racing identical publishes each close it and "
        "each give the remainder back",
        lambda: [Patch(lease, "fence_completion", complete_by_stale_read)],
    ),
    Mutant(
        "budget_lost_update",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "reserves a root slice by read-then-write, so delegations at once lose a deduction",
        lambda: [Patch(workreq_service, "delegate_request", delegate_on_a_stale_figure)],
    ),
    Mutant(
        "budget_handed_back_after_a_batch",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "after a concurrent batch, later snapshots show 70 of the reserved budget available, "
        "balanced",
        lambda: [
            Patch(delegation, "reserve_slice", reserve_and_remember_batches),
            Patch(budget_ledger, "snapshot", snapshot_handing_back),
        ],
    ),
    Mutant(
        "claim_over_a_live_lease",
        "AC-ARMONIA-WORKREQ-001.7",
        Capability.WORK_REQUESTS,
        "grants the next generation to any claimant while a lease is still live",
        lambda: [Patch(lease, "claim", claim_over_live_lease)],
    ),
    Mutant(
        "refused_delegation_leaves_a_child_session",
        "AC-ARMONIA-WORKREQ-001.1",
        Capability.WORK_REQUESTS,
        "creates the child session before the checks, so a refused delegation leaves an orphan",
        lambda: [Patch(workreq_service, "delegate_request", delegate_leaving_the_child)],
    ),
]
