"""The CLI refuses bad configuration before running anything, with the documented exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import EXIT_USAGE, app
from conformance.reports.summary import run_succeeded
from conformance.spec.registry import default_registry
from conformance.stream.results import Footer, ResultsRun, ScenarioResult, Status
from conformance.stream.stream_integrity import read_stream
from tests.runs import STARTED, a_header, held_checks

RUNNER = CliRunner()


@pytest.mark.parametrize(
    "arguments",
    [
        ["--impl", "nonsense"],
        ["--impl", "python:no_such_module:make"],
        ["--database", "nonsense://x"],
        ["--database", "sqlite://"],
        ["--max-fail", "-1"],
    ],
)
def test_a_bad_setting_is_a_usage_error_and_writes_nothing(
    arguments: list[str], tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    outcome = RUNNER.invoke(app, ["run", "--quiet", "--results", str(results), *arguments])
    assert outcome.exit_code == EXIT_USAGE, outcome.output
    assert not results.exists(), "a refused run must write no results stream"


@pytest.mark.parametrize(
    ("arguments", "environment", "said"),
    [
        (["--impl", 'exec:"./never closed'], {}, "is not a command line"),
        (["--impl", "exec:./impl"], {"CONFORMANCE_REQUEST_TIMEOUT": "-1"}, "finite number"),
        (["--impl", "exec:./impl"], {"CONFORMANCE_REQUEST_TIMEOUT": "inf"}, "finite number"),
        (["--impl", "exec:./impl"], {"CONFORMANCE_REQUEST_TIMEOUT": "nan"}, "finite number"),
        (["--sandbox"], {}, "runs inside the harness"),
        (["--impl", "exec:./impl", "--sandbox"], {"PATH": "/nonexistent"}, "bubblewrap"),
    ],
)
def test_a_bad_exec_setting_is_a_usage_error_that_says_why(
    arguments: list[str], environment: dict[str, str], said: str, tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    outcome = RUNNER.invoke(
        app, ["run", "--quiet", "--results", str(results), *arguments], env=environment
    )
    assert outcome.exit_code == EXIT_USAGE, outcome.output
    assert said in " ".join(outcome.output.split()), outcome.output
    assert not results.exists(), "a refused run must write no results stream"


def test_a_malformed_expectations_file_is_a_usage_error(tmp_path: Path) -> None:
    expectations = tmp_path / "expected.toml"
    expectations.write_text("this is [[ not toml\n")
    outcome = RUNNER.invoke(app, ["run", "--quiet", "--expectations", str(expectations)])
    assert outcome.exit_code == EXIT_USAGE, outcome.output
    assert "cannot read expectations file" in outcome.output
    assert "Traceback" not in outcome.output


def _run_of(*statuses: Status) -> ResultsRun:
    """A finished run with one scenario per status for every criterion."""
    return ResultsRun(
        header=a_header(),
        scenarios=[
            ScenarioResult(
                key=f"f.feature::{criterion} {index}",
                criterion=criterion,
                feature="f.feature",
                scenario=f"{criterion} {index}",
                status=status,
                duration_s=0.0,
                checks=held_checks(criterion) if status is Status.PASSED else {},
            )
            for criterion in default_registry().ids()
            for index, status in enumerate(statuses)
        ],
        footer=Footer(finished_at=STARTED, totals={}),
    )


def test_a_run_in_which_nothing_applied_does_not_succeed() -> None:
    assert not run_succeeded(
        _run_of(Status.NOT_APPLICABLE, Status.NOT_APPLICABLE), default_registry()
    )


def test_a_run_with_passes_and_not_applicable_scenarios_succeeds() -> None:
    assert run_succeeded(_run_of(Status.PASSED, Status.NOT_APPLICABLE), default_registry())


def test_a_stream_with_a_line_that_is_no_object_is_not_a_results_stream(tmp_path: Path) -> None:
    stream = tmp_path / "r.jsonl"
    stream.write_text(_run_of(Status.PASSED).header.model_dump_json() + "\n[1]\n")
    with pytest.raises(ValueError, match="unexpected record type"):
        read_stream(stream)
    outcome = RUNNER.invoke(app, ["report", str(stream)])
    assert outcome.exit_code == EXIT_USAGE, outcome.output
