"""Per-criterion verdicts: the one aggregation every report shares.

A criterion passes only when at least one of its scenarios ran and passed:
one whose scenarios were all not applicable is `unverified`, never a pass.
What a run claims (`Claim` in its header) decides which criteria count and
whether unverified or diverged criteria fail it.
"""

from __future__ import annotations

from dataclasses import dataclass

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

#: Most severe first: a criterion takes the most severe status among its scenarios,
#: except that one with no passed scenario cannot be better than unverified.
SEVERITY = (
    Status.ERRORED,
    Status.TIMEOUT,
    Status.UNDEFINED,
    Status.FAILED,
    Status.XPASS,
    Status.DIVERGED,
    Status.XFAIL,
    Status.UNVERIFIED,
    Status.NOT_APPLICABLE,
    Status.PASSED,
)


@dataclass(frozen=True)
class CriterionVerdict:
    criterion: Criterion
    status: Status
    scenarios: list[ScenarioResult]
    claimed: bool = True

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


def criterion_status(scenarios: list[ScenarioResult]) -> Status:
    """No scenario at all is `undefined`; only not-applicable ones, `unverified`; otherwise the
    most severe status among the scenarios that ran, so a criterion passes only when every one
    of them passed (one that diverged or failed as expected is `diverged` or `xfail`)."""
    if not scenarios:
        return Status.UNDEFINED
    ran = {result.status for result in scenarios} - {Status.NOT_APPLICABLE}
    if not ran:
        return Status.UNVERIFIED
    return next(status for status in SEVERITY if status in ran)


def criterion_verdicts(run: ResultsRun, registry: Registry) -> list[CriterionVerdict]:
    by_criterion: dict[str, list[ScenarioResult]] = {}
    for result in run.scenarios:
        if result.criterion is not None:
            by_criterion.setdefault(result.criterion, []).append(result)
    claim = run.header.claim
    return [
        CriterionVerdict(
            criterion,
            criterion_status(by_criterion.get(criterion.id, [])),
            by_criterion.get(criterion.id, []),
            claim.covers(criterion.id),
        )
        for criterion in registry.criteria
    ]


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
        needs = ", ".join(verdict.missing_capabilities) or "a capability"
        return (
            f"unverified: {criterion}: no scenario of it ran (it needs {needs}); declare it, "
            f"or narrow the claim with --allow-unverified {criterion}"
        )
    if verdict.status is Status.DIVERGED:
        return f"diverged: {criterion} reads an interpretation otherwise (strict interpretations)"
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
    faults += [
        ClaimFailure("run", f"untagged: {result.key} names no known criterion")
        for result in untagged(run, registry)
    ]
    claimed = [r for r in run.scenarios if r.criterion and run.header.claim.covers(r.criterion)]
    checked = any(result.status in (Status.PASSED, Status.XFAIL) for result in claimed)
    if not checked and not any(result.status in FAILING for result in claimed):
        faults.append(ClaimFailure("run", "nothing was checked: no claimed scenario passed"))
    return faults


def claim_failures(run: ResultsRun, registry: Registry) -> list[ClaimFailure]:
    return run_faults(run, registry) + unmet_criteria(run, registry)


def run_succeeded(run: ResultsRun, registry: Registry) -> bool:
    """No claimed scenario failed and nothing else fails the claim (see `claim_failures`): in
    particular, a run in which nothing passed (an implementation declaring no capability)
    proves nothing."""
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
    return f"claims {specs}: {passed} of {len(claimed)} criteria passed{scope}"


def record_name(result: ScenarioResult) -> str:
    """`feature: title`, an outline row named by its values (its key keeps the pytest id)."""
    return f"{result.feature}: {result.title or result.scenario}"


def records_said(run: ResultsRun) -> str:
    """The number of records, with what they are and their statuses. It is no pytest count: an
    outline row is a record, and a property check writes one per criterion it names."""
    checks = sum(1 for result in run.scenarios if result.feature.startswith(RECORD_PREFIX))
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
