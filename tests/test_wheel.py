"""The kit as implementers install it: a wheel in a fresh virtual environment, run elsewhere.

The wheel is built from this checkout and installed into a new virtual environment outside
it. From an unrelated empty folder, the installed `conformance run` runs the whole suite,
property checks included, through `exec:` against the served reference, sandboxed
(`--sandbox`, under bubblewrap) wherever bubblewrap is installed, as it is in CI; at the same
time the checkout's own kit runs it in-process. The protocol and the exec adapter must lose
nothing: both runs exit 0, every scenario and property record gets the same status and so every
criterion the same verdict, and `conformance report` of each stream verifies it and exits 0.
The installed kit then runs the Node example (examples/node-office) claiming office, and the
shell steps of the repository's GitHub Action (action.yml), as a runner would. Everything
comes from the installed package: the feature files, the step modules, the property checks,
the registry, the schemas, the pytest configuration. It takes minutes on two busy cores:
deselect it with `-m "not slow"`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance import __version__
from conformance.reports.summary import criterion_verdicts
from conformance.spec.registry import default_registry
from conformance.stream.provenance import BUILD_COMMIT, IMPLEMENTATION_FOLDERS, kit_commit
from conformance.stream.results import ResultsRun, Status
from conformance.stream.stream_integrity import verify_stream
from tests.sandbox import SANDBOXED
from tests.tree_copy import copy_of_the_tree

CHECKOUT = Path(__file__).resolve().parent.parent
CHECKOUT_CONFORMANCE = Path(sys.executable).with_name("conformance")
"""The checkout's kit, installed beside this interpreter by `pip install -e .`."""
TIMEOUT = 900
IMPLEMENTATION_PATHS = tuple(f"conformance/{name}/" for name in IMPLEMENTATION_FOLDERS)
SEED = 20261130
"""One seed for both runs: their property checks try the same examples."""
pytestmark = [
    pytest.mark.slow(seconds=120),
    pytest.mark.timeout(3 * TIMEOUT),
]


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
    tree = copy_of_the_tree(folder / "tree")  # never a build in the checkout (tree_copy.py)
    commit = {BUILD_COMMIT: kit_commit(CHECKOUT) or ""}
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        "-w",
        wheels,
        tree,
        environment=commit,
    )
    run(sys.executable, "-m", "venv", venv)
    (wheel,) = wheels.glob("*.whl")
    run(venv / "bin" / "pip", "install", "-q", wheel)
    return Installed(wheel, venv)


CRASH_ONLY = "AC-OFFICE-ASSIGN-RATE-002.4"
"""The criterion with a clause only a process the harness can kill exercises (its crash)."""


def test_the_installed_wheel_through_exec_agrees_with_the_checkout_in_process(
    installed: Installed, tmp_path: Path
) -> None:
    served = "exec:conformance serve-reference"  # found beside the venv's interpreter
    sandbox = ["--sandbox"] if SANDBOXED else []
    seed = ["--seed", str(SEED)]
    runs = run_at_once(
        {
            "in-process": (CHECKOUT_CONFORMANCE, [*seed, "--allow-unverified", CRASH_ONLY]),
            "exec": (installed.bin / "conformance", ["--impl", served, *sandbox, *seed]),
        },
        tmp_path,
    )
    in_process, over_exec = runs["in-process"], runs["exec"]
    assert over_exec.header.provenance is not None
    assert over_exec.header.provenance.sandbox is SANDBOXED
    assert any(
        path.startswith("conformance/features/") for path in over_exec.header.provenance.suite
    )
    assert any(installed.venv.glob("lib/python3*/site-packages/conformance/features/*.feature"))
    assert "reset" in (over_exec.header.description or {}).get("capabilities", [])
    for each in (in_process, over_exec):
        assert (each.header.properties, each.header.seed) == ("ci", SEED)
        checked = {r.status for r in each.scenarios if r.feature.startswith("properties/")}
        assert Status.PASSED in checked, "no property check verified anything"
        assert checked <= {Status.PASSED, Status.NOT_APPLICABLE}, "properties failed"
    crashes = needing_a_process(in_process)
    assert crashes, "the crash scenarios should be not applicable in-process"
    assert all(statuses(over_exec)[key] is Status.PASSED for key in crashes)
    # a clause only a crash exercises is unverified in-process, and verified through exec:
    unverified = {c for c, status in verdicts(in_process).items() if status is Status.UNVERIFIED}
    assert unverified <= {r.criterion for r in in_process.scenarios if r.key in crashes}
    assert all(verdicts(over_exec)[criterion] is Status.PASSED for criterion in unverified)
    differences = compared(statuses(in_process), statuses(over_exec), "scenario")
    differences += compared(verdicts(in_process), verdicts(over_exec), "criterion")
    expected = [*crashes, *(f"criterion {criterion}:" for criterion in unverified)]
    unexpected = [d for d in differences if not any(key in d for key in expected)]
    assert not unexpected, "the runs disagree:\n" + "\n".join(unexpected)


