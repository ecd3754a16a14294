"""Gate cost against history size: does the allowance decision stay flat as runs pile up?

The decision is timed as the pipeline takes it: `AllowanceGate.admits` inside
a transaction that is already open (the duplicate lookup and the coalescing
lookup came first). The floor is the same count, hand-written, through the
bare driver. Small and large histories, reference and floor, are sampled in
turn (the order rotating), so that a change in the machine's load touches all
four alike. The wake's payload is read when the wake is made, before the
pipeline; that read is timed apart and shown beside the decision.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import Any

from sqlalchemy import text
from sqlalchemy.dialects import sqlite

from bench.history import IN_WINDOW_RUNS, NOW, WORKSPACE, HistoryShape, agent_name, load_history
from bench.report import Measure, Row
from bench.stats import MICROS, median
from bench.stores import SQLITE, Store, postgres_store, sqlite_store
from conformance.reference.db import Database
from conformance.reference.office.allowance_count import allowance_count
from conformance.reference.office.classifier import read_payload
from conformance.reference.office.constants import AGENT_ACTOR, ASSIGNMENT_WINDOW, TASK_ASSIGNED
from conformance.reference.office.gate import AllowanceGate, CountReadFault
from conformance.reference.office.models import Run
from conformance.reference.office.telemetry import OfficeTelemetry
from conformance.reference.office.wake import Wake

SECTION = "1. Gate cost"
HISTORY_TARGET = 1.5
FLOOR_TARGET = 3.0
WARMUP = 20
BARE_COUNT = (
    "SELECT count(*) FROM office_runs WHERE task_key = {p} AND reason = {p} "
    "AND actor_type = {p} AND requested_at > {p} AND requested_at <= {p}"
)


@dataclass(frozen=True)
class GateSettings:
    small_runs: int
    large_runs: int
    samples: int


Decide = Callable[[str], float]
"""Takes one decision about a probe task; returns its duration in seconds."""


def measure(settings: GateSettings, postgres_url: str | None, unavailable: str) -> list[Row]:
    rows = _measure_sqlite(settings)
    if postgres_url is None:
        return rows + _not_measured("postgresql", "PostgreSQL", settings, unavailable)
    return rows + _measure_postgres(settings, postgres_url)


def _measure_sqlite(settings: GateSettings) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as scratch:
        small = sqlite_store(Path(scratch), "small")
        large = sqlite_store(Path(scratch), "large")
        return _compare(small, large, settings)


def _measure_postgres(settings: GateSettings, base_url: str) -> list[Row]:
    with (
        postgres_store(base_url, "gate_small") as small,
        postgres_store(base_url, "gate_large") as large,
    ):
        return _compare(small, large, settings)


def _compare(small: Store, large: Store, settings: GateSettings) -> list[Row]:
    small_shape = HistoryShape(runs=settings.small_runs)
    large_shape = HistoryShape(runs=settings.large_runs)
    load_history(small, small_shape)
    load_history(large, large_shape)
    with ExitStack() as stack:
        deciders = {
            "reference small": stack.enter_context(_reference(small, small_shape)),
            "reference large": stack.enter_context(_reference(large, large_shape)),
            "floor small": stack.enter_context(_floor(small, small_shape)),
            "floor large": stack.enter_context(_floor(large, large_shape)),
            "payload read": _payload_read,
        }
        medians = _interleaved_medians(deciders, small_shape.probe_tasks, settings.samples)
        plan = _plan(large)
    return _rows(large.dialect, large.label, settings, medians, plan)


def _interleaved_medians(
    deciders: dict[str, Decide], probes: list[str], samples: int
) -> dict[str, float]:
    durations: dict[str, list[float]] = {name: [] for name in deciders}
    names = list(deciders)
    for index in range(WARMUP + samples):
        task = probes[index % len(probes)]
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed = deciders[name](task)
            if index >= WARMUP:
                durations[name].append(elapsed)
    return {name: median(values) * MICROS for name, values in durations.items()}


@contextmanager
def _reference(store: Store, shape: HistoryShape) -> Iterator[Decide]:
    database = Database(store.url)
    gate = AllowanceGate(OfficeTelemetry(), CountReadFault())
    _check_count(database, shape.probe_task(0))

    def decide(task: str) -> float:
        wake = _probe_wake(task)
        with database.transaction() as session:
            session.execute(text("SELECT 1"))
            start = perf_counter()
            admitted = gate.admits(session, wake, NOW)
            elapsed = perf_counter() - start
        if not admitted:
            raise AssertionError(f"the bench's probe wake on {task} was refused")
        return elapsed

    try:
        yield decide
    finally:
        database.dispose()


def _payload_read(task: str) -> float:
    """Reading a probe wake's payload, as `Wake` does once when it is made."""
    payload = _probe_wake(task).payload
    start = perf_counter()
    read_payload(payload)
    return perf_counter() - start


