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
Up to eight spares wait, all of one command: the features restart several
scenarios in a row, faster than one spare could start after the last restart
took its predecessor; and a run switching commands does not pile up idle
processes. How many the driver wants follows the restarts the harness
expects (see restart_forecast); the room's capacity caps it, since every
spare starting at once takes a share of the machine's cores from the suite.
"""

from __future__ import annotations

import atexit
import itertools
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.adapters.exec_pool import PARK, LaunchSettings
from conformance.adapters.exec_process import ImplementationProcess
from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.adapters.process_tree import sweep_orphans
from conformance.scratch import RUN_FOLDER

SPARES_PER_COMMAND: Final = 8
"""The room's capacity: the most spares starting or waiting at once."""
SPARES_WITHOUT_FORECAST: Final = 3
"""How many a driver wants after its first restart when nobody forecast its restarts."""
SPARES_FOR_PEERS: Final = 2
"""How many wait while a pool of processes runs (see process_pool): its peers come out of the
room at its start, then one replacement after every batch that killed a process."""


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
    """Holds the waiting spares (all of one command) and the directory of their store links."""

    def __init__(self, *, capacity: int = SPARES_PER_COMMAND) -> None:
        self.capacity = capacity
        self._spares: list[Spare] = []
        self._links: Path | None = None
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def prepare(self, settings: LaunchSettings, *, wanted: int) -> None:
        """Top the room up to `wanted` spares of this command (at most its capacity);
        spares of any other command are killed, and surplus ones of this command kept."""
        with self._lock:
            others = [spare for spare in self._spares if spare.settings != settings]
            self._spares = [spare for spare in self._spares if spare.settings == settings]
            missing = min(wanted, self.capacity) - len(self._spares)
        for spare in others:
            spare.process.kill()
        launched = [self._launch(settings) for _ in range(missing)]
        with self._lock:
            self._spares.extend(launched)

    def waiting(self) -> list[Spare]:
        """The spares now waiting, oldest first; they stay where they are."""
        with self._lock:
            return list(self._spares)

    def take(self, settings: LaunchSettings) -> Spare | None:
        """The oldest waiting spare of this command that is still alive."""
        while True:
            with self._lock:
                index = next(
                    (i for i, spare in enumerate(self._spares) if spare.settings == settings), None
                )
                if index is None:
                    return None
                spare = self._spares.pop(index)
            if spare.process.alive:
                return spare
            spare.process.kill()

    def shut_down(self) -> None:
        with self._lock:
            spares, self._spares = self._spares, []
            links, self._links = self._links, None
        for spare in spares:
            spare.process.kill()
        if links is not None:
            shutil.rmtree(links, ignore_errors=True)

    def _launch(self, settings: LaunchSettings) -> Spare:
        link = self._link_directory() / f"store-{next(self._numbers)}"
        return Spare(settings, settings.launch(link), link)

    def _link_directory(self) -> Path:
        with self._lock:
            if self._links is None:
                self._links = RUN_FOLDER.make("spares-")
            return self._links


SPARES: Final = SpareRoom()
atexit.register(SPARES.shut_down)


def end_every_process() -> None:
    """Kill every implementation process this process started (parked, spare, or adopted)."""
    PARK.kill_all()
    SPARES.shut_down()
    sweep_orphans()
