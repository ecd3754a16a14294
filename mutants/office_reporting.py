"""Mutants of what a refusal leaves for the operator: counter labels, surface, log level, counts."""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.office import gate as reference_gate
from conformance.reference.office import service as office_service
from conformance.reference.office.classifier import GateSubject, parse_object
from conformance.reference.office.constants import ASSIGNMENT_ALLOWANCE
from conformance.reference.office.gate import AllowanceGate, CountUnavailable, GateVerdict
from conformance.reference.office.telemetry import OfficeTelemetry, RateLimitReason
from conformance.reference.office.wake import Wake

RATE_LIMIT_HELP = "Assignment wakes refused or admitted degraded by the allowance gate."


class ReportingGate(AllowanceGate):
    """The reference gate's reporting, with whether it counts and how loud it logs as hooks."""

    def counts(self, reason: RateLimitReason) -> bool:
        return True

    def level(self, reason: RateLimitReason) -> int:
        return logging.WARNING

    def _warn(self, reason: RateLimitReason, message: str, **fields: Any) -> None:
        if self.counts(reason):
            self._telemetry.rate_limited(reason)
        logged = {
            "reason": reason.value,
            **fields,
            "allowance": ASSIGNMENT_ALLOWANCE,
        }
        reference_gate.logger.log(self.level(reason), message, extra={"fields": logged})


class InfoRefusalGate(ReportingGate):
    """Logs refusals at INFO, as routine traffic shaping."""

    def level(self, reason: RateLimitReason) -> int:
        if reason is RateLimitReason.ALLOWANCE_EXHAUSTED:
            return logging.INFO
        return logging.WARNING


class UncountedUnattributedGate(ReportingGate):
    """Logs an unattributed wake but leaves the counter alone."""

    def counts(self, reason: RateLimitReason) -> bool:
        return reason is not RateLimitReason.TASK_UNATTRIBUTED


class ActorAttributedDegradedGate(AllowanceGate):
    """Reports a degraded admission only when it can name the agent that acted, as the assignee
    mutation's wakes always do: an agent wake from any other path fails open in silence."""

    def _report_count_read_failed(self, wake: Wake, subject: GateSubject, error: Exception) -> None:
        if subject.acting_agent_id:
            super()._report_count_read_failed(wake, subject, error)


class ExhaustionCountingGate(AllowanceGate):
    """Ticks allowance_exhausted when an admission takes the last place, not only on refusals."""

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        observed = super()._read_count(session, task_id, now)
        if observed == ASSIGNMENT_ALLOWANCE - 1:
            self._telemetry.rate_limited(RateLimitReason.ALLOWANCE_EXHAUSTED)
        return observed


class LabelledTelemetry(OfficeTelemetry):
    """The rate-limit counter gains one more label, whose value the gate sets before it counts."""

    label = "task_id"

    def __init__(self) -> None:
        super().__init__()
        self.registry.unregister(self._rate_limit)
        self._rate_limit = Counter(
            "office_assignment_rate_limit",
            RATE_LIMIT_HELP,
            ["reason", self.label],
            registry=self.registry,
        )
        self.value = ""

    def rate_limited(self, reason: RateLimitReason) -> None:
        self._rate_limit.labels(reason.value, self.value).inc()


class TaskLabellingGate(AllowanceGate):
    """Hands the task of each refusal or degraded admission to the counter as a label."""

    def _warn(self, reason: RateLimitReason, message: str, **fields: Any) -> None:
        if isinstance(self._telemetry, LabelledTelemetry):
            self._telemetry.value = str(fields.get("task_id", ""))
        super()._warn(reason, message, **fields)


class TenantLabelledTelemetry(LabelledTelemetry):
    """Series per tenant, its workspace id hashed "so that no identifier leaks"."""

    label = "tenant"


class TenantLabellingGate(AllowanceGate):
    """Hands a hash of each wake's workspace to the counter as a label."""

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
        self._label(wake)
        return super().admits(session, wake, now)

    def unread_verdict(self, failure: CountUnavailable) -> GateVerdict:
        verdict = super().unread_verdict(failure)

        def admits_unread(session: Session, wake: Wake, now: datetime) -> bool:
            self._label(wake)
            return verdict(session, wake, now)

        return admits_unread

    def _label(self, wake: Wake) -> None:
        workspace = (parse_object(wake.payload) or {}).get("workspace_id")
        if isinstance(self._telemetry, LabelledTelemetry) and isinstance(workspace, str):
            self._telemetry.value = hashlib.sha256(workspace.encode()).hexdigest()[:12]


class SeparateSurfaceTelemetry(OfficeTelemetry):
    """Keeps the rate-limit counter on a registry of its own, off the dedup counters' surface."""

    def __init__(self) -> None:
        super().__init__()
        self.registry.unregister(self._rate_limit)
        self.rate_limit_registry = CollectorRegistry()
        self.rate_limit_registry.register(self._rate_limit)


def _gate(replacement: type[AllowanceGate]) -> Patch:
    return Patch(office_service, "AllowanceGate", replacement)


MUTANTS = [
    Mutant(
        "degraded_silent_off_the_mutation",
        "AC-OFFICE-ASSIGN-RATE-002.2",
        Capability.OFFICE,
        "counts and logs a degraded admission only when the wake names its acting agent, as the "
        "assignee mutation's do: a raw agent wake is admitted unchecked in silence",
        lambda: [_gate(ActorAttributedDegradedGate)],
    ),
    Mutant(
        "unattributed_not_counted",
        "AC-OFFICE-ASSIGN-RATE-003.1",
        Capability.OFFICE,
        "logs an unattributed admission but does not count it",
        lambda: [_gate(UncountedUnattributedGate)],
    ),
    Mutant(
        "counter_labelled_with_task",
        "AC-OFFICE-ASSIGN-RATE-003.2",
        Capability.OFFICE,
        "labels the rate-limit counter with the task id as well as the reason",
        lambda: [
            Patch(office_service, "OfficeTelemetry", LabelledTelemetry),
            _gate(TaskLabellingGate),
        ],
    ),
    Mutant(
        "counter_labelled_with_workspace_hash",
        "AC-OFFICE-ASSIGN-RATE-003.2",
        Capability.OFFICE,
        "labels the rate-limit counter with a hash of the wake's workspace id",
        lambda: [
            Patch(office_service, "OfficeTelemetry", TenantLabelledTelemetry),
            _gate(TenantLabellingGate),
        ],
    ),
    Mutant(
        "refusal_logged_at_info",
        "AC-OFFICE-ASSIGN-RATE-003.3",
        Capability.OFFICE,
        "logs refusals at INFO level instead of WARNING",
        lambda: [_gate(InfoRefusalGate)],
    ),
    Mutant(
        "exhausting_admission_counted",
        "AC-OFFICE-ASSIGN-RATE-003.4",
        Capability.OFFICE,
        "the admission that takes the last place also ticks allowance_exhausted",
        lambda: [_gate(ExhaustionCountingGate)],
    ),
    Mutant(
        "rate_limit_counter_off_surface",
        "AC-OFFICE-ASSIGN-RATE-003.6",
        Capability.OFFICE,
        "registers the rate-limit counter on its own registry, not the dedup counters' surface",
        lambda: [Patch(office_service, "OfficeTelemetry", SeparateSurfaceTelemetry)],
    ),
]
