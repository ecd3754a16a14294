"""Cucumber JSON, for tools that read it. Steps that never ran are reported skipped."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from conformance.results import ResultsRun, ScenarioResult, Status

_NANOS = 1_000_000_000


def render_cucumber(run: ResultsRun) -> str:
    by_feature: dict[str, list[ScenarioResult]] = defaultdict(list)
    for result in run.scenarios:
        by_feature[result.feature].append(result)
    features = [
        {
            "uri": feature,
            "id": feature,
            "keyword": "Feature",
            "name": feature,
            "line": 1,
            "elements": [_element(result) for result in results],
        }
        for feature, results in sorted(by_feature.items())
    ]
    return json.dumps(features, indent=2) + "\n"


def _element(result: ScenarioResult) -> dict[str, Any]:
    steps = [
        {
            "keyword": step.keyword + " ",
            "name": step.text,
            "line": step.line,
            "result": _step_result(step.status, step.duration_s, result),
        }
        for step in result.steps
    ]
    if not steps:
        steps = [
            {
                "keyword": "* ",
                "name": f"(no step ran: {result.status.value})",
                "line": result.line,
                "result": {
                    "status": _scenario_status(result.status),
                    "error_message": result.evidence or "",
                },
            }
        ]
    return {
        "id": result.key,
        "keyword": "Scenario",
        "name": result.scenario,
        "line": result.line,
        "type": "scenario",
        "tags": [{"name": f"@{result.criterion}"}] if result.criterion else [],
        "steps": steps,
    }


def _step_result(status: str, duration: float, result: ScenarioResult) -> dict[str, Any]:
    entry: dict[str, Any] = {"status": status, "duration": int(duration * _NANOS)}
    if status == "failed":
        entry["error_message"] = result.evidence or ""
    return entry


def _scenario_status(status: Status) -> str:
    return {
        Status.PASSED: "passed",
        Status.NOT_APPLICABLE: "skipped",
        Status.XFAIL: "skipped",
        Status.UNDEFINED: "undefined",
    }.get(status, "failed")
