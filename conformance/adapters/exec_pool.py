"""Processes parked between scenarios, so that an implementation declaring `reset` starts once.

When a scenario ends, its driver parks a healthy process here instead of
killing it; the next driver with the same launch settings takes it and resets
it instead of launching the command again. A parked process is handed out at
most once, at most a few wait per command, and every one still parked when
the interpreter exits is killed with its whole process group.

The park also hands out store directories: a reused process keeps the one it
was launched on, so that directory must outlive the scenario that launched it.
They are removed when the interpreter exits.
"""

from __future__ import annotations

import atexit
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from conformance.adapters.containment import Containment
from conformance.adapters.exec_process import ImplementationProcess
from conformance.adapters.exec_reset import Witnesses
from conformance.driver import Description
from conformance.scratch import RUN_FOLDER

MAX_PARKED_PER_COMMAND: Final = 2
"""Scenarios run one after the other; a second one covers a test holding two drivers at once."""


@dataclass(frozen=True)
class LaunchSettings:
    """What makes two launches interchangeable: the command, what it may see, and how the
    harness reads it."""

    argv: tuple[str, ...]
    validate: bool
    stderr_lines: int
    containment: Containment = field(default_factory=Containment)

    def launch(self, store: Path) -> ImplementationProcess:
        """Start the command on `store` (which need not exist yet unless in a sandbox)."""
        containment = self.containment
        writable = [store] if containment.sandbox else []
        return ImplementationProcess(
            containment.command(self.argv, writable),
            containment.environment(store),
            stderr_lines=self.stderr_lines,
            validate=self.validate,
            shown_as=self.argv,
        )


@dataclass(frozen=True)
class ParkedProcess:
    """A live process with what the harness knows of it: its description, store and witnesses."""

    process: ImplementationProcess
    description: Description
    store: Path
    witnesses: Witnesses


class ProcessPark:
    def __init__(self, *, per_command: int = MAX_PARKED_PER_COMMAND) -> None:
        self._per_command = per_command
        self._parked: dict[LaunchSettings, list[ParkedProcess]] = {}
        self._stores: list[Path] = []
        self._lock = threading.Lock()

    def new_store(self) -> Path:
        """An empty directory for a fresh launch's store, kept until `shut_down`."""
        directory = RUN_FOLDER.make("store-")
        with self._lock:
            self._stores.append(directory)
        return directory

    def park(self, settings: LaunchSettings, parked: ParkedProcess) -> None:
        """Keep the process for a later scenario, or kill it when enough are waiting."""
        with self._lock:
            waiting = self._parked.setdefault(settings, [])
            if len(waiting) < self._per_command:
                waiting.append(parked)
                return
        parked.process.kill()

    def take(self, settings: LaunchSettings) -> ParkedProcess | None:
        with self._lock:
            waiting = self._parked.get(settings)
            return waiting.pop() if waiting else None

    def kill_all(self) -> None:
        with self._lock:
            everything = [parked for waiting in self._parked.values() for parked in waiting]
            self._parked.clear()
        for parked in everything:
            parked.process.kill()

    def shut_down(self) -> None:
        """Kill every parked process, then remove every store directory handed out."""
        self.kill_all()
        with self._lock:
            stores, self._stores = self._stores, []
        for directory in stores:
            shutil.rmtree(directory, ignore_errors=True)

    def __len__(self) -> int:
        with self._lock:
            return sum(len(waiting) for waiting in self._parked.values())


PARK: Final = ProcessPark()
atexit.register(PARK.shut_down)
