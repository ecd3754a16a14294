"""A property's counterexample, printed as a Gherkin scenario, is a scenario that fails the same
way when pasted into a feature file: through `conformance run` against a mutant whose window is
closed at both ends, then the pasted scenario through the kit's own steps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.properties.catalogue import PROPERTIES, fanned_status
from conformance.stream.results import ResultsRun, Status
from conformance.stream.stream_integrity import verify_stream
from conformance.suite import PLUGINS

MUTANT = "mutant:window_closed_both_ends"
SEED = 3108691157
"""A seed under which the ci budget finds the mutant's defect (the search is deterministic)."""
WINDOW_PROPERTY = "no stored window holds more than the allowance"


@pytest.fixture(scope="module")
def caught(tmp_path_factory: pytest.TempPathFactory) -> tuple[ResultsRun, str]:
    """The mutant's run of the window property, and what the terminal printed."""
    folder = tmp_path_factory.mktemp("caught")
    stream = folder / "results.jsonl"
    finished = subprocess.run(
        [
            *conformance("run"),
            "--impl",
            MUTANT,
            "--seed",
            str(SEED),
            "--results",
            str(stream),
            "-k",
            "no_window_ever",
            "--quiet",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode == 1, finished.stdout + finished.stderr
    return verify_stream(stream), finished.stdout


def conformance(*arguments: str) -> list[str]:
    return [sys.executable, "-c", "from conformance.cli import main; main()", *arguments]


def window_records(run: ResultsRun) -> dict[str, Any]:
    return {r.criterion: r for r in run.scenarios if r.scenario == WINDOW_PROPERTY}


def test_the_run_records_the_seed_and_fails_the_criteria_the_counterexample_broke(
    caught: tuple[ResultsRun, str],
) -> None:
    run, _ = caught
    assert (run.header.seed, run.header.properties) == (SEED, "ci")
    records = window_records(run)
    failed = {c for c, r in records.items() if r.status is Status.FAILED}
    unverified = {c for c, r in records.items() if r.status is Status.NOT_APPLICABLE}
    broken = {cite.split("/")[0] for r in records.values() for cite in r.violated}
    assert failed == broken and failed, records
    assert failed | unverified == set(records)
    assert all("not verified by this property" in (records[c].evidence or "") for c in unverified)


def test_the_counterexample_is_printed_as_a_gherkin_scenario(
    caught: tuple[ResultsRun, str],
) -> None:
    run, printed = caught
    failure = next(r.failure for r in run.scenarios if r.status is Status.FAILED)
    assert failure is not None and failure.property_title == WINDOW_PROPERTY
    scenario = failure.counterexample
    assert scenario.startswith("@AC-OFFICE-ASSIGN-RATE-")
    assert "Scenario: " in scenario and 'When the clock reads "2026-02-02T08:' in scenario
    assert scenario.splitlines()[-1].strip().startswith("And no rolling window of 600 seconds")
    assert scenario in printed
    assert f"seed {SEED}" in printed


def test_pasted_into_a_feature_file_it_fails_the_same_way_and_the_reference_passes_it(
    caught: tuple[ResultsRun, str], tmp_path: Path
) -> None:
    run, _ = caught
    record = next(r for r in run.scenarios if r.status is Status.FAILED)
    assert record.failure is not None
    (tmp_path / "pasted.feature").write_text(
        f"Feature: a pasted counterexample\n\n{record.failure.counterexample}\n", encoding="utf-8"
    )
    (tmp_path / "test_pasted.py").write_text(
        'from pytest_bdd import scenarios\n\nscenarios("pasted.feature")\n', encoding="utf-8"
    )
    against_mutant = run_pasted(tmp_path, MUTANT)
    first_failing = next(
        step for step in steps_of(against_mutant) if step["result"]["status"] == "failed"
    )
    assert first_failing["name"] == 'the wake\'s outcome is "queued"', first_failing
    message = first_failing["result"]["error_message"]
    assert "observed 'rate_limited'" in message
    assert any(cite in message for cite in record.violated), (record.violated, message)
    against_reference = run_pasted(tmp_path, "reference")
    assert {step["result"]["status"] for step in steps_of(against_reference)} == {"passed"}


def run_pasted(folder: Path, impl: str) -> list[dict[str, Any]]:
    """The pasted feature through the kit's steps alone (no conftest, no other tests)."""
    report = folder / f"{impl.replace(':', '_')}.json"
    plugins = [argument for plugin in PLUGINS for argument in ("-p", plugin)]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(folder / "test_pasted.py"),
            f"--rootdir={folder}",
            "-c",
            "/dev/null",
            "--noconftest",
            "-p",
            "no:cacheprovider",
            *plugins,
            "--impl",
            impl,
            f"--cucumberjson={report}",
            "-q",
        ],
        cwd=folder,
        capture_output=True,
        check=False,
    )
    features: list[dict[str, Any]] = json.loads(report.read_text(encoding="utf-8"))
    return features


def steps_of(features: list[dict[str, Any]]) -> list[dict[str, Any]]:
    elements = [element for feature in features for element in feature["elements"]]
    assert len(elements) == 1, "the pasted scenario did not run"
    return list(elements[0]["steps"])


@pytest.mark.parametrize(
    ("status", "violated", "criterion", "expected"),
    [
        (Status.PASSED, [], "C-1", Status.PASSED),
        (Status.FAILED, ["C-1/a"], "C-1", Status.FAILED),
        (Status.FAILED, ["C-1/a"], "C-2", Status.NOT_APPLICABLE),
        (Status.FAILED, ["X-9/a"], "C-2", Status.FAILED),
        (Status.DIVERGED, ["WR-2"], "C-2", Status.DIVERGED),
        (Status.ERRORED, [], "C-2", Status.ERRORED),
    ],
)
def test_a_property_fails_only_the_criteria_its_counterexample_broke(
    status: Status, violated: list[str], criterion: str, expected: Status
) -> None:
    assert fanned_status(status, violated, criterion, ("C-1", "C-2")) is expected


def test_every_property_names_criteria_and_is_a_test_of_its_module() -> None:
    import importlib

    for check in PROPERTIES:
        module = importlib.import_module(f"conformance.properties.{check.module[:-3]}")
        assert callable(getattr(module, check.function)), check
        assert check.criteria and len(set(check.criteria)) == len(check.criteria), check
