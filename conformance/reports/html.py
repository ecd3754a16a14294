"""One self-contained HTML page for spec owners: statements, scenarios, verdicts, open questions."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from conformance.registry import Registry
from conformance.reports.summary import CriterionVerdict, criterion_verdicts, divergences
from conformance.results import ResultsRun, ScenarioResult, Status

_CSS = """
body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
.criterion{border:1px solid #ddd;border-radius:6px;padding:.6rem 1rem;margin:.8rem 0}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:4px;font-size:.85rem;color:#fff}
.passed{background:#2e7d32}.xfail,.not_applicable{background:#f9a825;color:#222}
.failed,.errored,.timeout,.xpass{background:#c62828}.undefined,.unverified{background:#6a1b9a}
.diverged{background:#ef6c00}.not_claimed{background:#9e9e9e}
ul.scenarios{margin:.4rem 0;padding-left:1.2rem}pre{background:#f6f6f6;padding:.5rem;overflow:auto}
"""


def render_html(
    run: ResultsRun, registry: Registry, quotes: Mapping[str, str] | None = None
) -> str:
    """`quotes`: the source words of clauses, by clause ID, from spec files the user gave."""
    verdicts = criterion_verdicts(run, registry)
    passed = sum(1 for v in verdicts if v.status is Status.PASSED)
    header = run.header
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Conformance: {escape(header.implementation)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Conformance of {escape(header.implementation)}</h1>",
        f"<p>{passed} of {len(verdicts)} criteria passed. Kit {escape(header.kit_version)}, "
        f"protocol {header.protocol_version}, started {escape(header.started_at.isoformat())}.</p>",
    ]
    by_id = {v.criterion.id: v for v in verdicts}
    for requirement in registry.requirements:
        parts.append(f"<h2>{escape(requirement.id)}: {escape(requirement.title)}</h2>")
        for criterion in registry.criteria_of(requirement.id):
            verdict = by_id[criterion.id]
            scenarios = "".join(_scenario(s, quotes or {}) for s in verdict.scenarios)
            review = (
                " <span class='badge xfail'>spec changed: needs review</span>"
                if criterion.id in run.header.needs_review
                else ""
            )
            parts.append(
                f"<div class='criterion' id='{escape(criterion.id)}'>"
                f"{_badge(verdict)}{review} "
                f"<strong>{escape(criterion.id)}</strong><p>{escape(criterion.statement)}</p>"
                f"<ul class='scenarios'>{scenarios}</ul></div>"
            )
    parts += _interpretations(run, registry)
    parts.append("<h2>Clauses no assertion can check through the port</h2><ul>")
    parts += [
        f"<li><strong>{escape(c.id)}</strong>: {escape(c.statement)} "
        f"<em>Why:</em> {escape(c.not_observable)}</li>"
        for c in registry.clauses
        if c.not_observable
    ]
    parts.append("</ul></body></html>")
    return "\n".join(parts) + "\n"


def _badge(verdict: CriterionVerdict) -> str:
    if not verdict.claimed:
        return f"<span class='badge not_claimed'>not claimed ({verdict.status.value})</span>"
    needs = verdict.missing_capabilities if verdict.status is Status.UNVERIFIED else []
    note = f" (needs {escape(', '.join(needs))})" if needs else ""
    return f"<span class='badge {verdict.status.value}'>{verdict.status.value}{note}</span>"


def _interpretations(run: ResultsRun, registry: Registry) -> list[str]:
    diverged = divergences(run)
    parts = ["<h2>Interpretations: open questions for the spec owners</h2><ul>"]
    for interpretation in registry.active_interpretations():
        links = ", ".join(
            f"<a href='#{escape(c)}'>{escape(c)}</a>" for c in interpretation.criteria
        )
        reading = escape(interpretation.reading)
        against = diverged.get(interpretation.id, [])
        note = (
            f" <span class='badge diverged'>read otherwise in {len(against)} scenario(s)</span>"
            if against
            else ""
        )
        parts.append(
            f"<li><strong>{escape(interpretation.id)}</strong> ({links}): {reading}{note}</li>"
        )
    parts.append("</ul>")
    retired = [i for i in registry.interpretations if not i.active]
    if retired:
        parts.append("<p>Retired readings:</p><ul>")
        parts += [f"<li><s>{escape(i.id)}</s>: {escape(i.retired or '')}</li>" for i in retired]
        parts.append("</ul>")
    return parts


def _scenario(result: ScenarioResult, quotes: Mapping[str, str]) -> str:
    badge = f"<span class='badge {result.status.value}'>{result.status.value}</span>"
    name = escape(result.scenario)
    if result.evidence:
        quoted = "".join(
            f"<blockquote>{escape(cite)}: {escape(quotes[cite])}</blockquote>"
            for cite in result.violated
            if cite in quotes
        )
        return (
            f"<li>{badge} <details><summary>{name}</summary>{quoted}"
            f"<pre>{escape(result.evidence)}</pre></details></li>"
        )
    return f"<li>{badge} {name}</li>"
