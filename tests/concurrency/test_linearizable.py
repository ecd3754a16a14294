"""Work-request histories judged by the linearizability search over the pure model.

Each history is written by hand from a world the model already holds: a campaign of 1,000,
a root session "s", and a request "r" whose child session "child" has a slice of 100, claimed
by "a" under generation 1. Calls carry their real-time span; calls whose spans overlap may
have taken effect in either order, and the search must find one order that explains every
answer, or name the clauses the answers break where no order does.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_jsonable_python

from conformance.adapters.factory import open_driver
from conformance.concurrency import linearizable, races
from conformance.concurrency.history import HistoryRecorder, Operation
from conformance.concurrency.linearizable import MAX_TRIES, stretches
from conformance.concurrency.races import (
    claim_race,
    delegation_race,
    publish_race,
    search_history,
    usage_race,
)
from conformance.concurrency.work_request_calls import judge_history
from conformance.driver import (
    BudgetSnapshot,
    Completion,
    Description,
    Driver,
    ErrorCode,
    Permissions,
    WorkRequestLimits,
)
from conformance.oracle.work_request_cites import (
    USAGE_FROM_SLICE,
)
from conformance.oracle.work_requests import WorkRequestOracle
from conformance.spec.clause_check import ClauseViolation, ScenarioError
from conformance.variants.variant import DECLARING_SUFFIX

T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
LIMITS = WorkRequestLimits(max_depth=3, max_children_per_session=5, lease_seconds=60)


def world(readings: dict[str, str] | None = None, *, claimed: bool = True) -> WorkRequestOracle:
    oracle = WorkRequestOracle(LIMITS, T0, readings)
    oracle.create_environment("env", ["owner", "a", "b", "c"])
    oracle.create_campaign("camp", "env", 1000)
    oracle.create_session("s", "camp", "owner", Permissions())
    oracle.delegate(
        "s",
        kind="spawn",  # type: ignore[arg-type]
        deliverable="a report",
        acceptance_checks=[],
        budget_slice=100,
        permissions=Permissions(),
        assignee=None,
        request_id="r",
        child_session_id="child",
    )
    if claimed:
        oracle.claim("r", "a", generation=1)
    return oracle


def lease_of(holder: str, generation: int, closed_at: datetime | None = None) -> dict[str, Any]:
    """A lease as the port reports it, granted at T0 for the limits' duration."""
    expires = T0 + timedelta(seconds=LIMITS.lease_seconds)
    return {
        "holder": holder,
        "generation": generation,
        "expires_at": expires,
        "closed_at": closed_at,
    }


class History:
    """Calls written by hand: each with its span in nanoseconds (None: it never ended)."""

    def __init__(self) -> None:
        self.operations: list[Operation] = []

    def call(
        self,
        operation: str,
        span: tuple[int, int | None],
        outcome: str = "ok",
        *,
        value: Any = None,
        error: ErrorCode | None = None,
        **arguments: Any,
    ) -> History:
        self.operations.append(
            Operation(
                process=len(self.operations) + 1,
                operation=operation,
                arguments=to_jsonable_python(arguments),
                outcome=outcome,  # type: ignore[arg-type]
                value=to_jsonable_python(value),
                error=error,
                invoked_ns=span[0],
                completed_ns=span[1],
                clock=T0,
            )
        )
        return self

    def usages(
        self, amount: int, *outcomes: str, span: tuple[int, int | None] = (10, 20)
    ) -> History:
        for outcome in outcomes:
            refused = ErrorCode.USAGE_EXCEEDS_SLICE if outcome == "fail" else None
            ended = None if outcome == "info" else span[1]
            self.call(
                "record_usage",
                (span[0], ended),
                outcome,
                error=refused,
                session_id="child",
                amount=amount,
            )
        return self

    def read(
        self, span: tuple[int, int], spent: int, oracle: WorkRequestOracle, **changes: Any
    ) -> History:
        view = oracle.get_request("r")
        assert not isinstance(view, ErrorCode)
        value = {**view.model_dump(), "budget_spent": spent, **changes}
        return self.call("get_request", span, value=value, request_id="r")

    def publish(
        self, span: tuple[int, int], ref: str, returned: int | None, **result: Any
    ) -> History:
        fencing = {"request_id": "r", "holder": "a", "generation": 1, "result_ref": ref}
        if returned is None:
            return self.call("publish", span, "fail", **result, **fencing)
        completion = Completion(**{**fencing, "completed_at": T0, "budget_returned": returned})
        return self.call("publish", span, value=completion, **fencing)


