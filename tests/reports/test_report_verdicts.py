"""Every report's verdict is the run's exit code: no format is green while the run is red.

A CI publishes the JUnit file as a check run, shows the Markdown in the job summary, and a
dashboard reads the Cucumber JSON: each must fail exactly when the run does. One real run per
exit code the stream can yield (passed; failed, a scenario failing; failed, a claimed criterion
unverified because its scenarios need a capability the implementation does not declare) writes
every format, and each format is read as its reader reads it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from conformance.cli import EXIT_FAILURES, EXIT_OK, app
from conformance.stream import provenance
from tests.paths import CHECKOUT, TEST_DATA

pytestmark = pytest.mark.cost(seconds=40)

CONFORMANCE = Path(sys.executable).with_name("conformance")
SCHEMA = TEST_DATA / "cucumber-json.schema.json"
WITHOUT_HOOKS = "python:tests.adversaries.without_capabilities:office_without_hooks"
UNVERIFIED = "AC-OFFICE-ASSIGN-RATE-002.2"
"""The criterion whose scenarios all need the hook `office_without_hooks` does not declare."""
ALLOWED = (UNVERIFIED, *(f"AC-OFFICE-ASSIGN-RATE-{n}" for n in ("001.2", "002.1", "002.4")))
"""Every criterion with a clause only concurrency, a restart or the fault hook can exercise,
which `office_without_hooks` leaves unverified (without property checks)."""
CASES = {
    "passed": (EXIT_OK, [WITHOUT_HOOKS, *(f"--allow-unverified={c}" for c in ALLOWED)]),
    "failed": (EXIT_FAILURES, ["mutant:allowance_off_by_one"]),
    "unverified claim": (EXIT_FAILURES, [WITHOUT_HOOKS]),
}
REPORTS = {"junit": "junit.xml", "markdown": "summary.md", "html": "report.html"}
REPORTS |= {"cucumber": "cucumber.json", "results": "results.jsonl"}


@dataclass(frozen=True)
class Run:
    folder: Path
    code: int
    terminal: str


@pytest.fixture(scope="module", params=list(CASES))
def finished(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    code, (impl, *more) = CASES[request.param]
    folder = tmp_path_factory.mktemp(request.param.replace(" ", "-"))
    command = [str(CONFORMANCE), "run", "--impl", impl, *more, "--claim", "office", "--quiet"]
    command += ["--properties", "none"]
    for option, name in REPORTS.items():
        command += [f"--{option}", str(folder / name)]
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(CHECKOUT)},
        check=False,
    )
    assert completed.returncode == code, completed.stdout[-3000:] + completed.stderr[-3000:]
    return Run(folder, completed.returncode, completed.stdout)


def junit_failed(run: Run) -> bool:
    """What a check-run publisher counts: any failure or error element."""
    root = ET.parse(run.folder / "junit.xml").getroot()
    elements = len(list(root.iter("failure"))) + len(list(root.iter("error")))
    counted = sum(
        int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        for suite in root.iter("testsuite")
    )
    assert counted == elements, "the suites' counts must match their cases"
    return elements > 0


def cucumber_failed(run: Run) -> bool:
    """What a dashboard counts: any step or hook that failed or is undefined."""
    features = json.loads((run.folder / "cucumber.json").read_text())
    jsonschema.validate(features, json.loads(SCHEMA.read_text()))
    results = [
        part["result"]["status"]
        for feature in features
        for element in feature["elements"]
        for part in [*element["steps"], *element.get("before", []), *element.get("after", [])]
    ]
    return any(status in ("failed", "undefined") for status in results)


def markdown_failed(run: Run) -> bool:
    first = (run.folder / "summary.md").read_text().splitlines()[0]
    assert first.endswith((" passed", " did not pass")), first
    return first.endswith("did not pass")


def html_failed(run: Run) -> bool:
    page = (run.folder / "report.html").read_text()
    (verdict,) = re.findall(
        r"<span class='badge (passed|failed)'>run (?:passed|failed)</span>", page
    )
    return bool(verdict == "failed")


def terminal_failed(run: Run) -> bool:
    said = [line.strip() for line in run.terminal.splitlines()]
    (verdict,) = [line for line in said if line in ("run passed", "run failed")]
    return verdict == "run failed"


READERS: dict[str, Callable[[Run], bool]] = {
    "junit": junit_failed,
    "cucumber": cucumber_failed,
    "markdown": markdown_failed,
    "html": html_failed,
    "terminal": terminal_failed,
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("format_name", list(READERS))
def test_every_format_s_verdict_is_the_exit_code(finished: Run, format_name: str) -> None:
    failed = READERS[format_name](finished)
    assert failed is (finished.code != EXIT_OK), (format_name, finished.code)
    stored = subprocess.run(
        [str(CONFORMANCE), "report", str(finished.folder / "results.jsonl")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert stored.returncode == finished.code, stored.stdout[-2000:]


@pytest.mark.parametrize("finished", ["unverified claim"], indirect=True)
def test_an_unverified_claimed_criterion_is_a_failure_of_the_claim_in_every_format(
    finished: Run,
) -> None:
    """Not only some red somewhere: the failure names the criterion and what it needs."""
    root = ET.parse(finished.folder / "junit.xml").getroot()
    (claim,) = [suite for suite in root.iter("testsuite") if suite.get("name") == "claim"]
    (case,) = [case for case in claim.iter("testcase") if case.get("classname") == UNVERIFIED]
    failure = case.find("failure")
    assert failure is not None and "does not declare hook:" in failure.get("message", "")
    said = [(finished.folder / name).read_text() for name in ("summary.md", "report.html")]
    said += [finished.terminal, (finished.folder / "cucumber.json").read_text()]
    for text in said:
        assert f"unverified: {UNVERIFIED}: no check verified" in " ".join(text.split())


def test_a_run_failed_by_a_check_after_it_is_reported_failed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The kit's files changed while the run ran (another process editing the checkout): the
    run exits 1 although every record passed, and its reports, written after that check, say
    that it failed (they said it passed)."""
    digests = iter([{"features/x.feature": "before"}])
    monkeypatch.setattr(provenance, "suite_digests", lambda: next(digests, {"x": "after"}))
    markdown, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    arguments = ["run", "--impl", WITHOUT_HOOKS, "--allow-unverified", UNVERIFIED, "--quiet"]
    arguments += ["--claim", "office", "--properties", "none"]
    arguments += ["--markdown", str(markdown), "--junit", str(junit)]
    outcome = CliRunner().invoke(app, arguments)
    assert outcome.exit_code == EXIT_FAILURES, outcome.output
    assert "changed during the run" in outcome.output, outcome.output
    assert markdown_failed(Run(tmp_path, EXIT_FAILURES, outcome.output))
    assert junit_failed(Run(tmp_path, EXIT_FAILURES, outcome.output))
    assert terminal_failed(Run(tmp_path, EXIT_FAILURES, outcome.output))
