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

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conformance.driver import (
    Capability,
    Driver,
    MutationEffects,
    OfficeConstants,
    OfficeVocabulary,
    Outcome,
    RateLimitReason,
    Run,
    WakeResult,
    WarningLog,
)
from conformance.running.pytest_plugin import require
from conformance.spec.clause_check import (
    PortViolation,
    port_value,
    scenario_requires,
    scenario_value,
)
from steps.common import BEFORE_THEN

T = TypeVar("T")

TASK_ASSIGNED = "task_assigned"
AGENT = "agent"


class Shape(Enum):
    """How the allowance must treat a wake, read from its reason and payload the way the spec
    reads them (never from the implementation's answer)."""

    AGENT = "an agent assignment wake (in scope)"
    UNATTRIBUTED = "an agent wake whose task cannot be told (in scope, unattributed)"
    USER = "a user's or internal caller's wake (out of scope)"
    PRODUCER = "a wake of a producer that carries no actor (out of scope)"
    OTHER = "a wake without actor type agent or of another reason (out of scope)"
    UNPARSEABLE = "a wake whose payload is not a JSON object (out of scope by OF-4)"
    UNASSIGNMENT = "an unassignment, which makes no wake"


@dataclass(frozen=True)
class Wake:
    """One wake (or no-wake) the scenario caused, as the implementation answered it."""

    result: WakeResult | None
    shape: Shape
    fault_armed: bool = False
    """Whether a count-read failure was armed when this in-scope wake was evaluated."""

    @property
    def outcome(self) -> str:
        return "no wake" if self.result is None else self.result.outcome.value


# --------------------------------------------------------------------------
# Which clause a check enforces, by the shape of the wake it is about
# --------------------------------------------------------------------------

ADMITTED_CLAUSES: dict[Shape, tuple[str, ...]] = {
    Shape.AGENT: (
        "AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early",
        "AC-OFFICE-ASSIGN-RATE-001.5/before-insert",
    ),
    Shape.UNATTRIBUTED: ("AC-OFFICE-ASSIGN-RATE-002.3/admitted-unattributed",),
    Shape.USER: ("AC-OFFICE-ASSIGN-RATE-001.1/internal-caller-is-user",),
    Shape.PRODUCER: ("AC-OFFICE-ASSIGN-RATE-001.12/actorless-out-of-scope",),
    Shape.OTHER: ("AC-OFFICE-ASSIGN-RATE-001.1/others-admitted",),
    Shape.UNPARSEABLE: ("OF-4",),
}
"""Why a wake of each shape must be admitted (when the scenario expects it to be)."""

OUTCOME_CLAUSES: dict[str, tuple[str, ...]] = {
    Outcome.RATE_LIMITED.value: ("AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",),
    Outcome.COALESCED.value: ("AC-OFFICE-ASSIGN-RATE-001.5/after-coalescing",),
    Outcome.DEDUPLICATED.value: ("AC-OFFICE-ASSIGN-RATE-001.5/after-dedup",),
    "no wake": ("AC-OFFICE-ASSIGN-RATE-001.9/no-wake",),
}
"""Why a wake must end as each outcome other than admitted."""

REFUSAL_MISREPORTED: dict[str, tuple[str, ...]] = {
    Outcome.NONE.value: ("AC-OFFICE-ASSIGN-RATE-003.5/distinct-outcome",),
    "no wake": ("AC-OFFICE-ASSIGN-RATE-003.5/not-absence",),
    Outcome.COALESCED.value: ("AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",),
    Outcome.DEDUPLICATED.value: ("AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",),
}
"""A refusal reported as something it is not breaks these, not the allowance itself."""

FAIL_OPEN_CLAUSES = ("AC-OFFICE-ASSIGN-RATE-002.2/fail-open",)

QUIET_CLAUSES: dict[Shape, tuple[str, ...]] = {
    Shape.AGENT: ("AC-OFFICE-ASSIGN-RATE-003.4/ordinary-silent",),
    Shape.USER: ("AC-OFFICE-ASSIGN-RATE-001.1/others-no-counter",),
    Shape.PRODUCER: ("AC-OFFICE-ASSIGN-RATE-001.1/absent-is-normal",),
    Shape.OTHER: (
        "AC-OFFICE-ASSIGN-RATE-001.1/others-no-counter",
        "AC-OFFICE-ASSIGN-RATE-002.3/only-in-scope",
    ),
    Shape.UNPARSEABLE: ("OF-4",),
    Shape.UNASSIGNMENT: ("AC-OFFICE-ASSIGN-RATE-001.9/not-refused-or-counted",),
}
"""Why no rate-limit counter may move for a wake of each shape (admitted ordinarily)."""