def test_eight_usages_of_30_on_100_three_accepted_are_explained_and_charge_90() -> None:
    start = world()
    history = History().usages(30, *["ok"] * 3, *["fail"] * 5).read((30, 31), 90, start)

    verdict = judge_history(history.operations, start)

    assert verdict.ok, verdict.explanation()
    (end,) = verdict.configurations
    assert end.model.remaining_of("child") == 10
    assert start.remaining_of("child") == 100, "the search never changes the state it starts from"


def test_a_check_and_write_not_atomic_overspends_and_breaks_the_slice() -> None:
    start = world()
    history = History().usages(30, *["ok"] * 8).read((30, 31), 240, start)

    kit = judge_history(history.operations, start)
    capped = judge_history(history.operations, world({"WR-2": "capped-usage"}))

    assert not kit.ok and kit.cites == (USAGE_FROM_SLICE,), kit.explanation()
    assert len(kit.placed) == 3, "three usages fit, then no fourth can be accepted"
    assert not capped.ok and capped.cites == ("AC-ARMONIA-WORKREQ-001.13/usage-within-slice",), (
        capped.explanation()
    )


def test_a_lost_update_charges_less_than_was_accepted_under_every_reading() -> None:
    start = world()
    history = History().usages(30, "ok", "ok", "ok").read((30, 31), 30, start)

    verdict = judge_history(history.operations, start)
    capped = judge_history(history.operations, world({"WR-2": "capped-usage"}))

    assert (
        not verdict.ok and "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign" in verdict.cites
    ), verdict.explanation()
    assert not capped.ok and "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign" in capped.cites, (
        capped.explanation()
    )


@pytest.mark.parametrize(("spent", "explained"), [(60, True), (80, True), (70, False), (40, False)])
def test_a_usage_whose_answer_is_unknown_may_or_may_not_have_counted(
    spent: int, explained: bool
) -> None:
    start = world()
    history = History().usages(20, "ok", "ok", "ok", "info").read((30, 31), spent, start)

    assert judge_history(history.operations, start).ok is explained


def test_a_completion_that_gives_back_a_remainder_a_racing_usage_spent_creates_budget() -> None:
    """The completion read what was left (100) before two usages of 30 were charged, and wrote
    it back after: 160 in all came out of a slice of 100. No order explains it."""
    start = world()
    history = (
        History()
        .usages(30, "ok", "ok", span=(10, 20))
        .publish((11, 19), "s3://out", returned=100)
        .read((30, 31), 60, start)
    )

    verdict = judge_history(history.operations, start)

    assert not verdict.ok
    assert "AC-ARMONIA-WORKREQ-001.9/no-budget-created" in verdict.cites, verdict.explanation()
    assert "given back" in verdict.explanation()


def test_usages_before_the_completion_and_one_refused_after_it_are_explained() -> None:
    start = world()
    closed = lease_of("a", 1, closed_at=T0)
    history = (
        History()
        .usages(30, "ok", span=(10, 20))
        .call(
            "record_usage",
            (10, 20),
            "fail",
            error=ErrorCode.ALREADY_COMPLETED,
            session_id="child",
            amount=30,
        )
        .publish((11, 19), "s3://out", returned=70)
        .read((30, 31), 30, start, state="completed", result_ref="s3://out", lease=closed)
    )

    verdict = judge_history(history.operations, start)

    assert verdict.ok, verdict.explanation()
    (end,) = verdict.configurations
    assert end.model.budget("camp").available == 900 + 70  # type: ignore[union-attr]


def test_two_different_completions_of_one_request_close_it_twice() -> None:
    start = world()
    history = (
        History().publish((10, 20), "one", returned=100).publish((10, 20), "two", returned=100)
    )

    verdict = judge_history(history.operations, start)

    assert not verdict.ok and "AC-ARMONIA-WORKREQ-001.6/closes-once" in verdict.cites, (
        verdict.explanation()
    )


