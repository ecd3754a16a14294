"""What an Office scenario has done and seen, and which clause each kind of check enforces.

The `office` fixture holds one `OfficeScene` per scenario. Every action step
first takes an `Observation` (runs, telemetry, warnings, mutation effects), so
"by that wake" always means what the last action changed, and the scene's
first observation is what "in this scenario" is measured from: no bookkeeping
step in the Gherkin. Each wake the scenario makes is kept with its `Shape`
(in scope, unattributed, out of scope...), which decides the clause an
outcome or counter check cites (`OUTCOME_CLAUSES`, `QUIET_CLAUSES`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import pytest

from conformance.adapters.faults import harness_doing
from conformance.applicability import require
from conformance.driver import (
    Capability,
    Driver,
    MutationEffects,
    OfficeConstants,
    OfficeVocabulary,
    Outcome,
    Run,
    WakeResult,
    WarningLog,
)
from conformance.oracle.office_shapes import (
    ADMITTED_CLAUSES,
    FAIL_OPEN_CLAUSES,
    OUTCOME_CLAUSES,
    QUIET_CLAUSES,
    REFUSAL_MISREPORTED,
    SUPPRESSED_QUIET,
    Shape,
)
from conformance.oracle.office_telemetry import Telemetry
from conformance.oracle.stored_runs import counted_toward
from conformance.spec.clause_check import (
    port_value,
    scenario_requires,
    scenario_value,
)
from conformance.steps.common import BEFORE_RESTART, BEFORE_THEN

T = TypeVar("T")

OBSERVING = (
    "reading the runs, counters, warnings and mutation effects it notes at the start and before "
    "each action (its own read, not the step's action)"
)


@dataclass(frozen=True)
class Wake:
    """One wake (or no-wake) the scenario caused, as the implementation answered it."""

    result: WakeResult | None
    shape: Shape
    fault_armed: bool = False
    """Whether a count-read failure was armed when this in-scope wake was evaluated."""
    after_restart: bool = False
    """Whether the implementation restarted earlier in the scenario: then its allowance
    decision is also what 002.4/restart says a restart leaves."""
    among_other_tasks: bool = False
    """Whether rows counting toward other tasks were stored when it came: then its decision
    also rests on each task having an allowance of its own (001.3), as the model's does."""

    @property
    def outcome(self) -> str:
        return "no wake" if self.result is None else self.result.outcome.value


def outcome_cites(wake: Wake, expected: Iterable[str]) -> tuple[str, ...]:
    """The clauses a check that `wake` ended as one of `expected` enforces."""
    agent = wake.shape is Shape.AGENT
    cites: list[str] = (
        ["AC-OFFICE-ASSIGN-RATE-002.4/restart"] if wake.after_restart and agent else []
    )
    wanted = tuple(expected)
    counted = {Outcome.QUEUED.value, Outcome.RATE_LIMITED.value} & set(wanted)
    cites += (
        ["AC-OFFICE-ASSIGN-RATE-001.3/per-task"]
        if wake.among_other_tasks and agent and counted
        else []
    )
    for outcome in wanted:
        if outcome == Outcome.QUEUED.value:
            cites += FAIL_OPEN_CLAUSES if wake.fault_armed else cites_for(ADMITTED_CLAUSES, wake)
        elif outcome == Outcome.RATE_LIMITED.value and wake.outcome in REFUSAL_MISREPORTED:
            cites += REFUSAL_MISREPORTED[wake.outcome]
        else:
            cites += OUTCOME_CLAUSES[outcome]
    return tuple(dict.fromkeys(cites))


def quiet_cites(wakes: Iterable[Wake], *, counted_unattributed: bool = False) -> tuple[str, ...]:
    """The clauses a check that these wakes moved no rate-limit counter enforces; where what
    moved is the unattributed count, an agent wake naming its task was taken for one whose task
    cannot be told, which misreads the shapes that make a task so (002.3) as well."""
    cites: list[str] = []
    for wake in wakes:
        suppressed = wake.outcome in (Outcome.COALESCED.value, Outcome.DEDUPLICATED.value)
        cites += SUPPRESSED_QUIET if suppressed else cites_for(QUIET_CLAUSES, wake)
        if counted_unattributed and wake.shape is Shape.AGENT and not suppressed:
            cites.append("AC-OFFICE-ASSIGN-RATE-002.3/shapes")
    return tuple(dict.fromkeys(cites)) or QUIET_CLAUSES[Shape.AGENT]


def cites_for(table: dict[Shape, tuple[str, ...]], wake: Wake) -> tuple[str, ...]:
    """The clauses a table gives a wake's shape; a shape it has none for is the kit's defect
    (the scenario asks something of that wake no clause requires)."""
    return scenario_value(table.get(wake.shape), f"no clause covers this check for a {wake.shape}")


def describe_runs(runs: list[Run]) -> str:
    return (
        "\n".join(
            f"  {run.run_id} agent={run.agent_id} at={run.requested_at.isoformat()} "
            f"status={run.status} merged={run.coalesced_count} key={run.dedup_key} {run.payload}"
            for run in runs
        )
        or "  (no runs)"
    )


# --------------------------------------------------------------------------
# The scene
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """What the implementation showed at one moment: the baseline of the action after it."""

    runs: list[Run]
    telemetry: Telemetry
    warnings: int
    effects: MutationEffects


