"""Office variants in what the spec leaves unnamed: metric, label and event names, extra labels,
extra samples, extra warnings, log fields, a sixth producer.

The spec asks for "a counter labelled by reason, drawn from a closed set of three
values" on the dedup counters' surface, warnings carrying named facts, and a
task-updated publication; it names none of them. These variants name them
otherwise (and declare the names in the handshake), or add what the spec does
not forbid: each must pass.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter
from sqlalchemy import update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.driver import Description, ReasonLabels
from conformance.reference import app
from conformance.reference.office import assignment, dedup, gate, producers, run_queue, service
from conformance.reference.office.assignment import (
    AssigneeMutation,
    PublishedEvent,
    SessionInterrupt,
)
from conformance.reference.office.constants import ASSIGNMENT_ALLOWANCE, TASK_ASSIGNED
from conformance.reference.office.lookup import fetch
from conformance.reference.office.models import OfficeSessionRow, Run, Task
from conformance.reference.office.telemetry import OfficeTelemetry, RateLimitReason
from conformance.reference.office.wake import Wake
from conformance.variants.variant import Variant

logger = logging.getLogger("reference.office")


def declaring(**changes: Any) -> Callable[[Description], Description]:
    """A handshake declaring other Office names (the vocabulary's fields as keywords)."""

    def declare(description: Description) -> Description:
        office = description.office
        if office is None:
            return description
        vocabulary = office.vocabulary.model_copy(update=changes)
        return description.model_copy(
            update={"office": office.model_copy(update={"vocabulary": vocabulary})}
        )

    return declare


# --------------------------------------------------------------------------
# The counter: another name, another label, an extra static label, extra samples
# --------------------------------------------------------------------------


class QueueLabelledTelemetry(OfficeTelemetry):
    """The rate-limit counter carries a static `queue="office"` label beside the reason."""

    def __init__(self) -> None:
        super().__init__()
        self.registry.unregister(self._rate_limit)
        self._rate_limit = Counter(
            "office_assignment_rate_limit",
            "Assignment wakes refused or admitted degraded, per queue.",
            ["reason", "queue"],
            registry=self.registry,
        )

    def rate_limited(self, reason: RateLimitReason) -> None:
        self._rate_limit.labels(reason=reason.value, queue="office").inc()


KANDEV_CAUSES = {
    RateLimitReason.ALLOWANCE_EXHAUSTED: "exhausted",
    RateLimitReason.COUNT_READ_FAILED: "read_failed",
    RateLimitReason.TASK_UNATTRIBUTED: "unattributed",
}


class RenamedTelemetry(OfficeTelemetry):
    """Every counter under names of its own; the rate-limit reason is a `cause` label."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._dedup = Counter(
            "kandev_run_dedup",
            "Suppressed duplicate wakes.",
            ["reason", "kind", "queue"],
            registry=self.registry,
        )
        self._keyless = Counter(
            "kandev_run_dedup_keyless",
            "Keyless wakes.",
            ["reason", "cause"],
            registry=self.registry,
        )
        self._rate_limit = Counter(
            "kandev_office_wake_throttle",
            "Assignment wakes throttled or let through unchecked.",
            ["cause"],
            registry=self.registry,
        )

    def rate_limited(self, reason: RateLimitReason) -> None:
        self._rate_limit.labels(cause=KANDEV_CAUSES[reason]).inc()


class HttpMetricsTelemetry(OfficeTelemetry):
    """The surface also carries a web framework's own counter, with a `code="200"` label."""

    def __init__(self) -> None:
        super().__init__()
        requests = Counter(
            "promhttp_metric_handler_requests",
            "Scrapes served, by HTTP status code.",
            ["code"],
            registry=self.registry,
        )
        requests.labels(code="200").inc(3)


# --------------------------------------------------------------------------
# The mutation's publication and the interrupted session
# --------------------------------------------------------------------------


class CamelCaseEvents(AssigneeMutation):
    """Publishes `TaskUpdated` naming the `assignee` field."""

    def _publish(self, change: Any) -> None:
        task = change.task
        self._effects.events.append(PublishedEvent("TaskUpdated", task.id, ("assignee",)))
        if change.previous_assignee and change.previous_assignee != task.assignee_agent_id:
            self._effects.interrupts.append(SessionInterrupt(change.previous_assignee, task.id))


def interrupt_office_sessions(session: Session, agent_id: str, task_id: str) -> None:
    """The displaced assignee's office session rows move to `interrupted`."""
    session.execute(
        update(OfficeSessionRow)
        .where(OfficeSessionRow.agent_id == agent_id, OfficeSessionRow.task_id == task_id)
        .values(state="interrupted")
    )


# --------------------------------------------------------------------------
# A sixth producer that carries no actor
# --------------------------------------------------------------------------

ESCALATION_SWEEP = "escalation_sweep"
_named_producer = producers.producer_named


def producer_or_sweep(name: str) -> Any:
    """The named producers, and one more: the escalation sweep."""
    return ESCALATION_SWEEP if name == ESCALATION_SWEEP else _named_producer(name)


class SweepingOfficeService(service.OfficeService):
    """Serves the escalation sweep: an actorless wake, keyed like the other sweeps."""

    def produce_wake(self, producer: Any, task_id: str, agent_id: str) -> Any:
        if producer != ESCALATION_SWEEP:
            return super().produce_wake(producer, task_id, agent_id)
        with self._db.transaction() as session:
            task = fetch(session, Task, task_id, "task")
            payload = json.dumps({"task_id": task.id, "workspace_id": task.workspace_id})
            key = f"{ESCALATION_SWEEP}:{task.id}:{agent_id}:{task.assignment_generation}"
        return self._queue.enqueue(Wake(agent_id, TASK_ASSIGNED, payload, key))


def with_sweep(description: Description) -> Description:
    office = description.office
    if office is None:
        return description
    producers_reported = [*office.producers, ESCALATION_SWEEP]
    return description.model_copy(
        update={"office": office.model_copy(update={"producers": producers_reported})}
    )


# --------------------------------------------------------------------------
# Warnings: fields left out, warnings added
# --------------------------------------------------------------------------


def warn_without_reason(
    self: gate.AllowanceGate, reason: RateLimitReason, message: str, **fields: Any
) -> None:
    """Counts and logs as the reference does, leaving the reason out of the log's fields."""
    self._telemetry.rate_limited(reason)
    fields = {**fields, "allowance": ASSIGNMENT_ALLOWANCE}
    if reason is not RateLimitReason.ALLOWANCE_EXHAUSTED:
        fields["reason"] = reason.value
    logger.warning(message, extra={"fields": fields})


class LoggingStoreGate(gate.AllowanceGate):
    """A store layer under the gate logs the failed read too, in words of its own."""

    def _read_count(self, session: Session, task_id: str, now: Any) -> int:
        try:
            return super()._read_count(session, task_id, now)
        except Exception as error:
            logging.getLogger("reference.store").warning(
                "query failed", extra={"fields": {"query": "allowance_count", "error": str(error)}}
            )
            raise


def duplicate_with_warning(session: Session, wake: Wake, now: Any) -> Run | None:
    """The recent-duplicate lookup logs every redelivery it suppresses."""
    found = dedup.recent_duplicate(session, wake, now)
    if found is not None:
        logger.warning(
            "wake suppressed as a duplicate",
            extra={"fields": {"dedup_key": wake.dedup_key, "reason": wake.reason}},
        )
    return found


VARIANTS = [
    Variant(
        "extra_static_label",
        Capability.OFFICE,
        'the rate-limit counter carries a static queue="office" label beside the reason',
        lambda: [Patch(service, "OfficeTelemetry", QueueLabelledTelemetry)],
    ),
    Variant(
        "declared_metric_names",
        Capability.OFFICE,
        "its own counter, label and reason names (kandev_office_wake_throttle_total{cause}), "
        "declared in the handshake",
        lambda: [Patch(service, "OfficeTelemetry", RenamedTelemetry)],
        declare=declaring(
            rate_limit_counter="kandev_office_wake_throttle_total",
            reason_label="cause",
            reasons=ReasonLabels(
                allowance_exhausted="exhausted",
                count_read_failed="read_failed",
                task_unattributed="unattributed",
            ),
            dedup_counters=["kandev_run_dedup_total", "kandev_run_dedup_keyless_total"],
        ),
    ),
    Variant(
        "http_metrics_beside_counters",
        Capability.OFFICE,
        "integer run ids beside a web framework's "
        'promhttp_metric_handler_requests_total{code="200"}',
        lambda: [Patch(service, "OfficeTelemetry", HttpMetricsTelemetry)],
    ),
    Variant(
        "renamed_task_updated_event",
        Capability.OFFICE,
        "publishes TaskUpdated naming `assignee`, declared as its task-updated event",
        lambda: [Patch(service, "AssigneeMutation", CamelCaseEvents)],
        declare=declaring(task_updated_event="TaskUpdated"),
    ),
    Variant(
        "interrupted_session_state",
        Capability.OFFICE,
        "moves the displaced assignee's office session to `interrupted`, declared",
        lambda: [Patch(assignment, "_complete_office_sessions", interrupt_office_sessions)],
        declare=declaring(interrupted_session_state="interrupted"),
    ),
    Variant(
        "sixth_actorless_producer",
        Capability.OFFICE,
        "reports and serves a sixth producer, an escalation sweep that carries no actor",
        lambda: [
            Patch(app, "OfficeService", SweepingOfficeService),
            Patch(producers, "producer_named", producer_or_sweep),
        ],
        declare=with_sweep,
    ),
    Variant(
        "refusal_warning_without_reason",
        Capability.OFFICE,
        "logs a refusal with the facts the spec lists and no `reason` field",
        lambda: [Patch(gate.AllowanceGate, "_warn", warn_without_reason)],
    ),
    Variant(
        "store_logs_failed_read",
        Capability.OFFICE,
        "a store layer logs a failed count read as a warning of its own, beside the gate's",
        lambda: [Patch(service, "AllowanceGate", LoggingStoreGate)],
    ),
    Variant(
        "dedup_logs_warning",
        Capability.OFFICE,
        "the duplicate lookup logs every redelivery it suppresses as a warning",
        lambda: [Patch(run_queue, "recent_duplicate", duplicate_with_warning)],
    ),
]
