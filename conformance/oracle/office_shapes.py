"""How the spec classifies a wake, read from its reason and payload alone, and which clause each
check of a wake of each shape rests on.

The Gherkin steps and the office effects model both judge by these, so a scenario and the model
can never read one payload two ways.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from conformance.driver import Outcome, Run

TASK_ASSIGNED = "task_assigned"
AGENT = "agent"


class Shape(Enum):
    """How the allowance must treat a wake, read from its reason and payload the way the spec
    reads them (never from the implementation's answer)."""

    AGENT = "an agent assignment wake (in scope)"
    UNATTRIBUTED = "an agent wake whose task cannot be told (in scope, unattributed)"
    USER = "a user's or internal caller's wake (out of scope)"
    PRODUCER = "a wake of a producer that carries no actor (out of scope)"
    OTHER = "a wake without actor type agent or of another reason (out of scope)"
    UNPARSEABLE = "a wake whose payload is not a JSON object (out of scope by OF-4)"
    UNASSIGNMENT = "an unassignment, which makes no wake"


# --------------------------------------------------------------------------
# Which clause a check enforces, by the shape of the wake it is about
# --------------------------------------------------------------------------


ADMITTED_CLAUSES: dict[Shape, tuple[str, ...]] = {
    Shape.AGENT: (
        "AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early",
        "AC-OFFICE-ASSIGN-RATE-001.5/before-insert",
    ),
    Shape.UNATTRIBUTED: ("AC-OFFICE-ASSIGN-RATE-002.3/admitted-unattributed",),
    Shape.USER: ("AC-OFFICE-ASSIGN-RATE-001.1/internal-caller-is-user",),
    Shape.PRODUCER: ("AC-OFFICE-ASSIGN-RATE-001.12/actorless-out-of-scope",),
    Shape.OTHER: ("AC-OFFICE-ASSIGN-RATE-001.1/others-admitted",),
    Shape.UNPARSEABLE: ("AC-OFFICE-ASSIGN-RATE-001.1/others-admitted",),
}
"""Why a wake of each shape must be admitted (when the scenario expects it to be). An unparseable
payload is admitted under every reading of OF-4 (out of scope, or in scope and unattributed):
dropping it breaks a clause, never only a reading."""

OUTCOME_CLAUSES: dict[str, tuple[str, ...]] = {
    Outcome.RATE_LIMITED.value: ("AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",),
    Outcome.COALESCED.value: ("AC-OFFICE-ASSIGN-RATE-001.5/after-coalescing",),
    Outcome.DEDUPLICATED.value: ("AC-OFFICE-ASSIGN-RATE-001.5/after-dedup",),
    "no wake": ("AC-OFFICE-ASSIGN-RATE-001.9/no-wake",),
}
"""Why a wake must end as each outcome other than admitted."""

REFUSAL_MISREPORTED: dict[str, tuple[str, ...]] = {
    Outcome.NONE.value: ("AC-OFFICE-ASSIGN-RATE-003.5/distinct-outcome",),
    "no wake": ("AC-OFFICE-ASSIGN-RATE-003.5/not-absence",),
    Outcome.COALESCED.value: ("AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",),
    Outcome.DEDUPLICATED.value: ("AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",),
}
"""A refusal reported as something it is not breaks these, not the allowance itself."""

FAIL_OPEN_CLAUSES = ("AC-OFFICE-ASSIGN-RATE-002.2/fail-open",)

QUIET_CLAUSES: dict[Shape, tuple[str, ...]] = {
    Shape.AGENT: ("AC-OFFICE-ASSIGN-RATE-003.4/ordinary-silent",),
    Shape.USER: ("AC-OFFICE-ASSIGN-RATE-001.1/others-no-counter",),
    Shape.PRODUCER: ("AC-OFFICE-ASSIGN-RATE-001.1/absent-is-normal",),
    Shape.OTHER: (
        "AC-OFFICE-ASSIGN-RATE-001.1/others-no-counter",
        "AC-OFFICE-ASSIGN-RATE-002.3/only-in-scope",
    ),
    Shape.UNPARSEABLE: ("OF-4",),
    Shape.UNASSIGNMENT: ("AC-OFFICE-ASSIGN-RATE-001.9/not-refused-or-counted",),
}
"""Why no rate-limit counter may move for a wake of each shape (admitted ordinarily)."""

SUPPRESSED_QUIET = ("AC-OFFICE-ASSIGN-RATE-001.5/suppressed-not-counted",)


# --------------------------------------------------------------------------
# Payloads, read the way the spec reads them
# --------------------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_payload(text: str) -> dict[str, Any] | None:
    """The payload as a JSON object, or None when it is not one (NaN and friends included)."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def shape_of(reason: str, payload: str) -> Shape:
    """The shape the spec gives a wake: actor type exactly "agent", then a string task id."""
    fields = parse_payload(payload)
    if fields is None:
        return Shape.UNPARSEABLE
    if reason != TASK_ASSIGNED or fields.get("actor_type") != AGENT:
        return Shape.OTHER
    task_id = fields.get("task_id")
    return Shape.AGENT if isinstance(task_id, str) and task_id else Shape.UNATTRIBUTED


def counts_as_agent_run(run: Run, task_id: str) -> bool:
    """A stored run the allowance of `task_id` counts: its payload says agent and names the task
    as a JSON string."""
    payload = parse_payload(run.payload) or {}
    return (
        run.reason == TASK_ASSIGNED
        and payload.get("task_id") == task_id
        and payload.get("actor_type") == AGENT
    )
