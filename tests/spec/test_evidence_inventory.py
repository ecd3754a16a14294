"""The inventories read from what the checks recorded in a run of the suite against the reference,
never from where a clause ID is written:

- every observable clause held in some check of the run, and no clause the register marks not
  observable was judged at all;
- every interpretation the kit takes was judged in the run, or a scenario rests on it by tag;
- every (clause, path) pair of an effect of either spec is walked at the `ci` budget, by a
  scenario that takes that path where the run's evidence shows a check of that clause held, or
  by the office effects model whatever the run's seed.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, seed, settings

from conformance.driver import Producer
from conformance.properties import CI_EXAMPLES, RESTARTS_PER_EXAMPLE, Budget
from conformance.properties.office_model import OfficeModel
from conformance.properties.office_operations import Powers, effect_schedules
from conformance.properties.office_path_coverage import Coverage
from conformance.spec.evidence import Tally
from conformance.spec.path_inventory import (
    effects,
    known_paths,
    required_pairs,
    scenario_paths,
    walked_pairs,
)
from conformance.spec.registry import default_registry
from conformance.stream.results import ResultsRun
from conformance.stream.stream_integrity import verify_stream
from conformance.verdicts import run_evidence
from tests.paths import DOCS, FEATURES

pytestmark = pytest.mark.cost(seconds=40)

STRENGTH_DOC = DOCS / "strength.md"
EVERY_POWER = Powers(
    keyless=True,
    degraded=True,
    concurrent=True,
    restartable=True,
    producers=tuple(p.value for p in Producer if p is not Producer.ASSIGNEE_MUTATION),
    allowance=5,
    window=timedelta(minutes=10),
)


CI_SEEDS = range(1, 9)
"""The model's share is what it meets under each of these seeds: a run draws a new one."""


def model_pairs_at_ci() -> set[tuple[str, str]]:
    """The pairs the model's checks meet at the ci budget under every seed of CI_SEEDS."""
    met = [model_pairs(CI_EXAMPLES, run_seed) for run_seed in CI_SEEDS]
    return set.intersection(*met)


