"""What a failed scenario's evidence says first: the step, the clause, expected vs observed.

A pytest traceback starts deep in pytest's fixture machinery; the line a person
needs is several lines down. So the recorder builds a `Failure` from the error
itself: the failing Gherkin step, the clauses its check cites with the kit's
statement of each, expected against observed as the check put it, and a trace
through the kit's own code only. Every report leads with it.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Final

import pytest
from hypothesis.errors import FlakyFailure
from pytest_bdd.exceptions import StepDefinitionNotFoundError

from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.driver import DriverError
from conformance.properties.gherkin import CRITERION_PLACEHOLDER, SCENARIO_NOTE
from conformance.spec.clause_check import ClauseViolation, PortViolation, ScenarioError
from conformance.spec.registry import default_registry
from conformance.stream.results import HYPOTHESIS_NOTES, FailedStep, Failure, Status

KIT_PACKAGES: Final = ("conformance", "steps", "reference", "mutants", "variants")
KIT_ROOT: Final = Path(__file__).resolve().parents[2]
"""The checkout, or site-packages for an installed kit: only the kit's packages count."""
TRACE_FRAMES: Final = 4


def failure_verdict(
    call: pytest.CallInfo[None], step: FailedStep | None, interpretations: list[str]
) -> tuple[Status, Failure, list[str]]:
    """The status, the failure as a person reads it, and what the failing check cited."""
    error = unreplayed_violation(call.excinfo.value if call.excinfo is not None else None)
    trace = kit_trace(call.excinfo.tb if call.excinfo is not None else None)

    def failure(observed: str, clauses: dict[str, str] | None = None) -> Failure:
        return Failure(
            step=step, phase=call.when, clauses=clauses or {}, observed=observed, trace=trace
        )

    if isinstance(error, ImplementationFault):
        status = Status.TIMEOUT if error.kind is FaultKind.TIMEOUT else Status.ERRORED
        return status, failure(error.evidence()), []
    if isinstance(error, StepDefinitionNotFoundError):
        return Status.UNDEFINED, failure(str(error)), []
    if isinstance(error, ScenarioError):
        return (
            Status.ERRORED,
            failure(f"the scenario is malformed (a defect of the kit): {error}"),
            [],
        )
    if isinstance(error, PortViolation):
        return Status.ERRORED, failure(f"the implementation broke the driver port: {error}"), []
    if call.when == "call" and isinstance(error, ClauseViolation):
        status, note = _violation_status(error, interpretations)
        return status, failure(note + error.detail, dict(error.statements)), list(error.cites)
    described = f"{type(error).__name__}: {error}" if error is not None else "no error recorded"
    if call.when == "call" and isinstance(error, AssertionError | DriverError):
        return Status.FAILED, failure(described), []
    if "Timeout" in str(error)[:20]:
        return Status.TIMEOUT, failure(described), []
    return Status.ERRORED, failure(described), []


def unreplayed_violation(error: BaseException | None) -> BaseException | None:
    """A property's check that failed once and did not fail when Hypothesis replayed it is
    still a defect the kit saw (an implementation that is not deterministic, a race): the
    violation itself, noted as not replayed, never an error of the kit; one that broke other
    clauses when replayed is a violation of them all, noted as such. Distinct failures a
    search found at once (Hypothesis raises them as a group) are one violation of them all."""
    if isinstance(error, BaseExceptionGroup) and not isinstance(error, FlakyFailure):
        return distinct_failures(error)
    if not isinstance(error, FlakyFailure):
        return error
    seen = [e for e in error.exceptions if isinstance(e, ClauseViolation)]
    if len(seen) > 1:
        joined = joined_violations(seen)
        joined.detail += (
            "\n(Hypothesis's replay of the same example broke other clauses: a race decides "
            "which, or the implementation is not deterministic)"
        )
        return joined
    if not seen:
        return error
    seen[0].detail += "\n(seen once; Hypothesis's replay of the same example did not fail again)"
    return seen[0]


