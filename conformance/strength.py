"""The kit's strength, from both sides: mutants it must kill, variants it must accept.

Mutants (see `mutants`) each break one clause; every one must be killed by the
criterion it targets. Variants (see `variants`) differ from the reference only
where the specs leave freedom; every one must pass, or come out `diverged` on
the interpretations it names, and nothing else: a kit that fails a correct
implementation is as wrong as one that passes a broken one.

Every suite run is a pytest session of its own, a few at a time, writing a
results stream. A verdict only counts scenarios that passed against the
reference in the same strength run (the control): a scenario the reference
fails proves nothing.

A mutant is first run against its own criterion's scenarios only, stopping at
the first that does not pass: that kill is the verdict that matters, and it
takes a fraction of a second. A mutant its own criterion does not kill is run
again against its capability's whole suite, to show which criterion (if any)
catches it; `thorough` runs every mutant through the whole suite, so that the
table of kills per criterion is complete. Variants run their capability's
whole suite, in-process like the mutants (`variant:NAME`, whose declarations
reach the steps through the same port).

Runs are forked from warm servers (`conformance.running.forked_suite`): each
child starts from an interpreter that has imported everything and run nothing.
That is the one way strength runs. A platform without `os.fork` starts each run
in a fresh interpreter instead (`fresh_interpreters`), which is also the plain way
bench/ sets beside it and tests/test_strength.py holds to the same verdicts.

Scratch stores go to /dev/shm when the machine has it (the runs' TMPDIR points
there): on disk the suite's cost is mostly SQLite's fsyncs. Runs use plain
asserts: a verdict needs no assertion introspection.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Protocol, TypeVar

from conformance.adapters.patched import Capability
from conformance.implementations import Legal, Mutation
from conformance.implementations import mutants as kit_mutants
from conformance.implementations import variants as kit_variants
from conformance.properties import (
    OFFICE_EFFECTS_MODULE,
    OFFICE_MODULE,
    WORK_REQUEST_MODULE,
    Budget,
    draw_seed,
)
from conformance.reports.summary import criterion_verdicts
from conformance.running.forked_suite import Exit, can_fork, fork_servers
from conformance.running.options import SuiteOptions
from conformance.spec.registry import default_registry
from conformance.stream.results import ResultsRun, Status
from conformance.stream.stream_integrity import read_stream
from conformance.suite import pytest_arguments

SCOPES: dict[str, tuple[str, ...]] = {
    Capability.OFFICE: ("office_*.feature", OFFICE_MODULE, OFFICE_EFFECTS_MODULE),
    Capability.WORK_REQUESTS: ("armonia_workreq_*.feature", WORK_REQUEST_MODULE),
}
"""What a capability's runs cover: its feature files, and its property modules (which run only
with `properties`; their records carry `properties/<module>` as their feature)."""
NOT_A_KILL = frozenset({Status.PASSED, Status.NOT_APPLICABLE, Status.DIVERGED})
"""A divergence is a legal reading of an open question, not a defect caught."""
CRASHES = frozenset({Status.ERRORED, Status.TIMEOUT})
DEFAULT_TIMEOUT_S = 900.0
THOROUGH_TIMEOUT_S = 4 * 3600.0
"""A run at the thorough budget searches 1000 examples a property: the work-request machine's
four searches alone take minutes to tens of minutes, one after the other in one run."""
VERDICT_EXIT_CODES = frozenset({0, 1})
"""pytest's exit codes for "the tests ran" (all passed, some failed); others mean they did not."""
RAM_DIRECTORY = Path("/dev/shm")
LOG_TAIL_LINES = 15
A = TypeVar("A", Mutation, Legal)


@dataclass(frozen=True)
class Target:
    """One suite run: the reference control, a mutant or a variant, over some feature files.

    With `criterion`, only that criterion's scenarios run, and the run stops at
    the first that does not pass.
    """

    impl: str
    features: tuple[str, ...]
    criterion: str | None = None

    @property
    def label(self) -> str:
        """A file name for the run's stream and log: the mutant's or variant's name."""
        name = self.impl.split("--variant ")[-1] if "--variant" in self.impl else self.impl
        name = name.removeprefix("mutant:").removeprefix("variant:")
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[-80:]
        return safe + (".own" if self.criterion else "")


