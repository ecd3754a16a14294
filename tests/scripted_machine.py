"""The work-request machine driven step by step, for tests whose program is their own.

Hypothesis draws nothing here: each `data` a rule takes answers from a script, and the machine
opens its driver from one alteration of the reference (a mutant, a variant, or none).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.adapters.patched import Capability, open_patched
from conformance.driver import Driver
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.variants.variant import Variant

REFERENCE = Variant("reference", Capability.WORK_REQUESTS, "the reference itself", lambda: [])
"""The reference as an alteration of itself: the machine opened on it unchanged."""


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


@dataclass
class Machines:
    """Opens machines on a scratch folder, and tears down every one it opened."""

    scratch: Path
    opened: list[WorkRequestMachine] = field(default_factory=list)

    def open(
        self, alteration: Variant, declared: dict[str, str], **budgets: int
    ) -> WorkRequestMachine:
        WorkRequestMachine.drivers = Opening(alteration, self.scratch)  # type: ignore[assignment]
        WorkRequestMachine.declared = declared
        WorkRequestMachine.divergences = {}
        machine = WorkRequestMachine()
        self.opened.append(machine)
        machine.setup(seeds=[], data=Scripted([False, False]), **budgets)
        return machine

    def close(self) -> None:
        for machine in self.opened:
            machine.teardown()
