"""JUnit XML: one test suite per feature file, one test case per scenario."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Final

from conformance.stream.results import ResultsRun, ScenarioResult, Status

_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry at all, not even escaped (an implementation's colour codes)."""


def render_junit(run: ResultsRun) -> str:
    by_feature: dict[str, list[ScenarioResult]] = defaultdict(list)
    for result in run.scenarios:
        by_feature[result.feature].append(result)
    root = ET.Element("testsuites", name=f"conformance: {run.header.implementation}")
    for feature, results in sorted(by_feature.items()):
        suite = ET.SubElement(root, "testsuite", name=feature, tests=str(len(results)))
        counts = {"failures": 0, "errors": 0, "skipped": 0}
        for result in results:
            kind = _add_case(suite, result, run.header.claim.strict_interpretations)
            if kind:
                counts[kind] += 1
        for name, count in counts.items():
            suite.set(name, str(count))
        suite.set("time", f"{sum(r.duration_s for r in results):.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _headline(result: ScenarioResult) -> str:
    """The one line a CI's test view shows: expected vs observed, else the status."""
    if result.failure is not None:
        return f"{result.status.value}: {result.failure.headline}"
    return result.status.value


def _add_case(suite: ET.Element, result: ScenarioResult, strict: bool) -> str | None:
    """`strict`: a divergence counts as a failure (--strict-interpretations)."""
    case = ET.SubElement(
        suite,
        "testcase",
        classname=result.criterion or "untagged",
        name=result.key,
        time=f"{result.duration_s:.3f}",
    )
    message = _NOT_XML.sub("\ufffd", result.evidence or result.status.value)
    headline = _NOT_XML.sub("\ufffd", _headline(result))
    if result.status in (Status.FAILED, Status.XPASS):
        ET.SubElement(case, "failure", message=headline, type=result.status.value).text = message
        return "failures"
    if result.status in (Status.ERRORED, Status.TIMEOUT, Status.UNDEFINED):
        ET.SubElement(case, "error", message=headline, type=result.status.value).text = message
        return "errors"
    if result.status is Status.DIVERGED and strict:
        ET.SubElement(case, "failure", message=headline, type=result.status.value).text = message
        return "failures"
    if result.status in (Status.NOT_APPLICABLE, Status.XFAIL, Status.DIVERGED):
        ET.SubElement(case, "skipped", message=f"{result.status.value}: {message}")
        return "skipped"
    return None