@dataclass(frozen=True)
class TargetRun:
    target: Target
    results: ResultsRun | None
    error: str | None
    seconds: float

    def statuses(self) -> dict[str, tuple[str | None, Status]]:
        """Scenario key -> (criterion, status), for the scenarios of the target's features (and
        of its criterion, when it has one) that ran: one left undefined proves nothing."""
        if self.results is None:
            return {}
        criterion = self.target.criterion
        return {
            result.key: (result.criterion, result.status)
            for result in self.results.scenarios
            if _in_features(result.feature, self.target.features)
            and (criterion is None or result.criterion == criterion)
            and not (criterion is not None and result.status is Status.UNDEFINED)
        }

    def violated(self) -> dict[str, list[str]]:
        """Scenario key -> what its failing check cited."""
        if self.results is None:
            return {}
        return {result.key: result.violated for result in self.results.scenarios}


@dataclass(frozen=True)
class MutantVerdict:
    """`killed_by`: criteria with a scenario that did not pass; `failed_by`: with one that failed.

    A mutant killed only through errors (crashes, timeouts) is suspect: it shows
    the mutant is broken, not that a scenario's checks catch the defect.
    `complete` says whether its whole capability suite ran (else only its own
    criterion's scenarios, up to the first kill).
    """

    mutant: Mutation
    killed_by: frozenset[str]
    failed_by: frozenset[str]
    error: str | None
    seconds: float
    complete: bool = True
    blamed: frozenset[str] = frozenset()
    """The criteria the verdict algebra fails on the run's evidence: those whose clauses broke
    (`conformance.verdicts`), whatever scenario the break happened in."""

    @property
    def killed_only_by_errors(self) -> bool:
        return bool(self.killed_by) and not self.failed_by

    @property
    def intended_kill(self) -> bool:
        """Killed by a check of its own criterion failing, not by a crash in its scenarios."""
        return self.mutant.criterion in self.failed_by

    @property
    def survived(self) -> bool:
        return self.error is None and not self.killed_by


@dataclass(frozen=True)
class VariantVerdict:
    """What a variant's run showed: divergences as declared, or false failures."""

    variant: Legal
    diverged_on: frozenset[str]
    false_failures: tuple[str, ...]
    error: str | None
    seconds: float

    @property
    def accepted(self) -> bool:
        return self.error is None and not self.false_failures


@dataclass(frozen=True)
class Properties:
    """The property checks every suite run makes beside its scenarios: none unless asked.

    One seed serves every run, the control's too, so that a mutant's or a variant's search
    starts where the reference's did, and the whole strength run can be repeated.
    """

    budget: Budget = Budget.NONE
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.budget is Budget.NONE and self.seed is not None:
            raise ValueError("a seed is for property checks: give --properties ci or thorough")

    def seeded(self) -> Properties:
        """With a seed drawn now where checks run and none was given (the report names it)."""
        if self.budget is Budget.NONE or self.seed is not None:
            return self
        return replace(self, seed=draw_seed())

    def arguments(self) -> list[str]:
        """pytest's: the property modules and the budget, and the seed every run shares."""
        seed = [] if self.seed is None else [f"--hypothesis-seed={self.seed}"]
        return [*pytest_arguments(self.budget), *seed]

    def timeout_s(self) -> float:
        """How long one suite run may take before it is given up, at this budget."""
        return THOROUGH_TIMEOUT_S if self.budget is Budget.THOROUGH else DEFAULT_TIMEOUT_S

    def describe(self) -> str:
        if self.budget is Budget.NONE:
            return "scenarios only"
        return f"scenarios and property checks (budget {self.budget.value}, seed {self.seed})"


@dataclass(frozen=True)
class StrengthReport:
    control: TargetRun
    verdicts: list[MutantVerdict]
    criteria: list[str]
    jobs: int
    wall_seconds: float
    variants: list[VariantVerdict] = field(default_factory=list)
    select: str | None = None
    partial: bool = False
    """True when only some mutants or scenarios ran: a criterion killing none is then no finding."""
    thorough: bool = False
    properties: Properties = Properties()

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

    def rejected_variants(self) -> list[VariantVerdict]:
        return [verdict for verdict in self.variants if not verdict.accepted]

    def judgements(self) -> dict[str, tuple[object, ...]]:
        """Per mutant and variant, what was judged of it (not how long it took): two ways of
        running strength agree when these are equal."""
        judged: dict[str, tuple[object, ...]] = {
            v.mutant.name: (sorted(v.killed_by), sorted(v.failed_by), v.error)
            for v in self.verdicts
        }
        for v in self.variants:
            judged[v.variant.name] = (sorted(v.diverged_on), v.false_failures, v.error)
        return judged

    def succeeded(self) -> bool:
        return not (
            self.control_failures()
            or self.survivors()
            or self.errors()
            or self.crashed()
            or self.rejected_variants()
        )


