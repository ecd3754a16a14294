"""The reference's schema, both capabilities' tables: created, dropped, emptied.

Here, not in reference/db.py, because it needs every model module, and the models need db.py's
declarative base: db.py importing them back was an import circle.
"""

from __future__ import annotations

from sqlalchemy import Engine, inspect, text

import conformance.reference.office.models
import conformance.reference.workreq.models  # noqa: F401  (registers the work-request tables)
from conformance.reference.db import Base


def create_schema(engine: Engine) -> None:
    """Create every table and index that does not exist yet (idempotent)."""
    Base.metadata.create_all(engine)


def drop_schema(engine: Engine) -> None:
    Base.metadata.drop_all(engine)


def delete_all_rows(engine: Engine) -> None:
    """Empty every table, children first, in one transaction; the schema stays.

    Far cheaper than dropping and creating the schema again (on PostgreSQL,
    tens of milliseconds against hundreds), which matters once per scenario. On SQLite the
    autoincrement counters restart too, so that a store handed on to the next scenario numbers
    its runs from 1, as a new one does.
    """
    with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
        if engine.dialect.name == "sqlite" and inspect(connection).has_table("sqlite_sequence"):
            connection.execute(text("DELETE FROM sqlite_sequence"))
