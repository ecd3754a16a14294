"""Per-criterion verdicts: the one aggregation every report shares."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.registry import Criterion, Registry
from conformance.results import FAILING, ResultsRun, ScenarioResult, Status

#: Most severe first: a criterion takes the most severe status among its scenarios.
SEVERITY = (
    Status.ERRORED,
    Status.TIMEOUT,
    Status.UNDEFINED,
    Status.FAILED,
    Status.XPASS,
    Status.XFAIL,
    Status.NOT_APPLICABLE,
    Status.PASSED,
)


@dataclass(frozen=True)
class CriterionVerdict:
    criterion: Criterion
    status: Status
    scenarios: list[ScenarioResult]


def criterion_status(scenarios: list[ScenarioResult]) -> Status:
    """No scenario at all is `undefined`: a criterion with nothing run is never a pass."""
    if not scenarios:
        return Status.UNDEFINED
    present = {result.status for result in scenarios}
    return next(status for status in SEVERITY if status in present)


def criterion_verdicts(run: ResultsRun, registry: Registry) -> list[CriterionVerdict]:
    by_criterion: dict[str, list[ScenarioResult]] = {}
    for result in run.scenarios:
        if result.criterion is not None:
            by_criterion.setdefault(result.criterion, []).append(result)
    return [
        CriterionVerdict(
            criterion,
            criterion_status(by_criterion.get(criterion.id, [])),
            by_criterion.get(criterion.id, []),
        )
        for criterion in registry.criteria
    ]


def untagged(run: ResultsRun, registry: Registry) -> list[ScenarioResult]:
    """Scenarios that name no known criterion: a defect of the suite, shown in every report."""
    known = set(registry.ids())
    return [result for result in run.scenarios if result.criterion not in known]


def run_succeeded(run: ResultsRun, registry: Registry) -> bool:
    """No failing verdict, and something was really checked: a run in which every scenario
    was not applicable (an implementation declaring no capability) proves nothing."""
    if run.footer is None or untagged(run, registry):
        return False
    if not any(result.status in (Status.PASSED, Status.XFAIL) for result in run.scenarios):
        return False
    return not any(result.status in FAILING for result in run.scenarios) and all(
        verdict.status not in FAILING for verdict in criterion_verdicts(run, registry)
    )
