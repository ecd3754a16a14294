"""A run writes the files it was asked to write, and nothing else, where it runs.

Hypothesis keeps a storage folder (`.hypothesis/`: the constants it gleans from the modules it
tests, an example database) in the working folder by default; a CI job that runs the kit from
the root of its checkout would find it there, next to its own files. The harness keeps it in
its run folder, which goes when the run does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.stream.results import Status
from conformance.stream.stream_integrity import verify_stream

CONFORMANCE = Path(sys.executable).with_name("conformance")


@pytest.mark.timeout(600)
def test_a_run_from_an_empty_folder_leaves_only_the_files_it_was_asked_to_write(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    command = [str(CONFORMANCE), "run", "--quiet", "--properties", "ci", "--seed", "1"]
    command += ["-k", "sixth or test_admission_decisions_match_the_rolling_window"]
    command += ["--results", "results.jsonl", "--junit", "junit.xml"]
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=600, cwd=folder, check=False
    )
    said = completed.stdout[-3000:] + completed.stderr[-3000:]
    stream = verify_stream(folder / "results.jsonl")
    properties = [r for r in stream.scenarios if r.feature.startswith("properties/")]
    assert any(r.status is Status.PASSED for r in properties), said
    left = sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))
    assert left == ["junit.xml", "results.jsonl"], left[:20]
