"""The kit's strength: the suite run against every mutant, and which criteria kill which.

Each mutant (see the `mutants` package) is run through the Gherkin suite in a
subprocess of its own, a few at a time, each writing a results stream. A
mutant is killed by a criterion when a scenario tagged with that criterion did
not pass, among the scenarios that passed against the reference in the same
strength run (the control): a scenario the reference fails proves nothing. A
mutant no criterion kills survives, and a criterion that kills nothing is
weakly tested.

A mutant patches one capability's reference modules, so by default it is run
against that capability's feature files only (`--all-features` runs them all).
Scratch stores go to /dev/shm when the machine has it: on disk the suite's
cost is mostly SQLite's fsyncs, which a RAM-backed directory makes free. Runs
use plain asserts (no rewriting): a verdict needs no assertion introspection.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from conformance.results import ResultsRun, Status, read_results
from mutants import MUTANTS, Capability, Mutant

SUITE_ROOT = Path(__file__).resolve().parent.parent
FEATURES: dict[Capability, str] = {
    Capability.OFFICE: "office_*.feature",
    Capability.WORK_REQUESTS: "armonia_workreq_*.feature",
}
NOT_A_KILL = frozenset({Status.PASSED, Status.NOT_APPLICABLE})
CRASHES = frozenset({Status.ERRORED, Status.TIMEOUT})
DEFAULT_TIMEOUT_S = 900.0
VERDICT_EXIT_CODES = frozenset({0, 1})
"""pytest's exit codes for "the tests ran" (all passed, some failed); others mean they did not."""
RAM_DIRECTORY = Path("/dev/shm")


@dataclass(frozen=True)
class Target:
    """One suite run: the reference control or a mutant, over some feature files."""

    impl: str
    features: tuple[str, ...]

    @property
    def label(self) -> str:
        return self.impl.removeprefix("mutant:")


@dataclass(frozen=True)
class TargetRun:
    target: Target
    results: ResultsRun | None
    error: str | None
    seconds: float

    def statuses(self) -> dict[str, tuple[str | None, Status]]:
        """Scenario key -> (criterion, status), for the scenarios of the target's features."""
        if self.results is None:
            return {}
        return {
            result.key: (result.criterion, result.status)
            for result in self.results.scenarios
            if _in_features(result.feature, self.target.features)
        }


@dataclass(frozen=True)
class MutantVerdict:
    """`killed_by`: criteria with a scenario that did not pass; `failed_by`: with one that failed.

    A mutant killed only through errors (crashes, timeouts) is suspect: it shows
    the mutant is broken, not that a scenario's checks catch the defect.
    """

    mutant: Mutant
    killed_by: frozenset[str]
    failed_by: frozenset[str]
    error: str | None
    seconds: float

    @property
    def killed_only_by_errors(self) -> bool:
        return bool(self.killed_by) and not self.failed_by

    @property
    def intended_kill(self) -> bool:
        return self.mutant.criterion in self.killed_by

    @property
    def survived(self) -> bool:
        return self.error is None and not self.killed_by


@dataclass(frozen=True)
class StrengthReport:
    control: TargetRun
    verdicts: list[MutantVerdict]
    criteria: list[str]
    jobs: int
    wall_seconds: float
    select: str | None = None
    partial: bool = False
    """True when only some mutants or scenarios ran: a criterion killing none is then no finding."""

    def control_failures(self) -> list[str]:
        """What the reference did not pass; with -k, scenarios left unselected do not count."""
        if self.control.error is not None:
            return [self.control.error]
        unselected = {Status.UNDEFINED} if self.select else set()
        return [
            f"{key}: {status.value}"
            for key, (_, status) in self.control.statuses().items()
            if status not in NOT_A_KILL and status not in unselected
        ]

    def kills_by_criterion(self) -> dict[str, list[str]]:
        """Per criterion with a scenario the control passed, the mutants it killed."""
        ran = {c for c, status in self.control.statuses().values() if status is Status.PASSED}
        kills: dict[str, list[str]] = {c: [] for c in self.criteria if c in ran}
        for verdict in self.verdicts:
            for criterion in sorted(verdict.killed_by):
                kills.setdefault(criterion, []).append(verdict.mutant.name)
        return kills

    def survivors(self) -> list[str]:
        return [verdict.mutant.name for verdict in self.verdicts if verdict.survived]

    def errors(self) -> list[MutantVerdict]:
        return [verdict for verdict in self.verdicts if verdict.error is not None]

    def crashed(self) -> list[str]:
        return [v.mutant.name for v in self.verdicts if v.killed_only_by_errors]

    def succeeded(self) -> bool:
        return not (self.control_failures() or self.survivors() or self.errors() or self.crashed())


