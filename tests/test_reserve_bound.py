"""The work-request machine's reading-free reserve bound (001.13): a campaign reserves no more
than its open requests' slices hold unspent, whatever reading the implementation takes."""

from __future__ import annotations

import pytest

from conformance.driver import BudgetSnapshot, WorkRequest
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.spec.clause_check import ClauseViolation
from tests.test_oracles import complete, delegate, workspace

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
