"""Ending an implementation and everything it started, whatever it did to escape.

A process group is not enough: a child that calls `setsid` leaves the group,
and one that forks twice leaves its parent too. So a kill freezes the whole
tree first (SIGSTOP to every descendant found through /proc, again until no
new one appears, since a stopped process cannot fork), then SIGKILLs it.
Orphans that left the tree by a double fork come back to a harness inside
`adopting_orphans()` (a child subreaper); `sweep_orphans()` kills every such
child of the harness it did not start itself. Each launched process also gets
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


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGKILL it when the launching thread ends."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def before_exec() -> Callable[[], None] | None:
    """What a launch runs between fork and exec: PR_SET_PDEATHSIG, but only from the main
    thread, since the signal fires when the launching *thread* ends, not the process."""
    return _die_with_parent if threading.current_thread() is threading.main_thread() else None


@contextlib.contextmanager
def adopting_orphans() -> Iterator[None]:
    """While inside, this process is the reaper of its descendants' orphans (Linux), and
    `sweep_orphans` kills them."""
    adopted = _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    with _LAUNCHED.lock:
        _LAUNCHED.adopting = adopted
    try:
        yield
    finally:
        with _LAUNCHED.lock:
            _LAUNCHED.adopting = False
        if adopted:
            _prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


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
    return {pid: parent for pid, (parent, _) in _family().items()}


def _family() -> dict[int, tuple[int, int]]:
    """Every visible process's parent and session, read from /proc/<pid>/stat."""
    found: dict[int, tuple[int, int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), int(fields[3]))
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


def kill_group(group: int) -> None:
    """SIGKILL a process group whose leader was already reaped. Linux does not hand out a pid
    that is still some live group's id, so while any member lives the id is still this group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def kill_tree(root: int) -> None:
    """Freeze `root` and all its descendants, then SIGKILL them all, and its process group."""
    frozen: set[int] = set()
    for _ in range(_MAX_FREEZE_ROUNDS):
        tree = ({root} | descendants(root)) - frozen
        if not tree:
            break
        _signal_all(tree, signal.SIGSTOP)
        frozen |= tree
    kill_group(root)
    _signal_all(frozen, signal.SIGKILL)


def sweep_orphans() -> list[int]:
    """Kill and reap the adopted orphans of killed implementations, and theirs as they come
    back in turn: children of this process it did not launch, in another session than its
    own (every implementation starts a session of its own and can never rejoin the harness's;
    a `git` the harness runs stays in the harness's). Does nothing outside `adopting_orphans`."""
    swept: list[int] = []
    with _LAUNCHED.lock:
        if not _LAUNCHED.adopting:
            return swept
        me, my_session = os.getpid(), os.getsid(0)
        for _ in range(_MAX_FREEZE_ROUNDS):
            family = _family()
            strays = [
                pid
                for pid, (parent, session) in family.items()
                if parent == me and session != my_session and pid not in _LAUNCHED.pids
            ]
            if not strays:
                break
            tree = {pid: parent for pid, (parent, _) in family.items()}
            for stray in strays:
                _signal_all({stray} | descendants(stray, tree), signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(stray, 0)
            swept += strays
    return swept


def _signal_all(pids: Iterable[int], signum: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)
