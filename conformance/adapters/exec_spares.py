"""Spare processes launched ahead of a restart, for implementations declaring `prelaunch`.

A restart kills the implementation and launches its command again; for most
implementations nearly all of that time is start-up (an interpreter, imports,
a JVM), not the store. An implementation declaring `prelaunch` promises not
to touch CONFORMANCE_STORE before its handshake, so its next process can be
started early and wait, warm, for the restart that needs it.

A spare is launched with CONFORMANCE_STORE naming a path that does not exist
yet. When it takes over a store, the harness makes that path a symbolic link
to the store directory, then shakes hands. A spare that created the path
itself broke its promise: that is an `unusable` fault, not a silent fallback.
At most one spare waits at a time, so that runs switching commands (the
strength run, one mutant after another) do not pile up idle processes.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.adapters.exec_pool import LaunchSettings
from conformance.adapters.exec_process import ImplementationProcess
from conformance.faults import FaultKind, ImplementationFault
from conformance.protocol.messages import STORE_ENV


@dataclass(frozen=True)
class Spare:
    settings: LaunchSettings
    process: ImplementationProcess
    store_link: Path
    """The spare's CONFORMANCE_STORE: absent until `take_over` links it to a store."""

    def take_over(self, store: Path) -> None:
        """Point the spare's store path at `store`, which a killed process left behind."""
        try:
            self.store_link.symlink_to(store.resolve(), target_is_directory=True)
        except FileExistsError as error:
            self.process.kill()
            raise ImplementationFault(
                FaultKind.UNUSABLE,
                f"{self.process.command} declares prelaunch, but created its store "
                f"({self.store_link}) before its handshake. Open the store at the handshake, "
                "or stop declaring prelaunch",
                list(self.process.stderr_tail()),
            ) from error


class SpareRoom:
    """Holds the one waiting spare and the directory its store links live in."""

    def __init__(self) -> None:
        self._spare: Spare | None = None
        self._links: Path | None = None
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def prepare(self, settings: LaunchSettings) -> None:
        """Make sure a spare of this command is starting or waiting (replacing any other)."""
        with self._lock:
            waiting = self._spare
        if waiting is not None and waiting.settings == settings and waiting.process.alive:
            return
        spare = self._launch(settings)
        with self._lock:
            replaced, self._spare = self._spare, spare
        if replaced is not None:
            replaced.process.kill()

    def waiting(self) -> Spare | None:
        """The spare now waiting, whatever its command; it stays where it is."""
        with self._lock:
            return self._spare

    def take(self, settings: LaunchSettings) -> Spare | None:
        """The waiting spare of this command, if it is still alive."""
        with self._lock:
            spare = self._spare
            if spare is None or spare.settings != settings:
                return None
            self._spare = None
        if not spare.process.alive:
            spare.process.kill()
            return None
        return spare

    def shut_down(self) -> None:
        with self._lock:
            spare, self._spare = self._spare, None
            links, self._links = self._links, None
        if spare is not None:
            spare.process.kill()
        if links is not None:
            shutil.rmtree(links, ignore_errors=True)

    def _launch(self, settings: LaunchSettings) -> Spare:
        link = self._link_directory() / f"store-{next(self._numbers)}"
        env = {**os.environ, STORE_ENV: str(link)}
        process = ImplementationProcess(
            settings.argv, env, stderr_lines=settings.stderr_lines, validate=settings.validate
        )
        return Spare(settings, process, link)

    def _link_directory(self) -> Path:
        with self._lock:
            if self._links is None:
                self._links = Path(tempfile.mkdtemp(prefix="conformance-spares-"))
            return self._links


SPARES: Final = SpareRoom()
atexit.register(SPARES.shut_down)
