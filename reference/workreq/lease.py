"""The generation-fenced lease: claim, heartbeat, and the fence that guards completion.

A lease is live on [granted or renewed, expires_at): at the expiry instant it
is already expired. Liveness is decided from the persisted expiry and the
injected clock only. Each claim moves the generation by one; a heartbeat never
does. Every write restates its precondition in its WHERE clause (see
`store.update_request`), so the database, not this process, picks the winner.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NoReturn

from sqlalchemy import ColumnElement, or_, update
from sqlalchemy.orm import Session

from reference.errors import (
    AlreadyCompleted,
    LeaseExpired,
    LeaseHeld,
    NotAssignee,
    StaleGeneration,
)
from reference.workreq.models import State, WorkRequestRecord
from reference.workreq.store import find_request, update_request


def is_live(expires_at: datetime | None, now: datetime) -> bool:
    return expires_at is not None and now < expires_at


def reported_state(record: WorkRequestRecord, now: datetime) -> State:
    """An in-progress request whose lease has expired is reported open: claimable again."""
    state = State(record.state)
    if state == State.IN_PROGRESS and not is_live(record.lease_expires_at, now):
        return State.OPEN
    return state


def claim(
    tx: Session, record: WorkRequestRecord, holder: str, now: datetime, duration: timedelta
) -> WorkRequestRecord:
    """Grant `holder` a new lease with the next generation, or refuse."""
    _refuse_claim(record, holder, now)
    granted = update_request(
        tx,
        update(WorkRequestRecord)
        .where(_is_request(record))
        .where(WorkRequestRecord.lease_generation == record.lease_generation)
        .where(WorkRequestRecord.state != State.COMPLETED)
        .where(_lease_not_live(now))
        .values(
            lease_generation=record.lease_generation + 1,
            lease_holder=holder,
            lease_expires_at=now + duration,
            state=State.IN_PROGRESS,
        ),
    )
    if granted is None:
        _refuse_claim(find_request(tx, record.request_id), holder, now)
        raise LeaseHeld(f"a concurrent claim of {record.request_id!r} won")
    return granted


def heartbeat(
    tx: Session,
    record: WorkRequestRecord,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> WorkRequestRecord:
    """Extend the current holder's live lease; the generation stays as it is."""
    refuse_unless_current(record, holder, generation, now)
    extended = update_request(
        tx,
        update(WorkRequestRecord)
        .where(_holds_live_lease(record, holder, generation, now))
        .values(lease_expires_at=now + duration),
    )
    if extended is None:
        _refuse_lost_fence(tx, record, holder, generation, now)
    return extended


def fence_completion(
    tx: Session,
    record: WorkRequestRecord,
    holder: str,
    generation: int,
    result_ref: str,
    now: datetime,
) -> WorkRequestRecord:
    """Complete the request, only if (holder, generation) still holds a live lease."""
    refuse_unless_current(record, holder, generation, now)
    completed = update_request(
        tx,
        update(WorkRequestRecord)
        .where(_holds_live_lease(record, holder, generation, now))
        .values(
            state=State.COMPLETED, result_ref=result_ref, lease_closed_at=now, completed_at=now
        ),
    )
    if completed is None:
        _refuse_lost_fence(tx, record, holder, generation, now)
    return completed


def _refuse_lost_fence(
    tx: Session, record: WorkRequestRecord, holder: str, generation: int, now: datetime
) -> NoReturn:
    """The fenced write matched nothing: say why, from the request as it now stands."""
    refuse_unless_current(find_request(tx, record.request_id), holder, generation, now)
    raise StaleGeneration(f"the lease on {record.request_id!r} moved on")


def refuse_unless_current(
    record: WorkRequestRecord, holder: str, generation: int, now: datetime
) -> None:
    """Refuse a holder that is not the current, live (holder, generation) pair."""
    if record.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {record.request_id!r} is completed")
    if (record.lease_holder, record.lease_generation) != (holder, generation):
        raise StaleGeneration(
            f"({holder!r}, generation {generation}) is not the current lease of "
            f"{record.request_id!r}"
        )
    if not is_live(record.lease_expires_at, now):
        raise LeaseExpired(f"the lease of {holder!r} on {record.request_id!r} has expired")


def _refuse_claim(record: WorkRequestRecord, holder: str, now: datetime) -> None:
    if record.assignee is not None and record.assignee != holder:
        raise NotAssignee(f"work request {record.request_id!r} is assigned to someone else")
    if record.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {record.request_id!r} is completed")
    if is_live(record.lease_expires_at, now):
        raise LeaseHeld(f"work request {record.request_id!r} is under a live lease")


def _is_request(record: WorkRequestRecord) -> ColumnElement[bool]:
    return WorkRequestRecord.request_id == record.request_id


def _lease_not_live(now: datetime) -> ColumnElement[bool]:
    return or_(
        WorkRequestRecord.lease_expires_at.is_(None), WorkRequestRecord.lease_expires_at <= now
    )


def _holds_live_lease(
    record: WorkRequestRecord, holder: str, generation: int, now: datetime
) -> ColumnElement[bool]:
    return (
        _is_request(record)
        & (WorkRequestRecord.lease_holder == holder)
        & (WorkRequestRecord.lease_generation == generation)
        & (WorkRequestRecord.state == State.IN_PROGRESS)
        & (WorkRequestRecord.lease_expires_at > now)
    )
