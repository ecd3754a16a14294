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

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

from conformance.spec.evidence import current_ledger
from conformance.spec.registry import INTERPRETATION_ID, KIT_READING, Registry, default_registry

T = TypeVar("T")

Cite = str | Sequence[str]
"""One clause or interpretation ID, or several when the check rests on all of them."""

Detail = str | Callable[[], str]
"""Expected against observed; a callable is only called when the check fails."""

Allows = Mapping[str, Iterable[str]]
"""Per cited reading, the registered alternatives under which the answer observed is allowed
(`{"WR-13": {"zero-usage-accepted"}}`); a question left out is allowed by none of them."""


class ScenarioError(Exception):
    """The scenario itself is malformed (a step refers to something it never made)."""


class PortViolation(Exception):
    """The implementation answered something the driver port's contract rules out."""


class ClauseViolation(AssertionError):
    """An implementation broke what the cited clauses or interpretations require."""

    readings_apart = False
    """Whether its readings failed in checks of readings alone (a model's breaks gathered to the
    end: `properties.surprises`); otherwise a reading beside a clause only says what the check
    rested on, and the check breaks the clause alone."""
    parts: tuple[ClauseViolation, ...] = ()
    """For the violations a search found apart, joined as one (see
    `running.failure_evidence.distinct_failures`): each of them, with its own counterexample."""

    def __init__(
        self,
        cites: tuple[str, ...],
        detail: str,
        registry: Registry,
        allows: Allows | None = None,
        observed: str | None = None,
    ) -> None:
        self.cites = cites
        self.detail = detail
        self.statements = {cite: registry.statement_of(cite) for cite in cites}
        self.allowed = allowed_alternatives(cites, registry, allows, observed)
        self.said_which = allows is not None or observed is not None
        """Whether the check said which alternatives allow its answer (else: all of them)."""
        """Per cited reading, the alternatives that allow the answer observed."""
        super().__init__(self.render())

    @property
    def criterion(self) -> str:
        """The criterion a counterexample of it is tagged with: its first clause's, else the
        first criterion its first reading is registered under."""
        clause = next((c for c in self.cites if not INTERPRETATION_ID.fullmatch(c)), None)
        if clause is not None:
            return clause.split("/")[0]
        return default_registry().interpretation(self.cites[0]).criteria[0]

    @property
    def interpretations_only(self) -> bool:
        """Whether only readings of open questions were cited: a failure some alternative may
        explain (see `explained`)."""
        return all(INTERPRETATION_ID.fullmatch(cite) for cite in self.cites)

    @property
    def explained(self) -> bool:
        """Whether a registered alternative of a cited question allows the answer observed: a
        divergence at most. What every reading forbids is a break, cited readings or not."""
        return self.interpretations_only and any(self.allowed.values())

    def narrowed(self, ruled_out: Mapping[str, set[str]]) -> ClauseViolation:
        """This violation once a model has judged the answers again under some readings and
        none explained them: only the alternatives it could not judge may still allow them."""
        self.allowed = {
            q: tuple(name for name in names if name not in ruled_out.get(q, set()))
            for q, names in self.allowed.items()
        }
        return self

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
        super().__init__(tuple(self.followed), detail, registry, allows=self.followed)

    def readings(self) -> list[str]:
        """Each reading followed, as `<interpretation>=<reading>`."""
        return [f"{q}={name}" for q, names in self.followed.items() for name in names]


def cites_of(cite: Cite) -> tuple[str, ...]:
    return (cite,) if isinstance(cite, str) else tuple(cite)


