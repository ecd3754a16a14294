"""A known property-check failure is one search's find: the expectations file names that search,
so that a run given the file meets the failure again instead of flipping with a new seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.running.expectations import (
    PROPERTY_PREFIX,
    ExpectationsError,
    ExpectedFailure,
    expectations_seed,
    load_expectations,
    render_expectations,
)

PROPERTY = "properties/test_office_window.py::the window[AC-OFFICE-ASSIGN-RATE-001.11]"
SCENARIO = "office_assign_rate_001.feature::a scenario"
KNOWN = [PROPERTY, SCENARIO]


def written(tmp_path: Path, *failures: ExpectedFailure, seed: int | None = 4242) -> Path:
    path = tmp_path / "expected.toml"
    path.write_text(render_expectations(failures, seed), encoding="utf-8")
    return path


def test_a_listed_property_failure_is_written_with_the_seed_that_found_it(tmp_path: Path) -> None:
    path = written(tmp_path, ExpectedFailure(PROPERTY, "ISSUE-1", "found by the search"))
    assert set(load_expectations(path, KNOWN)) == {PROPERTY}
    assert expectations_seed(path) == 4242


def test_a_file_of_scenarios_only_names_no_search(tmp_path: Path) -> None:
    path = written(tmp_path, ExpectedFailure(SCENARIO, "ISSUE-2", ""))
    assert "[search]" not in path.read_text()
    assert expectations_seed(path) is None


@pytest.mark.parametrize("search", ["seed = -1", "seed = 'x'", "seed = 1\nbudget = 2"])
def test_a_malformed_search_is_refused_by_name(tmp_path: Path, search: str) -> None:
    path = tmp_path / "expected.toml"
    path.write_text(f"[search]\n{search}\n", encoding="utf-8")
    with pytest.raises(ExpectationsError, match=r"\[search\]"):
        load_expectations(path, KNOWN)


def test_a_run_given_the_file_repeats_its_search_unless_told_another_seed(tmp_path: Path) -> None:
    path = tmp_path / "expected.toml"
    path.write_text("[search]\nseed = 4242\n", encoding="utf-8")
    for extra, seed in (([], 4242), (["--seed", "7"], 7)):
        results = tmp_path / f"results-{seed}.jsonl"
        arguments = ["run", "--quiet", "-k", "sixth", "--expectations", str(path)]
        CliRunner().invoke(app, [*arguments, "--results", str(results), *extra])
        header = json.loads(results.read_text().splitlines()[0])
        assert header["seed"] == seed


def test_the_job_summary_records_the_seed_of_its_search() -> None:
    from conformance.reports.markdown import render_markdown
    from conformance.spec.registry import default_registry
    from conformance.stream.results import ResultsRun
    from tests.runs import a_header

    header = a_header().model_copy(update={"seed": 4242, "properties": "ci"})
    run = ResultsRun(header=header, scenarios=[], footer=None)
    summary = render_markdown(run, default_registry())
    assert "seed 4242 (`--seed 4242` repeats them)" in summary


@pytest.mark.cost(seconds=40)
def test_three_identical_runs_against_an_expectations_file_agree(tmp_path: Path) -> None:
    """A property check's failure listed with the seed that found it is met again on every run:
    the runs give one exit code, 0, where a new seed each time could pass the listed record
    (an xpass, exit 1) on one run and not the next."""
    failing = ["--impl", "mutant:allowance_off_by_one", "--claim", "office", "--properties", "ci"]
    failing += ["-k", "office_window"]
    first = tmp_path / "first.jsonl"
    runner = CliRunner()
    runner.invoke(app, ["run", "--quiet", *failing, "--results", str(first)])
    expectations = tmp_path / "expected.toml"
    written = runner.invoke(
        app, ["expectations", "update", str(first), "--output", str(expectations)]
    )
    assert written.exit_code == 0, written.output
    seed = expectations_seed(expectations)
    assert seed is not None
    assert f"the seed of the search that found its property-check failures, {seed}" in " ".join(
        written.output.split()
    )
    listed = [key for key in load_expectations(expectations, all_keys()) if PROPERTY_PREFIX in key]
    assert listed, "the property's failure is listed"
    arguments = ["run", "--quiet", *failing, "--expectations", str(expectations)]
    codes, statuses = [], []
    for number in range(3):
        results = tmp_path / f"again-{number}.jsonl"
        codes.append(runner.invoke(app, [*arguments, "--results", str(results)]).exit_code)
        lines = [json.loads(line) for line in results.read_text().splitlines()]
        assert lines[0]["seed"] == expectations_seed(expectations), "the search it names"
        statuses.append({r["key"]: r["status"] for r in lines if r.get("key") in listed})
    assert len(set(codes)) == 1, codes
    assert all(seen == dict.fromkeys(listed, "xfail") for seen in statuses), statuses


def all_keys() -> list[str]:
    from conformance.inventory import load_inventory

    return [entry.key for entry in load_inventory(properties=True)]
