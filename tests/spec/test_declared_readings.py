"""A reading declared in the handshake is the one the Gherkin judges by, and every report shows
it; undeclared, the same implementation is diverged on that reading's criteria alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.spec.registry import default_registry
from conformance.stream.results import ResultsRun, Status
from conformance.stream.stream_integrity import verify_stream
from tests.runs import suite_run


def run_variant(variant: str, folder: Path, *options: str) -> tuple[ResultsRun, str]:
    """`conformance run` of the variant's scenarios without property checks, in `folder`: its
    verified results stream and everything it printed."""
    finished, stream = suite_run(
        folder, "--impl", f"variant:{variant}", "--properties", "none", *options
    )
    assert finished.returncode in (0, 1), finished.stdout + finished.stderr
    return verify_stream(stream), finished.stdout + finished.stderr


def run(variant: str, folder: Path) -> tuple[ResultsRun, str]:
    markdown = folder / "summary.md"
    options = ("--claim", "work-requests", "-k", "below or bad", "--markdown", str(markdown))
    result, said = run_variant(variant, folder, *options)
    return result, markdown.read_text(encoding="utf-8") + said


@pytest.fixture(scope="module")
def undeclared(tmp_path_factory: pytest.TempPathFactory) -> tuple[ResultsRun, str]:
    return run("zero_usage_accepted", tmp_path_factory.mktemp("undeclared"))


@pytest.fixture(scope="module")
def declared(tmp_path_factory: pytest.TempPathFactory) -> tuple[ResultsRun, str]:
    return run("zero_usage_accepted_declared", tmp_path_factory.mktemp("declared"))


def ran(result: ResultsRun) -> dict[str, Status]:
    return {s.key: s.status for s in result.scenarios if s.status is not Status.UNDEFINED}


def test_undeclared_the_reading_diverges_on_its_own_criteria_only(
    undeclared: tuple[ResultsRun, str],
) -> None:
    stream, _ = undeclared
    diverged = [s for s in stream.scenarios if s.status is Status.DIVERGED]
    assert diverged, ran(stream)
    registered = set(default_registry().interpretation("WR-24").criteria)
    assert {s.criterion for s in diverged} <= registered
    assert all(s.violated == ["WR-24"] for s in diverged)
    assert Status.FAILED not in ran(stream).values()


def test_declared_the_same_scenarios_are_judged_by_the_declared_reading(
    declared: tuple[ResultsRun, str], undeclared: tuple[ResultsRun, str]
) -> None:
    stream, _ = declared
    statuses = ran(stream)
    diverged_before = {s.key for s in undeclared[0].scenarios if s.status is Status.DIVERGED}
    assert Status.DIVERGED not in statuses.values() and Status.FAILED not in statuses.values()
    for key in diverged_before:
        assert statuses[key] in (Status.PASSED, Status.NOT_APPLICABLE), (key, statuses[key])
    set_aside = [s for s in stream.scenarios if s.key in diverged_before]
    assert all("zero-usage-accepted" in (s.evidence or "") for s in set_aside)


def test_every_report_names_the_reading_the_implementation_follows(
    declared: tuple[ResultsRun, str], undeclared: tuple[ResultsRun, str]
) -> None:
    assert "declares zero-usage-accepted" in declared[1]
    assert "declares" not in undeclared[1]


def test_a_scenario_a_declared_reading_stops_is_skipped_for_pytest_too(tmp_path: Path) -> None:
    """Its record says not applicable, and the run checks every record against pytest's own
    outcome: pytest must call it skipped, not failed, or a declaring implementation that passes
    everything fails the run ("records disagree with pytest")."""
    result, said = run_variant(
        "lease_live_at_expiry_declared",
        tmp_path,
        *("-k", "exact_expiry_instant or restored_by_a_restart_expires", "--quiet"),
    )
    stopped = [s for s in result.scenarios if s.status is Status.NOT_APPLICABLE]
    assert len(stopped) == 2, said
    assert all("implementation declares WR-8" in (s.evidence or "") for s in stopped), said
    assert "records disagree with pytest" not in said, said
