"""Markdown for CI job summaries and pull-request comments."""

from __future__ import annotations

from conformance.registry import Registry
from conformance.reports.summary import criterion_verdicts, run_succeeded
from conformance.results import ResultsRun, Status, totals

ICON = {
    Status.PASSED: "✅",
    Status.XFAIL: "⚠️",
    Status.NOT_APPLICABLE: "➖",
    Status.FAILED: "❌",
    Status.ERRORED: "💥",
    Status.TIMEOUT: "⏱️",
    Status.XPASS: "❗",
    Status.UNDEFINED: "❓",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(run: ResultsRun, registry: Registry) -> str:
    verdicts = criterion_verdicts(run, registry)
    passed = sum(1 for v in verdicts if v.status is Status.PASSED)
    outcome = "passed" if run_succeeded(run, registry) else "did not pass"
    lines = [
        f"## Conformance: {run.header.implementation} {outcome}",
        "",
        f"{passed} of {len(verdicts)} criteria passed. Scenarios: "
        + ", ".join(f"{n} {s.value}" for s, n in totals(run.scenarios).items() if n)
        + ".",
        "",
        "| | criterion | scenarios | statement |",
        "|---|---|---|---|",
    ]
    for verdict in verdicts:
        ok = sum(1 for s in verdict.scenarios if s.status is Status.PASSED)
        review = (
            " (spec changed: needs review)"
            if verdict.criterion.id in run.header.needs_review
            else ""
        )
        lines.append(
            f"| {ICON[verdict.status]} {verdict.status.value}{review} | {verdict.criterion.id} "
            f"| {ok}/{len(verdict.scenarios)} | {_cell(verdict.criterion.statement)} |"
        )
    problems = [s for s in run.scenarios if s.status not in (Status.PASSED, Status.NOT_APPLICABLE)]
    if problems:
        lines += ["", "### Scenarios that need attention", ""]
        for result in problems:
            lines.append(
                f"<details><summary>{ICON[result.status]} {result.status.value}: "
                f"{_cell(result.key)}</summary>\n\n```\n{result.evidence or ''}\n```\n</details>"
            )
    lines += ["", "### Interpretations (open questions for the spec owners)", ""]
    lines += [
        f"- **{i.id}** ({', '.join(i.criteria)}): {i.reading}" for i in registry.interpretations
    ]
    return "\n".join(lines) + "\n"
