"""What a failing run prints: a line per scenario, then each failure's account once.

pytest's failure section (raw tracebacks through _pytest, Hypothesis' whole report) used to
come first, then the kit's account of the same failures; `--quiet` still printed pytest's
dots and its count line. One real run of a mutant (a few scenarios and a property check, so
that a property fans out to several criteria) is read as a person reads the terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.running.progress import progress_line
from conformance.stream.results import NOT_RUN, QUIET, ResultsRun, ScenarioResult
from conformance.stream.stream_integrity import read_stream
from tests.paths import CHECKOUT

CONFORMANCE = Path(sys.executable).with_name("conformance")
MUTANT = "mutant:allowance_off_by_one"
SELECTED = "runs_count_against or outofscope_wakes or same_instant_wakes or a_user_wake_naming"
"""An outline failing on several rows, and a failing property naming three criteria."""
PYTEST_WORDS = ("_pytest", "Traceback", "FAILURES", "short test summary", " PASSED", " FAILED")
HYPOTHESIS_WORDS = ("Falsifying example", "What Hypothesis noted", "Draw 1", "@reproduce_failure")


@dataclass(frozen=True)
class Printed:
    terminal: str
    run: ResultsRun
    folder: Path


def run_mutant(folder: Path, *more: str) -> Printed:
    results = folder / "results.jsonl"
    command = [str(CONFORMANCE), "run", "--impl", MUTANT, "--claim", "office", "-k", SELECTED]
    completed = subprocess.run(
        [*command, "--results", str(results), *more],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(CHECKOUT), "COLUMNS": "200"},
        check=False,
    )
    assert completed.returncode == 1, completed.stdout[-3000:] + completed.stderr[-3000:]
    return Printed(completed.stdout, read_stream(results), folder)


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> Printed:
    return run_mutant(tmp_path_factory.mktemp("verbose"), "--every-record")


def failing(run: ResultsRun) -> list[ScenarioResult]:
    return [r for r in run.scenarios if r.status not in QUIET and r.evidence != NOT_RUN]


def test_each_record_has_its_line_with_its_title_and_no_path(printed: Printed) -> None:
    lines = printed.terminal.splitlines()
    ran = [r for r in printed.run.scenarios if r.evidence != NOT_RUN]
    assert len(ran) >= 10, "the selection ran too little"
    for record in ran:
        assert lines.count(progress_line(record)) == 1, progress_line(record)
    assert any(r.title.endswith(": claimed") for r in ran), "outline rows named by their values"
    assert "<case>" not in printed.terminal
    assert "site-packages" not in printed.terminal
    assert str(CHECKOUT) not in printed.terminal


def test_by_default_a_failing_run_s_first_lines_are_its_failures(tmp_path: Path) -> None:
    """Two hundred passes no longer stand before the first failure: a line is printed for each
    record a person must read, as it is judged, and none for a pass."""
    default = run_mutant(tmp_path)
    lines = [line for line in default.terminal.splitlines() if line.strip()]
    failures = failing(default.run)
    assert failures and lines[0] == progress_line(failures[0]), lines[:3]
    for record in default.run.scenarios:
        shown = lines.count(progress_line(record))
        assert shown == (1 if record in failures else 0), progress_line(record)


def test_pytest_s_own_failure_report_is_not_printed(printed: Printed) -> None:
    for word in (*PYTEST_WORDS, *HYPOTHESIS_WORDS):
        assert word not in printed.terminal, word
    assert not any(line and set(line) <= set(".FsEx") for line in printed.terminal.splitlines())


def test_each_failure_s_account_is_printed_once(printed: Printed) -> None:
    failures = failing(printed.run)
    gherkin = [r for r in failures if r.steps]
    properties = [r for r in failures if not r.steps]
    checks = {(r.feature, r.scenario) for r in properties}
    assert len(gherkin) >= 5 and len(properties) > len(checks), [r.key for r in failures]
    for record in failures:
        heading = f"failed {record.feature}:{record.line} {record.title}\n"
        assert printed.terminal.count(heading) == 1, heading
    assert printed.terminal.count("\nStep: ") == len(gherkin), "every Gherkin failure, once"
    assert printed.terminal.count("\nProperty: ") == len(checks), "one account per property run"
    referred = printed.terminal.count("(the same counterexample as for ")
    assert referred == len(properties) - len(checks)
    assert "the same evidence as above" not in printed.terminal


def test_the_whole_evidence_stays_in_the_stream(printed: Printed) -> None:
    properties = [r for r in failing(printed.run) if not r.steps]
    assert any("What Hypothesis noted" in (r.evidence or "") for r in properties)
    kept = f"what Hypothesis noted and what was measured, is in {printed.folder / 'results.jsonl'}"
    assert kept in printed.terminal, printed.terminal[-600:]


def test_quiet_prints_the_verdict_summary_only(printed: Printed, tmp_path: Path) -> None:
    quiet = run_mutant(tmp_path, "--quiet")
    lines = [line for line in quiet.terminal.splitlines() if line.strip()]
    assert lines[0].startswith("REQ-OFFICE-ASSIGN-RATE-001"), lines[:3]
    assert not any(progress_line(r) in quiet.terminal for r in quiet.run.scenarios)
    assert lines[-1] == "run failed"
    assert "passed in" not in quiet.terminal and "failed in" not in quiet.terminal
    for word in PYTEST_WORDS:
        assert word not in quiet.terminal, word
