"""An SVG badge per implementation ("conformance 38/38"), as shields.io and Bowtie draw them."""

from __future__ import annotations

from html import escape
from typing import Final

from conformance.reports.summary import criterion_verdicts, run_succeeded
from conformance.spec.registry import Registry
from conformance.stream.results import ResultsRun, Status

_CHAR_PX: Final = 7
_PAD_PX: Final = 10
_GREEN, _RED, _ORANGE = "#2e7d32", "#c62828", "#ef6c00"


def render_badge(run: ResultsRun, registry: Registry, label: str = "conformance") -> str:
    """The claimed criteria that passed, of all claimed; green only for a successful run."""
    claimed = [v for v in criterion_verdicts(run, registry) if v.claimed]
    passed = sum(1 for verdict in claimed if verdict.status is Status.PASSED)
    value = f"{passed}/{len(claimed)}"
    shard = run.header.shard
    if shard is not None:  # a part judges only what it holds: never a red count of the whole
        value = f"part {shard.index} of {shard.count}: {'passed' if passed else 'nothing'}"
        if not run_succeeded(run, registry):
            value = f"part {shard.index} of {shard.count}: failed"
    colour = _GREEN if run_succeeded(run, registry) else _ORANGE if passed else _RED
    left, right = (len(text) * _CHAR_PX + 2 * _PAD_PX for text in (label, value))
    width = left + right
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='20' role='img' "
        f"aria-label='{escape(label)}: {value}'><title>{escape(label)}: {value}</title>"
        f"<rect width='{left}' height='20' fill='#555'/>"
        f"<rect x='{left}' width='{right}' height='20' fill='{colour}'/>"
        "<g fill='#fff' text-anchor='middle' font-family='Verdana,DejaVu Sans,sans-serif' "
        f"font-size='11'><text x='{left / 2}' y='14'>{escape(label)}</text>"
        f"<text x='{left + right / 2}' y='14'>{value}</text></g></svg>\n"
    )
