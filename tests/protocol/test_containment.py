"""Hostile implementations, run as a user runs the kit: `conformance run` in a subprocess.

Each fake here attacks the harness rather than the spec: it forges the results
stream, prints the harness's secrets, escapes its process group, or floods the
harness's memory. Each test shows the run failing (or the attack contained),
with a clear cause, nothing leaked and no process left behind.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.scratch import PREFIX, sweep_abandoned
from conformance.stream.stream_integrity import verify_stream
from tests.sandbox import needs_bwrap

pytestmark = pytest.mark.cost(seconds=30)

FAKES = Path(__file__).parent / "fakes"
CONFORMANCE = Path(sys.executable).with_name("conformance")
SELECTION = "sixth or admitted"
"""A handful of Office scenarios: long enough for a watcher to act, short enough to be cheap."""
RUN_TIMEOUT = 180
SECRET = "glpat-9f8e7d6c5b4a3f2e1d0c"


def fake(name: str) -> str:
    return "exec:" + shlex.join([sys.executable, str(FAKES / name)])


def run_kit(
    tmp_path: Path, impl: str, *options: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    results = tmp_path / "results.jsonl"
    command = [str(CONFORMANCE), "run", "--quiet", "-k", SELECTION, "--impl", impl]
    completed = subprocess.run(
        [*command, "--results", str(results), *options],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env={**os.environ, **(env or {})},
        cwd=tmp_path,
        check=False,
    )
    return completed, results


def run_noting_pids(
    tmp_path: Path, script: str, variable: str, *options: str, env: dict[str, str] | None = None
) -> tuple[Path, subprocess.CompletedProcess[str], Path]:
    """Run a fake that notes its processes' pids in the folder `variable` names (passed on)."""
    pids = tmp_path / "pids"
    pids.mkdir()
    environment = {variable: str(pids), **(env or {})}
    completed, results = run_kit(
        tmp_path, fake(script), "--pass-env", variable, *options, env=environment
    )
    return pids, completed, results


def processes_running(script: str, where: Path | None = None) -> list[int]:
    """Every live process whose command line names `script` (zombies are not alive); with
    `where`, only those working in that folder (another test's run works in its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cwd = (entry / "cwd").readlink() if where is not None else None
        except OSError:
            continue
        if script.encode() in cmdline and state != "Z" and cwd == where:
            found.append(int(entry.name))
    return found


@pytest.fixture
def no_survivors(tmp_path: Path) -> Iterator[list[str]]:
    """Names the fake scripts a test runs; after it, none of their processes may be alive."""
    scripts: list[str] = []
    yield scripts
    survivors = {script: processes_running(script, tmp_path.resolve()) for script in scripts}
    for pids in survivors.values():
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
    assert not any(survivors.values()), f"processes outlived the run: {survivors}"


def scenario_statuses(results: Path) -> dict[str, str]:
    records = [json.loads(line) for line in results.read_text().splitlines()]
    return {r["key"]: r["status"] for r in records if r["type"] == "scenario"}


def test_a_forged_full_pass_fails_the_run_and_the_harness_keeps_its_own_records(
    tmp_path: Path, no_survivors: list[str]
) -> None:
    no_survivors.append("forger.py")
    pids, completed, results = run_noting_pids(
        tmp_path, "forger.py", "FORGER_PIDS", "--junit", str(tmp_path / "junit.xml")
    )

    assert list(pids.iterdir()), "the forger never found the stream: the test proves nothing"
    assert completed.returncode == 1, completed.stdout[-2000:]
    assert "integrity:" in completed.stdout and "rewritten from the harness" in completed.stdout
    statuses = scenario_statuses(results)
    ran = {key: status for key, status in statuses.items() if status != "undefined"}
    assert ran and "passed" not in ran.values(), ran
    run = verify_stream(results)
    assert run.footer is not None and run.footer.integrity is not None
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert sum(int(suite.get("errors", "0")) for suite in junit) >= len(ran)
    report = subprocess.run(
        [str(CONFORMANCE), "report", str(results)], capture_output=True, text=True, check=False
    )
    assert report.returncode == 1, report.stdout[-2000:]


@needs_bwrap
def test_in_the_sandbox_the_forger_cannot_even_find_the_stream(
    tmp_path: Path, no_survivors: list[str]
) -> None:
    no_survivors.append("forger.py")
    completed, results = run_kit(tmp_path, fake("forger.py"), "--sandbox")

    assert completed.returncode == 1, completed.stdout[-2000:]
    assert "integrity:" not in completed.stdout, "the sandboxed forger reached the stream"
    run = verify_stream(results)
    assert run.header.provenance is not None and run.header.provenance.sandbox
    assert "passed" not in {s for s in scenario_statuses(results).values() if s != "undefined"}


def test_the_implementation_gets_no_secret_and_a_secret_it_is_given_is_redacted(
    tmp_path: Path, no_survivors: list[str]
) -> None:
    no_survivors.append("secret_printer.py")
    database = "postgresql+psycopg://kit:hunter2-password@127.0.0.1:5432/test"
    secrets = {"DEPLOY_TOKEN": SECRET, "CONFORMANCE_POSTGRES_URL": database}
    withheld = tmp_path / "withheld"
    withheld.mkdir()
    completed, results = run_kit(
        withheld, fake("secret_printer.py"), "--junit", str(withheld / "junit.xml"), env=secrets
    )
    assert completed.returncode == 3, completed.stdout[-2000:]  # it crashes every scenario
    evidence = results.read_text()
    assert "PATH=" in evidence, "the fake's environment dump is not in the evidence"
    assert "DEPLOY_TOKEN" not in evidence and SECRET not in evidence
    assert "hunter2" not in evidence

    given = tmp_path / "given"
    given.mkdir()
    completed, results = run_kit(
        given,
        fake("secret_printer.py"),
        "--pass-env",
        "DEPLOY_TOKEN",
        "--junit",
        str(given / "junit.xml"),
        env=secrets,
    )
    stored = results.read_text() + (given / "junit.xml").read_text()
    assert "DEPLOY_TOKEN=[redacted $DEPLOY_TOKEN]" in stored
    assert SECRET not in stored
    assert "\x1b" not in stored, "terminal colour codes reached the stored evidence"
    ET.parse(given / "junit.xml")  # colour codes would make this invalid XML
    if shutil.which("xmllint"):
        subprocess.run(["xmllint", "--noout", str(given / "junit.xml")], check=True)


def test_a_process_that_escapes_its_group_does_not_outlive_the_run(
    tmp_path: Path, no_survivors: list[str]
) -> None:
    no_survivors.append("escaper.py")
    pids, completed, _ = run_noting_pids(
        tmp_path, "escaper.py", "ESCAPER_PIDS", env={"CONFORMANCE_REQUEST_TIMEOUT": "1"}
    )
    assert completed.returncode in (1, 3), completed.stdout[-2000:]
    kinds = [path.read_text() for path in pids.iterdir()]
    assert "escaped" in kinds and "implementation" in kinds, kinds


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)])
def test_a_sigkilled_harness_takes_its_implementation_with_it(
    tmp_path: Path, sandbox: bool
) -> None:
    """Without a sandbox the implementation dies with the harness (PR_SET_PDEATHSIG), but a
    process that escaped it can outlive both: only the sandbox's PID namespace ends that too.
    Either way the next run removes the dead harness's folders."""
    pids = tmp_path / "pids"
    pids.mkdir()

    def mine() -> list[int]:
        return processes_running("escaper.py", tmp_path.resolve())

    command = [str(CONFORMANCE), "run", "--quiet", "-k", SELECTION, "--impl", fake("escaper.py")]
    command += ["--sandbox"] if sandbox else ["--pass-env", "ESCAPER_PIDS"]
    env = {**os.environ, "ESCAPER_PIDS": str(pids), "CONFORMANCE_REQUEST_TIMEOUT": "60"}
    harness = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        if sandbox:  # bubblewrap, its namespace's init, the fake and the process it left
            hung = _wait_for(
                lambda: (
                    len(set(processes_running("escaper.py", tmp_path.resolve())) - {harness.pid})
                    >= 4
                )
            )
        else:
            hung = _wait_for(lambda: "escaped" in {p.read_text() for p in pids.iterdir()})
        assert hung, "the escaper never started its processes"
        folders = _run_folders_of(harness.pid)
        assert folders, "the harness holds no run folder: the sweep below would prove nothing"
        harness.kill()
        harness.wait()
        if sandbox:
            assert _wait_for(lambda: not processes_running("escaper.py", tmp_path.resolve())), (
                "the sandbox survived"
            )
        else:
            implementation = [p for p in pids.iterdir() if p.read_text() == "implementation"]
            assert implementation
            assert _wait_for(lambda: not any(_alive(int(p.name)) for p in implementation))
        removed = sweep_abandoned()
        assert set(folders) <= set(removed), (folders, removed)
    finally:
        harness.kill()
        for pid in mine():
            os.kill(pid, signal.SIGKILL)


