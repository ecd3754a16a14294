"""Several reference coordinator processes on one store, driven as one implementation.

Each process is `python -m conformance.wire.serve --database URL` behind its own
ExecDriver, and all of them get the same CONFORMANCE_STORE directory: the
first launch empties the store and leaves its marker there, so every later
launch (a peer, or a coordinator restarted after a crash) keeps the store.

The pool serves the driver port, so a HistoryRecorder can record it. A
sequential call goes to one process (the speaker, the first unless told); a
concurrent batch is spread over all of them, one thread per process, so the
only thing the racing calls share is the database. Each process keeps its own
controlled clock: the pool moves them all together.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import validate_call
from pydantic_core import to_jsonable_python

from conformance.adapters.exec_adapter import CLOCK_START, ExecDriver
from conformance.adapters.faults import ImplementationFault
from conformance.driver import (
    CallOutcome,
    ConcurrentCall,
    ConcurrentOperation,
    Description,
    DriverError,
    ErrorCode,
)
from reference.crash_points import CRASH_ENV, CrashPoint

REQUEST_TIMEOUT_SECONDS = 60.0
"""Generous: on SQLite a write may wait its turn behind every other process's."""


@dataclass(frozen=True)
class Store:
    """One store that every coordinator process of a test opens."""

    database: str
    """"sqlite" or "postgresql", for evidence and messages."""
    url: str
    directory: Path
    """The CONFORMANCE_STORE directory every process of the test shares."""

    def launch(self, crash_at: CrashPoint | None = None) -> ExecDriver:
        """A new coordinator process on this store; `crash_at` arms one crash point in it."""
        command = [sys.executable, "-m", "conformance.wire.serve", "--database", self.url]
        if crash_at is not None:
            command = ["env", f"{CRASH_ENV}={crash_at.value}", *command]
        return ExecDriver(command, self.directory, timeout=REQUEST_TIMEOUT_SECONDS, validate=False)


class CoordinatorPool:
    """The driver port, served by several coordinator processes on one store."""

    def __init__(self, store: Store, size: int) -> None:
        self.store = store
        self.processes: list[ExecDriver] = []
        self._speaker = 0
        self._instant = CLOCK_START
        try:
            for _ in range(size):
                self.add(store.launch())
        except BaseException:
            self.close()
            raise

    def __getattr__(self, name: str) -> Any:
        """Every other port operation, made by the current speaker."""
        return getattr(self.processes[self._speaker], name)

    # -- the processes -------------------------------------------------------------
    def add(self, process: ExecDriver) -> int:
        """Join a freshly launched process to the pool; its index."""
        process.set_clock(self._instant)
        self.processes.append(process)
        return len(self.processes) - 1

    def replace(self, index: int, process: ExecDriver) -> None:
        """Restart: the process at `index` is killed (if a crash has not done so) and replaced."""
        self.processes[index].close()
        process.set_clock(self._instant)
        self.processes[index] = process

    @contextmanager
    def speaking(self, index: int) -> Iterator[None]:
        """Sequential calls made inside go to the process at `index`."""
        previous, self._speaker = self._speaker, index
        try:
            yield
        finally:
            self._speaker = previous

    def close(self) -> None:
        for process in self.processes:
            process.close()

    # -- the port, where one process is not enough ------------------------------------
    def describe(self) -> Description:
        return self.processes[0].describe()

    def set_clock(self, instant: datetime) -> None:
        for process in self.processes:
            process.set_clock(instant)
        self._instant = instant

    def advance_clock(self, delta: timedelta) -> datetime:
        self.set_clock(self._instant + delta)
        return self._instant

    def run_concurrently(self, calls: list[ConcurrentCall]) -> list[CallOutcome]:
        """Call i goes to process i mod P; each process makes its calls in order.

        The processes' threads are released together. A process that dies
        leaves its call's outcome unknown (indeterminate), as a dropped
        connection would, and the calls queued behind it unknown too.
        """
        shares: list[list[int]] = [[] for _ in self.processes]
        for position in range(len(calls)):
            shares[position % len(self.processes)].append(position)
        shares = [share for share in shares if share]
        outcomes: list[CallOutcome | None] = [None] * len(calls)
        barrier = threading.Barrier(len(shares))
        origin = time.monotonic_ns()

        def work(process: ExecDriver, positions: list[int]) -> None:
            barrier.wait()
            for position in positions:
                outcomes[position] = _make_call(process, calls[position], origin)

        threads = [
            threading.Thread(target=work, args=(self.processes[index], share))
            for index, share in enumerate(shares)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [outcome for outcome in outcomes if outcome is not None]


def _make_call(process: ExecDriver, call: ConcurrentCall, origin: int) -> CallOutcome:
    invoked = time.monotonic_ns() - origin
    try:
        result = _port_method(call.operation)(process, **call.arguments)
    except DriverError as error:
        definite = error.definite
        return _ended(invoked, origin, error=error.code, definite=definite, message=error.message)
    except ImplementationFault as fault:
        return _ended(invoked, origin, error=ErrorCode.INDETERMINATE, message=str(fault))
    return _ended(invoked, origin, result=to_jsonable_python(result))


def _ended(
    invoked: int,
    origin: int,
    *,
    result: Any = None,
    error: ErrorCode | None = None,
    definite: bool = False,
    message: str = "",
) -> CallOutcome:
    return CallOutcome(
        ok=error is None,
        result=result,
        error=error,
        definite=error is None or definite,
        message=message,
        invoked_at_ns=invoked,
        completed_at_ns=time.monotonic_ns() - origin,
    )


@cache
def _port_method(operation: ConcurrentOperation) -> Callable[..., Any]:
    """The ExecDriver method, taking JSON arguments and validating them into the port's types."""
    method: Callable[..., Any] = validate_call(getattr(ExecDriver, operation))
    return method