def test_an_exact_retry_refused_while_its_completion_ran_is_blamed_on_the_retry_reading() -> None:
    """The retry overlaps the publish it repeats: placed before it, nothing forbids the retry;
    placed after it, only WR-10's kit reading does. It is judged where it was tried last, so
    the search blames the reading (which an alternative allows), never the clause."""
    history = (
        History()
        .publish((12, 20), "x", returned=None, error=ErrorCode.ALREADY_COMPLETED)
        .publish((10, 30), "x", returned=100)
    )

    kit = judge_history(history.operations, world())
    refusing = judge_history(history.operations, world({"WR-10": "retry-refused"}))

    assert not kit.ok and kit.cites == ("WR-10",), kit.explanation()
    assert refusing.ok, refusing.explanation()


def test_a_loser_told_the_lease_is_held_and_one_grant_are_explained_two_grants_are_not() -> None:
    start = world(claimed=False)
    one = (
        History()
        .call("claim", (10, 20), value=lease_of("a", 1), request_id="r", holder="a")
        .call("claim", (10, 20), "fail", error=ErrorCode.LEASE_HELD, request_id="r", holder="b")
    )
    two = (
        History()
        .call("claim", (10, 20), value=lease_of("a", 1), request_id="r", holder="a")
        .call("claim", (10, 20), value=lease_of("b", 2), request_id="r", holder="b")
    )

    assert judge_history(one.operations, start).ok
    verdict = judge_history(two.operations, start)
    assert not verdict.ok and "AC-ARMONIA-WORKREQ-001.7/fenced" in verdict.cites, (
        verdict.explanation()
    )


def test_a_stale_publish_is_explained_by_a_regenerating_heartbeat_only_under_that_reading() -> None:
    renewed = lease_of("a", 2)
    history = (
        History()
        .call("heartbeat", (4, 6), value=renewed, request_id="r", holder="a", generation=1)
        .publish((5, 7), "x", returned=None, error=ErrorCode.STALE_GENERATION)
    )

    kit = judge_history(history.operations, world())
    regenerating = judge_history(history.operations, world({"WR-7": "heartbeat-regenerates"}))

    assert not kit.ok and kit.cites == ("WR-7",), kit.explanation()
    assert regenerating.ok, regenerating.explanation()


def test_a_negative_usage_accepted_creates_budget_under_every_reading() -> None:
    history = History().call("record_usage", (10, 20), session_id="child", amount=-50)

    for readings in ({}, {"WR-24": "zero-usage-accepted"}, {"WR-2": "capped-usage"}):
        verdict = judge_history(history.operations, world(readings))
        assert (
            not verdict.ok and verdict.cites[0] == "AC-ARMONIA-WORKREQ-001.9/no-negative-amount"
        ), (readings, verdict.explanation())


def test_calls_made_one_at_a_time_are_searched_one_at_a_time() -> None:
    start = world()
    history = (
        History()
        .usages(10, "ok", span=(0, 1))
        .usages(10, "ok", span=(2, 3))
        .read((4, 5), 20, start)
    )

    assert [len(stretch) for stretch in stretches(history.operations)] == [1, 1, 1]
    assert judge_history(history.operations, start).tries == 3


def test_a_batch_of_twelve_alike_is_searched_once_per_place_not_once_per_order() -> None:
    """Twelve usages of 10 on a slice of 100, ten accepted: calls alike are interchangeable,
    so the search places them in one order only, a try per call rather than 2^12."""
    start = world()
    history = History().usages(10, *["ok"] * 10, "fail", "fail").read((30, 31), 100, start)

    verdict = judge_history(history.operations, start)

    assert verdict.ok, verdict.explanation()
    assert verdict.tries < 30, verdict.tries


def test_usages_of_different_amounts_are_explained_by_the_one_order_that_fits() -> None:
    """40, 30 and 50 at once on 100, the 50 refused: only orders placing 40 and 30 before it
    explain the refusal; the search finds one, and the model ends with 30 left."""
    start = world()
    history = (
        History().usages(40, "ok").usages(30, "ok").usages(50, "fail").read((30, 31), 70, start)
    )

    verdict = judge_history(history.operations, start)

    assert verdict.ok, verdict.explanation()
    (end,) = verdict.configurations
    assert end.model.remaining_of("child") == 30


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[Callable[[str], HistoryRecorder]]:
    drivers: list[Driver] = []

    def opening(impl: str) -> HistoryRecorder:
        drivers.append(open_driver(impl, None, tmp_path / str(len(drivers))))
        recorded = HistoryRecorder(drivers[-1])
        recorded.set_clock(T0)
        return recorded

    yield opening
    for driver in drivers:
        driver.close()


