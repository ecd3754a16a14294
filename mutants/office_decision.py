"""Mutants of the allowance gate's decision: how the observed count becomes admit or refuse.

`RuleGate` is the reference gate's flow with its two decision points made
overridable (the refusal rule and the answer when the count cannot be read);
each mutant changes exactly one of them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from mutants.patching import Capability, Mutant, Patch
from reference import crash_points
from reference.crash_points import CrashPoint
from reference.office import service as office_service
from reference.office.classifier import Scope, gate_subject
from reference.office.constants import ASSIGNMENT_ALLOWANCE
from reference.office.gate import AllowanceGate, CountReadError
from reference.office.wake import Wake


class RuleGate(AllowanceGate):
    """The reference gate, with its refusal rule and its fail-open answer as hooks."""

    admits_unread = True

    def refuses(self, observed: int) -> bool:
        return observed >= ASSIGNMENT_ALLOWANCE

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
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
            return self.admits_unread
        if not self.refuses(observed):
            crash_points.reached(CrashPoint.GATE_COUNTED)
            return True
        self._report_refusal(wake, subject, observed)
        return False


class OffByOneGate(RuleGate):
    """Refuses only once the count exceeds the allowance: N + 1 wakes get through."""

    def refuses(self, observed: int) -> bool:
        return observed > ASSIGNMENT_ALLOWANCE


class SafetyMarginGate(RuleGate):
    """Refuses one early "to leave room for concurrent evaluations"."""

    def refuses(self, observed: int) -> bool:
        return observed >= ASSIGNMENT_ALLOWANCE - 1


class ExactAllowanceGate(RuleGate):
    """Refuses only when the count equals the allowance, so an over-full window admits again."""

    def refuses(self, observed: int) -> bool:
        return observed == ASSIGNMENT_ALLOWANCE


class FailClosedGate(RuleGate):
    """Refuses the wake when the count cannot be read (still counting and logging it)."""

    admits_unread = False


def _gate(replacement: type[AllowanceGate]) -> Patch:
    return Patch(office_service, "AllowanceGate", replacement)


MUTANTS = [
    Mutant(
        "allowance_off_by_one",
        "AC-OFFICE-ASSIGN-RATE-001.2",
        Capability.OFFICE,
        "refuses when the count is greater than N instead of at least N, admitting N + 1",
        lambda: [_gate(OffByOneGate)],
    ),
    Mutant(
        "refuses_before_allowance",
        "AC-OFFICE-ASSIGN-RATE-002.1",
        Capability.OFFICE,
        "keeps a safety margin for races and refuses once N - 1 wakes are in the window",
        lambda: [_gate(SafetyMarginGate)],
    ),
    Mutant(
        "refuses_only_at_exact_allowance",
        "AC-OFFICE-ASSIGN-RATE-002.1",
        Capability.OFFICE,
        "tests count == N, so a window holding more than N (after a race) admits again",
        lambda: [_gate(ExactAllowanceGate)],
    ),
    Mutant(
        "count_read_fails_closed",
        "AC-OFFICE-ASSIGN-RATE-002.2",
        Capability.OFFICE,
        "refuses the wake when the count read fails, instead of failing open",
        lambda: [_gate(FailClosedGate)],
    ),
]
