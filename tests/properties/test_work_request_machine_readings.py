"""The work-request machine follows a reading it recognises and goes on checking everything else.

Driven step by step (no search), so that each program is the one written here: a variant that
reads WR-24 otherwise diverges on that reading alone, its declaring twin passes, and a mutant
combined with the same variant is still caught by its own criterion after the divergence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance import mutants, variants
from conformance.driver import DelegationKind, Permissions
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.spec.clause_check import ClauseViolation
from conformance.variants.variant import Variant
from tests.scripted_machine import Machines, Scripted

ZERO_USAGE = variants.VARIANTS["zero_usage_accepted"]


@pytest.fixture
def machine_on(tmp_path: Path) -> Iterator[Any]:
    machines = Machines(tmp_path)

    def opening(alteration: Variant) -> WorkRequestMachine:
        declared = dict(alteration.readings) if alteration.declares_readings else {}
        return machines.open(alteration, declared, budget=100, annex_budget=10)

    yield opening
    machines.close()


def zero_usage_then_delegation(machine: WorkRequestMachine) -> None:
    machine.record_usage(amount=0, data=Scripted(["root-alice"]))
    machine.delegate(
        kind=DelegationKind.SPAWN,
        deliverable="review",
        checks=[],
        data=Scripted(["root-alice", 10, Permissions(tools=frozenset({"shell"})), None]),
    )


def test_an_undeclared_reading_is_recognised_and_followed(machine_on: Any) -> None:
    machine = machine_on(ZERO_USAGE)
    zero_usage_then_delegation(machine)
    assert WorkRequestMachine.divergences == {"WR-24": {"zero-usage-accepted"}}
    assert machine.oracle.reads("WR-24", "zero-usage-accepted")
    assert len(machine.request_ids) == 1, "the delegation after the divergence was judged"


def test_a_declared_reading_is_judged_by_and_is_no_divergence(machine_on: Any) -> None:
    machine = machine_on(ZERO_USAGE.declaring())
    zero_usage_then_delegation(machine)
    assert WorkRequestMachine.divergences == {}


def test_a_mutant_behind_a_followed_divergence_is_still_caught_by_its_own_criterion(
    machine_on: Any,
) -> None:
    mutant = mutants.MUTANTS["slice_not_deducted"]
    combined = replace(
        ZERO_USAGE,
        name="zero_usage_accepted+slice_not_deducted",
        patches=lambda: [*ZERO_USAGE.patches(), *mutant.patches()],
    )
    machine = machine_on(combined)
    with pytest.raises(ClauseViolation) as caught:
        zero_usage_then_delegation(machine)
    assert WorkRequestMachine.divergences == {"WR-24": {"zero-usage-accepted"}}
    assert {cite.split("/")[0] for cite in caught.value.cites} == {mutant.criterion}
