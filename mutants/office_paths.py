"""Mutants that a kit checking each clause on one path, with friendly data, lets through.

Each is right on the path the first scenarios took and wrong on another: after an odd wake
(a count that reads stored payloads as text or with the database's JSON functions), on another
refusal path (a keyless refusal, a burst of refusals, a degraded admission, a refusal after a
coalescing merge), or with rows a
scope filter must tell apart (other reasons, tasks whose ids are prefixes of one another).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.collation import folded
from conformance.mutants.mutant import Mutant
from conformance.mutants.office_count import counting_with
from conformance.mutants.office_reporting import (
    LabelledTelemetry,
    ReportingGate,
    TaskLabellingGate,
)
from conformance.reference.office import service as office_service
from conformance.reference.office.classifier import GateSubject
from conformance.reference.office.constants import AGENT_ACTOR, ASSIGNMENT_WINDOW, TASK_ASSIGNED
from conformance.reference.office.gate import AllowanceGate
from conformance.reference.office.models import Run
from conformance.reference.office.telemetry import RateLimitReason
from conformance.reference.office.wake import Wake

LOG_THROTTLE = timedelta(minutes=1)


def _window(now: datetime) -> tuple[Any, Any]:
    return Run.requested_at > now - ASSIGNMENT_WINDOW, Run.requested_at <= now


def json_function_count(task_id: str, now: datetime) -> Select[int]:
    """Reads the task and actor out of each stored payload with the database's JSON functions,
    which fail on a payload that is not JSON, so one malformed row fails every later count."""
    return (
        select(func.count())
        .select_from(Run)
        .where(
            Run.reason == TASK_ASSIGNED,
            func.json_extract(Run.payload, "$.actor_type") == AGENT_ACTOR,
            func.json_extract(Run.payload, "$.task_id") == task_id,
            *_window(now),
        )
    )


def payload_text_count(task_id: str, now: datetime) -> Select[int]:
    """Finds the task and the actor in the stored payload's text, so a payload that does not
    parse but mentions both counts."""
    return (
        select(func.count())
        .select_from(Run)
        .where(
            Run.reason == TASK_ASSIGNED,
            Run.payload.contains(f'"task_id": "{task_id}"'),
            Run.payload.contains(f'"actor_type": "{AGENT_ACTOR}"'),
            *_window(now),
        )
    )


def every_reason_count(task_id: str, now: datetime) -> Select[int]:
    """Counts every agent-stamped run of the task, whatever its reason."""
    return (
        select(func.count())
        .select_from(Run)
        .where(Run.task_key == task_id, Run.actor_type == AGENT_ACTOR, *_window(now))
    )


def task_prefix_count(task_id: str, now: datetime) -> Select[int]:
    """Matches the task with LIKE 'id%', so T-1000's runs count against T-100."""
    return _agent_runs_where(Run.task_key.startswith(task_id), now)


def task_folded_count(task_id: str, now: datetime) -> Select[int]:
    """Matches the task as a case-insensitive, space-padding collation does, so the runs of
    "t-100" and "T-100 " count against T-100."""
    return _agent_runs_where(folded(Run.task_key, task_id), now)


def _agent_runs_where(task: ColumnElement[bool], now: datetime) -> Select[int]:
    return (
        select(func.count())
        .select_from(Run)
        .where(task, Run.reason == TASK_ASSIGNED, Run.actor_type == AGENT_ACTOR, *_window(now))
    )


class SilentKeylessRefusalGate(AllowanceGate):
    """Refuses a keyless wake without counting or logging it: the keyless path was added later,
    beside the keyed one, and took only its decision along."""

    def _report_refusal(self, wake: Wake, subject: GateSubject, observed: int) -> None:
        if wake.dedup_key is not None:
            super()._report_refusal(wake, subject, observed)


class LazilyReportingGate(AllowanceGate):
    """Reports refusals only once its process has admitted a wake: the reporter is set up by
    the first admission, so a process that starts out refusing (restarted with the task's
    window full) refuses silently."""

    def __init__(self, *arguments: Any, **keywords: Any) -> None:
        super().__init__(*arguments, **keywords)
        self._reporting = False

    def admits(self, session: Any, wake: Wake, now: datetime) -> bool:
        admitted = super().admits(session, wake, now)
        self._reporting = self._reporting or admitted
        return admitted

    def _report_refusal(self, wake: Wake, subject: GateSubject, observed: int) -> None:
        if self._reporting:
            super()._report_refusal(wake, subject, observed)


class ThrottledRefusalLogGate(ReportingGate):
    """Logs at most one refusal per task a minute (the counter still moves), to keep a burst
    from flooding the log."""

    def __init__(self, *arguments: Any, **keywords: Any) -> None:
        super().__init__(*arguments, **keywords)
        self._last_logged: dict[str, datetime] = {}
        self._now = datetime.min

    def admits(self, session: Any, wake: Wake, now: datetime) -> bool:
        self._now = now
        return super().admits(session, wake, now)

    def _report_refusal(self, wake: Wake, subject: GateSubject, observed: int) -> None:
        last = self._last_logged.get(subject.task_id)
        if last is not None and self._now - last < LOG_THROTTLE:
            self._telemetry.rate_limited(RateLimitReason.ALLOWANCE_EXHAUSTED)
            return
        self._last_logged[subject.task_id] = self._now
        super()._report_refusal(wake, subject, observed)


