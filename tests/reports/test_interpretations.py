"""The interpretations register reaches the spec owners: every reading is in both human reports."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape

from conformance.reports.html import render_html
from conformance.reports.markdown import render_markdown
from conformance.spec.registry import default_registry
from conformance.stream.results import Header, ResultsRun

RUN = ResultsRun(
    header=Header(
        kit_version="test",
        protocol_version=1,
        spec_hashes={},
        implementation="reference",
        description=None,
        database=None,
        seed=None,
        started_at=datetime(2026, 3, 2, tzinfo=UTC),
    ),
    scenarios=[],
    footer=None,
)


def test_both_capabilities_have_interpretations_on_record() -> None:
    ids = {interpretation.id for interpretation in default_registry().interpretations}
    assert {"WR-1", "WR-12", "OF-1"} <= ids


def test_markdown_lists_every_interpretation_as_an_open_question() -> None:
    text = render_markdown(RUN, default_registry())
    section = text.split("### Interpretations (open questions for the spec owners)", 1)[1]
    for interpretation in default_registry().active_interpretations():
        line = f"- **{interpretation.id}** ({', '.join(interpretation.criteria)}): "
        assert line + interpretation.reading in section


def test_html_lists_every_interpretation_linked_to_its_criteria() -> None:
    page = render_html(RUN, default_registry())
    section = page.split("Interpretations: open questions for the spec owners", 1)[1]
    for interpretation in default_registry().active_interpretations():
        assert f"<strong>{escape(interpretation.id)}</strong>" in section
        assert escape(interpretation.reading) in section
        for criterion in interpretation.criteria:
            assert f"<a href='#{escape(criterion)}'>" in section
