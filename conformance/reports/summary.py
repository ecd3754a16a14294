"""Per-criterion verdicts: the one aggregation every report shares.

The verdicts themselves come from the evidence ledger through `conformance.verdicts`: a
criterion passes only when every one of its observable clauses was verified by a check that
held, and a clause no check reached leaves it `unverified`, never passed. What a run claims
(`Claim` in its header) decides which criteria count and whether unverified or diverged
criteria fail it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.properties.catalogue import RECORD_PREFIX
from conformance.spec.registry import KIT_READING, Criterion, Registry
from conformance.stream.results import (
    FAILING,
    NOT_RUN,
    Claim,
    ResultsRun,
    ScenarioResult,
    Status,
    totals,
)
from conformance.verdicts import (
    ClauseVerdict,
    expected_breaks,
    judge_criterion,
    run_evidence,
)


@dataclass(frozen=True)
class CriterionVerdict:
    criterion: Criterion
    status: Status
    scenarios: list[ScenarioResult]
    claimed: bool = True
    clauses: tuple[ClauseVerdict, ...] = field(default=())
    """Each clause's verdict, the evidence the status rests on (see `conformance.verdicts`)."""

    def unexercised(self) -> list[ClauseVerdict]:
        """The observable clauses no check verified, each with why."""
        return [c for c in self.clauses if c.state.value == "unexercised"]

    @property
    def missing_capabilities(self) -> list[str]:
        """Why the scenarios that did not apply did not: the capabilities they needed."""
        prefix = "the implementation does not declare "
        reasons = {
            (s.evidence or "").removeprefix(prefix).strip()
            for s in self.scenarios
            if s.status is Status.NOT_APPLICABLE and (s.evidence or "").startswith(prefix)
        }
        return sorted(reason for reason in reasons if reason)

    def fails(self, claim: Claim) -> bool:
        """Whether this verdict fails the run under `claim`."""
        if not self.claimed:
            return False
        if self.status is Status.UNVERIFIED:
            return self.criterion.id not in claim.allow_unverified
        if self.status is Status.DIVERGED:
            return claim.strict_interpretations
        return self.status in FAILING


def criterion_verdicts(run: ResultsRun, registry: Registry) -> list[CriterionVerdict]:
    """Every criterion's verdict from the run's evidence (see `conformance.verdicts`)."""
    by_criterion: dict[str, list[ScenarioResult]] = {}
    for result in run.scenarios:
        if result.criterion is not None:
            by_criterion.setdefault(result.criterion, []).append(result)
    claim = run.header.claim
    evidence = run_evidence(run.scenarios)
    expected = expected_breaks(run.scenarios)
    naming = [result for result in run.scenarios if result.clauses]
    part = run.header.shard is not None
    verdicts = []
    for criterion in registry.criteria:
        tagged = by_criterion.get(criterion.id, [])
        judged = judge_criterion(
            criterion, tagged, evidence, registry, expected=expected, naming=naming
        )
        status = judged.status
        if part and status in NOT_JUDGED_IN_A_PART:
            status = Status.NOT_APPLICABLE
        verdicts.append(
            CriterionVerdict(criterion, status, tagged, claim.covers(criterion.id), judged.clauses)
        )
    return verdicts


NOT_JUDGED_IN_A_PART = frozenset({Status.UNVERIFIED, Status.UNDEFINED})
"""What a shard part cannot say of a criterion: its other clauses may be checked in another
part, so a part shows the criterion not applicable here, and `merge` judges it once."""


def untagged(run: ResultsRun, registry: Registry) -> list[ScenarioResult]:
    """Scenarios that name no known criterion: a defect of the suite, shown in every report."""
    known = set(registry.ids())
    return [result for result in run.scenarios if result.criterion not in known]


