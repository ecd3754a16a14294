"""Suite runs forked from one warm interpreter, for `conformance strength`.

A suite run in a fresh interpreter spends about a second starting Python and
importing pytest, SQLAlchemy, pydantic, the step libraries and the reference
before its first scenario, and a mutant's own criterion then takes a third of
that. This server imports all of that once and forks a child per run. Nothing
ever runs in the server itself, so every child starts from the same untouched
state: no run can leak into another, as none could across fresh interpreters.

Protocol: one JSON object per line on stdin, `{"args": [...], "cwd": ..., "log":
..., "timeout_s": ...}`; one reply per line on stdout, `{"exit": code}` where
code is pytest's exit code, or `{"exit": null, "error": why}`. The child's
output goes to the log, never to the server's stdout. POSIX only (`os.fork`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import queue
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pytest_bdd.feature import get_features

from conformance.inventory import load_inventory
from conformance.suite import FEATURES_DIR, PLUGINS

WARM_MODULES = (
    "pytest",
    "pytest_bdd",
    "sqlalchemy.orm",
    "conformance.reference.app",
    "conformance.adapters.factory",
    "conformance.adapters.inprocess",
    "conformance.adapters.exec_adapter",
    "conformance.running.feature_scope",
    "conformance.mutants",
    "conformance.variants",
    *PLUGINS,
)
"""What every run imports; the server imports it before its first fork."""
Exit = tuple[int | None, str]
"""pytest's exit code, or None and why there is none."""
SERVER_MODULE = "conformance.running.forked_suite"
HARNESS_GONE = "the harness that asked for the run is gone"
TIMED_OUT = "no verdict within {timeout_s:.0f} s"
POLL_S = (0.001, 0.02)
"""How often the server looks whether a child has exited: from the first to the second, doubling."""


def can_fork() -> bool:
    return hasattr(os, "fork")


def warm_up() -> None:
    """Import what every run needs, then freeze it out of the collector's sight.

    The suite's feature files are parsed here too, into pytest-bdd's cache of parsed features
    (keyed by the file's path) and the inventory's (keyed by the file's text), which every
    child reads instead of parsing them again: the files do not change during a check. Every
    child inherits this heap. Without the freeze each of its full collections (pytest
    makes two as a session ends, and more come while scenarios run) walks every object of
    every warm module again, and touching their headers copies the pages the fork shared.
    """
    for module in WARM_MODULES:
        importlib.import_module(module)
    get_features([str(FEATURES_DIR)])
    load_inventory()
    gc.freeze()


def serve(requests: TextIO, replies: TextIO) -> None:
    """Answer each request line with one reply line, until stdin closes or no one reads."""
    for line in requests:
        if line.strip():
            reply = json.dumps(answer(line))
            try:
                replies.write(reply + "\n")
                replies.flush()
            except BrokenPipeError:
                return


def answer(line: str) -> dict[str, Any]:
    try:
        request = json.loads(line)
        args = [str(argument) for argument in request["args"]]
        cwd, log = Path(request["cwd"]), Path(request["log"])
        timeout_s = float(request["timeout_s"])
    except (ValueError, KeyError, TypeError) as error:
        return {"exit": None, "error": f"a malformed request: {error!r}"}
    return run_forked(args, cwd, log, timeout_s)


def run_forked(args: list[str], cwd: Path, log: Path, timeout_s: float) -> dict[str, Any]:
    """pytest with `args` in a forked child, its output in `log`; killed with its process group
    when it outlives `timeout_s`, or the harness that asked for it (a thorough run may take
    hours, and a strength run stopped by a signal to its own process alone left them running)."""
    sys.stdout.flush()
    sys.stderr.flush()
    harness = os.getppid()
    child = os.fork()
    if child == 0:
        _run_child(args, cwd, log)
    status = _wait(child, time.monotonic() + timeout_s, harness)
    if isinstance(status, str):
        for kill in (os.killpg, os.kill):  # the group, and the child should it have none yet
            with contextlib.suppress(ProcessLookupError):
                kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        return {"exit": None, "error": status.format(timeout_s=timeout_s)}
    if os.WIFSIGNALED(status):
        return {"exit": None, "error": f"the run died of signal {os.WTERMSIG(status)} (see {log})"}
    return {"exit": os.WEXITSTATUS(status)}


def _wait(child: int, deadline: float, harness: int) -> int | str:
    """The child's wait status, or why it was given up: the deadline passed first, or the
    server lost its parent, the harness (an orphan is handed to another)."""
    pause = POLL_S[0]
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child:
            return status
        if time.monotonic() >= deadline:
            return TIMED_OUT
        if os.getppid() != harness:
            return HARNESS_GONE
        time.sleep(pause)
        pause = min(pause * 2, POLL_S[1])


def _run_child(args: list[str], cwd: Path, log: Path) -> None:
    """In the child: a process group of its own, stdin from nowhere, output to the log; never
    returns."""
    code = 70  # EX_SOFTWARE, should pytest itself raise
    try:
        os.setpgid(0, 0)
        _redirect(log)
        os.chdir(cwd)
        import pytest

        code = int(pytest.main(args))
    except BaseException:
        traceback.print_exc()  # into the log
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _redirect(log: Path) -> None:
    nowhere = os.open(os.devnull, os.O_RDONLY)
    output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(nowhere, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(nowhere)
    os.close(output)


class ForkServer:
    """The harness's end: one server process, one run at a time.

    It starts in `cwd`, the runs' workspace, never in the folder the harness runs from: `-m`
    puts its starting folder first on the path, and a checkout's `.egg-info` there (rewritten
    by any build made in it) would shadow the installed kit's entry points, which a run reads
    when it opens its implementation (pytest may put the checkout on the path later, after
    the families are loaded and cached).
    """

    def __init__(self, environment: dict[str, str], cwd: Path) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE],
            cwd=cwd,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def run(self, args: list[str], cwd: Path, log: Path, timeout_s: float) -> Exit:
        """pytest's exit code, or None and why there is none."""
        assert self._process.stdin is not None and self._process.stdout is not None
        request = {"args": args, "cwd": str(cwd), "log": str(log), "timeout_s": timeout_s}
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            return None, self._gone()
        line = self._process.stdout.readline()
        if not line:
            return None, self._gone()
        reply = json.loads(line)
        return reply["exit"], str(reply.get("error", ""))

    def _gone(self) -> str:
        return f"the fork server exited with {self._process.wait()}"

    def close(self) -> None:
        assert self._process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class ForkServers:
    """`count` servers warming up side by side; a run takes whichever is free."""

    def __init__(self, count: int, environment: dict[str, str], cwd: Path) -> None:
        self._all = [ForkServer(environment, cwd) for _ in range(count)]
        self._free: queue.Queue[ForkServer] = queue.Queue()
        for server in self._all:
            self._free.put(server)

    def run(self, args: list[str], cwd: Path, log: Path, timeout_s: float) -> Exit:
        server = self._free.get()
        try:
            return server.run(args, cwd, log, timeout_s)
        finally:
            self._free.put(server)

    def close(self) -> None:
        for server in self._all:
            server.close()


@contextlib.contextmanager
def fork_servers(count: int, environment: dict[str, str], cwd: Path) -> Iterator[ForkServers]:
    servers = ForkServers(count, environment, cwd)
    try:
        yield servers
    finally:
        servers.close()


def main() -> None:
    warm_up()
    serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
