"""Mutants only a race shows: a ledger whose read and write are not one statement.

Each is right one call at a time, so every serial scenario passes it; calls made at once all
read the same figure, and the linearizability search finds no order that explains what follows:

- a usage checked against what is left of the slice on a read, then added to what is spent:
  usages made at once spend beyond the slice;
- a usage written back as the spending it read plus its own amount: every usage is told it was
  accepted, and only the last is charged;
- a completion that records as returned what was left when the publish began: a usage charged
  in between is both spent and given back;
- a slice charged in one statement, with the campaign's spending it read written back: of
  usages of sibling requests made at once, only the last reaches the campaign;
- a nested slice checked against what is left of its parent's on a read and carved out after:
  usages charged in between leave the parent's request holding more than its slice;
- the count cap checked on a read and the child counted after: delegations made at once all
  pass it.

Each keeps a networked store's gap between its read and its write (STORE_ROUND_TRIP_S), so that
the race shows on busy cores too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference import app
from conformance.reference.errors import (
    AlreadyCompleted,
    CountCap,
    InsufficientBudget,
    UsageExceedsSlice,
)
from conformance.reference.workreq import budget_ledger, delegation, lease
from conformance.reference.workreq.budget_ledger import charge_usage as reference_charge_usage
from conformance.reference.workreq.lease import Completion, completion_of, holds_live_lease
from conformance.reference.workreq.liveness import live_in_sql
from conformance.reference.workreq.models import (
    REQUESTS,
    Campaign,
    DelegationSession,
    State,
    WorkRequestRecord,
    remaining_expression,
)
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.settings import WorkRequestSettings
from conformance.reference.workreq.store import Executor, find_request, find_session, single_row
from conformance.reference.workreq.views import RequestView

STORE_ROUND_TRIP_S = 0.005
"""The gap between a mutant's read and its write: a networked store's round trip. An
in-process SQLite store has almost none, so without it the calls racing a read-then-write
nearly always land before its read or after its write, and the defect shows only on idle
cores (measured: the publish's survived 6 of 8 strength runs made side by side)."""


def _read_and_check(tx: Session, request_id: str, amount: int) -> WorkRequestRecord:
    """What the reference's conditional UPDATE decides in one statement, decided on a read."""
    record = find_request(tx, request_id)
    if record.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {request_id!r} is completed; its slice is closed")
    if record.remaining < amount:
        raise UsageExceedsSlice(
            f"usage {amount} exceeds the {record.remaining} left of request {request_id!r}'s slice"
        )
    time.sleep(STORE_ROUND_TRIP_S)
    return record


def charge_after_checking(tx: Session, request_id: str, amount: int) -> None:
    """Reads what is left, checks the usage against it, then adds it to what is spent."""
    _read_and_check(tx, request_id, amount)
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(spent=WorkRequestRecord.spent + amount)
    )


def charge_by_writing_back(tx: Session, request_id: str, amount: int) -> None:
    """Reads the request, checks the usage, and writes back what it read plus the usage, as
    an object-mapper's `record.spent += amount` would."""
    record = _read_and_check(tx, request_id, amount)
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(spent=record.spent + amount)
    )


def charge_campaign_by_writing_back(tx: Session, session: DelegationSession, amount: int) -> None:
    """Charges the child's slice as the reference does, then writes back the campaign's
    spending it read before plus the usage, as `campaign.spent += amount` would."""
    if session.request_id is None:
        reference_charge_usage(tx, session, amount)
        return
    spent = tx.scalar(select(Campaign.spent).where(Campaign.campaign_id == session.campaign_id))
    time.sleep(STORE_ROUND_TRIP_S)
    budget_ledger._charge_request(tx, session.request_id, amount)
    tx.execute(
        update(Campaign)
        .where(Campaign.campaign_id == session.campaign_id)
        .values(spent=(spent or 0) + amount)
    )


NESTED_CHECK_GAP_S = 0.2
"""Between a nested delegation's check and its transaction: the lookups a service makes in
between (its originator, its parent request, its campaign), each a round trip on a busy store.
Long enough that usages made at once with it land inside the gap on loaded cores too
(measured: at 0.05 s they missed it in one run of the suite in several)."""

Precheck = Callable[[DelegationSession, int, WorkRequestSettings, Session], float]
"""Raises the refusal the read decides; else how long the service then takes before its
transaction (nothing where racing calls cannot change what it read)."""


def prechecked(check: Precheck) -> type[WorkRequestService]:
    """A service that makes `check` of a delegation in a read of its own, before the
    delegation's transaction, which then takes on its word what `check` decided."""

    class Prechecking(WorkRequestService):
        def delegate(
            self, kind: str, originating_session_id: str, *, budget_slice: int, **order: Any
        ) -> RequestView:
            with self._db.transaction() as tx:
                originator = find_session(tx, originating_session_id)
                gap = check(originator, budget_slice, self._settings, tx)
            time.sleep(gap)
            return super().delegate(
                kind, originating_session_id, budget_slice=budget_slice, **order
            )

    return Prechecking