def distinct_failures(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The group's clause violations as one, citing every clause any of them broke, each with
    its own counterexample (`parts`); a group holding none stays what it is (the kit's error)."""
    found = [
        violation
        for member in group.exceptions
        if isinstance(violation := unreplayed_violation(member), ClauseViolation)
    ]
    if not found:
        return group
    others = [
        m for m in group.exceptions if not isinstance(unreplayed_violation(m), ClauseViolation)
    ]
    if others:  # said beside the breaks, never instead of them
        found[0].detail += "\n(the same search also met: " + "; ".join(map(repr, others)) + ")"
    return found[0] if len(found) == 1 else joined_violations(found)


def joined_violations(found: list[ClauseViolation]) -> ClauseViolation:
    """Violations a search met apart, as one citing every clause any of them broke."""
    cites = tuple(dict.fromkeys(cite for violation in found for cite in violation.cites))
    allowed: dict[str, set[str]] = {}
    for violation in found:
        for question, names in violation.allowed.items():
            allowed.setdefault(question, set()).update(names)
    detail = "\n".join(
        f"failure {number} of {len(found)}: {violation.detail}"
        for number, violation in enumerate(found, start=1)
    )
    joined = ClauseViolation(cites, detail, default_registry(), allows=allowed)
    joined.readings_apart = all(violation.readings_apart for violation in found)
    joined.parts = tuple(found)
    return joined


def _violation_status(error: ClauseViolation, interpretations: list[str]) -> tuple[Status, str]:
    """Failed, or diverged when only readings were broken, or errored when the scenario rests
    on a reading it is not tagged with (the kit's defect); and a note that says which."""
    if not error.interpretations_only:
        return Status.FAILED, ""
    if not error.explained:
        return Status.FAILED, "no registered reading allows this answer: a break, not a reading\n"
    untagged = sorted(set(error.cites) - set(interpretations))
    if untagged:
        note = (
            f"the scenario rests on {', '.join(untagged)} but is not tagged with it "
            "(a defect of the kit): a divergence cannot be told from a failure here\n"
        )
        return Status.ERRORED, note
    return Status.DIVERGED, ""


def kit_trace(tb: object) -> str:
    """The last few frames of the traceback that lie in the kit's own code, innermost last."""
    if tb is None:
        return ""
    frames = [
        frame
        for frame in traceback.extract_tb(tb)  # type: ignore[arg-type]
        if _in_kit(Path(frame.filename))
    ][-TRACE_FRAMES:]
    return "\n".join(
        f"  {Path(frame.filename).resolve().relative_to(KIT_ROOT)}:{frame.lineno} in "
        f"{frame.name}\n    {frame.line or ''}".rstrip()
        for frame in frames
    )


def _in_kit(path: Path) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(KIT_ROOT / package) for package in KIT_PACKAGES)


def counterexample_of(error: BaseException | None) -> str:
    """A property's shrunk counterexample, from the notes Hypothesis attached to its error: the
    last Gherkin scenario the property noted, tagged with the criterion its error cites, then
    the rest of what Hypothesis noted (its program of steps, the reproduction blob) as Gherkin
    comments, so that the whole pastes into a feature file; without a scenario, the notes. For
    distinct failures a search found apart, each one's, headed by the clauses it broke."""
    parts = error.parts if isinstance(error, ClauseViolation) else ()
    if parts:
        return "\n\n".join(
            f"# Counterexample {number} of {len(parts)}, breaking {', '.join(part.cites)}:\n"
            f"{counterexample_of(part)}"
            for number, part in enumerate(parts, start=1)
        )
    notes = [str(note) for note in getattr(error, "__notes__", [])]
    scenarios = [n for n in notes if n.startswith(SCENARIO_NOTE)]
    if not scenarios:
        return "\n".join(notes)
    scenario = scenarios[-1].removeprefix(SCENARIO_NOTE).strip("\n")
    criterion = error.criterion if isinstance(error, ClauseViolation) else None
    tagged = scenario.replace(f"@{CRITERION_PLACEHOLDER}\n", f"@{criterion}\n" if criterion else "")
    others = [line for n in notes if not n.startswith(SCENARIO_NOTE) for line in n.splitlines()]
    if not others:
        return tagged
    said = "\n".join(f"  # {line}".rstrip() for line in others)
    return f"{tagged}\n{HYPOTHESIS_NOTES}\n{said}"
