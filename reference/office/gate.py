"""Stage 3 of the pipeline: the per-task allowance on agent-initiated assignment wakes.

The gate keeps no state: its count is read from the persisted runs each time,
so restarts and deleted rows need no reconciliation. Every refusal and every
degraded admission is counted and logged; ordinary admissions are not.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from conformance.reference import crash_points
from conformance.reference.crash_points import CrashPoint
from conformance.reference.office.allowance_count import AllowanceCounter, CountReadError
from conformance.reference.office.classifier import GateSubject, Scope, gate_subject
from conformance.reference.office.constants import ASSIGNMENT_ALLOWANCE
from conformance.reference.office.telemetry import OfficeTelemetry, RateLimitReason
from conformance.reference.office.wake import Wake

logger = logging.getLogger("reference.office")


class CountReadFault:
    """A fault hook: when armed, the next count read fails, once, whichever thread makes it
    (coordinators standing in for other processes may share one, as they share a store)."""

    def __init__(self) -> None:
        self._armed = False
        self._lock = threading.Lock()

    def arm(self) -> None:
        with self._lock:
            self._armed = True

    def trip(self) -> None:
        with self._lock:
            armed, self._armed = self._armed, False
        if armed:
            raise CountReadError("injected failure of the allowance count read")


class CountUnavailable(Exception):
    """Raised out of the pipeline's transaction when the count could not be read.

    A failed statement can leave the transaction unusable (PostgreSQL aborts
    it), so the gate does not answer there: the pipeline rolls back and runs
    again in a fresh transaction with the gate's `unread_verdict`. Guarding the read with
    a savepoint instead doubled the cost of every decision.
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


GateVerdict = Callable[[Session, Wake, datetime], bool]
"""How the pipeline's third stage judges a wake that the first two let through."""


class AllowanceGate:
    def __init__(self, telemetry: OfficeTelemetry, fault: CountReadFault) -> None:
        self._telemetry = telemetry
        self._fault = fault
        self._counter = AllowanceCounter()

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
        """Whether the wake may be inserted; out-of-scope wakes always may.

        Raises `CountUnavailable` when the count is needed and cannot be read.
        """
        subject = gate_subject(wake.reason, wake.facts)
        if subject.scope is Scope.OUT_OF_SCOPE:
            return True
        if subject.scope is Scope.UNATTRIBUTED:
            self._report_unattributed(subject)
            return True
        try:
            observed = self._read_count(session, subject.task_id, now)
        except (CountReadError, SQLAlchemyError) as error:
            raise CountUnavailable(error) from error
        if not self.refuses(observed):
            crash_points.reached(CrashPoint.GATE_COUNTED)
            return True
        self._report_refusal(wake, subject, observed)
        return False

    def refuses(self, observed: int) -> bool:
        """The rule: the window already holds the whole allowance (or more, after a race)."""
        return observed >= ASSIGNMENT_ALLOWANCE

    def unread_verdict(self, failure: CountUnavailable) -> GateVerdict:
        """The verdict for the pipeline's second pass after `failure`: fail open, said aloud."""

        def admits_unread(session: Session, wake: Wake, now: datetime) -> bool:
            subject = gate_subject(wake.reason, wake.facts)
            self._report_count_read_failed(wake, subject, failure.error)
            return self.admits_unread()

        return admits_unread

    def admits_unread(self) -> bool:
        """The answer when the count cannot be read: admit (fail open)."""
        return True

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        self._fault.trip()
        return self._counter.read(session, task_id, now)

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
