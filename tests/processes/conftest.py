"""Per test: one store, several coordinator processes on it, and a recorder of their history.

The store is a SQLite file in WAL mode, or a private PostgreSQL schema when
CONFORMANCE_POSTGRES_URL is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.concurrency.history import HistoryRecorder

from .pool import CoordinatorPool, Store
from .settings import PROCESSES, START


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'coordinators.sqlite'}"
    else:
        new_schema: Callable[[str], str] = request.getfixturevalue("new_postgres_schema")
        url = new_schema("conformance_processes")
    return Store(request.param, url, tmp_path / "store")


@pytest.fixture
def pool(store: Store) -> Iterator[CoordinatorPool]:
    """PROCESSES coordinator processes on the test's store, killed at the end."""
    coordinators = CoordinatorPool(store, PROCESSES)
    try:
        yield coordinators
    finally:
        coordinators.close()


@pytest.fixture
def recorder(pool: CoordinatorPool) -> HistoryRecorder:
    """Records every operation made through the pool, its clock set to START."""
    recording = HistoryRecorder(pool)
    recording.set_clock(START)
    return recording
