"""What the kit itself costs: the suite in-process and through `exec:`, per request, per example.

- The conformance run: `conformance run` in a subprocess, once with the
  in-process reference and once with the reference served over protocol v1
  (`exec:python -m conformance.wire.serve`), so the difference is the protocol's
  overhead: a process per scenario, encoding, validation, pipes.
- The round trip: one request through each adapter, on an open driver.
- Hypothesis: examples per second of one of the kit's own property tests,
  with the same derandomized examples through each adapter.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bench.report import Measure, Row
from bench.stats import MICROS, MILLIS, median, rate
from conformance.adapters.factory import PRELAUNCH_ENV, REUSE_ENV, open_driver
from conformance.driver import Capability, Driver
from conformance.running.properties_plugin import DriverFactory
from conformance.stream.results import ScenarioResult
from conformance.stream.stream_integrity import read_stream

SECTION = "4. The kit"
ROOT = Path(__file__).resolve().parent.parent
EXEC_FILES = (ROOT / "conformance/adapters/exec_adapter.py", ROOT / "conformance/wire/serve.py")
EXEC_IMPL = f"exec:{sys.executable} -m conformance.wire.serve"
IN_PROCESS = "reference"
SUITE_TARGET = 1.5
PROPERTY_MODULE = "conformance.properties.test_office_window"
BOTH_ADAPTERS_RUN = "not crash_in_the_middle and not from_several_processes"
"""Leaves out the five scenarios the in-process adapter cannot run (it cannot kill itself in
the middle of a batch, nor be several processes): they would time work only one side does."""
PROPERTY_SELECTION = "test_office_window or test_work_request_machine"
"""Every property test of the kit (their modules), for `conformance run -k`."""
EXAMPLES = re.compile(r"(\d+) passing, (\d+) failing, and (\d+) invalid")
GENERATE_SECONDS = re.compile(r"during generate phase \(([\d.]+) seconds\)")
PROPERTY_TEST = "test_admission_decisions_match_the_rolling_window"
RUN_TIMEOUT = 3600
SPARE_SETTLE = 2.0
"""Seconds a spare gets to start before a timed restart (not counted)."""


@dataclass(frozen=True)
class KitSettings:
    selection: str | None
    """A pytest -k expression for the suite run; None runs every scenario."""
    round_trips: int
    launches: int
    examples: int
    suite_without_reuse: bool
    """Also time the suite with a new process per scenario (CONFORMANCE_EXEC_REUSE=0)."""
    suite_repeats: int
    """How many times each of the two suite runs is made, in turn."""
    property_seed: int = 1


def measure(settings: KitSettings) -> list[Row]:
    missing = exec_missing()
    rows = [_suite_row(settings.selection, missing, settings.suite_repeats)]
    if missing:
        return [*rows, *_missing_rows(missing)]
    if settings.selection is None:
        rows.append(_exec_only_row())
    if settings.suite_without_reuse:
        rows.append(_reuse_suite_row(settings.selection))
    return [
        *rows,
        *_launch_rows(settings.launches),
        *_restart_rows(settings.launches),
        *_round_trip_rows(settings.round_trips),
        _hypothesis_row(settings.examples),
        _property_row(settings.property_seed, settings.suite_repeats),
    ]


def exec_missing() -> str:
    absent = [str(path.relative_to(ROOT)) for path in EXEC_FILES if not path.exists()]
    return f"exec adapter missing ({', '.join(absent)})" if absent else ""


# -- the suite ----------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteRun:
    seconds: float
    statuses: Counter[str]
    searches: dict[str, tuple[int, float]]
    """Per property test: the examples Hypothesis ran and the seconds its generate phase took."""

    def summary(self, selection: str | None) -> str:
        """Status counts; with a selection, the scenarios left out are reported undefined."""
        unrun = "undefined or not selected" if selection else "undefined"
        names = {"undefined": unrun}
        counts = sorted(self.statuses.items())
        return ", ".join(f"{count} {names.get(status, status)}" for status, count in counts)


def _scope(selection: str | None) -> str:
    return f"-k {selection!r}" if selection else "every scenario"


def _both_adapters_run(selection: str | None) -> str:
    """`selection` without the scenarios only `exec:` can run, so that both runs time the
    same scenarios."""
    return f"({selection}) and {BOTH_ADAPTERS_RUN}" if selection else BOTH_ADAPTERS_RUN


def _suite_row(selection: str | None, missing: str, repeats: int) -> Row:
    """The two runs in turn, `repeats` times each, over the scenarios both can run; the
    medians, every time in the note."""
    scope = f"{_scope(selection)} both adapters run"
    what = f"conformance run wall time ({scope}, median of {repeats}), in-process vs exec"
    selection = _both_adapters_run(selection)
    if missing:
        in_process = _run_suite(IN_PROCESS, selection)
        return Row(
            key="kit.suite",
            section=SECTION,
            what=what,
            baseline=Measure("in-process", in_process.seconds, "s"),
            target=SUITE_TARGET,
            note=f"not measured: {missing}",
        )
    runs: dict[str, list[SuiteRun]] = {IN_PROCESS: [], EXEC_IMPL: []}
    for _ in range(repeats):
        for impl, done in runs.items():
            done.append(_run_suite(impl, selection))
    local, served = runs[IN_PROCESS], runs[EXEC_IMPL]
    return Row(
        key="kit.suite",
        section=SECTION,
        what=what,
        baseline=Measure("in-process", median([run.seconds for run in local]), "s"),
        subject=Measure("exec", median([run.seconds for run in served]), "s"),
        target=SUITE_TARGET,
        note=(
            f"in-process: {_seconds(local)}, {local[-1].summary(selection)}; "
            f"exec: {_seconds(served)}, {served[-1].summary(selection)}"
        ),
    )


def _seconds(runs: list[SuiteRun]) -> str:
    return " / ".join(f"{run.seconds:.1f} s" for run in runs)


def _exec_only_row() -> Row:
    """What the scenarios only `exec:` can run add to its whole run."""
    shared = _run_suite(EXEC_IMPL, BOTH_ADAPTERS_RUN)
    whole = _run_suite(EXEC_IMPL, None)
    return Row(
        key="kit.suite_exec_only",
        section=SECTION,
        what=(
            "exec: run wall time, the scenarios both adapters run vs every scenario "
            "(a kill mid-batch, several processes on one store)"
        ),
        baseline=Measure("both adapters' scenarios", shared.seconds, "s"),
        subject=Measure("every scenario", whole.seconds, "s"),
        note=f"both: {shared.summary(BOTH_ADAPTERS_RUN)}; every: {whole.summary(None)}",
    )


def _reuse_suite_row(selection: str | None) -> Row:
    reused = _run_suite(EXEC_IMPL, selection)
    fresh = _run_suite(EXEC_IMPL, selection, reuse=False)
    return Row(
        key="kit.suite_reuse",
        section=SECTION,
        what=f"exec: run wall time ({_scope(selection)}), processes reused vs one per scenario",
        baseline=Measure("reused", reused.seconds, "s"),
        subject=Measure(f"{REUSE_ENV}=0", fresh.seconds, "s"),
        note=f"reused: {reused.summary(selection)}; one per scenario: {fresh.summary(selection)}",
    )


def _run_suite(
    impl: str, selection: str | None, *, reuse: bool = True, extra: Sequence[str] = ()
) -> SuiteRun:
    """`conformance run`, as a user runs it, timed from launch to exit."""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as scratch:
        results = Path(scratch) / "results.jsonl"
        command = [
            sys.executable,
            "-c",
            "from conformance.cli import main; main()",
            "run",
            "--quiet",
            "--impl",
            impl,
            "--results",
            str(results),
        ]
        command += [*extra, *(["-k", selection] if selection else [])]
        with _switch(REUSE_ENV, enabled=reuse):
            start = perf_counter()
            subprocess.run(command, cwd=ROOT, capture_output=True, timeout=RUN_TIMEOUT, check=False)
            seconds = perf_counter() - start
        scenarios = read_stream(results).scenarios
    statuses = Counter(r.status.value for r in scenarios)
    return SuiteRun(seconds, statuses, _searches(scenarios))


def _searches(scenarios: Sequence[ScenarioResult]) -> dict[str, tuple[int, float]]:
    """What each property test's evidence says of its search (one test, several criteria)."""
    found: dict[str, tuple[int, float]] = {}
    for scenario in scenarios:
        examples = EXAMPLES.search(scenario.evidence or "")
        generating = GENERATE_SECONDS.search(scenario.evidence or "")
        if examples and generating:
            test = scenario.key.partition("[")[0]
            found[test] = (sum(int(n) for n in examples.groups()), float(generating.group(1)))
    return found


