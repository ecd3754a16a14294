"""A fault's account says what the harness was doing, and what the implementation said.

Garbage on stdout at the handshake was reported without the stderr lines that explain it
("Listening on port 8080" on stdout, the reason on stderr); a crash while the harness read the
counters for its own note was charged to whatever setup step was running, as if that step's
action had failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from typer.testing import CliRunner

from conformance.cli import EXIT_FAILURES, EXIT_UNUSABLE, app
from conformance.stream.results import Status
from conformance.stream.stream_integrity import read_stream
from tests.paths import FAKES

RUNNER = CliRunner()


def run_fake(fake: str, results: Path, *more: str) -> tuple[int, str]:
    impl = f"exec:{sys.executable} {FAKES / fake}"
    arguments = ["run", "--impl", impl, "--properties", "none", "--quiet", "--claim", "office"]
    outcome = RUNNER.invoke(app, [*arguments, "--results", str(results), *more])
    return outcome.exit_code, outcome.output


def test_garbage_at_the_handshake_is_reported_with_the_stderr_lines(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    code, said = run_fake("garbage_at_handshake.py", results)
    assert code == EXIT_UNUSABLE, said
    flat = " ".join(said.split())
    assert "'Listening on port 8080'" in flat and "last stderr lines:" in flat
    assert "garbage_at_handshake.py starting" in flat, "the stderr line the fake printed"
    cause = read_stream(results).header.implementation_error or ""
    assert "last stderr lines:" in cause and "garbage_at_handshake.py starting" in cause


def test_a_crash_in_the_harness_s_own_read_says_so(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    code, said = run_fake("crash_on_telemetry.py", results, "-k", "five_agent_wakes")
    assert code == EXIT_FAILURES, said
    (errored,) = [r for r in read_stream(results).scenarios if r.status is Status.ERRORED]
    assert errored.failure is not None
    observed = errored.failure.observed
    assert "before replying to telemetry" in observed
    assert "while the harness was reading the runs, counters" in observed
    assert "not the step's action" in observed and "metrics registry poisoned" in observed
