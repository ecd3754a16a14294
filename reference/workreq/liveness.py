"""When a lease is live: on [granted or renewed, expires_at), so at the expiry instant it is gone.

The rule lives here once, in Python and in SQL, so that the refusal a caller
reads and the condition the database applies cannot disagree.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement

from conformance.reference.workreq.models import State, StoredRequest


def is_live(expires_at: datetime | None, now: datetime) -> bool:
    return expires_at is not None and now < expires_at


def live_in_sql(
    expires_at: ColumnElement[datetime | None], now: ColumnElement[datetime]
) -> ColumnElement[bool]:
    """`is_live` as a condition. For a NULL expiry it is NULL, not false, and so is its
    negation: a condition for "not live" must say `IS NULL OR NOT live` (the claim does)."""
    return expires_at > now


def reported_state(record: StoredRequest, now: datetime) -> State:
    """An in-progress request whose lease has expired is reported open: claimable again."""
    state = State(record.state)
    if state == State.IN_PROGRESS and not is_live(record.lease_expires_at, now):
        return State.OPEN
    return state