def empty_model(recorder: HistoryRecorder) -> WorkRequestOracle:
    limits = recorder.driver.describe().work_requests
    assert limits is not None
    return WorkRequestOracle(limits, T0)


@pytest.mark.parametrize(
    "race",
    [
        lambda r: usage_race(r, requests=3, usages=8, amount=30, budget_slice=100),
        lambda r: claim_race(r, requests=3, claimants=6),
        lambda r: publish_race(r, requests=3),
        lambda r: delegation_race(r, budget=50, delegations=8, budget_slice=10, sessions=2),
    ],
    ids=["usages", "claims", "publishes", "delegations"],
)
def test_the_reference_s_race_histories_are_explained_from_an_empty_model(
    recorder: Callable[[str], HistoryRecorder], race: Callable[[HistoryRecorder], object]
) -> None:
    recorded = recorder("reference")
    race(recorded)

    verdict = judge_history(recorded.operations(), empty_model(recorded))

    assert verdict.ok, verdict.explanation()


@pytest.mark.parametrize("mutant", ["usage_checked_then_charged", "usage_written_back"])
def test_a_ledger_checked_on_a_read_is_explained_by_no_order(
    recorder: Callable[[str], HistoryRecorder], mutant: str
) -> None:
    recorded = recorder(f"mutant:{mutant}")
    usage_race(recorded, requests=4, usages=8, amount=30, budget_slice=100)

    verdict = judge_history(recorded.operations(), empty_model(recorded))

    assert not verdict.ok, f"no race showed {mutant}"
    assert set(verdict.cites) <= {
        USAGE_FROM_SLICE,
        "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
        "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
    }, verdict.cites


def test_a_call_that_begins_as_another_ends_may_have_taken_effect_before_it() -> None:
    """Order is real-time order only when one call ended strictly before the other began: a
    refusal of 80 that ended at the very instant two usages began may have come after them,
    when 10 was left; placed before them, it would have had to be accepted."""
    start = world()
    history = (
        History()
        .call(
            "record_usage",
            (0, 10),
            "fail",
            error=ErrorCode.USAGE_EXCEEDS_SLICE,
            session_id="child",
            amount=80,
        )
        .usages(30, "ok", span=(10, 20))
        .usages(60, "ok", span=(10, 20))
    )

    assert [len(stretch) for stretch in stretches(history.operations)] == [3]
    verdict = judge_history(history.operations, start)
    assert verdict.ok, verdict.explanation()


def test_twenty_delegations_that_lose_updates_are_judged_within_the_search_s_bound() -> None:
    """Twenty delegations of 10 from five sessions all accepted on a budget of 100, as a lost
    update lets them be: answered alike but for the ids chosen, they are placed in one order
    per session, so the history no order explains is found so, not given up on."""
    start = WorkRequestOracle(LIMITS, T0)
    maker = WorkRequestOracle(LIMITS, T0)
    for model, budget in ((start, 100), (maker, 1000)):
        model.create_environment("env", ["owner"])
        model.create_campaign("camp", "env", budget)
        for index in range(5):
            model.create_session(f"s{index}", "camp", "owner", Permissions())
    history = History()
    for index in range(20):
        asked = {
            "kind": "spawn",
            "originating_session_id": f"s{index % 5}",
            "deliverable": "a report",
            "acceptance_checks": [],
            "budget_slice": 10,
            "permissions": Permissions(),
            "assignee": None,
        }
        made = maker.delegate(**asked, request_id=f"r{index}", child_session_id=f"c{index}")  # type: ignore[arg-type]
        history.call("delegate", (10, 20), value=made, **asked)

    verdict = judge_history(history.operations, start)

    assert not verdict.ok, "more slices were taken than the budget holds"
    assert verdict.cites == ("AC-ARMONIA-WORKREQ-001.9/no-budget-created",), verdict.explanation()
    assert verdict.tries < MAX_TRIES // 4, verdict.tries


