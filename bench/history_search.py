"""What judging a race's history by the linearizability search costs, per batch size, beside
the cost of recording that history against the reference (the search is the work requests'
only judge of a race: the hand-written rules it replaced are gone).

The histories are the kit's own race programs (`conformance.concurrency.races`) recorded
against the in-process reference: usages of one slice, claims of one request, publishes of
one request, delegations from five root sessions of one campaign (twice as many asked as
the budget holds), with batches of 4, 8 and 12 calls (delegations: 8, 16 and 24; publishes:
the kit's fixed batch of six).
Each is judged whole, from an empty model, by `judge_history`; it must accept every history
(the reference is correct): a row it does not explain is printed as such, not as a time.

    python -m bench.history_search [--samples 15]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

from rich.console import Console
from rich.table import Table

from bench.stats import median
from conformance.adapters.factory import open_driver
from conformance.concurrency.history import HistoryRecorder, Operation
from conformance.concurrency.races import (
    PUBLISHED_RESULTS,
    claim_race,
    delegation_race,
    publish_race,
    usage_race,
)
from conformance.concurrency.work_request_calls import judge_history
from conformance.oracle.work_requests import WorkRequestOracle

START = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
SIZES = (4, 8, 12)
Race = Callable[[HistoryRecorder, int], object]

PUBLISHES = "publishes of one request"
"""A publish race's batch is the kit's fixed set of results (an exact retry among them)."""

RACES: dict[str, Race] = {
    "usages of one slice": lambda recorder, size: usage_race(
        recorder, requests=4, usages=size, amount=30, budget_slice=100
    ),
    "claims of one request": lambda recorder, size: claim_race(
        recorder, requests=4, claimants=size
    ),
    "delegations from five sessions": lambda recorder, size: delegation_race(
        recorder, budget=10 * size, delegations=2 * size, budget_slice=10, sessions=5
    ),
    PUBLISHES: lambda recorder, size: publish_race(recorder, requests=4),
}


def recorded(
    race: Race, size: int, directory: Path
) -> tuple[list[Operation], WorkRequestOracle, float]:
    """One race program's history against the reference, the empty model it starts from, and
    how long recording it took."""
    driver = open_driver("reference", None, directory)
    try:
        recorder = HistoryRecorder(driver)
        recorder.set_clock(START)
        limits = driver.describe().work_requests
        assert limits is not None
        took = timed(lambda: race(recorder, size))
        return recorder.operations(), WorkRequestOracle(limits, START), took
    finally:
        driver.close()


def timed(action: Callable[[], object]) -> float:
    started = perf_counter()
    action()
    return perf_counter() - started


def measure(samples: int) -> Table:
    table = Table(title="Judging a race's history by the linearizability search")
    for column in ("race", "calls a batch", "recording", "search (median)", "search/recording"):
        table.add_column(column, justify="left" if column == "race" else "right")
    table.add_column("tries", justify="right")
    with tempfile.TemporaryDirectory() as directory:
        for name, race in RACES.items():
            for size in SIZES if name != PUBLISHES else (len(PUBLISHED_RESULTS),):
                history, start, took = recorded(race, size, Path(directory) / f"{name}-{size}")
                table.add_row(name, str(size), *row(history, start, took, samples))
    return table


def row(history: list[Operation], start: WorkRequestOracle, took: float, samples: int) -> list[str]:
    verdict = judge_history(history, start)
    if not verdict.ok:
        return ["", "", "not explained: the reference's history", ""]
    search = median([timed(lambda: judge_history(history, start)) for _ in range(samples)])
    return [
        f"{took * 1000:.1f} ms",
        f"{search * 1000:.2f} ms",
        f"{search / took:.2f}×",
        str(verdict.tries),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=15)
    arguments = parser.parse_args(argv)
    Console().print(measure(arguments.samples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
