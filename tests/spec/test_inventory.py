"""The suite's shape: every criterion covered; every scenario tagged with one known criterion."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from conformance.inventory import FEATURES_DIR, load_inventory
from conformance.spec.registry import CRITERION_TAG, default_registry
from conformance.spec.scenario_keys import ScenarioEntry

INVENTORY = load_inventory()


def test_the_feature_files_define_scenarios() -> None:
    assert len(INVENTORY) >= 38, f"only {len(INVENTORY)} scenarios found in features/"


@pytest.mark.parametrize("criterion_id", default_registry().ids())
def test_every_criterion_has_a_scenario(criterion_id: str) -> None:
    covering = [entry.key for entry in INVENTORY if criterion_id in entry.criteria]
    assert covering, f"no scenario is tagged @{criterion_id}"


@pytest.mark.parametrize("entry", INVENTORY, ids=lambda entry: entry.key)
def test_every_scenario_names_exactly_one_known_criterion(entry: ScenarioEntry) -> None:
    criterion_like = [tag for tag in entry.tags if tag.startswith("AC-")]
    assert len(criterion_like) == 1, (
        f"{entry.key} has criterion tags {criterion_like}; exactly one is required"
    )
    assert CRITERION_TAG.fullmatch(criterion_like[0]), (
        f"{entry.key}: malformed tag {criterion_like[0]}"
    )
    assert criterion_like[0] in default_registry().ids(), (
        f"{entry.key}: unknown criterion {criterion_like[0]}"
    )


def test_scenario_keys_are_unique() -> None:
    duplicates = [key for key, count in Counter(e.key for e in INVENTORY).items() if count > 1]
    assert not duplicates, (
        f"scenario keys used twice (rename the scenario or its example): {duplicates}"
    )


def _scenario_steps() -> dict[str, list[dict[str, Any]]]:
    """Each scenario's steps, as the official Gherkin parser reads them."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(FEATURES_DIR.glob("**/*.feature")):
        document = Parser().parse(TokenScanner(path.read_text(encoding="utf-8")))
        for child in document["feature"]["children"]:
            if "scenario" in child:
                scenario = child["scenario"]
                found[f"{path.name}::{scenario['name']}"] = scenario["steps"]
    return found


@pytest.mark.parametrize("steps", _scenario_steps().values(), ids=list(_scenario_steps()))
def test_every_scenario_ends_with_a_then_step(steps: list[dict[str, Any]]) -> None:
    # When steps judge nothing: what an action answered wrong is judged by the next Then step,
    # so a scenario ending on a When would leave it unjudged.
    kinds = [step["keywordType"] for step in steps if step["keywordType"] != "Conjunction"]
    assert kinds and kinds[-1] == "Outcome", "the last step that is not And or But is not a Then"