def readings_of(run: ResultsRun) -> dict[str, str]:
    """Per open question, the reading the implementation follows where it is not the kit's:
    declared in its handshake (`declares NAME`), or recognised by a model it answered as
    (`reads as NAME`, undeclared). The answers real implementations gave, for a spec owner."""
    declared: dict[str, str] = dict((run.header.description or {}).get("readings") or {})
    shown = {q: f"declares {name}" for q, name in declared.items() if name != KIT_READING}
    for result in run.scenarios:
        for followed in result.followed:
            question, _, name = followed.partition("=")
            shown.setdefault(question, f"reads as {name}")
    return shown


def divergences(run: ResultsRun) -> dict[str, list[ScenarioResult]]:
    """Per interpretation, the scenarios in which the implementation read it otherwise."""
    found: dict[str, list[ScenarioResult]] = {}
    for result in run.scenarios:
        if result.status is Status.DIVERGED:
            for cite in result.violated:
                found.setdefault(cite, []).append(result)
    return found


@dataclass(frozen=True)
class ClaimFailure:
    """A reason the run fails that no scenario's own status shows: every format must carry it
    as a failure of the claim, or a report could be green while the run is red."""

    subject: str
    """What failed: a criterion ID, or `run` for the run as a whole."""
    reason: str
    """One sentence that names the subject."""


def unmet_criteria(run: ResultsRun, registry: Registry) -> list[ClaimFailure]:
    """Claimed criteria that fail the claim while none of their scenarios failed: unverified
    (its scenarios need a capability the implementation does not declare), diverged under
    --strict-interpretations, or with no scenario at all."""
    claim = run.header.claim
    return [
        ClaimFailure(verdict.criterion.id, _unmet(verdict))
        for verdict in criterion_verdicts(run, registry)
        if verdict.fails(claim) and not any(s.status in FAILING for s in verdict.scenarios)
    ]


def _unmet(verdict: CriterionVerdict) -> str:
    criterion = verdict.criterion.id
    if verdict.status is Status.UNVERIFIED:
        clauses = "; ".join(f"{c.clause} ({c.reason})" for c in verdict.unexercised())
        return (
            f"unverified: {criterion}: no check verified {clauses}; declare what it needs, "
            f"or narrow the claim with --allow-unverified {criterion}"
        )
    if verdict.status is Status.DIVERGED:
        return f"diverged: {criterion} reads an interpretation otherwise (strict interpretations)"
    if verdict.status is Status.FAILED:
        broken = [c.clause for c in verdict.clauses if c.state.value == "broken"]
        said = ", ".join(broken) or "a reading registered under it, which no alternative explains"
        return f"failed: {criterion}: a check of {said} broke in a scenario of another criterion"
    return f"{verdict.status.value}: {criterion}: no scenario of it is in the run"


def run_faults(run: ResultsRun, registry: Registry) -> list[ClaimFailure]:
    """What fails the run as a whole, whatever its scenarios say."""
    footer = run.footer
    causes = [
        ("the implementation was unusable", run.header.implementation_error),
        ("integrity", footer.integrity if footer else "the run was interrupted: no footer"),
        ("the run stopped", footer.stopped if footer else None),
    ]
    faults = [ClaimFailure("run", f"{what}: {cause}") for what, cause in causes if cause]
    faults += property_faults(run)
    faults += [
        ClaimFailure("run", f"untagged: {result.key} names no known criterion")
        for result in untagged(run, registry)
    ]
    claimed = [r for r in run.scenarios if r.criterion and run.header.claim.covers(r.criterion)]
    checked = any(result.status in (Status.PASSED, Status.XFAIL) for result in claimed)
    if not checked and not any(result.status in FAILING for result in claimed):
        faults.append(ClaimFailure("run", "nothing was checked: no claimed scenario passed"))
    return faults


def property_faults(run: ResultsRun) -> list[ClaimFailure]:
    """A property search that ended in what no check judged (a fault, or an error the
    implementation answered) fails the run once, named by its check, rather than every
    criterion it names."""
    seen: dict[str, str] = {}
    for result in run.scenarios:
        if result.ended is not None:
            title = result.title.rsplit(" [", 1)[0]
            cause = result.failure.headline if result.failure else result.ended.value
            seen.setdefault(title, f"{result.ended.value}: {cause}")
    return [ClaimFailure("run", f"the property check '{t}' {said}") for t, said in seen.items()]


