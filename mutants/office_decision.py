"""Mutants of the allowance gate's decision: how the observed count becomes admit or refuse.

Each overrides one of the reference gate's two decision points: the refusal
rule (`refuses`) or the answer when the count cannot be read (`admits_unread`).
"""

from __future__ import annotations

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.office import service as office_service
from conformance.reference.office.constants import ASSIGNMENT_ALLOWANCE
from conformance.reference.office.gate import AllowanceGate


class OffByOneGate(AllowanceGate):
    """Refuses only once the count exceeds the allowance: N + 1 wakes get through."""

    def refuses(self, observed: int) -> bool:
        return observed > ASSIGNMENT_ALLOWANCE


class SafetyMarginGate(AllowanceGate):
    """Refuses one early "to leave room for concurrent evaluations"."""

    def refuses(self, observed: int) -> bool:
        return observed >= ASSIGNMENT_ALLOWANCE - 1


class ExactAllowanceGate(AllowanceGate):
    """Refuses only when the count equals the allowance, so an over-full window admits again."""

    def refuses(self, observed: int) -> bool:
        return observed == ASSIGNMENT_ALLOWANCE


class FailClosedGate(AllowanceGate):
    """Refuses the wake when the count cannot be read (still counting and logging it)."""

    def admits_unread(self) -> bool:
        return False


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