def select_mutants(patterns: Sequence[str]) -> list[Mutation]:
    """Mutants whose name matches any of the glob patterns; every mutant when there are none."""
    return _select(kit_mutants().members, patterns, "mutant")


def select_variants(patterns: Sequence[str]) -> list[Legal]:
    """Variants whose name matches any of the glob patterns; every variant when there are none."""
    return _select(kit_variants().members, patterns, "variant")


def _select(known: Mapping[str, A], patterns: Sequence[str], kind: str) -> list[A]:
    chosen = [
        item
        for name, item in known.items()
        if not patterns or any(fnmatch(name, pattern) for pattern in patterns)
    ]
    if not chosen:
        raise ValueError(f"no {kind} matches {', '.join(patterns)}")
    return chosen


def run_strength(
    mutants: Sequence[Mutation],
    *,
    variants: Sequence[Legal] = (),
    jobs: int = 2,
    select: str | None = None,
    partial: bool = False,
    all_features: bool = False,
    thorough: bool = False,
    keep: Path | None = None,
    timeout_s: float | None = None,
    progress: Callable[[TargetRun], None] | None = None,
    properties: Properties = Properties(),
    runners: Runners | None = None,
) -> StrengthReport:
    """Run the control, every mutant and every variant through the suite, `jobs` at a time;
    `progress` hears of each suite run as it finishes. A run gives up after `timeout_s`
    (by default what its property budget needs). `runners` makes the runs (by default
    `suite_runner`, forked where the platform can fork)."""
    properties = properties.seeded()
    limit = properties.timeout_s() if timeout_s is None else timeout_s
    whole = {mutant.name: _mutant_target(mutant, all_features) for mutant in mutants}
    variant_targets = [_variant_target(variant, all_features) for variant in variants]
    features = [*whole.values(), *variant_targets]
    scope = () if all_features else tuple(sorted({g for t in features for g in t.features}))
    control = Target("reference", scope)
    first = [
        whole[m.name] if thorough or select else _own_criterion(whole[m.name], m) for m in mutants
    ]
    started = time.perf_counter()
    with (
        _workspace(keep) as workdir,
        (runners or suite_runner)(jobs, workdir) as runner,
        ThreadPoolExecutor(max_workers=jobs) as pool,
    ):

        def run_one(target: Target) -> TargetRun:
            finished = run_target(target, workdir, select, limit, runner, properties)
            if progress is not None:
                progress(finished)
            return finished

        def run_all(targets: list[Target]) -> list[TargetRun]:
            return list(pool.map(run_one, targets))

        runs = run_all([control, *first, *variant_targets])
        control_run = runs[0]
        mutant_runs = runs[1 : 1 + len(first)]
        verdicts = [
            _verdict(mutant, run, control_run)
            for mutant, run in zip(mutants, mutant_runs, strict=True)
        ]
        verdicts = _complete_the_missed(verdicts, whole, control_run, run_all)
    return StrengthReport(
        control=control_run,
        verdicts=verdicts,
        criteria=default_registry().ids(),
        jobs=jobs,
        wall_seconds=time.perf_counter() - started,
        variants=[
            _variant_verdict(variant, run, control_run)
            for variant, run in zip(variants, runs[1 + len(first) :], strict=True)
        ],
        select=select,
        partial=partial or select is not None,
        thorough=thorough,
        properties=properties,
    )


def _complete_the_missed(
    verdicts: list[MutantVerdict],
    whole: dict[str, Target],
    control: TargetRun,
    run_all: Any,
) -> list[MutantVerdict]:
    """A mutant its own criterion did not kill runs the whole suite: who else catches it?"""
    missed = [v for v in verdicts if not v.complete and not v.intended_kill and v.error is None]
    if not missed:
        return verdicts
    reruns = run_all([whole[v.mutant.name] for v in missed])
    redone = {
        v.mutant.name: _verdict(v.mutant, run, control)
        for v, run in zip(missed, reruns, strict=True)
    }
    return [redone.get(v.mutant.name, v) for v in verdicts]