def select_mutants(patterns: Sequence[str]) -> list[Mutant]:
    """Mutants whose name matches any of the glob patterns; every mutant when there are none."""
    chosen = [
        m for m in MUTANTS.values() if not patterns or any(fnmatch(m.name, p) for p in patterns)
    ]
    if not chosen:
        raise ValueError(f"no mutant matches {', '.join(patterns)}")
    return chosen


def run_strength(
    mutants: Sequence[Mutant],
    *,
    jobs: int = 2,
    select: str | None = None,
    partial: bool = False,
    all_features: bool = False,
    keep: Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> StrengthReport:
    """Run the control and every mutant through the suite, `jobs` at a time."""
    targets = [_mutant_target(mutant, all_features) for mutant in mutants]
    scope = () if all_features else tuple(sorted({g for t in targets for g in t.features}))
    control = Target("reference", scope)
    started = time.perf_counter()
    with _workspace(keep) as workdir, ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = list(
            pool.map(lambda t: run_target(t, workdir, select, timeout_s), [control, *targets])
        )
    wall = time.perf_counter() - started
    from conformance.registry import default_registry

    control_run, mutant_runs = runs[0], runs[1:]
    return StrengthReport(
        control=control_run,
        verdicts=[
            _verdict(mutant, run, control_run)
            for mutant, run in zip(mutants, mutant_runs, strict=True)
        ],
        criteria=default_registry().ids(),
        jobs=jobs,
        wall_seconds=wall,
        select=select,
        partial=partial or select is not None,
    )


def _mutant_target(mutant: Mutant, all_features: bool) -> Target:
    return Target(f"mutant:{mutant.name}", () if all_features else (FEATURES[mutant.capability],))


def _verdict(mutant: Mutant, run: TargetRun, control: TargetRun) -> MutantVerdict:
    """The criteria whose scenarios passed against the control but not against the mutant."""
    trusted = {key for key, (_, status) in control.statuses().items() if status is Status.PASSED}
    kills = [
        (criterion, status)
        for key, (criterion, status) in run.statuses().items()
        if key in trusted and criterion is not None and status not in NOT_A_KILL
    ]
    killed_by = frozenset(criterion for criterion, _ in kills)
    failed_by = frozenset(criterion for criterion, status in kills if status not in CRASHES)
    return MutantVerdict(mutant, killed_by, failed_by, run.error, run.seconds)


def run_target(target: Target, workdir: Path, select: str | None, timeout_s: float) -> TargetRun:
    """One pytest subprocess running the suite against `target`; its results stream, read back."""
    stream = workdir / f"{target.label}.jsonl"
    log = workdir / f"{target.label}.log"
    basetemp = workdir / f"{target.label}.tmp"
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(SUITE_ROOT / "steps"),
        f"--rootdir={SUITE_ROOT}",
        "-c",
        str(SUITE_ROOT / "pyproject.toml"),
        "-p",
        "no:cov",
        "-p",
        "conformance.feature_scope",
        "-q",
        "--no-header",
        "--tb=line",
        "--assert=plain",
        f"--basetemp={basetemp}",
        "--impl",
        target.impl,
        "--results",
        str(stream),
    ]
    for pattern in target.features:
        command += ["--feature-glob", pattern]
    command += ["-k", select] if select else []
    started = time.perf_counter()
    try:
        with log.open("w", encoding="utf-8") as output:
            finished = subprocess.run(
                command,
                cwd=SUITE_ROOT,
                stdout=output,
                stderr=subprocess.STDOUT,
                timeout=timeout_s,
                check=False,
            )
    except subprocess.TimeoutExpired:
        return TargetRun(target, None, f"no verdict within {timeout_s:.0f} s", _since(started))
    if finished.returncode not in VERDICT_EXIT_CODES:
        error = f"pytest exited with {finished.returncode} (see {log})"
        return TargetRun(target, None, error, _since(started))
    return _read_run(target, stream, log, _since(started))


def _read_run(target: Target, stream: Path, log: Path, seconds: float) -> TargetRun:
    if not stream.exists():
        return TargetRun(target, None, f"the suite wrote no results (see {log})", seconds)
    try:
        results = read_results(stream)
    except ValueError as error:
        return TargetRun(target, None, f"unreadable results stream: {error}", seconds)
    if results.header.implementation_error is not None:
        unusable = f"implementation unusable: {results.header.implementation_error}"
        return TargetRun(target, results, unusable, seconds)
    if results.footer is None:
        return TargetRun(target, results, f"the suite was interrupted (see {log})", seconds)
    return TargetRun(target, results, None, seconds)


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 1)