@pytest.mark.skipif(
    shutil.which("node") is None and not os.environ.get("CONFORMANCE_REQUIRE_NODE"),
    reason="Node.js is not installed (CI sets CONFORMANCE_REQUIRE_NODE=1 and has it)",
)
def test_the_installed_wheel_passes_the_node_example_claiming_office(
    installed: Installed, tmp_path: Path
) -> None:
    adapter = CHECKOUT / "examples" / "node-office" / "adapter.js"
    results = tmp_path / "node.jsonl"
    arguments = ["run", "--quiet", "--claim", "office", "--results", results]
    arguments += ["--impl", f"exec:node {adapter}"]
    completed = run(installed.bin / "conformance", *arguments, cwd=tmp_path, check=False)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    node = verify_stream(results)
    assert node.header.properties == "ci"
    said = " ".join(completed.stdout.split())
    assert "claims office: 25 of 25 criteria passed; 13 out of scope" in said, said


def test_the_installed_kit_names_its_commit_and_prints_no_path_of_its_own(
    installed: Installed, tmp_path: Path
) -> None:
    """The wheel records the commit it was built from (`--version`, the header), and a failing
    run's lines name scenarios and the kit's files, never a path into site-packages."""
    version = run(installed.bin / "conformance", "--version", cwd=tmp_path)
    commit = kit_commit(CHECKOUT)
    assert commit and version.stdout.startswith(f"conformance {__version__} (commit {commit})")
    failing, results = failing_mutant_run(installed, tmp_path)
    for path in ("site-packages", str(installed.venv), str(CHECKOUT)):
        assert path not in failing.stdout + failing.stderr, path
    provenance = verify_stream(results).header.provenance
    assert provenance is not None and provenance.kit_commit == commit
    assert not [p for p in provenance.suite if p.startswith(IMPLEMENTATION_PATHS)], "not suite"


def test_the_installed_kit_owns_one_import_name_and_a_user_s_packages_cannot_shadow_it(
    installed: Installed, tmp_path: Path
) -> None:
    """A repository that uses pytest-bdd often has a `steps` package of its own on the path,
    and may have a `reference`: the kit's run imports neither, and fails the mutant as usual."""
    with zipfile.ZipFile(installed.wheel) as wheel:
        top_level = {name.split("/")[0] for name in wheel.namelist()}
    assert {name for name in top_level if not name.endswith(".dist-info")} == {"conformance"}
    users = tmp_path / "users-code"
    for package in ("steps", "reference", "mutants", "variants"):
        (users / package).mkdir(parents=True)
        (users / package / "__init__.py").write_text(f"raise ImportError('the user's {package}')\n")
    failing, _ = failing_mutant_run(installed, tmp_path, {"PYTHONPATH": str(users)})
    assert "the user's" not in failing.stdout + failing.stderr


