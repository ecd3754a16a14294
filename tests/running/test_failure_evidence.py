"""A failing run's account for the implementer: the causes grouped first, then each failure in
the spec's terms, the kit's own frames only when asked for."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from conformance.cli import app
from conformance.reports.terminal import causes, print_verdicts
from conformance.spec.registry import default_registry
from conformance.stream.results import FailedStep, Failure, ResultsRun, ScenarioResult, Status
from tests.paths import CHECKOUT
from tests.runs import a_header

CLAUSE = "AC-OFFICE-ASSIGN-RATE-001.2/serial-bound"
TRACE = "  steps/office_checks.py:57 in wake_outcome"
ROOT = CHECKOUT


def failing(number: int, observed: str, clause: str = CLAUSE) -> ScenarioResult:
    step = FailedStep(keyword="Then", text="the wake's outcome", feature="f.feature", line=number)
    return ScenarioResult(
        key=f"f.feature::s{number}",
        criterion="AC-OFFICE-ASSIGN-RATE-001.2",
        feature="f.feature",
        scenario=f"scenario {number}",
        line=number,
        status=Status.FAILED,
        duration_s=0.0,
        failure=Failure(step=step, clauses={clause: "x"}, observed=observed, trace=TRACE),
    )


def a_run() -> ResultsRun:
    records = [
        failing(n, f"expected wake {n} to be 'rate_limited', observed 'queued'") for n in (1, 2, 3)
    ]
    records.append(
        failing(9, "operation produce_wake is not supported", "AC-OFFICE-ASSIGN-RATE-001.12/x")
    )
    return ResultsRun(header=a_header(), scenarios=records, footer=None)


def shown(*, traceback: bool) -> str:
    console = Console(record=True, width=200)
    print_verdicts(a_run(), default_registry(), console, traceback=traceback)
    return console.export_text()


def test_failures_of_one_cause_are_one_line_with_their_count_and_first_scenario() -> None:
    grouped = causes(a_run())
    assert sorted(len(members) for members in grouped.values()) == [1, 3]
    said = shown(traceback=False)
    assert "4 record(s) did not pass, from 2 cause(s):" in said
    assert f"3× {CLAUSE}: expected wake N to be 'rate_limited', observed 'queued'" in said
    assert "first: f.feature:1 scenario 1" in said
    assert said.index("from 2 cause(s)") < said.index("Step: Then the wake's outcome")


def test_the_kit_s_own_frames_are_shown_only_when_asked_for() -> None:
    assert "steps/office_checks.py" not in shown(traceback=False)
    assert TRACE.strip() in shown(traceback=True)


@pytest.mark.cost(seconds=30)
def test_no_published_report_holds_a_path_of_the_runner_s_machine(tmp_path: Path) -> None:
    """A property's counterexample names its fixtures; none may print where the run kept its
    files, nor the kit's checkout, nor the home folder, in any format."""
    reports = {
        "--results": tmp_path / "results.jsonl",
        "--html": tmp_path / "report.html",
        "--markdown": tmp_path / "summary.md",
        "--junit": tmp_path / "junit.xml",
        "--cucumber": tmp_path / "cucumber.json",
    }
    arguments = ["run", "--quiet", "--impl", "mutant:allowance_off_by_one", "--properties", "ci"]
    arguments += ["-k", "office_window or sixth"]
    arguments += [str(part) for pair in reports.items() for part in pair]
    outcome = CliRunner().invoke(app, arguments)
    assert outcome.exit_code == 1, outcome.output
    machine = [str(tmp_path), tempfile.gettempdir() + "/conformance-", str(ROOT), str(Path.home())]
    for option, path in reports.items():
        text = path.read_text(encoding="utf-8")
        assert "Failing test case" in text or option == "--junit", option
        leaked = [where for where in machine if where in text]
        assert not leaked, f"{option} holds {leaked}"


FEWER = "AC-OFFICE-ASSIGN-RATE-001.2/serial-bound"
MORE = "AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early"


def test_a_search_reports_each_set_of_broken_clauses_apart_each_with_its_own_counterexample() -> (
    None
):
    """Every check raises from `expect`: with one exception type for all, Hypothesis takes every
    break for one failure and shrinks toward the easiest. A type per set of clauses keeps them
    apart: where a search reports each failure (report_multiple_bugs), each is shrunk on its
    own and shown with its own scenario."""
    from hypothesis import given, note, settings
    from hypothesis import strategies as st

    from conformance.running.failure_evidence import (
        SCENARIO_NOTE,
        counterexample_of,
        distinct_failures,
    )
    from conformance.spec.clause_check import ClauseViolation, expect

    @settings(database=None, derandomize=True, max_examples=300, report_multiple_bugs=True)
    @given(st.integers(0, 100))
    def search(n: int) -> None:
        note(f"{SCENARIO_NOTE}@CRITERION\nScenario: {n} wakes")
        expect(not 10 <= n < 50, FEWER, f"{n} in the middle")
        expect(n < 50, MORE, f"{n} at the top")

    with pytest.raises(BaseExceptionGroup) as found:
        search()
    joined = distinct_failures(found.value)
    assert isinstance(joined, ClauseViolation)
    assert [part.cites for part in joined.parts] == [(FEWER,), (MORE,)] or [
        part.cites for part in joined.parts
    ] == [(MORE,), (FEWER,)]
    shown = counterexample_of(joined)
    assert "# Counterexample 1 of 2" in shown and "# Counterexample 2 of 2" in shown
    assert "@AC-OFFICE-ASSIGN-RATE-001.2\nScenario: 10 wakes" in shown, shown
    assert "@AC-OFFICE-ASSIGN-RATE-002.1\nScenario: 50 wakes" in shown, shown
    account = Failure(step=None, observed="x", counterexample=shown).render(hypothesis_notes=False)
    assert "Scenario: 10 wakes" in account and "Scenario: 50 wakes" in account
