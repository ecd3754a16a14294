"""The restart forecast counts the restart steps of the scenarios that will run, in order.

A miniature suite, whose background restarts too, records from inside each
scenario what its `driver` fixture passed to `open_driver`; that is compared
with the restart steps written in the feature, with a deselected scenario
left out and the lookahead respected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.running.restart_forecast import RestartForecast

FEATURE = """\
Feature: Forecast demo

  Background:
    Given the implementation restarts

  Scenario: only the background restarts
    When the driver is opened

  Scenario: two more restarts
    When the driver is opened
    And the implementation restarts
    And the implementation restarts

  Scenario: deselected, with three more restarts
    When the driver is opened
    And the implementation restarts
    And the implementation restarts
    And the implementation restarts

  Scenario Outline: one more restart per example
    When the driver is opened
    And the implementation restarts
    Then <value> is seen

    Examples:
      | value |
      | 1     |
      | 2     |
"""

STEPS = """\
from pytest_bdd import given, parsers, then, when, scenarios

from conformance.properties.gherkin import RESTART_STEP

scenarios("demo.feature")


@given(RESTART_STEP)
@when(RESTART_STEP)
def restarts():
    pass


@when("the driver is opened")
def opened(driver):
    pass


@then(parsers.parse("{value:d} is seen"))
def seen(value):
    pass
"""

SPYING_CONFTEST = """\
import json

import pytest

from conformance.running import pytest_plugin

pytest_plugins = ["conformance.running.pytest_plugin"]


class FakeDriver:
    def close(self):
        pass


@pytest.fixture(autouse=True)
def spy_on_open_driver(request, monkeypatch):
    def open_driver(impl, database, scratch, *, restarts_ahead=None, containment=None):
        with open("forecast.jsonl", "a") as notes:
            notes.write(json.dumps([request.node.name, restarts_ahead]) + "\\n")
        return FakeDriver()

    monkeypatch.setattr(pytest_plugin, "open_driver", open_driver)
"""


def test_each_driver_is_told_the_restarts_of_its_scenario_and_the_selected_ones_after_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nbdd_features_base_dir = features/\n")
    (pytester.mkdir("features") / "demo.feature").write_text(FEATURE)
    pytester.makepyfile(test_demo=STEPS)
    pytester.makeconftest(SPYING_CONFTEST)
    outcome = pytester.runpytest_subprocess("-k", "not deselected", "-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=4, deselected=1)
    lines = (Path(pytester.path) / "forecast.jsonl").read_text().splitlines()
    told = dict(json.loads(line) for line in lines)
    assert told == {
        "test_only_the_background_restarts": 1 + 3 + 2 + 2,
        "test_two_more_restarts": 3 + 2 + 2,
        "test_one_more_restart_per_example[1]": 2 + 2,
        "test_one_more_restart_per_example[2]": 2,
    }


def test_the_forecast_looks_only_so_far_ahead_and_knows_only_its_items() -> None:
    forecast = RestartForecast([("a", 1), ("b", 0), ("c", 5), ("d", 2)], lookahead=2)
    assert [forecast.ahead(node) for node in "abcd"] == [1, 5, 7, 2]
    assert forecast.ahead("unknown") is None


def test_items_that_are_not_scenarios_count_no_restart(pytester: pytest.Pytester) -> None:
    """A doctest item has no test function for pytest-bdd's registry to look up."""
    pytester.makeconftest('pytest_plugins = ["conformance.running.pytest_plugin"]\n')
    pytester.maketxtfile(notes=">>> 1 + 1\n2\n")
    outcome = pytester.runpytest_subprocess("--doctest-glob=*.txt", "-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=1)
