"""The work-request machine goes on past a break, and fails with all of them at the end.

A break of what the implementation reads back (a request's fields, its lease, a campaign's
figures), a refusal where the model accepts, and an acceptance where the model refuses are each
noted with their clauses; the model adopts what the implementation reads
and the program goes on, so one wrong field never hides a budget leak behind it. Driven step by
step (no search), on the reference with two defects at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from functools import partial
from pathlib import Path

import pytest
from hypothesis.stateful import INITIALIZE_RULE_MARKER, RULE_MARKER

from conformance import mutants
from conformance.driver import (
    BudgetSnapshot,
    DelegationKind,
    Permissions,
    RequestState,
    WorkRequest,
)
from conformance.properties.following import OffTheTape
from conformance.properties.surprises import Surprises
from conformance.properties.work_request_judging import nothing_from
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.properties.work_request_terms import MICRO
from conformance.spec.clause_check import ClauseViolation, expect, violated
from conformance.variants.variant import Variant
from tests.oracle.test_oracles import T0, delegate, workspace
from tests.scripted_machine import REFERENCE, Machines, Scripted

FIELD_LOST = mutants.MUTANTS["acceptance_checks_not_stored"]
OVERSPENT = mutants.MUTANTS["usage_unbounded"]
NEGATIVE_RESERVE = "AC-ARMONIA-WORKREQ-001.9"
"""Where OVERSPENT's child spends 15 of a slice of 10, its campaign then reads a reserve of -5: a
negative budget part, a break of 001.9's clause that the overspending truly makes."""
UNFENCED = mutants.MUTANTS["lease_without_fence"]


def both(first: Variant, second: Variant) -> Variant:
    return replace(
        REFERENCE,
        name=f"{first.name}+{second.name}",
        patches=lambda: [*first.patches(), *second.patches()],
    )


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    opened = Machines(tmp_path)
    yield opened
    opened.close()


def delegated(machine: WorkRequestMachine, budget_slice: int) -> str:
    """A spawn from root-alice with acceptance checks; the child session it made."""
    machine.delegate(
        kind=DelegationKind.SPAWN,
        deliverable="review",
        checks=["tests pass"],
        data=Scripted(["root-alice", budget_slice, Permissions(tools=frozenset({"shell"})), None]),
    )
    (child,) = machine.request_of
    return child


def criteria(violation: ClauseViolation) -> set[str]:
    return {cite.split("/")[0] for cite in violation.cites}


def test_a_field_break_is_noted_and_the_program_goes_on_to_the_next_break(
    machines: Machines,
) -> None:
    machine = machines.open(both(FIELD_LOST, OVERSPENT), {}, budget=100, annex_budget=10)
    child = delegated(machine, 10)
    assert {c.split("/")[0] for c in machine.surprises.first} == {FIELD_LOST.criterion}
    assert len(machine.request_ids) == 1, "the model adopted the request and went on"
    machine.record_usage(amount=15, data=Scripted([child]))
    with pytest.raises(ClauseViolation) as ended:
        machine.teardown()
    assert criteria(ended.value) == {FIELD_LOST.criterion, OVERSPENT.criterion, NEGATIVE_RESERVE}
    assert "4 distinct breaks" in ended.value.detail  # two of 001.13: drawn, and within the slice


def test_breaks_noted_on_the_way_fail_the_program_at_its_end(machines: Machines) -> None:
    machine = machines.open(FIELD_LOST, {}, budget=100, annex_budget=10)
    child = delegated(machine, 10)
    machine.record_usage(amount=4, data=Scripted([child]))
    with pytest.raises(ClauseViolation) as ended:
        machine.teardown()
    assert criteria(ended.value) == {FIELD_LOST.criterion}


def test_on_the_reference_nothing_is_noted(machines: Machines) -> None:
    machine = machines.open(REFERENCE, {}, budget=100, annex_budget=10)
    child = delegated(machine, 10)
    machine.record_usage(amount=4, data=Scripted([child]))
    assert not machine.surprises.first
    machine.teardown()


