"""The enqueue pipeline: its stages decide in order (dedup, coalescing, gate, insert)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.exc import OperationalError

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.office import allowance_count as allowance_count_module
from conformance.reference.office import run_queue
from conformance.reference.office.allowance_count import allowance_count
from conformance.reference.office.constants import (
    ASSIGNMENT_ALLOWANCE,
    COALESCE_WINDOW,
    DEDUP_LOOKBACK,
)
from conformance.reference.office.service import OfficeService
from conformance.reference.office.wake import EnqueueResult, Outcome

SPACING = COALESCE_WINDOW * 2
"""Far enough apart that consecutive wakes never coalesce."""


def payload(task: Any = "t", actor: str | None = "agent", actor_id: str | None = "b") -> str:
    fields = {"task_id": task, "actor_type": actor, "actor_id": actor_id}
    return json.dumps({name: value for name, value in fields.items() if value is not None})


def wake(
    office: OfficeService, key: str | None, *, agent: str = "a", text: str | None = None
) -> EnqueueResult:
    return office.enqueue_wake(agent, "task_assigned", text or payload(), key)


def exhaust(office: OfficeService, clock: ManualClock) -> None:
    """Admit a full allowance of agent wakes for task t, keys k0.., the last one just now."""
    for index in range(ASSIGNMENT_ALLOWANCE):
        if index:
            clock.advance(SPACING)
        assert wake(office, f"k{index}").outcome is Outcome.QUEUED


def counter(office: OfficeService, family: str, **labels: str) -> float:
    for metric in text_string_to_metric_families(office.telemetry.render()):
        for sample in metric.samples:
            if sample.name == f"{family}_total" and sample.labels == labels:
                return sample.value
    return 0.0


def rate_limits(office: OfficeService, reason: str) -> float:
    return counter(office, "office_assignment_rate_limit", reason=reason)


def dedups(office: OfficeService, kind: str) -> float:
    return counter(office, "office_run_dedup", reason="task_assigned", kind=kind, queue="office")


def snapshot(office: OfficeService) -> list[tuple[int, str, int]]:
    return [(run.id, run.payload, run.coalesced_count) for run in office.list_runs()]


def warnings(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [r.fields for r in caplog.records if r.name == "reference.office"]  # type: ignore[attr-defined]


def test_a_redelivery_is_deduplicated_even_when_the_allowance_is_exhausted(
    office: OfficeService, clock: ManualClock
) -> None:
    exhaust(office, clock)
    clock.advance(SPACING)
    assert wake(office, "k0").outcome is Outcome.DEDUPLICATED
    assert dedups(office, "windowed") == 1
    assert rate_limits(office, "allowance_exhausted") == 0


def test_a_coalescible_wake_merges_even_when_the_allowance_is_exhausted(
    office: OfficeService, clock: ManualClock
) -> None:
    exhaust(office, clock)
    last = office.list_runs()[-1]
    clock.advance(COALESCE_WINDOW - timedelta(microseconds=1))
    assert wake(office, "fresh") == EnqueueResult(Outcome.COALESCED, str(last.id))
    assert office.list_runs()[-1].coalesced_count == 1
    assert rate_limits(office, "allowance_exhausted") == 0


def test_a_duplicate_key_is_deduplicated_before_it_could_coalesce(
    office: OfficeService, clock: ManualClock
) -> None:
    first = wake(office, "k0")
    clock.advance(timedelta(seconds=1))
    assert wake(office, "k0") == EnqueueResult(Outcome.DEDUPLICATED, first.run_id)
    assert [run.coalesced_count for run in office.list_runs()] == [0]


def test_an_exhausted_allowance_refuses_without_inserting_or_merging(
    office: OfficeService, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    exhaust(office, clock)
    before = snapshot(office)
    clock.advance(COALESCE_WINDOW)
    assert wake(office, "k5") == EnqueueResult(Outcome.RATE_LIMITED, None)
    assert snapshot(office) == before
    assert rate_limits(office, "allowance_exhausted") == 1
    assert warnings(caplog) == [
        {
            "reason": "allowance_exhausted",
            "task_id": "t",
            "assignee_agent_profile_id": "a",
            "acting_agent_id": "b",
            "observed_count": ASSIGNMENT_ALLOWANCE,
            "allowance": ASSIGNMENT_ALLOWANCE,
        }
    ]


def test_the_coalescing_window_is_strict(office: OfficeService, clock: ManualClock) -> None:
    wake(office, None)
    clock.advance(COALESCE_WINDOW)
    assert wake(office, None).outcome is Outcome.QUEUED
    clock.advance(COALESCE_WINDOW - timedelta(microseconds=1))
    assert wake(office, None).outcome is Outcome.COALESCED


def test_task_comment_keys_never_coalesce(office: OfficeService) -> None:
    wake(office, None)
    assert wake(office, "task_comment:t:1").outcome is Outcome.QUEUED


def test_coalescing_needs_the_same_agent_reason_task_bucket_and_a_queued_run(
    office: OfficeService,
) -> None:
    first = wake(office, None)
    assert wake(office, None, agent="b").outcome is Outcome.QUEUED
    assert wake(office, None, text=payload(task="other")).outcome is Outcome.QUEUED
    assert office.enqueue_wake("a", "task_comment", payload(), None).outcome is Outcome.QUEUED
    assert wake(office, None, text="{broken").outcome is Outcome.QUEUED
    assert wake(office, None, text=payload(task=42)).outcome is Outcome.COALESCED, "empty bucket"
    assert first.run_id is not None
    office.set_run_status(first.run_id, "running")
    assert wake(office, None, text=payload(actor="user")).outcome is Outcome.QUEUED


def test_a_merge_relabels_the_actor_the_count_reads(
    office: OfficeService, database: Database, clock: ManualClock
) -> None:
    def observed() -> int:
        with database.transaction() as session:
            return session.scalar(allowance_count("t", clock.now())) or 0

    wake(office, None, text=payload(actor="user"))
    assert observed() == 0
    assert wake(office, None).outcome is Outcome.COALESCED
    assert observed() == 1, "an agent wake merged into a user run makes it count"
    assert wake(office, None, text=payload(actor="user")).outcome is Outcome.COALESCED
    assert observed() == 0, "a user wake merged into an agent run stops it counting"


@pytest.mark.parametrize(
    ("age", "kind"),
    [(DEDUP_LOOKBACK - timedelta(microseconds=1), "windowed"), (DEDUP_LOOKBACK, "durable")],
)
def test_a_key_beyond_the_lookback_is_still_deduplicated_by_the_unique_index(
    office: OfficeService, clock: ManualClock, age: timedelta, kind: str
) -> None:
    first = wake(office, "k0")
    clock.advance(age)
    assert wake(office, "k0") == EnqueueResult(Outcome.DEDUPLICATED, first.run_id)
    assert dedups(office, kind) == 1
    assert len(office.list_runs()) == 1


def test_a_failed_count_read_admits_once_and_says_why(
    office: OfficeService, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    exhaust(office, clock)
    office.fail_next_count_read()
    clock.advance(SPACING)
    assert wake(office, "k5").outcome is Outcome.QUEUED
    assert rate_limits(office, "count_read_failed") == 1
    [logged] = warnings(caplog)
    assert logged.pop("error")
    assert logged == {
        "reason": "count_read_failed",
        "task_id": "t",
        "assignee_agent_profile_id": "a",
        "acting_agent_id": "b",
        "allowance": ASSIGNMENT_ALLOWANCE,
    }
    clock.advance(SPACING)
    assert wake(office, "k6").outcome is Outcome.RATE_LIMITED, "the fault fires once"


def test_a_count_read_the_database_rejects_admits_in_a_fresh_transaction(
    office: OfficeService,
    clock: ManualClock,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real statement error, not the injected one: PostgreSQL aborts the whole transaction."""
    broken = sqlalchemy.text(
        "SELECT count(*) FROM no_such_table WHERE task_key = :task_id"
        " AND requested_at > :window_start AND requested_at <= :window_end"
    )
    monkeypatch.setattr(allowance_count_module, "ALLOWANCE_COUNT", broken)
    queued = wake(office, "k5")
    assert queued.outcome is Outcome.QUEUED
    assert [run.dedup_key for run in office.list_runs()] == ["k5"]
    assert rate_limits(office, "count_read_failed") == 1
    [logged] = warnings(caplog)
    assert "no_such_table" in logged["error"]
    clock.advance(SPACING)
    assert wake(office, "k5").run_id == queued.run_id, "the admitted run holds its key"


