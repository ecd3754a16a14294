"""Enqueue throughput through the whole pipeline, in wakes per second.

Three workloads share one store, each through its own coordinator and clock,
and are driven one wake at a time in turn (the order rotating):

- many tasks: agent assignment wakes spread over 1,000 tasks;
- one task: the same wakes all on one task, 121 s apart, so that the
  allowance never binds and every wake is inserted, as in "many tasks";
- hot task: wakes on one task 1 s apart, so that the allowance binds and most
  wakes are refused.

Assignees rotate over ten agents, so that no wake is ever coalescible, and
every key is fresh, so that none is a duplicate. The outcome mix is reported
beside each rate.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from time import perf_counter, process_time

from bench.history import NOW
from bench.report import Measure, Row
from bench.stats import MILLIS, rate
from bench.stores import Store, postgres_store, sqlite_store
from conformance.reference.app import Coordinator
from conformance.reference.clock import ManualClock
from conformance.reference.office.constants import AGENT_ACTOR, TASK_ASSIGNED
from conformance.reference.office.wake import Outcome

SECTION = "2. Enqueue throughput"
WORKSPACE = "ws-enqueue"
ASSIGNER = "assigner"
ASSIGNEES = 10
MANY_TASKS = 1_000


@dataclass(frozen=True)
class EnqueueSettings:
    wakes: int
    """Wakes per workload."""


@dataclass
class Workload:
    name: str
    tasks: int
    step: timedelta
    coordinator: Coordinator
    clock: ManualClock
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)

    def wake(self, index: int) -> None:
        """Advance this workload's clock and hand one wake to the pipeline, timed."""
        self.clock.advance(self.step)
        task = f"{self.name}-task-{index % self.tasks}"
        payload = {
            "task_id": task,
            "workspace_id": WORKSPACE,
            "actor_type": AGENT_ACTOR,
            "actor_id": ASSIGNER,
        }
        agent = _assignee(self.name, index)
        start, cpu_start = perf_counter(), process_time()
        result = self.coordinator.office.enqueue_wake(
            agent, TASK_ASSIGNED, json.dumps(payload), f"bench:{self.name}:{index}"
        )
        self.seconds += perf_counter() - start
        self.cpu_seconds += process_time() - cpu_start
        self.outcomes[result.outcome] += 1

    def rate(self) -> float:
        return rate(sum(self.outcomes.values()), self.seconds)

    def mix(self) -> str:
        """The outcomes, and the client's CPU per wake (the rest of the time is the database)."""
        outcomes = ", ".join(f"{self.outcomes[o]} {o.value}" for o in Outcome if self.outcomes[o])
        cpu = self.cpu_seconds / max(1, sum(self.outcomes.values())) * MILLIS
        return f"{outcomes} (client CPU {cpu:.1f} ms/wake)"


def _assignee(workload: str, index: int) -> str:
    return f"{workload}-agent-{index % ASSIGNEES}"


def measure(settings: EnqueueSettings, postgres_url: str | None, unavailable: str) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-enqueue-") as scratch:
        rows = _measure(sqlite_store(Path(scratch), "enqueue"), settings)
    if postgres_url is None:
        return [*rows, _not_measured(unavailable)]
    with postgres_store(postgres_url, "enqueue") as store:
        return rows + _measure(store, settings)


def _measure(store: Store, settings: EnqueueSettings) -> list[Row]:
    specs = [
        ("many", MANY_TASKS, timedelta(seconds=121)),
        ("one", 1, timedelta(seconds=121)),
        ("hot", 1, timedelta(seconds=1)),
    ]
    with ExitStack() as stack:
        workloads = [stack.enter_context(_workload(store, *spec)) for spec in specs]
        for index in range(settings.wakes):
            shift = index % len(workloads)
            for workload in workloads[shift:] + workloads[:shift]:
                workload.wake(index)
    many, one, hot = workloads
    return _rows(store, many, one, hot)


@contextmanager
def _workload(store: Store, name: str, tasks: int, step: timedelta) -> Iterator[Workload]:
    clock = ManualClock(NOW)
    coordinator = Coordinator(store.url, clock)
    office = coordinator.office
    try:
        if name == "many":
            office.create_workspace(WORKSPACE)
            office.create_agent(WORKSPACE, ASSIGNER, can_assign_tasks=True)
        for index in range(ASSIGNEES):
            office.create_agent(WORKSPACE, _assignee(name, index), can_assign_tasks=False)
        yield Workload(name, tasks, step, coordinator, clock)
    finally:
        coordinator.close()


def _rows(store: Store, many: Workload, one: Workload, hot: Workload) -> list[Row]:
    label = store.label
    return [
        Row(
            key=f"enqueue.{store.dialect}.tasks",
            section=SECTION,
            what=f"{label}: wakes/s, {MANY_TASKS:,} tasks vs one task",
            baseline=Measure(f"{MANY_TASKS:,} tasks", many.rate(), "wakes/s"),
            subject=Measure("one task", one.rate(), "wakes/s"),
            note=f"{MANY_TASKS:,} tasks: {many.mix()}; one task: {one.mix()}",
        ),
        Row(
            key=f"enqueue.{store.dialect}.hot",
            section=SECTION,
            what=f"{label}: wakes/s, one task vs the same task with its allowance binding",
            baseline=Measure("one task", one.rate(), "wakes/s"),
            subject=Measure("allowance binding", hot.rate(), "wakes/s"),
            note=f"binding: {hot.mix()}",
        ),
    ]


def _not_measured(reason: str) -> Row:
    return Row(
        key="enqueue.postgresql.tasks",
        section=SECTION,
        what="PostgreSQL: wakes/s through the pipeline",
        baseline=Measure(f"{MANY_TASKS:,} tasks", None, "wakes/s"),
        note=f"not measured: {reason}",
    )