def _property_row(seed: int, repeats: int) -> Row:
    """The kit's property tests through `conformance run --properties ci`, each way in turn:
    examples per second of Hypothesis' generate phase, summed over the tests."""
    extra = ("--properties", "ci", "--seed", str(seed))
    runs: dict[str, list[SuiteRun]] = {IN_PROCESS: [], EXEC_IMPL: []}
    for _ in range(repeats):
        for impl, done in runs.items():
            done.append(_run_suite(impl, PROPERTY_SELECTION, extra=extra))
    local, served = (_search_rates(runs[impl]) for impl in (IN_PROCESS, EXEC_IMPL))
    return Row(
        key="kit.properties",
        section=SECTION,
        what=(
            f"property examples/s through conformance run (--properties ci --seed {seed}, "
            f"median of {repeats}), in-process vs exec"
        ),
        baseline=Measure("in-process", median([rate for rate, _ in local]), "examples/s"),
        subject=Measure("exec", median([rate for rate, _ in served]), "examples/s"),
        target=SUITE_TARGET,
        note=f"in-process: {_notes(local)}; exec: {_notes(served)}",
    )


def _search_rates(runs: list[SuiteRun]) -> list[tuple[float, str]]:
    """Per run: examples per second over every property test, and what that was."""
    rates = []
    for run in runs:
        examples = sum(count for count, _ in run.searches.values())
        seconds = sum(spent for _, spent in run.searches.values())
        what = f"{examples} examples of {len(run.searches)} tests in {seconds:.1f} s"
        rates.append((rate(examples, seconds), what))
    return rates


