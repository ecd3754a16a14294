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

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
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


class FollowedDivergence(ClauseViolation):
    """A model found the implementation reading open questions otherwise, followed each
    reading it recognised and checked everything else to the end: a divergence on those
    questions alone, never a failure of another criterion."""

    def __init__(
        self,
        followed: Mapping[str, set[str]],
        declared: Mapping[str, str],
        registry: Registry,
    ) -> None:
        self.followed = {question: sorted(names) for question, names in sorted(followed.items())}
        detail = "\n".join(
            f"{question}: the implementation answers as {' or '.join(names)} reads it "
            f"(it declares {declared.get(question, 'no reading, so the kit judged by its own')});"
            " the model followed that reading and checked everything else"
            for question, names in self.followed.items()
        )
        super().__init__(tuple(self.followed), detail, registry)

    def readings(self) -> list[str]:
        """Each reading followed, as `<interpretation>=<reading>`."""
        return [f"{q}={name}" for q, names in self.followed.items() for name in names]


def cites_of(cite: Cite) -> tuple[str, ...]:
    return (cite,) if isinstance(cite, str) else tuple(cite)


@dataclass
class ReadingLog:
    """The failed checks of readings in one scenario, kept so that the scenario goes on.

    A check that cites only registered interpretations is an open question, not a clause:
    while a log is active (the recorder opens one per Gherkin scenario), its failure is noted
    here instead of ending the scenario, so every clause check after it still runs and still
    fails the scenario. A check resting on a reading the implementation declared otherwise is
    set aside (judged by the declared reading); any other is a divergence.
    """

    declared: Mapping[str, str] = field(default_factory=dict)
    """The implementation's declared readings, less those that are the kit's own."""
    step: object = None
    """The step running now (as its runner names it), for the account of what is noted in it."""
    diverged: list[tuple[object, ClauseViolation]] = field(default_factory=list)
    set_aside: list[tuple[object, ClauseViolation]] = field(default_factory=list)

    def note(self, violation: ClauseViolation) -> None:
        if self.declares_otherwise(violation.cites):
            self.set_aside.append((self.step, violation))
        else:
            self.diverged.append((self.step, violation))

    def declares_otherwise(self, cites: Sequence[str]) -> bool:
        """Whether one of the readings a check rests on is declared other than the kit's."""
        return any(cite in self.declared for cite in cites)

    def cites(self) -> list[str]:
        return sorted({cite for _, violation in self.diverged for cite in violation.cites})

    @property
    def empty(self) -> bool:
        return not self.diverged and not self.set_aside


_READING_LOG: ContextVar[ReadingLog | None] = ContextVar("reading_log", default=None)


def open_reading_log(log: ReadingLog) -> Callable[[], None]:
    """Open `log` for the checks that follow, for a caller that cannot hold a `with` block
    open (the recorder opens it at a scenario's setup); returns what closes it."""
    token = _READING_LOG.set(log)
    return lambda: _READING_LOG.reset(token)


def expect(
    condition: bool, cite: Cite, detail: Detail, *, registry: Registry | None = None
) -> None:
    """Fail with a ClauseViolation naming `cite` unless `condition` holds; a failed check of
    readings only is noted in the active `ReadingLog` instead, where one is open."""
    known = registry or default_registry()
    cites = _citable(cite, known)
    if condition:
        return
    violation = ClauseViolation(cites, detail() if callable(detail) else detail, known)
    log = _READING_LOG.get()
    if log is not None and violation.interpretations_only:
        log.note(violation)
        return
    raise violation


def violated(cite: Cite, detail: str, *, registry: Registry | None = None) -> ClauseViolation:
    """The violation to raise where the failure is already known (e.g. a refused setup): the
    step cannot go on past it, so it is raised even when it cites readings only."""
    known = registry or default_registry()
    return ClauseViolation(_citable(cite, known), detail, known)


def _citable(cite: Cite, registry: Registry) -> tuple[str, ...]:
    cites = cites_of(cite)
    unknown = [c for c in cites if not registry.is_citable(c)]
    if not cites or unknown:
        raise ScenarioError(f"a check cites {unknown or 'nothing'}: not a clause or interpretation")
    return cites


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
