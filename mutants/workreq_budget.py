"""Mutants of the budget ledger: reserving slices, charging usage, returning what is left."""

from __future__ import annotations

from sqlalchemy import ColumnElement, update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference import app
from conformance.reference.errors import AlreadyCompleted, InsufficientBudget, UsageExceedsSlice
from conformance.reference.workreq import budget_ledger, delegation, lease
from conformance.reference.workreq.budget_ledger import _return_upwards
from conformance.reference.workreq.models import (
    Campaign,
    DelegationSession,
    State,
    WorkRequestRecord,
)
from conformance.reference.workreq.service import WorkRequestService, is_exact_retry
from conformance.reference.workreq.store import (
    conditional_update,
    find_campaign,
    find_request,
    find_session,
)
from conformance.reference.workreq.views import CompletionView
from conformance.variants.workreq_variants import reserve_from_campaign


def check_without_reserving(tx: Session, originator: DelegationSession, amount: int) -> None:
    """Checks that the source can afford the slice but leaves it there until the child spends."""
    if originator.request_id is None:
        affordable = find_campaign(tx, originator.campaign_id).available
    else:
        affordable = find_request(tx, originator.request_id).remaining
    if amount > affordable:
        raise InsufficientBudget(f"slice {amount} exceeds the {affordable} available")


def reserve_unguarded(tx: Session, originator: DelegationSession, amount: int) -> None:
    """Moves the slice without asking whether the source holds that much."""
    if originator.request_id is None:
        tx.execute(
            update(Campaign)
            .where(Campaign.campaign_id == originator.campaign_id)
            .values(available=Campaign.available - amount)
        )
        return
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == originator.request_id)
        .values(carved=WorkRequestRecord.carved + amount)
    )


class AnyUsageService(WorkRequestService):
    """Declares usage of 0 accepted (WR-24), and lets every amount below 1 through with it: a
    negative usage is charged as it comes, handing budget back that nobody returned."""

    def record_usage(self, session_id: str, amount: int) -> None:
        if amount > 0:
            super().record_usage(session_id, amount)
            return
        with self._db.transaction() as tx:
            budget_ledger.charge_usage(tx, find_session(tx, session_id), amount)


class ReplayingService(WorkRequestService):
    """Answers an exact publish retry by replaying the settlement, returning the remainder again."""

    def publish(
        self, request_id: str, holder: str, generation: int, result_ref: str
    ) -> CompletionView:
        with self._db.statement_transaction() as tx:
            if lease.read_lease(tx, request_id, holder).state == State.COMPLETED:
                recorded = lease.recorded_completion(tx, request_id)
                returned = recorded.view.budget_returned
                if is_exact_retry(recorded.view, holder, generation, result_ref) and returned:
                    _return_upwards(tx, recorded.campaign_id, recorded.parent_request_id, returned)
        return super().publish(request_id, holder, generation, result_ref)


def reserve_ignoring_carved(tx: Session, originator: DelegationSession, amount: int) -> None:
    """Checks a nested slice against the parent's slice minus what it spent, forgetting what
    was already carved out of it for its other children."""
    if originator.request_id is None:
        budget_ledger.reserve_slice(tx, originator, amount)
        return
    drawn = conditional_update(
        tx,
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == originator.request_id)
        .where(WorkRequestRecord.state != State.COMPLETED)
        .where(WorkRequestRecord.budget_slice - WorkRequestRecord.spent >= amount)
        .values(carved=WorkRequestRecord.carved + amount),
    )
    if not drawn:
        raise InsufficientBudget(f"slice {amount} exceeds what its parent has left")


def charge_unbounded(tx: Session, request_id: str, amount: int) -> None:
    """Charges the request's slice without checking what remains of it."""
    _charge_within(tx, request_id, amount)


def charge_ignoring_carved(tx: Session, request_id: str, amount: int) -> None:
    """Checks usage against slice minus spent, forgetting what was carved out for children."""
    _charge_within(
        tx, request_id, amount, WorkRequestRecord.budget_slice - WorkRequestRecord.spent >= amount
    )


def _charge_within(tx: Session, request_id: str, amount: int, *room: ColumnElement[bool]) -> None:
    charged = conditional_update(
        tx,
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .where(WorkRequestRecord.state != State.COMPLETED, *room)
        .values(spent=WorkRequestRecord.spent + amount),
    )
    if charged:
        return
    if find_request(tx, request_id).state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {request_id!r} is completed; its slice is closed")
    raise UsageExceedsSlice(f"usage {amount} exceeds what is left of {request_id!r}'s slice")


MUTANTS = [
    Mutant(
        "negative_usage_under_zero_usage_reading",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "declares usage of 0 accepted (WR-24), and accepts usage below zero with it, creating "
        "budget",
        lambda: [Patch(app, "WorkRequestService", AnyUsageService)],
        readings={"WR-24": "zero-usage-accepted"},
    ),
    Mutant(
        "slice_not_deducted",
        "AC-ARMONIA-WORKREQ-001.1",
        Capability.WORK_REQUESTS,
        "checks the slice is affordable but does not take it out of the originator's budget",
        lambda: [Patch(delegation, "reserve_slice", check_without_reserving)],
    ),
    Mutant(
        "nested_slice_ignores_carved",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "checks a nested slice against its parent's slice minus what it spent, forgetting the "
        "slices already carved out for its siblings, so a lineage can spend beyond its slice",
        lambda: [Patch(delegation, "reserve_slice", reserve_ignoring_carved)],
    ),
    Mutant(
        "overdraw_allowed",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "reserves a slice without checking the source holds that much, overdrawing it",
        lambda: [Patch(delegation, "reserve_slice", reserve_unguarded)],
    ),
    Mutant(
        "unspent_returned_twice",
        "AC-ARMONIA-WORKREQ-001.6",
        Capability.WORK_REQUESTS,
        "an exact publish retry replays the settlement and returns the remainder again",
        lambda: [Patch(app, "WorkRequestService", ReplayingService)],
    ),
    Mutant(
        "usage_unbounded",
        "AC-ARMONIA-WORKREQ-001.13",
        Capability.WORK_REQUESTS,
        "charges a child's usage without checking what remains of its slice",
        lambda: [Patch(budget_ledger, "_charge_request", charge_unbounded)],
    ),
    Mutant(
        "usage_ignores_carved",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "checks usage against slice minus spent, so slices carved for children are spent twice",
        lambda: [Patch(budget_ledger, "_charge_request", charge_ignoring_carved)],
    ),
    Mutant(
        "nested_remainder_to_parent",
        "AC-ARMONIA-WORKREQ-001.13",
        Capability.WORK_REQUESTS,
        "declares nested slices taken from the campaign (WR-1), yet gives what one leaves to "
        "its parent request, whose child can then spend it on top of its own slice",
        lambda: [Patch(delegation, "reserve_slice", reserve_from_campaign)],
        readings={"WR-1": "from-campaign"},
    ),
]
