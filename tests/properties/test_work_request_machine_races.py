"""The work-request machine's races, driven step by step: usages made at once are judged by the
linearizability search over the model, and the model takes the state the batch left.

Against the reference, eight usages of 30 on a slice of 100 charge 90 and the model follows;
against a ledger checked on a read and then written, some batch of twelve breaks 001.13 (a race
decides which): no order explains more accepted than fits, under the kit's reading of WR-2 or
its capped alternative.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import mutants
from conformance.driver import DelegationKind, Permissions
from conformance.properties.hostile_data import ROOT_SESSIONS
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.properties.work_request_terms import Delegation
from conformance.spec.clause_check import ClauseViolation
from tests.scripted_machine import REFERENCE, Machines, Scripted

SLICES = 4
"""Slices of 100 each root delegates (its count cap allows as many): twelve batches in all."""


@pytest.fixture
def machine_on(tmp_path: Path) -> Iterator[Any]:
    machines = Machines(tmp_path)

    def opening(alteration: Any) -> WorkRequestMachine:
        budget = 100 * SLICES
        machine = machines.open(
            alteration, {}, budget=budget, annex_budget=budget, side_budget=budget
        )
        for root in ROOT_SESSIONS:
            for _ in range(SLICES):
                made = Delegation(DelegationKind.SPAWN, root, "seed", (), 100, Permissions(), None)
                assert machine.try_delegation(made) is not None
        return machine

    yield opening
    machines.close()


def race_on(machine: WorkRequestMachine, request: str) -> None:
    """Eight usages of 30 at once, judged as a rule's step is: where only a reading's check
    fails, judged again under its alternatives."""
    machine.judged(WorkRequestMachine.race_usage, {"request": request, "data": Scripted([30, 8])})


def test_usages_made_at_once_charge_what_fits_and_the_model_takes_it(machine_on: Any) -> None:
    machine = machine_on(REFERENCE)
    assert machine.concurrent
    for request in machine.request_ids:
        race_on(machine, request)
        assert machine.predicted(request).budget_spent == 90
    machine.keep_invariants()


@pytest.mark.parametrize("mutant", ["usage_checked_then_charged", "usage_written_back"])
def test_a_ledger_checked_on_a_read_is_caught_by_its_own_criterion(
    machine_on: Any, mutant: str
) -> None:
    """The machine notes the break and goes on (the model takes what the implementation reads),
    so the program fails at its end: on 001.13, and on 001.9, whose clause the campaign's own
    figures then break too (its children spent more than it had)."""
    machine = machine_on(mutants.MUTANTS[mutant])
    for request in machine.request_ids:
        race_on(machine, request)
    with pytest.raises(ClauseViolation) as caught:
        machine.teardown()
    clauses = {cite.split("/")[0] for cite in caught.value.cites if "/" in cite}
    assert clauses == {"AC-ARMONIA-WORKREQ-001.13", "AC-ARMONIA-WORKREQ-001.9"}, caught.value.cites
    assert not caught.value.interpretations_only