def room_left(
    originator: DelegationSession, amount: int, _: WorkRequestSettings, tx: Session
) -> float:
    """What is left of a nested slice's parent holds the slice, as a read finds it (a root's
    slice is checked in the transaction, as the reference checks it)."""
    parent = originator.request_id
    if parent is not None and find_request(tx, parent).remaining < amount:
        raise InsufficientBudget(f"slice {amount} exceeds what its parent has left")
    return NESTED_CHECK_GAP_S if parent is not None else 0.0


def slot_left(
    originator: DelegationSession, _: int, settings: WorkRequestSettings, __: Session
) -> float:
    """The originator has delegated fewer than the cap allows, as a read finds it."""
    if originator.children_count >= settings.max_children_per_session:
        raise CountCap(f"session {originator.session_id!r} is at its count cap")
    return STORE_ROUND_TRIP_S


def slot_taken_unchecked(
    tx: Session, originator: DelegationSession, _: WorkRequestSettings
) -> None:
    """One more child counted on the word of the check made before."""
    tx.execute(
        update(DelegationSession)
        .where(DelegationSession.session_id == originator.session_id)
        .values(children_count=DelegationSession.children_count + 1)
    )


def carve_unchecked(tx: Session, originator: DelegationSession, amount: int) -> None:
    """A nested slice carved out of its parent's on the word of the check made before (a
    root's slice is reserved as the reference reserves it)."""
    if originator.request_id is None:
        budget_ledger.reserve_slice(tx, originator, amount)
        return
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == originator.request_id)
        .values(carved=WorkRequestRecord.carved + amount)
    )


RETURNING_WHAT_WAS_READ = lease.completion_statement(holds_live_lease(live_in_sql)).values(
    returned=bindparam("returned")
)


def complete_returning_what_was_read(
    tx: Executor, request_id: str, holder: str, generation: int, result_ref: str, now: datetime
) -> Completion:
    """Reads what is left of the slice, then completes recording that as returned."""
    left = tx.execute(
        select(remaining_expression()).where(REQUESTS.c.request_id == request_id)
    ).scalar_one()
    time.sleep(STORE_ROUND_TRIP_S)
    fence = {"request": request_id, "holder": holder, "generation": generation, "now": now}
    completed = single_row(
        tx.execute(RETURNING_WHAT_WAS_READ, {**fence, "result": result_ref, "returned": left})
    )
    if completed is None:
        lease._refuse_lost_fence(tx, request_id, holder, generation, now)
    return completion_of(completed)


MUTANTS = [
    Mutant(
        "usage_checked_then_charged",
        "AC-ARMONIA-WORKREQ-001.13",
        Capability.WORK_REQUESTS,
        "checks a usage against what is left of the slice on a read, then adds it: usages made "
        "at once spend beyond the slice",
        lambda: [Patch(budget_ledger, "_charge_request", charge_after_checking)],
    ),
    Mutant(
        "usage_written_back",
        "AC-ARMONIA-WORKREQ-001.13",
        Capability.WORK_REQUESTS,
        "writes back the spending it read plus the usage: usages made at once are all accepted "
        "but only the last is charged",
        lambda: [Patch(budget_ledger, "_charge_request", charge_by_writing_back)],
    ),
    Mutant(
        "campaign_spending_written_back",
        "AC-ARMONIA-WORKREQ-001.13",
        Capability.WORK_REQUESTS,
        "writes back the campaign's spending it read plus the usage: of usages of sibling "
        "requests made at once, only the last reaches the campaign",
        lambda: [Patch(budget_ledger, "charge_usage", charge_campaign_by_writing_back)],
    ),
    Mutant(
        "nested_slice_checked_then_carved",
        "AC-ARMONIA-WORKREQ-001.13",
        Capability.WORK_REQUESTS,
        "checks a nested slice against what is left of its parent's slice on a read before its "
        "transaction, then carves it out: usages charged in between leave the parent holding "
        "more than its slice",
        lambda: [
            Patch(app, "WorkRequestService", prechecked(room_left)),
            Patch(delegation, "reserve_slice", carve_unchecked),
        ],
    ),
    Mutant(
        "count_cap_checked_then_taken",
        "AC-ARMONIA-WORKREQ-001.8",
        Capability.WORK_REQUESTS,
        "checks the count cap on a read before the delegation's transaction, then counts the "
        "child: delegations made at once all pass the cap",
        lambda: [
            Patch(app, "WorkRequestService", prechecked(slot_left)),
            Patch(delegation, "_take_child_slot", slot_taken_unchecked),
        ],
    ),
    Mutant(
        "remainder_read_before_completing",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "reads what is left of the slice as a publish begins and records it as returned: a "
        "usage charged in between is both spent and given back",
        lambda: [Patch(lease, "fence_completion", complete_returning_what_was_read)],
    ),
]
