"""`conformance strength` on a few mutants and a few scenarios: kills, survivors, the control."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from conformance.adapters.patched import Capability
from conformance.cli import EXIT_USAGE, app
from conformance.properties import Budget
from conformance.reports.summary import criterion_verdicts
from conformance.spec.evidence import Tally
from conformance.spec.registry import default_registry
from conformance.stream.results import Header, ResultsRun, ScenarioResult, Status
from conformance.strength import (
    SCOPES,
    Properties,
    Runners,
    StrengthReport,
    Target,
    TargetRun,
    _variant_verdict,
    fresh_interpreters,
    run_strength,
    run_target,
    select_mutants,
    select_variants,
    suite_arguments,
)
from conformance.strength_report import print_report, summary_line

pytestmark = pytest.mark.cost(seconds=20)

# One Office and one work-request scenario, so that every run stays short.
SCENARIOS = (
    "refused_assignment_reports_the_outcome or heartbeat_whose_holder_and_generation_are_not"
)


def _small_run(variants: list[str], select: str, runners: Runners | None = None) -> StrengthReport:
    chosen = select_mutants(
        ["refusal_reported_as_none", "heartbeat_ignores_generation", "per_agent_allowance"]
    )
    legal = select_variants(variants)
    return run_strength(chosen, variants=legal, jobs=2, select=select, runners=runners)


@pytest.fixture(scope="module")
def report() -> StrengthReport:
    return _small_run(["idempotent_reclaim"], SCENARIOS)


def test_forked_runs_give_the_verdicts_of_fresh_interpreters() -> None:
    variants = ["idempotent_reclaim", "listing_includes_completed"]
    select = f"{SCENARIOS} or members_see_every_open"
    forked, fresh = (_small_run(variants, select, way) for way in (None, fresh_interpreters))
    assert forked.control.statuses() == fresh.control.statuses()
    assert forked.judgements() == fresh.judgements()
    assert forked.variants[1].diverged_on == {"WR-17"}, "a divergence, judged alike both ways"
    assert "Verdict per legal variant" in _printed(forked)


def _printed(report: StrengthReport) -> str:
    console = Console(record=True, width=200)
    print_report(report, console)
    return console.export_text()


def test_the_reference_control_passes_every_selected_scenario(report: StrengthReport) -> None:
    assert report.control.error is None
    assert report.control_failures() == []
    ran = [status for _, status in report.control.statuses().values() if status == "passed"]
    assert len(ran) == 3, "one Office scenario and the two rows of a work-request outline"


def test_mutants_are_killed_by_the_criterion_they_break(report: StrengthReport) -> None:
    verdicts = {verdict.mutant.name: verdict for verdict in report.verdicts}
    assert verdicts["refusal_reported_as_none"].killed_by == {"AC-OFFICE-ASSIGN-RATE-003.5"}
    assert verdicts["heartbeat_ignores_generation"].killed_by == {"AC-ARMONIA-WORKREQ-001.12"}
    assert all(
        verdicts[name].intended_kill
        for name in ("refusal_reported_as_none", "heartbeat_ignores_generation")
    )
    kills = report.kills_by_criterion()
    assert kills["AC-OFFICE-ASSIGN-RATE-003.5"] == ["refusal_reported_as_none"]


def test_a_mutant_the_selected_scenarios_cannot_see_survives_and_fails_the_run(
    report: StrengthReport,
) -> None:
    # The selected Office scenario only ever assigns to one agent, so a per-agent
    # allowance behaves the same there: nothing kills it, and the run must say so.
    assert report.survivors() == ["per_agent_allowance"]
    assert not report.succeeded()


def test_an_unknown_mutant_pattern_is_a_usage_error() -> None:
    outcome = CliRunner().invoke(app, ["strength", "--mutant", "no_such_mutant*"])
    assert outcome.exit_code == EXIT_USAGE
    assert "no mutant matches no_such_mutant*" in outcome.output


def test_a_variant_the_selected_scenarios_accept_is_accepted(report: StrengthReport) -> None:
    verdict = next(v for v in report.variants if v.variant.name == "idempotent_reclaim")
    assert verdict.accepted and verdict.diverged_on == frozenset()


def test_an_unknown_variant_pattern_is_a_usage_error() -> None:
    outcome = CliRunner().invoke(app, ["strength", "--variant", "no_such_variant*"])
    assert outcome.exit_code == EXIT_USAGE
    assert "no variant matches no_such_variant*" in outcome.output


def test_a_divergence_resting_on_several_readings_is_explained_by_the_one_a_variant_names() -> None:
    # The check rests on WR-1 (what is left of the slice) and WR-2 (refusing, not capping);
    # a variant that caps usage reads only WR-2 otherwise, and that explains the divergence.
    report = run_strength(
        [],
        variants=select_variants(["usage_capped_at_slice"]),
        jobs=1,
        select="slices_carved_out_for_grandchildren",
        partial=True,
    )
    (verdict,) = report.variants
    assert verdict.accepted, verdict.false_failures
    assert verdict.diverged_on == frozenset({"WR-2"})


def test_strength_reports_progress_as_each_suite_run_finishes() -> None:
    """In a CI log (no terminal) a line per finished run, with the kills so far."""
    outcome = CliRunner().invoke(
        app, ["strength", "--mutant", "allowance_off_by_one", "-k", "sixth"]
    )
    progress = [line for line in outcome.output.splitlines() if line.startswith("strength: ")]
    assert len(progress) == 2, outcome.output
    assert progress[-1].startswith("strength: 2/2 suite runs done")
    assert progress[-1].endswith("1 mutant(s) killed so far"), progress


def test_runs_kept_in_a_relative_folder_are_judged_and_kept_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--keep kept` from the folder one is in: every run is judged, its stream kept there."""
    monkeypatch.chdir(tmp_path)
    outcome = CliRunner().invoke(
        app, ["strength", "--mutant", "allowance_off_by_one", "-k", "sixth", "--keep", "kept"]
    )
    assert outcome.exit_code == 0, outcome.output
    assert "1 killed, 0 survived, 0 not judged" in outcome.output
    kept = tmp_path / "kept"
    assert {"reference.jsonl", "allowance_off_by_one.jsonl"} <= {p.name for p in kept.iterdir()}


