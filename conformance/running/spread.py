"""How `conformance run` spreads a run: over cores (`--jobs`) and over machines (`--shard`).

`--jobs N` runs the suite in N pytest-xdist worker processes and writes one stream (see
`workers`); `--jobs 1` runs it in the command's own process. `--shard K/N` records the K-th of N
parts of the inventory (see `shards`), to be joined by `conformance merge`; with `--jobs`
too, the part's items are spread over the workers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from conformance.properties import Budget, draw_seed
from conformance.running.harness_memory import HarnessMemory
from conformance.running.options import SuiteOptions
from conformance.running.workers import xdist_arguments
from conformance.stream.shards import ShardError, parse_shard


class SpreadError(ValueError):
    """Options that cannot spread a run together; the message says why (exit code 2)."""


def check_spread(
    jobs: str, shard: str | None, seed: int | None, properties: Budget, database: str | None
) -> tuple[int, int | None]:
    """The number of workers and the seed of the run, or SpreadError.

    Every worker and every part must search from one seed: a run of several workers without
    one draws it here, once; the parts of a sharded run are started apart, so they must be
    given it (a CI matrix passes its run's number, say)."""
    count = jobs_count(jobs)
    try:
        if shard is not None:
            parse_shard(shard)
    except ShardError as error:
        raise SpreadError(str(error)) from error
    if shard is not None and seed is None and properties is not Budget.NONE:
        raise SpreadError(
            f"--shard {shard} needs --seed: every part of the run must search from one seed "
            "(give each the same, e.g. the CI run's number), or --properties none"
        )
    if count > 1 and database is not None:
        raise SpreadError(
            f"--jobs {jobs} with --database: the workers would empty and fill one store at "
            "once; run --jobs 1 on a given database (each scenario of a worker gets a store of "
            "its own without --database)"
        )
    if count > 1 and seed is None and properties is not Budget.NONE:
        seed = draw_seed()
    return count, seed


def jobs_count(text: str) -> int:
    """`--jobs`: a whole number from 1, or `auto` for the cores this process may use."""
    if text.strip() == "auto":
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # no sched_getaffinity (macOS)
            return max(1, os.cpu_count() or 1)
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise SpreadError(f"--jobs takes a whole number from 1, or auto, not {text!r}")
    return count


def run_suite(count: int, args: Sequence[str], options: SuiteOptions) -> tuple[int, HarnessMemory]:
    """pytest's exit code and what the run holds: in this process with one job, else over
    `count` pytest-xdist workers. `args` are pytest's own (and the properties'); `options` the
    suite's."""
    import pytest

    memory = HarnessMemory()
    spread = xdist_arguments(count) if count > 1 else []
    return int(pytest.main([*args, *spread, options.argument()], plugins=[memory])), memory
