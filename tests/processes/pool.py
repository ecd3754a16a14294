"""Several reference coordinator processes on one store, driven as one implementation.

Each process is `python -m conformance.wire.serve --database URL` behind its own
ExecDriver, and all of them get the same CONFORMANCE_STORE directory: the
first launch empties the store and leaves its marker there, so every later
launch (a peer, or a coordinator restarted after a crash) keeps the store.
The pool is the kit's own (`conformance.concurrency.process_pool`), which runs
any `multiprocess` implementation the same way; here a process can also be
armed to crash at one of the reference's named crash points.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.exec_adapter import CLOCK_START, ExecDriver
from conformance.concurrency.process_pool import ProcessPool
from conformance.reference.crash_points import CRASH_ENV, CrashPoint

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


class CoordinatorPool(ProcessPool):
    """The kit's process pool over reference coordinators on one test's store."""

    def __init__(self, store: Store, size: int) -> None:
        self.store = store
        super().__init__(store.launch(), store.launch, size, CLOCK_START)
