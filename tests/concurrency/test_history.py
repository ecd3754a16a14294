"""Histories: recording through a driver, pairing events, and the JSON-lines form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from conformance.concurrency.history import (
    Event,
    HistoryError,
    HistoryRecorder,
    RecordedDriver,
    operations,
    read_jsonl,
)
from conformance.driver import CallOutcome, ConcurrentCall, Driver, DriverError, ErrorCode

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SECOND_NS = 1_000_000_000


class _FakeDriver:
    """Answers a claim sequentially with a refusal and a batch with fixed outcomes."""

    def __init__(self, outcomes: list[CallOutcome]) -> None:
        self.outcomes = outcomes
        self.now = T0

    def set_clock(self, instant: datetime) -> None:
        self.now = instant

    def advance_clock(self, delta: timedelta) -> datetime:
        self.now += delta
        return self.now

    def claim(self, request_id: str, holder: str) -> Any:
        raise DriverError(ErrorCode.LEASE_HELD, "held")

    def heartbeat(self, request_id: str, holder: str, generation: int) -> Any:
        raise DriverError(ErrorCode.INDETERMINATE, "timed out", definite=False)

    def run_concurrently(self, calls: list[ConcurrentCall]) -> list[CallOutcome]:
        return self.outcomes


def _outcome(ok: bool, invoked: int, completed: int, *, definite: bool = True) -> CallOutcome:
    return CallOutcome(
        ok=ok,
        result={"generation": 1} if ok else None,
        error=None if ok else ErrorCode.LEASE_HELD if definite else ErrorCode.INDETERMINATE,
        definite=definite,
        message="",
        invoked_at_ns=invoked,
        completed_at_ns=completed,
    )


def _claim_call(holder: str) -> ConcurrentCall:
    return ConcurrentCall(operation="claim", arguments={"request_id": "r", "holder": holder})


def _recorder(outcomes: list[CallOutcome]) -> HistoryRecorder:
    return HistoryRecorder(cast(Driver, _FakeDriver(outcomes)))


def test_a_batch_becomes_ok_fail_and_info_events_within_its_own_span() -> None:
    far_future = 3600 * SECOND_NS
    recorder = _recorder(
        [
            _outcome(True, 0, 5),
            _outcome(False, 1, 6),
            _outcome(False, 2, far_future, definite=False),
        ]
    )
    recorder.set_clock(T0)

    recorder.run_concurrently([_claim_call(holder) for holder in "abc"])

    ops = recorder.operations()
    assert [op.outcome for op in ops] == ["ok", "fail", "info"]
    assert [op.arguments["holder"] for op in ops] == ["a", "b", "c"]
    assert all(op.clock == T0 for op in ops)
    ends = [op.completed_ns for op in ops]
    assert ends[2] is not None and ends[2] < far_future, "clamped to when the batch returned"
    assert [event.type for event in recorder.events][:3] == ["invoke"] * 3


def test_a_batch_with_missing_outcomes_is_refused() -> None:
    recorder = _recorder([_outcome(True, 0, 5)])

    with pytest.raises(HistoryError):
        recorder.run_concurrently([_claim_call("a"), _claim_call("b")])


def test_sequential_refusals_are_recorded_then_raised() -> None:
    recorder = _recorder([])
    recorder.set_clock(T0)
    recorder.advance_clock(timedelta(seconds=5))

    with pytest.raises(DriverError):
        recorder.invoke("claim", request_id="r", holder="a")
    with pytest.raises(DriverError):
        recorder.invoke("heartbeat", request_id="r", holder="a", generation=1)

    claim, heartbeat = recorder.operations()
    assert (claim.outcome, claim.error) == ("fail", ErrorCode.LEASE_HELD)
    assert (heartbeat.outcome, heartbeat.error) == ("info", ErrorCode.INDETERMINATE)
    assert claim.clock == T0 + timedelta(seconds=5)
    assert claim.surely_before(heartbeat)


def test_histories_survive_the_json_lines_round_trip(tmp_path: Path) -> None:
    recorder = _recorder([_outcome(True, 0, 5), _outcome(False, 1, 6)])
    recorder.set_clock(T0)
    recorder.run_concurrently([_claim_call("a"), _claim_call("b")])
    path = tmp_path / "history.jsonl"

    recorder.write(path)

    assert read_jsonl(path) == recorder.events
    assert len(path.read_text().splitlines()) == 4


def test_an_invocation_without_completion_is_unknown() -> None:
    events = [Event(process=1, type="invoke", operation="claim", arguments={}, time_ns=0)]

    (op,) = operations(events)

    assert (op.outcome, op.completed_ns) == ("info", None)


@pytest.mark.parametrize(
    "events",
    [
        [Event(process=1, type="ok", operation="claim", arguments={}, time_ns=1)],
        [
            Event(process=1, type="invoke", operation="claim", arguments={}, time_ns=0),
            Event(process=1, type="ok", operation="publish", arguments={}, time_ns=1),
        ],
        [
            Event(process=1, type="invoke", operation="claim", arguments={}, time_ns=0),
            Event(process=1, type="ok", operation="claim", arguments={}, time_ns=1),
            Event(process=1, type="fail", operation="claim", arguments={}, time_ns=2),
        ],
    ],
    ids=["completion-without-invoke", "mismatched-operation", "completed-twice"],
)
def test_malformed_histories_are_refused(events: list[Event]) -> None:
    with pytest.raises(HistoryError):
        operations(events)


def test_a_recorded_driver_records_judged_calls_at_the_instant_the_clock_shows() -> None:
    """Positional arguments are named as the port names them, and a clock moved behind the
    recorder's back is read before each recorded call; other calls pass straight through."""
    fake = _FakeDriver([_outcome(True, 0, 1)])
    recorded = RecordedDriver(cast(Driver, fake), frozenset({"claim"}))
    with pytest.raises(DriverError):
        recorded.claim("r", "h1")
    fake.set_clock(T0 + timedelta(minutes=5))
    recorded.run_concurrently([_claim_call("h2")])
    recorded.set_clock(T0 + timedelta(minutes=9))
    (refused, raced) = recorded.recorder.operations()
    assert (refused.operation, refused.arguments, refused.clock) == (
        "claim",
        {"request_id": "r", "holder": "h1"},
        T0,
    )
    assert (raced.outcome, raced.clock) == ("ok", T0 + timedelta(minutes=5))
    assert fake.now == T0 + timedelta(minutes=9)
    assert not recorded.partial


def test_a_recorded_driver_says_its_history_is_partial_after_a_crash_it_cannot_record() -> None:
    fake = _FakeDriver([])
    fake.crash_during = lambda calls, after: None  # type: ignore[attr-defined]
    recorded = RecordedDriver(cast(Driver, fake), frozenset({"claim"}))
    crash = recorded.crash_during
    assert not recorded.partial, "looked up, not yet called"
    crash([], after=timedelta(0))
    assert recorded.partial
    assert recorded.recorder.operations() == []
