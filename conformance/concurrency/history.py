"""Operation histories, Jepsen-style: every call as an invocation, then how it ended.

An event is an `invoke`, or a completion of that invocation: `ok` (it
happened, with this value), `fail` (it certainly did not happen: a definite,
typed refusal) or `info` (nobody knows: an indeterminate error or a fault).
Each operation gets a process id of its own, which pairs its two events.
Times are monotonic nanoseconds since the recorder started, so that a checker
can tell which operations overlapped; `clock` is the instant the harness's
controlled clock showed when the operation was invoked.

Histories are written as JSON lines, one event a line, so that any implementation's
histories can be judged offline: the work requests' by the linearizability search
(`conformance.concurrency.work_request_calls`), the office's by `conformance.concurrency.checker`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal

from pydantic_core import to_jsonable_python

from conformance.driver import CallOutcome, ConcurrentCall, Driver, DriverError, ErrorCode, Value
from conformance.spec.clause_check import PortViolation

EventType = Literal["invoke", "ok", "fail", "info"]


class Event(Value):
    """One line of a history."""

    process: int
    type: EventType
    operation: str
    arguments: dict[str, Any]
    value: Any | None = None
    error: ErrorCode | None = None
    message: str = ""
    time_ns: int
    clock: datetime | None = None
    batch: int | None = None
    """The concurrent batch the operation belonged to; None for a call made on its own."""


class HistoryError(ValueError):
    """A history that is not well formed: a completion without its invocation, say."""


@dataclass(frozen=True)
class Operation:
    """An invocation paired with its completion: what the checker reasons about.

    `completed_ns` is None when no completion was recorded; such an operation
    is unknown (`info`) and may have taken effect at any time after it began.
    """

    process: int
    operation: str
    arguments: dict[str, Any]
    outcome: Literal["ok", "fail", "info"]
    value: Any
    error: ErrorCode | None
    invoked_ns: int
    completed_ns: int | None
    clock: datetime | None
    batch: int | None = None

    def possibly_before(self, other: Operation) -> bool:
        """Whether this operation could have taken effect before `other` did."""
        return other.completed_ns is None or self.invoked_ns < other.completed_ns

    def surely_before(self, other: Operation) -> bool:
        """Whether this operation finished before `other` began."""
        return self.completed_ns is not None and self.completed_ns < other.invoked_ns


def operations(events: Iterable[Event]) -> list[Operation]:
    """Pair each invocation with its completion, in invocation order."""
    invoked: dict[int, Event] = {}
    completed: dict[int, Event] = {}
    for event in events:
        if event.type == "invoke":
            if event.process in invoked:
                raise HistoryError(f"process {event.process} invoked twice")
            invoked[event.process] = event
            continue
        start = invoked.get(event.process)
        if start is None or event.process in completed:
            raise HistoryError(f"process {event.process}: {event.type} without one open invoke")
        if start.operation != event.operation or event.time_ns < start.time_ns:
            raise HistoryError(f"process {event.process}: completion does not match its invoke")
        completed[event.process] = event
    ordered = sorted(invoked.values(), key=lambda event: (event.time_ns, event.process))
    return [_pair(start, completed.get(start.process)) for start in ordered]


def _pair(start: Event, end: Event | None) -> Operation:
    return Operation(
        process=start.process,
        operation=start.operation,
        arguments=start.arguments,
        outcome=_completion_type(end),
        value=None if end is None else end.value,
        error=None if end is None else end.error,
        invoked_ns=start.time_ns,
        completed_ns=None if end is None else end.time_ns,
        clock=start.clock,
        batch=start.batch,
    )


def _completion_type(end: Event | None) -> Literal["ok", "fail", "info"]:
    if end is None or end.type == "info":
        return "info"
    return "ok" if end.type == "ok" else "fail"


def write_jsonl(events: Sequence[Event], path: Path) -> None:
    path.write_text("".join(event.model_dump_json() + "\n" for event in events))


def read_jsonl(path: Path) -> list[Event]:
    lines = path.read_text().splitlines()
    return [Event.model_validate_json(line) for line in lines if line.strip()]


class HistoryRecorder:
    """Drives an implementation through the port and records every operation it makes.

    Sequential calls go through `invoke`; concurrent batches through
    `run_concurrently`. The clock moves through `set_clock` and
    `advance_clock` so that each event can carry the controlled instant.
    """

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.events: list[Event] = []
        self._origin = time.monotonic_ns()
        self._next_process = 0
        self._batches = 0
        self._clock: datetime | None = None

    # -- the controlled clock ---------------------------------------------------
    def set_clock(self, instant: datetime) -> None:
        self.driver.set_clock(instant)
        self._clock = instant

    def note_clock(self, instant: datetime) -> None:
        """The controlled clock moved elsewhere: the events from here carry `instant`."""
        self._clock = instant

    def advance_clock(self, delta: timedelta) -> datetime:
        self._clock = self.driver.advance_clock(delta)
        return self._clock

    # -- operations ---------------------------------------------------------------
    def invoke(self, operation: str, **arguments: Any) -> Any:
        """Call one port method by name, record it, and return (or raise) what it did."""
        process = self._new_process()
        recorded = to_jsonable_python(arguments)
        self._record(process, "invoke", operation, recorded, time_ns=self._now())
        try:
            value = getattr(self.driver, operation)(**arguments)
        except DriverError as error:
            kind: EventType = "fail" if error.definite else "info"
            self._record(
                process, kind, operation, recorded, error=error.code, message=error.message
            )
            raise
        except Exception as error:
            self._record(process, "info", operation, recorded, message=repr(error))
            raise
        self._record(process, "ok", operation, recorded, value=to_jsonable_python(value))
        return value

    def run_concurrently(self, calls: Sequence[ConcurrentCall]) -> list[CallOutcome]:
        """Run a batch through the driver and record it on the history's own time line.

        The implementation's offsets are placed after the moment the batch was
        handed over and clamped to the moment it returned, so the batch stays
        between the operations recorded before and after it.
        """
        handed_over = self._now()
        self._batches += 1
        outcomes = self.driver.run_concurrently(list(calls))
        returned = self._now()
        if len(outcomes) != len(calls):
            raise HistoryError(f"{len(calls)} calls but {len(outcomes)} outcomes")
        batch: list[Event] = []
        for call, outcome in zip(calls, outcomes, strict=True):
            batch.extend(self._batch_events(call, outcome, handed_over, returned))
        batch.sort(key=lambda event: (event.time_ns, event.type != "invoke"))
        self.events.extend(batch)
        return outcomes

    def operations(self) -> list[Operation]:
        return operations(self.events)

    def write(self, path: Path) -> None:
        write_jsonl(self.events, path)

    # -- plumbing -----------------------------------------------------------------
    def _batch_events(
        self, call: ConcurrentCall, outcome: CallOutcome, handed_over: int, returned: int
    ) -> tuple[Event, Event]:
        process = self._new_process()
        arguments = to_jsonable_python(call.arguments)

        def placed(offset_ns: int) -> int:
            return min(handed_over + offset_ns, returned)

        invoke = self._event(
            process,
            "invoke",
            call.operation,
            arguments,
            time_ns=placed(outcome.invoked_at_ns),
            batch=self._batches,
        )
        kind: EventType = "ok" if outcome.ok else "fail" if outcome.definite else "info"
        end = self._event(
            process,
            kind,
            call.operation,
            arguments,
            value=outcome.result,
            error=outcome.error,
            message=outcome.message,
            time_ns=placed(outcome.completed_at_ns),
            batch=self._batches,
        )
        return invoke, end

    def _record(
        self, process: int, kind: EventType, operation: str, arguments: Any, **fields: Any
    ) -> None:
        fields.setdefault("time_ns", self._now())
        self.events.append(self._event(process, kind, operation, arguments, **fields))

    def _event(
        self, process: int, kind: EventType, operation: str, arguments: Any, **fields: Any
    ) -> Event:
        return Event(
            process=process,
            type=kind,
            operation=operation,
            arguments=arguments,
            clock=self._clock,
            **fields,
        )

    def _new_process(self) -> int:
        self._next_process += 1
        return self._next_process

    def _now(self) -> int:
        return time.monotonic_ns() - self._origin


UNRECORDED_CHANGES: Final = frozenset({"crash_during"})
"""Calls that change the store in ways no history records: after one, the history is partial."""


class RecordedDriver:
    """A driver whose calls named in `recorded`, and its batches, are recorded from a world's
    creation, so that a race is judged with everything before it (the search starts from an
    empty world). Every other call passes straight through.

    The controlled clock may move outside it (a step that speaks to the driver itself), so
    each recorded call first reads the instant. Arguments are named as the port names them.
    """

    def __init__(self, driver: Driver, recorded: frozenset[str]) -> None:
        self.recorder = HistoryRecorder(driver)
        self.recorded = recorded
        self.partial = False
        """Whether a call changed the store where no history shows it (see UNRECORDED_CHANGES)."""

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.recorder.driver, name)
        if name in UNRECORDED_CHANGES:
            return self._unrecorded(method)
        if name not in self.recorded:
            return method
        return self._recorded(name, inspect.signature(getattr(Driver, name)))

    def _unrecorded(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*arguments: Any, **keywords: Any) -> Any:
            self.partial = True
            return method(*arguments, **keywords)

        return call

    def _recorded(self, name: str, port: inspect.Signature) -> Callable[..., Any]:
        def call(*arguments: Any, **keywords: Any) -> Any:
            bound = port.bind(self, *arguments, **keywords)
            bound.apply_defaults()
            named = {key: value for key, value in bound.arguments.items() if key != "self"}
            self._read_clock()
            return self.recorder.invoke(name, **named)

        return call

    def run_concurrently(self, calls: Sequence[ConcurrentCall]) -> list[CallOutcome]:
        self._read_clock()
        return self.recorder.run_concurrently(calls)

    def _read_clock(self) -> None:
        """The harness's own read: refused, it is the port's fault, never the call's refusal."""
        try:
            instant = self.recorder.driver.advance_clock(timedelta())
        except DriverError as error:
            raise PortViolation(f"reading the controlled clock was refused: {error}") from error
        self.recorder.note_clock(instant)