def allowed_alternatives(
    cites: Sequence[str], registry: Registry, allows: Allows | None, observed: str | None = None
) -> dict[str, tuple[str, ...]]:
    """Per cited reading, the alternatives allowing the answer: as the check says (`allows`);
    by the kind of answer it `observed`, those whose registered `allows` include it; where it
    says neither (a model that follows readings narrows them itself: `narrowed`), every
    alternative registered for the question. A question with no alternative allows nothing
    but the kit's reading."""
    readings = [cite for cite in cites if INTERPRETATION_ID.fullmatch(cite)]
    if allows is not None:
        return {q: tuple(sorted(allows.get(q, ()))) for q in readings}
    return {
        q: tuple(
            a.name
            for a in registry.interpretation(q).alternatives
            if observed is None or a.allows_answer(observed)
        )
        for q in readings
    }


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
    """The implementation's declared readings, the kit's own (`kit`) included."""
    step: object = None
    """The step running now (as its runner names it), for the account of what is noted in it."""
    diverged: list[tuple[object, ClauseViolation]] = field(default_factory=list)
    set_aside: list[tuple[object, ClauseViolation]] = field(default_factory=list)
    broken: list[tuple[object, ClauseViolation]] = field(default_factory=list)
    """Checks of readings whose answer no reading the implementation may follow allows."""

    def note(self, violation: ClauseViolation) -> None:
        """Judge a failed check of readings by the alternatives that allow its answer: set
        aside where the declared one does, a divergence where an undeclared question's
        alternative does, else a break (and the ledger says which)."""
        if not violation.said_which:
            raise ScenarioError(
                f"a check of {', '.join(violation.cites)} in a scenario says not which kind of "
                "answer it saw (`expect(..., observed=...)`): no declared reading may excuse it "
                f"unseen\n{violation.detail}"
            )
        ledger = current_ledger()
        if self.allows_declared(violation):
            self.set_aside.append((self.step, violation))
            if ledger is not None:
                ledger.set_aside(violation.cites)
            return
        open_questions = {
            q: names for q, names in violation.allowed.items() if names and q not in self.declared
        }
        if open_questions:
            self.diverged.append((self.step, violation))
            if ledger is not None:
                for question, names in open_questions.items():
                    ledger.diverged(question, (f"{question}={name}" for name in names))
            return
        self.broken.append((self.step, violation))
        if ledger is not None:
            ledger.broken(violation.cites)

    def allows_declared(self, violation: ClauseViolation) -> bool:
        """Whether a reading the check rests on is declared as an alternative that allows the
        answer observed: the check is then judged by that reading, and set aside."""
        return any(
            self.declared.get(question) in names for question, names in violation.allowed.items()
        )

    def declares_otherwise(self, cites: Sequence[str]) -> bool:
        """Whether one of the readings a check rests on is declared other than the kit's."""
        return any(self.declared.get(cite, KIT_READING) != KIT_READING for cite in cites)

    def cites(self) -> list[str]:
        return sorted({cite for _, violation in self.diverged for cite in violation.cites})

    def broken_cites(self) -> list[str]:
        return sorted({cite for _, violation in self.broken for cite in violation.cites})

    @property
    def empty(self) -> bool:
        return not self.diverged and not self.set_aside and not self.broken


_READING_LOG: ContextVar[ReadingLog | None] = ContextVar("reading_log", default=None)


def open_reading_log(log: ReadingLog) -> Callable[[], None]:
    """Open `log` for the checks that follow, for a caller that cannot hold a `with` block
    open (the recorder opens it at a scenario's setup); returns what closes it."""
    token = _READING_LOG.set(log)
    return lambda: _READING_LOG.reset(token)


def expect(
    condition: bool,
    cite: Cite,
    detail: Detail,
    *,
    registry: Registry | None = None,
    allows: Allows | Callable[[], Allows] | None = None,
    observed: str | Callable[[], str] | None = None,
) -> None:
    """Fail with a ClauseViolation naming `cite` unless `condition` holds; a failed check of
    readings only is noted in the active `ReadingLog` instead, where one is open. Every check
    leaves its mark in the evidence ledger: held here, or judged where it is noted or raised.

    For a check of readings, `observed` names the kind of answer seen (see `ANSWERS`): the
    alternatives whose registered `allows` include it are those that allow it. `allows` names
    them outright; with neither, every alternative does (callables are called on failure)."""
    known = registry or default_registry()
    cites = _citable(cite, known)
    if condition:
        ledger = current_ledger()
        if ledger is not None:
            ledger.held(cites)
        return
    said = allows() if callable(allows) else allows
    seen = observed() if callable(observed) else observed
    told = detail() if callable(detail) else detail
    violation = violation_type(cites)(cites, told, known, said, seen)
    log = _READING_LOG.get()
    if log is not None and violation.interpretations_only:
        log.note(violation)
        return
    raise violation


def expect_value(value: T | None, cite: Cite, detail: Detail) -> T:
    """`value`, which the cited clauses require to be there: a check of them that holds when
    it is, and fails (a ClauseViolation) when it is None."""
    expect(value is not None, cite, detail)
    if value is None:  # expect raised, or noted a reading only: the step cannot go on
        raise violated(cite, detail() if callable(detail) else detail)
    return value


def violated(
    cite: Cite,
    detail: str,
    *,
    registry: Registry | None = None,
    allows: Allows | None = None,
    observed: str | None = None,
) -> ClauseViolation:
    """The violation to raise where the failure is already known (e.g. a refused setup): the
    step cannot go on past it, so it is raised even when it cites readings only."""
    known = registry or default_registry()
    cites = _citable(cite, known)
    return violation_type(cites)(cites, detail, known, allows, observed)


@cache
def violation_type(
    cites: tuple[str, ...], *, readings_apart: bool = False
) -> type[ClauseViolation]:
    """A type of its own for the violations of one set of clauses. Hypothesis tells failures
    apart by their type and the place they were raised, and every check raises from here: with
    one type, a search would shrink toward whichever break is easiest to reach and report that
    one for all; with a type per set, it shrinks and reports each apart. `readings_apart`: a
    model's breaks gathered to the end (see `ClauseViolation.readings_apart`)."""
    said = {
        "__doc__": f"A violation of {', '.join(cites)}.",
        "__module__": __name__,
        "readings_apart": readings_apart,
    }
    return type("ClauseViolation", (ClauseViolation,), said)


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
