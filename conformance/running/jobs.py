"""`conformance run --jobs N`: the suite's items spread over N worker processes, one stream.

Each worker (see `jobs_worker`) is pytest over the whole suite in a process of its own, with
implementation processes of its own and a store of its own for every scenario, as in a run of
one job (a scenario that asks for several processes on one store still gets them, inside its
worker). The run hands the items out one at a time, to whichever worker asks first: the
property checks first (each is one long search that cannot be split), then the scenarios in
the inventory's order, so that no worker is left with a long search at the end while the others
idle. A property's search draws from the run's seed alone (running.properties_plugin), so it is the
same search in whichever worker runs it.

The run writes the one results stream itself, from the records the workers hand on over their
pipes (never from a file a worker wrote), as a run of one job writes it: the first worker's
header, then what ran in the inventory's order, each record as soon as those before it are in,
then what did not run (deselected, or left when the run stopped) as `undefined`, then the
footer. Its verdicts are those of `--jobs 1`; the stops are the run's too: the
restart budget counts every worker's faults and `--max-fail` every worker's failures, and past
either no worker is handed another item. Every worker must have collected the same items, and
every one must finish: a worker that dies is a fault of the harness (exit code 4), whatever its
records said.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final

from conformance.running.harness_memory import HarnessMemory
from conformance.running.jobs_worker import WORKER_MODULE
from conformance.running.options import SuiteOptions
from conformance.running.recorder import ALTERED
from conformance.spec.scenario_keys import ScenarioEntry
from conformance.stream.results import (
    Footer,
    Header,
    ResultsRun,
    ResultsWriter,
    ScenarioResult,
    totals,
    undefined_results,
)
from conformance.stream.shards import PROPERTY_PREFIX
from conformance.stream.stream_integrity import read_key

INTERNAL_ERROR: Final = 3  # pytest.ExitCode.INTERNAL_ERROR
USAGE_ERROR: Final = 4
NO_TESTS_COLLECTED: Final = 5
_LOG_TAIL: Final = 20


class JobsError(ValueError):
    """A `--jobs` that cannot be: the message says why."""


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
        raise JobsError(f"--jobs takes a whole number from 1, or auto, not {text!r}")
    return count


def worker_arguments(args: Sequence[str], options: SuiteOptions, folder: Path) -> list[str]:
    """The run's pytest arguments as one worker's: its own temporary folder, and the suite's
    options as a worker's (see `SuiteOptions.for_worker`)."""
    kept = [
        argument
        for argument in args
        if not argument.startswith("--basetemp=") and argument not in ("-v", "-q", "--no-summary")
    ]
    return [
        *kept,
        options.for_worker(folder).argument(),
        f"--basetemp={folder / 'scenarios'}",
        "-q",
        "--no-summary",
    ]


class JobsMemory(HarnessMemory):
    """What the run holds of a `--jobs` run, as HarnessMemory holds it of a run of one job: the
    records the workers handed on, the stream written from them, and what pytest said."""

    def __init__(self) -> None:
        super().__init__()
        self.code = 0
        """pytest's exit code for the run as a whole, from the workers' own."""
        self.fault: str | None = None
        """Why the run has no verdict of its own (a worker died or disagreed): exit code 4."""
        self.found: list[str] = []
        self.said: str | None = None
        """The end of the first worker's log, when the workers ran no suite (a usage error)."""
        self.writer: ResultsWriter | None = None

    def stream_altered(self) -> bool:
        return self.writer is not None and self.writer.altered()

    def restore_stream(self) -> None:
        if self.writer is not None:
            self.writer.rewrite()

    def disagreements(self) -> list[str]:
        return list(self.found)


@dataclass
class _Worker:
    number: int
    process: subprocess.Popen[bytes]
    incoming: IO[str]
    outgoing: IO[str]
    log: Path
    running: int | None = None
    faults: int = 0
    ended: dict[str, Any] | None = None


