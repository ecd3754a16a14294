"""Chooses and opens an adapter from the `--impl` and `--database` settings."""

from __future__ import annotations

from pathlib import Path

from conformance.driver import Driver


class ConfigurationError(Exception):
    """The kit was asked for something it cannot set up (exit code 2)."""


def open_driver(impl: str, database: str | None, scratch: Path) -> Driver:
    """A fresh driver on an empty store.

    `scratch` is a private directory for this scenario, where an embedded
    SQLite store is created when no database URL is given.
    """
    if impl == "reference":
        from conformance.adapters.inprocess import InProcessDriver, empty_store

        url = database or f"sqlite:///{scratch / 'reference.sqlite'}"
        empty_store(url)
        return InProcessDriver(url)
    raise ConfigurationError(f"unknown implementation {impl!r}; expected 'reference' or 'exec:<command>'")
