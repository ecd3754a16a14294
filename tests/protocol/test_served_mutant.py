"""`serve-reference --mutant NAME` serves the named defect over the wire, and nothing else."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from conformance.adapters.exec_adapter import ExecDriver
from conformance.cli import app
from conformance.driver import Outcome

SERVE = [sys.executable, "-m", "conformance.wire.serve"]


def sixth_agent_wake(command: list[str], store: Path) -> Outcome:
    driver = ExecDriver(command, store)
    try:
        driver.create_workspace("w")
        driver.create_agent("w", "ada", can_assign_tasks=True)
        driver.create_task("w", "T")
        outcomes = []
        for _ in range(6):
            result = driver.assign_task("T", "ada", acting_agent_id="ada")
            assert result.wake is not None
            outcomes.append(result.wake.outcome)
            driver.advance_clock(timedelta(minutes=1))
        assert outcomes[:5] == [Outcome.QUEUED] * 5, outcomes
        return outcomes[5]
    finally:
        driver.close()


def test_the_served_mutant_misbehaves_where_the_reference_does_not(tmp_path: Path) -> None:
    assert sixth_agent_wake(SERVE, tmp_path / "reference") is Outcome.RATE_LIMITED
    mutant = [*SERVE, "--mutant", "refusal_reported_as_none"]
    assert sixth_agent_wake(mutant, tmp_path / "mutant") is Outcome.NONE


def test_an_unknown_mutant_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [*SERVE, "--mutant", "no_such_mutant"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env={"CONFORMANCE_STORE": str(tmp_path), "PATH": ""},
        check=False,
    )
    assert result.returncode == 2
    assert "no mutant named 'no_such_mutant'" in result.stderr


def test_serve_reference_offers_the_mutant_option() -> None:
    outcome = CliRunner().invoke(app, ["serve-reference", "--help"])
    assert outcome.exit_code == 0
    assert "--mutant" in outcome.output, outcome.output
