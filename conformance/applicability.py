"""How a check says it does not apply, for the runner to record as `not_applicable`.

A scenario or property that cannot judge (a capability the implementation does not declare,
a hook it lacks, a history no search could decide) stops through pytest's skip with this
prefix and its reason. The recorder makes the record `not_applicable` with that reason, and
the clauses its checks would have judged stay unexercised by it: never passed, never broken.
"""

from __future__ import annotations

from typing import Final, NoReturn

import pytest

from conformance.driver import Capability, Driver

NOT_APPLICABLE_PREFIX: Final = "not_applicable: "


def not_applicable(reason: str) -> NoReturn:
    """Stop the scenario or property as not applicable, saying why."""
    pytest.skip(f"{NOT_APPLICABLE_PREFIX}{reason}")


def require(driver: Driver, capability: Capability) -> None:
    """Stop the scenario as not applicable when the implementation lacks `capability`."""
    if capability not in driver.describe().capabilities:
        not_applicable(f"the implementation does not declare {capability.value}")
