"""pytest-bdd's step lookup, remembered for the session.

For every step it runs, pytest-bdd asks pytest for the definitions of every fixture name there
is and keeps those whose parser matches the step's text: about 180 lookups a step, 450,000 in a
suite run, about a tenth of its CPU time. Which definitions can parse a step depends
only on the step's type and text and on where the scenario sits (a definition is visible from
the folder, module or class that defines it down), and none is added once the suite is
collected, so the answer is kept per (type, text, the scenario's parent). Only a session that
loads this plugin keeps answers, each in its own stash; any other session in the process gets
pytest-bdd's own lookup.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any, Final, TypeAlias

import pytest
from _pytest.fixtures import FixtureManager
from pytest_bdd.parser import Step

Found: TypeAlias = tuple[pytest.FixtureDef[Any], ...]
Lookup: TypeAlias = Callable[[Step, FixtureManager, pytest.Item], Iterable[pytest.FixtureDef[Any]]]

bdd_scenario: Final = importlib.import_module("pytest_bdd.scenario")
"""The module itself (the package's `scenario` is a function of that name)."""
ANSWERS: Final = pytest.StashKey[dict[tuple[str | None, str, str], Found]]()
_original: Final[Lookup] = bdd_scenario.find_fixturedefs_for_step


def remembered_lookup(
    step: Step, fixturemanager: FixtureManager, node: pytest.Item
) -> Iterable[pytest.FixtureDef[Any]]:
    answers = fixturemanager.config.stash.get(ANSWERS, None)
    if answers is None:
        return _original(step, fixturemanager, node)
    key = (step.type, step.name, node.parent.nodeid if node.parent else "")
    if key not in answers:
        answers[key] = tuple(_original(step, fixturemanager, node))
    return answers[key]


def pytest_configure(config: pytest.Config) -> None:
    config.stash[ANSWERS] = {}
    vars(bdd_scenario)["find_fixturedefs_for_step"] = remembered_lookup


def pytest_unconfigure(config: pytest.Config) -> None:
    del config.stash[ANSWERS]
