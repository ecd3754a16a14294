"""Stage 3 of the pipeline: the per-task allowance on agent-initiated assignment wakes.

The gate keeps no state: its count is read from the persisted runs each time,
so restarts and deleted rows need no reconciliation. Every refusal and every
degraded admission is counted and logged; ordinary admissions are not.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from reference import crash_points
from reference.crash_points import CrashPoint
from reference.office.classifier import GateSubject, Scope, gate_subject
from reference.office.constants import (
    AGENT_ACTOR,
    ASSIGNMENT_ALLOWANCE,
    ASSIGNMENT_WINDOW,
    TASK_ASSIGNED,
)
from reference.office.models import Run
from reference.office.telemetry import OfficeTelemetry, RateLimitReason
from reference.office.wake import Wake

logger = logging.getLogger("reference.office")


class CountReadError(Exception):
    """The allowance count could not be read."""


class CountReadFault:
    """A fault hook: when armed, the next count read fails, once."""

    def __init__(self) -> None:
        self.armed = False

    def trip(self) -> None:
        if self.armed:
            self.armed = False
            raise CountReadError("injected failure of the allowance count read")


_ALLOWANCE_COUNT: Final = (
    select(func.count())
    .select_from(Run)
    .where(
        Run.task_key == bindparam("task_id"),
        Run.reason == TASK_ASSIGNED,
        Run.actor_type == AGENT_ACTOR,
        Run.requested_at > bindparam("window_start"),
        Run.requested_at <= bindparam("window_end"),
    )
)


def allowance_count(task_id: str, now: datetime) -> Select[int]:
    """Agent-initiated assignment runs for the task requested in (now - W, now], any status.

    The statement is built once and only its parameters are filled in per
    decision: building it anew took longer than the database took to answer it.
    """
    return _ALLOWANCE_COUNT.params(
        task_id=task_id, window_start=now - ASSIGNMENT_WINDOW, window_end=now
    )


class AllowanceGate:
    def __init__(self, telemetry: OfficeTelemetry, fault: CountReadFault) -> None:
        self._telemetry = telemetry
        self._fault = fault

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
        """Whether the wake may be inserted; out-of-scope wakes always may."""
        subject = gate_subject(wake.reason, wake.payload)
        if subject.scope is Scope.OUT_OF_SCOPE:
            return True
        if subject.scope is Scope.UNATTRIBUTED:
            self._report_unattributed(subject)
            return True
        try:
            observed = self._read_count(session, subject.task_id, now)
        except (CountReadError, SQLAlchemyError) as error:
            self._report_count_read_failed(wake, subject, error)
            return True
        if observed < ASSIGNMENT_ALLOWANCE:
            crash_points.reached(CrashPoint.GATE_COUNTED)
            return True
        self._report_refusal(wake, subject, observed)
        return False

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        """In a savepoint, so that a failed read leaves the pipeline's transaction usable."""
        with session.begin_nested():
            self._fault.trip()
            return session.scalar(allowance_count(task_id, now)) or 0

    def _report_refusal(self, wake: Wake, subject: GateSubject, observed: int) -> None:
        self._warn(
            RateLimitReason.ALLOWANCE_EXHAUSTED,
            "assignment wake refused: the task's allowance is exhausted",
            **_attribution(wake, subject),
            observed_count=observed,
        )

    def _report_count_read_failed(self, wake: Wake, subject: GateSubject, error: Exception) -> None:
        self._warn(
            RateLimitReason.COUNT_READ_FAILED,
            "assignment wake admitted unchecked: the allowance count could not be read",
            **_attribution(wake, subject),
            error=str(error),
        )

    def _report_unattributed(self, subject: GateSubject) -> None:
        acting = {"acting_agent_id": subject.acting_agent_id} if subject.acting_agent_id else {}
        self._warn(
            RateLimitReason.TASK_UNATTRIBUTED,
            "assignment wake admitted unchecked: its payload names no task",
            **acting,
        )

    def _warn(self, reason: RateLimitReason, message: str, **fields: Any) -> None:
        self._telemetry.rate_limited(reason)
        fields = {"reason": reason.value, **fields, "allowance": ASSIGNMENT_ALLOWANCE}
        logger.warning(message, extra={"fields": fields})


def _attribution(wake: Wake, subject: GateSubject) -> dict[str, str]:
    return {
        "task_id": subject.task_id,
        "assignee_agent_profile_id": wake.agent_id,
        "acting_agent_id": subject.acting_agent_id,
    }