def model_pairs(examples: int, run_seed: int) -> set[tuple[str, str]]:
    """The pairs the model's checks meet over `examples` schedules of the ci size."""
    met: set[tuple[str, str]] = set()
    restarts = RESTARTS_PER_EXAMPLE[Budget.CI]

    @seed(run_seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(schedule=effect_schedules(EVERY_POWER, datetime(2026, 2, 2, tzinfo=UTC), 14, restarts))
    def explore(schedule: list) -> None:  # type: ignore[type-arg]
        model = OfficeModel(
            5,
            timedelta(minutes=10),
            unparseable_counted=False,
            coalesce_window=timedelta(seconds=5),
            lookback=timedelta(hours=24),
        )
        coverage = Coverage(model)
        coverage.replay(schedule)
        met.update(coverage.pairs())

    explore()
    return met


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> ResultsRun:
    """The Gherkin suite against the reference served through `exec:`, where every path can be
    walked (a crash and several processes need a process of their own)."""
    results = tmp_path_factory.mktemp("paths") / "results.jsonl"
    completed = subprocess.run(
        [
            *(sys.executable, "-c", "from conformance.cli import main; main()", "run"),
            *("--impl", "exec:conformance serve-reference", "--properties", "none"),
            *("--results", str(results), "--quiet"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return verify_stream(results)


@pytest.mark.no_cover
def test_every_observable_clause_held_in_a_check_of_the_reference_run(
    reference_run: ResultsRun,
) -> None:
    """A clause no check judged in a whole run of the suite is enforced nowhere, whatever the
    code says: the evidence is what the checks recorded, not where an ID is written."""
    evidence = run_evidence(reference_run.scenarios)
    silent = [
        clause.id
        for clause in default_registry().clauses
        if not clause.not_observable and not (clause.id in evidence and evidence[clause.id].held)
    ]
    assert not silent, f"clauses no check of the reference run held: {silent}"


@pytest.mark.no_cover
def test_a_clause_marked_not_observable_is_neither_judged_nor_tagged(
    reference_run: ResultsRun,
) -> None:
    runs = reference_run.scenarios
    judged = set(run_evidence(runs)) | {clause for record in runs for clause in record.clauses}
    registry = default_registry()
    contradictions = [c.id for c in registry.clauses if c.not_observable and c.id in judged]
    assert not contradictions, f"marked not observable, yet judged: {contradictions}"


@pytest.mark.no_cover
def test_every_active_interpretation_is_judged_or_rested_on(reference_run: ResultsRun) -> None:
    """An interpretation no check judged and no scenario rests on is no longer a reading the kit
    takes: retire it."""
    tagged = {reading for record in reference_run.scenarios for reading in record.interpretations}
    exercised = tagged | set(run_evidence(reference_run.scenarios))
    idle = [i.id for i in default_registry().active_interpretations() if i.id not in exercised]
    assert not idle, f"interpretations no check judged and no scenario rests on: {idle}"


def test_every_effect_names_a_registered_clause() -> None:
    registry = default_registry()
    for effect in effects():
        assert registry.is_citable(effect.clause), f"{effect.id}: {effect.clause} is no clause"
        assert effect.paths, f"{effect.id} lists no path"


def test_every_scenario_s_paths_are_known_paths() -> None:
    for scenario, taken in scenario_paths().items():
        paths = {path.path for path in taken}
        assert paths <= known_paths(), f"{scenario}: {paths - known_paths()}"


@pytest.mark.no_cover
def test_every_scenario_named_for_its_paths_ran(reference_run: ResultsRun) -> None:
    """A renamed scenario or a reworded step would silently credit nothing: each name is a
    scenario's, or an outline row's title, of the run, and each `from` begins one of its steps."""
    ran = {
        f"{r.feature}::{name}" for r in reference_run.scenarios for name in (r.scenario, r.title)
    }
    unknown = sorted(set(scenario_paths()) - ran)
    assert not unknown, f"paths.toml names no scenario of the features: {unknown}"


def test_the_feature_files_tag_lines_are_short_and_hold_no_bookkeeping() -> None:
    for feature in sorted(FEATURES.glob("*.feature")):
        for number, line in enumerate(feature.read_text().splitlines(), start=1):
            if line.lstrip().startswith("@"):
                assert len(line) <= 100, f"{feature.name}:{number} is {len(line)} long"
                assert "@path:" not in line, f"{feature.name}:{number}: paths live in paths.toml"


HARNESS_WORDS = ("definite", "harness", "process", "history checker", "driver", "round")
"""What a Then step must not speak of: the harness's mechanics belong to a Given or to the
step's documentation, so a Then states what the spec requires."""


def test_then_steps_state_what_the_spec_requires_not_the_harness_s_mechanics() -> None:
    for feature in sorted(FEATURES.glob("*.feature")):
        keyword = ""
        for number, line in enumerate(feature.read_text().splitlines(), start=1):
            words = line.split()
            if not words or words[0] not in ("Given", "When", "Then", "And", "But"):
                continue
            keyword = keyword if words[0] in ("And", "But") else words[0]
            if keyword == "Then":
                said = [word for word in HARNESS_WORDS if word in line.lower()]
                assert not said, f"{feature.name}:{number} speaks of {said}: {line.strip()}"


@pytest.mark.no_cover
def test_every_clause_and_path_pair_is_walked_at_the_ci_budget(reference_run: ResultsRun) -> None:
    """By a scenario whose checks of the clause held on that path in the run, or by the model
    whatever the seed. The model runs alone, no line of the reference, so coverage is paused."""
    walked = walked_pairs(reference_run.scenarios)
    missing = sorted(required_pairs() - walked - model_pairs_at_ci())
    assert not missing, f"(clause, path) pairs walked nowhere at the ci budget: {missing}"


def a_record(name: str, *steps: tuple[str, dict[str, Tally]]) -> SimpleNamespace:
    feature, scenario = name.split("::", 1)
    return SimpleNamespace(
        feature=feature,
        scenario=scenario,
        title=scenario,
        steps=[
            SimpleNamespace(keyword=w.split()[0], text=w.split(" ", 1)[1], checks=c)
            for w, c in steps
        ],
    )


def test_a_scenario_credits_the_clauses_its_checks_held_and_none_broke() -> None:
    name, taken = next((n, t) for n, t in scenario_paths().items() if all(not p.since for p in t))
    record = a_record(
        name,
        ("Given a setup", {"held": Tally(held=1)}),
        ("Then a check", {"broke": Tally(held=1, broken=1), "idle": Tally()}),
    )
    assert walked_pairs([record]) == {("held", path.path) for path in taken}


def test_a_path_taken_part_way_credits_only_the_checks_from_its_step_on() -> None:
    name, taken = next(
        (n, t) for n, t in scenario_paths().items() if len(t) == 1 and t[0].since == "When"
    )
    record = a_record(
        name,
        ("Given a root delegation", {"before": Tally(held=1)}),
        ("When the call under test", {}),
        ("Then a check", {"after": Tally(held=1)}),
    )
    assert walked_pairs([record]) == {("after", taken[0].path)}
    assert (
        walked_pairs([a_record(name, ("Given only a setup", {"before": Tally(held=1)}))]) == set()
    )


def test_the_strength_doc_lists_every_effect_and_path() -> None:
    text = STRENGTH_DOC.read_text(encoding="utf-8")
    for effect in effects():
        assert f"`{effect.id}`" in text, f"docs/strength.md does not list {effect.id}"
    for path in known_paths():
        assert f"`{path}`" in text, f"docs/strength.md does not name the path {path}"