@pytest.mark.parametrize("declares", [False, True], ids=["undeclared", "declared"])
def test_refusals_only_another_reading_explains_are_charged_to_that_reading(
    recorder: Callable[[str], HistoryRecorder], declares: bool
) -> None:
    """A count cap held for the whole campaign refuses delegations that a per-session cap
    accepts: from the kit's reading no order explains them, from WR-18's alternative one does,
    so the race breaks that reading alone, allowed by that alternative, and nothing where the
    implementation declares it."""
    suffix = DECLARING_SUFFIX if declares else ""
    recorded = recorder(f"variant:count_cap_per_campaign{suffix}")
    verdict = delegation_race(recorded, budget=1000, delegations=12, budget_slice=10, sessions=4)

    assert not judge_history(recorded.operations(), empty_model(recorded)).ok
    if declares:
        assert verdict.ok, verdict
    else:
        assert (verdict.broken, verdict.allows) == (("WR-18",), {"WR-18": {"per-campaign"}})


# -- the classes the history checker's rules once judged, judged by the search -----------------


def test_an_acknowledged_result_the_request_does_not_record_is_explained_by_no_order() -> None:
    history = History().publish((10, 20), "s3://acknowledged", 100)
    closed = {"state": "completed", "result_ref": "s3://other", "lease": lease_of("a", 1, T0)}
    history.read((30, 40), 0, world(), **closed)
    verdict = judge_history(history.operations, world())
    assert not verdict.ok
    assert set(verdict.cites) == {
        "AC-ARMONIA-WORKREQ-001.6/records-result",
        "AC-ARMONIA-WORKREQ-001.6/closes-once",
    }


def test_a_delegation_refused_for_budget_the_campaign_has_is_explained_by_no_order() -> None:
    refused = History().call(
        "delegate",
        (10, 20),
        "fail",
        error=ErrorCode.INSUFFICIENT_BUDGET,
        originating_session_id="s",
        kind="spawn",
        deliverable="a report",
        acceptance_checks=[],
        budget_slice=10,
        permissions=Permissions(),
        assignee=None,
    )
    verdict = judge_history(refused.operations, world())
    assert not verdict.ok
    assert "AC-ARMONIA-WORKREQ-001.1/creates-request" in verdict.cites


@pytest.mark.parametrize(("available", "explained"), [(900, True), (950, False)])
def test_a_budget_read_holding_more_than_the_campaign_has_breaks_no_budget_created(
    available: int, explained: bool
) -> None:
    snapshot = BudgetSnapshot(
        campaign_id="camp", total=1000, available=available, reserved=100, spent=0
    )
    read = History().call("budget", (10, 20), value=snapshot, campaign_id="camp")
    verdict = judge_history(read.operations, world())
    assert verdict.ok is explained
    assert verdict.cites == (() if explained else ("AC-ARMONIA-WORKREQ-001.9/no-budget-created",))


@pytest.mark.parametrize(
    ("closed_at", "explained"), [(T0, True), (None, False), (T0 + timedelta(hours=5), False)]
)
def test_a_completed_request_s_lease_reads_closed_at_the_completion_s_instant(
    closed_at: datetime | None, explained: bool
) -> None:
    """Closed once, when the completion was recorded: a lease left open, or closed at another
    instant, is a second close or none."""
    history = History().publish((10, 20), "s3://report", 100)
    closed = {"state": "completed", "result_ref": "s3://report"}
    history.read((30, 40), 0, world(), **closed, lease=lease_of("a", 1, closed_at))
    verdict = judge_history(history.operations, world())
    assert verdict.ok is explained
    assert verdict.cites == (() if explained else ("AC-ARMONIA-WORKREQ-001.6/closes-once",))


# -- the arithmetic bounds the Gherkin's race steps keep beside the search -----------------------


