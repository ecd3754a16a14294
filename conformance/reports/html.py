"""One self-contained HTML page for spec owners: statements, scenarios, verdicts, open questions."""

from __future__ import annotations

from html import escape

from conformance.registry import Registry
from conformance.reports.summary import criterion_verdicts
from conformance.results import ResultsRun, ScenarioResult, Status

_CSS = """
body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
.criterion{border:1px solid #ddd;border-radius:6px;padding:.6rem 1rem;margin:.8rem 0}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:4px;font-size:.85rem;color:#fff}
.passed{background:#2e7d32}.xfail,.not_applicable{background:#f9a825;color:#222}
.failed,.errored,.timeout,.xpass{background:#c62828}.undefined{background:#6a1b9a}
ul.scenarios{margin:.4rem 0;padding-left:1.2rem}pre{background:#f6f6f6;padding:.5rem;overflow:auto}
"""


def render_html(run: ResultsRun, registry: Registry) -> str:
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
            scenarios = "".join(_scenario(s) for s in verdict.scenarios)
            review = (
                " <span class='badge xfail'>spec changed: needs review</span>"
                if criterion.id in run.header.needs_review
                else ""
            )
            parts.append(
                f"<div class='criterion' id='{escape(criterion.id)}'>"
                f"<span class='badge {verdict.status.value}'>{verdict.status.value}</span>{review} "
                f"<strong>{escape(criterion.id)}</strong><p>{escape(criterion.statement)}</p>"
                f"<ul class='scenarios'>{scenarios}</ul></div>"
            )
    parts.append("<h2>Interpretations: open questions for the spec owners</h2><ul>")
    for interpretation in registry.interpretations:
        links = ", ".join(
            f"<a href='#{escape(c)}'>{escape(c)}</a>" for c in interpretation.criteria
        )
        reading = escape(interpretation.reading)
        parts.append(f"<li><strong>{escape(interpretation.id)}</strong> ({links}): {reading}</li>")
    parts.append("</ul></body></html>")
    return "\n".join(parts) + "\n"


def _scenario(result: ScenarioResult) -> str:
    badge = f"<span class='badge {result.status.value}'>{result.status.value}</span>"
    name = escape(result.scenario)
    if result.evidence:
        return (
            f"<li>{badge} <details><summary>{name}</summary>"
            f"<pre>{escape(result.evidence)}</pre></details></li>"
        )
    return f"<li>{badge} {name}</li>"
