"""What each property checks, and how its verdict enters the results.

A property checks clauses of several criteria at once, so it enters the
results as one record per criterion it names (keyed `<module>::<title>[<criterion>]`): a
pass verifies every one of them; a counterexample fails the criteria whose clauses it broke
(or diverges on those its readings are registered under), and leaves the others unverified
by it, unless it followed the divergence to the end (see `fanned_status`).

The catalogue is static, so that reading a stream (which checks the records against the
inventory) never imports Hypothesis or the property modules.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from typing import Final

from conformance.properties import (
    MODEL_MODULES,
    MODULE_TITLES,
    OFFICE_EFFECTS_MODULE,
    OFFICE_MODULE,
    PROPERTIES_DIR,
    WORK_REQUEST_MODULE,
)
from conformance.spec.registry import default_registry
from conformance.spec.scenario_keys import ScenarioEntry, scenario_key
from conformance.stream.results import Status

INTERPRETATION: Final = re.compile(r"\b(?:WR|OF)-\d+\b")
RECORD_PREFIX: Final = "properties/"
"""Property records' `feature`: `properties/<module file>`, beside the feature files' names."""


@dataclass(frozen=True)
class PropertyCheck:
    module: str
    """The module's file name in this package."""
    function: str
    title: str
    criteria: tuple[str, ...]

    @property
    def feature_file(self) -> str:
        return RECORD_PREFIX + self.module

    def key(self, criterion: str) -> str:
        return scenario_key(self.feature_file, self.title, criterion)

    def interpretations(self) -> list[str]:
        """The registered readings the property's module cites (with the modules holding its
        model, see MODEL_MODULES): a counterexample breaking only those is a divergence, as for
        a scenario tagged with them."""
        modules = (self.module, *MODEL_MODULES.get(self.module, ()))
        return sorted({cite for m in modules for cite in INTERPRETATION.findall(_source(m))})

    def line(self) -> int:
        """The line of the test function, read from the module without importing it."""
        return _function_lines(self.module)[self.function]


@cache
def _source(module: str) -> str:
    return (PROPERTIES_DIR / module).read_text(encoding="utf-8")


@cache
def _function_lines(module: str) -> dict[str, int]:
    """Each top-level function of the module by name, with its line: parsed once per module."""
    tree = ast.parse(_source(module))
    return {node.name: node.lineno for node in tree.body if isinstance(node, ast.FunctionDef)}


def _office(*numbers: str) -> tuple[str, ...]:
    return tuple(f"AC-OFFICE-ASSIGN-RATE-{number}" for number in numbers)


PERFORMING: Final = ("001.1", "001.6", "003.5")
"""What every office property checks of each wake it performs (see `perform`)."""

EFFECTS: Final = (
    *("001.1", "001.2", "001.3", "001.4", "001.5", "001.6", "001.7", "001.8", "001.9", "001.11"),
    *("001.12", "001.13"),
    *("002.1", "002.2", "002.3", "002.4", "003.1", "003.2", "003.3", "003.4", "003.5"),
)
"""The criteria whose clauses the office effects model checks wherever their paths arise."""

PROPERTIES: Final = (
    PropertyCheck(
        OFFICE_MODULE,
        "test_admission_decisions_match_the_rolling_window",
        "every admission decision is the rolling window's",
        _office(*PERFORMING, "001.2", "001.4", "001.11", "002.1"),
    ),
    PropertyCheck(
        OFFICE_MODULE,
        "test_same_instant_wakes_are_decided_independently_of_their_order",
        "same-instant wakes admit as many whatever their order",
        _office(*PERFORMING, "001.2", "001.10", "002.1"),
    ),
    PropertyCheck(
        OFFICE_MODULE,
        "test_no_window_ever_holds_more_than_the_allowance",
        "no stored window holds more than the allowance",
        _office(*PERFORMING, "001.2", "001.11", "002.1", "002.4"),
    ),
    PropertyCheck(
        OFFICE_EFFECTS_MODULE,
        "test_every_operation_shows_what_the_model_says",
        "every operation's outcome, rows, counters, warnings and labels are the model's",
        _office(*EFFECTS),
    ),
    PropertyCheck(
        WORK_REQUEST_MODULE,
        "test_work_request_machine",
        "every program of delegations, claims, heartbeats and publishes keeps the model",
        tuple(f"AC-ARMONIA-WORKREQ-001.{number}" for number in range(1, 14)),
    ),
)


def property_check(module: str, function: str) -> PropertyCheck | None:
    """The catalogued property a collected test is; None for anything else."""
    return next((p for p in PROPERTIES if (p.module, p.function) == (module, function)), None)


def property_entries() -> list[ScenarioEntry]:
    """One inventory entry per property and criterion it names."""
    return [
        ScenarioEntry(
            key=check.key(criterion),
            feature_file=check.feature_file,
            feature=MODULE_TITLES[check.module],
            name=check.title,
            line=check.line(),
            tags=(criterion,),
            example=criterion,
        )
        for check in PROPERTIES
        for criterion in check.criteria
    ]


def fanned_status(
    status: Status,
    violated: list[str],
    criterion: str,
    named: tuple[str, ...],
    *,
    followed: bool = False,
) -> Status:
    """A property's verdict as one of its criteria's records.

    A counterexample fails (or, citing readings only, diverges on) the criteria its check
    rests on: a clause's own criterion, and the criteria a reading is registered under, never
    every criterion the property names. The others it did not get to verify, so their record
    is not applicable (their own scenarios decide), except after a divergence the property
    followed to the end: then it verified them, and they pass. A failure citing none of them,
    or an error, counts against every one.
    """
    if status not in (Status.FAILED, Status.DIVERGED):
        return status
    implicated = default_registry().criteria_of_readings(violated) & set(named)
    if not implicated or criterion in implicated:
        return status
    return Status.PASSED if followed else Status.NOT_APPLICABLE
