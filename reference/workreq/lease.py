"""The generation-fenced lease: claim, heartbeat, and the fence that guards completion.

Each operation is one conditional UPDATE whose WHERE clause is its whole
precondition, so the database, not this process, picks the winner; it is tried
first, and only a refusal reads the request, to say why. The statements are
built once, with bound parameters (`LeaseStatements`): building and keying a
statement anew cost more client time than sending it. Each claim moves the
generation by one; a heartbeat never does; liveness comes from the persisted
expiry and the injected clock only (`liveness`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NoReturn

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Row,
    Select,
    Update,
    bindparam,
    exists,
    select,
    update,
)

from conformance.reference.db import UTCDateTime
from conformance.reference.errors import (
    AlreadyCompleted,
    LeaseExpired,
    LeaseHeld,
    NotAssignee,
    NotFound,
    StaleGeneration,
)
from conformance.reference.workreq import liveness
from conformance.reference.workreq.models import MEMBERS, REQUESTS, State, remaining_expression
from conformance.reference.workreq.store import Executor, single_row
from conformance.reference.workreq.views import CompletionView, LeaseView

LiveRule = Callable[[ColumnElement[Any], ColumnElement[Any]], ColumnElement[bool]]
"""A lease's liveness in SQL, from its expiry column and the bound instant."""
Fence = Callable[[LiveRule], ColumnElement[bool]]
"""The condition under which (holder, generation) may act on the request."""


def instant(name: str) -> BindParameter[datetime]:
    """A bound instant, stored as the columns store it (naive UTC)."""
    return bindparam(name, type_=UTCDateTime())


def holds_live_lease(live: LiveRule) -> ColumnElement[bool]:
    """The request's current lease is (holder, generation), in progress and live."""
    columns = REQUESTS.c
    return (
        (columns.request_id == bindparam("request"))
        & (columns.lease_holder == bindparam("holder"))
        & (columns.lease_generation == bindparam("generation"))
        & (columns.state == State.IN_PROGRESS.value)
        & live(columns.lease_expires_at, instant("now"))
    )


def _claimant_is_member() -> ColumnElement[bool]:
    return exists().where(
        (MEMBERS.c.environment_id == REQUESTS.c.environment_id)
        & (MEMBERS.c.principal == bindparam("holder"))
    )


@dataclass(frozen=True)
class LeaseStatements:
    """The lease's statements, built once. A variant or a mutant builds its own set."""

    claim: Update
    heartbeat: Update
    completion: Update
    read: Select[Any]
    recorded_completion: Select[Any]

    @classmethod
    def built(
        cls, live: LiveRule = liveness.live_in_sql, fence: Fence = holds_live_lease
    ) -> LeaseStatements:
        return cls(
            claim=claim_statement(live),
            heartbeat=heartbeat_statement(fence(live)),
            completion=completion_statement(fence(live)),
            read=_read_statement(),
            recorded_completion=select(*_columns(_COMPLETION_COLUMNS)).where(
                REQUESTS.c.request_id == bindparam("request")
            ),
        )


_LEASE_COLUMNS = ("lease_holder", "lease_generation", "lease_expires_at", "lease_closed_at")
_COMPLETION_COLUMNS = (
    "request_id",
    "lease_holder",
    "lease_generation",
    "result_ref",
    "completed_at",
    "returned",
    "campaign_id",
    "parent_request_id",
)


def claim_statement(live: LiveRule) -> Update:
    """The next generation to `holder`, where the request allows it and no lease is live."""
    columns = REQUESTS.c
    free = columns.lease_expires_at.is_(None) | ~live(columns.lease_expires_at, instant("now"))
    claimable = (
        (columns.request_id == bindparam("request"))
        & (columns.state != State.COMPLETED.value)
        & free
        & (columns.assignee.is_(None) | (columns.assignee == bindparam("holder")))
        & _claimant_is_member()
    )
    return (
        update(REQUESTS)
        .where(claimable)
        .values(
            lease_generation=columns.lease_generation + 1,
            lease_holder=bindparam("holder"),
            lease_expires_at=instant("until"),
            state=State.IN_PROGRESS.value,
        )
        .returning(*_columns(_LEASE_COLUMNS))
    )


def heartbeat_statement(fence: ColumnElement[bool]) -> Update:
    return (
        update(REQUESTS)
        .where(fence)
        .values(lease_expires_at=instant("until"))
        .returning(*_columns(_LEASE_COLUMNS))
    )


def completion_statement(fence: ColumnElement[bool]) -> Update:
    """Complete where `fence` holds, closing the slice: it records what is returned, once."""
    columns = REQUESTS.c
    return (
        update(REQUESTS)
        .where(fence & columns.returned.is_(None))
        .values(
            state=State.COMPLETED.value,
            result_ref=bindparam("result"),
            lease_closed_at=instant("now"),
            completed_at=instant("now"),
            returned=remaining_expression(),
        )
        .returning(*_columns(_COMPLETION_COLUMNS))
    )


def _read_statement() -> Select[Any]:
    columns = REQUESTS.c
    return select(
        columns.request_id,
        columns.state,
        columns.assignee,
        columns.lease_holder,
        columns.lease_generation,
        columns.lease_expires_at,
        _claimant_is_member().label("claimant_is_member"),
    ).where(columns.request_id == bindparam("request"))


def _columns(names: tuple[str, ...]) -> list[ColumnElement[Any]]:
    return [REQUESTS.c[name] for name in names]


STATEMENTS = LeaseStatements.built()