def test_the_model_adopts_a_request_and_a_campaign_as_the_implementation_reads_them() -> None:
    """r1 (slice 10) read back with 6 spent under a lease the model never granted, completed,
    and a campaign showing 3 less available: the model predicts those reads from then on."""
    oracle = workspace()
    view = delegate(oracle, "root", "r1", 10)
    lease = view.lease.model_copy(update={"holder": "bob", "generation": 4, "closed_at": T0})
    read = view.model_copy(
        update={
            "budget_spent": 6,
            "lease": lease,
            "state": RequestState.COMPLETED,
            "result_ref": "s3://results/a",
        }
    )
    oracle.adopt_request(read)
    adopted = oracle.get_request("r1")
    assert isinstance(adopted, WorkRequest)
    assert (adopted.budget_spent, adopted.lease.holder, adopted.lease.generation) == (6, "bob", 4)
    assert (adopted.state, adopted.result_ref) == (RequestState.COMPLETED, "s3://results/a")
    budget = oracle.budget("c")
    assert isinstance(budget, BudgetSnapshot)
    shown = budget.model_copy(update={"available": budget.available - 3, "spent": budget.spent + 1})
    oracle.adopt_budget(shown)
    assert oracle.budget("c") == shown


def test_a_wrong_refusal_is_noted_and_the_program_goes_on_to_the_next_break(
    machines: Machines,
) -> None:
    """Refused where the model accepts, nothing happened on either side: the program goes on."""
    unclaimable = mutants.MUTANTS["expired_lease_not_reclaimable"]
    machine = machines.open(both(unclaimable, OVERSPENT), {}, budget=100, annex_budget=10)
    child = delegated(machine, 10)
    (request,) = machine.request_ids
    machine.claim(request=request, data=Scripted(["bob"]))
    machine.advance_clock(data=Scripted([timedelta(hours=2), False, 0, MICRO]))
    machine.claim(request=request, data=Scripted(["carol"]))
    assert {c.split("/")[0] for c in machine.surprises.first} == {unclaimable.criterion}
    machine.record_usage(amount=15, data=Scripted([child]))
    with pytest.raises(ClauseViolation) as ended:
        machine.teardown()
    assert criteria(ended.value) == {unclaimable.criterion, OVERSPENT.criterion, NEGATIVE_RESERVE}


def test_an_acceptance_the_model_refuses_is_noted_adopted_and_the_program_goes_on(
    machines: Machines,
) -> None:
    """Usage beyond the slice accepted (under every reading of WR-2), then a publish by someone
    other than the holder accepted: each is noted under its own criterion, the model takes what the
    implementation reads after each (the spending, the completion), and nothing else is blamed
    on them but what the reads themselves break."""
    machine = machines.open(both(OVERSPENT, UNFENCED), {}, budget=100, annex_budget=10)
    child = delegated(machine, 10)
    (request,) = machine.request_ids
    machine.record_usage(amount=15, data=Scripted([child]))
    assert {c.split("/")[0] for c in machine.surprises.first} == {
        OVERSPENT.criterion,
        NEGATIVE_RESERVE,
    }
    assert machine.predicted(request).budget_spent == 15, "the model took the spending read"
    assert "record usage of 15" in machine.scenario.text(), "the step stays in the program"
    machine.claim(request=request, data=Scripted(["bob"]))
    machine.publish_current(request=request, forgery="by another principal", result_ref="s3://r")
    assert request in machine.completions, "the model took the completion read"
    machine.list_requests(environment="studio", principal="alice")
    with pytest.raises(ClauseViolation) as ended:
        machine.teardown()
    assert criteria(ended.value) == {OVERSPENT.criterion, NEGATIVE_RESERVE, UNFENCED.criterion}


