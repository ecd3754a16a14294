"""A scenario's verdict once the checks of readings it noted are weighed in (see `ReadingLog`).

A scenario goes on past a failed check of an open question, so its end says little alone:
it may have passed every clause check after a divergence, failed a clause after one, or been
unable to go on (a step that needs the kit's reading of the question to proceed). The rules:

- a failed clause check fails the scenario, whatever was noted before it, and so does a failed
  check of readings whose answer no reading the implementation may follow allows;
- otherwise any noted divergence makes it `diverged`, citing every reading it diverged on;
- a check set aside under a reading the implementation declared changes nothing: the scenario
  passes when every other check did, and its evidence names the declared reading;
- a scenario that could not go on past a check of a declared reading verified nothing more:
  `not_applicable`, never passed.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.adapters.faults import ImplementationFault
from conformance.driver import DriverError
from conformance.spec.clause_check import ClauseViolation, PortViolation, ReadingLog
from conformance.stream.results import FailedStep, Failure, Status


@dataclass(frozen=True)
class Weighed:
    status: Status
    violated: list[str]
    note: str
    """What the evidence adds: the divergences noted, the checks set aside, and why."""


def weighed(
    status: Status, violated: list[str], error: BaseException | None, log: ReadingLog
) -> Weighed:
    """The scenario's verdict from its own end (`status`, `error`) and what `log` noted."""
    note = account(log)
    if _not_the_scenario(error) or status in (Status.UNDEFINED, Status.TIMEOUT):
        return Weighed(status, violated, note)
    if log.broken or status is Status.FAILED:
        return Weighed(Status.FAILED, sorted({*violated, *log.broken_cites()}), note)
    if status is Status.DIVERGED and isinstance(error, ClauseViolation):
        if log.allows_declared(error) and not log.diverged:
            return Weighed(Status.NOT_APPLICABLE, [], _stopped(error, _declared(log, error), note))
        return Weighed(Status.DIVERGED, sorted({*violated, *log.cites()}), note)
    if status is Status.PASSED:
        return Weighed(Status.DIVERGED if log.diverged else Status.PASSED, log.cites(), note)
    if log.diverged:
        return Weighed(Status.DIVERGED, log.cites(), _went_no_further(error, note))
    if log.set_aside:
        return Weighed(Status.NOT_APPLICABLE, [], _went_no_further(error, note))
    return Weighed(status, violated, note)


def _not_the_scenario(error: BaseException | None) -> bool:
    """Faults of the implementation and broken port promises keep their own verdict."""
    return isinstance(error, ImplementationFault | PortViolation | DriverError)


def account(log: ReadingLog) -> str:
    """Every check of a reading the scenario went on past, with the step it failed in."""
    lines = [
        f"diverged at {_where(step)}: {violation.render()}" for step, violation in log.diverged
    ]
    lines += [
        f"broken at {_where(step)} (no reading the implementation may follow allows the "
        f"answer): {violation.render()}"
        for step, violation in log.broken
    ]
    lines += [
        f"set aside at {_where(step)} (the implementation declares "
        f"{_declared(log, violation)}): {violation.detail}"
        for step, violation in log.set_aside
    ]
    return "\n".join(lines)


def first_divergence(log: ReadingLog) -> Failure | None:
    """The first break of a reading, else the first divergence, as a failure account (step,
    readings, expected vs observed)."""
    noted = log.broken or log.diverged
    if not noted:
        return None
    step, violation = noted[0]
    return Failure(
        step=step if isinstance(step, FailedStep) else None,
        clauses=dict(violation.statements),
        observed=violation.detail,
    )


def _where(step: object) -> str:
    return step.render() if isinstance(step, FailedStep) else "setup"


def _declared(log: ReadingLog, violation: ClauseViolation) -> str:
    return ", ".join(
        f"{cite} = {log.declared[cite]}" for cite in violation.cites if cite in log.declared
    )


def _stopped(error: ClauseViolation, declared: str, note: str) -> str:
    return (
        f"not verified: the scenario cannot go on past a check of {', '.join(error.cites)} as "
        f"the kit reads it, and the implementation declares {declared}\n{note}".rstrip()
    )


def _went_no_further(error: BaseException | None, note: str) -> str:
    described = f"{type(error).__name__}: {error}" if error is not None else "it stopped"
    return f"the scenario could not go on past a reading it was noted on ({described})\n{note}"