def _mutant_target(mutant: Mutation, all_features: bool) -> Target:
    return Target(f"mutant:{mutant.name}", () if all_features else SCOPES[mutant.capability])


def _own_criterion(target: Target, mutant: Mutation) -> Target:
    return Target(target.impl, target.features, mutant.criterion)


def _variant_target(variant: Legal, all_features: bool) -> Target:
    """A variant opened in-process: its declarations reach the steps through the same port as
    over the wire (tests/variants/test_variants.py serves each through `exec:` as well)."""
    return Target(f"variant:{variant.name}", () if all_features else SCOPES[variant.capability])


def _trusted(control: TargetRun) -> set[str]:
    return {key for key, (_, status) in control.statuses().items() if status is Status.PASSED}


def _verdict(mutant: Mutation, run: TargetRun, control: TargetRun) -> MutantVerdict:
    """The criteria whose scenarios passed against the control but not against the mutant."""
    trusted = _trusted(control)
    kills = [
        (criterion, status)
        for key, (criterion, status) in run.statuses().items()
        if key in trusted and criterion is not None and status not in NOT_A_KILL
    ]
    killed_by = frozenset(criterion for criterion, _ in kills)
    failed_by = frozenset(criterion for criterion, status in kills if status not in CRASHES)
    complete = run.target.criterion is None
    blamed = _blamed(run)
    return MutantVerdict(mutant, killed_by, failed_by, run.error, run.seconds, complete, blamed)


def _blamed(run: TargetRun) -> frozenset[str]:
    """The criteria the verdict algebra fails on what the run's checks broke."""
    if run.results is None:
        return frozenset()
    verdicts = criterion_verdicts(run.results, default_registry())
    return frozenset(v.criterion.id for v in verdicts if v.status is Status.FAILED)


def _variant_verdict(variant: Legal, run: TargetRun, control: TargetRun) -> VariantVerdict:
    """Every trusted scenario passed, or diverged on an interpretation the variant names; and
    the verdict algebra fails no criterion on what the run's checks broke.

    A divergence cites every reading its check rests on; any one of them read otherwise
    explains it, so one named by the variant is enough. Which criterion it lands on is the
    algebra's to say (the criteria its readings are registered under), not the scenario's tag.
    A variant that declares its readings names none it may diverge on: it must pass outright.
    """
    trusted = _trusted(control)
    cited = run.violated()
    diverged: set[str] = set()
    false: list[str] = []
    for key, (_, status) in run.statuses().items():
        if key not in trusted or status in (Status.PASSED, Status.NOT_APPLICABLE):
            continue
        explained = set(cited.get(key, [])) & variant.diverges
        if status is Status.DIVERGED and explained:
            diverged |= explained
            continue
        false.append(f"{key}: {status.value} {cited.get(key) or ''}".rstrip())
    false += [f"{criterion}: failed on what the checks broke" for criterion in sorted(_blamed(run))]
    return VariantVerdict(variant, frozenset(diverged), tuple(false), run.error, run.seconds)


class SuiteRunner(Protocol):
    """Runs pytest with some arguments, its output in a log: its exit code, or None and why."""

    def run(self, args: list[str], cwd: Path, log: Path, timeout_s: float) -> Exit: ...


Runners = Callable[[int, Path], AbstractContextManager[SuiteRunner]]
"""Makes the suite runs of one strength run, `jobs` at a time, their files in a workspace."""


class FreshInterpreters:
    """Each suite run in an interpreter of its own: where `os.fork` is missing, and the plain
    way the forked runs are measured against and held to."""

    def __init__(self, environment: dict[str, str]) -> None:
        self._environment = environment

    def run(self, args: list[str], cwd: Path, log: Path, timeout_s: float) -> Exit:
        try:
            with log.open("w", encoding="utf-8") as output:
                finished = subprocess.run(
                    [sys.executable, "-m", "pytest", *args],
                    cwd=cwd,
                    env=self._environment,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    timeout=timeout_s,
                    check=False,
                )
        except subprocess.TimeoutExpired:
            return None, f"no verdict within {timeout_s:.0f} s"
        return finished.returncode, ""


