"""What each property checks, and how its verdict enters the results.

A property checks clauses of several criteria at once, so it enters the
results as one record per criterion it names (keyed `<module>::<title>[<criterion>]`): each
record holds the evidence of that criterion's clauses, passes where a check of them held and
none broke, and is not applicable where none ran; a counterexample fails the criteria whose
clauses it broke (or diverges on those its readings are registered under), never the others
(see `fanned_status`).

The catalogue is static, so that reading a stream (which checks the records against the
inventory) never imports Hypothesis or the property modules.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from conformance.properties import (
    MODEL_MODULES,
    MODULE_TITLES,
    OFFICE_EFFECTS_MODULE,
    OFFICE_MODULE,
    PROPERTIES_DIR,
    WORK_REQUEST_MODULE,
)
from conformance.spec.evidence import Tally
from conformance.spec.registry import INTERPRETATION_ID, default_registry
from conformance.spec.scenario_keys import ScenarioEntry, scenario_key
from conformance.stream.results import Status

INTERPRETATION: Final = re.compile(r"\b(?:WR|OF)-\d+\b")
RECORD_PREFIX: Final = "properties/"
"""Property records' `feature`: `properties/<module file>`, beside the feature files' names."""


WORK_REQUEST_SEARCHES: Final = 4
"""The work-request machine's examples are spread over this many searches, each from a seed of
its own (see `search_seed`), each a check of its own in the inventory. One search is a single
Hypothesis run that one process makes whole: at `thorough` the machine's was 87 % of a run, so
`--jobs` and `--shard` could not spread it. Four searches of a quarter of the examples each go
to four workers (or parts), and look as hard as one (Hypothesis' search is random generation
and mutation of what it generated, which four seeds do as one does). A defect the machine
finds is usually found, and shrunk, by each search that meets it."""


@dataclass(frozen=True)
class PropertyCheck:
    module: str
    """The module's file name in this package."""
    function: str
    title: str
    criteria: tuple[str, ...]
    search: int | None = None
    """Which of its test's searches this check is (from 1; see WORK_REQUEST_SEARCHES), the
    parameter `search` of the test; None for a test that is one search."""
    weight: float = 1.0
    """How long its search takes beside the others' (a rolling-window check's is 1; measured
    at `thorough`, docs/bench.md): a `--jobs` worker starts the heaviest first."""

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


def search_seed(seed: int, search: int) -> int:
    """The seed search number `search` of a split check draws from: derived from the run's, so
    that `--seed` repeats every search, and different for each (the run's own seed for the
    first, so a one-search reading of a seed is the first search's)."""
    if search == 1:
        return seed
    digest = hashlib.sha256(f"{seed}/{search}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def examples_of_a_search(examples: int, searches: int) -> int:
    """A split check's examples per search: its share of the budget's, rounded up, so that the
    check as a whole costs what one search of the budget's examples did."""
    return -(-examples // searches)


def _searches(
    module: str, function: str, title: str, criteria: tuple[str, ...], count: int, weight: float
) -> tuple[PropertyCheck, ...]:
    return tuple(
        PropertyCheck(module, function, f"{title} (search {n} of {count})", criteria, n, weight)
        for n in range(1, count + 1)
    )


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
        weight=2,
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
        weight=2,
    ),
    *_searches(
        WORK_REQUEST_MODULE,
        "test_work_request_machine",
        "every program of delegations, claims, heartbeats and publishes keeps the model",
        tuple(f"AC-ARMONIA-WORKREQ-001.{number}" for number in range(1, 14)),
        WORK_REQUEST_SEARCHES,
        weight=2.4,
    ),
)


def property_check(module: str, function: str, search: int | None = None) -> PropertyCheck | None:
    """The catalogued property a collected test is (with its `search` parameter, if any); None
    for anything else."""
    wanted = (module, function, search)
    return next((p for p in PROPERTIES if (p.module, p.function, p.search) == wanted), None)


def search_of_item(item: object) -> int | None:
    """A collected test's `search` parameter (a split check's number), None where it has none."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    search = params.get("search")
    return search if isinstance(search, int) else None


def check_of_item(item: Any) -> PropertyCheck | None:
    """The catalogued property a collected pytest item is; None for anything else."""
    function = getattr(item, "originalname", item.name)
    return property_check(item.path.name, function, search_of_item(item))


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
    status: Status, violated: list[str], criterion: str, checks: Mapping[str, Tally]
) -> Status:
    """A property's verdict as one of its criteria's records, from what its checks judged.

    A counterexample fails (or, citing readings only, diverges on) the criteria its check
    rests on: a clause's own criterion, and the criteria a reading is registered under, never
    every criterion the property names. Any other criterion passes where a check of one of its
    clauses held and none broke, and is not applicable where no check of its clauses ran (the
    property exercised nothing of it: a hook it needs is missing, or no schedule reached it).
    A fault of the search (errored, timeout), or a failure that cites no clause (an error the
    implementation answered), is no check's verdict: it fails the run once
    (`ScenarioResult.ended`), and each record says what the checks made before it showed.
    """
    registry = default_registry()
    clauses = [cite for cite in violated if not INTERPRETATION_ID.fullmatch(cite)]
    readings = [cite for cite in violated if INTERPRETATION_ID.fullmatch(cite)]
    if status is Status.FAILED and criterion in registry.criteria_of_readings(clauses or readings):
        return status
    judged = [
        checks[q]
        for q in readings
        if q in checks and criterion in registry.interpretation(q).criteria
    ]
    if any(tally.broken for tally in judged):
        return Status.FAILED
    if any(tally.diverged for tally in judged):
        return Status.DIVERGED
    exercised = any(
        tally.held and cite.split("/")[0] == criterion
        for cite, tally in checks.items()
        if not INTERPRETATION_ID.fullmatch(cite)
    )
    return Status.PASSED if exercised else Status.NOT_APPLICABLE
