"""The office features' odd wakes use the values the models draw (hostile_data), so a scenario
can never test with kinder data than the model, nor the model with kinder data than a scenario."""

from __future__ import annotations

from typing import Any

from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from conformance.oracle.office_shapes import TASK_ASSIGNED, Shape, parse_payload, shape_of
from conformance.properties.hostile_data import (
    BLANK_TASK_ID,
    JUDGED_APART,
    NOT_AGENT_ACTOR_TYPES,
    OFFICE_TASKS,
    OTHER_REASONS,
    UNATTRIBUTED_TASK_IDS,
    UNPARSEABLE_PAYLOADS,
)
from tests.paths import FEATURES

RAW_WAKE = 'wake for agent "'
ABSENT = object()


def raw_wakes() -> list[tuple[str, str, str]]:
    """(scenario, reason, payload) of every raw wake the office features enqueue, outline rows
    resolved."""
    found = []
    for path in sorted(FEATURES.glob("office_*.feature")):
        document: Any = Parser().parse(TokenScanner(path.read_text(encoding="utf-8")))
        for child in document["feature"]["children"]:
            scenario = child.get("scenario")
            if scenario is None:
                continue
            for row in rows_of(scenario):
                for step in scenario["steps"]:
                    text = fill(step["text"], row)
                    if RAW_WAKE in text and "with payload: " in text:
                        reason = text.split('"')[1]
                        found.append((scenario["name"], reason, text.split("with payload: ", 1)[1]))
    return found


def rows_of(scenario: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    for examples in scenario.get("examples", []):
        names = [cell["value"] for cell in examples["tableHeader"]["cells"]]
        rows += [
            dict(zip(names, (cell["value"] for cell in row["cells"]), strict=True))
            for row in examples["tableBody"]
        ]
    return rows or [{}]


def fill(text: str, row: dict[str, str]) -> str:
    for name, value in row.items():
        text = text.replace(f"<{name}>", value)
    return text


def odd_value(reason: str, payload: str) -> tuple[str, Any] | None:
    """What makes a raw wake odd, and the value that does, or None for an ordinary agent wake."""
    shape = shape_of(reason, payload)
    fields = parse_payload(payload) or {}
    if shape is Shape.UNPARSEABLE:
        return ("payload", payload)
    if reason != TASK_ASSIGNED:
        return ("reason", reason)
    if shape is Shape.OTHER:
        return ("actor_type", fields.get("actor_type", ABSENT))
    if shape is Shape.UNATTRIBUTED:
        return ("task_id", fields.get("task_id", ABSENT))
    return None


POOLS: dict[str, tuple[Any, ...]] = {
    "payload": (*UNPARSEABLE_PAYLOADS, *JUDGED_APART),
    "reason": OTHER_REASONS,
    "actor_type": (*NOT_AGENT_ACTOR_TYPES, ABSENT),
    "task_id": (*UNATTRIBUTED_TASK_IDS, ABSENT),
}


def test_the_features_enqueue_raw_wakes() -> None:
    assert len(raw_wakes()) > 20


def test_every_odd_value_of_the_features_is_in_the_models_pools() -> None:
    stray = [
        (scenario, kind, value)
        for scenario, reason, payload in raw_wakes()
        if (odd := odd_value(reason, payload)) is not None
        for kind, value in [odd]
        if not any(value is pooled or value == pooled for pooled in POOLS[kind])
    ]
    assert not stray, f"odd values the models never draw (add them to hostile_data): {stray}"


def test_every_task_an_attributed_raw_wake_names_is_one_the_model_draws() -> None:
    """A raw wake in scope names a task the model's raw wakes name too, the blank one included."""
    named = {
        parse_payload(payload)["task_id"]
        for _, reason, payload in raw_wakes()
        if shape_of(reason, payload) is Shape.AGENT
    }
    assert BLANK_TASK_ID in named
    assert named <= {*OFFICE_TASKS, BLANK_TASK_ID}, named - {*OFFICE_TASKS, BLANK_TASK_ID}


def test_every_task_the_features_create_is_one_the_model_draws() -> None:
    """The tasks the Gherkin creates (a number-like "42" apart: a task id written as a JSON
    number names no task) come from the model's pool, collation twins included."""
    created = {
        text.split('"')[1]
        for path in sorted(FEATURES.glob("office_*.feature"))
        for text in path.read_text(encoding="utf-8").splitlines()
        if 'a task "' in text and "with no assignee" in text
    }
    assert {"t-100", "T-100 "} <= created
    assert created - {"42"} <= set(OFFICE_TASKS), created - set(OFFICE_TASKS)
