"""Several processes of one implementation on one store, served as one driver.

An implementation that declares `multiprocess` lets several copies of its command run at once
on one CONFORMANCE_STORE, sharing nothing but what it keeps there: the races between them can
only be decided by its store. The pool serves the driver port over them, so that a
HistoryRecorder records it and the race programs run on it unchanged:

- a sequential call goes to one process (the speaker: the first, unless told otherwise);
- a concurrent batch is dealt round-robin, one worker thread per process, released together,
  each process making one call at a time;
- with `killing` set, one process (never the first, which the scenario owns) is SIGKILLed in
  the middle of a call about halfway through its share of each batch: that call's outcome is
  unknown, as a crash leaves it; a fresh copy is launched on the store in its place, and the
  calls the killed one never began are made by the pool, as a client fails over;
- each process keeps its own controlled clock: the pool moves them all together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic_core import to_jsonable_python

from conformance.adapters.faults import ImplementationFault
from conformance.driver import (
    CallOutcome,
    ConcurrentCall,
    Description,
    DriverError,
    ErrorCode,
)
from conformance.protocol import messages as m

KILLED: str = "the harness killed this process during the call"


class PeerProcess(Protocol):
    """What the pool needs of each process: the port's operations by name, and a crash."""

    def describe(self) -> Description: ...
    def set_clock(self, instant: datetime) -> None: ...
    def crash_during_call(self, call: ConcurrentCall) -> None: ...
    def close(self) -> None: ...


class ProcessPool:
    """The driver port, served by several processes of one implementation on one store."""

    def __init__(
        self, first: PeerProcess, launch: Callable[[], PeerProcess], size: int, instant: datetime
    ) -> None:
        """`first` is running; `launch` starts another process on its store."""
        self.processes: list[PeerProcess] = [first]
        self.killing = False
        self.kills = 0
        self._launch = launch
        self._speaker = 0
        self._instant = instant
        try:
            for _ in range(size - 1):
                self.add(launch())
        except BaseException:
            self.close_peers()
            raise

    def __getattr__(self, name: str) -> Any:
        """Every other port operation, made by the current speaker."""
        return getattr(self.processes[self._speaker], name)

    # -- the processes -------------------------------------------------------------
    def add(self, process: PeerProcess) -> int:
        """Join a freshly launched process to the pool; its index."""
        process.set_clock(self._instant)
        self.processes.append(process)
        return len(self.processes) - 1

    def replace(self, index: int, process: PeerProcess) -> None:
        """The process at `index` is killed (if a crash has not done so) and replaced."""
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

    def close_peers(self) -> None:
        """End every process but the first, which belongs to whoever handed it over."""
        for process in self.processes[1:]:
            process.close()

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
        """Call i goes to process i mod P, each process making its calls in order, the
        processes' threads released together. A process that dies leaves its call's outcome
        unknown, as a dropped connection would; with `killing`, the calls the killed process
        had not begun are then made by the others (with its replacement), as at once."""
        outcomes: list[CallOutcome | None] = [None] * len(calls)
        origin = time.monotonic_ns()
        positions = list(range(len(calls)))
        victim = len(self.processes) - 1 if self.killing and len(self.processes) > 1 else None
        orphans = self._run_shares(calls, positions, outcomes, origin, victim)
        if victim is not None and (orphans or outcomes_killed(outcomes)):
            self.kills += 1
            self.replace(victim, self._launch())
        if orphans:
            self._run_shares(calls, orphans, outcomes, origin, None)
        return [outcome for outcome in outcomes if outcome is not None]

    def _run_shares(
        self,
        calls: list[ConcurrentCall],
        positions: list[int],
        outcomes: list[CallOutcome | None],
        origin: int,
        victim: int | None,
    ) -> list[int]:
        """Make the calls at `positions`, dealt round-robin; the victim is killed about halfway
        through its share. The positions it never began."""
        shares = [positions[index :: len(self.processes)] for index in range(len(self.processes))]
        working = [(index, share) for index, share in enumerate(shares) if share]
        barrier = threading.Barrier(len(working))
        orphans: list[int] = []

        def work(index: int, share: list[int]) -> None:
            process = self.processes[index]
            crash_at = len(share) // 2 if index == victim else None
            barrier.wait()
            for made, position in enumerate(share):
                if made == crash_at:
                    outcomes[position] = _crashed(process, calls[position], origin)
                    orphans.extend(share[made + 1 :])
                    return
                outcomes[position] = _made(process, calls[position], origin)

        threads = [threading.Thread(target=work, args=pair) for pair in working]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return sorted(orphans)


def outcomes_killed(outcomes: list[CallOutcome | None]) -> bool:
    return any(outcome is not None and outcome.message == KILLED for outcome in outcomes)


def _made(process: PeerProcess, call: ConcurrentCall, origin: int) -> CallOutcome:
    invoked = time.monotonic_ns() - origin
    try:
        arguments = m.OPERATIONS[call.operation].args.model_validate(call.arguments)
        result = getattr(process, call.operation)(**dict(arguments))
    except DriverError as error:
        definite = error.definite
        return _ended(invoked, origin, error=error.code, definite=definite, message=error.message)
    except ImplementationFault as fault:
        return _ended(invoked, origin, error=ErrorCode.INDETERMINATE, message=str(fault))
    return _ended(invoked, origin, result=to_jsonable_python(result))


def _crashed(process: PeerProcess, call: ConcurrentCall, origin: int) -> CallOutcome:
    invoked = time.monotonic_ns() - origin
    process.crash_during_call(call)
    return _ended(invoked, origin, error=ErrorCode.INDETERMINATE, message=KILLED)


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
