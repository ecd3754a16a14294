"""What a run spread over cores saves (`--jobs`), and what the deep search costs (`thorough`).

Rows, each measured in the same bench run:

- the whole suite (`--properties ci --seed 1`) through `exec:` against the served reference,
  `--jobs 1` against `--jobs 2` (target: at most 0.6× on two cores), and whether every
  verdict came out the same;
- the whole suite with `--properties thorough` beside the same with `ci`, in-process and through
  `exec:`: wall time, and examples per second of Hypothesis' generate phase over every search;
- the thorough run through `exec:` at `--jobs 2` against `--jobs 1` (target: 0.6× too).

`--quick` runs the thorough profile at a reduced size (CONFORMANCE_THOROUGH_EXAMPLES, so a
row says how many examples each search tried); `--full` at its real size, 1000 examples a
search, which takes eight to nine minutes a run in-process and about twenty through `exec:` at
`--jobs 2` on two cores (docs/bench.md).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from time import perf_counter
from typing import Final

from bench.kit_cost import EXAMPLES, EXEC_IMPL, GENERATE_SECONDS, IN_PROCESS
from bench.report import Measure, Row
from bench.stats import rate
from conformance.running.properties_plugin import THOROUGH_EXAMPLES
from conformance.stream.stream_integrity import read_stream

SECTION = "6. A run spread over cores, and the deep search"
ROOT = Path(__file__).resolve().parent.parent
JOBS_TARGET = 0.6
RUN_TIMEOUT = 4 * 3600
SEED = "1"


@dataclass(frozen=True)
class SpreadSettings:
    thorough_examples: int | None
    """Examples per thorough search; None for the profile's own (1000)."""
    log: Path | None = None
    """Where each run is written as a JSON line as soon as it ends (a long bench that is
    stopped keeps the runs it made; `rows_from_log` makes the rows of them)."""


@dataclass(frozen=True)
class Timed:
    name: str
    seconds: float
    exit_code: int
    statuses: dict[str, str]
    examples: int
    generating: float
    """Seconds of Hypothesis' generate phase, summed over the searches."""
    cpu_seconds: float = 0.0
    """User and system time of the run and every process it waited for (workers and
    implementation processes): the work, whatever the machine's load did to the wall time."""

    @property
    def rate(self) -> float:
        return rate(self.examples, self.generating)

    def summary(self) -> str:
        counts = Counter(self.statuses.values())
        shown = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        cpu = f"; CPU {self.cpu_seconds:.0f} s" if self.cpu_seconds else ""
        return f"exit {self.exit_code}; {shown}; {self.examples} examples{cpu}"


RUNS: Final = (
    ("exec-ci-1", EXEC_IMPL, "ci", 1),
    ("exec-ci-2", EXEC_IMPL, "ci", 2),
    ("local-ci-1", IN_PROCESS, "ci", 1),
    ("exec-thorough-1", EXEC_IMPL, "thorough", 1),
    ("exec-thorough-2", EXEC_IMPL, "thorough", 2),
    ("local-thorough-1", IN_PROCESS, "thorough", 1),
)
"""Every run the rows compare, by name: (name, implementation, budget, jobs)."""


def timed_run(
    name: str, impl: str, properties: str, jobs: int, examples: int | None = None
) -> Timed:
    """`conformance run` as a user runs it, timed from launch to exit."""
    with tempfile.TemporaryDirectory(prefix="bench-spread-") as scratch:
        results = Path(scratch) / "results.jsonl"
        command = [
            *(sys.executable, "-c", "from conformance.cli import main; main()", "run"),
            *("--quiet", "--impl", impl, "--results", str(results)),
            *("--properties", properties, "--seed", SEED, "--jobs", str(jobs)),
        ]
        environment = dict(os.environ)
        if examples is not None:
            environment[THOROUGH_EXAMPLES] = str(examples)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = perf_counter()
        finished = subprocess.run(
            command,
            cwd=ROOT,
            capture_output=True,
            timeout=RUN_TIMEOUT,
            check=False,
            env=environment,
        )
        seconds = perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        scenarios = read_stream(results).scenarios
    searched: dict[str, tuple[int, float]] = {}
    for record in scenarios:
        counts = EXAMPLES.search(record.evidence or "")
        spent = GENERATE_SECONDS.search(record.evidence or "")
        if counts and spent:
            test = record.key.rsplit("[", 1)[0]
            searched[test] = (sum(int(n) for n in counts.groups()), float(spent.group(1)))
    return Timed(
        name=name,
        seconds=seconds,
        exit_code=finished.returncode,
        statuses={record.key: record.status.value for record in scenarios},
        examples=sum(count for count, _ in searched.values()),
        generating=sum(spent for _, spent in searched.values()),
        cpu_seconds=cpu,
    )


