"""What a run spread over cores saves (`--jobs`), and what the deep search costs (`thorough`).

Rows, each measured in the same bench run (issue 27):

- the whole suite (`--properties ci --seed 1`) through `exec:` against the served reference,
  `--jobs 1` against `--jobs 2` (target: at most 0.6× on two cores), and whether every
  verdict came out the same;
- the whole suite with `--properties thorough` beside the same with `ci`, in-process and through
  `exec:`: wall time, and examples per second of Hypothesis' generate phase over every search;
- the thorough run through `exec:` at `--jobs 2` against `--jobs 1` (target: 0.6× too).

`--quick` runs the thorough profile at a reduced size (CONFORMANCE_THOROUGH_EXAMPLES, so a
row says how many examples each search tried); `--full` at its real size, 1000 examples a
search, which takes half an hour a run or more on two cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

from bench.kit_cost import EXAMPLES, EXEC_IMPL, GENERATE_SECONDS, IN_PROCESS
from bench.report import Measure, Row
from bench.stats import rate
from conformance.properties.plugin import THOROUGH_EXAMPLES
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


@dataclass(frozen=True)
class Timed:
    seconds: float
    exit_code: int
    statuses: dict[str, str]
    examples: int
    generating: float
    """Seconds of Hypothesis' generate phase, summed over the searches."""

    @property
    def rate(self) -> float:
        return rate(self.examples, self.generating)

    def summary(self) -> str:
        counts = Counter(self.statuses.values())
        shown = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        return f"exit {self.exit_code}; {shown}; {self.examples} examples"


def timed_run(impl: str, properties: str, jobs: int, examples: int | None = None) -> Timed:
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
        scenarios = read_stream(results).scenarios
    searched: dict[str, tuple[int, float]] = {}
    for record in scenarios:
        counts = EXAMPLES.search(record.evidence or "")
        spent = GENERATE_SECONDS.search(record.evidence or "")
        if counts and spent:
            test = record.key.rsplit("[", 1)[0]
            searched[test] = (sum(int(n) for n in counts.groups()), float(spent.group(1)))
    return Timed(
        seconds=seconds,
        exit_code=finished.returncode,
        statuses={record.key: record.status.value for record in scenarios},
        examples=sum(count for count, _ in searched.values()),
        generating=sum(spent for _, spent in searched.values()),
    )


def measure(settings: SpreadSettings) -> list[Row]:
    examples = settings.thorough_examples
    size = f"{examples} examples a search" if examples else "1000 examples a search"
    ci_one = timed_run(EXEC_IMPL, "ci", 1)
    ci_two = timed_run(EXEC_IMPL, "ci", 2)
    local_ci = timed_run(IN_PROCESS, "ci", 1)
    local_thorough = timed_run(IN_PROCESS, "thorough", 1, examples)
    served_thorough = timed_run(EXEC_IMPL, "thorough", 1, examples)
    served_thorough_two = timed_run(EXEC_IMPL, "thorough", 2, examples)
    rows = [
        _jobs_row("spread.jobs.suite", "the whole suite (--properties ci)", ci_one, ci_two),
        _jobs_row(
            "spread.jobs.thorough",
            f"the whole suite (--properties thorough, {size})",
            served_thorough,
            served_thorough_two,
        ),
    ]
    for where, ci, deep in (
        ("in-process", local_ci, local_thorough),
        ("exec", ci_one, served_thorough),
    ):
        rows += [
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
    return rows


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
        note=f"{same}; --jobs 1: {one.summary()}; --jobs 2: {two.summary()}",
    )
