"""Embedded stores for in-process drivers, handed from one scenario to the next.

A scenario used to get a SQLite file of its own: the schema created in it, and
every statement compiled again for its new engine, which was a third of the
suite's time. Now a driver that closes hands its store back, and the next
driver gets it emptied (every row deleted, the schema kept), so this process's
engine for it (`reference.db.shared_engine`) keeps its compiled statements, and
one idle connection stays open to it (`hold_sqlite_open`).
Drivers open at the same time never share a store. The files live in the run
folder, which goes with the process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from conformance.scratch import RUN_FOLDER

if TYPE_CHECKING:
    from sqlalchemy import Engine

Release = Callable[[], None]


def no_release() -> None:
    """For a store the shelf did not lend: nothing to hand back."""


class StoreShelf:
    def __init__(self) -> None:
        self._free: list[str] = []
        self._keepers: list[Engine | None] = []
        """One idle connection to each store, open for the process's life (hold_sqlite_open)."""
        self._owner = os.getpid()
        self._guard = threading.Lock()

    def take(self) -> tuple[str, Release]:
        """An emptied store's URL, and what hands it back."""
        url = self._free_store() or self._new_store()
        empty_store(url)
        return url, lambda: self._give_back(url)

    def _free_store(self) -> str | None:
        with self._guard:
            if self._owner != os.getpid():  # a forked child: the parent's stores are not its own
                # The parent's keepers stay referenced, never used: SQLite forbids a child to
                # close a connection it inherited.
                self._free, self._owner = [], os.getpid()
            return self._free.pop() if self._free else None

    def _new_store(self) -> str:
        url = f"sqlite:///{RUN_FOLDER.make('inprocess-store-') / 'reference.sqlite'}"
        keeper = hold_sqlite_open(url)
        with self._guard:
            self._keepers.append(keeper)
        return url

    def _give_back(self, url: str) -> None:
        with self._guard:
            if self._owner == os.getpid():
                self._free.append(url)


SHELF = StoreShelf()


def take_store(database: str | None) -> tuple[str, Release]:
    """The store for a new in-process driver: the database given, emptied, or a shelved one."""
    if database is None:
        return SHELF.take()
    empty_store(database)
    return database, no_release


_REBUILT_STORES: set[str] = set()
"""Store URLs whose schema this process has already dropped and created anew."""


def hold_sqlite_open(url: str) -> Engine | None:
    """An engine whose pool keeps one idle connection to a SQLite store until disposed.

    SQLite folds its write-ahead log into the database file, and deletes it,
    whenever the last connection to the file closes. Handing a store on (to the
    next scenario in-process, or at a served reset) closes every connection
    twice, the old driver's and then the emptying's; a served reset cost about
    twice as much for it, and an in-process suite run about a tenth more CPU.
    With this one open for the store's life it does not happen. The idle
    connection keeps only SQLite's shared lock on the file (what stops the last
    closer from folding the log), no read or write transaction: it blocks no
    reader, no writer and no checkpoint.
    """
    if not url.startswith("sqlite"):
        return None
    from conformance.reference.db import make_engine

    engine = make_engine(url)
    with engine.connect() as connection:
        connection.exec_driver_sql("SELECT count(*) FROM sqlite_master")
    return engine


def empty_store(url: str) -> None:
    """Leave the reference's store empty, so that each scenario starts from nothing.

    The first time in a process the schema is dropped and created anew, so a
    store left by an older version gets today's tables; after that, deleting
    every row is enough, and much faster on PostgreSQL.
    """
    from conformance.reference.db import Database
    from conformance.reference.schema import create_schema, delete_all_rows, drop_schema

    database = Database(url)
    try:
        if url in _REBUILT_STORES:
            delete_all_rows(database.engine)
        else:
            drop_schema(database.engine)
            create_schema(database.engine)
            _REBUILT_STORES.add(url)
    finally:
        database.dispose()
