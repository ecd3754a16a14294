"""A property's search outliving the suite's per-test timeout still replays.

The suite's timeout (suite.ini, 300 s) must not stop a thorough search inside whichever example
is running: Hypothesis would take the interruption for that example's failure, replay it, see it
pass, and every record of the property would come out `errored` (FlakyFailure, or
FlakyStrategyDefinition when the alarm came inside a draw). So the bound is on each example, not
on the search. PYTEST_TIMEOUT, which pytest-timeout reads before the ini file, plays a slow
machine here: one second, for a search of a few.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conformance.stream.results import Status
from conformance.stream.stream_integrity import verify_stream

TITLE = "same-instant wakes admit as many whatever their order"

HANGING = '''
import time
from conformance.adapters.factory import open_reference

CALLS = [0]


def factory(database, scratch):
    """The reference, whose 40th assignment never answers."""
    driver = open_reference(database, scratch)
    assign = driver.assign_task

    def assign_task(*args, **kwargs):
        CALLS[0] += 1
        if CALLS[0] == 40:
            time.sleep(3600)
        return assign(*args, **kwargs)

    driver.assign_task = assign_task
    return driver
'''


def run_property(folder: Path, timeout: str, *arguments: str) -> set[Status]:
    """How the search ended, by its records: a fault of the search as a whole (`ended`, which
    fails the run once), else each record's own verdict."""
    stream = folder / "results.jsonl"
    finished = subprocess.run(
        [
            sys.executable,
            *("-c", "from conformance.cli import main; main()", "run"),
            *("--seed", "1", "-k", "same_instant", "--quiet", "--results", str(stream)),
            *arguments,
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={
            **os.environ,
            "PYTEST_TIMEOUT": timeout,
            "PYTHONPATH": os.pathsep.join([str(folder), *sys.path]),
        },
    )
    records = [r for r in verify_stream(stream).scenarios if r.scenario == TITLE]
    assert records, finished.stdout + finished.stderr
    return {record.ended or record.status for record in records}


def test_a_search_longer_than_the_suite_timeout_is_not_cut_short(tmp_path: Path) -> None:
    """Fifteen examples of about 0.15 s each, under a timeout of one second."""
    assert run_property(tmp_path, "1") == {Status.PASSED}


def test_an_example_that_hangs_ends_the_search_as_a_timeout(tmp_path: Path) -> None:
    """The same bound applies to each example: a hang ends the search at once, as a timeout,
    not as a failure Hypothesis would replay (and wait for again) and call flaky."""
    (tmp_path / "hanging_reference.py").write_text(HANGING, encoding="utf-8")
    impl = "python:hanging_reference:factory"
    assert run_property(tmp_path, "2", "--impl", impl) == {Status.TIMEOUT}
