"""The living spec page: one self-contained HTML file a spec owner and an implementer read.

Per requirement and criterion: the verdict, the kit's statement of the criterion
and of each clause (with the spec's own words when the spec file was given),
the interpretations it rests on, and every scenario with its steps coloured by
status, an outline row by its example values, and the evidence open for a
failure. Totals per verdict double as filters; a search box filters by
criterion, clause, interpretation or scenario text. No script or style is
fetched from anywhere: the page works from a file, offline, in any browser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from html import escape
from typing import Final

from conformance.reports.summary import (
    CriterionVerdict,
    claim_failures,
    claim_headline,
    criterion_verdicts,
    divergences,
    of_property,
    readings_of,
    records_said,
    run_succeeded,
)
from conformance.spec.registry import Registry, short_id
from conformance.stream.results import FAILING, ResultsRun, ScenarioResult, Status, StepResult
from conformance.verdicts import ClauseState, ClauseVerdict

_CSS = """
body{font-family:system-ui,sans-serif;max-width:74rem;margin:1.5rem auto;padding:0 1rem;color:#222}
h1{font-size:1.45rem}h2{font-size:1.15rem;margin-top:1.8rem;border-bottom:1px solid #ccc}
.criterion{border:1px solid #ddd;border-radius:6px;padding:.5rem 1rem;margin:.7rem 0}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:4px;font-size:.8rem;color:#fff}
.passed{background:#2e7d32}.xfail,.not_applicable{background:#f9a825;color:#222}
.failed,.errored,.timeout,.xpass{background:#c62828}.undefined,.unverified{background:#6a1b9a}
.diverged{background:#ef6c00}.not_claimed,.out_of_scope{background:#9e9e9e}.skipped{background:#bdbdbd;color:#222}
.filters{position:sticky;top:0;background:#fff;padding:.5rem 0;border-bottom:1px solid #eee}
.filters button{border:0;border-radius:4px;margin:.1rem;padding:.25rem .6rem;cursor:pointer}
.filters button.off{opacity:.35}.filters input{padding:.25rem;width:22rem}
.clauses{font-size:.9rem;color:#444;margin:.3rem 0}.clauses li{margin:.15rem 0}
.scenario{margin:.3rem 0}.scenario summary{cursor:pointer}
ol.steps{font-family:ui-monospace,monospace;font-size:.85rem;margin:.3rem 0}
ol.steps li.step-passed{color:#2e7d32}ol.steps li.step-failed{color:#c62828;font-weight:bold}
ol.steps li.step-skipped{color:#9e9e9e}ol.steps li.step-undefined{color:#6a1b9a}
.headline{color:#c62828;font-weight:bold}.example{color:#555;font-size:.85rem}
pre{background:#f6f6f6;padding:.5rem;overflow:auto;font-size:.8rem;white-space:pre-wrap}
blockquote{border-left:3px solid #ccc;margin:.3rem 0;padding-left:.6rem;color:#555}
"""

_SCRIPT = """
const every = %s;
const shown = new Set(%s);
// A link can preset the filters: #verdicts=failed,errored&search=001.2 (or verdicts=all), or
// name a criterion (#AC-...), which is then shown whatever its verdict.
const fragment = location.hash.slice(1);
const preset = new URLSearchParams(fragment);
if (preset.has('verdicts')) {
  shown.clear();
  const asked = preset.get('verdicts');
  (asked === 'all' ? every : asked.split(',')).forEach(v => shown.add(v));
}
if (preset.has('search')) document.getElementById('search').value = preset.get('search');
let wanted = fragment;
try { wanted = decodeURIComponent(fragment); } catch (error) { /* a stray per-cent sign */ }
const named = wanted && document.getElementById(wanted);
if (named && named.classList.contains('criterion')) shown.add(named.dataset.verdict);
document.getElementById('all').addEventListener('click', () => {
  every.forEach(v => shown.add(v));
  apply();
});
function apply() {
  const words = document.getElementById('search').value.toLowerCase();
  for (const card of document.querySelectorAll('.criterion')) {
    const visible = shown.has(card.dataset.verdict) &&
      (!words || card.dataset.search.includes(words));
    card.hidden = !visible;
  }
  for (const button of document.querySelectorAll('.filters button[data-verdict]')) {
    button.classList.toggle('off', !shown.has(button.dataset.verdict));
  }
  document.getElementById('shown').textContent =
    document.querySelectorAll('.criterion:not([hidden])').length;
}
for (const button of document.querySelectorAll('.filters button[data-verdict]')) {
  button.addEventListener('click', () => {
    const verdict = button.dataset.verdict;
    shown.has(verdict) ? shown.delete(verdict) : shown.add(verdict);
    apply();
  });
}
document.getElementById('search').addEventListener('input', apply);
apply();
if (named) named.scrollIntoView();
"""


def render_html(
    run: ResultsRun, registry: Registry, quotes: Mapping[str, str] | None = None
) -> str:
    """`quotes`: the source words of clauses, by clause ID, from spec files the user gave."""
    verdicts = criterion_verdicts(run, registry)
    header = run.header
    title = f"Conformance of {header.implementation}"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        _summary(run, verdicts, registry),
        _filters(verdicts),
    ]
    by_id = {verdict.criterion.id: verdict for verdict in verdicts}
    for requirement in registry.requirements:
        parts.append(f"<h2>{escape(requirement.id)}: {escape(requirement.title)}</h2>")
        mine = [by_id[criterion.id] for criterion in registry.criteria_of(requirement.id)]
        parts += [_criterion(verdict, registry, run, quotes or {}) for verdict in mine]
        parts.append(_property_checks(requirement.id, mine))
    parts += _interpretations(run, registry)
    parts.append("<h2>Clauses no assertion can check through the port</h2><ul>")
    parts += [
        f"<li><strong>{escape(c.id)}</strong>: {escape(c.statement)} "
        f"<em>Why:</em> {escape(c.not_observable)}</li>"
        for c in registry.clauses
        if c.not_observable
    ]
    statuses = sorted({_verdict_key(verdict) for verdict in verdicts})
    leading = [key for key in statuses if key in ATTENTION] or statuses
    parts.append(f"</ul><script>{_SCRIPT % (statuses, leading)}</script></body></html>")
    return "\n".join(parts) + "\n"


def _summary(run: ResultsRun, verdicts: list[CriterionVerdict], registry: Registry) -> str:
    header = run.header
    provenance = header.provenance
    where = (
        f" Kit {escape(header.kit_version)} ({escape(provenance.kit_commit or 'no commit')}), "
        f"on {escape(provenance.host)}, Python {escape(provenance.python)}"
        f"{', sandboxed' if provenance.sandbox else ''}."
        if provenance
        else f" Kit {escape(header.kit_version)}."
    )
    return (
        f"{_run_verdict(run, registry)}"
        f"<p id='totals'><strong>It {escape(claim_headline(run, verdicts))}.</strong> "
        f"{escape(records_said(run))}. Protocol {header.protocol_version}, started "
        f"{escape(header.started_at.isoformat())}.{where}</p>"
    )


def _run_verdict(run: ResultsRun, registry: Registry) -> str:
    """The run's own verdict first, with every reason it fails that no scenario shows (an
    unverified claimed criterion, ...): a page of green criteria must not hide a failed run."""
    said = "".join(
        f"<p class='headline'>{escape(failure.reason)}</p>"
        for failure in claim_failures(run, registry)
    )
    verdict = "passed" if run_succeeded(run, registry) else "failed"
    return f"<p id='verdict'><span class='badge {verdict}'>run {verdict}</span></p>{said}"


ATTENTION: Final = frozenset(
    {"failed", "errored", "timeout", "xpass", "undefined", "unverified", "diverged"}
)
"""The verdicts the page opens on, when any criterion has one: what fails comes first, the rest
one click away (`show all`)."""


def _filters(verdicts: list[CriterionVerdict]) -> str:
    counted = Counter(_verdict_key(verdict) for verdict in verdicts)
    buttons = "".join(
        f"<button class='{escape(key)}' data-verdict='{escape(key)}'>"
        f"{escape(key.replace('_', ' '))} ({count})</button>"
        for key, count in sorted(counted.items())
    )
    return (
        "<div class='filters'>Show criteria: "
        f"{buttons} <input id='search' type='search' placeholder="
        "'filter by criterion, clause, interpretation or scenario'>"
        " <span id='shown'></span> shown <button id='all'>show all</button></div>"
    )


def _verdict_key(verdict: CriterionVerdict) -> str:
    return verdict.status.value if verdict.claimed else "out_of_scope"


def _criterion(
    verdict: CriterionVerdict, registry: Registry, run: ResultsRun, quotes: Mapping[str, str]
) -> str:
    criterion = verdict.criterion
    readings = [i for i in registry.active_interpretations() if criterion.id in i.criteria]
    review = (
        " <span class='badge xfail'>spec changed: needs review</span>"
        if criterion.id in run.header.needs_review
        else ""
    )
    rests_on = (
        "<p class='clauses'>Rests on: "
        + "; ".join(f"<strong>{escape(i.id)}</strong>: {escape(i.reading)}" for i in readings)
        + "</p>"
        if readings
        else ""
    )
    searchable = " ".join(
        [criterion.id, criterion.statement]
        + [clause.id for clause in criterion.clauses]
        + [i.id for i in readings]
        + [result.title or result.scenario for result in verdict.scenarios]
    ).lower()
    scenarios = "".join(
        _scenario(result, quotes) for result in verdict.scenarios if not of_property(result)
    )
    return (
        f"<div class='criterion' id='{escape(criterion.id)}' "
        f"data-verdict='{_verdict_key(verdict)}' data-search='{escape(searchable)}'>"
        f"{_badge(verdict)}{review} <strong>{escape(criterion.id)}</strong>"
        f"<p>{escape(criterion.statement)}</p>{_clauses(verdict, quotes)}{rests_on}"
        f"<div class='scenarios'>{scenarios}</div>{_checked_by_properties(verdict)}</div>"
    )


def _checked_by_properties(verdict: CriterionVerdict) -> str:
    """One line naming the property checks that judged this criterion, each with its record's
    verdict; their accounts stand once, under the requirement (see `_property_checks`)."""
    records = [result for result in verdict.scenarios if of_property(result)]
    if not records:
        return ""
    named = ", ".join(
        f"{escape(result.scenario)} <em>({result.status.value})</em>" for result in records
    )
    link = f"<a href='#checks-{escape(verdict.criterion.requirement)}'>property checks</a>"
    return f"<p class='clauses'>Also judged by {link}: {named}</p>"


def _property_checks(requirement: str, verdicts: list[CriterionVerdict]) -> str:
    """The property checks that judged this requirement's criteria, each once: what it made
    of each of those criteria, and its account where it did not pass (a record per criterion
    it names, shown under every criterion, repeated one counterexample many times)."""
    checks: dict[tuple[str, str], list[ScenarioResult]] = {}
    for verdict in verdicts:
        for result in verdict.scenarios:
            if of_property(result):
                checks.setdefault((result.feature, result.scenario), []).append(result)
    if not checks:
        return ""
    parts = [f"<div class='checks' id='checks-{escape(requirement)}'><h3>Property checks</h3>"]
    for (_, title), records in checks.items():
        per_criterion = ", ".join(
            f"{escape(short_id(r.criterion or ''))} <em>{r.status.value}</em>" for r in records
        )
        failing = sorted(records, key=lambda r: r.shown_status not in FAILING)
        told = next((r for r in failing if r.failure is not None), None)
        passed = any(r.status is Status.PASSED for r in records)
        status = told.shown_status if told else Status.PASSED if passed else records[0].status
        badge = f"<span class='badge {status.value}'>{status.value}</span>"
        evidence = f"<pre>{escape(told.evidence or '')}</pre>" if told else ""
        opened = " open" if told else ""
        parts.append(
            f"<details class='scenario'{opened}><summary>{badge} {escape(title)}</summary>"
            f"<p class='clauses'>{per_criterion}</p>{evidence}</details>"
        )
    return "".join(parts) + "</div>"


def _clauses(verdict: CriterionVerdict, quotes: Mapping[str, str]) -> str:
    """Each clause with what the evidence made of it (verified, broken, unexercised and why)."""
    judged = {clause.clause: clause for clause in verdict.clauses}
    items = "".join(
        f"<li><strong>{escape(clause.id.partition('/')[2])}</strong>: {escape(clause.statement)}"
        + _clause_state(judged.get(clause.id))
        + (f"<blockquote>{escape(quotes[clause.id])}</blockquote>" if clause.id in quotes else "")
        + "</li>"
        for clause in verdict.criterion.clauses
    )
    return f"<ul class='clauses'>{items}</ul>" if items else ""


def _clause_state(judged: ClauseVerdict | None) -> str:
    if judged is None:
        return ""
    why = f": {judged.reason}" if judged.state is ClauseState.UNEXERCISED else ""
    return f" <em>({escape(judged.state.value + why)})</em>"


def _badge(verdict: CriterionVerdict) -> str:
    if not verdict.claimed:
        return f"<span class='badge not_claimed'>out of scope ({verdict.status.value})</span>"
    needs = verdict.missing_capabilities if verdict.status is Status.UNVERIFIED else []
    note = f" (needs {escape(', '.join(needs))})" if needs else ""
    return f"<span class='badge {verdict.status.value}'>{verdict.status.value}{note}</span>"


def _scenario(result: ScenarioResult, quotes: Mapping[str, str]) -> str:
    badge = f"<span class='badge {result.status.value}'>{result.status.value}</span>"
    name = escape(result.title or result.scenario)
    example = (
        "<span class='example'> — "
        + escape(", ".join(f"{k} = {v}" for k, v in result.example.items()))
        + "</span>"
        if result.example
        else ""
    )
    headline = (
        f"<div class='headline'>{escape(result.failure.headline)}</div>" if result.failure else ""
    )
    quoted = "".join(
        f"<blockquote>{escape(cite)}: {escape(quotes[cite])}</blockquote>"
        for cite in result.violated
        if cite in quotes
    )
    steps = "".join(_step(step) for step in result.steps)
    evidence = f"<pre>{escape(result.evidence)}</pre>" if result.evidence else ""
    opened = " open" if result.status in FAILING | {Status.DIVERGED} else ""
    return (
        f"<details class='scenario' data-status='{result.status.value}'{opened}>"
        f"<summary>{badge} {name}{example}</summary>{headline}{quoted}"
        f"<ol class='steps'>{steps}</ol>{evidence}</details>"
    )


def _step(step: StepResult) -> str:
    return (
        f"<li class='step-{step.status}' title='{step.status}, line {step.line}'>"
        f"{escape(step.keyword)} {escape(step.text)}</li>"
    )


def _interpretations(run: ResultsRun, registry: Registry) -> list[str]:
    diverged = divergences(run)
    readings = readings_of(run)
    parts = ["<h2>Interpretations: open questions for the spec owners</h2><ul>"]
    for interpretation in registry.active_interpretations():
        links = ", ".join(
            f"<a href='#{escape(c)}'>{escape(c)}</a>" for c in interpretation.criteria
        )
        against = diverged.get(interpretation.id, [])
        note = (
            f" <span class='badge diverged'>read otherwise in {len(against)} scenario(s)</span>"
            if against
            else ""
        )
        own = readings.get(interpretation.id)
        if own is not None:
            note += f" <em>The implementation {escape(own)}.</em>"
        parts.append(
            f"<li><strong>{escape(interpretation.id)}</strong> ({links}): "
            f"{escape(interpretation.reading)}{note}</li>"
        )
    parts.append("</ul>")
    retired = [i for i in registry.interpretations if not i.active]
    if retired:
        parts.append("<p>Retired readings:</p><ul>")
        parts += [f"<li><s>{escape(i.id)}</s>: {escape(i.retired or '')}</li>" for i in retired]
        parts.append("</ul>")
    return parts
