"""Mutants of the assignee mutation: a refusal that undoes it, an unassignment that wakes."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import select

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.office import service as office_service
from conformance.reference.office.assignment import AssigneeMutation, AssignmentResult
from conformance.reference.office.models import OfficeSessionRow, Task
from conformance.reference.office.wake import Outcome


@dataclass(frozen=True)
class _TaskBefore:
    """What an assignment changes, as it was before: enough to take the assignment back."""

    assignee: str
    generation: int
    session_states: dict[int, str]
    events: int
    interrupts: int


class AllOrNothingMutation(AssigneeMutation):
    """Treats the assignment and its wake as one unit: a refused wake takes the assignment back."""

    def apply(
        self, task_id: str, assignee_agent_id: str, acting_agent_id: str, *, keyless: bool = False
    ) -> AssignmentResult:
        before = self._before(task_id)
        result = super().apply(task_id, assignee_agent_id, acting_agent_id, keyless=keyless)
        refused = result.wake is not None and result.wake.outcome is Outcome.RATE_LIMITED
        if before is None or not refused:
            return result
        self._take_back(task_id, before)
        return replace(result, assignee_agent_id=before.assignee, generation=before.generation)

    def _before(self, task_id: str) -> _TaskBefore | None:
        with self._db.transaction() as session:
            task = session.get(Task, task_id)
            if task is None:
                return None
            rows = session.scalars(
                select(OfficeSessionRow).where(OfficeSessionRow.task_id == task_id)
            )
            return _TaskBefore(
                assignee=task.assignee_agent_id,
                generation=task.assignment_generation,
                session_states={row.id: row.state for row in rows},
                events=len(self._effects.events),
                interrupts=len(self._effects.interrupts),
            )

    def _take_back(self, task_id: str, before: _TaskBefore) -> None:
        with self._db.transaction() as session:
            task = session.get_one(Task, task_id)
            task.assignee_agent_id = before.assignee
            task.assignment_generation = before.generation
            for row_id, state in before.session_states.items():
                session.get_one(OfficeSessionRow, row_id).state = state
        del self._effects.events[before.events :]
        del self._effects.interrupts[before.interrupts :]


class DisplacedWakeMutation(AssigneeMutation):
    """An unassignment wakes the displaced assignee, through the same task_assigned wake."""

    def apply(
        self, task_id: str, assignee_agent_id: str, acting_agent_id: str, *, keyless: bool = False
    ) -> AssignmentResult:
        with self._db.transaction() as session:
            task = session.get(Task, task_id)
            previous = task.assignee_agent_id if task is not None else ""
        result = super().apply(task_id, assignee_agent_id, acting_agent_id, keyless=keyless)
        if assignee_agent_id or not previous:
            return result
        with self._db.transaction() as session:
            task = session.get_one(Task, task_id)
        return replace(result, wake=self._wake(task, previous, acting_agent_id, keyless))


def _mutation(replacement: type[AssigneeMutation]) -> Patch:
    return Patch(office_service, "AssigneeMutation", replacement)


MUTANTS = [
    Mutant(
        "refusal_rolls_back_mutation",
        "AC-OFFICE-ASSIGN-RATE-001.7",
        Capability.OFFICE,
        "a refused wake undoes the assignment: assignee, generation, session and event revert",
        lambda: [_mutation(AllOrNothingMutation)],
    ),
    Mutant(
        "unassign_wakes_previous_assignee",
        "AC-OFFICE-ASSIGN-RATE-001.9",
        Capability.OFFICE,
        "unassigning wakes the displaced assignee with a task_assigned wake",
        lambda: [_mutation(DisplacedWakeMutation)],
    ),
]
