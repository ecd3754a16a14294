"""Fixtures for unit tests of the reference: a store on each supported dialect, and a clock.

PostgreSQL runs in a private schema per test session, so that other test runs
sharing the database are never disturbed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.office.gate import CountReadFault
from conformance.reference.office.service import OfficeService
from conformance.reference.schema import create_schema, drop_schema
from tests.conftest import SchemaFactory

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def postgres_url(new_postgres_schema: SchemaFactory) -> str:
    """A private PostgreSQL schema for the reference's unit tests; skips when unconfigured."""
    return new_postgres_schema("reference_unit")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Database]:
    """An empty store on SQLite, and on PostgreSQL when it is configured."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'reference.sqlite'}"
    else:
        url = request.getfixturevalue("postgres_url")
    db = Database(url)
    drop_schema(db.engine)
    create_schema(db.engine)
    try:
        yield db
    finally:
        db.dispose()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def office(database: Database, clock: ManualClock) -> OfficeService:
    """An Office with workspace w, agents a and b (may assign), c (may not), and task t."""
    service = OfficeService(database, clock, CountReadFault())
    service.create_workspace("w")
    for agent, may_assign in [("a", True), ("b", True), ("c", False)]:
        service.create_agent("w", agent, can_assign_tasks=may_assign)
    service.create_task("w", "t")
    return service