class _CrashingRunner:
    """A suite run that writes a traceback to its log and exits with pytest's internal error."""

    def run(self, args: list[str], cwd: Path, log: Path, timeout_s: float) -> tuple[int, str]:
        log.write_text("collecting ...\nTraceback (most recent call last):\nOSError: disk full\n")
        return 3, ""


def test_a_run_without_a_verdict_carries_the_end_of_its_log(tmp_path: Path) -> None:
    """The workspace is thrown away after strength; the reason must outlive it."""
    run = run_target(Target("variant:x", ()), tmp_path, None, 10.0, _CrashingRunner())
    assert run.error is not None and run.error.startswith("pytest exited with 3")
    assert run.error.splitlines()[-1] == "OSError: disk full"


@dataclass(frozen=True)
class _Undeclaring:
    """A variant as strength judges it, naming no reading it may diverge on."""

    name: str
    capability: Capability = Capability.WORK_REQUESTS
    description: str = "judged as if it took no freedom"
    readings: dict[str, str] = field(default_factory=dict)
    declares_readings: bool = False
    diverges: frozenset[str] = frozenset()


@pytest.fixture(scope="module")
def with_properties() -> StrengthReport:
    """The work-request machine's first search only, at ci: a mutant no selected scenario can
    see, a variant reading WR-1 otherwise, and the same variant judged as if it named nothing."""
    variant = select_variants(["nested_slice_from_campaign"])
    return run_strength(
        select_mutants(["overdraw_allowed"]),
        variants=[*variant, _Undeclaring("nested_slice_from_campaign")],
        select="work_request_machine and 1",
        properties=Properties(Budget.CI, seed=4),
    )