SUPPRESSED_QUIET = ("AC-OFFICE-ASSIGN-RATE-001.5/suppressed-not-counted",)


def outcome_cites(wake: Wake, expected: Iterable[str]) -> tuple[str, ...]:
    """The clauses a check that `wake` ended as one of `expected` enforces."""
    cites: list[str] = []
    for outcome in expected:
        if outcome == Outcome.QUEUED.value:
            cites += FAIL_OPEN_CLAUSES if wake.fault_armed else cites_for(ADMITTED_CLAUSES, wake)
        elif outcome == Outcome.RATE_LIMITED.value and wake.outcome in REFUSAL_MISREPORTED:
            cites += REFUSAL_MISREPORTED[wake.outcome]
        else:
            cites += OUTCOME_CLAUSES[outcome]
    return tuple(dict.fromkeys(cites))


def quiet_cites(wakes: Iterable[Wake]) -> tuple[str, ...]:
    """The clauses a check that these wakes moved no rate-limit counter enforces."""
    cites: list[str] = []
    for wake in wakes:
        suppressed = wake.outcome in (Outcome.COALESCED.value, Outcome.DEDUPLICATED.value)
        cites += SUPPRESSED_QUIET if suppressed else cites_for(QUIET_CLAUSES, wake)
    return tuple(dict.fromkeys(cites)) or QUIET_CLAUSES[Shape.AGENT]


def cites_for(table: dict[Shape, tuple[str, ...]], wake: Wake) -> tuple[str, ...]:
    """The clauses a table gives a wake's shape; a shape it has none for is the kit's defect
    (the scenario asks something of that wake no clause requires)."""
    return scenario_value(table.get(wake.shape), f"no clause covers this check for a {wake.shape}")


# --------------------------------------------------------------------------
# Payloads, read the way the spec reads them
# --------------------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_payload(text: str) -> dict[str, Any] | None:
    """The payload as a JSON object, or None when it is not one (NaN and friends included)."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def shape_of(reason: str, payload: str) -> Shape:
    """The shape the spec gives a wake: actor type exactly "agent", then a string task id."""
    fields = parse_payload(payload)
    if fields is None:
        return Shape.UNPARSEABLE
    if reason != TASK_ASSIGNED or fields.get("actor_type") != AGENT:
        return Shape.OTHER
    task_id = fields.get("task_id")
    return Shape.AGENT if isinstance(task_id, str) and task_id else Shape.UNATTRIBUTED


def counts_as_agent_run(run: Run, task_id: str) -> bool:
    """A stored run the allowance of `task_id` counts: its payload says agent and names the task
    as a JSON string."""
    payload = parse_payload(run.payload) or {}
    return (
        run.reason == TASK_ASSIGNED
        and payload.get("task_id") == task_id
        and payload.get("actor_type") == AGENT
    )


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
        self.generation_before_action = dict(self.generations)
        self.series_generations = []
        self.wakes = action()

    def baseline(self, since: str) -> Observation:
        """`by that wake` / `by those wakes` / `by that assignment`, or `in this scenario`."""
        observed = self.at_start if since == "in this scenario" else self.before_action
        return scenario_value(observed, "no action has been taken yet in this scenario")

    def warnings_since_action(self) -> list[WarningLog]:
        return self.driver.warning_logs()[self.baseline("by that wake").warnings :]

    def last_wake(self) -> Wake:
        scenario_requires(bool(self.wakes), "no wake has been produced yet in this scenario")
        return self.wakes[-1]

    def evaluate(self, shape: Shape, result: WakeResult | None) -> Wake:
        """The wake record of an answer; an in-scope attributed wake spends an armed fault."""
        armed = self.fault_armed and shape is Shape.AGENT
        if armed:
            self.fault_armed = False
        return Wake(result, shape, armed)


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
    return scene


# --------------------------------------------------------------------------
# Phrases
# --------------------------------------------------------------------------

SINCE = r"(?P<since>by that wake|by those wakes|by that assignment|in this scenario)"