def nested_made(budget_slice: int) -> tuple[dict[str, Any], Any]:
    """A delegation from the child of "r" and the request an implementation answers it with."""
    asked = {
        "kind": "spawn",
        "originating_session_id": "child",
        "deliverable": "a part",
        "acceptance_checks": [],
        "budget_slice": budget_slice,
        "permissions": Permissions(),
        "assignee": None,
    }
    made = world().delegate(**asked, request_id="n", child_session_id="nc")  # type: ignore[arg-type]
    return asked, made


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spent=st.integers(0, 100),
    amount=st.integers(1, 60),
    outcomes=st.lists(st.sampled_from(["ok", "fail"]), min_size=1, max_size=5),
    misread=st.integers(-40, 60),
    returned=st.none() | st.integers(0, 120),
    carved=st.none() | st.integers(1, 60),
)
def test_the_search_explains_no_history_that_breaks_a_bound_the_race_steps_keep(
    spent: int,
    amount: int,
    outcomes: list[str],
    misread: int,
    returned: int | None,
    carved: int | None,
) -> None:
    """Usages of one slice made at once, with the holder's publish or the child's own delegation
    among them, between two reads of the request, answered and read back any way at all: where
    a bound that a race step of the Gherkin checks by arithmetic after the search breaks, the
    search has found no order either. The bounds: at most what was left, over the amount, of
    the usages accepted (as WR-2 reads it); never more spent than the slice; what was charged
    and what the completion gave back within what was left; what was spent and carved within
    the slice (as WR-1 reads it)."""
    start = world()
    if spent:
        start.record_usage("child", spent)
    room, accepted = 100 - spent, outcomes.count("ok")
    after = max(0, spent + accepted * amount + misread)
    history = History().read((0, 1), spent, start).usages(amount, *outcomes)
    closed: dict[str, Any] = {}
    if returned is not None:
        history.publish((10, 20), "s3://report", returned)
        closed = {"state": "completed", "result_ref": "s3://report", "lease": lease_of("a", 1, T0)}
    if carved is not None:
        asked, made = nested_made(carved)
        history.call("delegate", (10, 20), value=made, **asked)
    history.read((30, 31), after, start, **closed)
    bounds = {
        "usages accepted within what was left": accepted <= room // amount,
        "spent within the slice": after <= 100,
        "spent or given back, never both": after - spent + (returned or 0) <= room,
        "spent and carved within the slice": after + (carved or 0) <= 100,
    }
    broken = [bound for bound, held in bounds.items() if not held]

    verdict = judge_history(history.operations, start)

    assert not (verdict.ok and broken), f"the search explains a history that breaks {broken}"


# -- which readings explain a history: one question read otherwise, or two at once --------------


def built(readings: dict[str, str]) -> tuple[History, WorkRequestOracle]:
    """The world of `world()` (unclaimed) built through calls, as a recorded history begins,
    and the model an implementation following `readings` holds once it is built."""
    maker = WorkRequestOracle(LIMITS, T0, readings)
    history = History()
    history.call("create_environment", (0, 1), environment_id="env", members=["owner"])
    history.call("create_campaign", (2, 3), campaign_id="camp", environment_id="env", budget=1000)
    root = {"campaign_id": "camp", "principal": "owner", "permissions": Permissions()}
    history.call("create_session", (4, 5), session_id="s", **root)
    maker.create_environment("env", ["owner"])
    maker.create_campaign("camp", "env", 1000)
    maker.create_session("s", "camp", "owner", Permissions())
    asked = {**nested_made(100)[0], "originating_session_id": "s", "deliverable": "a report"}
    made = maker.delegate(**asked, request_id="r", child_session_id="child")  # type: ignore[arg-type]
    history.call("delegate", (6, 7), value=made, **asked)
    return history, maker


def carving_and_spending(readings: dict[str, str], usages: int) -> list[Operation]:
    """A nested slice of 20 and usages of 30 made at once on a slice of 100, all accepted, and
    the request and its campaign read back as an implementation following `readings` has them
    when the slice was carved first."""
    history, maker = built(readings)
    asked, _ = nested_made(20)
    made = maker.delegate(**asked, request_id="n", child_session_id="nc")  # type: ignore[arg-type]
    history.call("delegate", (10, 20), value=made, **asked)
    for _ in range(usages):
        maker.record_usage("child", 30)
    history.usages(30, *["ok"] * usages)
    view = maker.get_request("r")
    history.call("get_request", (30, 31), value=view, request_id="r")
    history.call("budget", (30, 31), value=maker.budget("camp"), campaign_id="camp")
    return history.operations


