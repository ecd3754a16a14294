"""Cucumber JSON, as Cucumber's own formatter writes it, for the dashboards that read it.

Dashboards count a scenario by its steps' statuses, so no step may say more than
happened: a step that never ran is `skipped` (after a failure, or in a
scenario that was not applicable, whose first step carries the reason); a
failure before the first step is a failed `before` hook; a divergence from a
registered interpretation, which fails no run, is `pending` with the reading
named; an expected failure is `skipped`; a failure after the last step (in
teardown) or an unexpected pass is a failed `after` hook, so that no scenario
that fails the run shows only passed steps. A scenario outside the run's claim cannot fail
it, so its failure shows as `skipped`, saying so. A last feature, `claim`, holds a failed
scenario for each reason the run fails that no scenario shows (a claimed criterion left
unverified, ...), or one passed scenario when the claim holds, so that a dashboard's verdict
is the run's. Features carry their own names, and an outline row its substituted name and
example values.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Final

from conformance.reports.summary import (
    ClaimFailure,
    claim_failures,
    claim_headline,
    criterion_verdicts,
)
from conformance.spec.registry import Registry
from conformance.stream.results import ResultsRun, ScenarioResult, Status, StepResult

_NANOS: Final = 1_000_000_000
#: How a scenario's verdict shows on a step that failed (or on the before hook).
_FAILED_AS: Final = {
    Status.FAILED: "failed",
    Status.ERRORED: "failed",
    Status.TIMEOUT: "failed",
    Status.XPASS: "failed",
    Status.UNDEFINED: "undefined",
    Status.DIVERGED: "pending",
    Status.XFAIL: "skipped",
}


def render_cucumber(run: ResultsRun, registry: Registry) -> str:
    by_feature: dict[str, list[ScenarioResult]] = defaultdict(list)
    for result in run.scenarios:
        by_feature[result.feature].append(result)
    features = [
        {
            "uri": feature,
            "id": _slug(results[0].feature_title or feature),
            "keyword": "Feature",
            "name": results[0].feature_title or feature,
            "line": 1,
            "elements": [_element(result, _claimed(run, result)) for result in results],
        }
        for feature, results in sorted(by_feature.items())
    ]
    features.append(_claim_feature(run, registry))
    return json.dumps(features, indent=2) + "\n"


def _claimed(run: ResultsRun, result: ScenarioResult) -> bool:
    return result.criterion is None or run.header.claim.covers(result.criterion)


def _claim_feature(run: ResultsRun, registry: Registry) -> dict[str, Any]:
    failures = claim_failures(run, registry)
    elements = [_claim_element(failure) for failure in failures] or [
        _claim_element(None, claim_headline(run, criterion_verdicts(run, registry)))
    ]
    return {
        "uri": "claim",
        "id": "claim",
        "keyword": "Feature",
        "name": "The run's claim",
        "line": 1,
        "elements": elements,
    }


def _claim_element(failure: ClaimFailure | None, holds: str = "") -> dict[str, Any]:
    """One failed step for a reason the claim is not met; a passed one when it holds."""
    result: dict[str, Any] = {"status": "passed", "duration": 0}
    if failure is not None:
        result = {"status": "failed", "duration": 0, "error_message": failure.reason}
    name = failure.reason if failure is not None else holds
    tags = [] if failure is None or failure.subject == "run" else [f"@{failure.subject}"]
    return {
        "id": _slug(f"claim {name}"),
        "keyword": "Scenario",
        "name": name,
        "line": 1,
        "type": "scenario",
        "tags": [{"name": tag} for tag in tags],
        "steps": [{"keyword": "* ", "name": "the claim holds", "line": 1, "result": result}],
    }


def _element(result: ScenarioResult, claimed: bool) -> dict[str, Any]:
    element: dict[str, Any] = {
        "id": _slug(result.key),
        "keyword": "Scenario Outline" if result.example else "Scenario",
        "name": result.title or result.scenario,
        "description": _example_row(result),
        "line": result.line,
        "type": "scenario",
        "tags": [{"name": f"@{result.criterion}"}] if result.criterion else [],
        "steps": _steps(result, claimed),
    }
    if result.steps and result.status in _FAILED_AS and not _a_step_shows_it(result):
        hook = "before" if all(s.status == "skipped" for s in result.steps) else "after"
        element[hook] = [{"match": {"location": hook}, "result": _failure(result, claimed)}]
    skipped = any(s.status == "skipped" for s in result.steps)
    if result.steps and result.status is Status.NOT_APPLICABLE and not skipped:
        element["after"] = [{"match": {"location": "after"}, "result": _skipped(result)}]
    return element


def _steps(result: ScenarioResult, claimed: bool) -> list[dict[str, Any]]:
    steps = [_step(step, result, claimed) for step in result.steps]
    unrun = [step for step in steps if step["result"]["status"] == "skipped"]
    if result.status is Status.NOT_APPLICABLE and unrun:  # the first step it could not run
        unrun[0]["result"]["error_message"] = f"not applicable: {result.evidence or ''}"
    if not steps:  # a scenario that did not run at all: one step says why
        steps = [
            {
                "keyword": "* ",
                "name": f"(did not run: {result.status.value})",
                "line": result.line,
                "result": _failure(result, claimed)
                if result.status in _FAILED_AS
                else _skipped(result),
            }
        ]
    return steps


def _step(step: StepResult, result: ScenarioResult, claimed: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"status": step.status, "duration": int(step.duration_s * _NANOS)}
    if step.status == "failed":
        entry = _failure(result, claimed) | {"duration": entry["duration"]}
    elif step.status == "undefined" and not claimed:
        entry = _skipped(result) | {"duration": entry["duration"]}
    return {"keyword": step.keyword + " ", "name": step.text, "line": step.line, "result": entry}


def _failure(result: ScenarioResult, claimed: bool) -> dict[str, Any]:
    """How the scenario's failure shows; outside the claim, as a skip that says what it was."""
    message = result.evidence or result.status.value
    if not claimed:
        return {
            "status": "skipped",
            "error_message": f"outside the claim ({result.status.value}): {message}",
        }
    return {"status": _FAILED_AS.get(result.status, "failed"), "error_message": message}


def _skipped(result: ScenarioResult) -> dict[str, Any]:
    return {"status": "skipped", "error_message": result.evidence or result.status.value}


def _a_step_shows_it(result: ScenarioResult) -> bool:
    """Whether a step already carries the scenario's failure; if not (it failed while setting
    up, or tearing down, or passed although expected to fail), a hook must."""
    return any(step.status in ("failed", "undefined") for step in result.steps)


def _example_row(result: ScenarioResult) -> str:
    return ", ".join(f"{name} = {value}" for name, value in result.example.items())


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
