"""One `conformance run`, from its settings to an outcome the CLI only has to show.

The implementation is opened once first (one that cannot even start is unusable, with a
stream and reports of a run of nothing); then the suite runs, in this process or over
pytest-xdist workers; then every process the run started is ended before anything is judged;
then the checks after the run: the stream on disk is still the harness's, the records agree
with pytest, and the kit's own files are as they were when the run began. What the CLI does
with each outcome (the lines it prints, the exit code) is `conformance.cli.run`'s.
"""

from __future__ import annotations

import importlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.adapters.exec_spares import end_every_process
from conformance.adapters.factory import ConfigurationError, open_driver
from conformance.adapters.faults import unusable_cause
from conformance.adapters.process_tree import adopting_orphans
from conformance.properties import Budget
from conformance.running.spread import run_suite
from conformance.scratch import RUN_FOLDER
from conformance.stream.provenance import suite_digests
from conformance.suite import PLUGINS, pytest_arguments

if TYPE_CHECKING:
    from conformance.running.harness_memory import HarnessMemory
    from conformance.running.options import SuiteOptions
    from conformance.stream.results import ResultsRun

TERMINAL_ARGUMENTS = ("-qq", "--tb=no", "--no-summary")
"""pytest's own output silenced (its failure section, its letters, its count line): the kit
prints its progress lines, then each failure's account once, after the verdict tables (see
running/progress.py); the stream keeps the whole evidence either way."""


@dataclass(frozen=True)
class RunPlan:
    """What a run needs beside the suite's options: what it selects and how it spreads."""

    properties: Budget
    workers: int
    seed: int | None
    select: str | None
    max_fail: int
    scratch: Path


@dataclass(frozen=True)
class Misconfigured:
    """The kit cannot set the run up (an unknown implementation, a database that cannot be
    reached): nothing was written; exit 2."""

    message: str


@dataclass(frozen=True)
class Unusable:
    """The implementation could not even start: the cause, and the run of nothing to report."""

    cause: str


@dataclass(frozen=True)
class HarnessFault:
    """The harness itself failed (a worker died, pytest's internal error): exit 4."""

    message: str


@dataclass(frozen=True)
class NotRun:
    """pytest could not run the suite (a usage error): exit 2."""

    pytest_code: int


@dataclass(frozen=True)
class Breach:
    """A check after the run that failed: which, and what it found."""

    check: str
    found: str


@dataclass(frozen=True)
class Judged:
    """The suite ran: its records, pytest's exit code, and each check after the run that
    failed (none, for a run whose verdict stands)."""

    run: ResultsRun
    pytest_code: int
    breaches: tuple[Breach, ...]


Outcome = Misconfigured | Unusable | HarnessFault | NotRun | Judged


def load_the_suite() -> dict[str, str]:
    """Import the kit's plugin and step modules before any implementation runs, so that
    whatever it then writes into their folders (a forged .pyc) is never loaded; the digests of
    the kit's files as they are now, to compare after the run."""
    for plugin in PLUGINS:
        importlib.import_module(plugin)
    return suite_digests()


def run_the_suite(
    options: SuiteOptions,
    plan: RunPlan,
    kit_before: dict[str, str],
) -> Outcome:
    """The whole run, as one of the outcomes above."""
    with adopting_orphans():
        try:
            cause = preflight(options)
        except ConfigurationError as error:
            return Misconfigured(str(error))
        if cause is not None:
            end_every_process()
            return Unusable(cause)
        code, memory = run_suite(plan.workers, pytest_argv(plan), options)
        end_every_process()
    if memory.fault is not None:
        return HarnessFault(memory.fault)
    if code == pytest.ExitCode.INTERNAL_ERROR:
        return HarnessFault("pytest stopped with an internal error")
    if code == pytest.ExitCode.USAGE_ERROR or memory.run is None:
        return NotRun(int(code))
    return Judged(memory.run, int(code), tuple(breaches_after(memory, kit_before)))


def pytest_argv(plan: RunPlan) -> list[str]:
    argv = [
        *pytest_arguments(plan.properties),
        f"--basetemp={plan.scratch / 'scenarios'}",
        *("-p", "no:cov"),
        *TERMINAL_ARGUMENTS,
    ]
    argv += ["--maxfail", str(plan.max_fail)] if plan.max_fail else []
    argv += ["-k", plan.select] if plan.select else []
    argv += [f"--hypothesis-seed={plan.seed}"] if plan.seed is not None else []
    return argv


def preflight(options: SuiteOptions) -> str | None:
    """Open the implementation once before the suite: the cause, where it cannot even start; a
    ConfigurationError where the kit cannot set it up."""
    from sqlalchemy.exc import ArgumentError, InterfaceError, OperationalError

    with tempfile.TemporaryDirectory(prefix="preflight-", dir=RUN_FOLDER.path()) as scratch:
        try:
            driver = open_driver(
                options.impl, options.database, Path(scratch), containment=options.containment()
            )
        except ArgumentError as error:
            raise ConfigurationError(str(error)) from error
        except (OperationalError, InterfaceError) as error:
            reason = str(error.orig) if error.orig is not None else str(error)
            raise ConfigurationError(f"cannot reach the database: {reason}") from error
        except ConfigurationError:
            raise
        except Exception as error:  # whatever the implementation did, it is unusable
            return unusable_cause(error)
        driver.close()
    return None


def breaches_after(memory: HarnessMemory, kit_before: dict[str, str]) -> list[Breach]:
    """What the checks after the run found; a stream changed on disk is rewritten from the
    harness's own records first. An implementation running as the same user could change the
    stream or the kit's own files (features, steps, registry, harness code)."""
    found: list[Breach] = []
    if memory.stream_altered():
        memory.restore_stream()
        found.append(
            Breach(
                "integrity",
                "the results stream was changed on disk after the run ended; it was rewritten "
                "from the harness's own records, and the run fails",
            )
        )
    disagreeing = memory.disagreements()[:10]
    found += [Breach("records disagree with pytest", line) for line in disagreeing]
    after = suite_digests()
    changed = sorted(
        p for p in kit_before.keys() | after.keys() if kit_before.get(p) != after.get(p)
    )
    found += [
        Breach("integrity", f"the kit's file {path} changed during the run")
        for path in changed[:10]
    ]
    return found
