"""The restart forecast counts the restart steps of the scenarios that will run, in order.

A miniature suite records, from inside each scenario, what the plugin's
forecast says for it; the forecast is then compared with the restart steps
written in the feature, background included, with a deselected scenario left
out and the lookahead respected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.restart_forecast import RestartForecast

FEATURE = """\
Feature: Forecast demo

  Background:
    Given the forecast is noted

  Scenario: no restart
    When nothing happens

  Scenario: two restarts
    When the implementation restarts
    And the implementation restarts

  Scenario: deselected, with three restarts
    When the implementation restarts
    And the implementation restarts
    And the implementation restarts

  Scenario Outline: one restart per example
    When the implementation restarts
    Then <value> is seen

    Examples:
      | value |
      | 1     |
      | 2     |
"""

STEPS = """\
import json

from pytest_bdd import given, parsers, then, when, scenarios

from conformance.restart_forecast import FORECAST, RESTART_STEP

scenarios("demo.feature")


@given("the forecast is noted")
def noted(request):
    ahead = request.config.stash[FORECAST].ahead(request.node.nodeid)
    with open("forecast.jsonl", "a") as notes:
        notes.write(json.dumps([request.node.name, ahead]) + "\\n")


@when("nothing happens")
@when(RESTART_STEP)
def nothing():
    pass


@then(parsers.parse("{value:d} is seen"))
def seen(value):
    pass
"""


def test_each_scenario_is_told_the_restarts_of_itself_and_the_selected_ones_after_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nbdd_features_base_dir = features/\n")
    (pytester.mkdir("features") / "demo.feature").write_text(FEATURE)
    pytester.makepyfile(test_demo=STEPS)
    pytester.makeconftest('pytest_plugins = ["conformance.pytest_plugin"]\n')
    outcome = pytester.runpytest_subprocess("-k", "not deselected", "-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=4, deselected=1)
    lines = (Path(pytester.path) / "forecast.jsonl").read_text().splitlines()
    told = dict(json.loads(line) for line in lines)
    assert told == {
        "test_no_restart": 4,
        "test_two_restarts": 4,
        "test_one_restart_per_example[1]": 2,
        "test_one_restart_per_example[2]": 1,
    }


def test_the_forecast_looks_only_so_far_ahead_and_knows_only_its_items() -> None:
    forecast = RestartForecast([("a", 1), ("b", 0), ("c", 5), ("d", 2)], lookahead=2)
    assert [forecast.ahead(node) for node in "abcd"] == [1, 5, 7, 2]
    assert forecast.ahead("unknown") is None