def test_a_delegation_accepted_against_the_model_is_recorded_as_made_and_the_program_goes_on(
    machines: Machines,
) -> None:
    """A slice of 40 from a campaign of 30, accepted: noted on 001.9, the request recorded as
    made (its slice drawn as an accepted one's is), the campaign's figures taken as read; its
    child then works under the request as the model now holds it."""
    overdrawn = mutants.MUTANTS["overdraw_allowed"]
    machine = machines.open(overdrawn, {}, budget=30, annex_budget=10)
    child = delegated(machine, 40)
    assert {c.split("/")[0] for c in machine.surprises.first} == {overdrawn.criterion}
    (request,) = machine.request_ids
    assert machine.predicted(request).budget_slice == 40
    machine.record_usage(amount=5, data=Scripted([child]))
    machine.claim(request=request, data=Scripted(["bob"]))
    assert machine.predicted(request).budget_spent == 5
    with pytest.raises(ClauseViolation) as ended:
        machine.teardown()
    assert criteria(ended.value) == {overdrawn.criterion}


def test_a_break_met_while_a_step_is_judged_again_fails_that_reading_and_is_not_noted(
    machines: Machines,
) -> None:
    """Judged again under another reading, a step whose reads break a clause is not explained
    by that reading: the break fails the try (see `follow`), never noted to go on past."""
    machine = machines.open(REFERENCE, {}, budget=100, annex_budget=10)
    broken = partial(expect, False, "AC-ARMONIA-WORKREQ-001.9/no-budget-created", "budget created")
    machine.judging_again = True
    with pytest.raises(ClauseViolation):
        machine.going_on("a step judged again", broken)
    assert not machine.surprises.first
    machine.judging_again = False
    machine.going_on("the step", broken)
    assert set(machine.surprises.first) == {"AC-ARMONIA-WORKREQ-001.9/no-budget-created"}
    machine.surprises = Surprises()


def test_a_break_noted_in_a_step_no_reading_explains_is_kept_when_the_search_gives_up(
    machines: Machines,
) -> None:
    """The search for a reading restores the state from before the step, notes and all; where
    it gives up, the first pass's notes still fail the program."""
    machine = machines.open(REFERENCE, {}, budget=100, annex_budget=10)

    def step(judged: WorkRequestMachine) -> None:
        if judged.judging_again:
            raise OffTheTape("judged again, the step goes where its first run did not")
        judged.going_on(
            "the step",
            partial(expect, False, "AC-ARMONIA-WORKREQ-001.9/no-budget-created", "budget created"),
        )
        raise violated("WR-24", "usage of 0 refused")

    with pytest.raises(ClauseViolation) as stopped:
        machine.judged(step, {})
    assert "AC-ARMONIA-WORKREQ-001.9/no-budget-created" in stopped.value.cites


def test_a_campaign_adopted_after_a_break_is_judged_exactly_again_once_the_model_agrees(
    machines: Machines,
) -> None:
    machine = machines.open(REFERENCE, {}, budget=100, annex_budget=10)
    machine.adopted_budgets.add("camp")
    machine.check_budget("camp")
    assert "camp" not in machine.adopted_budgets


def test_a_step_gone_past_gives_hypothesis_what_its_rule_expects() -> None:
    """`nothing_from` reads a step's declared return: a rule that feeds a bundle declares a
    value (and gets nothing to add), any other declares None (and gets None), so going on past
    a step never trips Hypothesis' check of what a rule returns."""
    rules = [
        marked
        for _, attribute in inspect.getmembers(WorkRequestMachine)
        for marker in (RULE_MARKER, INITIALIZE_RULE_MARKER)
        if (marked := getattr(attribute, marker, None)) is not None
    ]
    assert len(rules) > 10
    for rule in rules:
        step = inspect.unwrap(rule.function)
        assert (nothing_from(step) is None) != bool(rule.targets), step.__name__
