"""The verdict algebra: a criterion's verdict from the evidence its clauses left, nothing else.

Every check leaves a tally per clause or reading it cites (`conformance.spec.evidence`), in
the record of the scenario or property that made it. This module is the one pure function
from those records to verdicts, and docs/kit.md states it:

- a clause is *verified* when a check of it held and none broke; *broken* when a check of it
  broke; *unexercised* otherwise, with the reason (the scenarios that would have checked it did
  not apply, or no check of it ran);
- a reading is *broken* when a check of it failed and no alternative the implementation may
  follow allows the answer, *diverged* when an undeclared alternative does;
- a criterion is `failed` when one of its clauses, or a reading registered under it, is broken;
  `diverged` when its only breaks are readings an undeclared alternative explains; `passed`
  only when every one of its observable clauses is verified; `unverified` otherwise, naming
  each clause left unexercised and why.

Blame follows the clause: a check made in a scenario tagged with one criterion that breaks a
clause of another fails that other criterion. A record's own end still counts where no clause
says more: an errored, timed-out or undefined scenario is its criterion's (the scenario could
not judge), and a failure that cites no clause (a refused call where an answer was due) fails
the criterion of the scenario it stopped. A divergence lands on the criteria its readings are
registered under, never on a tag, except one that noted no reading (it stays with its scenario's
criterion, so it never passes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from conformance.spec.evidence import Tally, merged_tallies
from conformance.spec.registry import INTERPRETATION_ID, Criterion, Registry
from conformance.stream.results import ScenarioResult, Status


class ClauseState(StrEnum):
    VERIFIED = "verified"
    BROKEN = "broken"
    UNEXERCISED = "unexercised"
    NOT_OBSERVABLE = "not observable"


@dataclass(frozen=True)
class ClauseVerdict:
    clause: str
    state: ClauseState
    reason: str = ""
    """For an unexercised clause: why no check of it held."""


@dataclass(frozen=True)
class Judged:
    """A criterion's verdict and the clause verdicts it rests on."""

    status: Status
    clauses: tuple[ClauseVerdict, ...]

    def unexercised(self) -> list[ClauseVerdict]:
        return [c for c in self.clauses if c.state is ClauseState.UNEXERCISED]


RECORD_FAULTS = (Status.ERRORED, Status.TIMEOUT, Status.UNDEFINED, Status.XPASS)
"""A record's own end that stands for its criterion whatever the clauses say, most severe
first: the scenario could not judge, or an expected failure passed."""

NOT_REACHED = "no check of it ran"


def run_evidence(records: Iterable[ScenarioResult]) -> dict[str, Tally]:
    """Every record's tallies joined, cite by cite."""
    return merged_tallies(record.checks for record in records)


def expected_breaks(records: Iterable[ScenarioResult]) -> set[str]:
    """Cites broken only in records an expectations file lists as known failures."""
    expected: set[str] = set()
    unexpected: set[str] = set()
    for record in records:
        broken = {cite for cite, tally in record.checks.items() if tally.broken}
        (expected if record.status is Status.XFAIL else unexpected).update(broken)
    return expected - unexpected


def judge_criterion(
    criterion: Criterion,
    tagged: list[ScenarioResult],
    evidence: Mapping[str, Tally],
    registry: Registry,
    *,
    expected: set[str] | None = None,
    naming: list[ScenarioResult] | None = None,
) -> Judged:
    """The verdict of `criterion` from the run's `evidence` and the records `tagged` with it;
    `naming`, the run's records that name clauses by tag, says why a clause went unexercised."""
    clauses = tuple(
        _clause_verdict(c.id, c.not_observable, evidence, naming or [], tagged)
        for c in criterion.clauses
    )
    if not tagged:
        return Judged(Status.UNDEFINED, clauses)
    ends = {record.status for record in tagged}
    fault = next((status for status in RECORD_FAULTS if status in ends), None)
    if fault is not None:
        return Judged(fault, clauses)
    breaks = _breaks(criterion.id, evidence, registry) | _uncited_failures(tagged)
    if breaks:
        known = expected or set()
        return Judged(Status.XFAIL if breaks <= known else Status.FAILED, clauses)
    if _diverged(criterion.id, evidence, registry) or _uncited_divergences(tagged):
        return Judged(Status.DIVERGED, clauses)
    if Status.XFAIL in ends:
        return Judged(Status.XFAIL, clauses)
    observable = [c for c in clauses if c.state is not ClauseState.NOT_OBSERVABLE]
    if all(c.state is ClauseState.VERIFIED for c in observable):
        return Judged(Status.PASSED, clauses)
    return Judged(Status.UNVERIFIED, clauses)


def _clause_verdict(
    clause: str,
    not_observable: str | None,
    evidence: Mapping[str, Tally],
    naming: list[ScenarioResult],
    tagged: list[ScenarioResult],
) -> ClauseVerdict:
    if not_observable:
        return ClauseVerdict(clause, ClauseState.NOT_OBSERVABLE, not_observable)
    tally = evidence.get(clause)
    if tally is not None and tally.broken:
        return ClauseVerdict(clause, ClauseState.BROKEN)
    if tally is not None and tally.held:
        return ClauseVerdict(clause, ClauseState.VERIFIED)
    return ClauseVerdict(clause, ClauseState.UNEXERCISED, _why_unexercised(clause, naming, tagged))


def _why_unexercised(
    clause: str, naming: list[ScenarioResult], tagged: list[ScenarioResult]
) -> str:
    """Why no check of `clause` held: what the records that name it (by their `@clause:` tag)
    said instead, such as a capability the implementation lacks; else what the criterion's own
    records that did not apply said."""
    named = [record for record in naming if clause in record.clauses]
    unapplied = [record for record in tagged if record.status is Status.NOT_APPLICABLE]
    reasons = sorted(
        {
            (record.evidence or record.status.value).splitlines()[0]
            for record in (named or unapplied)
            if record.status is not Status.PASSED
        }
    )
    return "; ".join(reasons) or NOT_REACHED


def _breaks(criterion: str, evidence: Mapping[str, Tally], registry: Registry) -> set[str]:
    """The cites broken that belong to `criterion`: its clauses, and readings registered
    under it whose answers no alternative allowed."""
    return {
        cite
        for cite, tally in evidence.items()
        if tally.broken and criterion in registry.criteria_of_readings([cite])
    }


def _diverged(criterion: str, evidence: Mapping[str, Tally], registry: Registry) -> bool:
    return any(
        tally.diverged and criterion in registry.criteria_of_readings([cite])
        for cite, tally in evidence.items()
        if INTERPRETATION_ID.fullmatch(cite)
    )


def _uncited_divergences(tagged: list[ScenarioResult]) -> bool:
    """A diverged record of the criterion whose checks noted no divergence of any reading: it
    stays with the criterion it stopped, as an uncited failure does, so it never passes."""
    return any(
        record.status is Status.DIVERGED
        and not any(tally.diverged for tally in record.checks.values())
        for record in tagged
    )


def _uncited_failures(tagged: list[ScenarioResult]) -> set[str]:
    """Failed records of the criterion whose end cites nothing (a refused call where an answer
    was due, an assertion of no clause): charged to the criterion they stopped, by key."""
    return {
        record.key
        for record in tagged
        if record.status is Status.FAILED
        and not any(tally.broken for tally in record.checks.values())
    }
