"""The kit as implementers install it: a wheel in a fresh virtual environment, run elsewhere.

The wheel is built from this checkout, installed into a new virtual environment
outside it, and `conformance run` is started from an unrelated empty folder
against the served reference through `exec:`. Everything the run needs (the
feature files, the step modules, the registry, the schemas, the pytest
configuration) must come from the installed package. It takes a minute or more:
deselect it with `-m "not slow"`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.stream_integrity import verify_stream

CHECKOUT = Path(__file__).resolve().parent.parent
TIMEOUT = 600


@pytest.mark.slow
@pytest.mark.timeout(3 * TIMEOUT)
def test_an_installed_wheel_runs_the_whole_suite_from_any_folder(tmp_path: Path) -> None:
    wheels, venv, elsewhere = tmp_path / "wheels", tmp_path / "venv", tmp_path / "elsewhere"
    elsewhere.mkdir()
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, CHECKOUT)
    run(sys.executable, "-m", "venv", venv)
    (wheel,) = wheels.glob("*.whl")
    run(venv / "bin" / "pip", "install", "-q", wheel)
    results = elsewhere / "results.jsonl"
    served = "exec:conformance serve-reference"  # found beside the venv's interpreter
    arguments = ["run", "--quiet", "--impl", served, "--results", results]
    completed = run(venv / "bin" / "conformance", *arguments, cwd=elsewhere, check=False)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    provenance = verify_stream(results).header.provenance
    assert provenance is not None
    assert any(path.startswith("conformance/features/") for path in provenance.suite)
    assert any((venv / "lib").glob("python3*/site-packages/conformance/features/*.feature"))
    assert "claims office and work-requests: 38 of 38 criteria passed" in completed.stdout


def run(
    *command: object, cwd: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=cwd or CHECKOUT,
        check=check,
    )
