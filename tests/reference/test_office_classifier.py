"""The gate's scope and task attribution, read from every payload shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.reference.office.classifier import GateSubject, Scope, gate_subject, read_payload

ABSENT = object()


def payload(task_id: Any = "t-1", actor: Any = "agent", actor_id: Any = "boss") -> str:
    fields = {"task_id": task_id, "actor_type": actor, "actor_id": actor_id, "workspace_id": "w"}
    return json.dumps({name: value for name, value in fields.items() if value is not ABSENT})


def subject(reason: str, text: str) -> GateSubject:
    return gate_subject(reason, read_payload(text))


def test_an_agent_wake_naming_its_task_is_attributed() -> None:
    assert subject("task_assigned", payload()) == GateSubject(Scope.ATTRIBUTED, "t-1", "boss")


@pytest.mark.parametrize("reason", ["task_comment", "TASK_ASSIGNED", "", "task_assigned "])
def test_only_the_task_assigned_reason_is_in_scope(reason: str) -> None:
    assert subject(reason, payload()).scope is Scope.OUT_OF_SCOPE


@pytest.mark.parametrize(
    "actor", ["user", "Agent", "AGENT", " agent", "", ABSENT, None, 1, True, ["agent"]]
)
def test_any_actor_type_but_exactly_agent_is_out_of_scope(actor: Any) -> None:
    assert subject("task_assigned", payload(actor=actor)).scope is Scope.OUT_OF_SCOPE


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "{",
        '{"actor_type": "agent", "task_id": "t-1"',
        '"agent"',
        "[1, 2]",
        "null",
        '{"actor_type": "agent", "task_id": "t-1", "x": NaN}',
    ],
)
def test_a_payload_that_is_not_a_json_object_is_out_of_scope(text: str) -> None:
    assert subject("task_assigned", text).scope is Scope.OUT_OF_SCOPE
    assert read_payload(text).task_key == ""
    assert read_payload(text).actor_type is None


@pytest.mark.parametrize(
    "task_id", [ABSENT, None, "", 42, 0, True, False, [], ["t-1"], {}, {"id": "t-1"}]
)
def test_an_in_scope_wake_without_a_string_task_is_unattributed(task_id: Any) -> None:
    judged = subject("task_assigned", payload(task_id=task_id))
    assert judged == GateSubject(Scope.UNATTRIBUTED, task_id="", acting_agent_id="boss")


@pytest.mark.parametrize("actor_id", [ABSENT, None, "", 7])
def test_an_acting_agent_is_carried_only_when_the_payload_names_one(actor_id: Any) -> None:
    assert subject("task_assigned", payload(actor_id=actor_id)).acting_agent_id == ""
    assert subject("task_assigned", payload(task_id=None, actor_id=actor_id)).acting_agent_id == ""


@pytest.mark.parametrize(
    ("task_id", "expected"),
    [
        ("t-1", "t-1"),
        ("42", "42"),
        (42, ""),
        (ABSENT, ""),
        (None, ""),
        ("", ""),
        (True, ""),
        ([], ""),
    ],
)
def test_the_task_key_is_the_task_id_only_when_it_is_a_non_empty_string(
    task_id: Any, expected: str
) -> None:
    assert read_payload(payload(task_id=task_id)).task_key == expected
    assert read_payload(payload(task_id=task_id, actor=ABSENT)).task_key == expected


@pytest.mark.parametrize(
    ("actor", "expected"),
    [("agent", "agent"), ("Agent", "Agent"), ("", ""), (ABSENT, None), (1, None)],
)
def test_the_stored_actor_type_is_the_payload_string_verbatim(
    actor: Any, expected: str | None
) -> None:
    assert read_payload(payload(actor=actor)).actor_type == expected