def test_with_properties_the_control_passes_the_selected_checks_and_names_its_seed(
    with_properties: StrengthReport,
) -> None:
    checked = {
        key: status
        for key, (_, status) in with_properties.control.statuses().items()
        if key.startswith("properties/") and "(search 1 of 4)" in key
    }
    assert len(checked) == 13, "search 1's record for each of the 13 work-request criteria"
    assert set(checked.values()) <= {"passed", "not_applicable"}, checked
    passed = [key for key, status in checked.items() if status == "passed"]
    assert len(passed) >= 8, "one search at ci reaches most criteria; the rest are unexercised"
    assert "budget ci, seed 4" in summary_line(with_properties)


def _collected_checks(target: Target, tmp_path: Path) -> list[str]:
    """The property checks a suite run against `target` collects: module and test, in order."""
    arguments = suite_arguments(
        target, tmp_path / "results.jsonl", tmp_path / "base", None, Properties(Budget.CI, 4)
    )
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", *arguments, "--collect-only"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    return [
        line.removeprefix("properties/").split("[")[0]
        for line in listed.stdout.splitlines()
        if line.startswith("properties/test_")
    ]


@pytest.mark.parametrize(
    ("capability", "criterion", "expected"),
    [
        (
            Capability.WORK_REQUESTS,
            None,
            ["test_work_request_machine.py::test_work_request_machine"] * 4,
        ),
        (
            Capability.OFFICE,
            None,
            [
                "test_office_effects.py::test_every_operation_shows_what_the_model_says",
                "test_office_window.py::test_admission_decisions_match_the_rolling_window",
                "test_office_window.py::test_same_instant_wakes_are_decided_independently_of_their_order",
                "test_office_window.py::test_no_window_ever_holds_more_than_the_allowance",
            ],
        ),
        (
            Capability.OFFICE,
            "AC-OFFICE-ASSIGN-RATE-001.10",
            [
                "test_office_window.py::test_same_instant_wakes_are_decided_independently_of_their_order"
            ],
        ),
    ],
)
def test_a_run_collects_the_property_checks_of_its_capability_and_criterion_only(
    capability: Capability, criterion: str | None, expected: list[str], tmp_path: Path
) -> None:
    """A work-request mutant runs the machine, not the office properties; an own-criterion run
    only the checks that name its criterion (001.10: the same-instant check alone)."""
    collected = _collected_checks(Target("reference", SCOPES[capability], criterion), tmp_path)
    assert collected == expected


def test_every_run_of_a_strength_run_shares_its_seed() -> None:
    drawn = Properties(Budget.CI).seeded()
    assert drawn.seed is not None and drawn.seeded() == drawn, "drawn once, then kept"
    arguments = suite_arguments(Target("reference", ()), Path("r"), Path("b"), None, drawn)
    assert "--properties=ci" in arguments and f"--hypothesis-seed={drawn.seed}" in arguments
    assert Properties().seeded().seed is None, "no checks, no seed"
    plain = suite_arguments(Target("reference", ()), Path("r"), Path("b"), None)
    assert "--properties=none" in plain and not any("seed" in a for a in plain)


def test_a_seed_without_property_checks_is_a_usage_error(tmp_path: Path) -> None:
    report = tmp_path / "strength.json"
    chosen = ("strength", "--mutant", "allowance_off_by_one", "--seed", "3")
    outcome = CliRunner().invoke(app, [*chosen, "--json", str(report)])
    assert outcome.exit_code == EXIT_USAGE, outcome.output
    assert "a seed is for property checks" in outcome.output and not report.exists()


