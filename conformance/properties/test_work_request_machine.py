"""The work-request state machine as the property test `conformance run` runs.

The machine, its rules and its invariants live in `work_request_machine`; the model it keeps
beside the implementation in `conformance.oracle.work_requests`; the hostile names it draws
in `hostile_data`. This module only exposes the test (its name and line are the catalogue's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.properties.work_request_machine import run_work_request_machine

if TYPE_CHECKING:
    from conformance.properties import Budget
    from conformance.properties.plugin import DriverFactory


def test_work_request_machine(drivers: DriverFactory, budget: Budget) -> None:
    run_work_request_machine(drivers, budget)
