"""The path inventory: every (clause, path) pair of an office effect is checked somewhere, by a
scenario tagged with that path or by the office effects model on the schedules it draws."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from conformance.driver import Producer
from conformance.properties.office_model import OfficeModel
from conformance.properties.office_operations import Powers, effect_schedules
from conformance.properties.office_path_coverage import Coverage
from conformance.spec.inventory import load_inventory
from conformance.spec.path_inventory import (
    beyond_the_model,
    effects,
    known_paths,
    required_pairs,
    scenario_name,
    scenario_paths,
    tagged_pairs,
)
from conformance.spec.registry import default_registry

pytestmark = pytest.mark.cost(seconds=15)

STRENGTH_DOC = Path(__file__).resolve().parents[1] / "docs" / "strength.md"
FEATURES = Path(__file__).resolve().parents[1] / "features"
EVERY_POWER = Powers(
    keyless=True,
    degraded=True,
    concurrent=True,
    restartable=True,
    producers=tuple(p.value for p in Producer if p is not Producer.ASSIGNEE_MUTATION),
    allowance=5,
    window=timedelta(minutes=10),
)


def model_pairs(examples: int) -> set[tuple[str, str]]:
    """The pairs the model's checks meet over `examples` schedules of the ci size."""
    met: set[tuple[str, str]] = set()

    @seed(20261202)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(schedule=effect_schedules(EVERY_POWER, datetime(2026, 2, 2, tzinfo=UTC), 14, None))
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


def test_every_effect_names_a_registered_clause() -> None:
    registry = default_registry()
    for effect in effects():
        assert registry.is_citable(effect.clause), f"{effect.id}: {effect.clause} is no clause"
        assert effect.paths, f"{effect.id} lists no path"


def test_every_scenario_s_path_names_a_scenario_and_a_known_path() -> None:
    """The paths live in paths.toml, keyed by scenario: a renamed scenario or a misspelt path
    would silently credit nothing."""
    named = {scenario_name(entry) for entry in load_inventory()}
    for scenario, paths in scenario_paths().items():
        assert scenario in named, f"paths.toml names no scenario of the features: {scenario}"
        assert set(paths) <= known_paths(), f"{scenario}: {set(paths) - known_paths()}"


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
def test_every_clause_and_path_pair_is_checked_somewhere() -> None:
    """By a tagged scenario or by the model; and the model, the net under the scenarios, alone
    reaches every pair but those on the paths it never takes (paths.toml's `model.beyond`).
    It runs the model alone, no line of the reference, so coverage is paused: tracing its 1200
    schedules doubled its time."""
    by_scenarios = tagged_pairs(load_inventory())
    by_model = model_pairs(1200)
    missing = sorted(required_pairs() - by_scenarios - by_model)
    assert not missing, f"(clause, path) pairs checked nowhere: {missing}"
    beyond = {(clause, path) for clause, path in required_pairs() if path in beyond_the_model()}
    assert not required_pairs() - beyond - by_model, sorted(required_pairs() - beyond - by_model)
    assert beyond_the_model() <= known_paths(), "model.beyond names a path no effect has"


def test_the_strength_doc_lists_every_effect_and_path() -> None:
    text = STRENGTH_DOC.read_text(encoding="utf-8")
    for effect in effects():
        assert f"`{effect.id}`" in text, f"docs/strength.md does not list {effect.id}"
    for path in known_paths():
        assert f"`{path}`" in text, f"docs/strength.md does not name the path {path}"
