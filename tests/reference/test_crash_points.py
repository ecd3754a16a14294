"""The crash-point hook: silent unless named at launch, and then a SIGKILL of the process itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conformance.reference.crash_points import CRASH_ENV, CrashPoint


def run_reaching(points: list[CrashPoint], named: str | None) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter launched with `named` in the environment reaches `points` in turn."""
    program = "\n".join(
        [
            "from conformance.reference.crash_points import CrashPoint, reached",
            *(f"reached(CrashPoint.{point.name})" for point in points),
            "print('survived')",
        ]
    )
    environment = {key: value for key, value in os.environ.items() if key != CRASH_ENV}
    if named is not None:
        environment[CRASH_ENV] = named
    return subprocess.run(
        [sys.executable, "-c", program],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("named", [None, "", "no_such_point"])
def test_every_point_is_a_no_op_when_no_crash_is_asked_for(named: str | None) -> None:
    completed = run_reaching(list(CrashPoint), named)
    assert (completed.returncode, completed.stdout) == (0, "survived\n"), completed.stderr


def test_a_point_other_than_the_named_one_is_a_no_op() -> None:
    others = [CrashPoint.CLAIM_COMMITTED, CrashPoint.RESULT_WRITTEN]
    completed = run_reaching(others, CrashPoint.GATE_COUNTED.value)
    assert (completed.returncode, completed.stdout) == (0, "survived\n"), completed.stderr


def test_the_named_point_kills_the_process_with_sigkill() -> None:
    completed = run_reaching([CrashPoint.RESULT_WRITTEN], CrashPoint.RESULT_WRITTEN.value)
    assert completed.returncode == -signal.SIGKILL
    assert "survived" not in completed.stdout
