"""The Office half of the in-process adapter: port operations onto the OfficeService."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from conformance.driver import (
    AssignmentResult,
    MutationEffects,
    OfficeConstants,
    OfficeSession,
    OfficeVocabulary,
    Outcome,
    PublishedEvent,
    Run,
    RunStatus,
    SessionInterrupt,
    TaskView,
    WakeResult,
)
from conformance.reference.office import constants
from conformance.reference.office import producers as reference_producers
from conformance.reference.office.assignment import COMPLETED
from conformance.reference.office.assignment import AssignmentResult as ReferenceAssignment
from conformance.reference.office.models import Run as RunRow
from conformance.reference.office.models import Task
from conformance.reference.office.wake import EnqueueResult

if TYPE_CHECKING:
    from conformance.reference.app import Coordinator
    from conformance.reference.office.service import OfficeService

T = TypeVar("T")


class OfficeOperations:
    """Mixin for InProcessDriver: every Office operation of the driver port."""

    coordinator: Coordinator

    if TYPE_CHECKING:

        def call(self, operation: Callable[[], T]) -> T: ...

    @property
    def _office(self) -> OfficeService:
        return self.coordinator.office

    def office_constants(self) -> OfficeConstants:
        return OfficeConstants(
            allowance=constants.ASSIGNMENT_ALLOWANCE,
            window_seconds=constants.ASSIGNMENT_WINDOW.total_seconds(),
            coalesce_window_seconds=constants.COALESCE_WINDOW.total_seconds(),
            dedup_lookback_seconds=constants.DEDUP_LOOKBACK.total_seconds(),
            producers=[p.value for p in reference_producers.Producer],
            vocabulary=OfficeVocabulary(interrupted_session_state=COMPLETED),
        )

    # -- setup ----------------------------------------------------------------
    def create_workspace(self, workspace_id: str) -> None:
        self.call(lambda: self._office.create_workspace(workspace_id))

    def create_agent(self, workspace_id: str, agent_id: str, *, can_assign_tasks: bool) -> None:
        self.call(
            lambda: self._office.create_agent(
                workspace_id, agent_id, can_assign_tasks=can_assign_tasks
            )
        )

    def create_task(
        self, workspace_id: str, task_id: str, *, assignee_agent_id: str = ""
    ) -> TaskView:
        task = self.call(
            lambda: self._office.create_task(
                workspace_id, task_id, assignee_agent_id=assignee_agent_id
            )
        )
        return _task_view(task)

    def open_office_session(self, agent_id: str, task_id: str) -> None:
        self.call(lambda: self._office.open_office_session(agent_id, task_id))

    # -- actions --------------------------------------------------------------
    def assign_task(
        self, task_id: str, assignee_agent_id: str, *, acting_agent_id: str
    ) -> AssignmentResult:
        return _assignment(
            self.call(lambda: self._office.assign_task(task_id, assignee_agent_id, acting_agent_id))
        )

    def assign_task_keyless(
        self, task_id: str, assignee_agent_id: str, *, acting_agent_id: str
    ) -> AssignmentResult:
        return _assignment(
            self.call(
                lambda: self._office.assign_task(
                    task_id, assignee_agent_id, acting_agent_id, keyless=True
                )
            )
        )

    def produce_wake(self, producer: str, task_id: str, agent_id: str) -> WakeResult:
        reference_producer = self.call(lambda: reference_producers.producer_named(producer))
        return _wake(
            self.call(lambda: self._office.produce_wake(reference_producer, task_id, agent_id))
        )

    def enqueue_wake(
        self, agent_id: str, reason: str, payload: str, *, dedup_key: str | None
    ) -> WakeResult:
        return _wake(
            self.call(lambda: self._office.enqueue_wake(agent_id, reason, payload, dedup_key))
        )

    def set_run_status(self, run_id: str, status: RunStatus) -> None:
        self.call(lambda: self._office.set_run_status(run_id, status))

    def delete_run(self, run_id: str) -> None:
        self.call(lambda: self._office.delete_run(run_id))

    def fail_next_count_read(self) -> None:
        self._office.fail_next_count_read()

    # -- observation ----------------------------------------------------------
    def get_task(self, task_id: str) -> TaskView:
        return _task_view(self.call(lambda: self._office.get_task(task_id)))

    def list_runs(self) -> list[Run]:
        return [_run(row) for row in self.call(self._office.list_runs)]

    def telemetry(self) -> str:
        return self._office.telemetry.render()

    def mutation_effects(self) -> MutationEffects:
        effects = self._office.effects
        return MutationEffects(
            interrupts=[
                SessionInterrupt(agent_id=i.agent_id, task_id=i.task_id) for i in effects.interrupts
            ],
            office_sessions=[
                OfficeSession(agent_id=row.agent_id, task_id=row.task_id, state=row.state)
                for row in self.call(self._office.office_sessions)
            ],
            events=[
                PublishedEvent(event_type=e.event_type, task_id=e.task_id, fields=list(e.fields))
                for e in effects.events
            ],
        )


def _task_view(task: Task) -> TaskView:
    return TaskView(
        task_id=task.id,
        workspace_id=task.workspace_id,
        assignee_agent_id=task.assignee_agent_id,
        assignment_generation=task.assignment_generation,
    )


def _wake(result: EnqueueResult) -> WakeResult:
    return WakeResult(outcome=Outcome(result.outcome.value), run_id=result.run_id)


def _assignment(result: ReferenceAssignment) -> AssignmentResult:
    return AssignmentResult(
        task_id=result.task_id,
        assignee_agent_id=result.assignee_agent_id,
        generation=result.generation,
        wake=None if result.wake is None else _wake(result.wake),
    )


def _run(row: RunRow) -> Run:
    return Run(
        run_id=str(row.id),
        agent_id=row.agent_id,
        reason=row.reason,
        payload=row.payload,
        dedup_key=row.dedup_key,
        requested_at=row.requested_at,
        status=row.status,
        coalesced_count=row.coalesced_count,
    )
