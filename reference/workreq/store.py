"""Lookups of work-request records, and the conditional UPDATE every decision rests on.

Whatever two coordinators could race on (a claim, a fence, a budget draw, a
child slot) is decided by one UPDATE whose WHERE clause restates the
precondition; the row count says whether this caller won. That holds across
processes and in any dialect, unlike a lock held in one process's memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from sqlalchemy import Connection, CursorResult, Result, Row, Update, bindparam, select
from sqlalchemy.orm import Session

from conformance.reference.errors import NotFound
from conformance.reference.workreq.models import (
    REQUESTS,
    Campaign,
    DelegationSession,
    Environment,
    EnvironmentMember,
    WorkRequestRecord,
)

Executor: TypeAlias = Connection | Session
"""What a statement runs on: the lease path's Core connection, or a unit of work's session."""


def conditional_update(
    tx: Executor, statement: Update, parameters: Mapping[str, object] | None = None
) -> bool:
    """Run an UPDATE meant to touch exactly one row; True when its condition held."""
    result = tx.execute(statement, parameters, execution_options={"synchronize_session": False})
    return cast(CursorResult[Any], result).rowcount == 1


def single_row(result: Result[Any]) -> Row[Any] | None:
    """The row a write meant for one request returned, or None when its condition held for
    none; a condition that held for several (a broken one) counts as holding for none."""
    rows = result.all()
    return rows[0] if len(rows) == 1 else None


def find_environment(tx: Session, environment_id: str) -> Environment | None:
    return tx.get(Environment, environment_id)


def is_member(tx: Session, environment_id: str, principal: str) -> bool:
    return tx.get(EnvironmentMember, (environment_id, principal)) is not None


def find_campaign(tx: Session, campaign_id: str) -> Campaign:
    campaign = tx.get(Campaign, campaign_id, populate_existing=True)
    if campaign is None:
        raise NotFound(f"no campaign {campaign_id!r}")
    return campaign


def find_session(tx: Session, session_id: str) -> DelegationSession:
    session = tx.get(DelegationSession, session_id, populate_existing=True)
    if session is None:
        raise NotFound(f"no session {session_id!r}")
    return session


def find_request(tx: Session, request_id: str) -> WorkRequestRecord:
    """The request as the store holds it now, never a stale copy from this transaction."""
    statement = (
        select(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .execution_options(populate_existing=True)
    )
    record = tx.scalars(statement).one_or_none()
    if record is None:
        raise NotFound(f"no work request {request_id!r}")
    return record


_REQUEST_ROW = select(REQUESTS).where(REQUESTS.c.request_id == bindparam("request"))
"""Built once: observers read every request after every step they take."""


def read_request(tx: Executor, request_id: str) -> Row[Any]:
    """The request's stored row, for a read that changes nothing (no unit of work around it)."""
    row = tx.execute(_REQUEST_ROW, {"request": request_id}).first()
    if row is None:
        raise NotFound(f"no work request {request_id!r}")
    return row
