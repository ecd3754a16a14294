"""Usages of one slice made at once, judged by the linearizability search: the reference's
histories are explained on SQLite and PostgreSQL, the two race mutants' of 001.13 are not.

Eight usages of 30 on a slice of 100, for several requests: at most three fit each slice.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conformance.adapters.factory import open_driver
from conformance.concurrency.history import HistoryRecorder
from conformance.concurrency.races import usage_race
from conformance.driver import Driver
from tests.conftest import SchemaFactory

START = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
REQUESTS, USAGES, AMOUNT, SLICE = 4, 8, 30, 100


@pytest.fixture(scope="module")
def postgres_url(new_postgres_schema: SchemaFactory) -> str:
    return new_postgres_schema("conformance_usage_races")


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[list[Driver]]:
    drivers: list[Driver] = []
    yield drivers
    for driver in drivers:
        driver.close()


def recorded(impl: str, url: str | None, tmp_path: Path, opened: list[Driver]) -> HistoryRecorder:
    driver = open_driver(impl, url, tmp_path)
    opened.append(driver)
    recorder = HistoryRecorder(driver)
    recorder.set_clock(START)
    return recorder


@pytest.mark.parametrize(
    "database", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_the_reference_spends_at_most_the_slice_and_what_it_accepted(
    database: str, request: pytest.FixtureRequest, tmp_path: Path, opened: list[Driver]
) -> None:
    url = None if database == "sqlite" else request.getfixturevalue("postgres_url")
    recorder = recorded("reference", url, tmp_path, opened)
    verdict = usage_race(
        recorder, requests=REQUESTS, usages=USAGES, amount=AMOUNT, budget_slice=SLICE
    )
    assert verdict.ok, str(verdict)
    counts = verdict.check("linearizable").counts
    assert counts["record_usage_ok"] == REQUESTS * (SLICE // AMOUNT), str(verdict)
    assert counts.get("record_usage_unknown", 0) == 0


@pytest.mark.parametrize("mutant", ["usage_checked_then_charged", "usage_written_back"])
def test_a_ledger_checked_on_a_read_breaks_the_usage_rule(
    mutant: str, tmp_path: Path, opened: list[Driver]
) -> None:
    recorder = recorded(f"mutant:{mutant}", None, tmp_path, opened)
    verdict = usage_race(
        recorder, requests=REQUESTS, usages=USAGES, amount=AMOUNT, budget_slice=SLICE
    )
    search = verdict.check("linearizable")
    assert not search.ok, f"no race showed {mutant} in {REQUESTS} batches:\n{verdict}"
