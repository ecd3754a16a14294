"""Wrong or incomplete implementations through the harness: none of them gets a pass.

Each adversary stands for a false pass found by writing it: answering every
concurrent call "indeterminate", or declaring too little for some criteria to
be verified at all.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import EXIT_FAILURES, EXIT_OK, app
from conformance.stream.results import Status
from conformance.stream.stream_integrity import verify_stream
from conformance.strength import Target, run_target

pytestmark = pytest.mark.cost(seconds=20)

HERE = Path(__file__).parent


def test_a_batch_answered_only_with_unknown_outcomes_is_never_a_pass(tmp_path: Path) -> None:
    command = shlex.join([sys.executable, str(HERE / "indeterminate_batches.py")])
    races = {
        "AC-OFFICE-ASSIGN-RATE-002.1": "office_*.feature",
        "AC-ARMONIA-WORKREQ-001.9": "armonia_*.feature",
    }
    for criterion, features in races.items():
        run = run_target(
            Target(f"exec:{command}", (features,), criterion), tmp_path, None, timeout_s=300
        )
        assert run.error is None, run.error
        assert run.results is not None
        race = [
            s
            for s in run.results.scenarios
            if " at once " in s.scenario and s.criterion == criterion
        ]
        errored = [s for s in race if s.status is Status.ERRORED]
        assert errored, "no race scenario ran"
        # A strength run stops at its first failure: the races after it did not run.
        assert all(s.status in (Status.ERRORED, Status.UNDEFINED) for s in race), race
        assert "too many outcomes unknown" in (errored[0].evidence or "")


UNVERIFIABLE = {
    "AC-OFFICE-ASSIGN-RATE-001.2": "concurrent-may-exceed",
    "AC-OFFICE-ASSIGN-RATE-002.1": "over-admission-bounded",
    "AC-OFFICE-ASSIGN-RATE-002.2": "fail-open",
    "AC-OFFICE-ASSIGN-RATE-002.4": "restart",
}
"""What an office adapter with no hook, no restart and no concurrency leaves unverified, by a
clause of each that nothing else can exercise."""


@pytest.mark.timeout(300)
def test_a_run_that_cannot_verify_a_criterion_fails_and_names_it(tmp_path: Path) -> None:
    impl = "python:tests.adversaries.without_capabilities:office_without_hooks"
    results = tmp_path / "results.jsonl"
    outcome = CliRunner().invoke(
        app,
        [
            *("run", "--impl", impl, "--claim", "office", "--quiet", "--properties", "none"),
            *("--results", str(results)),
        ],
    )
    assert outcome.exit_code == EXIT_FAILURES, outcome.output
    assert "unverified: AC-OFFICE-ASSIGN-RATE-002.2" in outcome.output
    assert "hook:count_read_failure" in outcome.output
    header = verify_stream(results).header
    assert header.claim.specs == ["office"]

    # the clauses only concurrency, a restart or the fault hook can exercise: each unverified,
    # and only all four allowed make the narrowed claim pass
    for criterion, clause in UNVERIFIABLE.items():
        assert f"unverified: {criterion}: no check verified {criterion}/{clause}" in outcome.output
    allowed = CliRunner().invoke(
        app,
        [
            *("run", "--properties", "none", "--impl", impl, "--claim", "office", "--quiet"),
            *(f"--allow-unverified={criterion}" for criterion in UNVERIFIABLE),
            *("--results", str(results)),
        ],
    )
    assert allowed.exit_code == EXIT_OK, allowed.output
    assert verify_stream(results).header.claim.allow_unverified == list(UNVERIFIABLE)


def test_a_failure_shows_the_implementation_s_own_words_and_a_property_s_error_is_gherkin(
    tmp_path: Path,
) -> None:
    """An implementation that fails every second assignment with an error of its own, saying
    why on stderr: a scenario's account and a property's carry the error's message and the
    stderr line; the property's counterexample is a Gherkin scenario although no check broke,
    and its error fails the run once, named by the property, blaming none of its criteria."""
    impl = f"exec:{shlex.join([sys.executable, str(HERE / 'grumbling.py')])}"
    results = tmp_path / "results.jsonl"
    outcome = CliRunner().invoke(
        app,
        [
            *("run", "--impl", impl, "--claim", "office", "--properties", "ci"),
            *("-k", "refused_reassignment or admission_decisions", "--results", str(results)),
        ],
    )
    assert outcome.exit_code == EXIT_FAILURES, outcome.output
    assert "records disagree" not in outcome.output, outcome.output
    assert "The implementation's stderr (its last lines):" in outcome.output
    progress = [line for line in outcome.output.splitlines() if "(the property)" in line]
    assert len(progress) == 1 and progress[0].startswith("failed"), progress
    ran = [s for s in verify_stream(results).scenarios if s.status is not Status.UNDEFINED]
    (scenario,) = [s for s in ran if s.steps]
    assert scenario.status is Status.FAILED and scenario.failure is not None
    assert "the task row is locked" in scenario.failure.observed
    assert "grumbler: lock wait timeout on task T-100" in scenario.failure.stderr
    searched = [s for s in ran if not s.steps]
    assert searched and all(s.status is not Status.FAILED for s in searched), searched
    assert {s.ended for s in searched} == {Status.FAILED}
    failure = searched[0].failure
    assert failure is not None and "the task row is locked" in failure.observed
    assert failure.counterexample.startswith("Scenario: every admission decision")
    assert 'agent "assigner" assigns task "t1"' in failure.counterexample
    said = failure.stderr
    assert any(line.startswith("grumbler: lock wait timeout") for line in said), said
    markdown = tmp_path / "report.md"
    CliRunner().invoke(app, ["report", str(results), "--markdown", str(markdown)])
    shown = markdown.read_text()
    assert shown.count("as a counterexample showed") == 1, "the property's account, once"
    assert "the property check 'every admission decision" in shown
    summary = next(line for line in shown.splitlines() if "the rolling window's —" in line)
    assert "[AC-" not in summary, "an error that blames no criterion is named by the property"
