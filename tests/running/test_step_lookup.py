"""The remembered step lookup (conformance.running.step_lookup) finds what pytest-bdd's own does:
a step a module defines for itself stays that module's, whatever ran first, and an undefined
step stays undefined."""

from __future__ import annotations

import pytest

FEATURE = """\
Feature: one step text, two meanings

  Scenario: a value
    Given a value
    Then the value is the module's own
"""

MODULE = """\
from pytest_bdd import given, scenario, then

@scenario("shared.feature", "a value")
def test_shared():
    pass

@given("a value", target_fixture="value")
def value():
    return {own!r}
"""

CONFTEST = """\
from pytest_bdd import then

@then("the value is the module's own")
def own_value(value, request):
    assert value == request.module.__name__.removeprefix("test_")
"""

UNDEFINED = """\
Feature: a step nobody defines

  Scenario: undefined
    Given a value nobody defines
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nbdd_features_base_dir = features/\n")
    features = pytester.mkdir("features")
    (features / "shared.feature").write_text(FEATURE)
    (features / "undefined.feature").write_text(UNDEFINED)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_first=MODULE.format(own="first"),
        test_second=MODULE.format(own="second"),
        test_undefined='from pytest_bdd import scenarios\nscenarios("undefined.feature")\n',
    )
    return pytester


@pytest.mark.parametrize("lookup", ["remembered", "pytest-bdd's own"])
def test_each_module_gets_its_own_definition_of_a_shared_step(
    suite: pytest.Pytester, lookup: str
) -> None:
    plugin = ["-p", "conformance.running.step_lookup"] if lookup == "remembered" else []
    result = suite.runpytest_subprocess(*plugin, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*StepDefinitionNotFoundError*a value nobody defines*"])
