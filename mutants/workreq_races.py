"""Mutants only a race shows: a ledger whose read and write are not one statement.

Both charge a child's usage correctly one call at a time, so every serial scenario passes them:
the check reads what is left of the slice, and the write comes after it. Usages made at once
all read the same figure. One then adds each amount to the stored spending, so together they
spend beyond the slice; the other writes back the figure it read plus its own amount, so every
usage told it was accepted but the last is lost. The checker's usage ledger catches both: the
spent total never exceeds the slice, and equals what the accepted usages asked. A third reads
what is left of the slice when a publish begins and records that as returned when it completes:
a usage charged in between is both spent and given back. A fourth charges each slice in one
statement but writes back the campaign's spending it read: usages of sibling requests made at
once each reach their own slice, and only the last reaches the campaign. Each keeps a networked
store's gap
between its read and its write (STORE_ROUND_TRIP_S), so that the race shows on busy cores too.
"""

from __future__ import annotations

import time
from datetime import datetime

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.errors import AlreadyCompleted, UsageExceedsSlice
from conformance.reference.workreq import budget_ledger, lease
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
from conformance.reference.workreq.store import Executor, find_request, single_row

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
        "remainder_read_before_completing",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "reads what is left of the slice as a publish begins and records it as returned: a "
        "usage charged in between is both spent and given back",
        lambda: [Patch(lease, "fence_completion", complete_returning_what_was_read)],
    ),
]
