"""One folder per harness process holds every folder the harness makes, so none outlives it.

The folder holds a lock for as long as its harness lives. Exit handlers remove
it, but a SIGKILLed harness runs none, so whenever a harness makes its folder
it first removes every other run folder whose lock it can take: that folder's
harness is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Final

PREFIX: Final = "conformance-run-"
_LOCK_NAME: Final = ".lock"


class RunFolder:
    def __init__(self) -> None:
        self._path: Path | None = None
        self._owner: int | None = None
        self._lock_fd: int | None = None
        self._guard = threading.Lock()

    def path(self) -> Path:
        """This process's run folder, made (and its abandoned siblings removed) on first use."""
        with self._guard:
            if self._path is None or self._owner != os.getpid():  # a forked child makes its own
                sweep_abandoned()
                self._path = Path(tempfile.mkdtemp(prefix=PREFIX))
                self._owner = os.getpid()
                self._lock_fd = _hold_lock(self._path)
                atexit.register(self.remove)
            return self._path

    def make(self, prefix: str) -> Path:
        """A new empty folder inside the run folder."""
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.path()))

    def remove(self) -> None:
        with self._guard:
            if self._path is None or self._owner != os.getpid():
                return
            shutil.rmtree(self._path, ignore_errors=True)
            if self._lock_fd is not None:
                os.close(self._lock_fd)
            self._path = self._lock_fd = None


def sweep_abandoned(parent: Path | None = None) -> list[Path]:
    """Remove the run folders under `parent` (the temp folder) whose harness has ended."""
    removed = []
    for folder in (parent or Path(tempfile.gettempdir())).glob(f"{PREFIX}*"):
        if folder.is_dir() and _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _abandoned(folder: Path) -> bool:
    """True when nobody holds the folder's lock (a folder still being made has none yet:
    it is left alone for a minute)."""
    try:
        fd = os.open(folder / _LOCK_NAME, os.O_RDWR)
    except FileNotFoundError:
        with contextlib.suppress(OSError):
            return _age_seconds(folder) > 60
        return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _hold_lock(folder: Path) -> int:
    """Lock a file under a passing name, then give it the lock's name: another harness never
    sees the lock file unlocked (a folder without one is left alone while young)."""
    passing = folder / f"{_LOCK_NAME}.{os.getpid()}"
    fd = os.open(passing, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    passing.rename(folder / _LOCK_NAME)
    return fd


def _age_seconds(folder: Path) -> float:
    return time.time() - folder.stat().st_mtime


RUN_FOLDER: Final = RunFolder()
