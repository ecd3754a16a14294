"""The office effects model's predictions for the gates before the allowance: a redelivered key
is a duplicate, a wake with a queued run of its agent and task seconds old merges, and neither
may be refused on a full window; a restart drops an armed fault; a merge that changes whether a
row counts is remembered as a relabel."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from conformance.driver import Outcome, RateLimitReason
from conformance.oracle.office_shapes import Shape
from conformance.properties.hostile_data import TASK_ASSIGNED, agent_payload
from conformance.properties.office_model import (
    Expected,
    OfficeModel,
    StoredRun,
)
from conformance.properties.office_operations import Assign, Raw

START = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)
TASK = "T-100"


def full_window(*, last_queued: bool = False, key: str = "k-5") -> OfficeModel:
    """Five agent wakes of the task a second apart, the last one keyed `key`."""
    model = OfficeModel(
        5,
        timedelta(minutes=10),
        unparseable_counted=False,
        coalesce_window=timedelta(seconds=5),
        lookback=timedelta(hours=24),
    )
    for index in range(5):
        row = StoredRun(
            START + timedelta(seconds=index),
            "ada",
            "keyed",
            TASK_ASSIGNED,
            TASK,
            key if index == 4 else f"k-{index}",
            queued=last_queued and index == 4,
        )
        model.insert(f"run-{index}", admitted(), row)
    return model


def admitted() -> Expected:
    """An agent wake of the task, admitted."""
    return Expected(Shape.AGENT, frozenset({Outcome.QUEUED}), (), {}, (), counts_for=TASK)


def redelivery(at: datetime, key: str | None) -> Raw:
    payload = json.dumps(agent_payload(TASK, "ada"))
    return Raw(at, "finished", "ada", TASK_ASSIGNED, payload, key)


def test_a_redelivered_key_is_a_duplicate_even_on_a_full_window() -> None:
    model = full_window()
    expected = model.raw(redelivery(START + timedelta(minutes=1), "k-5"))
    assert expected.outcomes == {Outcome.DEDUPLICATED}
    assert expected.moves == {}
    assert "AC-OFFICE-ASSIGN-RATE-001.5/after-dedup" in expected.outcome_cites


def test_a_key_whose_row_was_deleted_is_decided_by_the_count_again() -> None:
    model = full_window()
    model.delete("run-4")
    model.insert(
        "run-5",
        admitted(),
        StoredRun(START + timedelta(seconds=6), "bob", "keyed", TASK_ASSIGNED, TASK, "x", False),
    )
    expected = model.raw(redelivery(START + timedelta(minutes=1), "k-5"))
    assert expected.refused
    assert expected.moves == {RateLimitReason.ALLOWANCE_EXHAUSTED: 1}


def test_an_agent_wake_with_a_queued_run_seconds_old_merges_on_a_full_window() -> None:
    model = full_window(last_queued=True)
    wake = Assign(START + timedelta(seconds=8), "finished", TASK, "ada", "bob")
    expected = model.assignment(wake)
    assert expected.outcomes == {Outcome.COALESCED}
    assert expected.merges_into == "run-4"
    assert {
        "AC-OFFICE-ASSIGN-RATE-001.5/after-coalescing",
        "AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",
    } <= set(expected.outcome_cites)


def test_past_the_coalescing_window_the_same_wake_is_refused() -> None:
    model = full_window(last_queued=True)
    wake = Assign(START + timedelta(seconds=9), "finished", TASK, "ada", "bob")
    assert model.assignment(wake).refused


def test_a_settled_run_takes_no_merge() -> None:
    model = full_window(last_queued=False)
    wake = Assign(START + timedelta(seconds=6), "finished", TASK, "ada", "bob")
    assert model.assignment(wake).refused


def test_a_users_wake_names_the_run_it_merges_into_and_the_relabel_is_remembered() -> None:
    model = full_window(last_queued=True)
    wake = Assign(START + timedelta(seconds=6), "finished", TASK, "ada", "")
    expected = model.assignment(wake)
    assert expected.merges_into == "run-4"
    model.recount({"run-4": expected.counts_for})
    assert model.relabelled
    assert model.in_window(TASK, START + timedelta(seconds=7)) == 4
    later = model.assignment(Assign(START + timedelta(seconds=7), "finished", TASK, "cy", "bob"))
    assert "AC-OFFICE-ASSIGN-RATE-001.4/relabel-tolerance" in later.outcome_cites


def test_a_restart_drops_an_armed_fault() -> None:
    model = full_window()
    model.fault_armed = True
    model.restart()
    assert not model.fault_armed
    assert model.restarted
    wake = Assign(START + timedelta(seconds=6), "finished", TASK, "bob", "ada")
    assert model.assignment(wake).refused
