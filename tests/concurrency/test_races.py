"""Races through the driver port: concurrent batches, recorded as histories, judged by the checker.

Every operation, sequential or concurrent, goes through a HistoryRecorder; the
assertions are the checker's verdicts on the recorded history, so the same
checks would judge any implementation's histories. Each test leaves its
history (history.jsonl) and its evidence (evidence.json) in its pytest tmp dir
and prints the largest over-admission and the number of operations checked.

CONFORMANCE_RACE_ROUNDS raises the number of Office rounds for a soak run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.factory import open_driver
from conformance.concurrency.checker import CheckResult, over_admission_evidence
from conformance.concurrency.history import HistoryRecorder
from conformance.concurrency.races import (
    claim_race,
    delegation_race,
    office_wake_race,
    publish_race,
)
from conformance.driver import Capability
from tests.conftest import SchemaFactory

START = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
OFFICE_ROUNDS = int(os.environ.get("CONFORMANCE_RACE_ROUNDS", "20"))
WAKES_PER_ROUND = 8
CLAIMANTS = 32
DELEGATIONS = 20


@pytest.fixture(scope="module")
def postgres_url(new_postgres_schema: SchemaFactory) -> str:
    """A private PostgreSQL schema, so other runs sharing the database are safe."""
    return new_postgres_schema("conformance_races")


@dataclass
class Race:
    """A recorded implementation on one database, and where its evidence goes."""

    recorder: HistoryRecorder
    database: str
    directory: Path

    def conclude(self, *results: CheckResult) -> None:
        """Keep the history and the verdicts, and say how much was checked."""
        self.recorder.write(self.directory / "history.jsonl")
        evidence: dict[str, Any] = {
            "database": self.database,
            "operations_recorded": len(self.recorder.operations()),
            "checks": [result.to_json() for result in results],
        }
        for result in results:
            if "largest_over_admission" in result.counts:
                evidence["largest_over_admission"] = result.counts["largest_over_admission"]
                print(f"[{self.database}] {over_admission_evidence(result)}")
            print(
                f"[{self.database}] {result.check}: {result.operations_checked} operations checked"
            )
        (self.directory / "evidence.json").write_text(json.dumps(evidence, indent=2))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def race(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Race]:
    url = None if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    driver = open_driver("reference", url, tmp_path)
    try:
        assert Capability.CONCURRENCY in driver.describe().capabilities
        recorder = HistoryRecorder(driver)
        recorder.set_clock(START)
        yield Race(recorder, request.param, tmp_path)
    finally:
        driver.close()


def _assert_clean(*results: CheckResult) -> None:
    """Every check holds, and the in-process reference left no outcome unknown."""
    for result in results:
        assert result.ok, str(result)
        assert result.counts.get("unknown", 0) == 0, str(result)
        assert result.operations_checked > 0, str(result)


# --------------------------------------------------------------------------
# Office: K concurrent agent wakes with N - 1 already admitted, then at a full window
# --------------------------------------------------------------------------


def test_concurrent_agent_wakes_refuse_nothing_early_and_over_admit_less_than_k(
    race: Race,
) -> None:
    """The reference's gate is tighter than the spec's bound: at most K - 1 beyond N, and
    its generations rise by exactly one."""
    verdict = office_wake_race(
        race.recorder, rounds=OFFICE_ROUNDS, concurrent=WAKES_PER_ROUND, exact_steps=True
    )
    race.conclude(*verdict.checks)
    allowance, generations = verdict.check("allowance"), verdict.check("assignment_generations")
    _assert_clean(*verdict.checks)
    assert allowance.counts["largest_concurrency"] >= 2, "the batches never overlapped"
    assert allowance.counts["largest_over_admission"] <= WAKES_PER_ROUND - 1
    assert verdict.check("definite_share").counts["indeterminate"] == 0
    office = race.recorder.driver.describe().office
    assert office is not None
    one_place = OFFICE_ROUNDS * (office.allowance - 1 + WAKES_PER_ROUND)
    full_window = office.allowance + OFFICE_ROUNDS * WAKES_PER_ROUND
    assert generations.counts["committed"] == one_place + full_window


# --------------------------------------------------------------------------
# Work requests
# --------------------------------------------------------------------------


def test_concurrent_claims_of_one_open_request_have_one_winner(race: Race) -> None:
    requests = 3
    verdict = claim_race(race.recorder, requests=requests, claimants=CLAIMANTS)
    race.conclude(*verdict.checks)
    _assert_clean(*verdict.checks)
    counts = verdict.check("linearizable").counts
    assert counts["claim_ok"] == requests
    assert counts["claim_refused_lease_held"] == requests * (CLAIMANTS - 1)


def test_concurrent_publishes_of_one_request_complete_it_once(race: Race) -> None:
    requests = 3
    verdict = publish_race(race.recorder, requests=requests)
    race.conclude(*verdict.checks)
    _assert_clean(*verdict.checks)
    counts = verdict.check("linearizable").counts
    # One completion a request; the exact retry of the winner, if the winner has one, answers it.
    assert requests <= counts["publish_ok"] <= 2 * requests


def test_concurrent_delegations_never_overdraw_the_budget(race: Race) -> None:
    budget, budget_slice = 100, 10
    verdict = delegation_race(
        race.recorder, budget=budget, delegations=DELEGATIONS, budget_slice=budget_slice, sessions=5
    )
    race.conclude(*verdict.checks)
    _assert_clean(*verdict.checks)
    counts = verdict.check("linearizable").counts
    assert counts["delegate_ok"] * budget_slice <= budget
    assert counts["budget_ok"] == 2
