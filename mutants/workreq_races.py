"""Mutants only a race shows: a usage ledger whose check and write are not one statement.

Both charge a child's usage correctly one call at a time, so every serial scenario passes them:
the check reads what is left of the slice, and the write comes after it. Usages made at once
all read the same figure. One then adds each amount to the stored spending, so together they
spend beyond the slice; the other writes back the figure it read plus its own amount, so every
usage told it was accepted but the last is lost. The checker's usage ledger catches both: the
spent total never exceeds the slice, and equals what the accepted usages asked.
"""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.errors import AlreadyCompleted, UsageExceedsSlice
from conformance.reference.workreq import budget_ledger
from conformance.reference.workreq.models import State, WorkRequestRecord
from conformance.reference.workreq.store import find_request


def _read_and_check(tx: Session, request_id: str, amount: int) -> WorkRequestRecord:
    """What the reference's conditional UPDATE decides in one statement, decided on a read."""
    record = find_request(tx, request_id)
    if record.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {request_id!r} is completed; its slice is closed")
    if record.remaining < amount:
        raise UsageExceedsSlice(
            f"usage {amount} exceeds the {record.remaining} left of request {request_id!r}'s slice"
        )
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
]
