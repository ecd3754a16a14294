"""A synthetic run history, bulk-loaded through the bare driver (executemany or COPY).

The history is what a busy Office accumulates: runs spread over many tasks
and a month of time, mostly agent-initiated assignment wakes, some user wakes
and other reasons. All of it lies before the allowance window, except a few
runs on the probe tasks, so every gate decision the bench times reads the same
small count however large the history is. The derived columns (task_key,
actor_type) are written as the reference derives them from the payload.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.dialects import sqlite

from bench.stores import SQLITE, Store
from conformance.reference.app import Coordinator
from conformance.reference.clock import ManualClock
from conformance.reference.office.constants import AGENT_ACTOR, ASSIGNMENT_WINDOW, TASK_ASSIGNED
from conformance.reference.office.models import Run

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
"""The instant every timed decision is taken at."""
WORKSPACE = "ws-bench"
IN_WINDOW_RUNS = 3
"""Agent assignment runs each probe task holds inside the window (below the allowance)."""
COLUMNS = (
    "agent_id",
    "reason",
    "payload",
    "dedup_key",
    "requested_at",
    "status",
    "coalesced_count",
    "task_key",
    "actor_type",
)
OTHER_REASONS = ("task_comment", "heartbeat", "routine")


@dataclass(frozen=True)
class HistoryShape:
    runs: int
    tasks: int = 10_000
    agents: int = 100
    probes: int = 100
    span: timedelta = timedelta(days=30)
    seed: int = 7

    def probe_task(self, index: int) -> str:
        """Probe tasks are ordinary history tasks, spread over the task range."""
        return task_name((index * self.tasks) // self.probes)

    @property
    def probe_tasks(self) -> list[str]:
        return [self.probe_task(index) for index in range(self.probes)]


def task_name(index: int) -> str:
    return f"task-{index}"


def agent_name(index: int) -> str:
    return f"agent-{index}"


def load_history(store: Store, shape: HistoryShape) -> None:
    """Create the schema and the agents through the reference, then bulk-load the runs."""
    coordinator = Coordinator(store.url, ManualClock(NOW))
    try:
        coordinator.office.create_workspace(WORKSPACE)
        for index in range(shape.agents):
            coordinator.office.create_agent(WORKSPACE, agent_name(index), can_assign_tasks=True)
    finally:
        coordinator.close()
    rows = _rows(shape)
    if store.dialect == SQLITE:
        _load_sqlite(store, rows)
    else:
        _load_postgres(store, rows)


def _rows(shape: HistoryShape) -> Iterator[tuple[Any, ...]]:
    """Old history first, then the probe tasks' in-window runs; requested_at naive UTC."""
    rng = random.Random(shape.seed)
    oldest = shape.span.total_seconds()
    for index in range(shape.runs):
        age = ASSIGNMENT_WINDOW + timedelta(seconds=1 + rng.random() * oldest)
        reason, actor = _kind(rng)
        yield _run(index, task_name(index % shape.tasks), shape, rng, reason, actor, age)
    for offset, task in enumerate(shape.probe_tasks):
        for minute in range(IN_WINDOW_RUNS):
            index = shape.runs + offset * IN_WINDOW_RUNS + minute
            age = timedelta(minutes=minute + 1)
            yield _run(index, task, shape, rng, TASK_ASSIGNED, AGENT_ACTOR, age)


def _kind(rng: random.Random) -> tuple[str, str | None]:
    draw = rng.random()
    if draw < 0.6:
        return TASK_ASSIGNED, AGENT_ACTOR
    if draw < 0.85:
        return TASK_ASSIGNED, "user"
    return rng.choice(OTHER_REASONS), None


def _run(
    index: int,
    task: str,
    shape: HistoryShape,
    rng: random.Random,
    reason: str,
    actor: str | None,
    age: timedelta,
) -> tuple[Any, ...]:
    agent = agent_name(rng.randrange(shape.agents))
    fields: dict[str, str] = {"task_id": task, "workspace_id": WORKSPACE}
    if actor is not None:
        fields |= {"actor_type": actor, "actor_id": agent if actor == AGENT_ACTOR else ""}
    requested_at = (NOW - age).replace(tzinfo=None)
    key = f"{reason}:{task}:{agent}:{index}"
    status = "queued" if age <= ASSIGNMENT_WINDOW else "finished"
    return (agent, reason, json.dumps(fields), key, requested_at, status, 0, task, actor)


def _load_sqlite(store: Store, rows: Iterator[tuple[Any, ...]]) -> None:
    dialect = sqlite.dialect()
    column_type = Run.__table__.c.requested_at.type
    as_stored = column_type.dialect_impl(dialect).bind_processor(dialect)
    assert as_stored is not None
    placeholders = ", ".join("?" for _ in COLUMNS)
    statement = f"INSERT INTO office_runs ({', '.join(COLUMNS)}) VALUES ({placeholders})"
    stored = ((*row[:4], as_stored(row[4].replace(tzinfo=UTC)), *row[5:]) for row in rows)
    connection = store.raw_connection(autocommit=False)
    try:
        connection.executemany(statement, stored)
        connection.commit()
        connection.execute("ANALYZE")
    finally:
        connection.close()


def _load_postgres(store: Store, rows: Iterator[tuple[Any, ...]]) -> None:
    with store.raw_connection(autocommit=False) as connection:
        with connection.cursor() as cursor:
            columns = ", ".join(COLUMNS)
            with cursor.copy(f"COPY office_runs ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        connection.commit()
        connection.autocommit = True
        connection.execute("VACUUM ANALYZE office_runs")
