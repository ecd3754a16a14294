"""The operator telemetry surface, read under the names an implementation declares, and the
clauses the rate-limit counter and the warning logs answer to.

Shared by the Gherkin's Then steps and the office effects model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from conformance.driver import OfficeVocabulary, RateLimitReason, WarningLog
from conformance.spec.clause_check import PortViolation, expect

MOVE_CLAUSES: dict[RateLimitReason, tuple[str, ...]] = {
    RateLimitReason.ALLOWANCE_EXHAUSTED: ("AC-OFFICE-ASSIGN-RATE-003.1/counted-by-reason",),
    RateLimitReason.COUNT_READ_FAILED: (
        "AC-OFFICE-ASSIGN-RATE-003.1/counted-by-reason",
        "AC-OFFICE-ASSIGN-RATE-002.2/counted",
    ),
    RateLimitReason.TASK_UNATTRIBUTED: (
        "AC-OFFICE-ASSIGN-RATE-003.1/counted-by-reason",
        "AC-OFFICE-ASSIGN-RATE-002.3/admitted-unattributed",
    ),
}
"""The clauses that make each reason's counter move."""

LOGGED_CLAUSES = {
    "refusal": "AC-OFFICE-ASSIGN-RATE-003.3/refusal-logged",
    "degraded admission": "AC-OFFICE-ASSIGN-RATE-002.2/logged",
    "unattributed admission": "AC-OFFICE-ASSIGN-RATE-002.3/logged",
}
FORBIDDEN_FIELD_CLAUSES = {
    "observed_count": "AC-OFFICE-ASSIGN-RATE-002.2/no-observed-count",
    "task_id": "AC-OFFICE-ASSIGN-RATE-002.3/no-task-id",
}
REQUIRED_FIELD_CLAUSES = {"error": "AC-OFFICE-ASSIGN-RATE-002.2/logged"}
EMPTY_AS_ABSENT = "OF-8"
"""Whether a field present with an empty value is left out: an open question (see
`without_field`)."""


def without_field(warnings: list[WarningLog], name: str, what: str) -> list[WarningLog]:
    """The warnings that leave `name` out, as the clause forbidding it asks. Where none does but
    one carries it empty (null or ""), whether that is leaving it out is OF-8's question, not a
    silent failure: that warning is kept, and the check of the reading says which."""
    kept = [warning for warning in warnings if name not in warning.fields]
    emptied = [w for w in warnings if name in w.fields and w.fields[name] in (None, "")]
    shown = [warning.fields for warning in warnings]
    if kept or not emptied:
        expect(
            bool(kept), FORBIDDEN_FIELD_CLAUSES[name], f"{what} must not carry {name!r}: {shown}"
        )
        return kept
    expect(
        False,
        EMPTY_AS_ABSENT,
        f"{what} carries {name!r} with an empty value: {shown}",
        observed="empty-field",
    )
    return emptied


# --------------------------------------------------------------------------
# Telemetry, read under the names the implementation declares
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


def read_samples(text: str) -> list[Sample]:
    """Every sample of the Prometheus text exposition; text that does not parse breaks the port."""
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as error:
        raise PortViolation(f"the telemetry surface is not Prometheus text: {error}") from None
    return [
        Sample(sample.name, dict(sample.labels), sample.value)
        for family in families
        for sample in family.samples
    ]


@dataclass(frozen=True)
class Telemetry:
    """One reading of the telemetry surface, seen through the declared vocabulary."""

    text: str
    vocabulary: OfficeVocabulary

    @property
    def samples(self) -> list[Sample]:
        return read_samples(self.text)

    def rate_limit_samples(self) -> list[Sample]:
        return [s for s in self.samples if s.name == self.vocabulary.rate_limit_counter]

    def series_of(self, label: str) -> dict[frozenset[tuple[str, str]], float]:
        """Each series of the rate-limit counter with that reason value, by its whole label set."""
        return {
            frozenset(sample.labels.items()): sample.value
            for sample in self.rate_limit_samples()
            if sample.labels.get(self.vocabulary.reason_label) == label
        }

    def by_reason(self) -> dict[str, float]:
        """The rate-limit counter summed per reason label value (any other labels summed over)."""
        totals: dict[str, float] = {}
        for sample in self.rate_limit_samples():
            value = sample.labels.get(self.vocabulary.reason_label, "")
            totals[value] = totals.get(value, 0.0) + sample.value
        return totals

    def dedup_total(self) -> float:
        names = set(self.vocabulary.dedup_counters)
        return sum(s.value for s in self.samples if s.name in names)

    def label_of(self, reason: RateLimitReason) -> str:
        return self.vocabulary.reasons.of(reason)


def moves_between(before: Telemetry, after: Telemetry) -> dict[str, float]:
    """The rate-limit counter's non-zero changes, per reason label value."""
    old, new = before.by_reason(), after.by_reason()
    moved = {key: new.get(key, 0.0) - old.get(key, 0.0) for key in {*old, *new}}
    return {key: delta for key, delta in moved.items() if delta != 0}


def holds_identifier(value: str, identifier: str) -> bool:
    """Whether `identifier` appears in `value` as a whole token (so run "2" is not in "200")."""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(identifier)}(?![A-Za-z0-9])", value) is not None


def count_within(value: object, expected: int, tolerance: int) -> bool:
    """Whether a logged count reads `expected`, give or take `tolerance` (merges may relabel)."""
    return count_in_range(value, expected - tolerance, expected + tolerance)


def count_in_range(value: object, low: int, high: int) -> bool:
    """Whether a logged count, as logged (any type), is a whole number from `low` to `high`."""
    try:
        number = int(str(value))
    except ValueError:
        return False
    return low <= number <= high
