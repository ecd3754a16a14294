"""Where the benches keep their data: a scratch SQLite file, or a private PostgreSQL database.

A private database per bench (created here, dropped with FORCE afterwards)
keeps the benches away from the database the tests use, and lets a bench
open raw driver connections beside the reference's engine.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import make_url

POSTGRES_URL_ENV = "CONFORMANCE_POSTGRES_URL"
DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"

SQLITE = "sqlite"
POSTGRES = "postgresql"
LABELS = {SQLITE: "SQLite", POSTGRES: "PostgreSQL"}


@dataclass(frozen=True)
class Store:
    dialect: str
    url: str
    """The SQLAlchemy URL the reference opens."""

    @property
    def label(self) -> str:
        return LABELS[self.dialect]

    def raw_connection(self, *, autocommit: bool = True) -> Any:
        """A connection through the bare driver (sqlite3 or psycopg), beside SQLAlchemy."""
        if self.dialect == SQLITE:
            path = make_url(self.url).database
            assert path is not None
            if autocommit:
                return sqlite3.connect(path, timeout=30, isolation_level=None)
            return sqlite3.connect(path, timeout=30, isolation_level="DEFERRED")
        return psycopg.connect(libpq_url(self.url), autocommit=autocommit)


def postgres_base_url() -> str:
    return os.environ.get(POSTGRES_URL_ENV, DEFAULT_POSTGRES_URL)


def libpq_url(url: str) -> str:
    """The SQLAlchemy URL as libpq understands it (no `+driver`)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def postgres_unavailable(base_url: str) -> str | None:
    """Why PostgreSQL cannot be used, or None when it can."""
    try:
        with psycopg.connect(libpq_url(base_url), connect_timeout=5) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        return f"PostgreSQL unreachable at {make_url(base_url).render_as_string()}: {error}"
    return None


def sqlite_store(directory: Path, name: str) -> Store:
    return Store(SQLITE, f"sqlite:///{directory / f'{name}.sqlite'}")


@contextmanager
def postgres_store(base_url: str, name: str) -> Iterator[Store]:
    """A database of its own on the server of `base_url`, dropped on the way out."""
    database = f"bench_{name}_{os.getpid()}"
    admin = libpq_url(base_url)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{database}"')
    try:
        url = make_url(base_url).set(database=database).render_as_string(hide_password=False)
        yield Store(POSTGRES, url)
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
