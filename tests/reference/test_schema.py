"""Schema management on both dialects: creating is idempotent, emptying keeps the tables."""

from __future__ import annotations

from sqlalchemy import func, inspect, select

from conformance.reference.db import Base, Database
from conformance.reference.office.models import Agent, Workspace
from conformance.reference.schema import create_schema, delete_all_rows


def _seed(db: Database) -> None:
    with db.transaction() as session:
        session.add(Workspace(id="w"))
        session.flush()
        session.add(Agent(id="a", workspace_id="w", can_assign_tasks=True))


def _rows(db: Database) -> int:
    with db.transaction() as session:
        return sum(
            session.scalar(select(func.count()).select_from(table)) or 0
            for table in Base.metadata.sorted_tables
        )


def test_creating_the_schema_again_is_harmless_and_keeps_the_rows(database: Database) -> None:
    _seed(database)
    create_schema(database.engine)
    create_schema(database.engine)
    assert _rows(database) == 2


def test_deleting_every_row_empties_each_table_and_keeps_the_schema(database: Database) -> None:
    _seed(database)
    delete_all_rows(database.engine)
    assert _rows(database) == 0
    tables = set(inspect(database.engine).get_table_names())
    assert {table.name for table in Base.metadata.sorted_tables} <= tables
    _seed(database)
    assert _rows(database) == 2