def _notes(rates: list[tuple[float, str]]) -> str:
    return " / ".join(what for _, what in rates)


# -- one request ----------------------------------------------------------------------


@contextmanager
def _driver(impl: str) -> Iterator[Driver]:
    with tempfile.TemporaryDirectory(prefix="bench-driver-") as scratch:
        driver = open_driver(impl, None, Path(scratch))
        try:
            yield driver
        finally:
            driver.close()


@dataclass(frozen=True)
class ExecSaving:
    """A cost the exec adapter saves (by reuse, by prelaunch): two rows, in-process vs exec as
    configured, and exec as configured vs exec with that saving switched off."""

    key: str
    what: str
    saving: str
    """What exec does by default, as the baseline's label: "reset", "spare"."""
    switched_off: str
    default_note: str
    switched_note: str

    def rows(self, local: float, default: float, switched: float) -> list[Row]:
        return [
            Row(
                key=f"kit.{self.key}",
                section=SECTION,
                what=f"{self.what}, median, in-process vs exec",
                baseline=Measure("in-process", local, "ms"),
                subject=Measure("exec", default, "ms"),
                note=f"exec as configured by default: {self.default_note}",
            ),
            Row(
                key=f"kit.{self.key}_{self.saving}",
                section=SECTION,
                what=f"exec: {self.what}, median, {self.saving} vs {self.switched_off}",
                baseline=Measure(self.saving, default, "ms"),
                subject=Measure(self.switched_off, switched, "ms"),
                note=self.switched_note,
            ),
        ]


LAUNCH = ExecSaving(
    key="launch",
    what="open a driver on an empty store (once per scenario)",
    saving="reset",
    switched_off=f"{REUSE_ENV}=0",
    default_note="a parked process, reset",
    switched_note="a new process: an interpreter, its imports, an empty schema, the handshake",
)
RESTART = ExecSaving(
    key="restart",
    what="restart on the same store",
    saving="spare",
    switched_off=f"{PRELAUNCH_ENV}=0",
    default_note=f"SIGKILL, then the handshake of a spare started {SPARE_SETTLE:.0f} s before",
    switched_note="launched at the restart: a new interpreter, its imports, the handshake",
)


def _launch_rows(count: int) -> list[Row]:
    """What every scenario pays before its first step: a driver on an empty store."""
    local = _median_open(IN_PROCESS, count, reuse=True)
    reused = _median_open(EXEC_IMPL, count, reuse=True)
    fresh = _median_open(EXEC_IMPL, count, reuse=False)
    return LAUNCH.rows(local, reused, fresh)


def _median_open(impl: str, count: int, *, reuse: bool) -> float:
    """Median milliseconds to open a driver; closing it (and parking it) is not counted.

    The scratch directories outlive their drivers, as a test session's do, so
    that a parked process keeps its store and can be taken again.
    """
    samples = []
    with (
        _switch(REUSE_ENV, enabled=reuse),
        tempfile.TemporaryDirectory(prefix="bench-launch-") as scratch,
    ):
        for index in range(count + 1):
            directory = Path(scratch) / str(index)
            directory.mkdir()
            start = perf_counter()
            driver = open_driver(impl, None, directory)
            samples.append(perf_counter() - start)
            driver.close()
    return median(samples[1:]) * MILLIS


def _restart_rows(count: int) -> list[Row]:
    """A restart kills the process; exec then takes over the spare launched ahead, if any.

    The spare is given SPARE_SETTLE seconds (untimed) to start before each timed
    restart, as the steps between two restarts of a scenario give it.
    """
    with _driver(IN_PROCESS) as local:
        in_process = _median_restart(local, count, settle=0.0)
    with _switch(PRELAUNCH_ENV, enabled=True), _driver(EXEC_IMPL) as served:
        spare = _median_restart(served, count, settle=SPARE_SETTLE)
    with _switch(PRELAUNCH_ENV, enabled=False), _driver(EXEC_IMPL) as served:
        relaunch = _median_restart(served, count, settle=0.0)
    return RESTART.rows(in_process, spare, relaunch)


