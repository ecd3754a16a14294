"""Mutants of what the allowance counts: the window's ends, the rows in it, N and W themselves."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Select, distinct, func, select
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.office import allowance_count as reference_count
from conformance.reference.office import constants as office_constants
from conformance.reference.office import gate as reference_gate
from conformance.reference.office import service as office_service
from conformance.reference.office.allowance_count import (
    allowance_count as reference_allowance_count,
)
from conformance.reference.office.constants import AGENT_ACTOR, ASSIGNMENT_WINDOW, TASK_ASSIGNED
from conformance.reference.office.gate import AllowanceGate
from conformance.reference.office.models import Run
from conformance.reference.office.wake import Wake

ACTIVE_STATUSES = ("queued", "claimed", "running")


def closed_window_count(task_id: str, now: datetime) -> Select[int]:
    """The window [now - W, now]: a wake exactly W old still counts."""
    return count_within(
        task_id, Run.requested_at >= now - ASSIGNMENT_WINDOW, Run.requested_at <= now
    )


def open_ended_window_count(task_id: str, now: datetime) -> Select[int]:
    """The window (now - W, now): a wake requested at this very instant does not count."""
    return count_within(task_id, Run.requested_at > now - ASSIGNMENT_WINDOW, Run.requested_at < now)


def count_within(task_id: str, *window: ColumnElement[bool]) -> Select[int]:
    """Attributed agent assignment runs of the task within the given window conditions."""
    return (
        select(func.count())
        .select_from(Run)
        .where(
            Run.task_key == task_id,
            Run.reason == TASK_ASSIGNED,
            Run.actor_type == AGENT_ACTOR,
            *window,
        )
    )


def active_runs_count(task_id: str, now: datetime) -> Select[int]:
    """Only runs still waiting or working count; finished, failed and cancelled ones drop out."""
    return reference_allowance_count(task_id, now).where(Run.status.in_(ACTIVE_STATUSES))


def distinct_instants_count(task_id: str, now: datetime) -> Select[int]:
    """Counts request instants rather than wakes, so wakes sharing an instant count once."""
    reference_query = reference_allowance_count(task_id, now)
    return reference_query.with_only_columns(func.count(distinct(Run.requested_at)))


class StatementGate(AllowanceGate):
    """Counts with a statement of its own, through the ORM: a mutant need not be fast."""

    def count_statement(self, task_id: str, now: datetime) -> Select[int]:
        return reference_allowance_count(task_id, now)

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        self._fault.trip()
        return session.scalar(self.count_statement(task_id, now)) or 0


def counting_with(statement: Callable[[str, datetime], Select[int]]) -> type[StatementGate]:
    """A gate class whose count is `statement`."""
    return type(
        f"{statement.__name__}_gate",
        (StatementGate,),
        {"count_statement": staticmethod(statement), "__module__": __name__},
    )


class PerAssigneeGate(StatementGate):
    """Keys the allowance on (task, assignee): each agent the task goes to gets its own N."""

    _assignee = ""

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
        self._assignee = wake.agent_id
        return super().admits(session, wake, now)

    def count_statement(self, task_id: str, now: datetime) -> Select[int]:
        query = reference_allowance_count(task_id, now)
        return query.where(Run.agent_id == self._assignee)


def configured_allowance() -> int:
    """N read from the environment, as an operator knob, by default one more than the spec's
    N: it can never coincide with the spec, whatever N the spec states."""
    default = office_constants.ASSIGNMENT_ALLOWANCE + 1
    return int(os.environ.get("OFFICE_ASSIGNMENT_ALLOWANCE", str(default)))


def _count(statement: Callable[[str, datetime], Select[int]]) -> Patch:
    return Patch(office_service, "AllowanceGate", counting_with(statement))


MUTANTS = [
    Mutant(
        "window_closed_both_ends",
        "AC-OFFICE-ASSIGN-RATE-001.11",
        Capability.OFFICE,
        "counts over [now - W, now], so a wake exactly W old still uses the allowance",
        lambda: [_count(closed_window_count)],
    ),
    Mutant(
        "window_excludes_now",
        "AC-OFFICE-ASSIGN-RATE-001.11",
        Capability.OFFICE,
        "counts over (now - W, now), so wakes requested at the decision instant are not counted",
        lambda: [_count(open_ended_window_count)],
    ),
    Mutant(
        "finished_runs_not_counted",
        "AC-OFFICE-ASSIGN-RATE-001.2",
        Capability.OFFICE,
        "filters the count on status, so finished, failed or cancelled runs free their place",
        lambda: [_count(active_runs_count)],
    ),
    Mutant(
        "per_agent_allowance",
        "AC-OFFICE-ASSIGN-RATE-001.3",
        Capability.OFFICE,
        "counts per (task, assignee), so alternating assignees earns a fresh allowance",
        lambda: [Patch(office_service, "AllowanceGate", PerAssigneeGate)],
    ),
    Mutant(
        "same_instant_counted_once",
        "AC-OFFICE-ASSIGN-RATE-001.10",
        Capability.OFFICE,
        "counts distinct request instants, so two wakes at one instant count as one",
        lambda: [_count(distinct_instants_count)],
    ),
    Mutant(
        "allowance_from_configuration",
        "AC-OFFICE-ASSIGN-RATE-002.6",
        Capability.OFFICE,
        "reads N from OFFICE_ASSIGNMENT_ALLOWANCE (default N + 1) and reports what it read",
        lambda: [
            Patch(office_constants, "ASSIGNMENT_ALLOWANCE", configured_allowance()),
            Patch(reference_gate, "ASSIGNMENT_ALLOWANCE", configured_allowance()),
        ],
    ),
    Mutant(
        "window_declared_twice",
        "AC-OFFICE-ASSIGN-RATE-002.6",
        Capability.OFFICE,
        "the gate keeps its own copy of W (5 minutes) while 10 minutes is reported",
        lambda: [Patch(reference_count, "ASSIGNMENT_WINDOW", timedelta(minutes=5))],
    ),
]
