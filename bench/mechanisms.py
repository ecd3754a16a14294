"""What each of the kit's speed mechanisms buys on the command users wait for, beside the plain
way, in the same bench run: `conformance run --properties ci --seed 1` over the whole suite.

- Process reuse (`exec:`): a served implementation is reset between scenarios instead of
  started again for each (against CONFORMANCE_EXEC_REUSE=0).
- Spares (`exec:`): a process started ahead of each restart the Gherkin forecasts (against
  CONFORMANCE_EXEC_PRELAUNCH=0).

The fork server of `conformance strength` is weighed in section 5. A mechanism is kept only
where it buys at least a fifth of the command's wall time: its row's cost × at most 0.8.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import Final

from bench.kit_cost import EXEC_IMPL
from bench.report import Measure, Row
from bench.stats import median
from conformance.adapters.factory import PRELAUNCH_ENV, REUSE_ENV
from conformance.stream.stream_integrity import read_stream

SECTION = "7. What each speed mechanism buys"
ROOT: Final = Path(__file__).resolve().parent.parent
PAYS_FOR_ITSELF: Final = 0.8
"""A mechanism stays where the command takes at most four fifths of its plain way's time."""
RUN_TIMEOUT: Final = 3600


@dataclass(frozen=True)
class Way:
    label: str
    command: list[str]
    environment: Mapping[str, str]

    def argv(self, results: str) -> list[str]:
        return [*self.command, "--results", results]


def conformance(label: str, impl: str, switched: str | None = None) -> Way:
    """The whole suite's run, with the mechanism `switched` (its environment variable) off."""
    command = [sys.executable, "-c", "from conformance.cli import main; main()", "run"]
    command += ["--quiet", "--impl", impl, "--properties", "ci", "--seed", "1"]
    return Way(label, command, {switched: "0"} if switched else {})


PAIRS: Final = (
    (
        "reuse",
        "exec: process reuse",
        conformance("a process per scenario", EXEC_IMPL, switched=REUSE_ENV),
        conformance("reused", EXEC_IMPL),
    ),
    (
        "spares",
        "exec: spares",
        conformance("no spares", EXEC_IMPL, switched=PRELAUNCH_ENV),
        conformance("spares", EXEC_IMPL),
    ),
)
"""Each mechanism: the plain way, then the way the kit ships."""


def measure(repeats: int) -> list[Row]:
    return [_row(key, name, plain, shipped, repeats) for key, name, plain, shipped in PAIRS]


def _row(key: str, name: str, plain: Way, shipped: Way, repeats: int) -> Row:
    """The two ways in turn, `repeats` times each; the medians, every time in the note."""
    times: dict[str, list[float]] = {plain.label: [], shipped.label: []}
    for _ in range(repeats):
        for way in (plain, shipped):
            times[way.label].append(_timed(way))
    notes = "; ".join(f"{label}: {_seconds(taken)}" for label, taken in times.items())
    labels = (f"{plain.label} ({_switched(plain)})", shipped.label)
    return Row(
        key=f"mechanisms.{key}",
        section=SECTION,
        what=f"{name}: `conformance run --properties ci --seed 1`, median of {repeats}",
        baseline=Measure(labels[0], median(times[plain.label]), "s"),
        subject=Measure(labels[1], median(times[shipped.label]), "s"),
        target=PAYS_FOR_ITSELF,
        note=notes,
    )


def _seconds(taken: list[float]) -> str:
    return " / ".join(f"{seconds:.1f} s" for seconds in taken)


def _switched(way: Way) -> str:
    return ", ".join(f"{name}={value}" for name, value in way.environment.items()) or "plain"


def _timed(way: Way) -> float:
    """Wall seconds from launch to exit. A run that breaks is no measure of anything: the kit's
    run must end with a verdict (exit 0, or 1 for the in-process crash clause left unverified)
    and a whole stream."""
    with tempfile.TemporaryDirectory(prefix="bench-mechanism-") as scratch:
        results = str(Path(scratch) / "results.jsonl")
        started = perf_counter()
        finished = subprocess.run(
            way.argv(results),
            cwd=ROOT,
            env={**os.environ, **way.environment},
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        seconds = perf_counter() - started
        whole = Path(results).exists() and read_stream(Path(results)).footer is not None
    if finished.returncode not in (0, 1) or not whole:
        said = finished.stdout[-1000:] + finished.stderr[-1000:]
        raise RuntimeError(f"{way.label} broke (exit {finished.returncode}):\n{said}")
    return seconds