def failing_mutant_run(
    installed: Installed, folder: Path, environment: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The installed kit against a mutant it must fail, with the kit's account of the failure
    and (`--traceback`) its own frames."""
    results = folder / "results.jsonl"
    arguments = ["--impl", "mutant:allowance_off_by_one", "--claim", "office", "-k", "sixth"]
    arguments.append("--traceback")
    failing = run(installed.bin / "conformance", "run", *arguments, "--results", results,
                  cwd=folder, check=False, environment=environment)  # fmt: skip
    assert failing.returncode == 1, failing.stdout[-3000:] + failing.stderr[-3000:]
    assert "Step: " in failing.stdout and "Trace:" in failing.stdout
    assert "AC-OFFICE-ASSIGN-RATE-001.2" in failing.stdout, failing.stdout[-3000:]
    return failing, results


def run_at_once(
    commands: dict[str, tuple[Path, list[str]]], scratch: Path
) -> dict[str, ResultsRun]:
    """Start one `conformance run` per entry, each in an empty folder of its own, wait for all,
    and read their results streams (each verified by `conformance report`, which must exit 0)."""
    started = {}
    for name, (command, arguments) in commands.items():
        folder = scratch / name
        folder.mkdir()
        results, log = folder / "results.jsonl", scratch / f"{name}.log"
        with log.open("w") as output:
            process = subprocess.Popen(
                [str(command), "run", "--quiet", "--results", str(results), *arguments],
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=folder,
            )
        started[name] = (command, process, results, log)
    runs = {}
    try:
        for name, (command, process, results, log) in started.items():
            code = process.wait(timeout=TIMEOUT)
            assert code == 0, f"{name} run exited {code}:\n{log.read_text()[-3000:]}"
            report = run(command, "report", results, check=False)
            assert report.returncode == 0, f"report of the {name} run exited {report.returncode}"
            runs[name] = verify_stream(results)
    finally:
        for _, process, _, _ in started.values():
            process.kill()
            process.wait()
    return runs


def needing_a_process(run: ResultsRun) -> set[str]:
    """Scenarios only `exec:` can run: the harness kills the implementation mid-batch, or
    starts several processes of it on one store."""
    reasons = ("cannot kill", "does not declare multiprocess")
    return {
        result.key
        for result in run.scenarios
        if result.status is Status.NOT_APPLICABLE
        and any(reason in (result.evidence or "") for reason in reasons)
    }


def statuses(run: ResultsRun) -> dict[str, Status]:
    return {result.key: result.status for result in run.scenarios}


def verdicts(run: ResultsRun) -> dict[str, Status]:
    return {
        verdict.criterion.id: verdict.status
        for verdict in criterion_verdicts(run, default_registry())
    }


def compared(in_process: dict[str, Status], over_exec: dict[str, Status], what: str) -> list[str]:
    return [
        f"{what} {key}: in-process {in_process.get(key)}, exec {over_exec.get(key)}"
        for key in sorted(in_process.keys() | over_exec.keys())
        if in_process.get(key) != over_exec.get(key)
    ]


def test_the_github_action_s_steps_run_the_kit_and_publish_its_verdict(
    installed: Installed, tmp_path: Path
) -> None:
    """Each shell step of action.yml, with the inputs a workflow would give; the steps GitHub
    provides (setup-python, upload-artifact) stand in as the venv on PATH and a file check.
    The run fails (one scenario selected, the rest undefined): the verdict still reaches the
    summary and the artifacts, and the last step fails the job with the run's exit code. The
    summary names the implementation (CONFORMANCE_IMPL, which holds it, was redacted), and the
    reports go to a folder of the action's own: the workspace keeps the user's own files of
    the same names (the action used to delete them) and gets nothing new."""
    action = yaml.safe_load((CHECKOUT / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs |= {"kit": str(installed.wheel), "impl": "conformance serve-reference"}
    inputs |= {"claim": "office", "sandbox": "true" if shutil.which("bwrap") else "false"}
    inputs |= {"args": "-k sixth"}  # one scenario: quick, and the rest undefined, so it fails
    github = {"GITHUB_OUTPUT": tmp_path / "output", "GITHUB_STEP_SUMMARY": tmp_path / "summary"}
    temp = tmp_path / "runner-temp"
    github |= {"RUNNER_TEMP": temp}
    temp.mkdir()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    mine = {"summary.md": "the user's own notes", "report.html": "<p>the user's own page</p>"}
    for name, text in mine.items():
        (workspace / name).write_text(text)
    outputs: dict[str, str] = {}
    exits = []
    for step in action["runs"]["steps"]:
        if "uses" in step:
            continue
        env = {
            **os.environ,
            **{name: str(path) for name, path in github.items()},
            "PATH": f"{installed.bin}{os.pathsep}{os.environ['PATH']}",
            **{k: expand(v, inputs, outputs, temp) for k, v in step.get("env", {}).items()},
        }
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            env=env, cwd=workspace, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        exits.append(completed.returncode)
        if step.get("id"):
            outputs |= read_outputs(github["GITHUB_OUTPUT"], step["id"])
    assert outputs["run.exit-code"] == "1" and exits == [0, 0, 0, 1], (outputs, exits)
    summary = github["GITHUB_STEP_SUMMARY"].read_text()
    assert re.search(r"claims office: 0 of 25 criteria passed; 13 out of scope", summary)
    first = summary.splitlines()[0]
    assert first == "## Conformance: exec:conformance serve-reference did not pass", first
    upload = next(s for s in action["runs"]["steps"] if "upload-artifact" in s.get("uses", ""))
    uploaded = [Path(p) for p in expand(upload["with"]["path"], inputs, outputs, temp).split()]
    assert len(uploaded) == 4 and all(path.is_file() for path in uploaded), uploaded
    assert all(path.is_relative_to(temp) for path in uploaded), uploaded
    assert outputs["run.reports-dir"] == str(uploaded[0].parent), outputs
    assert {p.name: p.read_text() for p in workspace.iterdir()} == mine, "the workspace changed"


def expand(value: Any, inputs: dict[str, str], outputs: dict[str, str], runner_temp: Path) -> str:
    """A step's `${{ inputs.x }}`, `${{ steps.id.outputs.y }}` and `${{ runner.temp }}`, as the
    runner expands them."""

    def one(found: re.Match[str]) -> str:
        expression = found[1].strip()
        if expression == "runner.temp":
            return str(runner_temp)
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        return outputs[expression.removeprefix("steps.").replace(".outputs.", ".")]

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def read_outputs(path: Path, step: str) -> dict[str, str]:
    lines = path.read_text().splitlines() if path.exists() else []
    return {f"{step}.{k}": v for k, _, v in (line.partition("=") for line in lines)}


def run(
    *command: object,
    cwd: Path | None = None,
    check: bool = True,
    environment: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=cwd or CHECKOUT,
        check=check,
        env=None if environment is None else {**os.environ, **environment},
    )
