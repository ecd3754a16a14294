"""Fixtures shared by the kit's own tests: private PostgreSQL schemas on the configured server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import create_engine, text

POSTGRES_ENV = "CONFORMANCE_POSTGRES_URL"

SchemaFactory = Callable[[str], str]
"""Takes a name prefix (lower-case letters, digits, underscores); returns a fresh schema's URL."""


@pytest.fixture(scope="session")
def new_postgres_schema() -> Iterator[SchemaFactory]:
    """URLs of fresh, empty schemas on CONFORMANCE_POSTGRES_URL, all dropped at the end.

    Every URL sets the connection's search_path to its own schema, so the
    reference's tables land there and other runs sharing the database (other
    test sessions, other CI jobs) are never disturbed. Skips when the variable
    is unset.
    """
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"PostgreSQL variant not run: set {POSTGRES_ENV} to a database URL")
    admin = create_engine(base)
    created: list[str] = []

    def new_schema(prefix: str) -> str:
        schema = f"{prefix}_{os.getpid()}_{len(created)}"
        if not schema.isascii() or not schema.replace("_", "").isalnum() or not schema.islower():
            raise ValueError(f"not a plain schema name: {schema!r}")
        with admin.begin() as connection:
            connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
            connection.execute(text(f"CREATE SCHEMA {schema}"))
        created.append(schema)
        separator = "&" if "?" in base else "?"
        return f"{base}{separator}options=-csearch_path%3D{schema}"

    try:
        yield new_schema
    finally:
        with admin.begin() as connection:
            for schema in created:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()
