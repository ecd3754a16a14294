"""Chooses and opens an adapter from the `--impl` and `--database` settings.

- `reference`: the reference implementation, in this process.
- `python:<module>:<callable>`: any Python implementation in this process;
  the callable takes (database URL or None, scratch directory) and returns a Driver.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

from conformance.driver import Driver

DriverFactory = Callable[[str | None, Path], Driver]


class ConfigurationError(Exception):
    """The kit was asked for something it cannot set up (exit code 2)."""


def open_driver(impl: str, database: str | None, scratch: Path) -> Driver:
    """A fresh driver on an empty store.

    `scratch` is a private directory for this scenario, where an embedded
    store is created when no database URL is given.
    """
    if impl == "reference":
        return open_reference(database, scratch)
    if impl.startswith("python:"):
        return _python_factory(impl.removeprefix("python:"))(database, scratch)
    raise ConfigurationError(
        f"unknown implementation {impl!r}; expected 'reference', 'python:<module>:<callable>' "
        "or 'exec:<command>'"
    )


def open_reference(database: str | None, scratch: Path) -> Driver:
    from conformance.adapters.inprocess import InProcessDriver, empty_store

    url = database or f"sqlite:///{scratch / 'reference.sqlite'}"
    empty_store(url)
    return InProcessDriver(url)


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