class Recorded:
    """A history as `search_history` reads it from a recorder, of an implementation that
    declares `readings` (none unless given)."""

    def __init__(self, operations: list[Operation], readings: dict[str, str] | None = None) -> None:
        self._operations, self.driver, self._readings = operations, self, readings or {}

    def operations(self) -> list[Operation]:
        return self._operations

    def describe(self) -> Description:
        return Description(
            name="hand",
            version="1",
            capabilities=[],
            work_requests=LIMITS,
            readings=self._readings,
        )


@pytest.mark.parametrize(
    ("readings", "usages", "broken"),
    [
        ({}, 2, ()),
        ({"WR-2": "capped-usage"}, 4, ("WR-2",)),
        ({"WR-1": "from-campaign"}, 3, ("WR-1",)),
        ({"WR-1": "from-campaign", "WR-2": "capped-usage"}, 4, ("WR-1", "WR-2")),
    ],
    ids=["kit-s-reading", "capped", "from-campaign", "both-at-once"],
)
def test_a_history_only_other_readings_explain_breaks_those_readings_one_or_two_at_once(
    readings: dict[str, str], usages: int, broken: tuple[str, ...]
) -> None:
    """Explained by the kit's readings, a race breaks nothing; explained only where one
    question, or two together, are read otherwise, it breaks those readings alone, and the
    alternatives that explain it allow its answers."""
    history = carving_and_spending(readings, usages)

    verdict = search_history(cast(HistoryRecorder, Recorded(history)))

    assert verdict.broken == broken, verdict
    assert verdict.allows == ({question: {readings[question]} for question in broken} or None)


def unexplained_nested_slice() -> list[Operation]:
    """A nested slice of 20 and four usages of 30 all accepted on a slice of 100, which reads
    spent in full while the campaign paid nothing for the nested slice."""
    history, maker = built({})
    asked, made = nested_made(20)
    history.call("delegate", (10, 20), value=made, **asked)
    history.usages(30, "ok", "ok", "ok", "ok")
    history.read((30, 31), 100, maker)
    unpaid = BudgetSnapshot(campaign_id="camp", total=1000, available=900, reserved=0, spent=100)
    history.call("budget", (30, 31), value=unpaid, campaign_id="camp")
    return history.operations


def test_a_history_no_reading_explains_breaks_a_clause_whichever_call_the_search_stopped_at() -> (
    None
):
    """A nested slice of 20 and four usages of 30 all accepted on a slice of 100, which reads
    spent in full while the campaign paid nothing for the nested slice: no reading, nor two,
    explains that. The search stops at a usage whose refusal only WR-2 names; the race breaks no
    reading but the clauses its step judges."""
    verdict = search_history(cast(HistoryRecorder, Recorded(unexplained_nested_slice())))

    assert not verdict.ok
    assert (verdict.broken, verdict.allows, verdict.observed) == ((), None, None), verdict
    with pytest.raises(ClauseViolation) as raised:
        verdict.expect_explained("AC-ARMONIA-WORKREQ-001.9/no-budget-created")
    assert raised.value.cites == ("AC-ARMONIA-WORKREQ-001.9/no-budget-created",)


def test_a_history_the_kit_s_reading_explains_breaks_only_the_reading_declared_otherwise() -> None:
    """Declared as capping usage at the slice (WR-2), an implementation that refuses the usage
    beyond what is left instead, as the kit reads it: the search from the declared reading finds
    no order, the kit's own reading explains the race, so it breaks WR-2's reading alone."""
    history, maker = built({})
    asked, _ = nested_made(20)
    made = maker.delegate(**asked, request_id="n", child_session_id="nc")  # type: ignore[arg-type]
    history.call("delegate", (10, 20), value=made, **asked)
    maker.record_usage("child", 30)
    maker.record_usage("child", 30)
    history.usages(30, "ok", "ok", "fail")
    history.call("get_request", (30, 31), value=maker.get_request("r"), request_id="r")

    declared = {"WR-2": "capped-usage"}
    verdict = search_history(cast(HistoryRecorder, Recorded(history.operations, declared)))

    assert (verdict.broken, verdict.allows) == (("WR-2",), {"WR-2": {"kit"}}), verdict


