"""The refusals that apply to an operation: every code whose condition holds, since the spec
never ranks one refusal above another and an implementation may answer with any of them."""

from __future__ import annotations

from conformance.driver import ErrorCode

Refusals = frozenset[ErrorCode]
"""Every refusal code that applies to an operation; empty when it must be accepted."""

ACCEPTED: Refusals = frozenset()

ROOT_USAGE_REFUSALS: Refusals = frozenset(
    {ErrorCode.FORBIDDEN, ErrorCode.INVALID_INPUT, ErrorCode.NOT_SUPPORTED}
)
"""How an implementation reading WR-14 as root-usage-refused may turn a root's usage away."""


def applying(*conditions: tuple[bool, ErrorCode]) -> Refusals:
    """The codes whose condition holds."""
    return frozenset(code for holds, code in conditions if holds)
