"""Reading a wake's payload text: the gate's scope and the task a wake is about.

Pure functions of the stored text, so that the gate, the coalescer and the
columns indexed for the count all read a payload the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from reference.office.constants import AGENT_ACTOR, TASK_ASSIGNED


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


def parse_object(payload: str) -> dict[str, Any] | None:
    """The payload as a JSON object, or None when it is not one (or not strict JSON)."""
    try:
        parsed = _STRICT_JSON.decode(payload)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def task_key(payload: str) -> str:
    """The task a payload names: its task_id when that is a non-empty JSON string, else ""."""
    fields = parse_object(payload)
    return _non_empty_string(fields.get("task_id")) if fields is not None else ""


def actor_type(payload: str) -> str | None:
    """The payload's actor_type when it is a JSON string; None otherwise."""
    fields = parse_object(payload)
    value = fields.get("actor_type") if fields is not None else None
    return value if isinstance(value, str) else None


def gate_subject(reason: str, payload: str) -> GateSubject:
    """Scope checks in the design's order: reason, then actor type, then the task."""
    fields = parse_object(payload)
    if reason != TASK_ASSIGNED or fields is None or fields.get("actor_type") != AGENT_ACTOR:
        return GateSubject(Scope.OUT_OF_SCOPE)
    acting_agent_id = _non_empty_string(fields.get("actor_id"))
    task_id = _non_empty_string(fields.get("task_id"))
    if not task_id:
        return GateSubject(Scope.UNATTRIBUTED, acting_agent_id=acting_agent_id)
    return GateSubject(Scope.ATTRIBUTED, task_id=task_id, acting_agent_id=acting_agent_id)


def _non_empty_string(value: object) -> str:
    return value if isinstance(value, str) and value else ""
