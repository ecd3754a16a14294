"""The results recorder gives each scenario the verdict of what actually happened.

A miniature suite runs in a subprocess against a fake in-process implementation,
with one scenario per kind of outcome, and the stream it writes is checked.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from conformance.running.options import SuiteOptions
from conformance.running.workers import xdist_arguments
from conformance.stream.results import ResultsRun, Status
from conformance.stream.stream_integrity import verify_stream

FEATURE = """\
Feature: Recorder demo

  @AC-OFFICE-ASSIGN-RATE-001.1
  Scenario: it passes
    Given the implementation answers

  @AC-OFFICE-ASSIGN-RATE-001.2
  Scenario: an assertion fails
    Given the implementation answers
    Then an expectation is not met

  @AC-OFFICE-ASSIGN-RATE-001.3
  Scenario: a capability is missing
    Given the scenario needs a restart

  @AC-OFFICE-ASSIGN-RATE-001.4
  Scenario: a step has no definition
    Given nobody wrote this step

  @AC-OFFICE-ASSIGN-RATE-001.5
  Scenario: the implementation crashes
    Given the implementation crashes

  @AC-OFFICE-ASSIGN-RATE-001.6
  Scenario: a plain skip
    Given the step skips without a reason of applicability

  @AC-OFFICE-ASSIGN-RATE-001.7
  Scenario: deselected
    Given the implementation answers

  @AC-OFFICE-ASSIGN-RATE-001.8
  Scenario Outline: an outline
    Given the implementation answers <value>

    Examples:
      | value |
      | 1     |
      | 2     |
"""

STEPS = """\
import pytest
from pytest_bdd import given, then, parsers, scenarios

from conformance.driver import Capability
from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.applicability import require

scenarios("demo.feature")


@given("the implementation answers")
@given(parsers.parse("the implementation answers {value:d}"))
def answers(driver):
    assert driver.describe().name == "fake"


@then("an expectation is not met")
def not_met():
    assert 1 == 2, "one is not two"


@given("the scenario needs a restart")
def needs_restart(driver):
    require(driver, Capability.RESTART)


@given("the implementation crashes")
def crashes():
    raise ImplementationFault(FaultKind.CRASH, "process exited with code -9", ["panic: boom"])


@given("the step skips without a reason of applicability")
def plain_skip():
    pytest.skip("flaky")
"""

FAKE = """\
from conformance.driver import Capability, Description


class FakeDriver:
    def describe(self):
        return Description(name="fake", version="0", capabilities=[Capability.OFFICE])

    def close(self):
        pass


def make(database, scratch):
    return FakeDriver()
"""


@pytest.fixture
def demo(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nbdd_features_base_dir = features/\n")
    features = pytester.mkdir("features")
    (features / "demo.feature").write_text(FEATURE)
    pytester.makepyfile(test_demo=STEPS, fake_impl=FAKE)
    pytester.makeconftest('pytest_plugins = ["conformance.running.pytest_plugin"]\n')
    return pytester


def demo_options(**given: Any) -> str:
    """The fake implementation, a stream in the demo's folder, and what a test adds."""
    settings = {"impl": "python:fake_impl:make", "results": Path("results.jsonl"), **given}
    return SuiteOptions(**settings).argument()


def run_demo(demo: pytest.Pytester, *spread: str, **given: Any) -> ResultsRun:
    demo.runpytest_subprocess(demo_options(**given), "-k", "not deselected", *spread)
    return verify_stream(Path(demo.path) / "results.jsonl")


def statuses(run: ResultsRun) -> dict[str, Status]:
    return {result.key: result.status for result in run.scenarios}


@pytest.mark.parametrize("spread", [(), tuple(xdist_arguments(2))], ids=["one job", "two jobs"])
def test_each_outcome_gets_its_own_verdict(demo: pytest.Pytester, spread: tuple[str, ...]) -> None:
    """The same records whether the run's own process runs the items or two workers do."""
    run = run_demo(demo, *spread)
    assert statuses(run) == {
        "demo.feature::it passes": Status.PASSED,
        "demo.feature::an assertion fails": Status.FAILED,
        "demo.feature::a capability is missing": Status.NOT_APPLICABLE,
        "demo.feature::a step has no definition": Status.UNDEFINED,
        "demo.feature::the implementation crashes": Status.ERRORED,
        "demo.feature::a plain skip": Status.ERRORED,
        "demo.feature::an outline[1]": Status.PASSED,
        "demo.feature::an outline[2]": Status.PASSED,
        "demo.feature::deselected": Status.UNDEFINED,
    }
    by_key = run.by_key()
    assert "one is not two" in (by_key["demo.feature::an assertion fails"].evidence or "")
    assert "panic: boom" in (by_key["demo.feature::the implementation crashes"].evidence or "")
    assert "restart" in (by_key["demo.feature::a capability is missing"].evidence or "")
    assert run.header.description is not None and run.header.description["name"] == "fake"
    assert run.footer is not None and run.footer.totals[Status.UNDEFINED] == 2


