"""The five producers of `task_assigned` wakes.

Only the assignee mutation knows an actor, so only it puts an actor type on
the payload; the other four never do, which keeps them outside the gate.
"""

from __future__ import annotations

import json
from enum import StrEnum

from conformance.reference.errors import InvalidInput
from conformance.reference.office.constants import AGENT_ACTOR, TASK_ASSIGNED
from conformance.reference.office.models import Task
from conformance.reference.office.wake import Wake


class Producer(StrEnum):
    ASSIGNEE_MUTATION = "assignee_mutation"
    TASK_CREATED_SUBSCRIBER = "task_created_subscriber"
    ONBOARDING = "onboarding"
    UNSTARTED_TASK_RECOVERY = "unstarted_task_recovery"
    WORKFLOW_AUTO_START = "workflow_auto_start"


_KEY_PREFIX = {
    Producer.TASK_CREATED_SUBSCRIBER: TASK_ASSIGNED,
    Producer.ONBOARDING: "onboarding",
    Producer.UNSTARTED_TASK_RECOVERY: "unstarted_task_recovery",
    Producer.WORKFLOW_AUTO_START: "workflow_auto_start",
}


def assignment_wake(
    task: Task, agent_id: str, acting_agent_id: str, generation: int | None
) -> Wake:
    """The assignee mutation's wake; keyless when the generation could not be resolved."""
    payload = {
        "task_id": task.id,
        "workspace_id": task.workspace_id,
        "actor_type": AGENT_ACTOR if acting_agent_id else "user",
        "actor_id": acting_agent_id,
    }
    key = None if generation is None else _key(TASK_ASSIGNED, task, agent_id, generation)
    return Wake(agent_id, TASK_ASSIGNED, json.dumps(payload), key)


def actorless_wake(producer: Producer, task: Task, agent_id: str) -> Wake:
    """A wake from one of the four producers that carry no actor."""
    require_actorless(producer)
    payload = {"task_id": task.id, "workspace_id": task.workspace_id}
    key = _key(_KEY_PREFIX[producer], task, agent_id, task.assignment_generation)
    return Wake(agent_id, TASK_ASSIGNED, json.dumps(payload), key)


def producer_named(name: str) -> Producer:
    """The producer a name stands for; an unknown name is bad input, not a crash."""
    try:
        return Producer(name)
    except ValueError:
        known = ", ".join(p.value for p in Producer)
        raise InvalidInput(f"unknown producer {name!r}; this implementation has {known}") from None


def require_actorless(producer: Producer) -> None:
    if producer not in _KEY_PREFIX:
        raise InvalidInput(f"producer {producer.value} wakes only through the assignee mutation")


def _key(prefix: str, task: Task, agent_id: str, generation: int) -> str:
    return f"{prefix}:{task.id}:{agent_id}:{generation}"