@dataclass(frozen=True)
class StoredLease:
    """What a lease decision reads of a request, as the store holds it now."""

    request_id: str
    state: State
    assignee: str | None
    holder: str | None
    generation: int
    expires_at: datetime | None
    claimant_is_member: bool
    """Whether the principal it was read for belongs to the request's environment."""


@dataclass(frozen=True)
class Completion:
    """A fenced completion as written: its answer, and where its slice's remainder goes."""

    view: CompletionView
    campaign_id: str
    parent_request_id: str | None


def claim(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    """Grant `holder` a new lease with the next generation, or refuse."""
    granted = single_row(
        tx.execute(
            STATEMENTS.claim,
            {"request": request_id, "holder": holder, "now": now, "until": now + duration},
        )
    )
    if granted is None:
        refuse_claim(read_lease(tx, request_id, holder), holder, now)
        # Only a claim condition that disagrees with `refuse_claim` (a variant's, a mutant's)
        # comes here: a grant that was not written is refused, never answered.
        raise LeaseHeld(f"a concurrent claim of {request_id!r} won")
    return _lease_of(granted)


def heartbeat(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> LeaseView:
    """Extend the current holder's live lease; the generation stays as it is."""
    renewed = single_row(
        tx.execute(
            STATEMENTS.heartbeat,
            {**_fence(request_id, holder, generation, now), "until": now + duration},
        )
    )
    if renewed is None:
        _refuse_lost_fence(tx, request_id, holder, generation, now)
    return _lease_of(renewed)


def fence_completion(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    result_ref: str,
    now: datetime,
) -> Completion:
    """Complete the request only if (holder, generation) still holds a live lease.

    The same statement closes the request's slice (records what it returns), so
    a completion and its settlement can never be apart, nor a slice closed twice.
    """
    completed = single_row(
        tx.execute(
            STATEMENTS.completion,
            {**_fence(request_id, holder, generation, now), "result": result_ref},
        )
    )
    if completed is None:
        _refuse_lost_fence(tx, request_id, holder, generation, now)
    return completion_of(completed)


def completion_of(row: Row[Any]) -> Completion:
    """A completion from the `_COMPLETION_COLUMNS` of a completed request."""
    assert None not in (row.lease_holder, row.result_ref, row.completed_at, row.returned)
    return Completion(
        view=CompletionView(
            request_id=row.request_id,
            holder=row.lease_holder,
            generation=row.lease_generation,
            result_ref=row.result_ref,
            completed_at=row.completed_at,
            budget_returned=row.returned,
        ),
        campaign_id=row.campaign_id,
        parent_request_id=row.parent_request_id,
    )


def recorded_completion(tx: Executor, request_id: str) -> Completion:
    """A completed request's completion as stored: what an exact retry is answered with."""
    return completion_of(tx.execute(STATEMENTS.recorded_completion, {"request": request_id}).one())


def read_lease(tx: Executor, request_id: str, principal: str) -> StoredLease:
    """The request's lease as stored now, and whether `principal` may claim in its environment."""
    row = tx.execute(STATEMENTS.read, {"request": request_id, "holder": principal}).first()
    if row is None:
        raise NotFound(f"no work request {request_id!r}")
    return StoredLease(
        request_id=row.request_id,
        state=State(row.state),
        assignee=row.assignee,
        holder=row.lease_holder,
        generation=row.lease_generation,
        expires_at=row.lease_expires_at,
        claimant_is_member=bool(row.claimant_is_member),
    )


def refuse_claim(stored: StoredLease, holder: str, now: datetime) -> None:
    """Refuse a claim the request as stored does not allow, in the order callers rely on."""
    refuse_outsider(stored, holder)
    if stored.assignee is not None and stored.assignee != holder:
        raise NotAssignee(f"work request {stored.request_id!r} is assigned to someone else")
    if stored.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {stored.request_id!r} is completed")
    if liveness.is_live(stored.expires_at, now):
        raise LeaseHeld(f"work request {stored.request_id!r} is under a live lease")


def refuse_outsider(stored: StoredLease, holder: str) -> None:
    if not stored.claimant_is_member:
        raise NotFound(f"{holder!r} is not a member of the request's environment")


def refuse_unless_current(stored: StoredLease, holder: str, generation: int, now: datetime) -> None:
    """Refuse a holder that is not the current, live (holder, generation) pair."""
    if stored.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {stored.request_id!r} is completed")
    if (stored.holder, stored.generation) != (holder, generation):
        raise StaleGeneration(
            f"({holder!r}, generation {generation}) is not the current lease of "
            f"{stored.request_id!r}"
        )
    if not liveness.is_live(stored.expires_at, now):
        raise LeaseExpired(f"the lease of {holder!r} on {stored.request_id!r} has expired")


def _refuse_lost_fence(
    tx: Executor, request_id: str, holder: str, generation: int, now: datetime
) -> NoReturn:
    """The fenced write matched nothing: say why, from the request as it now stands.

    A fence the Python refusals find nothing against (a variant's or a mutant's,
    or one that matched several requests) is refused all the same.
    """
    refuse_unless_current(read_lease(tx, request_id, holder), holder, generation, now)
    raise StaleGeneration(f"the lease on {request_id!r} moved on")


def _fence(request_id: str, holder: str, generation: int, now: datetime) -> dict[str, object]:
    return {"request": request_id, "holder": holder, "generation": generation, "now": now}


def _lease_of(row: Row[Any]) -> LeaseView:
    return LeaseView(
        holder=row.lease_holder,
        generation=row.lease_generation,
        expires_at=row.lease_expires_at,
        closed_at=row.lease_closed_at,
    )