def claim_failures(run: ResultsRun, registry: Registry) -> list[ClaimFailure]:
    return run_faults(run, registry) + unmet_criteria(run, registry)


def run_succeeded(run: ResultsRun, registry: Registry) -> bool:
    """No claimed scenario failed and nothing else fails the claim (see `claim_failures`): in
    particular, a run in which nothing passed (an implementation declaring no capability)
    proves nothing. A shard part passes on its own evidence: a criterion it cannot judge
    alone is judged when the parts are merged (`criterion_verdicts` says so)."""
    claim = run.header.claim
    failed = any(
        result.status in FAILING
        for result in run.scenarios
        if result.criterion is not None and claim.covers(result.criterion)
    )
    return not failed and not claim_failures(run, registry)


def claim_headline(run: ResultsRun, verdicts: list[CriterionVerdict]) -> str:
    """What the run claims and how much of it passed; criteria outside the claim are counted as
    out of scope, never among the passed or the failed."""
    claimed = [verdict for verdict in verdicts if verdict.claimed]
    passed = sum(1 for verdict in claimed if verdict.status is Status.PASSED)
    specs = " and ".join(run.header.claim.specs)
    outside = len(verdicts) - len(claimed)
    scope = f"; {outside} out of scope" if outside else ""
    shard = run.header.shard
    if shard is not None:
        judged = sum(1 for verdict in claimed if verdict.status is not Status.NOT_APPLICABLE)
        return (
            f"part {shard.index} of {shard.count}, claims {specs}: {passed} of the {judged} "
            f"criteria this part can judge passed; the others are judged when the parts are "
            f"merged{scope}"
        )
    return f"claims {specs}: {passed} of {len(claimed)} criteria passed{scope}"


def out_of_scope_line(run: ResultsRun, verdicts: list[CriterionVerdict]) -> str | None:
    """One line for every criterion outside the run's claim (None when the claim covers all):
    a report lists the claimed ones only."""
    outside = [verdict.criterion.id for verdict in verdicts if not verdict.claimed]
    if not outside:
        return None
    claim = " and ".join(run.header.claim.specs)
    return f"Out of scope (the claim is {claim}): {len(outside)} criteria, {', '.join(outside)}."


def of_property(result: ScenarioResult) -> bool:
    """Whether a record is a property check's (one per criterion it names), not a scenario's."""
    return result.feature.startswith(RECORD_PREFIX)


def record_name(result: ScenarioResult) -> str:
    """`feature: title`, an outline row named by its values (its key keeps the pytest id)."""
    return f"{result.feature}: {result.shown_title}"


def records_said(run: ResultsRun) -> str:
    """The number of records, with what they are and their statuses. It is no pytest count: an
    outline row is a record, and a property check writes one per criterion it names."""
    checks = sum(1 for result in run.scenarios if of_property(result))
    counted = ", ".join(f"{n} {s.value}" for s, n in totals(run.scenarios).items() if n)
    made_of = (
        f"{len(run.scenarios) - checks} scenarios and outline rows, {checks} property-check "
        "records (one per criterion a check names)"
    )
    return f"{len(run.scenarios)} records, {made_of}: {counted or 'none'}"


def scenarios_cell(verdict: CriterionVerdict) -> str:
    """`1/1 passed, 2 n/a`: of the scenarios that ran, how many passed, then those that could
    not apply and those that did not run; never `1/3`, which reads as a partial pass."""
    results = verdict.scenarios
    not_applicable = sum(1 for r in results if r.status is Status.NOT_APPLICABLE)
    not_run = sum(1 for r in results if r.evidence == NOT_RUN)
    passed = sum(1 for r in results if r.status is Status.PASSED)
    cell = f"{passed}/{len(results) - not_applicable - not_run} passed"
    cell += f", {not_applicable} n/a" if not_applicable else ""
    return cell + (f", {not_run} not run" if not_run else "")