@dataclass
class OfficeScene:
    driver: Driver
    constants: OfficeConstants
    at_start: Observation | None = None
    before_action: Observation | None = None
    wakes: list[Wake] = field(default_factory=list)
    history: list[Wake] = field(default_factory=list)
    """Every wake of the scenario, in order: what a step judging them together reads."""
    last_delivery: tuple[str, str, str, str | None] | None = None
    fault_armed: bool = False
    generations: dict[str, int] = field(default_factory=dict)
    generation_before_action: dict[str, int] = field(default_factory=dict)
    series_generations: list[tuple[str, int]] = field(default_factory=list)
    checked_warnings: list[WarningLog] = field(default_factory=list)
    producer_wakes: dict[str, Wake] = field(default_factory=dict)
    workspace_id: str = ""
    identifiers: set[str] = field(default_factory=set)
    pending: list[Callable[[], None]] = field(default_factory=list)
    """Checks of what an action answered, left for the next Then step to make."""
    restarted: bool = False
    crashed: bool = False
    """Whether the implementation was killed and not yet restarted: nothing can be read."""
    runs_before_restart: list[Run] | None = None
    """The runs as the last restart found them; None after a crash, when none could be read."""
    runs_before_deletion: tuple[list[Run], str] | None = None
    """The runs as the last deletion found them, and the id it deleted."""
    allowance: int | None = None
    """N, as the feature's Background states the spec's allowance (`count` reads it)."""

    def count(self, written: str) -> int:
        """A count or position as a step writes it: `6`, or one in N (`N`, `N + 1`, `2N`)."""
        match = scenario_value(re.fullmatch(_COUNT_PARTS, written), f"not a count: {written!r}")
        if match["literal"] is not None:
            return int(match["literal"])
        n = scenario_value(self.allowance, f"{written!r} counts in N, which no Background states")
        by = int(match["by"] or 0)
        return int(match["times"] or 1) * n + (by if match["sign"] == "+" else -by)

    def cell(self, written: str) -> str:
        """A table cell as a field must read: a count in N worked out (`N` is `5`)."""
        in_n = "N" in written and re.fullmatch(COUNT, written)
        return str(self.count(written)) if in_n else written

    def note_restart(self) -> None:
        self.restarted = True
        if self.crashed:
            self.crashed, self.runs_before_restart = False, None
            return
        with harness_doing(OBSERVING):
            self.runs_before_restart = self.driver.list_runs()

    def settle(self) -> None:
        """Make the checks the actions since the last Then step left pending."""
        pending, self.pending = self.pending, []
        for check in pending:
            check()

    @property
    def vocabulary(self) -> OfficeVocabulary:
        return self.constants.vocabulary

    def telemetry(self) -> Telemetry:
        return Telemetry(self.driver.telemetry(), self.vocabulary)

    def observe(self) -> Observation:
        """The harness's own note of what the implementation shows (a fault in it is said to be
        the harness's read, not the step's action)."""
        with harness_doing(OBSERVING):
            return Observation(
                runs=self.driver.list_runs(),
                telemetry=self.telemetry(),
                warnings=len(self.driver.warning_logs()),
                effects=self.driver.mutation_effects(),
            )

    def act(self, action: Callable[[], list[Wake]]) -> None:
        """One action step: note what the implementation shows, then act; its wakes are the
        ones later steps speak of."""
        self.before_action = self.observe()
        self.runs_before_restart = self.runs_before_deletion = None  # compared right after only
        self.generation_before_action = dict(self.generations)
        self.series_generations = []
        self.wakes = action()
        self.history += self.wakes

    def baseline(self, since: str) -> Observation:
        """`by that wake` / `by those wakes` / `by that assignment`, or `in this scenario`."""
        observed = self.at_start if since == "in this scenario" else self.before_action
        return scenario_value(observed, "no action has been taken yet in this scenario")

    def warnings_since_action(self) -> list[WarningLog]:
        return self.driver.warning_logs()[self.baseline("by that wake").warnings :]

    def last_wake(self) -> Wake:
        scenario_requires(bool(self.wakes), "no wake has been produced yet in this scenario")
        return self.wakes[-1]

    def evaluate(self, shape: Shape, result: WakeResult | None, task_id: object = None) -> Wake:
        """The wake record of an answer for `task_id`; an in-scope attributed wake spends an
        armed fault."""
        armed = self.fault_armed and shape is Shape.AGENT
        if armed:
            self.fault_armed = False
        stored = self.before_action.runs if self.before_action else []
        others = any(counted_toward(run) not in (None, task_id) for run in stored)
        return Wake(result, shape, armed, self.restarted, others)


@pytest.fixture
def office(driver: Driver, request: pytest.FixtureRequest) -> OfficeScene:
    require(driver, Capability.OFFICE)
    constants = port_value(
        driver.describe().office,
        "the implementation declares office but reports no Office constants",
    )
    scene = OfficeScene(driver=driver, constants=constants)
    scene.at_start = scene.observe()
    request.node.stash.setdefault(BEFORE_THEN, []).append(scene.settle)
    request.node.stash.setdefault(BEFORE_RESTART, []).append(scene.note_restart)
    return scene


# --------------------------------------------------------------------------
# Phrases
# --------------------------------------------------------------------------

_COUNT_PARTS = r"(?P<literal>\d+)|(?P<times>\d*)N(?: (?P<sign>[+-]) (?P<by>\d+))?"
COUNT = r"(?:\d+|\d*N(?: [+-] \d+)?)"
"""A count or a position in a series: `6`, or one in the allowance N that the Background
states (`N`, `N - 1`, `N + 1`, `2N + 1`), so that N is written once per feature."""

SINCE = r"(?P<since>by that wake|by those wakes|by that assignment|in this scenario)"
