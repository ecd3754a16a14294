"""What a stored office run may become between two reads (conformance/oracle/stored_runs.py):
the changes a clause forbids, the one a merge is allowed, and the precision a store may keep."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from conformance.driver import Run
from conformance.oracle.stored_runs import (
    changes_in_store,
    expect_all_kept,
    expect_kept,
    forbidden_changes,
    stored_at,
)
from conformance.spec.clause_check import ClauseViolation

AT = datetime(2026, 3, 2, 9, 0, 0, 123456, tzinfo=UTC)


def run(actor: str = "agent", *, key: str | None = "k1", at: datetime = AT) -> Run:
    payload = {"task_id": "T-100", "workspace_id": "acme", "actor_type": actor, "actor_id": "ada"}
    return Run(
        run_id="1",
        agent_id="bob",
        reason="task_assigned",
        payload=json.dumps(payload),
        dedup_key=key,
        requested_at=at,
        status="queued",
        coalesced_count=0,
    )


@pytest.mark.parametrize(
    "stored",
    [AT, AT.replace(microsecond=123000), AT.replace(microsecond=0), AT + timedelta(microseconds=4)],
    ids=["microseconds", "milliseconds", "seconds truncated", "rounded up to 10 us"],
)
def test_a_store_may_keep_any_number_of_fractional_digits(stored: datetime) -> None:
    assert stored_at(AT, stored)


def test_an_instant_a_second_off_is_not_the_wake_s() -> None:
    assert not stored_at(AT, AT + timedelta(seconds=1))
    assert not stored_at(AT, AT.replace(microsecond=123440))


def test_a_row_that_stops_counting_without_a_merge_frees_its_place_early() -> None:
    (change,) = forbidden_changes(run(), run("user"), merged_into=False)
    assert change.cites == ("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",)
    (change,) = forbidden_changes(run("user"), run(), merged_into=False)
    assert change.cites == ("AC-OFFICE-ASSIGN-RATE-001.4/admitted-consume",)


def test_a_merge_may_relabel_the_row_it_was_reported_merged_into() -> None:
    assert forbidden_changes(run(), run("user"), merged_into=True) == []


def test_a_counted_row_keeps_its_instant_and_its_key_even_through_a_merge() -> None:
    later = run(at=AT + timedelta(seconds=3))
    assert [c.cites for c in forbidden_changes(run(), later, merged_into=True)] == [
        ("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",)
    ]
    rekeyed = run(key="k2")
    assert [c.cites for c in forbidden_changes(run(), rekeyed, merged_into=True)] == [
        ("AC-OFFICE-ASSIGN-RATE-002.5/keyed-once",)
    ]


def test_what_the_count_never_reads_may_change() -> None:
    """A row that counts for nothing may move and change its key; a gone row is judged elsewhere."""
    user = run("user")
    assert (
        forbidden_changes(user, run("user", key=None, at=AT + timedelta(1)), merged_into=False)
        == []
    )
    assert changes_in_store([run()], [], set()) == []


def test_a_forbidden_change_breaks_its_clauses_and_a_kept_store_proves_none() -> None:
    expect_kept([run()], [run()], set())
    with pytest.raises(ClauseViolation) as raised:
        expect_kept([run()], [run("user")], set())
    assert raised.value.cites == ("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",)


OPENED = AT - timedelta(minutes=10)
"""When the window that ends ten minutes after AT opened: AT's run still counts in it."""


def test_a_restart_that_loses_a_run_still_counting_gives_a_place_back_by_itself() -> None:
    kept, user = run(), run("user").model_copy(update={"run_id": "2"})
    with pytest.raises(ClauseViolation) as lost:
        expect_all_kept([kept, user], [user], "restart", OPENED)
    assert set(lost.value.cites) == {
        "AC-OFFICE-ASSIGN-RATE-002.4/restart",
        "AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",
    }
    expect_all_kept([kept, user], [kept], "restart", OPENED)  # a user's run counts for nothing
    expect_all_kept([kept, user], [user], "restart", AT)  # the window has passed it: it may go


def test_a_store_that_keeps_fewer_digits_may_read_them_back_after_a_restart_only() -> None:
    reloaded = run(at=AT.replace(microsecond=0))
    expect_all_kept([run()], [reloaded], "restart", OPENED)
    with pytest.raises(ClauseViolation):
        expect_all_kept([run()], [reloaded], "deletion", OPENED)


def test_a_run_restamped_across_a_deletion_breaks_the_deletion_s_clause_and_its_own() -> None:
    restamped = run().model_copy(update={"requested_at": AT + timedelta(minutes=5)})
    with pytest.raises(ClauseViolation) as moved:
        expect_all_kept([run()], [restamped], "deletion", OPENED)
    assert set(moved.value.cites) == {
        "AC-OFFICE-ASSIGN-RATE-002.4/deleted-row",
        "AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",
    }
    expect_all_kept([run()], [run()], "deletion", OPENED)
