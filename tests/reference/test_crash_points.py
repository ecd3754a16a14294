"""The crash-point hook: silent unless named, and then a SIGKILL of the process itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from reference.crash_points import CRASH_ENV, CrashPoint, reached


def test_every_point_is_a_no_op_when_no_crash_is_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CRASH_ENV, raising=False)
    for point in CrashPoint:
        reached(point)


def test_a_point_other_than_the_named_one_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CRASH_ENV, CrashPoint.GATE_COUNTED.value)
    reached(CrashPoint.CLAIM_COMMITTED)
    reached(CrashPoint.RESULT_WRITTEN)


def test_the_named_point_kills_the_process_with_sigkill() -> None:
    program = (
        "from reference.crash_points import CrashPoint, reached\n"
        "reached(CrashPoint.RESULT_WRITTEN)\n"
        "print('survived')\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program],
        env={**os.environ, CRASH_ENV: CrashPoint.RESULT_WRITTEN.value},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == -signal.SIGKILL
    assert "survived" not in completed.stdout
