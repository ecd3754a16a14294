"""The Office facade the coordinator holds: setup, the assignee mutation, wakes, observation.

Held in memory and lost on restart: the telemetry registry, the log of
published events and interrupts, and the count-read fault hook. Everything
else lives in the database.
"""

from __future__ import annotations

from sqlalchemy import select

from conformance.reference.clock import Clock
from conformance.reference.db import Database
from conformance.reference.errors import InvalidInput, NotFound
from conformance.reference.office.assignment import (
    ACTIVE,
    AssigneeMutation,
    AssignmentResult,
    EffectLog,
)
from conformance.reference.office.constants import RUN_STATUSES
from conformance.reference.office.gate import AllowanceGate, CountReadFault
from conformance.reference.office.lookup import ensure_absent, fetch, require_id
from conformance.reference.office.models import Agent, OfficeSessionRow, Run, Task, Workspace
from conformance.reference.office.producers import Producer, actorless_wake, require_actorless
from conformance.reference.office.run_queue import RunQueue
from conformance.reference.office.telemetry import OfficeTelemetry
from conformance.reference.office.wake import EnqueueResult, Wake


class OfficeService:
    def __init__(self, db: Database, clock: Clock, count_fault: CountReadFault) -> None:
        self._db = db
        self.telemetry = OfficeTelemetry()
        self.effects = EffectLog()
        self._count_fault = count_fault
        gate = AllowanceGate(self.telemetry, self._count_fault)
        self._queue = RunQueue(db, clock, self.telemetry, gate)
        self._mutation = AssigneeMutation(db, self._queue, self.telemetry, self.effects)

    # -- setup ----------------------------------------------------------------
    def create_workspace(self, workspace_id: str) -> None:
        require_id(workspace_id, "workspace")
        with self._db.transaction() as session:
            ensure_absent(session, Workspace, workspace_id, "workspace")
            session.add(Workspace(id=workspace_id))

    def create_agent(self, workspace_id: str, agent_id: str, *, can_assign_tasks: bool) -> None:
        require_id(workspace_id, "workspace")
        require_id(agent_id, "agent")
        with self._db.transaction() as session:
            fetch(session, Workspace, workspace_id, "workspace")
            ensure_absent(session, Agent, agent_id, "agent")
            session.add(
                Agent(id=agent_id, workspace_id=workspace_id, can_assign_tasks=can_assign_tasks)
            )

    def create_task(self, workspace_id: str, task_id: str, *, assignee_agent_id: str = "") -> Task:
        """A new task at generation 0; creating it wakes nobody."""
        require_id(workspace_id, "workspace")
        require_id(task_id, "task")
        with self._db.transaction() as session:
            fetch(session, Workspace, workspace_id, "workspace")
            ensure_absent(session, Task, task_id, "task")
            if assignee_agent_id:
                fetch(session, Agent, assignee_agent_id, "agent")
            task = Task(
                id=task_id,
                workspace_id=workspace_id,
                assignee_agent_id=assignee_agent_id,
                assignment_generation=0,
            )
            session.add(task)
        return task

    def open_office_session(self, agent_id: str, task_id: str) -> None:
        require_id(agent_id, "agent")
        require_id(task_id, "task")
        with self._db.transaction() as session:
            fetch(session, Agent, agent_id, "agent")
            fetch(session, Task, task_id, "task")
            session.add(OfficeSessionRow(agent_id=agent_id, task_id=task_id, state=ACTIVE))

    # -- actions --------------------------------------------------------------
    def assign_task(
        self, task_id: str, assignee_agent_id: str, acting_agent_id: str, *, keyless: bool = False
    ) -> AssignmentResult:
        require_id(task_id, "task")
        return self._mutation.apply(task_id, assignee_agent_id, acting_agent_id, keyless=keyless)

    def produce_wake(self, producer: Producer, task_id: str, agent_id: str) -> EnqueueResult:
        """A wake from one of the producers that act without a mutation."""
        require_actorless(producer)
        require_id(task_id, "task")
        require_id(agent_id, "agent")
        with self._db.transaction() as session:
            task = fetch(session, Task, task_id, "task")
            fetch(session, Agent, agent_id, "agent")
        return self._queue.enqueue(actorless_wake(producer, task, agent_id))

    def enqueue_wake(
        self, agent_id: str, reason: str, payload: str, dedup_key: str | None
    ) -> EnqueueResult:
        """Hand a raw wake to the pipeline; its payload is stored verbatim, parsable or not."""
        require_id(agent_id, "agent")
        if not reason.strip():
            raise InvalidInput("a wake needs a reason")
        if dedup_key is not None and not dedup_key.strip():
            raise InvalidInput("a dedup key must not be blank; use none for a keyless wake")
        with self._db.transaction() as session:
            fetch(session, Agent, agent_id, "agent")
        return self._queue.enqueue(Wake(agent_id, reason, payload, dedup_key))

    def set_run_status(self, run_id: str, status: str) -> None:
        if status not in RUN_STATUSES:
            raise InvalidInput(f"unknown run status {status!r}")
        with self._db.transaction() as session:
            fetch(session, Run, _run_key(run_id), "run").status = status

    def delete_run(self, run_id: str) -> None:
        with self._db.transaction() as session:
            session.delete(fetch(session, Run, _run_key(run_id), "run"))

    def fail_next_count_read(self) -> None:
        self._count_fault.arm()

    # -- observation ----------------------------------------------------------
    def get_task(self, task_id: str) -> Task:
        with self._db.transaction() as session:
            return fetch(session, Task, task_id, "task")

    def list_runs(self) -> list[Run]:
        """Every run, in insertion order."""
        with self._db.transaction() as session:
            return list(session.scalars(select(Run).order_by(Run.id)))

    def office_sessions(self) -> list[OfficeSessionRow]:
        with self._db.transaction() as session:
            return list(session.scalars(select(OfficeSessionRow).order_by(OfficeSessionRow.id)))


def _run_key(run_id: str) -> int:
    if not (run_id.isascii() and run_id.isdigit()):
        raise NotFound(f"unknown run {run_id!r}")
    return int(run_id)
