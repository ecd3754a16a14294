"""The database layer shared by both capabilities: one declarative base, one engine.

Instants are stored as naive UTC with microsecond precision and always passed
as bound values; the database's own now() is never read.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import (
    Connection,
    DateTime,
    Engine,
    TypeDecorator,
    create_engine,
    event,
    make_url,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker


class Base(DeclarativeBase):
    pass


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC in Python, naive UTC in the database, in every dialect."""

    impl = DateTime(timezone=False)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else naive_utc(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC)


def naive_utc(value: datetime) -> datetime:
    """An aware instant as the database holds it; a naive one is refused, never guessed."""
    if value.tzinfo is None:
        raise ValueError("naive datetime reached the database layer")
    return value.astimezone(UTC).replace(tzinfo=None)


def make_engine(url: str, *, autocommit: bool = False) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite gets WAL and a busy timeout.

    No ping before each checkout: it cost a round trip per transaction, a fifth
    of a lease cycle's. A connection the server dropped fails its operation
    with an error (nothing is written), and SQLAlchemy then discards the
    pool's connections, so the next operation connects afresh.

    `autocommit`: every connection of its pool commits each statement on its
    own, set once when it connects (an engine derived with execution options
    would set it again at every checkout, which cost a claim a fifth of its CPU).
    """
    options: dict[str, Any] = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
    if url.startswith("sqlite"):
        _refuse_sqlite_in_memory(url)
        engine = create_engine(url, connect_args={"timeout": 30}, **options)
        event.listen(engine, "connect", _configure_sqlite)
        return engine
    return create_engine(url, **options)


def _refuse_sqlite_in_memory(url: str) -> None:
    """A store outlives a restart and is shared by a coordinator's two engines; an in-memory
    SQLite database does neither (each connection would get one of its own)."""
    if make_url(url).database in (None, "", ":memory:"):
        raise ArgumentError(
            f"{url!r} is an in-memory SQLite database, which no restart and no second "
            "connection would see: give a file, sqlite:///path/to/store.sqlite"
        )


ENGINES_KEPT: Final = 16
"""Engines a process keeps (two per store): a few, so that many short-lived stores cost no
memory."""
_engines: OrderedDict[tuple[int, str, bool], Engine] = OrderedDict()
_engines_guard = threading.Lock()


def shared_engine(url: str, *, autocommit: bool = False) -> Engine:
    """This process's engine for the store at `url`, made on first use.

    SQLAlchemy compiles each distinct statement once per engine. A coordinator
    built anew on the same store (a restart, the next scenario on an emptied
    store) would otherwise compile every statement again, which was a fifth of
    the suite's time. The engine holds no domain state: closing a coordinator
    still closes its connections (`Database.dispose`). A forked child makes its own.
    """
    key = (os.getpid(), url, autocommit)
    with _engines_guard:
        engine = _engines.get(key)
        if engine is None:
            engine = _engines[key] = make_engine(url, autocommit=autocommit)
            while len(_engines) > ENGINES_KEPT:
                _engines.popitem(last=False)
        _engines.move_to_end(key)
        return engine


def _configure_sqlite(dbapi_connection: Any, _record: Any) -> None:
    """WAL with synchronous=NORMAL: a killed process loses no committed transaction
    (only a power loss could), and commits skip the fsync that dominated the suite."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Database:
    """Two engines on one store, one per way of writing, plus a session factory.

    The engines are this process's shared ones for the store, unless
    `own_engines`: a coordinator standing in for a process of its own needs its own.
    """

    def __init__(self, url: str, *, own_engines: bool = False) -> None:
        self.url = url
        engine_for = make_engine if own_engines else shared_engine
        self.engine = engine_for(url)
        self.autocommitting_engine = engine_for(url, autocommit=True)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: committed on success, rolled back on any exception."""
        with self._sessions.begin() as session:
            yield session

    @contextmanager
    def statement_transaction(self) -> Iterator[Connection]:
        """A transaction of Core statements, for a hot path that needs no unit of work."""
        with self.engine.begin() as connection:
            yield connection

    @contextmanager
    def statements(self) -> Iterator[Connection]:
        """A connection whose every statement commits on its own.

        For an operation whose write is one conditional UPDATE (a claim, a
        heartbeat): that statement is atomic by itself, and the BEGIN and
        COMMIT round trips around it were half the operation's cost. Never for
        an operation that writes twice.
        """
        with self.autocommitting_engine.connect() as connection:
            yield connection

    def dispose(self) -> None:
        """Close this process's connections to the store; the engines stay for the next."""
        self.engine.dispose()
        self.autocommitting_engine.dispose()