@dataclass
class _Run:
    """The state the workers' threads share, under `lock`."""

    inventory: list[ScenarioEntry]
    stream: Path
    sign_key: bytes | None
    max_fail: int
    restart_budget: int
    progress: Callable[[ScenarioResult], None] | None
    lock: threading.Lock = field(default_factory=threading.Lock)
    items: list[tuple[str, list[str]]] | None = None
    queue: collections.deque[int] = field(default_factory=collections.deque)
    records: dict[str, ScenarioResult] = field(default_factory=dict)
    to_come: list[str] = field(default_factory=list)
    """The keys the items will record, in the inventory's order."""
    written: list[ScenarioResult] = field(default_factory=list)
    header: Header | None = None
    writer: ResultsWriter | None = None
    failed: int = 0
    stopped: str | None = None
    halted: bool = False
    faults: list[str] = field(default_factory=list)
    integrity: str | None = None
    workers: list[_Worker] = field(default_factory=list)
    next_to_write: int = 0

    def collected(self, worker: _Worker, message: dict[str, Any]) -> None:
        items = [(str(nodeid), [str(k) for k in keys]) for nodeid, keys in message["collected"]]
        with self.lock:
            if self.items is None:
                self.items = items
                self.queue.extend(handed_out_first(items))
                selected = {key for _, keys in items for key in keys}
                self.to_come = [e.key for e in self.inventory if e.key in selected]
                if message.get("header") is not None:
                    self.header = Header.model_validate(message["header"])
                    self.writer = ResultsWriter(self.stream, sign_key=self.sign_key)
                    self.writer.write(self.header)
                    self._write_ready()
            elif items != self.items:
                self.faults.append(
                    f"worker {worker.number} collected other items than worker 1 "
                    f"({len(items)} against {len(self.items)})"
                )
                self.halted = True
                self.queue.clear()

    def next_item(self, worker: _Worker) -> int | None:
        with self.lock:
            worker.running = self.queue.popleft() if self.queue and not self.halted else None
            return worker.running

    def ran(self, worker: _Worker, message: dict[str, Any]) -> None:
        records = [ScenarioResult.model_validate(record) for record in message["records"]]
        with self.lock:
            worker.running = None
            worker.faults = int(message.get("faults") or 0)
            for record in records:
                self.records.setdefault(record.key, record)
                if self.progress is not None:
                    self.progress(record)
            self.failed += bool(message.get("failed"))
            self._weigh_stops(message.get("stopped"))
            self._write_ready()

    def _weigh_stops(self, stopped: object) -> None:
        """Stop handing out items past the run's restart budget or its --max-fail."""
        faults = sum(worker.faults for worker in self.workers)
        if self.stopped is None and faults > self.restart_budget:
            self.stopped = (
                str(stopped)
                if isinstance(stopped, str) and "restart budget" in stopped
                else f"the implementation faulted {faults} times, more than the restart budget "
                f"of {self.restart_budget}"
            )
        if self.stopped is not None or (self.max_fail and self.failed >= self.max_fail):
            self.halted = True
            self.queue.clear()

    def _write_ready(self) -> None:
        """Every record whose turn has come: those before it in the inventory are written."""
        if self.writer is None:
            return
        while self.next_to_write < len(self.to_come):
            record = self.records.get(self.to_come[self.next_to_write])
            if record is None:
                return
            self._append(record)
            self.next_to_write += 1

    def _append(self, record: ScenarioResult) -> None:
        assert self.writer is not None
        self.written.append(record)
        self.writer.write(record)

    def finish(self) -> ResultsRun | None:
        """The rest of the stream, its footer; the run. As a run of one job writes it: what ran
        in the inventory's order, then what did not run (deselected, or left when the run
        stopped) as `undefined`, in the inventory's order too."""
        if self.writer is None or self.header is None:
            return None
        for key in self.to_come[self.next_to_write :]:
            if key in self.records:
                self._append(self.records[key])
        for record in undefined_results(self.written, self.inventory):
            self._append(record)
        known = self.inventory_keys()
        for key, record in self.records.items():  # a record of no inventoried scenario
            if key not in known:
                self._append(record)
        altered = self.writer.altered()
        footer = Footer(
            finished_at=datetime.now(UTC),
            totals=totals(self.written),
            stopped=self.stopped,
            records=len(self.written),
            integrity=ALTERED if altered else self.integrity,
        )
        self.writer.write(footer)
        if altered:
            self.writer.rewrite()
        self.writer.close()
        return ResultsRun(header=self.header, scenarios=list(self.written), footer=footer)

    def inventory_keys(self) -> set[str]:
        return {entry.key for entry in self.inventory}


