"""The assignee mutation: commit the change, carry out its side effects, wake the assignee.

The mutation commits in its own transaction before its wake is enqueued, so no
fate of the wake (deduplicated, merged, refused, failed) can undo it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlalchemy.orm import Session

from conformance.reference.db import Database
from conformance.reference.errors import Forbidden, NotFound
from conformance.reference.office.constants import TASK_ASSIGNED
from conformance.reference.office.lookup import fetch
from conformance.reference.office.models import Agent, OfficeSessionRow, Task
from conformance.reference.office.producers import assignment_wake
from conformance.reference.office.run_queue import RunQueue
from conformance.reference.office.telemetry import GENERATION_UNRESOLVED, OfficeTelemetry
from conformance.reference.office.wake import EnqueueResult

ACTIVE = "active"
COMPLETED = "completed"


@dataclass(frozen=True)
class PublishedEvent:
    event_type: str
    task_id: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class SessionInterrupt:
    agent_id: str
    task_id: str


@dataclass
class EffectLog:
    """Events published and sessions interrupted by this process (in memory only)."""

    events: list[PublishedEvent] = field(default_factory=list)
    interrupts: list[SessionInterrupt] = field(default_factory=list)


@dataclass(frozen=True)
class AssignmentResult:
    task_id: str
    assignee_agent_id: str
    generation: int
    wake: EnqueueResult | None
    """None for an unassignment, which wakes nobody."""


@dataclass(frozen=True)
class _Change:
    task: Task
    previous_assignee: str


class AssigneeMutation:
    def __init__(
        self, db: Database, queue: RunQueue, telemetry: OfficeTelemetry, effects: EffectLog
    ) -> None:
        self._db = db
        self._queue = queue
        self._telemetry = telemetry
        self._effects = effects

    def apply(
        self, task_id: str, assignee_agent_id: str, acting_agent_id: str, *, keyless: bool = False
    ) -> AssignmentResult:
        """Assign (or, with an empty assignee, unassign) a task.

        `keyless` makes the generation unresolvable for the wake, which then
        goes to the queue without a dedup key (a fault hook for tests).
        """
        change = self._commit(task_id, assignee_agent_id, acting_agent_id)
        self._publish(change)
        task = change.task
        wake = None
        if assignee_agent_id:
            wake = self._wake(task, assignee_agent_id, acting_agent_id, keyless)
        return AssignmentResult(task.id, assignee_agent_id, task.assignment_generation, wake)

    def _commit(self, task_id: str, assignee_agent_id: str, acting_agent_id: str) -> _Change:
        with self._db.transaction() as session:
            _authorize(session, acting_agent_id)
            task = _bump_generation(session, task_id)
            if assignee_agent_id:
                fetch(session, Agent, assignee_agent_id, "agent")
            previous = task.assignee_agent_id
            task.assignee_agent_id = assignee_agent_id
            if _displaced(previous, assignee_agent_id):
                _complete_office_sessions(session, previous, task_id)
        return _Change(task, previous)

    def _publish(self, change: _Change) -> None:
        task = change.task
        self._effects.events.append(PublishedEvent("task.updated", task.id, ("assignee_agent_id",)))
        if _displaced(change.previous_assignee, task.assignee_agent_id):
            self._effects.interrupts.append(SessionInterrupt(change.previous_assignee, task.id))

    def _wake(
        self, task: Task, agent_id: str, acting_agent_id: str, keyless: bool
    ) -> EnqueueResult:
        generation = None if keyless else task.assignment_generation
        if generation is None:
            self._telemetry.keyless(TASK_ASSIGNED, GENERATION_UNRESOLVED)
        return self._queue.enqueue(assignment_wake(task, agent_id, acting_agent_id, generation))


def _authorize(session: Session, acting_agent_id: str) -> None:
    """A user or internal caller (empty id) may always assign; an agent needs the permission."""
    if not acting_agent_id:
        return
    agent = session.get(Agent, acting_agent_id)
    if agent is None or not agent.can_assign_tasks:
        raise Forbidden(f"agent {acting_agent_id!r} may not assign tasks")


def _bump_generation(session: Session, task_id: str) -> Task:
    """Increment the generation in SQL, then read the row back in the same transaction.

    The UPDATE comes first so that it takes the row's write lock before anything
    is read: a read-modify-write in Python would lose increments on SQLite, whose
    driver runs reads outside the transaction. The row read back (generation and
    previous assignee alike) is then the one this transaction alone may change.
    """
    bumped = session.execute(
        update(Task)
        .where(Task.id == task_id)
        .values(assignment_generation=Task.assignment_generation + 1)
        .execution_options(synchronize_session=False)
    )
    if cast(CursorResult[Any], bumped).rowcount != 1:
        raise NotFound(f"unknown task {task_id!r}")
    task = session.get(Task, task_id, populate_existing=True)
    assert task is not None, "the row just updated is there"
    return task


def _displaced(previous: str, new: str) -> bool:
    return bool(previous) and previous != new


def _complete_office_sessions(session: Session, agent_id: str, task_id: str) -> None:
    session.execute(
        update(OfficeSessionRow)
        .where(OfficeSessionRow.agent_id == agent_id, OfficeSessionRow.task_id == task_id)
        .values(state=COMPLETED)
    )
