"""Fixtures shared by the kit's own tests: private PostgreSQL schemas on the configured server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import create_engine, text

POSTGRES_ENV = "CONFORMANCE_POSTGRES_URL"

SchemaFactory = Callable[[str], str]
"""Takes a name prefix (lower-case letters, digits, underscores); returns a fresh schema's URL."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The heaviest tests first, by the cost their `slow` or `cost` mark declares.

    pytest-xdist hands work out a file at a time, in collection order, to whichever worker runs
    short (`--dist loadfile --no-loadscope-reorder`, pyproject.toml; a file's module fixtures
    are then made once): a four-minute test handed out last would leave the other worker idle
    for four minutes, and so, for less, would a forty-second file met at the end of the
    alphabet. The sort is stable, so the rest keeps its order.
    """
    items.sort(key=_declared_cost, reverse=True)


def _declared_cost(item: pytest.Item) -> float:
    mark = item.get_closest_marker("slow") or item.get_closest_marker("cost")
    return float(mark.kwargs.get("seconds", 1)) if mark is not None else 0.0


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