def measure(settings: SpreadSettings) -> list[Row]:
    runs = {}
    for name, impl, budget, jobs in RUNS:
        examples = settings.thorough_examples if budget == "thorough" else None
        runs[name] = timed_run(name, impl, budget, jobs, examples)
        if settings.log is not None:
            with settings.log.open("a", encoding="utf-8") as log:
                log.write(json.dumps(asdict(runs[name])) + "\n")
    return rows_of(runs, settings.thorough_examples)


def rows_from_log(log: Path, examples: int | None) -> list[Row]:
    """The rows of the runs a log holds (the last of each name): those it lacks are missing."""
    runs = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        run = Timed(**json.loads(line))
        runs[run.name] = run
    return rows_of(runs, examples)


def rows_of(runs: dict[str, Timed], examples: int | None) -> list[Row]:
    size = f"{examples or 1000} examples a search"
    rows = []
    if {"exec-ci-1", "exec-ci-2"} <= runs.keys():
        what = "the whole suite (--properties ci)"
        rows.append(_jobs_row("spread.jobs.suite", what, runs["exec-ci-1"], runs["exec-ci-2"]))
    if {"exec-thorough-1", "exec-thorough-2"} <= runs.keys():
        rows.append(
            _jobs_row(
                "spread.jobs.thorough",
                f"the whole suite (--properties thorough, {size})",
                runs["exec-thorough-1"],
                runs["exec-thorough-2"],
            )
        )
    for where, ci_name, deep_name in (
        ("in-process", "local-ci-1", "local-thorough-1"),
        ("exec", "exec-ci-1", "exec-thorough-1"),
    ):
        if {ci_name, deep_name} <= runs.keys():
            rows += _depth_rows(where, runs[ci_name], runs[deep_name], size)
    return rows


def _depth_rows(where: str, ci: Timed, deep: Timed, size: str) -> list[Row]:
    return [
        Row(
            key=f"spread.thorough.wall.{where}",
            section=SECTION,
            what=f"conformance run wall time {where}, --properties ci vs thorough ({size})",
            baseline=Measure("ci", ci.seconds, "s"),
            subject=Measure("thorough", deep.seconds, "s"),
            note=f"ci: {ci.summary()}; thorough: {deep.summary()}",
        ),
        Row(
            key=f"spread.thorough.rate.{where}",
            section=SECTION,
            what=f"property examples/s {where} (generate phase), ci vs thorough ({size})",
            baseline=Measure("ci", ci.rate, "examples/s"),
            subject=Measure("thorough", deep.rate, "examples/s"),
            note=(
                f"ci: {ci.examples} examples in {ci.generating:.1f} s; thorough: "
                f"{deep.examples} in {deep.generating:.1f} s (programs of 100 steps, not 40)"
            ),
        ),
    ]


def _jobs_row(key: str, what: str, one: Timed, two: Timed) -> Row:
    differing = sorted(
        k
        for k in one.statuses.keys() | two.statuses.keys()
        if one.statuses.get(k) != two.statuses.get(k)
    )
    same = (
        "every verdict the same"
        if not differing
        else f"{len(differing)} verdicts differ: " + (", ".join(differing[:5]))
    )
    return Row(
        key=key,
        section=SECTION,
        what=f"{what} through exec, --jobs 1 vs --jobs 2, wall time",
        baseline=Measure("--jobs 1", one.seconds, "s"),
        subject=Measure("--jobs 2", two.seconds, "s"),
        target=JOBS_TARGET,
        note=f"{same}; --jobs 1: {one.summary()}; --jobs 2: {two.summary()}; {_floor(one, two)}",
    )


def _floor(one: Timed, two: Timed) -> str:
    """The best ratio the machine's cores allow: `--jobs 2`'s CPU time spread evenly over them,
    against `--jobs 1`'s wall time (a run of one job through exec already keeps more than one
    core busy: the harness and the implementation answer in turn, and overlap)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    best = two.cpu_seconds / max(cores or 1, 1)
    return (
        f"the floor on {cores} cores: --jobs 2's CPU over them, {best:.0f} s "
        f"({best / one.seconds:.2f}x of --jobs 1)"
    )
