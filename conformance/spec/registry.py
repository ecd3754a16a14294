"""The criteria registry: every criterion the kit pins, split into clauses, loaded from data.

The data lives in `conformance/data/criteria.toml`; this module only reads it.
A clause is one obligation of a criterion, stated in the kit's own words, with
a locator of the source words it rests on and a hash of those words, so that a
changed spec shows which clauses need review without the kit quoting the spec.
Assertions cite clauses (or registered interpretations) by ID; see
`conformance.spec.clause_check`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from conformance.spec.spec_text import SpanLocator

CRITERION_TAG = re.compile(r"AC-(?:OFFICE-ASSIGN-RATE|ARMONIA-WORKREQ)-\d{3}\.\d+")
CLAUSE_ID = re.compile(rf"(?P<criterion>{CRITERION_TAG.pattern})/[a-z0-9]+(?:-[a-z0-9]+)*")
INTERPRETATION_ID = re.compile(r"(?:WR|OF)-\d+")
INTERPRETATION_TAG_PREFIX = "interpretation:"
CLAUSE_TAG_PREFIX = "clause:"
"""A scenario's `@clause:<slug>` tags name the clauses of its criterion it checks."""
REGISTRY_PATH = Path(__file__).resolve().parents[1] / "data" / "criteria.toml"


@dataclass(frozen=True)
class Requirement:
    id: str
    title: str
    source: str


@dataclass(frozen=True)
class Clause:
    """One obligation of a criterion. `not_observable` says why no assertion can check it."""

    id: str
    criterion: str
    statement: str
    span: SpanLocator
    span_hash: str
    not_observable: str | None = None


@dataclass(frozen=True)
class Criterion:
    id: str
    requirement: str
    statement: str
    source: str
    source_hash: str
    clauses: tuple[Clause, ...] = ()


KIT_READING = "kit"
"""The alternative name of the reading the kit itself takes, which an implementation may declare."""
ALTERNATIVE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
ANSWERS: dict[str, str] = {
    "accepted": "the attempt is accepted where the kit's reading refuses it",
    "refused": "the attempt is refused (with a code of `refused:<code>`, that code)",
    "other-figures": "a budget or a completion's return reads other figures",
    "other-generation": "a lease carries another generation",
    "other-refusal": "a refusal reads otherwise than the one it is compared with",
    "in-progress": "a request reads in_progress where the kit's reading has it open",
    "other-state": "a request reads another state still",
    "changed": "a refused attempt changed something",
    "made": "a refused attempt made a request or a session",
    "listed": "a listing holds a request the kit's reading leaves out",
    "counted": "a wake the kit's reading leaves alone is counted",
    "over-admitted": "more wakes are admitted than the kit's reading bounds",
    "fewer-producers": "fewer producers are reported than the kit's reading asks",
    "lost": "something the kit's reading keeps is gone",
    "empty-field": "a field is present with an empty value",
}
"""The kinds of answer a failed check of a reading names, and an alternative allows."""
ANSWER = re.compile(r"refused:[a-z_]+|" + "|".join(map(re.escape, ANSWERS)))


@dataclass(frozen=True)
class Alternative:
    """Another reading of an open question, one a legal implementation may take instead.

    `followed` says whether the work-request model can predict by it (and so keep checking
    everything else when an implementation answers as it does); the others are recognised by
    name, when an implementation declares them, and judged by setting the kit's checks aside.
    """

    name: str
    reading: str
    allows: tuple[str, ...]
    """The answers it allows where a check by the kit's reading fails: kinds from `ANSWERS`,
    or `refused:<code>` (`refused` alone: any refusal). A declared alternative sets a failed
    check aside only when the answer observed is one of these."""
    followed: bool = False

    def allows_answer(self, observed: str) -> bool:
        """Whether `observed` (a kind of answer, as a failed check names it) is one it allows."""
        kind = observed.partition(":")[0]
        return observed in self.allows or (kind == "refused" and "refused" in self.allows)


