"""Office variants in behaviour the spec leaves open: the coalescing relabel, how far a generation
moves, whether an unassignment moves it, which run a duplicate names, how a bare NaN reads.

The spec tolerates a count one high or one low per mixed-actor merge, asks that
an assignment "bumps" the generation (not by how much), ties generations to
assignments only, and says nothing of the run a deduplicated wake names.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.reference.errors import NotFound
from conformance.reference.office import assignment, classifier, coalescer, run_queue, service
from conformance.reference.office.coalescer import _merge_target
from conformance.reference.office.constants import QUEUED
from conformance.reference.office.models import Run, Task
from conformance.reference.office.run_queue import RunQueue
from conformance.reference.office.wake import EnqueueResult, Outcome, Wake
from conformance.variants.variant import Variant


def coalesce_keeping_payload(session: Session, wake: Wake, now: datetime) -> Run | None:
    """Merges without overwriting the payload, so a merge never changes whether the run counts:
    the count is exact, the reading the spec's tolerance allows besides one high or one low."""
    target = _merge_target(session, wake, now)
    if target is not None:
        target.coalesced_count = Run.coalesced_count + 1
    return target


def bump_generation_by(step: int) -> Any:
    """A generation bump of `step`: any rise is a bump."""

    def bump(session: Session, task_id: str) -> Task:
        bumped = session.execute(
            update(Task)
            .where(Task.id == task_id)
            .values(assignment_generation=Task.assignment_generation + step)
            .execution_options(synchronize_session=False)
        )
        if cast(CursorResult[Any], bumped).rowcount != 1:
            raise NotFound(f"unknown task {task_id!r}")
        task = session.get(Task, task_id, populate_existing=True)
        if task is None:
            raise NotFound(f"unknown task {task_id!r}")
        return task

    return bump


class UnassignmentKeepsGeneration(assignment.AssigneeMutation):
    """An unassignment clears the assignee without committing a new generation."""

    def _commit(self, task_id: str, assignee_agent_id: str, acting_agent_id: str) -> Any:
        if assignee_agent_id:
            return super()._commit(task_id, assignee_agent_id, acting_agent_id)
        with self._db.transaction() as session:
            assignment._authorize(session, acting_agent_id)
            task = session.get(Task, task_id)
            if task is None:
                raise NotFound(f"unknown task {task_id!r}")
            previous = task.assignee_agent_id
            task.assignee_agent_id = ""
            if previous:
                assignment._complete_office_sessions(session, previous, task_id)
        return assignment._Change(task, previous)


class AnonymousDuplicates(RunQueue):
    """A deduplicated wake is reported without naming the run it duplicates."""

    def _decide(self, session: Session, wake: Wake, now: datetime, gate: Any) -> EnqueueResult:
        decided = super()._decide(session, wake, now, gate)
        if decided.outcome is Outcome.DEDUPLICATED:
            return EnqueueResult(Outcome.DEDUPLICATED)
        return decided


VARIANTS = [
    Variant(
        "exact_coalescing_count",
        Capability.OFFICE,
        "a merge keeps the queued run's payload, so the count stays exact across mixed merges",
        lambda: [Patch(run_queue, "coalesce", coalesce_keeping_payload)],
    ),
    Variant(
        "coalesces_into_claimed_runs",
        Capability.OFFICE,
        "a wake also merges into a matching run that is claimed but has not started",
        lambda: [Patch(coalescer, "MERGEABLE", (QUEUED, "claimed"))],
    ),
    Variant(
        "generation_steps_by_two",
        Capability.OFFICE,
        "each assignment moves the task's generation on by two",
        lambda: [Patch(assignment, "_bump_generation", bump_generation_by(2))],
    ),
    Variant(
        "unassignment_keeps_generation",
        Capability.OFFICE,
        "an unassignment clears the assignee and leaves the generation where it was",
        lambda: [Patch(service, "AssigneeMutation", UnassignmentKeepsGeneration)],
    ),
    Variant(
        "duplicates_name_no_run",
        Capability.OFFICE,
        "a deduplicated wake is reported without the id of the run it duplicates",
        lambda: [Patch(service, "RunQueue", AnonymousDuplicates)],
    ),
    Variant(
        "nan_read",
        Capability.OFFICE,
        "reads a bare NaN in a payload as a number (as JSON5 does), at the gate and in the count",
        lambda: [Patch(classifier, "_STRICT_JSON", json.JSONDecoder())],
        readings={"OF-9": "nan-read"},
    ),
]
