"""A property's one run as a record per criterion it names, each judged on its own clauses.

A property check names several criteria; what its checks held and broke is tallied per clause
(the evidence ledger), so each criterion's record holds only its own clauses' tallies, passes
where they held, and is `not_applicable` ("not exercised by this property") where none ran. A
fault, or a failure that cites no clause, fails the run once, named by the property, and is
charged to no criterion.
"""

from __future__ import annotations

from typing import Final

from conformance.properties.catalogue import PropertyCheck, fanned_status
from conformance.spec.evidence import Tally
from conformance.spec.registry import default_registry
from conformance.stream.results import ScenarioResult, Status


def fanned_out(result: ScenarioResult, check: PropertyCheck) -> list[ScenarioResult]:
    """A property's one run as a record per criterion it names (see `fanned_status`)."""
    records = []
    for criterion in check.criteria:
        status = fanned_status(result.status, result.violated, criterion, result.checks)
        unexercised = status is Status.NOT_APPLICABLE
        verified_past = status is Status.PASSED and result.status is not status
        ended = ended_unjudged(result)
        records.append(
            result.model_copy(
                update={
                    "key": check.key(criterion),
                    "criterion": criterion,
                    "title": f"{check.title} [{criterion}]",
                    "example": {"criterion": criterion},
                    "status": status,
                    "ended": result.status if ended else None,
                    "evidence": (
                        "\n\n".join(
                            filter(None, (_not_exercised(result, criterion), result.evidence))
                        )
                        if unexercised
                        else _verified_past(result)
                        if verified_past
                        else result.evidence
                    ),
                    "failure": result.failure if ended or status is result.status else None,
                    "checks": _own_checks(result.checks, criterion),
                }
            )
        )
    return records


FAULTS: Final = frozenset({Status.ERRORED, Status.TIMEOUT, Status.UNDEFINED})


def ended_unjudged(result: ScenarioResult) -> bool:
    """Whether a property ended in what no check judged: a fault, or a failure that cites no
    clause (an error the implementation answered where the search needed an answer). The run
    fails on it once, named by the property, and no criterion is blamed for it."""
    return result.status in FAULTS or (result.status is Status.FAILED and not result.violated)


def _own_checks(checks: dict[str, Tally], criterion: str) -> dict[str, Tally]:
    """A property's tallies as one criterion's record holds them: its clauses', and those of
    the readings registered under it (so a run's evidence is each tally once)."""
    registry = default_registry()
    return {
        cite: tally
        for cite, tally in checks.items()
        if criterion in registry.criteria_of_readings([cite])
    }


def _not_exercised(result: ScenarioResult, criterion: str) -> str:
    """Why a property's record of `criterion` verified nothing: no check of its clauses ran."""
    if ended_unjudged(result):
        return (
            f"not exercised by this property: it {result.status.value} before any check of "
            f"{criterion}'s clauses held (the fault fails the run once, not this criterion)"
        )
    if result.violated:
        broken = ", ".join(result.violated)
        return (
            f"not exercised by this property: no check of {criterion}'s clauses held before it "
            f"stopped at a counterexample against {broken}"
        )
    return (
        f"not exercised by this property: none of its schedules reached a check of "
        f"{criterion}'s clauses (a capability or hook it needs may be missing)"
    )


def _verified_past(result: ScenarioResult) -> str:
    """A property record of a criterion whose checks held while the property as a whole did
    not pass: those checks are its evidence."""
    said = ", ".join(result.followed or result.violated) or result.status.value
    return (
        f"checks of this criterion's clauses held; the property as a whole ended otherwise "
        f"({said}), which its own criteria's records show"
    )
