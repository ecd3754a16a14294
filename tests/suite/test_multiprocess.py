"""The scenarios of several processes on one store, for any implementation (`multiprocess`):
in-process (where only the served reference declares it) they do not apply and say why; over
the wire a mutant whose reservation is a
read-then-write loses an update between processes and fails; the reference passes them
(tests/test_wheel.py runs the whole suite so)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.stream.results import ResultsRun, Status
from conformance.stream.stream_integrity import verify_stream

SELECTION = "several_processes"


def run(tmp_path: Path, impl: str, selection: str = SELECTION) -> tuple[int, ResultsRun]:
    results = tmp_path / "results.jsonl"
    completed = subprocess.run(
        [
            *(sys.executable, "-c", "from conformance.cli import main; main()", "run"),
            *("--impl", impl, "-k", selection, "--properties", "none", "--quiet"),
            *("--results", str(results)),
        ],
        cwd=tmp_path,
        capture_output=True,
        check=False,
        timeout=600,
    )
    return completed.returncode, verify_stream(results)


def selected(run_: ResultsRun) -> list[tuple[str, Status, str]]:
    return [
        (result.scenario, result.status, result.evidence or "")
        for result in run_.scenarios
        if "several processes" in result.scenario
    ]


def test_in_process_the_scenarios_of_several_processes_are_not_applicable_and_say_why(
    tmp_path: Path,
) -> None:
    _, outcome = run(tmp_path, "reference")
    scenarios = selected(outcome)
    assert len(scenarios) == 3
    for _, status, evidence in scenarios:
        assert status is Status.NOT_APPLICABLE
        assert evidence == "the implementation does not declare multiprocess"


@pytest.mark.slow
def test_a_lost_update_between_processes_fails_the_delegation_scenario(tmp_path: Path) -> None:
    served = f"exec:{sys.executable} -m conformance.wire.serve --mutant budget_lost_update"
    code, outcome = run(tmp_path, served, f"{SELECTION} and delegations")
    failed = [(name, status) for name, status, _ in selected(outcome) if status is Status.FAILED]
    assert code == 1 and len(failed) == 1, selected(outcome)
    record = next(r for r in outcome.scenarios if r.status is Status.FAILED)
    assert "AC-ARMONIA-WORKREQ-001.9/no-budget-created" in record.violated
    assert "killed in the middle of a call" in (record.evidence or "")