def staggered_campaign_capped_delegations(seed: int) -> list[Operation]:
    """Twenty delegations of 10 from five sessions on a budget of 100, each begun and ended at
    its own instant, answered by an implementation that caps children per campaign (WR-18's
    alternative), each taking effect at a point within its span."""
    shuffled = random.Random(seed)
    spans = []
    for _ in range(20):
        begun = shuffled.randint(0, 200)
        ended = begun + shuffled.randint(5, 150)
        spans.append((begun, ended, shuffled.uniform(begun, ended)))
    maker = campaign_world({"WR-18": "per-campaign"})
    history = History()
    for index in sorted(range(20), key=lambda index: spans[index][2]):
        session, span = f"s{index % 5}", spans[index][:2]
        asked: dict[str, Any] = {
            "kind": "spawn",
            "originating_session_id": session,
            "deliverable": "a report",
            "acceptance_checks": [],
            "budget_slice": 10,
            "permissions": Permissions(),
            "assignee": None,
        }
        refusals = maker.delegation_refusals(
            session,
            deliverable="a report",
            budget_slice=10,
            permissions=Permissions(),
            assignee=None,
        )
        if refusals:
            history.call("delegate", span, "fail", error=ErrorCode(sorted(refusals)[0]), **asked)
        else:
            made = maker.delegate(**asked, request_id=f"r{index}", child_session_id=f"c{index}")
            history.call("delegate", span, value=made, **asked)
    return history.operations


def campaign_world(readings: dict[str, str]) -> WorkRequestOracle:
    model = WorkRequestOracle(LIMITS, T0, readings)
    model.create_environment("env", ["owner"])
    model.create_campaign("camp", "env", 100)
    for index in range(5):
        model.create_session(f"s{index}", "camp", "owner", Permissions())
    return model


@pytest.mark.parametrize("seed", [3, 33])
def test_staggered_refused_delegations_stay_far_within_the_search_s_bound(seed: int) -> None:
    """Refusals under a campaign-wide cap, made at staggered instants, are each placed where
    they are first explained (no reading lets them keep a slot): the search explains the race
    in a few hundred tries, where it took tens of thousands and could give up."""
    history = staggered_campaign_capped_delegations(seed)

    verdict = judge_history(history, campaign_world({"WR-18": "per-campaign"}))

    assert verdict.ok, verdict.explanation()
    assert verdict.tries < 2_000, verdict.tries
    assert not judge_history(history, campaign_world({})).ok


def test_a_history_too_wide_to_search_leaves_the_race_undecided_never_broken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the search from the readings declared, or from an alternative the implementation
    may follow, grows past its bound, the race judges nothing: no clause broken, no reading, and
    a step that would judge it anyway is the kit's defect."""
    history = unexplained_nested_slice()
    monkeypatch.setattr(linearizable, "MAX_TRIES", 0)
    from_declared = search_history(cast(HistoryRecorder, Recorded(history)))
    monkeypatch.undo()

    def too_wide_unless_kit(operations: list[Operation], start: WorkRequestOracle) -> Any:
        if start.readings:
            raise linearizable.HistoryTooWide("searched by hand")
        return judge_history(operations, start)

    monkeypatch.setattr(races, "judge_history", too_wide_unless_kit)
    from_alternative = search_history(cast(HistoryRecorder, Recorded(history)))

    for verdict, where in ((from_declared, "declared"), (from_alternative, "may follow")):
        assert verdict.undecided is not None and where in verdict.undecided, verdict
        assert not verdict.ok
        assert (verdict.broken, verdict.observed, verdict.allows) == ((), None, None)
        with pytest.raises(ScenarioError, match="undecided"):
            verdict.expect_explained("AC-ARMONIA-WORKREQ-001.9/no-budget-created")


def test_a_step_leaves_an_undecided_race_not_applicable_with_the_reason() -> None:
    """The race steps hand an undecided verdict to pytest as not applicable, its reason said,
    so the clauses it would judge stay unexercised by the scenario."""
    from conformance.applicability import NOT_APPLICABLE_PREFIX
    from conformance.steps.concurrency import decided

    undecided = races.too_wide([], Counter(), "from the readings declared")
    with pytest.raises(pytest.skip.Exception) as skipped:
        decided(undecided)
    assert skipped.value.msg == f"{NOT_APPLICABLE_PREFIX}{undecided.undecided}"
    decided(races.RaceVerdict(()))
