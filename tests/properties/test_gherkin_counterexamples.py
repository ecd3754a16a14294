"""A property's counterexample, printed as a Gherkin scenario, is a scenario that fails the same
way when pasted into a feature file: through `conformance run` against a mutant the property
catches (an office window closed at both ends; a keyless refusal left uncounted; a slice larger
than its campaign's budget), then the pasted scenario through the kit's own steps, against the
mutant and against the reference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.properties.catalogue import PROPERTIES, fanned_status
from conformance.running.options import SuiteOptions
from conformance.spec.evidence import Tally
from conformance.spec.registry import default_registry
from conformance.stream.results import ResultsRun, Status
from conformance.stream.stream_integrity import verify_stream
from conformance.suite import PLUGINS
from tests.runs import suite_run


@dataclass(frozen=True)
class Catch:
    """A mutant, a seed under which the ci budget finds its defect (the search is
    deterministic), the property that finds it, and where the pasted scenario must fail."""

    mutant: str
    seed: int
    selection: str
    title: str
    failing_step: str
    observed: str


WINDOW = Catch(
    "mutant:window_closed_both_ends",
    1,
    "no_window_ever",
    "no stored window holds more than the allowance",
    'the wake\'s outcome is "queued"',
    "observed 'rate_limited'",
)
EFFECTS = Catch(
    "mutant:keyless_refusal_silent",
    1,
    "every_operation",
    "every operation's outcome, rows, counters, warnings and labels are the model's",
    "the rate-limit counters moved by that wake by: allowance_exhausted +1",
    "observed nothing",
)
MACHINE = Catch(
    "mutant:overdraw_allowed",
    4,
    "work_request_machine and 1",
    "every program of delegations, claims, heartbeats and publishes keeps the model"
    " (search 1 of 4)",
    'the attempt is refused with "insufficient_budget" and nothing changes',
    "accepted",
)


pytestmark = [
    pytest.mark.slow(seconds=20),
    pytest.mark.timeout(900),
]
"""Shrinking a counterexample to its shortest form replays it hundreds of times, each on a fresh
store, and the seed decides how long that takes: from seconds to the five minutes after which
Hypothesis stops. Each catch's seed and selection find and shrink its defect in seconds
(`bench/property_kills.py` times any seed); after any change to a property's strategies, time
them again.
The stale heartbeat, whose catch took a minute of shrinking, is pasted from a written program
in tests/properties/test_work_request_scenario.py."""


@pytest.fixture(
    scope="module",
    params=[WINDOW, EFFECTS, MACHINE],
    ids=["office", "office-effects", "work-requests"],
)
def caught(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Catch, ResultsRun, str]:
    """The mutant's run of the property, and what the terminal printed. It runs with a CI
    variable set, as in an implementer's CI: there Hypothesis would load its own derandomized
    profile, and the seed must still decide the search."""
    catch: Catch = request.param
    folder = tmp_path_factory.mktemp("caught")
    finished, stream = suite_run(
        folder,
        *("--impl", catch.mutant, "--seed", str(catch.seed)),
        *("-k", catch.selection, "--quiet"),
        environment={**os.environ, "CI": "true"},
    )
    assert finished.returncode == 1, finished.stdout + finished.stderr
    return catch, verify_stream(stream), finished.stdout


def property_records(catch: Catch, run: ResultsRun) -> dict[str | None, Any]:
    return {r.criterion: r for r in run.scenarios if r.scenario == catch.title}


def test_the_run_records_the_seed_and_fails_the_criteria_the_counterexample_broke(
    caught: tuple[Catch, ResultsRun, str],
) -> None:
    catch, run, _ = caught
    assert (run.header.seed, run.header.properties) == (catch.seed, "ci")
    records = property_records(catch, run)
    failed = {c for c, r in records.items() if r.status is Status.FAILED}
    unexercised = {c for c, r in records.items() if r.status is Status.NOT_APPLICABLE}
    checked = {c for c, r in records.items() if r.status is Status.PASSED}
    cited = {cite for r in records.values() for cite in r.violated}
    broken = default_registry().criteria_of_readings(sorted(cited))
    assert failed == set(broken) & set(records) and failed, records
    assert failed | unexercised | checked == set(records)
    assert all("not exercised by this property" in (records[c].evidence or "") for c in unexercised)
    for criterion in checked:
        held = [cite for cite, tally in records[criterion].checks.items() if tally.held]
        assert any(cite.startswith(f"{criterion}/") for cite in held), records[criterion]


def test_the_counterexample_is_printed_as_a_gherkin_scenario(
    caught: tuple[Catch, ResultsRun, str],
) -> None:
    catch, run, printed = caught
    failure = next(r.failure for r in run.scenarios if r.status is Status.FAILED)
    assert failure is not None and failure.property_title == catch.title
    scenario = failure.counterexample
    tag = scenario.splitlines()[0]
    charged = default_registry().criteria_of_readings(failure.clauses)
    assert tag.startswith("@AC-") and tag.removeprefix("@") in charged, tag
    assert scenario.splitlines()[1].startswith("Scenario: ")
    steps = ("  Given ", "  When ", "  Then ", "  And ", "  #", "      | ")
    assert all(line.startswith(steps) for line in scenario.splitlines()[2:]), scenario
    assert "  # What Hypothesis noted of the same example:" in scenario
    steps_only = scenario.split("\n  # What Hypothesis noted")[0]
    assert steps_only in printed, "the terminal shows the scenario (its comments may be clipped)"
    assert f"seed {catch.seed}" in printed


def test_pasted_into_a_feature_file_it_fails_the_same_way_and_the_reference_passes_it(
    caught: tuple[Catch, ResultsRun, str], tmp_path: Path
) -> None:
    catch, run, _ = caught
    record = next(r for r in run.scenarios if r.status is Status.FAILED)
    assert record.failure is not None
    paste(tmp_path, record.failure.counterexample)
    against_mutant = run_pasted(tmp_path, catch.mutant)
    first_failing = next(
        step for step in steps_of(against_mutant) if step["result"]["status"] == "failed"
    )
    assert first_failing["name"] == catch.failing_step, first_failing
    message = first_failing["result"]["error_message"]
    assert catch.observed in message, message
    charged = default_registry().criteria_of_readings(sorted(record.violated))
    assert any(criterion in message for criterion in charged), (record.violated, message)
    against_reference = run_pasted(tmp_path, "reference")
    assert {step["result"]["status"] for step in steps_of(against_reference)} == {"passed"}


def paste(folder: Path, scenario: str) -> None:
    """A feature file of the one scenario, and the test module that collects it."""
    (folder / "pasted.feature").write_text(
        f"Feature: a pasted scenario\n\n{scenario}\n", encoding="utf-8"
    )
    (folder / "test_pasted.py").write_text(
        'from pytest_bdd import scenarios\n\nscenarios("pasted.feature")\n', encoding="utf-8"
    )


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
            SuiteOptions(impl=impl).argument(),
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


HELD_OF_C2 = {"C-2/b": Tally(held=4)}


@pytest.mark.parametrize(
    ("status", "violated", "criterion", "checks", "expected"),
    [
        (Status.PASSED, [], "C-1", {}, Status.NOT_APPLICABLE),
        (Status.PASSED, [], "C-2", HELD_OF_C2, Status.PASSED),
        (Status.FAILED, ["C-1/a"], "C-1", HELD_OF_C2, Status.FAILED),
        (Status.FAILED, ["C-1/a"], "C-2", HELD_OF_C2, Status.PASSED),
        (Status.FAILED, ["C-1/a"], "C-3", HELD_OF_C2, Status.NOT_APPLICABLE),
        (
            Status.DIVERGED,
            ["WR-2"],
            "AC-ARMONIA-WORKREQ-001.3",
            {"WR-2": Tally(diverged=["WR-2=capped-usage"])},
            Status.DIVERGED,
        ),
        (
            Status.FAILED,
            ["WR-2"],
            "AC-ARMONIA-WORKREQ-001.3",
            {"WR-2": Tally(broken=1)},
            Status.FAILED,
        ),
        (Status.ERRORED, [], "C-2", HELD_OF_C2, Status.PASSED),
        (Status.ERRORED, [], "C-1", HELD_OF_C2, Status.NOT_APPLICABLE),
    ],
)
def test_a_property_fails_only_the_criteria_its_counterexample_broke(
    status: Status, violated: list[str], criterion: str, checks: dict[str, Tally], expected: Status
) -> None:
    """A record per criterion, from the evidence: failed where the counterexample's clause (or
    reading) is its own, passed where its clauses' checks held, and not applicable where no
    check of them ran, a property that never reached a clause never passing it. A fault of the
    search (errored) fails the run once (`ended`), not each criterion."""
    assert fanned_status(status, violated, criterion, checks) is expected


def test_every_property_names_criteria_and_is_a_test_of_its_module() -> None:
    import importlib

    for check in PROPERTIES:
        module = importlib.import_module(f"conformance.properties.{check.module[:-3]}")
        assert callable(getattr(module, check.function)), check
        assert check.criteria and len(set(check.criteria)) == len(check.criteria), check
