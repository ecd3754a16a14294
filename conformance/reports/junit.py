"""JUnit XML: one test suite per feature file, one test case per scenario, and a `claim` suite.

A CI publishes this file as a check run, so its failures must be the run's: the `claim` suite
holds a failed case for each reason the run fails that no scenario shows (a claimed criterion
left unverified, an integrity breach, ...) and one passed case when the claim holds; a scenario
outside the claim is left out, as the run's verdict ignores it (the claim's case names the scope).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Final

from conformance.reports.summary import claim_failures, claim_headline, criterion_verdicts
from conformance.spec.registry import Registry
from conformance.stream.results import ResultsRun, ScenarioResult, Status

_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry at all, not even escaped (an implementation's colour codes)."""


def render_junit(run: ResultsRun, registry: Registry) -> str:
    """A record outside the run's claim is left out: it cannot fail the run, and hundreds of
    skipped cases would bury the claim's own (the `claim` suite says what is out of scope)."""
    by_feature: dict[str, list[ScenarioResult]] = defaultdict(list)
    claim = run.header.claim
    for result in run.scenarios:
        if result.criterion is None or claim.covers(result.criterion):
            by_feature[result.feature].append(result)
    root = ET.Element("testsuites", name=f"conformance: {run.header.implementation}")
    for feature, results in sorted(by_feature.items()):
        suite = ET.SubElement(root, "testsuite", name=feature, tests=str(len(results)))
        counts = {"failures": 0, "errors": 0, "skipped": 0}
        for result in results:
            kind = _add_case(suite, result, run)
            if kind:
                counts[kind] += 1
        for name, count in counts.items():
            suite.set(name, str(count))
        suite.set("time", f"{sum(r.duration_s for r in results):.3f}")
    _add_claim(root, run, registry)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _headline(result: ScenarioResult) -> str:
    """The one line a CI's test view shows: expected vs observed, else the status."""
    if result.failure is not None:
        return f"{result.status.value}: {result.failure.headline}"
    return result.status.value


def _add_claim(root: ET.Element, run: ResultsRun, registry: Registry) -> None:
    """The claim's own suite: a failed case per reason it is not met, else one passed case."""
    failures = claim_failures(run, registry)
    suite = ET.SubElement(root, "testsuite", name="claim", tests=str(max(1, len(failures))))
    suite.set("failures", str(len(failures)))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suite.set("time", "0.000")
    if not failures:
        headline = claim_headline(run, criterion_verdicts(run, registry))
        ET.SubElement(suite, "testcase", classname="claim", name=headline, time="0.000")
    for failure in failures:
        reason = _NOT_XML.sub("\ufffd", failure.reason)
        case = ET.SubElement(suite, "testcase", classname=failure.subject, name=reason)
        case.set("time", "0.000")
        ET.SubElement(case, "failure", message=reason, type="claim").text = reason


def _add_case(suite: ET.Element, result: ScenarioResult, run: ResultsRun) -> str | None:
    """A divergence counts as a failure under --strict-interpretations."""
    case = ET.SubElement(
        suite,
        "testcase",
        classname=result.criterion or "untagged",
        name=result.key,
        time=f"{result.duration_s:.3f}",
    )
    message = _NOT_XML.sub("\ufffd", result.evidence or result.status.value)
    headline = _NOT_XML.sub("\ufffd", _headline(result))
    strict = run.header.claim.strict_interpretations
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
