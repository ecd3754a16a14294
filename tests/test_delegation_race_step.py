"""The work-request machine writes delegations it made at once as one step of the features'
language, and that step replays them: pasted into a feature file, the scenario runs through
the kit's own steps, names the requests in the order they were made, and the budget checks
that close it hold against the reference."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from conformance.driver import DelegationKind
from conformance.properties.hostile_data import (
    CAMPAIGN_ENVIRONMENTS,
    ENVIRONMENT_MEMBERS,
    ROOT_SESSIONS,
)
from conformance.properties.work_request_scenario import WorkRequestScenario
from conformance.running.failure_evidence import CRITERION_PLACEHOLDER
from tests.test_property_counterexamples import run_pasted, steps_of

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def race_scenario() -> str:
    """Three spawns of 10 each at once from alice's root, then a claim of the second."""
    scenario = WorkRequestScenario()
    budgets = {"camp": 100, "camp-2": 20, "annex-camp": 20}
    campaigns = {name: (CAMPAIGN_ENVIRONMENTS[name], budget) for name, budget in budgets.items()}
    scenario.world(START, ENVIRONMENT_MEMBERS, campaigns, ROOT_SESSIONS)
    permissions = ROOT_SESSIONS["root-alice"][2]
    made = [(f"req-{index}", f"child-{index}") for index in range(3)]
    scenario.delegation_race("root-alice", DelegationKind.SPAWN, 10, permissions, made, 3)
    return scenario.text().replace(f"@{CRITERION_PLACEHOLDER}", "@AC-ARMONIA-WORKREQ-001.9")


def test_the_race_is_one_step_naming_each_request() -> None:
    text = race_scenario()
    assert (
        'When session "root-alice" delegates "r1", "r2" and "r3" at once, each by spawn with a '
        'slice of 10 granting tools "browser, shell" and devices "camera, gpu"'
    ) in text


def test_pasted_it_runs_through_the_kits_steps_and_the_reference_passes_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "pasted.feature").write_text(
        f"Feature: a pasted counterexample\n\n{race_scenario()}\n", encoding="utf-8"
    )
    (tmp_path / "test_pasted.py").write_text(
        'from pytest_bdd import scenarios\n\nscenarios("pasted.feature")\n', encoding="utf-8"
    )
    steps = steps_of(run_pasted(tmp_path, "reference"))
    assert any("at once, each by spawn" in step["name"] for step in steps)
    assert {step["result"]["status"] for step in steps} == {"passed"}, steps
