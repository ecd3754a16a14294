"""The history checker's usage ledger: what concurrent usages of one slice may charge it.

Histories are written by hand (see tests/test_checker.py for the shape): a delegation of a
request whose child session is "child", usages of it at once, and reads of the request.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.concurrency.checker import (
    check_publishes,
    check_usage,
    check_usage_exact,
)
from conformance.driver import ErrorCode
from tests.test_checker import History, _claimed, _publish, _request

SLICE = 100


def _delegated(budget_slice: int = SLICE) -> History:
    value = _request(budget_slice=budget_slice, budget_spent=0)
    return History().op("delegate", (0, 1), "ok", value=value, originating_session_id="s")


def _usage(history: History, span: tuple[int, int | None], amount: int, **result: Any) -> None:
    outcome = result.pop("outcome", "ok")
    history.op("record_usage", span, outcome, session_id="child", amount=amount, **result)


def _read(history: History, span: tuple[int, int], spent: int) -> None:
    value = _request(budget_slice=SLICE, budget_spent=spent)
    history.op("get_request", span, "ok", value=value, request_id="r")


def _race(accepted: int, refused: int = 0, unknown: int = 0, amount: int = 30) -> History:
    """`accepted + refused + unknown` usages of `amount` all at once, after the delegation."""
    history = _delegated()
    for _ in range(accepted):
        _usage(history, (10, 20), amount)
    for _ in range(refused):
        _usage(history, (10, 20), amount, outcome="fail", error=ErrorCode.USAGE_EXCEEDS_SLICE)
    for _ in range(unknown):
        _usage(history, (10, None), amount, outcome="info")
    return history


def test_eight_usages_of_30_on_100_three_accepted_charge_90() -> None:
    history = _race(accepted=3, refused=5)
    _read(history, (30, 31), 90)

    usage, exact = check_usage(history.operations()), check_usage_exact(history.operations())

    assert usage.ok and exact.ok, (usage, exact)
    assert usage.counts["accepted"] == 3
    assert usage.counts["refused"] == 5
    assert usage.counts["accepted_amount"] == 90


def test_a_check_and_write_not_atomic_overspends_the_slice_and_is_caught() -> None:
    history = _race(accepted=8)
    _read(history, (30, 31), 240)

    usage = check_usage(history.operations())

    assert any("240 spent of a slice of 100" in v for v in usage.violations), usage
    assert any("accepted 240 of the 100 left" in v for v in usage.violations), usage


def test_a_lost_update_charges_less_than_was_accepted_and_is_caught() -> None:
    """Eight usages told ok, but each wrote back what it read plus 30: 30 spent."""
    history = _race(accepted=8)
    _read(history, (30, 31), 30)

    usage = check_usage(history.operations())

    assert any("reads 30 more spent" in v for v in usage.violations), usage


@pytest.mark.parametrize(("spent", "ok"), [(60, True), (80, True), (70, False), (40, False)])
def test_a_usage_whose_answer_is_unknown_may_or_may_not_count(spent: int, ok: bool) -> None:
    history = _race(accepted=3, refused=0, unknown=1, amount=20)
    _read(history, (30, 31), spent)

    assert check_usage(history.operations()).ok is ok
    assert check_usage_exact(history.operations()).ok is ok


def test_usage_charged_up_to_the_slice_is_no_clause_broken_but_not_the_kits_reading() -> None:
    """Four usages of 30 accepted, 100 charged: WR-2 read as capped-usage, which the text allows."""
    history = _race(accepted=4)
    _read(history, (30, 31), 100)

    assert check_usage(history.operations()).ok
    exact = check_usage_exact(history.operations())
    assert not exact.ok and "accepted 120" in exact.violations[0], exact


def test_a_usage_refused_while_the_slice_had_room_is_caught() -> None:
    history = _race(accepted=1, refused=1)
    _read(history, (30, 31), 30)

    usage = check_usage(history.operations())

    assert any("at most 30 of the 100 left" in v for v in usage.violations), usage


def test_a_refusal_is_justified_by_what_usages_that_may_come_first_could_take() -> None:
    history = _race(accepted=3, refused=1, unknown=0, amount=30)
    _usage(history, (10, None), 30, outcome="info")
    _read(history, (30, 31), 90)

    assert check_usage(history.operations()).ok


def test_a_history_starting_mid_way_needs_the_room_to_hold_the_lower_bound() -> None:
    """The first read is where the ledger starts: what was left then comes from `rooms`."""
    history = History()
    _read(history, (0, 1), 20)
    for _ in range(3):
        _usage(history, (10, 20), 30)
    _read(history, (30, 31), 20)

    assert not check_usage(history.operations(), rooms={"r": 80}).ok
    assert check_usage(history.operations()).ok, "without the room, only the ceiling holds it"
    assert not check_usage_exact(history.operations()).ok


def test_a_usage_overlapping_the_first_read_leaves_it_no_baseline() -> None:
    history = History()
    _usage(history, (0, 5), 30)
    _read(history, (2, 3), 0)
    _read(history, (30, 31), 0)

    assert check_usage(history.operations(), rooms={"r": 100}).ok


def test_the_room_is_unknown_once_the_child_delegated() -> None:
    history = _delegated()
    nested = _request(request_id="r2", child_session_id="grandchild", budget_slice=30)
    history.op("delegate", (2, 3), "ok", value=nested, originating_session_id="child")
    for _ in range(3):
        _usage(history, (10, 20), 30)
    _read(history, (30, 31), 40)

    usage = check_usage(history.operations())

    assert usage.ok, "the slice may have been carved: only 0 <= moved <= accepted is checked"
    assert not check_usage_exact(history.operations()).ok


def test_a_read_overlapping_the_usages_may_or_may_not_see_them() -> None:
    history = _race(accepted=2)
    _read(history, (15, 16), 30)
    _read(history, (30, 31), 60)

    assert check_usage(history.operations()).ok
    assert check_usage_exact(history.operations()).ok


def test_a_stale_publish_is_justified_by_a_heartbeat_renewing_under_another_generation() -> None:
    """WR-7 read as heartbeat-regenerates: the heartbeat's own check says whether it may."""
    history = _claimed()
    renewed = {"holder": "a", "generation": 2, "expires_at": None, "closed_at": None}
    history.op("heartbeat", (4, 6), "ok", value=renewed, request_id="r", holder="a", generation=1)
    _publish(history, (5, 7), "x", outcome="fail", error=ErrorCode.STALE_GENERATION)

    assert check_publishes(history.operations()).ok
