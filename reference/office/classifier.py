"""Reading a wake's payload text: the gate's scope and the task a wake is about.

Pure functions of the stored text, so that the gate, the coalescer and the
columns indexed for the count all read a payload the same way. A wake's
payload is read once, when the wake is made (`Wake.facts`); only a payload
written without a wake (a seeded run, say) is read on its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from conformance.reference.office.constants import AGENT_ACTOR, TASK_ASSIGNED


class Scope(Enum):
    """Where a wake stands with respect to the assignment allowance gate."""

    OUT_OF_SCOPE = "out_of_scope"
    UNATTRIBUTED = "unattributed"
    ATTRIBUTED = "attributed"


@dataclass(frozen=True)
class GateSubject:
    """What the gate needs to know about one wake."""

    scope: Scope
    task_id: str = ""
    acting_agent_id: str = ""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_STRICT_JSON: Final = json.JSONDecoder(parse_constant=_reject_constant)
"""Built once: `json.loads` with a keyword builds a decoder per call, a third of the parse."""


def parse_object(payload: str, decoder: json.JSONDecoder | None = None) -> dict[str, Any] | None:
    """The payload as a JSON object, or None when it is not one (by default: not strict JSON,
    a bare NaN included, OF-9's question)."""
    try:
        parsed = (decoder or _STRICT_JSON).decode(payload)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


@dataclass(frozen=True)
class PayloadFacts:
    """What the pipeline reads off a payload text, read once per wake."""

    is_object: bool
    """Whether the text is a strict JSON object at all."""
    task_key: str
    """The task_id when it is a non-empty JSON string, else ""."""
    actor_type: str | None
    """The actor_type when it is a JSON string, else None."""
    acting_agent_id: str
    """The actor_id when it is a non-empty JSON string, else ""."""


def read_payload(payload: str, decoder: json.JSONDecoder | None = None) -> PayloadFacts:
    fields = parse_object(payload, decoder)
    if fields is None:
        return PayloadFacts(is_object=False, task_key="", actor_type=None, acting_agent_id="")
    actor = fields.get("actor_type")
    return PayloadFacts(
        is_object=True,
        task_key=_non_empty_string(fields.get("task_id")),
        actor_type=actor if isinstance(actor, str) else None,
        acting_agent_id=_non_empty_string(fields.get("actor_id")),
    )


def gate_subject(reason: str, facts: PayloadFacts) -> GateSubject:
    """Scope checks in the design's order: reason, then actor type, then the task."""
    if reason != TASK_ASSIGNED or not facts.is_object or facts.actor_type != AGENT_ACTOR:
        return GateSubject(Scope.OUT_OF_SCOPE)
    if not facts.task_key:
        return GateSubject(Scope.UNATTRIBUTED, acting_agent_id=facts.acting_agent_id)
    return GateSubject(
        Scope.ATTRIBUTED, task_id=facts.task_key, acting_agent_id=facts.acting_agent_id
    )


def _non_empty_string(value: object) -> str:
    return value if isinstance(value, str) and value else ""