def _in_features(feature: str, patterns: tuple[str, ...]) -> bool:
    return not patterns or any(fnmatch(Path(feature).name, pattern) for pattern in patterns)


@contextmanager
def _workspace(keep: Path | None) -> Iterator[Path]:
    """Where the runs write: `keep` when given, else a throwaway directory, in RAM if possible."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    base = RAM_DIRECTORY if RAM_DIRECTORY.is_dir() and os.access(RAM_DIRECTORY, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="conformance-strength-", dir=base) as scratch:
        yield Path(scratch)


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def short_id(criterion: str) -> str:
    """AC-OFFICE-ASSIGN-RATE-001.2 -> OFFICE-001.2; AC-ARMONIA-WORKREQ-001.3 -> WORKREQ-001.3."""
    return criterion.replace("AC-", "").replace("ASSIGN-RATE-", "").replace("ARMONIA-", "")


def print_report(report: StrengthReport, console: Console) -> None:
    console.print(_criteria_table(report))
    console.print(_mutants_table(report))
    for failure in report.control_failures():
        console.print(f"[bold red]the reference itself did not pass:[/] {failure}")
    for verdict in report.errors():
        console.print(
            f"[bold red]mutant {verdict.mutant.name} could not be judged:[/] {verdict.error}"
        )
    for name in report.crashed():
        console.print(
            f"[bold red]mutant {name} was killed only by errors: is the mutant broken?[/]"
        )
    console.print(summary_line(report))


def summary_line(report: StrengthReport) -> str:
    survivors = report.survivors()
    judged = [v for v in report.verdicts if v.error is None]
    killed = [v for v in judged if not v.survived]
    missed = [v.mutant.name for v in killed if not v.intended_kill]
    return (
        f"{len(report.verdicts)} mutants: {len(killed)} killed, {len(survivors)} survived"
        f"{' (' + ', '.join(survivors) + ')' if survivors else ''}, "
        f"{len(report.errors())} not judged; "
        f"killed by their own criterion: {len(killed) - len(missed)} of {len(killed)}"
        f"{' (not: ' + ', '.join(missed) + ')' if missed else ''}; "
        f"wall time {report.wall_seconds:.0f} s, {report.jobs} at a time"
    )


def _criteria_table(report: StrengthReport) -> Table:
    table = Table(title="Mutants killed, per criterion", title_justify="left")
    for column in ("criterion", "kills", "mutants killed"):
        table.add_column(column, no_wrap=column != "mutants killed")
    none = "none in this selection" if report.partial else "[bold yellow]none: weakly tested[/]"
    for criterion, names in report.kills_by_criterion().items():
        table.add_row(criterion, str(len(names)), ", ".join(names) or none)
    return table


def _mutants_table(report: StrengthReport) -> Table:
    table = Table(title="Verdict per mutant", title_justify="left")
    for column in ("mutant", "targets", "own kill", "killed by", "s"):
        table.add_column(column, no_wrap=column != "killed by")
    for verdict in report.verdicts:
        if verdict.error is not None:
            outcome = "[bold red]error[/]"
        elif verdict.survived:
            outcome = "[bold red]SURVIVED[/]"
        elif verdict.killed_only_by_errors:
            outcome = "[bold red]errors only[/]"
        else:
            outcome = "yes" if verdict.intended_kill else "[yellow]no[/]"
        table.add_row(
            verdict.mutant.name,
            short_id(verdict.mutant.criterion),
            outcome,
            ", ".join(short_id(c) for c in sorted(verdict.killed_by, key=_criterion_order)),
            f"{verdict.seconds:.0f}",
        )
    return table


def _criterion_order(criterion: str) -> tuple[str, int, int]:
    prefix, _, number = criterion.rpartition("-")
    major, _, minor = number.partition(".")
    return prefix, int(major), int(minor)


def report_json(report: StrengthReport) -> dict[str, Any]:
    return {
        "wall_seconds": round(report.wall_seconds, 1),
        "jobs": report.jobs,
        "control": {"seconds": report.control.seconds, "failures": report.control_failures()},
        "survivors": report.survivors(),
        "criteria": report.kills_by_criterion(),
        "mutants": [
            {
                "name": v.mutant.name,
                "criterion": v.mutant.criterion,
                "description": v.mutant.description,
                "killed_by": sorted(v.killed_by, key=_criterion_order),
                "failed_by": sorted(v.failed_by, key=_criterion_order),
                "intended_kill": v.intended_kill,
                "error": v.error,
                "seconds": v.seconds,
            }
            for v in report.verdicts
        ],
    }


def write_json(report: StrengthReport, path: Path) -> None:
    path.write_text(json.dumps(report_json(report), indent=2) + "\n", encoding="utf-8")
