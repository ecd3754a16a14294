"""The reference, declaring less than it serves: Office only, without fault hooks, restart or
concurrency.

A criterion whose every scenario needs one of those capabilities cannot be
verified against it; the run must say so and fail, unless the user narrows
the claim.
"""

from __future__ import annotations

from pathlib import Path

from conformance.adapters.factory import open_reference
from conformance.driver import Capability, Description, Driver

HIDDEN = frozenset(
    {
        Capability.WORK_REQUESTS,
        Capability.HOOK_COUNT_READ_FAILURE,
        Capability.HOOK_KEYLESS_ASSIGNMENT,
        Capability.RESTART,
        Capability.CONCURRENCY,
    }
)


class Undeclared:
    """Delegates everything to the reference; declares fewer capabilities."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    def describe(self) -> Description:
        described = self._driver.describe()
        kept = [c for c in described.capabilities if c not in HIDDEN]
        return described.model_copy(update={"capabilities": kept})

    def __getattr__(self, name: str) -> object:
        return getattr(self._driver, name)


def office_without_hooks(database: str | None, scratch: Path) -> Undeclared:
    return Undeclared(open_reference(database, scratch))
