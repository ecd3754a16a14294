"""The operations an office effects schedule is made of, each as the features' own When step.

Every shape of wake the spec names has an operation: agent assignments keyed and keyless,
users and the internal caller, unassignments, the actorless producers, raw wakes of other
reasons and other actor types stamped on them, payloads that name no task or do not parse,
degraded reads (the fault hook), concurrent batches, restarts and deleted runs. So that the
earlier gates have work too, a stored run's wake is delivered again (the duplicate lookup), and
an assignment is repeated a few seconds later, by an agent or a user, after runs left queued
(the coalescer, and its relabel). The clock moves between them in bursts of microseconds or
seconds as well as minutes and window edges. Which odd values a raw wake carries comes from
`hostile_data`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

from hypothesis import strategies as st

from conformance.driver import RunStatus
from conformance.properties.hostile_data import (
    ACTING_AGENTS,
    ASSIGNEES,
    OFFICE_TASKS,
    OFFICE_WORKSPACE,
    odd_payloads,
)
from conformance.properties.weighted import weighted

MICRO = timedelta(microseconds=1)
SETTLED: tuple[RunStatus, ...] = ("finished", "running", "claimed", "failed", "cancelled")
"""Statuses that take a run out of `queued`, so that nothing merges into it (the rolling-window
property, whose oracle knows no coalescer, settles every run as one of these)."""
EFFECT_SETTLED: tuple[RunStatus, ...] = ("queued", "queued", *SETTLED)
"""The effects schedules leave about one run in four queued, for a later wake to merge into."""
SETTLING = st.sampled_from(EFFECT_SETTLED)
ANY_TASK = st.sampled_from(OFFICE_TASKS)
BUSY_TASK = st.sampled_from([OFFICE_TASKS[0], *OFFICE_TASKS])
BUSIER_TASK = st.sampled_from([OFFICE_TASKS[0], OFFICE_TASKS[0], *OFFICE_TASKS])
ANY_ASSIGNEE = st.sampled_from(ASSIGNEES)
ASSIGNEE_OR_NONE = st.sampled_from([*ASSIGNEES, *ASSIGNEES, ""])
ANY_ACTING = st.sampled_from(ACTING_AGENTS)
ACTING_OR_USER = st.sampled_from([*ACTING_AGENTS, *ACTING_AGENTS, ""])
"""The choices an operation draws, each built once: Hypothesis checks every strategy it has not
seen before it draws, so one made anew at every draw costs more than the draw (the first task
is the busiest, as the opening fills its window; an empty acting agent is a user)."""
REPEAT_GAPS = st.one_of(
    st.integers(0, 999).map(lambda micros: micros * MICRO),
    st.integers(1, 6).map(lambda whole: timedelta(seconds=whole)),
)
"""How soon an assignment is repeated: mostly inside the coalescing window, sometimes past it.
Half of the other gaps are drawn from here too, so that a window, once full, stays full for
several operations."""


@dataclass(frozen=True)
class Operation:
    """One thing the schedule does at an instant; the run it inserts is settled as `settle_as`."""

    at: datetime
    settle_as: RunStatus

    def when(self) -> list[str]:
        """The When steps that perform it, in the features' phrasing."""
        raise NotImplementedError


@dataclass(frozen=True)
class Assign(Operation):
    """The assignee mutation; `acting` is empty for a user or the internal caller."""

    task_id: str
    assignee: str
    acting: str
    keyless: bool = False
    degraded: bool = False
    """The count read fails for this wake (the fault hook armed just before it)."""

    def when(self) -> list[str]:
        who = f'agent "{self.acting}"' if self.acting else "a user"
        target = f'"{self.assignee}"' if self.assignee else "nobody"
        if not self.assignee:
            return [f'agent "{self.acting}" unassigns task "{self.task_id}"']
        keyless = " with its generation unresolvable" if self.keyless else ""
        armed = ["the next count read fails"] if self.degraded else []
        return [*armed, f'{who} assigns task "{self.task_id}" to {target}{keyless}']


@dataclass(frozen=True)
class Produce(Operation):
    """A producer other than the mutation emits its wake (it carries no actor)."""

    producer: str
    task_id: str
    agent_id: str

    def when(self) -> list[str]:
        return [
            f'producer "{self.producer}" emits a wake for task "{self.task_id}" '
            f'to "{self.agent_id}"'
        ]


