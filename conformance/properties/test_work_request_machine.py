"""The work-request state machine as the property test `conformance run` runs.

The machine, its rules and its invariants live in `work_request_machine` and the modules it
is assembled from; the model it keeps beside the implementation in
`conformance.oracle.work_requests`; the hostile names it draws in `hostile_data`. This module
only exposes the test (its name and line are the catalogue's), as the several searches its
examples are spread over (WORK_REQUEST_SEARCHES).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from conformance.properties.catalogue import WORK_REQUEST_SEARCHES
from conformance.properties.work_request_machine import run_work_request_machine

if TYPE_CHECKING:
    from conformance.properties import Budget, Drivers


@pytest.mark.parametrize("search", range(1, WORK_REQUEST_SEARCHES + 1))
def test_work_request_machine(
    drivers: Drivers, budget: Budget, seed: int | None, search: int
) -> None:
    run_work_request_machine(drivers, budget, seed, search)
