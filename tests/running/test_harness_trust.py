"""The pieces of a verdict the harness can trust, one at a time: what the implementation may
see, what is redacted, where scratch folders go, and the cross-check with pytest."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conformance.adapters.containment import Containment
from conformance.running.harness_memory import HarnessMemory
from conformance.scratch import PREFIX, sweep_abandoned
from conformance.stream.redaction import Redactor, masked_url
from conformance.stream.results import ResultsRun, ScenarioResult, Status
from tests.runs import a_header
from tests.sandbox import needs_bwrap

CONFORMANCE = Path(sys.executable).with_name("conformance")


def test_the_implementation_gets_only_the_allowed_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "glpat-secret")
    monkeypatch.setenv("CONFORMANCE_POSTGRES_URL", "postgresql://u:p@h/db")
    monkeypatch.setenv("WANTED", "yes")
    env = Containment(pass_env=("WANTED",)).environment(tmp_path)
    assert set(env) <= {"PATH", "HOME", "LANG", "TMPDIR", "CONFORMANCE_STORE", "WANTED"}
    assert env["WANTED"] == "yes" and env["CONFORMANCE_STORE"] == str(tmp_path)
    assert Path(env["TMPDIR"]).parent.name.startswith(PREFIX), "its temp files go with the run"
    assert Containment(sandbox=True).environment(tmp_path)["TMPDIR"] == "/tmp"


@needs_bwrap
def test_the_sandbox_binds_only_the_store_and_masks_the_stream(tmp_path: Path) -> None:
    """A stream is masked with /dev/null wherever it is: under /tmp too, since parts of /tmp the
    command needs (a checkout, a virtual environment) are shown again."""
    outside = Path(tempfile.mkdtemp(dir="/var/tmp")) / "results.jsonl"
    inside = Path(tempfile.mkdtemp(dir="/tmp")) / "results.jsonl"
    try:
        for stream in (outside, inside):
            stream.write_text("")
        containment = Containment(sandbox=True, hidden=(outside, inside))
        argv = containment.command(["impl", "--serve"], [tmp_path / "store"])
    finally:
        shutil.rmtree(outside.parent)
        shutil.rmtree(inside.parent)
    assert argv[-3:] == ["--", "impl", "--serve"]
    joined = " ".join(argv)
    assert f"--bind {tmp_path / 'store'} {tmp_path / 'store'}" in joined
    assert f"--ro-bind /dev/null {outside}" in joined
    assert f"--ro-bind /dev/null {inside.resolve()}" in joined
    for flag in ("--unshare-all", "--die-with-parent", "--cap-drop ALL", "--ro-bind / /"):
        assert flag in joined
    assert "--tmpfs /tmp" in joined
    assert Containment().command(["impl"], []) == ["impl"]


def test_secrets_are_redacted_and_harmless_values_kept() -> None:
    redactor = Redactor(
        {"TOKEN": "glpat-abcdefgh", "SHORT": "1", "PATH": "/usr/bin:/bin", "VENV": sys.prefix}
    )
    text = "glpat-abcdefgh at /usr/bin in " + sys.prefix + " with 1"
    assert redactor.text(text) == "[redacted $TOKEN] at /usr/bin in " + sys.prefix + " with 1"
    assert redactor.values({"a": ["x glpat-abcdefgh"], "b": 2}) == {
        "a": ["x [redacted $TOKEN]"],
        "b": 2,
    }
    shown = masked_url("postgresql+psycopg://kit:hunter2@db:5432/test")
    assert shown is not None and "hunter2" not in shown and "kit" in shown


def test_abandoned_run_folders_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    dead, alive = tmp_path / f"{PREFIX}dead", tmp_path / f"{PREFIX}alive"
    for folder in (dead, alive):
        folder.mkdir()
        (folder / ".lock").write_text("")
    holder = os.open(alive / ".lock", os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        assert sweep_abandoned(tmp_path) == [dead]
    finally:
        os.close(holder)
    assert alive.exists() and not dead.exists()


def memory_of(
    statuses: dict[str, tuple[Status, ...]], outcome: dict[str, str], followed: set[str]
) -> HarnessMemory:
    """A harness's memory of one record per status, each test's keys `<test><index>`, pytest
    having seen each test end as `outcome` says; the tests in `followed` followed a reading."""
    memory = HarnessMemory()
    memory.run = ResultsRun(
        header=a_header(),
        scenarios=[
            ScenarioResult(
                key=f"{test}{index}",
                criterion=None,
                feature="f",
                scenario=test,
                status=status,
                duration_s=0.0,
                followed=["WR-1=from-campaign"] if test in followed else [],
            )
            for test, test_statuses in statuses.items()
            for index, status in enumerate(test_statuses)
        ],
        footer=None,
    )
    memory.keys_by_nodeid = {
        f"t::{test}": [f"{test}{i}" for i in range(len(test_statuses))]
        for test, test_statuses in statuses.items()
    }
    memory.outcomes.update({f"t::{test}": seen for test, seen in outcome.items()})
    return memory


def test_a_record_that_contradicts_pytest_s_own_outcome_is_reported() -> None:
    memory = memory_of(
        {"a": (Status.PASSED,), "b": (Status.FAILED,), "c": (Status.PASSED,)},
        {"a": "passed", "b": "failed", "c": "failed"},
        followed=set(),
    )
    assert memory.disagreements() == ["c0: recorded passed, pytest saw it failed"]


def test_a_property_s_checked_records_agree_with_pytest_s_failure_only_beside_it() -> None:
    """A failing property's records of the criteria it did not break pass (their checks held) or
    are not applicable (none ran) while pytest saw it fail, as long as the failure shows on a
    sibling record; a failing property whose every record passed would hide it, and disagrees."""
    fanned = {
        "diverged": (Status.DIVERGED, Status.PASSED, Status.NOT_APPLICABLE),
        "stopped": (Status.FAILED, Status.PASSED, Status.NOT_APPLICABLE),
        "hidden": (Status.PASSED, Status.NOT_APPLICABLE),
    }
    memory = memory_of(fanned, dict.fromkeys(fanned, "failed"), followed={"diverged"})
    assert memory.disagreements() == [
        "hidden0: recorded passed, pytest saw it failed",
        "hidden1: recorded not_applicable, pytest saw it failed",
    ]


def test_the_stored_evidence_does_not_depend_on_quiet(tmp_path: Path) -> None:
    """CI templates pass --quiet; what a failure stores must be the same as without it."""
    evidence = {}
    for mode in ("--quiet", ""):
        results = tmp_path / f"results{mode}.jsonl"
        subprocess.run(
            [
                str(CONFORMANCE),
                "run",
                "--properties",
                "none",
                *([mode] if mode else []),
                "--impl",
                "mutant:allowance_off_by_one",
                "-k",
                "sixth",
                "--results",
                str(results),
            ],
            capture_output=True,
            timeout=300,
            check=False,
        )
        failed = [
            record
            for record in map(json.loads, results.read_text().splitlines())
            if record.get("status") == "failed"
        ]
        assert len(failed) == 1, failed
        evidence[mode] = failed[0]["evidence"]
    assert "expected" in evidence["--quiet"]
    assert evidence["--quiet"] == evidence[""]
