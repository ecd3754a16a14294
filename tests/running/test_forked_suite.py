"""The fork server behind `conformance strength`: runs pytest in a forked child per request,
reports its exit code, keeps its output out of the reply channel, and kills a run that hangs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.implementations import FAMILIES
from conformance.running.forked_suite import ForkServer, answer, can_fork
from tests.process_exit import outlives

pytestmark = pytest.mark.skipif(not can_fork(), reason="the fork server needs os.fork")

TESTS = """
import os, time

def test_passes():
    print("printed by the run")

def test_fails():
    assert False, "failed on purpose"

def test_leaves_a_mark():
    import conformance.suite as warm  # imported by the server before any fork
    assert not hasattr(warm, "LEFT_BY_A_RUN"), "an earlier run's state leaked into this one"
    warm.LEFT_BY_A_RUN = True

def test_finds_the_kit_s_families():
    from conformance.implementations import variants
    assert variants().members

def test_hangs(tmp_path):
    with open(os.environ["PID_FILE"], "w") as pid_file:
        pid_file.write(str(os.getpid()))
    time.sleep(60)
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ForkServer]:
    environment = {**os.environ, "PID_FILE": str(tmp_path / "pid")}
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    served = ForkServer(environment, workspace)
    try:
        yield served
    finally:
        served.close()


def _pytest_args(tmp_path: Path, select: str) -> list[str]:
    module = tmp_path / "test_sample.py"
    module.write_text(TESTS, encoding="utf-8")
    return [str(module), "-p", "no:cacheprovider", "-p", "no:cov", "-s", "-k", select]


def test_each_run_answers_pytest_s_exit_code_and_writes_its_output_to_its_log(
    server: ForkServer, tmp_path: Path
) -> None:
    log = tmp_path / "passes.log"
    assert server.run(_pytest_args(tmp_path, "passes"), tmp_path, log, 60) == (0, "")
    assert "printed by the run" in log.read_text(encoding="utf-8")
    failed = tmp_path / "fails.log"
    assert server.run(_pytest_args(tmp_path, "fails"), tmp_path, failed, 60) == (1, "")
    assert "failed on purpose" in failed.read_text(encoding="utf-8")


def test_no_run_sees_what_an_earlier_run_left_in_a_warm_module(
    server: ForkServer, tmp_path: Path
) -> None:
    for attempt in ("first", "second"):
        log = tmp_path / f"{attempt}.log"
        exit_code = server.run(_pytest_args(tmp_path, "leaves_a_mark"), tmp_path, log, 60)
        assert exit_code == (0, ""), log.read_text(encoding="utf-8")


def test_a_run_past_its_timeout_is_killed_and_the_server_goes_on(
    server: ForkServer, tmp_path: Path
) -> None:
    exit_code, why = server.run(_pytest_args(tmp_path, "hangs"), tmp_path, tmp_path / "h.log", 2)
    assert (exit_code, why) == (None, "no verdict within 2 s")
    hung = int((tmp_path / "pid").read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):
        os.kill(hung, 0)
    log = tmp_path / "after.log"
    assert server.run(_pytest_args(tmp_path, "passes"), tmp_path, log, 60) == (0, "")


def test_a_malformed_request_gets_a_reason_not_a_crash() -> None:
    assert answer('{"args": ["-q"]}') == {
        "exit": None,
        "error": "a malformed request: KeyError('cwd')",
    }
    assert answer("not json")["error"].startswith("a malformed request: JSONDecodeError")


def test_runs_do_not_see_the_folder_the_harness_runs_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout holds the kit's `.egg-info`, rewritten by any build made in it; found first
    on a run's path, halfway through a rewrite, it hides every family (a strength run in CI
    once ended `implementation unusable` so). The server starts in the workspace instead."""
    harness_folder = tmp_path / "checkout"
    shadow = harness_folder / "assign_delegate_conformance.egg-info"
    shadow.mkdir(parents=True)
    (shadow / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: assign-delegate-conformance\n")
    (shadow / "entry_points.txt").write_text(f"[{FAMILIES}]\n")  # as when half rewritten
    monkeypatch.chdir(harness_folder)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    served = ForkServer(dict(os.environ), workspace)
    try:
        log = tmp_path / "families.log"
        exit_code = served.run(_pytest_args(tmp_path, "families"), workspace, log, 60)
    finally:
        served.close()
    assert exit_code == (0, ""), log.read_text(encoding="utf-8")


HARNESS = """
import os, sys
from pathlib import Path
from conformance.running.forked_suite import ForkServer
tmp, args = Path(sys.argv[1]), sys.argv[2:]
server = ForkServer(dict(os.environ), tmp)
print(server._process.pid, flush=True)
server.run(args, tmp, tmp / "orphan.log", 600)
"""


def test_a_run_whose_harness_is_killed_is_killed_with_its_server(tmp_path: Path) -> None:
    """A strength run stopped by a signal to its own process left its servers' runs going, for
    hours at thorough. The server watches its parent while a run goes on."""
    environment = {**os.environ, "PID_FILE": str(tmp_path / "pid")}
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS, str(tmp_path), *_pytest_args(tmp_path, "hangs")],
        env=environment,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert harness.stdout is not None
    server = int(harness.stdout.readline())
    hung = _when_written(tmp_path / "pid")
    harness.kill()
    harness.wait()
    for pid in (hung, server):
        assert not outlives(pid, 10.0), f"process {pid} outlived the harness"


def _when_written(path: Path) -> int:
    deadline = time.monotonic() + 60
    while not path.exists() or not path.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.05)
    return int(path.read_text(encoding="utf-8"))