@dataclass(frozen=True)
class Interpretation:
    id: str
    criteria: tuple[str, ...]
    reading: str
    retired: str | None = None
    """Why the kit no longer takes this reading; a retired ID is never reused."""
    alternatives: tuple[Alternative, ...] = ()
    interprets: tuple[str, ...] = ()
    """The clauses whose spec sentences the question reads: their spans are what `conformance
    readings --spec` quotes (the kit stores locators, never the spec's words)."""

    @property
    def active(self) -> bool:
        return self.retired is None

    def alternative(self, name: str) -> Alternative | None:
        """The alternative by name; None for the kit's own reading (or an unknown name)."""
        return next((a for a in self.alternatives if a.name == name), None)

    def names(self) -> list[str]:
        """Every reading an implementation may declare: the kit's, then the alternatives."""
        return [KIT_READING, *(a.name for a in self.alternatives)]


@dataclass(frozen=True)
class Registry:
    requirements: tuple[Requirement, ...]
    criteria: tuple[Criterion, ...]
    interpretations: tuple[Interpretation, ...]

    def criterion(self, criterion_id: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.id == criterion_id:
                return criterion
        raise KeyError(criterion_id)

    def ids(self) -> list[str]:
        return [criterion.id for criterion in self.criteria]

    def criteria_of(self, requirement_id: str) -> list[Criterion]:
        return [c for c in self.criteria if c.requirement == requirement_id]

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return tuple(clause for criterion in self.criteria for clause in criterion.clauses)

    def clause(self, clause_id: str) -> Clause:
        for clause in self.clauses:
            if clause.id == clause_id:
                return clause
        raise KeyError(clause_id)

    def interpretation(self, interpretation_id: str) -> Interpretation:
        for interpretation in self.interpretations:
            if interpretation.id == interpretation_id:
                return interpretation
        raise KeyError(interpretation_id)

    def criteria_of_readings(self, cites: list[str] | tuple[str, ...]) -> set[str]:
        """The criteria the cited interpretations are registered under (clauses: their own)."""
        criteria: set[str] = set()
        for cite in cites:
            if INTERPRETATION_ID.fullmatch(cite):
                criteria.update(self.interpretation(cite).criteria)
            else:
                criteria.add(cite.split("/")[0])
        return criteria

    def active_interpretations(self) -> list[Interpretation]:
        return [i for i in self.interpretations if i.active]

    def statement_of(self, cite: str) -> str:
        """What a cited clause or interpretation says, in the kit's words."""
        if INTERPRETATION_ID.fullmatch(cite):
            return self.interpretation(cite).reading
        return self.clause(cite).statement

    def is_citable(self, cite: str) -> bool:
        """A clause, or an interpretation the kit still takes."""
        if INTERPRETATION_ID.fullmatch(cite):
            return any(i.id == cite and i.active for i in self.interpretations)
        return any(clause.id == cite for clause in self.clauses)


def load_registry(path: Path = REGISTRY_PATH) -> Registry:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    registry = Registry(
        requirements=tuple(Requirement(**item) for item in data["requirement"]),
        criteria=tuple(_criterion(item) for item in data["criterion"]),
        interpretations=tuple(_interpretation(item) for item in data.get("interpretation", [])),
    )
    _check_consistent(registry)
    return registry


def _criterion(item: dict[str, Any]) -> Criterion:
    fields = {key: value for key, value in item.items() if key != "clause"}
    return Criterion(
        **fields, clauses=tuple(_clause(item["id"], c) for c in item.get("clause", []))
    )


def _interpretation(item: dict[str, Any]) -> Interpretation:
    return Interpretation(
        item["id"],
        tuple(item["criteria"]),
        item["reading"],
        item.get("retired"),
        tuple(_alternative(alternative) for alternative in item.get("alternative", [])),
        tuple(item.get("interprets", ())),
    )


def _alternative(item: dict[str, Any]) -> Alternative:
    return Alternative(**{**item, "allows": tuple(item.get("allows", ()))})


def _clause(criterion_id: str, item: dict[str, Any]) -> Clause:
    span = item["span"]
    first, last = span["sentences"]
    return Clause(
        id=item["id"],
        criterion=criterion_id,
        statement=item["statement"],
        span=SpanLocator(span["file"], span["anchor"], (first, last)),
        span_hash=item["span_hash"],
        not_observable=item.get("not_observable"),
    )


@cache
def default_registry() -> Registry:
    return load_registry()


def _check_consistent(registry: Registry) -> None:
    """A registry that contradicts itself is a configuration error, caught at load time."""
    requirement_ids = {r.id for r in registry.requirements}
    criterion_ids = registry.ids()
    if len(set(criterion_ids)) != len(criterion_ids):
        raise ValueError("criteria registry lists a criterion ID twice")
    for criterion in registry.criteria:
        if not CRITERION_TAG.fullmatch(criterion.id):
            raise ValueError(f"criterion ID {criterion.id!r} does not have the expected form")
        if criterion.requirement not in requirement_ids:
            raise ValueError(f"{criterion.id} names unknown requirement {criterion.requirement}")
        if not criterion.clauses:
            raise ValueError(f"{criterion.id} has no clause")
    clause_ids = [clause.id for clause in registry.clauses]
    if len(set(clause_ids)) != len(clause_ids):
        raise ValueError("criteria registry lists a clause ID twice")
    for clause in registry.clauses:
        match = CLAUSE_ID.fullmatch(clause.id)
        if match is None or match["criterion"] != clause.criterion:
            raise ValueError(f"clause ID {clause.id!r} is not <its criterion>/<lower-case-slug>")
    interpretation_ids = [i.id for i in registry.interpretations]
    if len(set(interpretation_ids)) != len(interpretation_ids):
        raise ValueError("criteria registry lists an interpretation ID twice")
    for interpretation in registry.interpretations:
        if not INTERPRETATION_ID.fullmatch(interpretation.id):
            raise ValueError(f"interpretation ID {interpretation.id!r} is not WR-n or OF-n")
        unknown = set(interpretation.criteria) - set(criterion_ids)
        if unknown:
            raise ValueError(f"interpretation {interpretation.id} names unknown criteria {unknown}")
        _check_interprets(interpretation, registry)
        _check_alternatives(interpretation)


def _check_interprets(interpretation: Interpretation, registry: Registry) -> None:
    """A question names the clauses whose sentences it reads, each of one of its criteria."""
    clauses = {clause.id: clause for clause in registry.clauses}
    if interpretation.active and not interpretation.interprets:
        raise ValueError(f"{interpretation.id} must name the clauses it interprets (interprets)")
    for clause_id in interpretation.interprets:
        clause = clauses.get(clause_id)
        if clause is None or clause.criterion not in interpretation.criteria:
            raise ValueError(
                f"{interpretation.id} interprets {clause_id!r}, which is not a clause of its "
                f"criteria {', '.join(interpretation.criteria)}"
            )


def _check_alternatives(interpretation: Interpretation) -> None:
    names = [alternative.name for alternative in interpretation.alternatives]
    if len(set(names)) != len(names) or KIT_READING in names:
        raise ValueError(f"{interpretation.id} names an alternative twice, or one {KIT_READING!r}")
    for name in names:
        if not ALTERNATIVE_NAME.fullmatch(name):
            raise ValueError(f"{interpretation.id}'s alternative {name!r} is not a lower-case slug")
    for alternative in interpretation.alternatives:
        if not alternative.allows or not all(map(ANSWER.fullmatch, alternative.allows)):
            raise ValueError(
                f"{interpretation.id}'s alternative {alternative.name!r} must say which answers "
                f"it allows (of {', '.join(ANSWERS)}, or refused:<code>): {alternative.allows}"
            )


def short_id(criterion: str) -> str:
    """AC-OFFICE-ASSIGN-RATE-001.2 -> OFFICE-001.2; AC-ARMONIA-WORKREQ-001.3 -> WORKREQ-001.3."""
    return criterion.replace("AC-", "").replace("ASSIGN-RATE-", "").replace("ARMONIA-", "")