FLOOD_GROWTH_MIB = 48
"""A fifth of the flood: a harness that held that much of it at once fails the check."""


def test_a_spare_that_floods_stdout_before_its_handshake_cannot_swell_the_harness(
    tmp_path: Path,
) -> None:
    """256 MB written before the handshake, into a harness that reads at most two lines ahead:
    its peak memory stays near its size at rest, and the restart reports the garbage. The
    size at rest is measured in the same process (after its imports and the spare's launch),
    not assumed: it varies with the interpreter's build and what traces it, and CI's clean
    clone measured 177 MiB peaks where this machine's checkout measures 80."""
    probe = f"""
import resource, sys
from pathlib import Path
from conformance.adapters.exec_adapter import ExecDriver
from conformance.adapters.faults import ImplementationFault
driver = ExecDriver([sys.executable, {str(FAKES / "flooding_spare.py")!r}],
    Path({str(tmp_path / "store")!r}), prelaunch=True, restarts_ahead=1, timeout=5)
import time; time.sleep(3)
print("rest_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
try:
    driver.restart()
    print("restarted")
except ImplementationFault as fault:
    print("fault", fault.kind.value)
driver.close()
print("peak_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    lines = completed.stdout.split()
    rest_mib, peak_mib = (
        int(lines[lines.index(f"{kind}_kib") + 1]) / 1024 for kind in ("rest", "peak")
    )
    assert "fault" in lines and "garbage" in lines, completed.stdout
    assert peak_mib - rest_mib < FLOOD_GROWTH_MIB, (
        f"{rest_mib:.0f} MiB at rest, {peak_mib:.0f} at peak"
    )


def _run_folders_of(harness: int) -> list[Path]:
    """The run folders the harness process holds open (its lock file)."""
    folders = []
    for fd in Path(f"/proc/{harness}/fd").iterdir():
        try:
            target = fd.readlink()
        except OSError:
            continue
        if target.parent.name.startswith(PREFIX):
            folders.append(target.parent)
    return folders


def _wait_for(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
