"""A misbehaving implementation gives a typed fault, in time, and the harness goes on.

Each fake in `fakes/` breaks the protocol in one way on `get_task` and behaves
on everything else, so each test can show the driver usable before the fault,
the fault itself, and a working restart after it.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from conformance.adapters.exec_adapter import ExecDriver
from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.driver import DriverError
from tests.process_exit import outlives

FAKES = Path(__file__).parent / "fakes"
TIMEOUT = 1.0
SLACK = 3.0
"""Kill, reap and stderr drain on top of the timeout, on a loaded two-core machine."""


def launch(fake: str, store: Path, **options: float) -> ExecDriver:
    return ExecDriver([sys.executable, str(FAKES / fake)], store, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fake", "kind", "in_message", "in_stderr"),
    [
        ("crash.py", FaultKind.CRASH, "exited with status 2", "panic: runtime error"),
        ("orphaning.py", FaultKind.CRASH, "exited with status 4", "starting"),
        ("hang.py", FaultKind.TIMEOUT, "no reply to get_task (seq 4) within 1 s", "child pid"),
        ("garbage.py", FaultKind.GARBAGE, "502 Bad Gateway", "starting"),
        ("wrong_seq.py", FaultKind.WRONG_SEQ, "expected the reply to seq 4, got seq 3", "starting"),
        ("schema_invalid.py", FaultKind.SCHEMA_INVALID, "result", "starting"),
    ],
)
def test_a_broken_reply_is_a_typed_fault_within_the_timeout_and_a_restart_recovers(
    tmp_path: Path, fake: str, kind: FaultKind, in_message: str, in_stderr: str
) -> None:
    driver = launch(fake, tmp_path / "store", timeout=TIMEOUT)
    try:
        assert driver.telemetry() == ""
        started = time.monotonic()
        with pytest.raises(ImplementationFault) as caught:
            driver.get_task("t-1")
        assert time.monotonic() - started < TIMEOUT + SLACK
        fault = caught.value
        assert not isinstance(fault, DriverError)
        assert fault.kind is kind
        assert in_message in fault.message
        assert any(in_stderr in line for line in fault.stderr_tail), fault.stderr_tail
        assert f"({kind.value})" in fault.evidence() and "last stderr lines" in fault.evidence()

        with pytest.raises(ImplementationFault, match="earlier fault") as again:
            driver.telemetry()
        assert again.value.kind is kind

        driver.restart()
        assert driver.telemetry() == ""
    finally:
        driver.close()


def test_a_hang_kills_the_whole_process_group(tmp_path: Path) -> None:
    driver = launch("hang.py", tmp_path / "store", timeout=TIMEOUT)
    try:
        with pytest.raises(ImplementationFault) as caught:
            driver.get_task("t-1")
    finally:
        driver.close()
    child = int(re.findall(r"child pid (\d+)", "\n".join(caught.value.stderr_tail))[0])
    assert not outlives(child)


def test_noise_on_stderr_neither_blocks_nor_grows_without_bound(tmp_path: Path) -> None:
    driver = launch("noisy.py", tmp_path / "store", timeout=TIMEOUT * 5)
    try:
        for _ in range(5):
            assert driver.get_task("t-1").task_id == "t-1"
    finally:
        driver.close()
    tail = driver.stderr_tail()
    assert len(tail) == 20
    assert tail[-1].startswith("debug: request 7 line 4999")


@pytest.mark.parametrize(
    ("fake", "kind", "in_message"),
    [
        ("exit_at_start.py", FaultKind.CRASH, "before replying to handshake"),
        ("wrong_version.py", FaultKind.SCHEMA_INVALID, "protocol_version"),
        ("refuses_clock.py", FaultKind.UNUSABLE, "reads the wall clock"),
    ],
)
def test_an_implementation_that_cannot_start_is_a_typed_fault(
    tmp_path: Path, fake: str, kind: FaultKind, in_message: str
) -> None:
    with pytest.raises(ImplementationFault) as caught:
        launch(fake, tmp_path / "store", startup_timeout=TIMEOUT * 5)
    assert caught.value.kind is kind
    assert in_message in caught.value.message


def test_the_store_of_an_implementation_that_exits_is_quoted_from_stderr(tmp_path: Path) -> None:
    with pytest.raises(ImplementationFault) as caught:
        launch("exit_at_start.py", tmp_path / "store")
    assert caught.value.stderr_tail == ["fatal: cannot open store: permission denied"]


def test_a_command_that_does_not_exist_is_a_launch_failure(tmp_path: Path) -> None:
    with pytest.raises(ImplementationFault) as caught:
        ExecDriver([str(tmp_path / "no-such-implementation")], tmp_path / "store")
    assert caught.value.kind is FaultKind.UNUSABLE
    assert "no-such-implementation" in caught.value.message
