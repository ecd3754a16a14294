"""Markdown for CI job summaries and pull-request comments."""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape

from conformance.reports.summary import (
    CriterionVerdict,
    claim_failures,
    claim_headline,
    criterion_verdicts,
    divergences,
    out_of_scope_line,
    readings_of,
    record_name,
    records_said,
    run_succeeded,
    scenarios_cell,
)
from conformance.spec.registry import Registry
from conformance.stream.results import ResultsRun, ScenarioResult, Status, attention

ICON = {
    Status.PASSED: "✅",
    Status.XFAIL: "⚠️",
    Status.NOT_APPLICABLE: "➖",
    Status.FAILED: "❌",
    Status.ERRORED: "💥",
    Status.TIMEOUT: "⏱️",
    Status.XPASS: "❗",
    Status.UNDEFINED: "❓",
    Status.DIVERGED: "🔀",
    Status.UNVERIFIED: "❔",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _search_said(run: ResultsRun) -> list[str]:
    """The property checks' search, so that a run can be repeated, or pinned in an
    expectations file (docs/expectations.md)."""
    seed = run.header.seed
    if seed is None:
        return []
    budget = run.header.properties
    return [f"Property checks: budget {budget}, seed {seed} (`--seed {seed}` repeats them).", ""]


def render_markdown(
    run: ResultsRun, registry: Registry, quotes: Mapping[str, str] | None = None
) -> str:
    """`quotes`: the source words of clauses, by clause ID, from spec files the user gave."""
    verdicts = criterion_verdicts(run, registry)
    outcome = "passed" if run_succeeded(run, registry) else "did not pass"
    shard = run.header.shard
    part = f" (part {shard.index} of {shard.count})" if shard is not None else ""
    lines = [
        f"## Conformance: {run.header.implementation}{part} {outcome}",
        "",
        f"It {claim_headline(run, verdicts)}; {records_said(run)}.",
        "",
        *_search_said(run),
        *_claim_not_met(run, registry),
        "| | criterion | scenarios | statement |",
        "|---|---|---|---|",
    ]
    for verdict in (verdict for verdict in verdicts if verdict.claimed):
        review = (
            " (spec changed: needs review)"
            if verdict.criterion.id in run.header.needs_review
            else ""
        )
        lines.append(
            f"| {_verdict_cell(verdict)}{review} | {verdict.criterion.id} "
            f"| {scenarios_cell(verdict)} | {_cell(verdict.criterion.statement)} |"
        )
    outside = out_of_scope_line(run, verdicts)
    lines += ["", outside] if outside else []
    problems = attention(run, quiet=(Status.PASSED, Status.NOT_APPLICABLE))
    if problems:
        lines += ["", "### Scenarios that need attention", ""]
        for result in problems:
            failure = result.failure
            headline = f" — {escape(failure.headline, quote=False)}" if failure else ""
            evidence = result.evidence or ""
            fence = "`" * max(3, 1 + max(map(len, re.findall("`+", evidence)), default=0))
            lines.append(
                f"<details><summary>{ICON[result.shown_status]} {result.shown_status.value}: "
                f"{escape(_cell(record_name(result)), quote=False)}{_cell(headline)}</summary>\n\n"
                f"{_quoted(result.violated, quotes or {})}"
                f"{fence}\n{evidence}\n{fence}\n</details>"
            )
    diverged = divergences(run)
    readings = readings_of(run)
    lines += ["", "### Interpretations (open questions for the spec owners)", ""]
    lines += [
        f"- **{i.id}** ({', '.join(i.criteria)}): {i.reading}{_divergence_note(diverged, i.id)}"
        + (f" *The implementation {readings[i.id]}.*" if i.id in readings else "")
        for i in registry.active_interpretations()
        if any(run.header.claim.covers(criterion) for criterion in i.criteria)
    ]
    retired = [
        i
        for i in registry.interpretations
        if not i.active and any(run.header.claim.covers(c) for c in i.criteria)
    ]
    if retired:
        lines += ["", "Retired readings (no longer taken): "]
        lines += [f"- ~~{i.id}~~: {i.retired}" for i in retired]
    unobservable = [
        c for c in registry.clauses if c.not_observable and run.header.claim.covers(c.criterion)
    ]
    lines += ["", "### Clauses no assertion can check through the port", ""]
    lines += [f"- **{c.id}**: {c.statement} *Why:* {c.not_observable}" for c in unobservable]
    return "\n".join(lines) + "\n"


def _claim_not_met(run: ResultsRun, registry: Registry) -> list[str]:
    """Why the run fails beyond its failed scenarios, first: a table of green rows and one
    unverified criterion must not read as a pass."""
    failures = claim_failures(run, registry)
    if not failures:
        return []
    lines = ["**The claim is not met:**", ""]
    lines += [f"- ❌ {escape(_cell(failure.reason), quote=False)}" for failure in failures]
    return [*lines, ""]


def _verdict_cell(verdict: CriterionVerdict) -> str:
    if not verdict.claimed:
        return f"out of scope ({verdict.status.value})"
    cell = f"{ICON[verdict.status]} {verdict.status.value}"
    if verdict.status is Status.UNVERIFIED and verdict.missing_capabilities:
        cell += f" (needs {', '.join(verdict.missing_capabilities)})"
    return cell


def _divergence_note(diverged: Mapping[str, list[ScenarioResult]], interpretation: str) -> str:
    results = diverged.get(interpretation, [])
    if not results:
        return ""
    return f" **This implementation reads it otherwise** in {len(results)} scenario(s): " + (
        "; ".join(_cell(record_name(result)) for result in results)
    )


def _quoted(cites: list[str], quotes: Mapping[str, str]) -> str:
    """The spec's own words for each cited clause, when the user gave the spec file."""
    return "".join(f"> {cite}: {quotes[cite]}\n\n" for cite in cites if cite in quotes)
