"""Mutants of who falls under the allowance: actor types on payloads, task ids, keyless wakes."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.office import assignment as office_assignment
from conformance.reference.office import gate as reference_gate
from conformance.reference.office import models as office_models
from conformance.reference.office import service as office_service
from conformance.reference.office import wake as office_wake
from conformance.reference.office.classifier import (
    GateSubject,
    PayloadFacts,
    gate_subject,
    parse_object,
    read_payload,
)
from conformance.reference.office.gate import AllowanceGate
from conformance.reference.office.models import Task
from conformance.reference.office.producers import Producer, actorless_wake, assignment_wake
from conformance.reference.office.run_queue import RunQueue
from conformance.reference.office.wake import EnqueueResult, Outcome, Wake


def _rewritten(payload: str, change: dict[str, Any], drop: tuple[str, ...] = ()) -> str:
    """The payload with some fields set or removed; a payload that is no object stays as it is."""
    fields = parse_object(payload)
    if fields is None:
        return payload
    kept = {name: value for name, value in fields.items() if name not in drop}
    return json.dumps({**kept, **change})


_READS_NAN: Final = json.JSONDecoder()
"""A decoder that takes a bare NaN for a number, as JSON5's and lenient ones do."""
_WRITE_PAYLOAD: Final = office_models.Run.write_payload


def columns_read_leniently(
    run: office_models.Run, payload: str, facts: PayloadFacts | None = None
) -> None:
    """Derives the columns the count reads with a decoder that takes a bare NaN for a number,
    while the gate reads the wake strictly: a NaN wake admitted as out of scope is counted."""
    _WRITE_PAYLOAD(run, payload, read_payload(payload, _READS_NAN))


def lenient_gate_subject(reason: str, facts: PayloadFacts) -> GateSubject:
    """Compares the actor type case-insensitively and ignoring surrounding blanks."""
    if facts.actor_type is not None:
        facts = replace(facts, actor_type=facts.actor_type.strip().lower())
    return gate_subject(reason, facts)


def blank_task_taken_for_none(reason: str, facts: PayloadFacts) -> GateSubject:
    """Tests the task id for blankness, not emptiness: a task id of spaces is taken for none, so
    its wakes are admitted unattributed and never limited."""
    if facts.task_key and not facts.task_key.strip():
        facts = replace(facts, task_key="")
    return gate_subject(reason, facts)


def any_caller_is_an_agent(
    task: Task, agent_id: str, acting_agent_id: str, generation: int | None
) -> Wake:
    """Stamps actor type agent whenever an acting id was passed at all, even an empty one."""
    wake = assignment_wake(task, agent_id, acting_agent_id, generation)
    return replace(wake, payload=_rewritten(wake.payload, {"actor_type": "agent"}))


def actorless_assignment_wake(
    task: Task, agent_id: str, acting_agent_id: str, generation: int | None
) -> Wake:
    """Leaves the actor off the mutation's wake, expecting the gate to look at the mutation."""
    wake = assignment_wake(task, agent_id, acting_agent_id, generation)
    return replace(wake, payload=_rewritten(wake.payload, {}, drop=("actor_type", "actor_id")))


def auto_start_acts_as_agent(producer: Producer, task: Task, agent_id: str) -> Wake:
    """The workflow auto-start step stamps actor type agent on the wake it produces."""
    wake = actorless_wake(producer, task, agent_id)
    if producer is not Producer.WORKFLOW_AUTO_START:
        return wake
    return replace(wake, payload=_rewritten(wake.payload, {"actor_type": "agent"}))


def _numbers_as_strings(payload: str) -> str:
    """A JSON-unaware reading: a numeric task_id is taken for its decimal text."""
    value = (parse_object(payload) or {}).get("task_id")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _rewritten(payload, {"task_id": str(value)})
    return payload


def coercing_read_payload(payload: str) -> PayloadFacts:
    return read_payload(_numbers_as_strings(payload))


class KeyedOnlyGate(AllowanceGate):
    """Applies the allowance only to keyed wakes, taking a missing key for "not an assignment"."""

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
        return wake.dedup_key is None or super().admits(session, wake, now)


class UnparseableDroppingQueue(RunQueue):
    """Drops a wake whose payload does not parse as a JSON object, reporting no enqueue."""

    def enqueue(self, wake: Wake) -> EnqueueResult:
        if parse_object(wake.payload) is None:
            return EnqueueResult(Outcome.NONE)
        return super().enqueue(wake)


MUTANTS = [
    Mutant(
        "unparseable_wake_dropped",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        "drops a wake whose payload does not parse instead of admitting it (both readings of "
        "OF-4 admit it)",
        lambda: [Patch(office_service, "RunQueue", UnparseableDroppingQueue)],
    ),
    Mutant(
        "nan_counted_not_gated",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        "the count reads stored payloads with a decoder that takes a bare NaN for a number, the "
        "gate reads strictly: a NaN wake admitted as out of scope is counted later (no reading "
        "of OF-9 does both)",
        lambda: [Patch(office_models.Run, "write_payload", columns_read_leniently)],
    ),
    Mutant(
        "actor_type_case_insensitive",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        'matches the actor type case-insensitively and trimmed, limiting "Agent" and " agent"',
        lambda: [Patch(reference_gate, "gate_subject", lenient_gate_subject)],
    ),
    Mutant(
        "empty_actor_counts_as_agent",
        "AC-OFFICE-ASSIGN-RATE-001.1",
        Capability.OFFICE,
        "tests the acting agent id for presence, not emptiness: users and internal callers count",
        lambda: [Patch(office_assignment, "assignment_wake", any_caller_is_an_agent)],
    ),
    Mutant(
        "producer_stamps_agent",
        "AC-OFFICE-ASSIGN-RATE-001.12",
        Capability.OFFICE,
        "the workflow auto-start producer puts actor type agent on its wakes",
        lambda: [Patch(office_service, "actorless_wake", auto_start_acts_as_agent)],
    ),
    Mutant(
        "mutation_drops_actor_type",
        "AC-OFFICE-ASSIGN-RATE-001.13",
        Capability.OFFICE,
        "the assignee mutation's wake carries no actor type or actor id",
        lambda: [Patch(office_assignment, "assignment_wake", actorless_assignment_wake)],
    ),
    Mutant(
        "numeric_task_id_coerced",
        "AC-OFFICE-ASSIGN-RATE-002.3",
        Capability.OFFICE,
        'reads a numeric task_id as text, so 42 is attributed and joins task "42"\'s allowance',
        lambda: [
            Patch(office_wake, "read_payload", coercing_read_payload),
            Patch(office_models, "read_payload", coercing_read_payload),
        ],
    ),
    Mutant(
        "blank_task_unattributed",
        "AC-OFFICE-ASSIGN-RATE-002.3",
        Capability.OFFICE,
        "takes a task id of spaces for no task: its wakes are counted unattributed, never limited",
        lambda: [Patch(reference_gate, "gate_subject", blank_task_taken_for_none)],
    ),
    Mutant(
        "keyless_bypasses_gate",
        "AC-OFFICE-ASSIGN-RATE-001.8",
        Capability.OFFICE,
        "lets every wake without a dedup key through the gate unchecked",
        lambda: [Patch(office_service, "AllowanceGate", KeyedOnlyGate)],
    ),
]
