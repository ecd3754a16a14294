"""In-process drivers hand their store on: the next driver gets it emptied, drivers open at the
same time never share one, and the engine (its compiled statements) is kept per store."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import make_url

from conformance.adapters.factory import open_driver, open_reference
from conformance.adapters.inprocess import InProcessDriver
from conformance.driver import DriverError, ErrorCode
from conformance.reference.db import Database, shared_engine


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


def test_a_store_handed_on_numbers_its_runs_from_one_again(tmp_path: Path) -> None:
    """A shelved store is emptied for the next driver, its autoincrement counters too: a
    scenario sees the store a new one would be (the served reference's first run is "1")."""
    for turn in ("first", "second"):
        (tmp_path / turn).mkdir()
        driver = open_driver("reference", None, tmp_path / turn)
        try:
            driver.create_workspace("w")
            driver.create_agent("w", "a", can_assign_tasks=True)
            driver.create_task("w", "t")
            wake = driver.assign_task("t", "a", acting_agent_id="").wake
            assert wake is not None and wake.run_id == "1", (turn, wake)
        finally:
            driver.close()


def test_a_store_handed_on_keeps_its_write_ahead_log(tmp_path: Path) -> None:
    """One idle connection stays open to a shelved store: closing the last driver's would fold
    the write-ahead log into the file and delete it, and the next scenario would make it anew."""
    for turn in ("first", "second"):
        driver = open_reference(None, tmp_path / turn)
        assert isinstance(driver, InProcessDriver)
        driver.create_workspace("w")
        driver.close()
        log = Path(make_url(driver.url).database or "").with_name("reference.sqlite-wal")
        assert log.exists(), f"{turn}: the write-ahead log was folded away at close"
