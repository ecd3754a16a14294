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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.factory import open_driver
from conformance.checker import (
    CheckResult,
    check_allowance,
    check_assignment_generations,
    check_budget,
    check_claims,
    check_publishes,
    over_admission_evidence,
)
from conformance.driver import Capability, ConcurrentCall, DelegationKind, Permissions, WorkRequest
from conformance.history import HistoryRecorder
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
# Office: K concurrent agent wakes with N - 1 already admitted
# --------------------------------------------------------------------------


def test_concurrent_agent_wakes_refuse_nothing_early_and_over_admit_less_than_k(
    race: Race,
) -> None:
    recorder = race.recorder
    office = recorder.driver.describe().office
    assert office is not None
    admitted_first = office.allowance - 1
    _office_cast(recorder, admitted_first)
    for round_number in range(OFFICE_ROUNDS):
        task = f"task-{round_number}"
        recorder.invoke("create_task", workspace_id="ws", task_id=task)
        for index in range(admitted_first):
            recorder.invoke(
                "assign_task",
                task_id=task,
                assignee_agent_id=f"early-{index}",
                acting_agent_id="lead",
            )
        recorder.run_concurrently(
            [
                ConcurrentCall(
                    operation="assign_task",
                    arguments={
                        "task_id": task,
                        "assignee_agent_id": f"racer-{index}",
                        "acting_agent_id": "lead",
                    },
                )
                for index in range(WAKES_PER_ROUND)
            ]
        )
        recorder.advance_clock(timedelta(seconds=1))

    history = recorder.operations()
    allowance = check_allowance(
        history, allowance=office.allowance, window=timedelta(seconds=office.window_seconds)
    )
    generations = check_assignment_generations(history)
    race.conclude(allowance, generations)
    _assert_clean(allowance, generations)
    assert allowance.counts["largest_concurrency"] >= 2, "the batches never overlapped"
    assert allowance.counts["largest_over_admission"] <= WAKES_PER_ROUND - 1
    assert generations.counts["committed"] == OFFICE_ROUNDS * (admitted_first + WAKES_PER_ROUND)


def _office_cast(recorder: HistoryRecorder, admitted_first: int) -> None:
    """A workspace, an agent allowed to assign, and one assignee per wake of a round."""
    recorder.invoke("create_workspace", workspace_id="ws")
    recorder.invoke("create_agent", workspace_id="ws", agent_id="lead", can_assign_tasks=True)
    assignees = [f"early-{i}" for i in range(admitted_first)]
    assignees += [f"racer-{i}" for i in range(WAKES_PER_ROUND)]
    for agent in assignees:
        recorder.invoke("create_agent", workspace_id="ws", agent_id=agent, can_assign_tasks=False)


# --------------------------------------------------------------------------
# Work requests
# --------------------------------------------------------------------------

HOLDERS = [f"holder-{index}" for index in range(CLAIMANTS)]


def _work_request_world(recorder: HistoryRecorder, budget: int, sessions: int) -> None:
    recorder.invoke("create_environment", environment_id="env", members=["owner", *HOLDERS])
    recorder.invoke("create_campaign", campaign_id="camp", environment_id="env", budget=budget)
    for index in range(sessions):
        recorder.invoke(
            "create_session",
            session_id=f"root-{index}",
            campaign_id="camp",
            principal="owner",
            permissions=Permissions(),
        )


def _delegate(recorder: HistoryRecorder, session: str, budget_slice: int = 10) -> WorkRequest:
    request: WorkRequest = recorder.invoke("delegate", **_delegation(session, budget_slice))
    return request


def _delegation(session: str, budget_slice: int) -> dict[str, Any]:
    return {
        "kind": DelegationKind.SPAWN,
        "originating_session_id": session,
        "deliverable": "a report",
        "acceptance_checks": ["it exists"],
        "budget_slice": budget_slice,
        "permissions": Permissions(),
        "assignee": None,
    }


def _work_request_checks(recorder: HistoryRecorder) -> tuple[CheckResult, ...]:
    history = recorder.operations()
    return check_claims(history), check_publishes(history), check_budget(history)


def test_concurrent_claims_of_one_open_request_have_one_winner(race: Race) -> None:
    recorder = race.recorder
    requests = 3
    _work_request_world(recorder, budget=100, sessions=1)
    for _ in range(requests):
        request = _delegate(recorder, "root-0")
        recorder.run_concurrently(
            [
                ConcurrentCall(
                    operation="claim",
                    arguments={"request_id": request.request_id, "holder": holder},
                )
                for holder in HOLDERS
            ]
        )
        recorder.invoke("get_request", request_id=request.request_id)

    claims, _, budget = _work_request_checks(recorder)
    race.conclude(claims, budget)
    _assert_clean(claims, budget)
    assert claims.counts["succeeded"] == requests
    assert claims.counts["refused_lease_held"] == requests * (CLAIMANTS - 1)


def test_concurrent_publishes_of_one_request_complete_it_once(race: Race) -> None:
    recorder = race.recorder
    requests = 3
    _work_request_world(recorder, budget=100, sessions=1)
    for _ in range(requests):
        request = _delegate(recorder, "root-0")
        lease = recorder.invoke("claim", request_id=request.request_id, holder="holder-0")
        result_refs = ["result-a", "result-a", "result-b", "result-c", "result-d", "result-e"]
        recorder.run_concurrently(
            [
                ConcurrentCall(
                    operation="publish",
                    arguments={
                        "request_id": request.request_id,
                        "holder": "holder-0",
                        "generation": lease.generation,
                        "result_ref": result_ref,
                    },
                )
                for result_ref in result_refs
            ]
        )
        recorder.invoke("get_request", request_id=request.request_id)
    recorder.invoke("budget", campaign_id="camp")

    claims, publishes, budget = _work_request_checks(recorder)
    race.conclude(publishes, claims, budget)
    _assert_clean(publishes, claims, budget)
    assert publishes.counts["accepted"] == requests
    assert publishes.counts["lease_closes"] == requests


def test_concurrent_delegations_never_overdraw_the_budget(race: Race) -> None:
    recorder = race.recorder
    sessions, budget, budget_slice = 5, 100, 10
    _work_request_world(recorder, budget=budget, sessions=sessions)
    recorder.invoke("budget", campaign_id="camp")
    recorder.run_concurrently(
        [
            ConcurrentCall(
                operation="delegate",
                arguments=_json_delegation(f"root-{index % sessions}", budget_slice),
            )
            for index in range(DELEGATIONS)
        ]
    )
    recorder.invoke("budget", campaign_id="camp")

    _, _, budget_check = _work_request_checks(recorder)
    race.conclude(budget_check)
    _assert_clean(budget_check)
    assert budget_check.counts["delegations_succeeded"] * budget_slice <= budget
    assert budget_check.counts["snapshots"] == 2


def _json_delegation(session: str, budget_slice: int) -> dict[str, Any]:
    arguments = _delegation(session, budget_slice)
    return {**arguments, "kind": "spawn", "permissions": {"tools": [], "devices": []}}