def _median_restart(driver: Driver, count: int, *, settle: float) -> float:
    """Median milliseconds of a restart, after one untimed restart (a run's first restart
    launches as usual and starts the spares)."""
    driver.restart()
    samples = []
    for _ in range(count):
        time.sleep(settle)
        start = perf_counter()
        driver.restart()
        samples.append(perf_counter() - start)
    return median(samples) * MILLIS


@contextmanager
def _switch(variable: str, *, enabled: bool) -> Iterator[None]:
    """Set one of the exec adapter's on/off environment settings for the block."""
    previous = os.environ.get(variable)
    os.environ[variable] = "1" if enabled else "0"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[variable]
        else:
            os.environ[variable] = previous


def _round_trip_rows(count: int) -> list[Row]:
    with _driver(IN_PROCESS) as local, _driver(EXEC_IMPL) as served:
        for driver in (local, served):
            driver.create_workspace("ws")
            driver.create_task("ws", "task")
        instant = datetime(2026, 1, 1, tzinfo=UTC)
        operations: dict[str, Callable[[Driver], object]] = {
            "set_clock": lambda driver: driver.set_clock(instant),
            "get_task": lambda driver: driver.get_task("task"),
        }
        rows = []
        for name, operation in operations.items():
            local_us, served_us = _interleaved(local, served, operation, count)
            rows.append(
                Row(
                    key=f"kit.round_trip.{name}",
                    section=SECTION,
                    what=f"one request ({name}), median, in-process vs exec",
                    baseline=Measure("in-process", local_us, "µs"),
                    subject=Measure("exec", served_us, "µs"),
                    note=f"protocol overhead per request: {served_us - local_us:.0f} µs",
                )
            )
    return rows


def _interleaved(
    local: Driver, served: Driver, operation: Callable[[Driver], object], count: int
) -> tuple[float, float]:
    times: dict[int, list[float]] = {id(local): [], id(served): []}
    for _ in range(count):
        for driver in (local, served):
            start = perf_counter()
            operation(driver)
            times[id(driver)].append(perf_counter() - start)
    return median(times[id(local)]) * MICROS, median(times[id(served)]) * MICROS


# -- Hypothesis -----------------------------------------------------------------------


class CountingDrivers:
    """The property tests' driver factory, counting the drivers opened: one per example."""

    def __init__(self, factory: Any) -> None:
        self._factory = factory
        self.opened = 0

    @contextmanager
    def fresh(self) -> Iterator[Driver]:
        self.opened += 1
        with self._factory.fresh() as driver:
            yield driver


def _examples_per_second(impl: str, examples: int) -> tuple[float, int]:
    module = importlib.import_module(PROPERTY_MODULE)
    with tempfile.TemporaryDirectory(prefix="bench-examples-") as scratch:
        return _count_examples(module, impl, examples, Path(scratch))


def _count_examples(module: Any, impl: str, examples: int, scratch: Path) -> tuple[float, int]:
    drivers = CountingDrivers(DriverFactory(impl=impl, database=None, scratch=scratch))
    with _driver(impl) as driver:
        description = driver.describe()
    assert description.office is not None
    office = module.Office(description.office, Capability.RESTART in description.capabilities)
    bounded = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    test = given(data=st.data())(bounded(_fresh_copy(getattr(module, PROPERTY_TEST))))
    start = perf_counter()
    test(drivers=drivers, office=office)
    return rate(drivers.opened, perf_counter() - start), drivers.opened


def _fresh_copy(test: Any) -> Callable[..., None]:
    """The body of a @given test, undecorated, so that it can take this bench's settings."""
    inner = test.hypothesis.inner_test

    def body(*args: Any, **kwargs: Any) -> None:
        inner(*args, **kwargs)

    body.__signature__ = inspect.signature(inner)  # type: ignore[attr-defined]
    body.__name__ = inner.__name__
    return body


def _hypothesis_row(examples: int) -> Row:
    local, local_count = _examples_per_second(IN_PROCESS, examples)
    served, served_count = _examples_per_second(EXEC_IMPL, examples)
    return Row(
        key="kit.hypothesis",
        section=SECTION,
        what=f"Hypothesis examples/s ({PROPERTY_TEST}), in-process vs exec",
        baseline=Measure("in-process", local, "examples/s"),
        subject=Measure("exec", served, "examples/s"),
        note=f"{local_count} and {served_count} examples, derandomized, a fresh store each",
    )


def _missing_rows(missing: str) -> list[Row]:
    return [
        Row(
            key=key,
            section=SECTION,
            what=what,
            baseline=Measure("in-process", None, unit),
            note=f"not measured: {missing}",
        )
        for key, what, unit in (
            ("kit.round_trip.set_clock", "one request (set_clock), in-process vs exec", "µs"),
            ("kit.hypothesis", "Hypothesis examples/s, in-process vs exec", "examples/s"),
        )
    ]
