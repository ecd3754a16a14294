"""In-process drivers hand their store on: the next driver gets it emptied, drivers open at the
same time never share one, and the engine (its compiled statements) is kept per store."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters.factory import open_reference
from conformance.adapters.inprocess import InProcessDriver
from conformance.driver import DriverError, ErrorCode
from reference.db import Database, shared_engine


def test_a_closed_driver_s_store_goes_emptied_to_the_next(tmp_path: Path) -> None:
    first = open_reference(None, tmp_path)
    assert isinstance(first, InProcessDriver)
    first.create_workspace("w")
    first.create_task("w", "left-behind")
    first.close()
    second = open_reference(None, tmp_path)
    try:
        assert isinstance(second, InProcessDriver) and second.url == first.url
        with pytest.raises(DriverError) as missing:
            second.get_task("left-behind")
        assert missing.value.code is ErrorCode.NOT_FOUND
        assert second.list_runs() == []
    finally:
        second.close()


def test_drivers_open_at_once_get_stores_of_their_own(tmp_path: Path) -> None:
    one = open_reference(None, tmp_path / "one")
    other = open_reference(None, tmp_path / "other")
    try:
        assert isinstance(one, InProcessDriver) and isinstance(other, InProcessDriver)
        assert one.url != other.url
        one.create_workspace("w")
        one.create_task("w", "only-in-one")
        with pytest.raises(DriverError):
            other.get_task("only-in-one")
    finally:
        one.close()
        other.close()


def test_a_store_keeps_one_engine_per_way_of_writing_and_closing_a_database_closes_them(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    database = Database(url)
    assert database.engine is shared_engine(url) is Database(url).engine
    assert database.autocommitting_engine is shared_engine(url, autocommit=True)
    assert database.autocommitting_engine is not database.engine
    for engine in (database.engine, database.autocommitting_engine):
        with engine.connect():
            pass
        assert engine.pool.checkedin() == 1
    database.dispose()
    assert database.engine.pool.checkedin() == database.autocommitting_engine.pool.checkedin() == 0
    own = Database(url, own_engines=True)
    assert {own.engine, own.autocommitting_engine}.isdisjoint(
        {database.engine, database.autocommitting_engine}
    )
    own.dispose()
