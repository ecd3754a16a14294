"""The work-request machine's budget bounds beyond conservation: the reading-free reserve bound
(001.13), a campaign reserving no more than its open requests' slices hold unspent, and each
lineage within its slice as WR-1 reads it."""

from __future__ import annotations

import pytest

from conformance.driver import BudgetSnapshot, WorkRequest
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.spec.clause_check import ClauseViolation
from tests.oracle.test_oracles import complete, delegate, workspace

check = WorkRequestMachine.check_reserve_against_open_slices


def views_and_budget() -> tuple[list[WorkRequest], BudgetSnapshot]:
    """r1 (slice 10) open and r2 (slice 5) completed, unspent: 10 may stay reserved."""
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    delegate(oracle, "root", "r2", 5)
    complete(oracle, "r2", "bob", oracle.claim("r2", "bob").generation)
    views = [view for r in ("r1", "r2") if isinstance(view := oracle.get_request(r), WorkRequest)]
    budget = oracle.budget("c")
    assert len(views) == 2 and isinstance(budget, BudgetSnapshot)
    return views, budget


def test_a_reserve_the_open_slices_hold_passes() -> None:
    views, budget = views_and_budget()
    assert budget.reserved == 10
    check(budget, views)


def test_a_reserve_beyond_the_open_slices_fails_001_13() -> None:
    """One more than r1's unspent slice: a remainder went where no slice of it came from (the
    completed r2's slice no longer counts)."""
    views, budget = views_and_budget()
    beyond = budget.model_copy(update={"reserved": 11, "available": budget.available - 1})
    with pytest.raises(ClauseViolation) as raised:
        check(beyond, views)
    assert raised.value.cites == ("AC-ARMONIA-WORKREQ-001.13/usage-within-slice",)
    assert "reserves 11, more than its open requests' slices hold unspent (10)" in str(raised.value)


def lineage() -> list[WorkRequest]:
    """r1 (slice 10), whose child spent 4 and carved 6 for r2: its slice, exactly."""
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    delegate(oracle, "r1-session", "r2", 6)
    oracle.record_usage("r1-session", 4)
    views = [view for r in ("r1", "r2") if isinstance(view := oracle.get_request(r), WorkRequest)]
    assert len(views) == 2
    return views


def test_a_lineage_that_spent_and_carved_its_whole_slice_passes() -> None:
    WorkRequestMachine.check_lineages(lineage())


def test_a_lineage_that_spent_and_carved_beyond_its_slice_breaks_wr_1() -> None:
    """One more spent than r1's slice leaves once r2's slice is carved out of it: as WR-1 reads
    it, the lineage holds budget nobody gave it (read as from-campaign, r2's slice is the
    campaign's, so the check rests on the reading alone)."""
    r1, r2 = lineage()
    with pytest.raises(ClauseViolation) as raised:
        WorkRequestMachine.check_lineages([r1.model_copy(update={"budget_spent": 5}), r2])
    assert raised.value.cites == ("WR-1",)
    assert "r1 spent 5 and its child's requests hold 6 of its slice of 10" in str(raised.value)


def test_a_completed_child_holds_only_what_it_used_of_its_parent_s_slice() -> None:
    """r2 completed having spent 1 of its 6: the 5 it gave back are r1's to spend again, so r1
    spending 9 in all is within its slice."""
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    delegate(oracle, "r1-session", "r2", 6)
    oracle.record_usage("r2-session", 1)
    complete(oracle, "r2", "bob", oracle.claim("r2", "bob").generation)
    oracle.record_usage("r1-session", 9)
    views = [view for r in ("r1", "r2") if isinstance(view := oracle.get_request(r), WorkRequest)]
    WorkRequestMachine.check_lineages(views)
