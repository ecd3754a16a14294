"""The in-process adapter: serves the reference implementation through the driver port."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from conformance.adapters.inprocess_concurrency import ConcurrencyOperations
from conformance.adapters.inprocess_office import OfficeOperations
from conformance.adapters.inprocess_stores import Release, no_release
from conformance.adapters.inprocess_workreq import WorkRequestOperations
from conformance.driver import (
    Capability,
    ConcurrentCall,
    Description,
    DriverError,
    ErrorCode,
    WarningLog,
)
from conformance.reference import __version__ as reference_version
from conformance.reference.app import Coordinator
from conformance.reference.clock import ManualClock
from conformance.reference.errors import DomainError
from conformance.reference.office.gate import CountReadFault
from conformance.reference.office.telemetry import render_summed

T = TypeVar("T")

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)


class _WarningCapture(logging.Handler):
    """Keeps every warning the reference logs, with its structured fields."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[WarningLog] = []

    def emit(self, record: logging.LogRecord) -> None:
        fields = getattr(record, "fields", {})
        self.records.append(WarningLog(message=record.getMessage(), fields=dict(fields)))


class InProcessDriver(OfficeOperations, WorkRequestOperations, ConcurrencyOperations):
    """One reference coordinator in this process, on the store at `url`.

    Warning capture and the clock belong to the harness side, so they outlive
    a restart; the coordinator and everything it holds in memory do not.
    """

    def __init__(
        self, url: str, *, start: datetime = DEFAULT_START, release: Release = no_release
    ) -> None:
        """`release`: called once the driver has closed, to hand its store back."""
        self.url = url
        self._release = release
        self.clock = ManualClock(start)
        self._capture = _WarningCapture()
        self._logger = logging.getLogger("reference")
        self._logger.addHandler(self._capture)
        self._logger.setLevel(logging.INFO)
        self.count_fault = CountReadFault()
        self.coordinator = Coordinator(url, self.clock, count_fault=self.count_fault)

    # -- plumbing used by the operation mixins -------------------------------
    def call(self, operation: Callable[[], T]) -> T:
        """Run one reference operation, turning its refusals into typed driver errors."""
        try:
            return operation()
        except DomainError as error:
            raise DriverError(ErrorCode(error.code), error.message) from error

    # -- lifecycle and clock -------------------------------------------------
    def describe(self) -> Description:
        return Description(
            name="reference",
            version=reference_version,
            capabilities=[
                Capability.OFFICE,
                Capability.WORK_REQUESTS,
                Capability.HOOK_COUNT_READ_FAILURE,
                Capability.HOOK_KEYLESS_ASSIGNMENT,
                Capability.RESTART,
                Capability.CONCURRENCY,
            ],
            office=self.office_constants(),
            work_requests=self.work_request_limits(),
        )

    def set_clock(self, instant: datetime) -> None:
        self.clock.set(instant)

    def advance_clock(self, delta: timedelta) -> datetime:
        return self.clock.advance(delta)

    def restart(self) -> None:
        self.release_workers()
        self.coordinator.close()
        self.count_fault = CountReadFault()
        self.coordinator = Coordinator(self.url, self.clock, count_fault=self.count_fault)

    def close(self) -> None:
        try:
            self.release_workers()
            self.coordinator.close()
            self._logger.removeHandler(self._capture)
        finally:
            self._release()

    def warning_logs(self) -> list[WarningLog]:
        return list(self._capture.records)

    def telemetry(self) -> str:
        """The surface summed over this coordinator and the workers standing in for other
        processes, as a deployment's scrape shows it: a refusal made on a concurrent batch's
        worker is counted where the operator looks."""
        surfaces = [self.coordinator.office.telemetry]
        surfaces += [worker.coordinator.office.telemetry for worker in self._workers]
        return render_summed(surfaces)

    def crash_during(self, calls: list[ConcurrentCall], *, after: timedelta) -> None:
        """A thread cannot be killed mid-statement: the crash scenarios need a process
        (serve the reference through `exec:` to run them)."""
        raise DriverError(
            ErrorCode.NOT_SUPPORTED,
            "the in-process adapter cannot kill the implementation in the middle of a batch",
        )