class MergeBlindRefusalLogGate(ReportingGate):
    """Logs a refusal only while no run of the task in the window absorbed a merged wake (the
    counter still moves): the warning took its acting agent from the task's runs, and a run a
    coalescing merge overwrote names another actor, so the warning was dropped."""

    def __init__(self, *arguments: Any, **keywords: Any) -> None:
        super().__init__(*arguments, **keywords)
        self._session: Any = None
        self._now = datetime.min

    def admits(self, session: Any, wake: Wake, now: datetime) -> bool:
        self._session, self._now = session, now
        return super().admits(session, wake, now)

    def _report_refusal(self, wake: Wake, subject: GateSubject, observed: int) -> None:
        merged = self._session.scalar(
            select(func.count())
            .select_from(Run)
            .where(Run.task_key == subject.task_id, Run.coalesced_count > 0, *_window(self._now))
        )
        if merged:
            self._telemetry.rate_limited(RateLimitReason.ALLOWANCE_EXHAUSTED)
            return
        super()._report_refusal(wake, subject, observed)


class DegradedTaskLabelTelemetry(LabelledTelemetry):
    """The counter gains a task label, filled only when a count read failed (to find the task
    whose reads fail), empty otherwise."""

    label = "task"

    def rate_limited(self, reason: RateLimitReason) -> None:
        if reason is not RateLimitReason.COUNT_READ_FAILED:
            self.value = ""
        super().rate_limited(reason)


class DegradedTaskLabellingGate(TaskLabellingGate, ReportingGate):
    """Hands the task to the counter as a label, and reports as `ReportingGate` does."""


def _gate(replacement: type[Any]) -> Patch:
    return Patch(office_service, "AllowanceGate", replacement)


MUTANTS = [
    Mutant(
        "json_function_count",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        "counts with the database's JSON functions, which fail on a stored payload that is not "
        "JSON: after one such wake every count read fails and every agent wake is admitted",
        lambda: [_gate(counting_with(json_function_count))],
    ),
    Mutant(
        "payload_text_count",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        "finds the task and actor type in the stored payload's text, so a payload that does not "
        "parse but mentions both uses up the allowance",
        lambda: [_gate(counting_with(payload_text_count))],
    ),
    Mutant(
        "keyless_refusal_silent",
        "AC-OFFICE-ASSIGN-RATE-003.1",
        Capability.OFFICE,
        "refuses a wake without a dedup key but neither counts nor logs the refusal",
        lambda: [_gate(SilentKeylessRefusalGate)],
    ),
    Mutant(
        "refusal_unreported_after_restart",
        "AC-OFFICE-ASSIGN-RATE-003.1",
        Capability.OFFICE,
        "reports refusals only once its process has admitted a wake, so after a restart with "
        "the window full the first refusals are neither counted nor logged",
        lambda: [_gate(LazilyReportingGate)],
    ),
    Mutant(
        "refusal_warnings_throttled",
        "AC-OFFICE-ASSIGN-RATE-003.3",
        Capability.OFFICE,
        "logs at most one refusal per task a minute, so a burst of refusals seconds apart is "
        "logged once",
        lambda: [_gate(ThrottledRefusalLogGate)],
    ),
    Mutant(
        "refusal_unlogged_after_merge",
        "AC-OFFICE-ASSIGN-RATE-003.3",
        Capability.OFFICE,
        "logs no refusal while a run of the task absorbed a merged wake (the counter still "
        "moves), so refusals after a coalescing relabel go unlogged",
        lambda: [_gate(MergeBlindRefusalLogGate)],
    ),
    Mutant(
        "degraded_counter_labelled_with_task",
        "AC-OFFICE-ASSIGN-RATE-003.2",
        Capability.OFFICE,
        "labels the count_read_failed series with the task whose read failed",
        lambda: [
            Patch(office_service, "OfficeTelemetry", DegradedTaskLabelTelemetry),
            _gate(DegradedTaskLabellingGate),
        ],
    ),
    Mutant(
        "count_over_every_reason",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        "counts every agent-stamped run of the task, a task_comment wake's included",
        lambda: [_gate(counting_with(every_reason_count))],
    ),
    Mutant(
        "count_by_task_prefix",
        "AC-OFFICE-ASSIGN-RATE-001.3",
        Capability.OFFICE,
        "matches the task by prefix (LIKE 'id%'), so task T-1000's wakes use up T-100's allowance",
        lambda: [_gate(counting_with(task_prefix_count))],
    ),
    Mutant(
        "count_by_folded_task",
        "AC-OFFICE-ASSIGN-RATE-001.3",
        Capability.OFFICE,
        'compares task ids as MySQL\'s default collation does, so "t-100" and "T-100 " share '
        "T-100's allowance",
        lambda: [_gate(counting_with(task_folded_count))],
    ),
]
