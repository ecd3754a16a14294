"""Assertions that name what they enforce: a clause of a criterion, or a registered interpretation.

Every check the suite makes of an implementation goes through `expect`, citing
the clause IDs (`AC-...-001.6/no-row`) or interpretation IDs (`WR-8`) it rests
on, so that a failure says which words of the spec were broken, and so that a
failure resting only on interpretations can be told apart: the implementation
read an open question otherwise (`diverged`), it did not break the spec.

Two other failures are not the implementation breaking the spec: a scenario
that is wrong in itself (`ScenarioError`, the kit's defect) and an answer the
driver port forbids whatever the spec says (`PortViolation`, e.g. an Office
implementation that reports no Office constants). Both make the scenario
`errored`, never `failed` or `diverged`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from conformance.spec.registry import INTERPRETATION_ID, Registry, default_registry

T = TypeVar("T")

Cite = str | Sequence[str]
"""One clause or interpretation ID, or several when the check rests on all of them."""

Detail = str | Callable[[], str]
"""Expected against observed; a callable is only called when the check fails."""


class ScenarioError(Exception):
    """The scenario itself is malformed (a step refers to something it never made)."""


class PortViolation(Exception):
    """The implementation answered something the driver port's contract rules out."""


class ClauseViolation(AssertionError):
    """An implementation broke what the cited clauses or interpretations require."""

    def __init__(self, cites: tuple[str, ...], detail: str, registry: Registry) -> None:
        self.cites = cites
        self.detail = detail
        self.statements = {cite: registry.statement_of(cite) for cite in cites}
        super().__init__(self.render())

    @property
    def interpretations_only(self) -> bool:
        """Whether only readings of open questions were broken (a divergence, not a failure)."""
        return all(INTERPRETATION_ID.fullmatch(cite) for cite in self.cites)

    def render(self) -> str:
        cited = "\n".join(f"{cite}: {statement}" for cite, statement in self.statements.items())
        return f"{cited}\n{self.detail}"


def cites_of(cite: Cite) -> tuple[str, ...]:
    return (cite,) if isinstance(cite, str) else tuple(cite)


def expect(
    condition: bool, cite: Cite, detail: Detail, *, registry: Registry | None = None
) -> None:
    """Fail with a ClauseViolation naming `cite` unless `condition` holds."""
    cites = cites_of(cite)
    known = registry or default_registry()
    unknown = [c for c in cites if not known.is_citable(c)]
    if not cites or unknown:
        raise ScenarioError(f"a check cites {unknown or 'nothing'}: not a clause or interpretation")
    if condition:
        return
    raise ClauseViolation(cites, detail() if callable(detail) else detail, known)


def violated(cite: Cite, detail: str, *, registry: Registry | None = None) -> ClauseViolation:
    """The violation to raise where the failure is already known (e.g. a refused setup)."""
    try:
        expect(False, cite, detail, registry=registry)
    except ClauseViolation as violation:
        return violation
    raise ScenarioError("expect(False, ...) did not fail")  # pragma: no cover


def scenario_requires(condition: bool, message: str) -> None:
    """A precondition of the scenario itself: broken, it is the kit's defect."""
    if not condition:
        raise ScenarioError(message)


def port_requires(condition: bool, message: str) -> None:
    """A promise of the driver port's contract: broken, the step cannot judge the answer."""
    if not condition:
        raise PortViolation(message)


def scenario_value(value: T | None, message: str) -> T:
    """`value`, which the scenario must have made by now; None is the kit's defect."""
    if value is None:
        raise ScenarioError(message)
    return value


def port_value(value: T | None, message: str) -> T:
    """`value`, which the driver port promises; None means the implementation broke it."""
    if value is None:
        raise PortViolation(message)
    return value
