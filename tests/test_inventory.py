"""The suite's shape: every criterion covered; every scenario tagged with one known criterion."""

from __future__ import annotations

from collections import Counter

import pytest

from conformance.inventory import ScenarioEntry, load_inventory
from conformance.registry import CRITERION_TAG, default_registry

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
