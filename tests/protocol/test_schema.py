"""The shipped JSON Schema: current, valid, and agreeing with the typed messages."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from conformance.driver import ErrorCode
from conformance.protocol import messages as m
from conformance.protocol.codec import (
    encode_error,
    encode_not_supported,
    encode_ok,
    encode_request,
)
from conformance.protocol.schemas import (
    SCHEMA_PATH,
    render_schema,
    reply_definition,
    shipped_schema,
    validator_for,
)

from .samples import SAMPLES


def test_the_shipped_schema_is_what_the_generator_produces() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema(), (
        "conformance/schemas/protocol-v1.schema.json is stale: "
        "run `python -m conformance.protocol.schemas`"
    )


def test_the_shipped_schema_is_a_valid_2020_12_schema() -> None:
    Draft202012Validator.check_schema(shipped_schema())


@pytest.mark.parametrize("name", sorted(m.OPERATIONS))
def test_each_request_matches_exactly_one_branch_of_the_root(name: str) -> None:
    args, _ = SAMPLES[name]
    message = json.loads(encode_request(1, m.OPERATIONS[name], args))
    document = shipped_schema()
    branches = [
        branch
        for branch in document["oneOf"]
        if Draft202012Validator({**branch, "$defs": document["$defs"]}).is_valid(message)
    ]
    assert branches == [{"$ref": f"#/$defs/{m.OPERATIONS[name].request_model.__name__}"}]


@pytest.mark.parametrize("name", sorted(m.OPERATIONS))
def test_every_reply_form_matches_the_operations_reply_definition(name: str) -> None:
    operation = m.OPERATIONS[name]
    _, result = SAMPLES[name]
    document = shipped_schema()
    validator = Draft202012Validator(
        {"$ref": f"#/$defs/{reply_definition(operation)}", "$defs": document["$defs"]}
    )
    lines = [
        encode_ok(2, operation, result),
        encode_error(2, ErrorCode.NOT_FOUND, "gone", definite=True),
        encode_not_supported(2, "later"),
    ]
    assert all(validator.is_valid(json.loads(line)) for line in lines)
    assert not validator.is_valid({"seq": 2, "ok": True})


def test_every_instant_in_the_schema_carries_the_wire_pattern() -> None:
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert text.count('"format": "date-time"') == text.count('"pattern": "^\\\\d{4}')
    assert text.count('"format": "date-time"') >= 5


def _spoiled(value: object) -> list[object]:
    """Variants of a valid message that a schema could tell apart: each part removed or retyped."""
    if isinstance(value, dict):
        variants: list[object] = []
        for key, item in value.items():
            variants.append({k: v for k, v in value.items() if k != key})
            variants.extend({**value, key: bad} for bad in ["x", 1.5, None, [], {}] if bad != item)
            variants.extend({**value, key: inner} for inner in _spoiled(item))
        return variants
    if isinstance(value, list) and value:
        return [value[1:], *([inner, *value[1:]] for inner in _spoiled(value[0]))]
    return []


@pytest.mark.parametrize("name", sorted(m.OPERATIONS))
def test_the_harness_s_reply_validator_judges_exactly_as_python_jsonschema(name: str) -> None:
    """The harness validates with jsonschema-rs for speed; it must agree with the reference
    Python library on the same document, valid and spoiled messages alike."""
    operation = m.OPERATIONS[name]
    definition = reply_definition(operation)
    document = shipped_schema()
    plain = Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": document["$defs"]})
    _, result = SAMPLES[name]
    valid = json.loads(encode_ok(2, operation, result))
    messages = [valid, *_spoiled(valid)]
    verdicts = [
        (plain.is_valid(message), validator_for(definition).is_valid(message))
        for message in messages
    ]
    assert all(expected == judged for expected, judged in verdicts)
    assert any(not expected for expected, _ in verdicts), "no spoiled variant was invalid"
