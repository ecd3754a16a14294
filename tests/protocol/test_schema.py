"""The shipped JSON Schema: current, valid, and agreeing with the typed messages."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from conformance.driver import ErrorCode
from conformance.protocol import messages as m
from conformance.protocol.codec import encode_error, encode_not_supported, encode_ok, encode_request
from conformance.protocol.schemas import (
    SCHEMA_PATH,
    render_schema,
    reply_definition,
    shipped_schema,
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