def _check_count(database: Database, task: str) -> None:
    """The timed decisions must read the count the history was built to give."""
    with database.transaction() as session:
        observed = session.scalar(allowance_count(task, NOW))
    if observed != IN_WINDOW_RUNS:
        raise AssertionError(f"probe task {task} counts {observed}, not {IN_WINDOW_RUNS}")


def _probe_wake(task: str) -> Wake:
    actor = agent_name(0)
    payload = {
        "task_id": task,
        "workspace_id": WORKSPACE,
        "actor_type": AGENT_ACTOR,
        "actor_id": actor,
    }
    return Wake(agent_name(1), TASK_ASSIGNED, json.dumps(payload), f"probe:{task}")


@contextmanager
def _floor(store: Store, shape: HistoryShape) -> Iterator[Decide]:
    connection = store.raw_connection(autocommit=True)
    statement = _bare_count(store)
    window = (_stored_instant(store, NOW - ASSIGNMENT_WINDOW), _stored_instant(store, NOW))

    def count(task: str) -> int:
        cursor = connection.execute(statement, (task, TASK_ASSIGNED, AGENT_ACTOR, *window))
        return int(cursor.fetchone()[0])

    if count(shape.probe_task(0)) != IN_WINDOW_RUNS:
        raise AssertionError("the bare count disagrees with the history")

    def decide(task: str) -> float:
        start = perf_counter()
        count(task)
        return perf_counter() - start

    try:
        yield decide
    finally:
        connection.close()


def _bare_count(store: Store) -> str:
    return BARE_COUNT.format(p="?" if store.dialect == SQLITE else "%s")


def _stored_instant(store: Store, instant: Any) -> Any:
    """An instant as the reference stores it: text on SQLite, naive UTC on PostgreSQL."""
    if store.dialect != SQLITE:
        return instant.replace(tzinfo=None)
    dialect = sqlite.dialect()
    processor = Run.__table__.c.requested_at.type.dialect_impl(dialect).bind_processor(dialect)
    assert processor is not None
    return processor(instant)


def _plan(store: Store) -> str:
    """How the database answers the count: the index it uses, or a scan."""
    explain = "EXPLAIN QUERY PLAN " if store.dialect == SQLITE else "EXPLAIN "
    window = (_stored_instant(store, NOW - ASSIGNMENT_WINDOW), _stored_instant(store, NOW))
    connection = store.raw_connection(autocommit=True)
    try:
        cursor = connection.execute(
            explain + _bare_count(store), ("task-0", TASK_ASSIGNED, AGENT_ACTOR, *window)
        )
        lines = [str(row[-1]) for row in cursor.fetchall()]
    finally:
        connection.close()
    return next((line.strip() for line in lines if "ndex" in line or "SCAN" in line), lines[0])


def size_label(runs: int) -> str:
    exponent = math.log10(runs)
    return f"10^{exponent:.0f} runs" if exponent.is_integer() else f"{runs:,} runs"


def _rows(
    dialect: str, label: str, settings: GateSettings, medians: dict[str, float], plan: str
) -> list[Row]:
    small, large = size_label(settings.small_runs), size_label(settings.large_runs)
    return [
        Row(
            key=f"gate.{dialect}.history",
            section=SECTION,
            what=f"{label}: median decision, {small} vs {large}",
            baseline=Measure(small, medians["reference small"], "µs"),
            subject=Measure(large, medians["reference large"], "µs"),
            target=HISTORY_TARGET,
            note=f"plan: {plan}",
        ),
        Row(
            key=f"gate.{dialect}.floor",
            section=SECTION,
            what=f"{label}: reference decision vs bare count (raw driver), {large}",
            baseline=Measure("bare count", medians["floor large"], "µs"),
            subject=Measure("reference", medians["reference large"], "µs"),
            target=FLOOR_TARGET,
        ),
        Row(
            key=f"gate.{dialect}.floor_with_read",
            section=SECTION,
            what=f"{label}: decision plus its wake's payload read vs bare count, {large}",
            baseline=Measure("bare count", medians["floor large"], "µs"),
            subject=Measure(
                "decision + read", medians["reference large"] + medians["payload read"], "µs"
            ),
            note=(
                f"the read ({medians['payload read']:.1f} µs) is made once per wake, when it is "
                "made, and shared by the coalescer, the gate and the inserted run"
            ),
        ),
        Row(
            key=f"gate.{dialect}.floor_history",
            section=SECTION,
            what=f"{label}: bare count alone, {small} vs {large}",
            baseline=Measure(small, medians["floor small"], "µs"),
            subject=Measure(large, medians["floor large"], "µs"),
        ),
    ]


def _not_measured(dialect: str, label: str, settings: GateSettings, reason: str) -> list[Row]:
    large = size_label(settings.large_runs)
    return [
        Row(
            key=f"gate.{dialect}.history",
            section=SECTION,
            what=f"{label}: median decision vs history size",
            baseline=Measure(large, None, "µs"),
            note=f"not measured: {reason}",
        )
    ]