@dataclass(frozen=True)
class Raw(Operation):
    """A wake handed straight to the pipeline with a payload of the schedule's choosing."""

    agent_id: str
    reason: str
    payload: str
    dedup_key: str | None
    degraded: bool = False
    """The fault hook is armed just before it: the next count read fails, this wake's if it
    is in scope, else the next in-scope wake's."""

    def when(self) -> list[str]:
        key = f'with key "{self.dedup_key}"' if self.dedup_key else "without a key"
        armed = ["the next count read fails"] if self.degraded else []
        return [
            *armed,
            f'a "{self.reason}" wake for agent "{self.agent_id}" is enqueued {key}, '
            f"with payload: {self.payload}",
        ]


@dataclass(frozen=True)
class Batch(Operation):
    """Agent assignments of one task evaluated concurrently (run_concurrently)."""

    task_id: str
    assignees: tuple[str, ...]
    acting: str

    def when(self) -> list[str]:
        names = ", ".join(f'"{name}"' for name in self.assignees)
        return [f'agent "{self.acting}" assigns task "{self.task_id}" to {names} at once']


@dataclass(frozen=True)
class Redeliver(Operation):
    """A stored run's wake (its reason, payload and key) handed to the pipeline again."""

    newest: bool

    def when(self) -> list[str]:
        return [f"the {'newest' if self.newest else 'oldest'} run's wake is delivered again"]


@dataclass(frozen=True)
class Restart(Operation):
    def when(self) -> list[str]:
        return ["the implementation restarts"]


@dataclass(frozen=True)
class DeleteNewest(Operation):
    def when(self) -> list[str]:
        return ["the newest run is deleted"]


def way_of(op: Operation) -> str:
    """How an agent wake came, as the path inventory names it (paths.toml)."""
    if isinstance(op, Raw):
        return "raw"
    if isinstance(op, Batch):
        return "concurrent"
    return "keyless" if isinstance(op, Assign) and op.keyless else "keyed"


def path_of(op: Operation) -> str:
    """The path an admitted row came by: its way, or degraded when no count decided it."""
    return "degraded" if arms_the_fault(op) else way_of(op)


def arms_the_fault(op: Operation) -> bool:
    """Whether the fault hook is armed just before the operation."""
    return isinstance(op, Assign | Raw) and op.degraded


@dataclass(frozen=True)
class Powers:
    """What the implementation declares, which decides the operations a schedule may hold."""

    keyless: bool
    degraded: bool
    concurrent: bool
    restartable: bool
    producers: tuple[str, ...]
    allowance: int
    window: timedelta


