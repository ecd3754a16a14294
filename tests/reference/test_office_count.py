"""The allowance count: which persisted runs it sees, and that an index serves it."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect

from conformance.reference.db import Database
from conformance.reference.office.allowance_count import (
    AllowanceCounter,
    CompiledCount,
    CountReadError,
    allowance_count,
)
from conformance.reference.office.constants import ASSIGNMENT_WINDOW
from conformance.reference.office.gate import CountReadFault
from conformance.reference.office.models import Agent, Run, Workspace

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ABSENT = object()
INDEX = "ix_office_runs_assignment_count"


@pytest.fixture
def db(database: Database) -> Database:
    with database.transaction() as session:
        session.add(Workspace(id="w"))
        session.flush()
        session.add(Agent(id="a", workspace_id="w", can_assign_tasks=True))
    return database


def seed(
    db: Database,
    *,
    task_id: Any = "t",
    actor: Any = "agent",
    reason: str = "task_assigned",
    at: datetime = NOW,
    status: str = "queued",
) -> None:
    fields = {"task_id": task_id, "actor_type": actor, "actor_id": "a"}
    run = Run(agent_id="a", reason=reason, requested_at=at, status=status, coalesced_count=0)
    run.write_payload(json.dumps({k: v for k, v in fields.items() if v is not ABSENT}))
    with db.transaction() as session:
        session.add(run)


def count(db: Database, task_id: str = "t", now: datetime = NOW) -> int:
    """The count as the gate reads it, checked against the same statement run by the ORM."""
    with db.transaction() as session:
        fast = AllowanceCounter().read(session, task_id, now)
        plain = session.scalar(allowance_count(task_id, now))
    assert fast == plain, f"the compiled read says {fast}, the ORM statement {plain}"
    return fast


def test_a_numeric_task_id_never_matches_its_string_form(db: Database) -> None:
    seed(db, task_id=42)
    assert count(db, "42") == 0
    seed(db, task_id="42")
    assert count(db, "42") == 1


def test_only_agent_task_assigned_runs_for_the_task_count(db: Database) -> None:
    for actor in ["user", "Agent", "", ABSENT, None, 1]:
        seed(db, actor=actor)
    seed(db, reason="task_comment")
    seed(db, task_id="other")
    assert count(db) == 0
    seed(db)
    assert count(db) == 1


def test_every_status_counts(db: Database) -> None:
    for status in ["queued", "claimed", "running", "finished", "failed", "cancelled"]:
        seed(db, status=status)
    assert count(db) == 6


def test_the_window_is_open_at_its_start_and_closed_at_now(db: Database) -> None:
    seed(db, at=NOW - ASSIGNMENT_WINDOW)
    assert count(db) == 0, "a run exactly one window old is outside the window"
    seed(db, at=NOW - ASSIGNMENT_WINDOW + timedelta(microseconds=1))
    assert count(db) == 1, "a run one microsecond younger than the window is inside it"
    seed(db, at=NOW)
    assert count(db) == 2, "a run requested at the evaluation instant is inside the window"
    seed(db, at=NOW + timedelta(microseconds=1))
    assert count(db) == 2, "a run requested after the evaluation instant is not"


def count_plan(db: Database) -> str:
    for task in range(50):
        seed(db, task_id=f"t-{task}")
    with db.engine.connect() as connection:
        if db.engine.dialect.name == "postgresql":
            connection.exec_driver_sql("ANALYZE office_runs")
            connection.exec_driver_sql("SET enable_seqscan = off")
            prefix = "EXPLAIN "
        else:
            prefix = "EXPLAIN QUERY PLAN "
        compiled = CompiledCount.for_dialect(db.engine.dialect)
        parameters = compiled.parameters("t-7", NOW)
        rows = connection.exec_driver_sql(prefix + compiled.sql, parameters).all()
    return "\n".join(str(row[-1]) for row in rows)


def test_the_count_is_served_by_its_index_without_scanning_runs(db: Database) -> None:
    plan = count_plan(db)
    assert INDEX in plan, plan
    assert "SCAN office_runs" not in plan, plan
    assert "Seq Scan" not in plan, plan


@given(instant=st.datetimes())
@pytest.mark.parametrize("dialect", [sqlite.dialect(), postgresql.dialect()], ids=["sqlite", "pg"])
def test_the_count_binds_an_instant_exactly_as_the_column_stores_it(
    dialect: Dialect, instant: datetime
) -> None:
    stored = Run.__table__.c.requested_at.type.impl.dialect_impl(dialect).bind_processor(dialect)
    expected = instant if stored is None else stored(instant)
    assert CompiledCount.for_dialect(dialect).process_instant(instant) == expected


def test_an_armed_count_fault_fails_one_read_whichever_of_many_threads_makes_it() -> None:
    """Coordinators standing in for one deployment's processes share the hook: armed once, it
    fails the deployment's next read, not one read per coordinator."""
    fault = CountReadFault()
    fault.arm()
    failed: list[CountReadError] = []
    start = threading.Barrier(8)

    def read() -> None:
        start.wait()
        try:
            fault.trip()
        except CountReadError as error:
            failed.append(error)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(failed) == 1
    fault.trip()
