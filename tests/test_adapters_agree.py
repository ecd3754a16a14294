"""The whole suite, properties included, in-process and through `exec:` against the served
reference.

The protocol and the exec adapter must lose nothing: both runs exit 0, every
scenario gets the same status and so every criterion the same verdict. Both
runs are started at once, as subprocesses, the way a user would start them;
the `exec:` run is sandboxed (`--sandbox`, under bubblewrap) wherever
bubblewrap is installed, as it is in CI. `conformance report` of each stream
verifies it and exits with the run's verdict, 0.
It takes a minute or more on two busy cores: deselect it with `-m "not slow"`.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.registry import default_registry
from conformance.reports.summary import criterion_verdicts
from conformance.results import ResultsRun, Status
from conformance.stream_integrity import verify_stream
from tests.sandbox import SANDBOXED

CONFORMANCE = Path(sys.executable).with_name("conformance")
"""The kit's command, installed beside this interpreter by `pip install -e .`."""
RUN_TIMEOUT = 900
SEED = 20261130
"""One seed for both runs: their property checks try the same examples."""


@pytest.mark.slow
@pytest.mark.timeout(RUN_TIMEOUT + 60)
def test_in_process_and_exec_runs_give_identical_verdicts(tmp_path: Path) -> None:
    assert CONFORMANCE.exists(), f"{CONFORMANCE} is missing: install the kit with pip install -e ."
    serve = shlex.join([str(CONFORMANCE), "serve-reference"])
    sandbox = ["--sandbox"] if SANDBOXED else []
    seed = ["--seed", str(SEED)]
    in_process, over_exec = _run_at_once(
        {"in-process": seed, "exec": ["--impl", f"exec:{serve}", *sandbox, *seed]}, tmp_path
    ).values()
    for run in (in_process, over_exec):
        assert (run.header.properties, run.header.seed) == ("ci", SEED)
        checked = [r for r in run.scenarios if r.feature.startswith("properties/")]
        assert checked and all(r.status is Status.PASSED for r in checked), (
            "properties did not pass"
        )

    assert over_exec.header.provenance is not None
    assert over_exec.header.provenance.sandbox is SANDBOXED
    assert "reset" in (over_exec.header.description or {}).get("capabilities", [])
    assert in_process.scenarios, "no scenario ran"
    crashes = _needing_a_process(in_process)
    assert crashes, "the crash scenarios should be not applicable in-process"
    assert all(_statuses(over_exec)[key] is Status.PASSED for key in crashes)
    differences = _differences(_statuses(in_process), _statuses(over_exec), "scenario")
    differences += _differences(_verdicts(in_process), _verdicts(over_exec), "criterion")
    unexpected = [d for d in differences if not any(key in d for key in crashes)]
    assert not unexpected, "the runs disagree:\n" + "\n".join(unexpected)


def _needing_a_process(run: ResultsRun) -> set[str]:
    """Scenarios only `exec:` can run: the harness kills the implementation mid-batch."""
    return {
        result.key
        for result in run.scenarios
        if result.status is Status.NOT_APPLICABLE and "cannot kill" in (result.evidence or "")
    }


def _run_at_once(extra_arguments: dict[str, list[str]], scratch: Path) -> dict[str, ResultsRun]:
    """Start one `conformance run` per entry, wait for all, and read their results streams."""
    started = {}
    for name, arguments in extra_arguments.items():
        results, log = scratch / f"{name}.jsonl", scratch / f"{name}.log"
        command = [str(CONFORMANCE), "run", "--quiet", "--results", str(results), *arguments]
        with log.open("w") as output:
            process = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT, cwd=scratch
            )
        started[name] = (process, results, log)
    runs = {}
    try:
        for name, (process, results, log) in started.items():
            code = process.wait(timeout=RUN_TIMEOUT)
            assert code == 0, f"{name} run exited {code}:\n{log.read_text()[-3000:]}"
            report = subprocess.run(
                [str(CONFORMANCE), "report", str(results)], capture_output=True, check=False
            )
            assert report.returncode == 0, f"report of the {name} run exited {report.returncode}"
            runs[name] = verify_stream(results)
    finally:
        for process, _, _ in started.values():
            process.kill()
            process.wait()
    return runs


def _statuses(run: ResultsRun) -> dict[str, Status]:
    return {result.key: result.status for result in run.scenarios}


def _verdicts(run: ResultsRun) -> dict[str, Status]:
    return {
        verdict.criterion.id: verdict.status
        for verdict in criterion_verdicts(run, default_registry())
    }


def _differences(
    in_process: dict[str, Status], over_exec: dict[str, Status], what: str
) -> list[str]:
    return [
        f"{what} {key}: in-process {in_process.get(key)}, exec {over_exec.get(key)}"
        for key in sorted(in_process.keys() | over_exec.keys())
        if in_process.get(key) != over_exec.get(key)
    ]