def gaps(window: timedelta) -> st.SearchStrategy[timedelta]:
    """None, microseconds or seconds (bursts, most often, so that windows fill), most of a
    window, or a window's edge."""
    seconds = st.integers(1, 30).map(lambda whole: timedelta(seconds=whole))
    return weighted(
        (1, st.just(timedelta(0))),
        (1, st.integers(1, 999).map(lambda micros: micros * MICRO)),
        (3, seconds),
        (1, st.integers(60, window // timedelta(seconds=1)).map(lambda s: timedelta(seconds=s))),
        (1, st.sampled_from([window - MICRO, window, window + MICRO])),
    )


def raw_wakes(
    draw: st.DrawFn, at: datetime, settle_as: RunStatus, serial: int, powers: Powers
) -> Raw:
    """A wake handed straight to the pipeline, sometimes with its count read failing: a
    degraded admission off the assignee mutation's path."""
    reason, fields = draw(odd_payloads(), label="odd payload")
    payload = fields if isinstance(fields, str) else json.dumps(fields)
    keyed = draw(st.booleans(), label="keyed")
    key = f"raw-{serial}" if keyed else None
    degraded = powers.degraded and draw(st.integers(0, 3), label="degraded") == 0
    return Raw(at, settle_as, draw(ANY_ASSIGNEE), reason, payload, key, degraded)


def assignments(draw: st.DrawFn, at: datetime, settle_as: RunStatus, powers: Powers) -> Assign:
    task_id = draw(BUSIER_TASK)
    assignee = draw(ASSIGNEE_OR_NONE, label="assignee")
    return assigned_by_someone(draw, at, settle_as, powers, task_id, assignee)


def assigned_by_someone(
    draw: st.DrawFn, at: datetime, settle_as: RunStatus, powers: Powers, task_id: str, assignee: str
) -> Assign:
    """The assignment made by an agent (keyed, keyless or with its count read failing) or by a
    user; an unassignment is always an agent's."""
    acting = draw(ACTING_OR_USER, label="acting")
    if not acting and not assignee:
        assignee = ASSIGNEES[0]
    keyless = bool(acting) and powers.keyless and draw(st.booleans(), label="keyless")
    degraded = bool(acting and assignee) and powers.degraded and draw(st.integers(0, 3)) == 0
    return Assign(at, settle_as, task_id, assignee, acting, keyless, degraded)


def operation_kinds(powers: Powers, restarts_left: int | None, repeatable: bool) -> list[str]:
    kinds = ["assign"] * 6 + ["raw"] * 3 + ["delete"] * 2 + ["redeliver"]
    kinds += ["repeat"] * 3 if repeatable else []
    kinds += ["produce"] if powers.producers else []
    kinds += ["batch"] if powers.concurrent else []
    kinds += ["restart"] if powers.restartable and restarts_left != 0 else []
    return kinds


@cache
def kind_of(kinds: tuple[str, ...]) -> st.SearchStrategy[str]:
    """A kind of operation, its weight the times it is listed (built once per list)."""
    return st.sampled_from(kinds)


def one_operation(
    draw: st.DrawFn, kind: str, at: datetime, powers: Powers, serial: int, last: Assign
) -> Operation:
    """An operation of the kind drawn; `last` is the schedule's latest assignment, which a
    repeat makes again (same task, same assignee, by whoever acts now)."""
    settle_as = draw(SETTLING)
    if kind == "raw":
        return raw_wakes(draw, at, settle_as, serial, powers)
    if kind == "repeat":
        return assigned_by_someone(draw, at, settle_as, powers, last.task_id, last.assignee)
    if kind == "produce":
        producer = draw(st.sampled_from(powers.producers))
        task_id, agent_id = draw(ANY_TASK), draw(ANY_ASSIGNEE)
        return Produce(at, settle_as, producer, task_id, agent_id)
    if kind == "batch":
        size = draw(st.integers(2, 4))
        chosen = tuple(draw(st.lists(ANY_ASSIGNEE, min_size=size, max_size=size)))
        task_id, acting = draw(BUSY_TASK), draw(ANY_ACTING)
        return Batch(at, settle_as, task_id, chosen, acting)
    if kind == "restart":
        return Restart(at, settle_as)
    if kind == "delete":
        return DeleteNewest(at, settle_as)
    if kind == "redeliver":
        return Redeliver(at, settle_as, draw(st.booleans(), label="newest"))
    return assignments(draw, at, settle_as, powers)


@st.composite
def effect_schedules(
    draw: st.DrawFn, powers: Powers, start: datetime, size: int, restarts: int | None
) -> list[Operation]:
    """An opening of N agent wakes a few seconds apart on the first task, so its window starts
    full (only the last may stay queued: none merges into another), then up to `size`
    operations of every kind, the clock never going back."""
    now = start
    opening: list[Assign] = []
    for index in range(powers.allowance):
        now += draw(st.integers(0, 5)) * timedelta(seconds=1)
        acting = ACTING_AGENTS[index % len(ACTING_AGENTS)]
        closing = index == powers.allowance - 1
        settle_as = draw(SETTLING) if closing else "finished"
        opening.append(Assign(now, settle_as, OFFICE_TASKS[0], ASSIGNEES[index % 2], acting))
    last = opening[-1]
    spread = st.one_of(gaps(powers.window), REPEAT_GAPS)
    rest: list[Operation] = []
    for serial in range(draw(st.integers(0, size), label="operations")):
        kinds = operation_kinds(powers, restarts, repeatable=bool(last.assignee))
        kind = draw(kind_of(tuple(kinds)), label="operation")
        now += draw(REPEAT_GAPS if kind == "repeat" else spread, label="gap")
        operation = one_operation(draw, kind, now, powers, serial, last)
        if isinstance(operation, Restart) and restarts is not None:
            restarts -= 1
        if isinstance(operation, Assign):
            last = operation
        rest.append(operation)
    return [*opening, *rest]


def workspace_steps(tasks: Sequence[str] = OFFICE_TASKS) -> list[tuple[str, str]]:
    """The Given steps that build the world every schedule runs in."""
    acting = " and ".join(f'"{name}"' for name in ACTING_AGENTS)
    others = " and ".join(f'"{name}"' for name in ASSIGNEES if name not in ACTING_AGENTS)
    steps = [
        ("Given", f'a workspace "{OFFICE_WORKSPACE}"'),
        ("Given", f'agents {acting} in workspace "{OFFICE_WORKSPACE}" who may assign tasks'),
        ("Given", f'agents {others} in workspace "{OFFICE_WORKSPACE}" who may not assign tasks'),
    ]
    steps += [
        ("Given", f'a task "{task}" in workspace "{OFFICE_WORKSPACE}" with no assignee')
        for task in tasks
    ]
    return steps


def describe(operation: Operation) -> str:
    """A compact line of an operation for Hypothesis' notes."""
    fields = {k: v for k, v in vars(operation).items() if k not in ("at", "settle_as")}
    return f"{operation.at.isoformat()} {type(operation).__name__} {fields}"