def handed_out_first(items: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
    """The order items are handed out in: the property checks first, those that check the most
    criteria (the longest searches) first, then everything else in the collection's order."""
    checks = [i for i, (_, keys) in enumerate(items) if _is_property(keys)]
    checks.sort(key=lambda i: -len(items[i][1]))
    return checks + [i for i, (_, keys) in enumerate(items) if not _is_property(keys)]


def _is_property(keys: Sequence[str]) -> bool:
    return bool(keys) and all(key.startswith(PROPERTY_PREFIX) for key in keys)


def run_jobs(
    count: int,
    args: Sequence[str],
    options: SuiteOptions,
    *,
    inventory: list[ScenarioEntry],
    scratch: Path,
    max_fail: int = 0,
    progress: Callable[[ScenarioResult], None] | None = None,
) -> JobsMemory:
    """The suite over `count` workers, writing the stream `options` names; what the run holds of
    it afterwards."""
    from conformance.adapters.process_tree import before_exec, forget, launching, register

    if options.results is None:
        raise JobsError("a run over several workers writes a results stream: name one")
    key = read_key(options.sign_key_file) if options.sign_key_file is not None else None
    state = _Run(inventory, options.results, key, max_fail, options.restart_budget, progress)
    workers = state.workers
    try:
        for number in range(1, count + 1):
            folder = scratch / f"worker-{number}"
            folder.mkdir(parents=True, exist_ok=True)
            to_worker_r, to_worker_w = os.pipe()
            from_worker_r, from_worker_w = os.pipe()
            log = folder / "pytest.log"
            with launching(), log.open("wb") as output:
                process = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        WORKER_MODULE,
                        f"{to_worker_r},{from_worker_w}",
                        *worker_arguments(args, options, folder),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    pass_fds=(to_worker_r, from_worker_w),
                    preexec_fn=before_exec(),  # it only sets PDEATHSIG
                )
                register(process.pid)
            os.close(to_worker_r)
            os.close(from_worker_w)
            workers.append(
                _Worker(
                    number,
                    process,
                    os.fdopen(from_worker_r, "r", encoding="utf-8"),
                    os.fdopen(to_worker_w, "w", encoding="utf-8"),
                    log,
                )
            )
        threads = [threading.Thread(target=_serve, args=(state, w), daemon=True) for w in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for worker in workers:
            worker.process.wait()
            forget(worker.process.pid)
    finally:
        for worker in workers:
            if worker.process.poll() is None:
                worker.process.kill()
                worker.process.wait()
    return _remembered(state, workers)


def _serve(state: _Run, worker: _Worker) -> None:
    """One worker's side of the run: answer its questions until it says it has ended."""
    try:
        for line in worker.incoming:
            message: dict[str, Any] = json.loads(line)
            if "collected" in message:
                state.collected(worker, message)
            elif "next" in message:
                item = state.next_item(worker)
                worker.outgoing.write(json.dumps({"item": item}) + "\n")
                worker.outgoing.flush()
            elif "ran" in message:
                state.ran(worker, message)
            elif "end" in message:
                worker.ended = message["end"]
    except (OSError, ValueError) as error:
        with state.lock:
            state.faults.append(f"worker {worker.number}'s pipe broke: {error}")
    finally:
        worker.incoming.close()
        with contextlib.suppress(OSError):
            worker.outgoing.close()


def _remembered(state: _Run, workers: list[_Worker]) -> JobsMemory:
    memory = JobsMemory()
    codes = []
    for worker in workers:
        ended = worker.ended
        if ended is None:
            state.faults.append(
                f"worker {worker.number} ended without finishing (exit code "
                f"{worker.process.returncode}); the end of its log:\n{_tail(worker.log)}"
            )
            continue
        codes.append(int(ended.get("exit", INTERNAL_ERROR)))
        memory.found += [str(line) for line in ended.get("disagreements", [])]
        if ended.get("integrity") and state.integrity is None:
            state.integrity = f"worker {worker.number}: {ended['integrity']}"
        if ended.get("stopped") and state.stopped is None:
            state.stopped = str(ended["stopped"])
    memory.run = state.finish()
    memory.writer = state.writer
    memory.code = _combined(codes)
    if state.faults:
        memory.fault = "; ".join(state.faults)
        memory.code = INTERNAL_ERROR
    elif memory.run is None and workers:
        memory.said = _tail(workers[0].log)
    return memory


def _combined(codes: list[int]) -> int:
    """pytest's exit code for the run from the workers': the worst of them, a worker that ran
    no item of its own being no run of nothing."""
    for code in (INTERNAL_ERROR, USAGE_ERROR, 2, 1):
        if code in codes:
            return code
    if codes and all(code == NO_TESTS_COLLECTED for code in codes):
        return NO_TESTS_COLLECTED
    return 0


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as error:
        return f"(unreadable: {error})"
    return "\n".join(lines[-_LOG_TAIL:])
