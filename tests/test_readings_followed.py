"""The work-request machine follows a reading it recognises and goes on checking everything else.

Driven step by step (no search), so that each program is the one written here: a variant that
reads WR-13 otherwise diverges on that reading alone, its declaring twin passes, and a mutant
combined with the same variant is still caught by its own criterion after the divergence.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from conformance import mutants, variants
from conformance.adapters.patched import open_patched
from conformance.driver import DelegationKind, Driver, Permissions
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.spec.clause_check import ClauseViolation
from conformance.variants.variant import Variant

ZERO_USAGE = variants.VARIANTS["zero_usage_accepted"]


@dataclass
class Scripted:
    """Draws answered from a script, whatever the strategy: the program is the test's."""

    values: list[Any]

    def draw(self, strategy: object, label: str | None = None) -> Any:
        return self.values.pop(0)


@dataclass(frozen=True)
class Opening:
    """What the machine opens its driver from: one alteration of the reference."""

    alteration: Variant
    scratch: Path

    @contextmanager
    def fresh(self) -> Iterator[Driver]:
        driver = open_patched(self.alteration, None, self.scratch)
        try:
            yield driver
        finally:
            driver.close()


@pytest.fixture
def machine_on(tmp_path: Path) -> Iterator[Any]:
    opened: list[WorkRequestMachine] = []

    def opening(alteration: Variant) -> WorkRequestMachine:
        WorkRequestMachine.drivers = Opening(alteration, tmp_path)  # type: ignore[assignment]
        WorkRequestMachine.declared = (
            dict(alteration.readings) if alteration.declares_readings else {}
        )
        WorkRequestMachine.divergences = {}
        machine = WorkRequestMachine()
        machine.setup(budget=100, annex_budget=10, seeds=[], data=Scripted([False]))
        opened.append(machine)
        return machine

    yield opening
    for machine in opened:
        machine.teardown()


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
    assert WorkRequestMachine.divergences == {"WR-13": {"zero-usage-accepted"}}
    assert machine.oracle.reads("WR-13", "zero-usage-accepted")
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
    assert WorkRequestMachine.divergences == {"WR-13": {"zero-usage-accepted"}}
    assert {cite.split("/")[0] for cite in caught.value.cites} == {mutant.criterion}
