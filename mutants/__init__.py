"""Deliberately broken variants of the reference, each violating one criterion in one realistic way.

A conformance kit is only as strong as the broken implementations it turns
away. Every mutant here names the criterion it breaks, says how in one line,
and is applied as targeted patches on the reference while its driver is open
(see `conformance.adapters.patched`); the reference's files are never edited.

Select one with `conformance run --impl mutant:<name>`; `conformance strength`
runs the suite against all of them and reports which criteria kill which.
"""

from __future__ import annotations

from pathlib import Path

from conformance.adapters.patched import Capability, PatchedDriver, open_patched
from conformance.mutants import (
    false_passes,
    office_count,
    office_decision,
    office_memory,
    office_mutation,
    office_paths,
    office_pipeline,
    office_reporting,
    office_scope,
    workreq_budget,
    workreq_delegation,
    workreq_hostile,
    workreq_lease,
    workreq_listing,
    workreq_races,
    workreq_restart,
)
from conformance.mutants.mutant import Mutant

__all__ = [
    "MUTANTS",
    "NOT_MUTATED",
    "Capability",
    "Mutant",
    "UnknownMutant",
    "driver_on",
    "open_mutant",
    "registry",
]

MUTANTS: dict[str, Mutant] = {
    mutant.name: mutant
    for module in (
        office_scope,
        office_count,
        office_decision,
        office_memory,
        office_pipeline,
        office_mutation,
        office_reporting,
        office_paths,
        workreq_budget,
        workreq_delegation,
        workreq_lease,
        workreq_restart,
        workreq_listing,
        workreq_hostile,
        workreq_races,
        false_passes,
    )
    for mutant in module.MUTANTS
}

NOT_MUTATED: dict[str, str] = {}
"""Criteria with no realistic one-way violation, and why. Every criterion has a mutant today.

AC-OFFICE-ASSIGN-RATE-002.1 is mutated in its serial half only (never refusing
before N are in the window); its other half, a bounded over-admission under
concurrent evaluation, cannot be broken observably by a serial suite.
"""


class UnknownMutant(LookupError):
    """No mutant has that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no mutant named {name!r}; known: {', '.join(sorted(MUTANTS))}")


def registry() -> dict[str, tuple[str, str, str]]:
    """name -> (criterion violated, one-line description, how it is applied)."""
    return {
        name: (mutant.criterion, mutant.description, mutant.how())
        for name, mutant in MUTANTS.items()
    }


def _mutant(name: str) -> Mutant:
    try:
        return MUTANTS[name]
    except KeyError:
        raise UnknownMutant(name) from None


def open_mutant(name: str, database: str | None, scratch: Path) -> PatchedDriver:
    """A driver for the named mutant on an empty store (the in-process adapter's factory)."""
    return open_patched(_mutant(name), database, scratch)


def driver_on(name: str, url: str) -> PatchedDriver:
    """A driver for the named mutant on the store at `url`, as it is (for a served relaunch)."""
    return PatchedDriver(_mutant(name), url)