def test_a_property_check_of_its_own_criterion_kills_a_mutant(
    with_properties: StrengthReport,
) -> None:
    """Its own criterion kills it; where the search meets a nested slice overdrawn (2 out of a
    child's remaining 1), which no reading of WR-1 explains, the break is charged to the
    criteria WR-1 reads as well, and to nothing else."""
    (verdict,) = with_properties.verdicts
    assert verdict.intended_kill and "AC-ARMONIA-WORKREQ-001.9" in verdict.failed_by
    read_by_wr1 = set(default_registry().criteria_of_readings(["WR-1"]))
    assert verdict.failed_by <= {"AC-ARMONIA-WORKREQ-001.9"} | read_by_wr1, verdict.failed_by


def test_a_property_s_divergence_is_judged_by_the_readings_the_variant_names(
    with_properties: StrengthReport,
) -> None:
    named, unnamed = with_properties.variants
    assert named.accepted and named.diverged_on == {"WR-1"}, named.false_failures
    assert not unnamed.accepted and not with_properties.succeeded()
    assert unnamed.false_failures, "a divergence it does not name is the kit failing it"
    assert all(
        f.startswith("properties/test_work_request_machine.py::") for f in unnamed.false_failures
    )


def test_strength_draws_a_seed_for_its_properties_and_reports_it(tmp_path: Path) -> None:
    """One seed for every run, drawn when none is given: the JSON and the summary name it."""
    report = tmp_path / "strength.json"
    chosen = ("strength", "--mutant", "allowance_off_by_one", "-k", "sixth")
    outcome = CliRunner().invoke(app, [*chosen, "--properties", "ci", "--json", str(report)])
    assert outcome.exit_code == 0, outcome.output
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["properties"] == "ci" and isinstance(written["seed"], int)
    assert f"seed {written['seed']})" in " ".join(outcome.output.split())


def test_a_divergence_lands_on_the_criteria_of_its_readings_whatever_the_record_s_tag() -> None:
    """The machine's budget check cites WR-3 and WR-15; a variant reading WR-15 otherwise
    explains it. Where its divergence lands is the verdict algebra's to say, from the readings'
    registration (WR-15 reaches 001.13, test_registry.py), never from the record's tag: a
    record tagged with an office criterion diverges 001.13, not the office criterion."""
    (variant,) = select_variants(["remainder_lost_past_completed_parent"])
    target = Target(f"variant:{variant.name}", SCOPES[variant.capability])
    machine = "properties/test_work_request_machine.py"
    registry = default_registry()

    def record(criterion: str, status: Status) -> ScenarioResult:
        diverged = status is Status.DIVERGED
        return ScenarioResult(
            key=f"{machine}::keeps the model[{criterion}]",
            criterion=criterion,
            feature=machine,
            scenario="keeps the model",
            status=status,
            duration_s=0.0,
            violated=["WR-3", "WR-15"] if diverged else [],
            checks={"WR-15": Tally(diverged=["WR-15=lost-past-completed"])} if diverged else {},
        )

    def run(*records: ScenarioResult) -> TargetRun:
        results = ResultsRun(header=Header.model_construct(), scenarios=list(records), footer=None)
        return TargetRun(target, results, None, 0.0)

    def diverged(judged: TargetRun) -> set[str]:
        assert judged.results is not None
        verdicts = criterion_verdicts(judged.results, registry)
        return {v.criterion.id for v in verdicts if v.status is Status.DIVERGED}

    criteria = ("AC-ARMONIA-WORKREQ-001.13", "AC-OFFICE-ASSIGN-RATE-001.1")
    control = run(*(record(c, Status.PASSED) for c in criteria))
    for tag, other in (criteria, criteria[::-1]):
        diverging = run(record(tag, Status.DIVERGED), record(other, Status.PASSED))
        judged = _variant_verdict(variant, diverging, control)
        assert judged.accepted and judged.diverged_on == {"WR-15"}, judged.false_failures
        assert diverged(diverging) == {"AC-ARMONIA-WORKREQ-001.13"}