@pytest.mark.parametrize(
    ("actor_id", "expected"),
    [("b", {"acting_agent_id": "b"}), (None, {}), ("", {})],
)
def test_an_unattributed_wake_is_admitted_and_reported_without_a_task(
    office: OfficeService,
    caplog: pytest.LogCaptureFixture,
    actor_id: str | None,
    expected: dict[str, str],
) -> None:
    assert wake(office, None, text=payload(task=42, actor_id=actor_id)).outcome is Outcome.QUEUED
    assert rate_limits(office, "task_unattributed") == 1
    assert warnings(caplog) == [
        {"reason": "task_unattributed", "allowance": ASSIGNMENT_ALLOWANCE, **expected}
    ]


def test_ordinary_and_out_of_scope_admissions_move_no_counter_and_log_nothing(
    office: OfficeService, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    for text in [payload(), payload(actor="user"), "not json", payload(task=None, actor=None)]:
        assert wake(office, None, text=text).outcome is Outcome.QUEUED
        clock.advance(SPACING)
    for reason in ["allowance_exhausted", "count_read_failed", "task_unattributed"]:
        assert rate_limits(office, reason) == 0
    assert warnings(caplog) == []


def test_the_payload_is_stored_verbatim(office: OfficeService) -> None:
    text = ' {"task_id" : "t",\n "actor_type":"agent" }  '
    wake(office, None, text=text)
    assert [run.payload for run in office.list_runs()] == [text]


def test_a_database_failure_is_reported_as_none(
    office: OfficeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> None:
        raise OperationalError("SELECT", {}, Exception("the database went away"))

    monkeypatch.setattr(run_queue, "coalesce", broken)
    assert wake(office, None) == EnqueueResult(Outcome.NONE, None)


def test_the_surface_holds_the_three_families_without_wall_clock_series(
    office: OfficeService,
) -> None:
    text = office.telemetry.render()
    for family in [
        "office_run_dedup_total",
        "office_run_dedup_keyless_total",
        "office_assignment_rate_limit_total",
    ]:
        assert f"# TYPE {family} counter" in text
    assert "_created" not in text
