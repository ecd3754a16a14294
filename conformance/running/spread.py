"""How `conformance run` spreads a run: over cores (`--jobs`) and over machines (`--shard`).

`--jobs N` runs the suite in N worker processes and writes one stream (see `jobs`); `--jobs 1`
runs it in the command's own process, as it always did. `--shard K/N` records the K-th of N
parts of the inventory (see `shards`), to be joined by `conformance merge`; with `--jobs`
too, the part's items are spread over the workers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from conformance.properties import Budget, draw_seed
from conformance.running.harness_memory import HarnessMemory
from conformance.running.jobs import JobsError, jobs_count, run_jobs
from conformance.running.options import SuiteOptions
from conformance.stream.results import ScenarioResult
from conformance.stream.shards import ShardError, parse_shard, part_of


class SpreadError(ValueError):
    """Options that cannot spread a run together; the message says why (exit code 2)."""


def check_spread(
    jobs: str, shard: str | None, seed: int | None, properties: Budget, database: str | None
) -> tuple[int, int | None]:
    """The number of workers and the seed of the run, or SpreadError.

    Every worker and every part must search from one seed: a run of several workers without
    one draws it here, once; the parts of a sharded run are started apart, so they must be
    given it (a CI matrix passes its run's number, say)."""
    try:
        count = jobs_count(jobs)
        if shard is not None:
            parse_shard(shard)
    except (JobsError, ShardError) as error:
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


def run_suite(
    count: int,
    args: Sequence[str],
    options: SuiteOptions,
    *,
    properties: Budget,
    scratch: Path,
    max_fail: int,
    progress: Callable[[ScenarioResult], None] | None,
) -> tuple[int, HarnessMemory]:
    """pytest's exit code and what the run holds: in this process with one job, else over
    `count` workers. `args` are pytest's own (and the properties'); `options` the suite's."""
    import pytest

    from conformance.inventory import load_inventory

    memory = HarnessMemory()
    if count == 1:
        return int(pytest.main([*args, options.argument()], plugins=[memory])), memory
    inventory = load_inventory(properties=properties is not Budget.NONE)
    if options.shard is not None:
        part = set(part_of([entry.key for entry in inventory], *parse_shard(options.shard)))
        inventory = [entry for entry in inventory if entry.key in part]
    jobs = run_jobs(
        count,
        args,
        options,
        inventory=inventory,
        scratch=scratch,
        max_fail=max_fail,
        progress=progress,
    )
    if jobs.said is not None:
        sys.stderr.write(jobs.said + "\n")
    return jobs.code, jobs
