"""Concurrent batches for the in-process adapter: one thread and one coordinator per call.

Each call runs on its own reference Coordinator (own engine, own connection) on
the same store and the same clock, as separate coordinator processes would: the
threads share nothing but the database, so only the database can pick winners.
A barrier releases them together once every worker holds a connection. Workers
are kept between batches (building a coordinator checks the schema) and are
dropped on restart and close, with everything else held in memory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError, validate_call
from pydantic_core import to_jsonable_python

from conformance.adapters.inprocess_office import OfficeOperations
from conformance.adapters.inprocess_workreq import WorkRequestOperations
from conformance.driver import (
    CallOutcome,
    ConcurrentCall,
    ConcurrentOperation,
    DriverError,
    ErrorCode,
)
from conformance.reference.app import Coordinator
from conformance.reference.clock import ManualClock
from conformance.reference.office.gate import CountReadFault

T = TypeVar("T")

BARRIER_TIMEOUT_SECONDS = 60.0
"""How long a worker waits for the others to be ready before the batch is abandoned."""


class _Worker(OfficeOperations, WorkRequestOperations):
    """The port's operations on one worker coordinator, refusals translated as the driver does."""

    def __init__(self, coordinator: Coordinator, call: Callable[[Callable[[], Any]], Any]) -> None:
        self.coordinator = coordinator
        self._translate = call

    def call(self, operation: Callable[[], T]) -> T:
        result: T = self._translate(operation)
        return result

    def connect(self) -> None:
        """Open this worker's connection now, so that the race is not decided by connecting."""
        with self.coordinator.db.engine.connect():
            pass


class ConcurrencyOperations:
    """Mixin for InProcessDriver: the port's `run_concurrently`."""

    url: str
    clock: ManualClock
    count_fault: CountReadFault
    """The deployment's count-read fault hook, which its workers share (see CountReadFault)."""
    _workers: tuple[_Worker, ...] = ()

    if TYPE_CHECKING:

        def call(self, operation: Callable[[], T]) -> T: ...

    def run_concurrently(self, calls: list[ConcurrentCall]) -> list[CallOutcome]:
        workers = self._enough_workers(len(calls))
        outcomes: list[CallOutcome | None] = [None] * len(calls)
        barrier = threading.Barrier(len(calls)) if calls else None
        origin = time.monotonic_ns()

        def run(index: int) -> None:
            assert barrier is not None
            outcomes[index] = _run_one(workers[index], calls[index], barrier, origin)

        threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [outcome for outcome in outcomes if outcome is not None]

    def release_workers(self) -> None:
        """Close every worker coordinator; nothing they held survives."""
        for worker in self._workers:
            worker.coordinator.close()
        self._workers = ()

    def _enough_workers(self, count: int) -> tuple[_Worker, ...]:
        missing = count - len(self._workers)
        if missing > 0:
            added = tuple(
                _Worker(
                    Coordinator(
                        self.url, self.clock, own_engines=True, count_fault=self.count_fault
                    ),
                    self.call,
                )
                for _ in range(missing)
            )
            self._workers = self._workers + added
        return self._workers


def _run_one(
    worker: _Worker, call: ConcurrentCall, barrier: threading.Barrier, origin: int
) -> CallOutcome:
    """Connect, wait for the others, then make the call and time it."""
    try:
        worker.connect()
        barrier.wait(timeout=BARRIER_TIMEOUT_SECONDS)
    except Exception as error:
        barrier.abort()
        now = time.monotonic_ns() - origin
        return _failure(ErrorCode.INTERNAL, f"worker not started: {error!r}", True, now, now)
    invoked = time.monotonic_ns() - origin
    try:
        result = _validated(call.operation)(worker, **call.arguments)
    except DriverError as error:
        completed = time.monotonic_ns() - origin
        return _failure(error.code, error.message, error.definite, invoked, completed)
    except ValidationError as error:
        completed = time.monotonic_ns() - origin
        return _failure(ErrorCode.INVALID_INPUT, str(error), True, invoked, completed)
    except Exception as error:
        completed = time.monotonic_ns() - origin
        return _failure(ErrorCode.INTERNAL, repr(error), False, invoked, completed)
    completed = time.monotonic_ns() - origin
    return CallOutcome(
        ok=True,
        result=to_jsonable_python(result),
        error=None,
        definite=True,
        message="",
        invoked_at_ns=invoked,
        completed_at_ns=completed,
    )


def _failure(
    code: ErrorCode, message: str, definite: bool, invoked: int, completed: int
) -> CallOutcome:
    return CallOutcome(
        ok=False,
        result=None,
        error=code,
        definite=definite,
        message=message,
        invoked_at_ns=invoked,
        completed_at_ns=completed,
    )


@cache
def _validated(operation: ConcurrentOperation) -> Callable[..., Any]:
    """The port method, taking JSON arguments and validating them into the port's types."""
    return validate_call(getattr(_Worker, operation))  # type: ignore[no-any-return]
