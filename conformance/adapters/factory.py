"""Chooses and opens an adapter from the `--impl` and `--database` settings.

- `reference`: the reference implementation, in this process.
- `python:<module>:<callable>`: any Python implementation in this process;
  the callable takes (database URL or None, scratch directory) and returns a Driver.
- `mutant:<name>`: the reference with one deliberate defect (see `mutants`), in this process.
- `variant:<name>`: the reference changed where the specs leave freedom (see `variants`).
- `exec:<command>`: any implementation speaking protocol v1 on stdin/stdout,
  launched on a fresh store directory, or reused and reset between scenarios
  when it declares `reset` (see docs/protocol.md).
"""

from __future__ import annotations

import importlib
import math
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

from conformance.adapters.containment import Containment, SandboxUnavailable, bwrap_path
from conformance.driver import Driver

DriverFactory = Callable[[str | None, Path], Driver]

TIMEOUT_ENV = "CONFORMANCE_REQUEST_TIMEOUT"
REUSE_ENV = "CONFORMANCE_EXEC_REUSE"
PRELAUNCH_ENV = "CONFORMANCE_EXEC_PRELAUNCH"
"""`0` forces a fresh process per scenario even when the implementation declares `reset`."""


class ConfigurationError(Exception):
    """The kit was asked for something it cannot set up (exit code 2)."""


def open_driver(
    impl: str,
    database: str | None,
    scratch: Path,
    *,
    restarts_ahead: int | None = None,
    containment: Containment | None = None,
) -> Driver:
    """A fresh driver on an empty store.

    `scratch` is a private directory for this scenario, where an embedded
    store is created when no database URL is given (the in-process reference,
    its mutants and its variants take an emptied one from `inprocess_stores`).
    `restarts_ahead` is how many restarts this scenario and the next few will
    ask for, when the harness can tell (see restart_forecast); only `exec:`
    uses it, and `containment` (what the process may see) too.
    """
    if containment is not None and containment.sandbox and not impl.startswith("exec:"):
        raise ConfigurationError(
            f"--sandbox contains processes; {impl!r} runs inside the harness (use exec:)"
        )
    if impl == "reference":
        return open_reference(database, scratch)
    if impl.startswith("python:"):
        return _python_factory(impl.removeprefix("python:"))(database, scratch)
    kind, _, name = impl.partition(":")
    if kind in ("mutant", "variant"):
        return open_member(kind, name, database, scratch)
    if impl.startswith("exec:"):
        return open_exec(
            impl.removeprefix("exec:"),
            database,
            scratch,
            restarts_ahead=restarts_ahead,
            containment=containment,
        )
    raise ConfigurationError(
        f"unknown implementation {impl!r}; expected 'reference', 'python:<module>:<callable>', "
        "'mutant:<name>', 'variant:<name>' or 'exec:<command>'"
    )


def open_reference(database: str | None, scratch: Path) -> Driver:
    from conformance.adapters.inprocess import InProcessDriver
    from conformance.adapters.inprocess_stores import take_store

    url, release = take_store(database)
    return InProcessDriver(url, release=release)


def open_member(kind: str, name: str, database: str | None, scratch: Path) -> Driver:
    """A mutant or variant, from the family its package hands in (conformance.implementations);
    an unknown name, or a family not installed, is a configuration error."""
    from conformance.implementations import FamilyMissing, family

    try:
        known = family(kind)
    except FamilyMissing as error:
        raise ConfigurationError(str(error)) from error
    if name not in known.members:
        raise ConfigurationError(known.unknown(name))
    return known.open(name, database, scratch)


def _python_factory(spec: str) -> DriverFactory:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"expected python:<module>:<callable>, got python:{spec}")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ConfigurationError(f"cannot load driver factory {spec!r}: {error}") from error
    if not callable(factory):
        raise ConfigurationError(f"{spec!r} is not callable")
    return cast(DriverFactory, factory)


def open_exec(
    command: str,
    database: str | None,
    scratch: Path,
    *,
    restarts_ahead: int | None = None,
    containment: Containment | None = None,
) -> Driver:
    """The command, launched on the empty store directory `scratch/store`, or reused.

    A process that may be reused gets a store directory of its own instead (see
    ExecDriver), since it outlives the scenario and its scratch directory.

    CONFORMANCE_REQUEST_TIMEOUT (seconds) overrides the per-request timeout;
    CONFORMANCE_EXEC_REUSE=0 turns off the reuse of processes between scenarios;
    CONFORMANCE_EXEC_PRELAUNCH=0 turns off launching restarts' processes ahead of time.
    """
    from conformance.adapters.exec_adapter import DEFAULT_TIMEOUT, ExecDriver

    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise ConfigurationError(f"exec:{command} is not a command line: {error}") from error
    if not argv:
        raise ConfigurationError('exec: needs a command, e.g. exec:"./my-adapter --serve"')
    argv[0] = _beside_this_kit(argv[0])
    if database is not None:
        raise ConfigurationError(
            "--database configures the in-process reference; with exec: give the store to "
            'the command itself, e.g. exec:"conformance serve-reference --database URL"'
        )
    seconds = _request_timeout(os.environ.get(TIMEOUT_ENV), DEFAULT_TIMEOUT)
    if containment is not None and containment.sandbox:
        try:
            bwrap_path()
        except SandboxUnavailable as error:
            raise ConfigurationError(str(error)) from error
    reusable = _switch(REUSE_ENV, "never reuse")
    store = None if reusable else scratch / "store"
    prelaunch = _switch(PRELAUNCH_ENV, "never launch ahead")
    return ExecDriver(
        argv,
        store,
        timeout=seconds,
        reuse=reusable,
        prelaunch=prelaunch,
        restarts_ahead=restarts_ahead,
        containment=containment,
    )


def _beside_this_kit(program: str) -> str:
    """A bare program name not on PATH, found beside this kit's interpreter (`conformance`
    in a virtual environment that is not activated); otherwise the name as given."""
    if "/" in program or shutil.which(program) is not None:
        return program
    beside = Path(sys.executable).with_name(program)
    return str(beside) if beside.is_file() else program


def _request_timeout(setting: str | None, default: float) -> float:
    """CONFORMANCE_REQUEST_TIMEOUT as seconds: a finite number above zero."""
    if not setting:
        return default
    try:
        seconds = float(setting)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigurationError(
            f"{TIMEOUT_ENV}={setting!r}: expected a finite number of seconds above 0"
        )
    return seconds


def _switch(variable: str, off: str) -> bool:
    """An on/off environment setting, on unless set to 0."""
    value = os.environ.get(variable, "1")
    if value not in ("0", "1"):
        raise ConfigurationError(f"{variable}={value!r}: expected 0 ({off}) or 1")
    return value == "1"
