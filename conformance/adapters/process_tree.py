"""Ending an implementation and everything it started, whatever it did to escape.

A process group is not enough: a child that calls `setsid` leaves the group,
and one that forks twice leaves its parent too. So a kill freezes the whole
tree first (SIGSTOP to every descendant found through /proc, again until no
new one appears, since a stopped process cannot fork), then SIGKILLs it.
Orphans that left the tree by a double fork come back to a harness that
`adopt_orphans()` made a child subreaper; `sweep_orphans()` kills every child
of the harness it did not start itself. Each launched process also gets
PR_SET_PDEATHSIG, so it dies with the harness even when the harness is
SIGKILLed. What outlives a SIGKILLed harness beyond that (a descendant that
escaped its parent) only the sandbox stops: its PID namespace dies whole.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Final

_PR_SET_PDEATHSIG: Final = 1
_PR_SET_CHILD_SUBREAPER: Final = 36
_MAX_FREEZE_ROUNDS: Final = 64
_PROC: Final = Path("/proc")

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_prctl: Callable[..., int] = _libc.prctl


class _Launched:
    """The pids the harness started itself and still holds: the sweep leaves them alone."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.pids: set[int] = set()
        self.adopting = False


_LAUNCHED: Final = _Launched()


def die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGKILL it when the launching thread ends."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def adopt_orphans() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux); False if refused."""
    adopted = _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    with _LAUNCHED.lock:
        _LAUNCHED.adopting = adopted
    return adopted


@contextlib.contextmanager
def launching() -> Iterator[None]:
    """Hold off sweeps while a child is being started and before its pid is registered."""
    with _LAUNCHED.lock:
        yield


def register(pid: int) -> None:
    with _LAUNCHED.lock:
        _LAUNCHED.pids.add(pid)


def forget(pid: int) -> None:
    with _LAUNCHED.lock:
        _LAUNCHED.pids.discard(pid)


def parents() -> dict[int, int]:
    """Every visible process's parent, read from /proc/<pid>/stat."""
    found: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        found[int(entry.name)] = int(fields[1])
    return found


def descendants(root: int, family: dict[int, int] | None = None) -> set[int]:
    """Every process below `root` in the parent tree (not `root` itself)."""
    family = parents() if family is None else family
    children: dict[int, list[int]] = {}
    for pid, parent in family.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    frontier = [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def kill_tree(root: int) -> None:
    """Freeze `root` and all its descendants, then SIGKILL them all, and its process group."""
    frozen: set[int] = set()
    for _ in range(_MAX_FREEZE_ROUNDS):
        tree = ({root} | descendants(root)) - frozen
        if not tree:
            break
        _signal_all(tree, signal.SIGSTOP)
        frozen |= tree
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(root, signal.SIGKILL)
    _signal_all(frozen, signal.SIGKILL)


def sweep_orphans() -> list[int]:
    """Kill and reap the children of this process it did not launch: adopted orphans of a
    killed implementation, and theirs as they come back in turn. Does nothing unless
    `adopt_orphans()` succeeded."""
    swept: list[int] = []
    with _LAUNCHED.lock:
        if not _LAUNCHED.adopting:
            return swept
        for _ in range(_MAX_FREEZE_ROUNDS):
            family = parents()
            strays = [
                pid
                for pid, parent in family.items()
                if parent == os.getpid() and pid not in _LAUNCHED.pids
            ]
            if not strays:
                break
            for stray in strays:
                _signal_all({stray} | descendants(stray, family), signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(stray, 0)
            swept += strays
    return swept


def _signal_all(pids: Iterable[int], signum: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)