@contextmanager
def suite_runner(jobs: int, workdir: Path) -> Iterator[SuiteRunner]:
    """Forked from warm servers where the platform can fork, else fresh interpreters; their
    temporary files (the in-process stores among them) in the workspace."""
    if not can_fork():
        with fresh_interpreters(jobs, workdir) as fresh:
            yield fresh
        return
    with fork_servers(jobs, _workspace_environment(workdir), workdir) as servers:
        yield servers


@contextmanager
def fresh_interpreters(jobs: int, workdir: Path) -> Iterator[SuiteRunner]:
    """Each run in a new interpreter, however many at a time: nothing to start or stop."""
    yield FreshInterpreters(_workspace_environment(workdir))


def _workspace_environment(workdir: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(workdir)}


def run_target(
    target: Target,
    workdir: Path,
    select: str | None,
    timeout_s: float,
    runner: SuiteRunner | None = None,
    properties: Properties = Properties(),
) -> TargetRun:
    """One pytest run of the suite against `target` (in a fresh interpreter unless `runner` says
    otherwise); its results stream, read back."""
    runner = runner or FreshInterpreters(dict(os.environ))
    stream = workdir / f"{target.label}.jsonl"
    log = workdir / f"{target.label}.log"
    started = time.perf_counter()
    basetemp = workdir / f"{target.label}.tmp"
    exit_code, why = runner.run(
        suite_arguments(target, stream, basetemp, select, properties),
        workdir,
        log,
        timeout_s,
    )
    if exit_code is None:
        return TargetRun(target, None, _with_log_tail(why, log), _since(started))
    if exit_code not in VERDICT_EXIT_CODES:
        error = _with_log_tail(f"pytest exited with {exit_code}", log)
        return TargetRun(target, None, error, _since(started))
    return _read_run(target, stream, log, _since(started))


def _with_log_tail(why: str, log: Path) -> str:
    """Why a run gave no verdict, with the end of its log: a throwaway workspace is gone by
    the time anyone reads the report."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return f"{why} (no log at {log})"
    tail = [line for line in lines if line.strip()][-LOG_TAIL_LINES:]
    return (
        "\n".join([f"{why}; the end of its log ({log}):", *tail]) if tail else f"{why} (empty log)"
    )


def suite_arguments(
    target: Target,
    stream: Path,
    basetemp: Path,
    select: str | None,
    properties: Properties = Properties(),
) -> list[str]:
    """pytest's arguments for one suite run against `target`, writing its results to `stream`."""
    arguments = [
        *properties.arguments(),
        "-p",
        "no:cov",
        "-p",
        "conformance.running.feature_scope",
        "-q",
        "--no-header",
        "--tb=line",
        "--assert=plain",
        f"--basetemp={basetemp}",
        SuiteOptions(impl=target.impl, results=stream).argument(),
    ]
    for pattern in target.features:
        arguments += ["--feature-glob", pattern]
    if target.criterion is not None:
        arguments += ["--criterion", target.criterion, "--exitfirst"]
    return arguments + (["-k", select] if select else [])


def _read_run(target: Target, stream: Path, log: Path, seconds: float) -> TargetRun:
    if not stream.exists():
        return TargetRun(target, None, _with_log_tail("the suite wrote no results", log), seconds)
    try:
        results = read_stream(stream)
    except ValueError as error:
        return TargetRun(target, None, f"unreadable results stream: {error}", seconds)
    if results.header.implementation_error is not None:
        unusable = f"implementation unusable: {results.header.implementation_error}"
        return TargetRun(target, results, unusable, seconds)
    if results.footer is None:
        return TargetRun(target, results, _with_log_tail("the suite was interrupted", log), seconds)
    return TargetRun(target, results, None, seconds)


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 1)


def _in_features(feature: str, patterns: tuple[str, ...]) -> bool:
    return not patterns or any(fnmatch(Path(feature).name, pattern) for pattern in patterns)


@contextmanager
def _workspace(keep: Path | None) -> Iterator[Path]:
    """Where the runs write: `keep` when given, else a throwaway directory, in RAM if possible.
    Absolute, since each run works in a folder of its own (a relative `keep` once made every run
    an error: no log where the server looked)."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep.resolve()
        return
    base = RAM_DIRECTORY if RAM_DIRECTORY.is_dir() and os.access(RAM_DIRECTORY, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="conformance-strength-", dir=base) as scratch:
        yield Path(scratch)
