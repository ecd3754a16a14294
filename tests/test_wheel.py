"""The kit as implementers install it: a wheel in a fresh virtual environment, run elsewhere.

The wheel is built from this checkout and installed into a new virtual
environment outside it; `conformance run` is started from an unrelated empty
folder against the served reference through `exec:`. Everything the run needs
(the feature files, the step modules, the registry, the schemas, the pytest
configuration) must come from the installed package. The same installed kit
then runs the shell steps of the repository's GitHub Action (action.yml), as a
runner would. It takes a minute or more: deselect it with `-m "not slow"`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.stream_integrity import verify_stream

CHECKOUT = Path(__file__).resolve().parent.parent
TIMEOUT = 600
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3 * TIMEOUT)]


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    folder = tmp_path_factory.mktemp("installed")
    wheels, venv = folder / "wheels", folder / "venv"
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, CHECKOUT)
    run(sys.executable, "-m", "venv", venv)
    (wheel,) = wheels.glob("*.whl")
    run(venv / "bin" / "pip", "install", "-q", wheel)
    return Installed(wheel, venv)


def test_an_installed_wheel_runs_the_whole_suite_from_any_folder(
    installed: Installed, tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    served = "exec:conformance serve-reference"  # found beside the venv's interpreter
    arguments = ["run", "--quiet", "--impl", served, "--results", results]
    completed = run(installed.bin / "conformance", *arguments, cwd=tmp_path, check=False)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    provenance = verify_stream(results).header.provenance
    assert provenance is not None
    assert any(path.startswith("conformance/features/") for path in provenance.suite)
    assert any(installed.venv.glob("lib/python3*/site-packages/conformance/features/*.feature"))
    assert "claims office and work-requests: 38 of 38 criteria passed" in completed.stdout


def test_the_github_action_s_steps_run_the_kit_and_publish_its_verdict(
    installed: Installed, tmp_path: Path
) -> None:
    """Each shell step of action.yml, with the inputs a workflow would give; the steps GitHub
    provides (setup-python, upload-artifact) stand in as the venv on PATH and a file check.
    The run fails (one scenario selected, the rest undefined): the verdict still reaches the
    summary and the artifacts, and the last step fails the job with the run's exit code."""
    action = yaml.safe_load((CHECKOUT / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs |= {"kit": str(installed.wheel), "impl": "conformance serve-reference"}
    inputs |= {"claim": "office", "sandbox": "true" if shutil.which("bwrap") else "false"}
    inputs |= {"args": "-k sixth"}  # one scenario: quick, and the rest undefined, so it fails
    github = {"GITHUB_OUTPUT": tmp_path / "output", "GITHUB_STEP_SUMMARY": tmp_path / "summary"}
    outputs: dict[str, str] = {}
    exits = []
    for step in action["runs"]["steps"]:
        if "uses" in step:
            continue
        env = {
            **os.environ,
            **{name: str(path) for name, path in github.items()},
            "PATH": f"{installed.bin}{os.pathsep}{os.environ['PATH']}",
            **{k: expand(v, inputs, outputs) for k, v in step.get("env", {}).items()},
        }
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        exits.append(completed.returncode)
        if step.get("id"):
            outputs |= read_outputs(github["GITHUB_OUTPUT"], step["id"])
    assert outputs["run.exit-code"] == "1" and exits == [0, 0, 0, 1], (outputs, exits)
    summary = github["GITHUB_STEP_SUMMARY"].read_text()
    assert re.search(r"claims office: 0 of 25 criteria passed; 13 out of scope", summary)
    upload = next(s for s in action["runs"]["steps"] if "upload-artifact" in s.get("uses", ""))
    uploaded = upload["with"]["path"].split()
    assert all((tmp_path / name).is_file() for name in uploaded), uploaded


def expand(value: Any, inputs: dict[str, str], outputs: dict[str, str]) -> str:
    """A step's `${{ inputs.x }}` and `${{ steps.id.outputs.y }}`, as the runner expands them."""

    def one(found: re.Match[str]) -> str:
        expression = found[1].strip()
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        return outputs[expression.removeprefix("steps.").replace(".outputs.", ".")]

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def read_outputs(path: Path, step: str) -> dict[str, str]:
    lines = path.read_text().splitlines() if path.exists() else []
    return {f"{step}.{k}": v for k, _, v in (line.partition("=") for line in lines)}


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
