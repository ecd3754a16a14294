"""The Office's history checks on hand-written histories: each passes a good one and catches
bad ones (work-request histories are judged by the search: tests/concurrency/test_linearizable.py).

Times are small integers: an operation spans [start, end], and two operations
overlap unless one ends before the other starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from conformance.concurrency.checker import (
    check_allowance,
    check_assignment_generations,
    check_definite_share,
    over_admission_evidence,
)
from conformance.concurrency.history import Event, Operation, operations
from conformance.driver import ErrorCode

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LEASE = timedelta(seconds=30)
WINDOW = timedelta(minutes=10)


@dataclass
class History:
    """A history written by hand, one operation (invoke plus completion) per call."""

    events: list[Event] = field(default_factory=list)

    def op(
        self,
        operation: str,
        span: tuple[int, int | None],
        outcome: str,
        *,
        value: Any = None,
        error: ErrorCode | None = None,
        clock: datetime = T0,
        **arguments: Any,
    ) -> History:
        process = len(self.events) + 1
        start, end = span
        common = {"process": process, "operation": operation, "arguments": arguments}
        self.events.append(Event(type="invoke", time_ns=start, clock=clock, **common))
        if end is not None:
            self.events.append(
                Event(type=outcome, time_ns=end, value=value, error=error, clock=clock, **common)
            )
        return self

    def operations(self) -> list[Operation]:
        return operations(sorted(self.events, key=lambda event: event.time_ns))


# --------------------------------------------------------------------------
# Office allowance histories (allowance 2 keeps them short)
# --------------------------------------------------------------------------

ALLOWANCE = 2


def _wake(
    history: History,
    span: tuple[int, int | None],
    outcome: str,
    *,
    clock: datetime = T0,
    generation: int = 1,
) -> None:
    if outcome == "info":
        history.op("assign_task", span, "info", clock=clock, **_assignment_args())
        return
    value = {
        "task_id": "t",
        "assignee_agent_id": "b",
        "generation": generation,
        "wake": {"outcome": outcome, "run_id": None},
    }
    history.op("assign_task", span, "ok", value=value, clock=clock, **_assignment_args())


def _assignment_args() -> dict[str, str]:
    return {"task_id": "t", "assignee_agent_id": "b", "acting_agent_id": "a"}


def _check_allowance(history: History) -> Any:
    return check_allowance(history.operations(), allowance=ALLOWANCE, window=WINDOW)


def test_allowance_race_within_the_bound_passes() -> None:
    history = History()
    _wake(history, (0, 1), "queued")
    for start in (2, 2, 3):
        _wake(history, (start, 8), "queued" if start == 2 else "rate_limited")

    result = _check_allowance(history)

    assert result.ok, result
    assert result.counts["largest_over_admission"] == 1
    assert result.counts["largest_concurrency"] == 3
    assert result.operations_checked == 4
    assert "largest over-admission observed: 1" in over_admission_evidence(result)


def test_allowance_refusal_before_the_allowance_is_used_is_caught() -> None:
    history = History()
    _wake(history, (0, 1), "queued")
    _wake(history, (2, 3), "rate_limited")

    result = _check_allowance(history)

    assert any("refused with at most 1" in v for v in result.violations), result


def test_allowance_admission_after_the_allowance_was_used_is_caught() -> None:
    history = History()
    for start in (0, 2, 4):
        _wake(history, (start, start + 1), "queued")

    result = _check_allowance(history)

    assert any("had finished before it began" in v for v in result.violations), result
    assert result.counts["largest_over_admission"] == 1


def test_allowance_over_admission_beyond_the_concurrency_is_caught() -> None:
    """Five wakes overlapping two at a time: three beyond the allowance of 2 is more than K."""
    history = History()
    _wake(history, (0, 3), "queued")
    _wake(history, (2, 5), "queued")
    _wake(history, (4, 7), "queued")
    _wake(history, (6, 9), "queued")
    _wake(history, (8, 11), "queued")

    result = _check_allowance(history)

    assert result.counts["largest_concurrency"] == 2
    assert any("with at most 2 wakes in flight" in v for v in result.violations), result


def test_allowance_over_admission_of_exactly_k_is_within_the_spec_bound() -> None:
    """Two overlapping wakes after the allowance filled: K = 2 beyond is what the text allows
    (the sequential rule still catches these admissions: they came after N had finished)."""
    history = History()
    _wake(history, (0, 1), "queued")
    _wake(history, (2, 3), "queued")
    _wake(history, (4, 7), "queued")
    _wake(history, (5, 8), "queued")

    result = _check_allowance(history)

    assert result.counts["largest_over_admission"] == 2
    assert not any("in flight" in v for v in result.violations), result
    assert any("had finished before it began" in v for v in result.violations), result


def test_allowance_window_is_half_open() -> None:
    edge, inside = History(), History()
    for history, later in ((edge, WINDOW), (inside, WINDOW - timedelta(microseconds=1))):
        _wake(history, (0, 1), "queued")
        _wake(history, (2, 3), "queued")
        _wake(history, (4, 5), "queued", clock=T0 + later)

    assert _check_allowance(edge).ok, _check_allowance(edge)
    assert not _check_allowance(inside).ok


def test_allowance_refusal_is_excused_by_an_unknown_wake() -> None:
    history = History()
    _wake(history, (0, 1), "queued")
    _wake(history, (2, None), "info")
    _wake(history, (3, 4), "rate_limited")

    result = _check_allowance(history)

    assert result.ok, result
    assert result.counts["unknown"] == 1
    assert result.counts["admitted"] == 1
    assert result.counts["largest_over_admission"] == 0


# -- assignment generations --------------------------------------------------------


def _created_task() -> History:
    task = {"task_id": "t", "assignment_generation": 0}
    return History().op("create_task", (0, 1), "ok", value=task, task_id="t")


def test_assignment_generations_rising_by_one_pass() -> None:
    history = _created_task()
    for generation in (1, 2, 3):
        _wake(history, (2, 9), "queued", generation=generation)

    result = check_assignment_generations(history.operations())

    assert result.ok, result
    assert result.counts["committed"] == 3


def test_assignment_generations_lost_increment_is_caught() -> None:
    history = _created_task()
    for _ in range(3):
        _wake(history, (2, 9), "queued", generation=1)

    result = check_assignment_generations(history.operations())

    assert any("generation 1 granted 3 times" in v for v in result.violations), result


def test_assignment_generation_gap_is_excused_by_an_unknown_mutation() -> None:
    history = _created_task()
    _wake(history, (2, None), "info")
    _wake(history, (3, 9), "queued", generation=2)

    assert check_assignment_generations(history.operations()).ok


def test_definite_share_a_batch_of_only_unknown_outcomes_is_caught() -> None:
    history = History()
    for process in range(4):
        history.op("claim", (process, None), "info", request_id="r", holder=f"h{process}")
    ops = [_in_batch(op, 1) for op in history.operations()]

    result = check_definite_share(ops, minimum=0.9)

    assert not result.ok
    assert "0 of 4 outcomes definite" in result.violations[0], result
    assert result.counts["indeterminate"] == 4


def test_definite_share_with_no_batch_at_all_is_caught() -> None:
    alone = History().op("claim", (0, 1), "ok", request_id="r", holder="h")
    result = check_definite_share(alone.operations(), minimum=0.9)

    assert result.violations == ("no concurrent batch was recorded",)


def _in_batch(op: Operation, batch: int) -> Operation:
    return Operation(
        process=op.process,
        operation=op.operation,
        arguments=op.arguments,
        outcome=op.outcome,
        value=op.value,
        error=op.error,
        invoked_ns=op.invoked_ns,
        completed_ns=op.completed_ns,
        clock=op.clock,
        batch=batch,
    )