def test_criterion_and_steps_are_recorded(demo: pytest.Pytester) -> None:
    run = run_demo(demo)
    failing = run.by_key()["demo.feature::an assertion fails"]
    assert failing.criterion == "AC-OFFICE-ASSIGN-RATE-001.2"
    assert [(s.keyword, s.status) for s in failing.steps] == [
        ("Given", "passed"),
        ("Then", "failed"),
    ]


def test_expectations_turn_failures_into_xfail_and_passes_into_xpass(demo: pytest.Pytester) -> None:
    (Path(demo.path) / "expected.toml").write_text(
        textwrap.dedent("""\
        [[expected_failure]]
        scenario = "demo.feature::an assertion fails"
        issue = "https://tracker.example/1"

        [[expected_failure]]
        scenario = "demo.feature::it passes"
        issue = "https://tracker.example/2"
        """)
    )
    run = run_demo(demo, expectations=Path("expected.toml"))
    assert statuses(run)["demo.feature::an assertion fails"] is Status.XFAIL
    assert statuses(run)["demo.feature::it passes"] is Status.XPASS


def test_an_expectation_naming_an_unknown_scenario_is_a_configuration_error(
    demo: pytest.Pytester,
) -> None:
    (Path(demo.path) / "expected.toml").write_text(
        '[[expected_failure]]\nscenario = "demo.feature::no such thing"\nissue = "x"\n'
    )
    result = demo.runpytest_subprocess(demo_options(expectations=Path("expected.toml")))
    assert result.ret != 0
    assert "unknown scenario" in result.stderr.str() + result.stdout.str()


def test_an_unusable_implementation_is_recorded_in_the_header(demo: pytest.Pytester) -> None:
    run = run_demo(demo, impl="python:fake_impl:missing")
    assert run.header.implementation_error is not None
    assert "missing" in run.header.implementation_error


CRASHING_FEATURE = """\
Feature: A hopeless implementation

  @AC-OFFICE-ASSIGN-RATE-001.1
  Scenario: first crash
    Given the implementation crashes

  @AC-OFFICE-ASSIGN-RATE-001.2
  Scenario: second crash
    Given the implementation crashes

  @AC-OFFICE-ASSIGN-RATE-001.3
  Scenario: never reached
    Given the implementation answers
"""


def test_past_the_restart_budget_the_run_stops_and_the_rest_is_undefined(
    demo: pytest.Pytester,
) -> None:
    (Path(demo.path) / "features" / "demo.feature").write_text(CRASHING_FEATURE)
    run = run_demo(demo, restart_budget=1)
    assert statuses(run) == {
        "demo.feature::first crash": Status.ERRORED,
        "demo.feature::second crash": Status.ERRORED,
        "demo.feature::never reached": Status.UNDEFINED,
    }
    assert run.footer is not None and run.footer.stopped is not None
    assert "restart budget of 1" in run.footer.stopped


def test_the_restart_budget_counts_every_worker_s_faults(demo: pytest.Pytester) -> None:
    (Path(demo.path) / "features" / "demo.feature").write_text(CRASHING_FEATURE)
    run = run_demo(demo, *xdist_arguments(2), restart_budget=1)
    assert statuses(run)["demo.feature::second crash"] is Status.ERRORED
    assert run.footer is not None and run.footer.stopped is not None
    assert "faulted 2 times, more than the restart budget of 1" in run.footer.stopped


def test_within_the_restart_budget_the_run_goes_on(demo: pytest.Pytester) -> None:
    (Path(demo.path) / "features" / "demo.feature").write_text(CRASHING_FEATURE)
    run = run_demo(demo, restart_budget=2)
    assert statuses(run)["demo.feature::never reached"] is Status.PASSED
    assert run.footer is not None and run.footer.stopped is None


TIMED_FEATURE = """\
Feature: Recorder demo

  Scenario: slow
    Given the implementation answers
    And 5 seconds pass on the recorder's stopwatch

  Scenario: quick
    Given the implementation answers
"""

STOPWATCH_CONFTEST = """\
import pytest

pytest_plugins = ["conformance.running.pytest_plugin"]
READING = [100.0]


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.pluginmanager.get_plugin("conformance-results").clock = lambda: READING[0]
"""

STOPWATCH_STEP = """

@given(parsers.parse("{seconds:d} seconds pass on the recorder's stopwatch"))
def stopwatch_moves(seconds):
    from conftest import READING

    READING[0] += seconds
"""


def test_each_scenario_and_step_is_timed_on_its_own(demo: pytest.Pytester) -> None:
    """On a stopwatch that only the slow step moves, only it and its scenario take time."""
    (Path(demo.path) / "features" / "demo.feature").write_text(TIMED_FEATURE)
    demo.makeconftest(STOPWATCH_CONFTEST)
    demo.makepyfile(test_demo=STEPS + STOPWATCH_STEP)
    by_key = run_demo(demo).by_key()
    slow, quick = by_key["demo.feature::slow"], by_key["demo.feature::quick"]
    assert (slow.duration_s, [step.duration_s for step in slow.steps]) == (5.0, [0.0, 5.0])
    assert (quick.duration_s, [step.duration_s for step in quick.steps]) == (0.0, [0.0])
