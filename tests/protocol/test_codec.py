"""The codec: every message survives a round trip, and every bad line is a typed error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from conformance.driver import ErrorCode
from conformance.protocol import messages as m
from conformance.protocol.codec import (
    Ok,
    ProtocolError,
    ProtocolErrorKind,
    decode_reply,
    decode_request,
    encode_error,
    encode_not_supported,
    encode_ok,
    encode_request,
    format_instant,
)

from .samples import SAMPLES

OPERATION_NAMES = sorted(m.OPERATIONS)
NOT_JSON, NOT_AN_OBJECT = ProtocolErrorKind.NOT_JSON, ProtocolErrorKind.NOT_AN_OBJECT
UNKNOWN_OP, WRONG_SEQ = ProtocolErrorKind.UNKNOWN_OP, ProtocolErrorKind.WRONG_SEQ
SCHEMA_INVALID = ProtocolErrorKind.SCHEMA_INVALID


def test_every_operation_has_a_sample() -> None:
    assert set(SAMPLES) == set(m.OPERATIONS)


@pytest.mark.parametrize("validate", [False, True])
@pytest.mark.parametrize("name", OPERATION_NAMES)
def test_a_request_survives_a_round_trip(name: str, validate: bool) -> None:
    operation = m.OPERATIONS[name]
    args, _ = SAMPLES[name]
    line = encode_request(7, operation, args, validate=validate)
    decoded = decode_request(line, validate=validate)
    assert "\n" not in line
    assert (decoded.seq, decoded.operation, decoded.args) == (7, operation, args)


@pytest.mark.parametrize("validate", [False, True])
@pytest.mark.parametrize("name", OPERATION_NAMES)
def test_a_result_survives_a_round_trip(name: str, validate: bool) -> None:
    operation = m.OPERATIONS[name]
    _, result = SAMPLES[name]
    line = encode_ok(7, operation, result, validate=validate)
    assert decode_reply(line, operation, 7, validate=validate) == Ok(seq=7, result=result)


def test_an_error_reply_survives_a_round_trip() -> None:
    line = encode_error(3, ErrorCode.LEASE_HELD, "held by p-1", definite=False)
    reply = decode_reply(line, m.CLAIM, 3, validate=True)
    assert isinstance(reply, m.ErrorReply)
    assert reply.error == m.ErrorBody(
        code=ErrorCode.LEASE_HELD, definite=False, message="held by p-1"
    )


def test_a_not_supported_reply_survives_a_round_trip() -> None:
    line = encode_not_supported(4, "no count-read hook")
    reply = decode_reply(line, m.FAIL_NEXT_COUNT_READ, 4, validate=True)
    assert reply == m.NotSupportedReply(seq=4, not_supported=True, message="no count-read hook")


def test_sets_go_on_the_wire_sorted_so_lines_are_reproducible() -> None:
    args, _ = SAMPLES["create_session"]
    line = encode_request(1, m.CREATE_SESSION, args)
    assert '"tools":["browser","shell"]' in line


# --------------------------------------------------------------------------
# Instants
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instant", "wire"),
    [
        (datetime(2026, 1, 1, tzinfo=UTC), "2026-01-01T00:00:00.000000Z"),
        (datetime(2026, 1, 1, 0, 0, 0, 5, tzinfo=UTC), "2026-01-01T00:00:00.000005Z"),
        (
            datetime(2026, 1, 1, 2, 0, tzinfo=timezone(timedelta(hours=2))),
            "2026-01-01T00:00:00.000000Z",
        ),
    ],
)
def test_instants_are_utc_with_six_fractional_digits(instant: datetime, wire: str) -> None:
    assert format_instant(instant) == wire


def test_a_naive_instant_never_reaches_the_wire() -> None:
    with pytest.raises(ValueError, match="naive"):
        encode_request(1, m.SET_CLOCK, m.SET_CLOCK.args(instant=datetime(2026, 1, 1)))


def test_a_duration_is_whole_microseconds() -> None:
    line = encode_request(1, m.ADVANCE_CLOCK, m.AdvanceClockArgs(delta_microseconds=1_500_000))
    assert '"args":{"delta_microseconds":1500000}' in line


# --------------------------------------------------------------------------
# Bad requests
# --------------------------------------------------------------------------

HANDSHAKE_LINE = '{"protocol":1,"seq":5,"op":"handshake","args":{}}'
GET_TASK_LINE = '{"protocol":1,"seq":5,"op":"get_task","args":{"task_id":"t"}}'


@pytest.mark.parametrize("validate", [False, True])
@pytest.mark.parametrize(
    ("line", "kind", "seq"),
    [
        pytest.param("hello", NOT_JSON, None, id="not-json"),
        pytest.param(b'{"seq": 1, "op": "\xff"}', NOT_JSON, None, id="not-utf8"),
        pytest.param("", NOT_JSON, None, id="empty-line"),
        pytest.param("[1, 2]", NOT_AN_OBJECT, None, id="array"),
        pytest.param('"handshake"', NOT_AN_OBJECT, None, id="string"),
        pytest.param(
            '{"protocol":1,"seq":5,"op":"frobnicate","args":{}}', UNKNOWN_OP, 5, id="unknown-op"
        ),
        pytest.param('{"protocol":1,"seq":5,"args":{}}', SCHEMA_INVALID, 5, id="no-op"),
        pytest.param('{"protocol":1,"seq":5,"op":7,"args":{}}', SCHEMA_INVALID, 5, id="op-not-str"),
        pytest.param(
            '{"protocol":1,"seq":5,"op":"advance_clock","args":'
            '{"delta_microseconds":999999999999999999999}}',
            SCHEMA_INVALID,
            5,
            id="clock-step-out-of-range",
        ),
        pytest.param(
            HANDSHAKE_LINE.replace('"protocol":1', '"protocol":2'), SCHEMA_INVALID, 5, id="v2"
        ),
        pytest.param(HANDSHAKE_LINE.replace('"seq":5', '"seq":0'), SCHEMA_INVALID, 0, id="seq-0"),
        pytest.param(
            HANDSHAKE_LINE.replace('"seq":5', '"seq":"5"'), SCHEMA_INVALID, None, id="seq-str"
        ),
        pytest.param(HANDSHAKE_LINE.replace('"seq":5,', ""), SCHEMA_INVALID, None, id="no-seq"),
        pytest.param(GET_TASK_LINE.replace('"t"', "7"), SCHEMA_INVALID, 5, id="wrong-type"),
        pytest.param(
            GET_TASK_LINE.replace('"task_id":"t"', ""), SCHEMA_INVALID, 5, id="missing-arg"
        ),
        pytest.param(
            GET_TASK_LINE.replace('"t"}', '"t","x":1}'), SCHEMA_INVALID, 5, id="extra-arg"
        ),
        pytest.param(GET_TASK_LINE.replace('"args"', '"argz"'), SCHEMA_INVALID, 5, id="no-args"),
        pytest.param(HANDSHAKE_LINE.replace("}}", '},"x":1}'), SCHEMA_INVALID, 5, id="extra-key"),
    ],
)
def test_a_bad_request_is_a_typed_error(
    line: str | bytes, kind: ProtocolErrorKind, seq: int | None, validate: bool
) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_request(line, validate=validate)
    assert (caught.value.kind, caught.value.seq) == (kind, seq)


# --------------------------------------------------------------------------
# Bad replies
# --------------------------------------------------------------------------

TASK = '{"task_id":"t","workspace_id":"w","assignee_agent_id":"","assignment_generation":0}'
GOOD_REPLY = '{"seq":5,"ok":true,"result":' + TASK + "}"


@pytest.mark.parametrize("validate", [False, True])
@pytest.mark.parametrize(
    ("line", "kind"),
    [
        pytest.param("Traceback (most recent call last):", NOT_JSON, id="not-json"),
        pytest.param("null", NOT_AN_OBJECT, id="null"),
        pytest.param(GOOD_REPLY.replace('"seq":5', '"seq":4'), WRONG_SEQ, id="stale-seq"),
        pytest.param(GOOD_REPLY.replace('"seq":5', '"seq":0'), WRONG_SEQ, id="seq-0"),
        pytest.param(GOOD_REPLY.replace('"seq":5,', ""), SCHEMA_INVALID, id="no-seq"),
        pytest.param('{"seq":5,"result":' + TASK + "}", SCHEMA_INVALID, id="no-ok"),
        pytest.param(GOOD_REPLY.replace('"ok":true', '"ok":"true"'), SCHEMA_INVALID, id="ok-str"),
        pytest.param(
            GOOD_REPLY.replace("}}", '},"not_supported":true}'), SCHEMA_INVALID, id="two-forms"
        ),
        pytest.param('{"seq":5,"ok":true}', SCHEMA_INVALID, id="no-result"),
        pytest.param(GOOD_REPLY.replace('"t",', "5,"), SCHEMA_INVALID, id="result-type"),
        pytest.param(GOOD_REPLY.replace("0}", '0,"x":1}'), SCHEMA_INVALID, id="result-extra"),
        pytest.param(GOOD_REPLY.replace(":0}", ':"0"}'), SCHEMA_INVALID, id="int-as-str"),
        pytest.param(
            '{"seq":5,"ok":false,"error":{"code":"oops","definite":true,"message":"m"}}',
            SCHEMA_INVALID,
            id="unknown-code",
        ),
        pytest.param(
            '{"seq":5,"ok":false,"error":{"code":"not_found"}}', SCHEMA_INVALID, id="thin-error"
        ),
        pytest.param(
            '{"seq":5,"not_supported":false,"message":"m"}', SCHEMA_INVALID, id="ns-false"
        ),
    ],
)
def test_a_bad_reply_is_a_typed_error(line: str, kind: ProtocolErrorKind, validate: bool) -> None:
    assert decode_reply(GOOD_REPLY, m.GET_TASK, 5, validate=validate)  # the baseline is fine
    with pytest.raises(ProtocolError) as caught:
        decode_reply(line, m.GET_TASK, 5, validate=validate)
    assert caught.value.kind is kind


@pytest.mark.parametrize(
    ("operation", "result"),
    [
        pytest.param(m.ADVANCE_CLOCK, '"2026-01-01T00:00:00"', id="naive-instant"),
        pytest.param(m.ADVANCE_CLOCK, '"2026-01-01T00:00:00.1234567Z"', id="sub-microsecond"),
        pytest.param(m.ADVANCE_CLOCK, '"2026-01-01 00:00:00Z"', id="space-separator"),
    ],
)
def test_validating_mode_rejects_what_typed_decoding_lets_through(
    operation: m.Operation[Any, Any], result: str
) -> None:
    line = '{"seq":1,"ok":true,"result":' + result + "}"
    assert isinstance(decode_reply(line, operation, 1, validate=False), Ok)
    with pytest.raises(ProtocolError) as caught:
        decode_reply(line, operation, 1, validate=True)
    assert caught.value.kind is SCHEMA_INVALID


def test_validating_mode_checks_outgoing_messages_too() -> None:
    wrong = m.GET_TASK.args(task_id="t")  # a get_task argument set sent as create_workspace
    with pytest.raises(ProtocolError) as caught:
        encode_request(1, m.CREATE_WORKSPACE, wrong, validate=True)
    assert caught.value.kind is SCHEMA_INVALID


def test_decoded_instants_are_in_utc_whatever_zone_was_written() -> None:
    line = '{"seq":1,"ok":true,"result":"2026-01-01T02:00:00.5+02:00"}'
    reply = decode_reply(line, m.ADVANCE_CLOCK, 1, validate=True)
    assert isinstance(reply, Ok)
    assert reply.result == datetime(2026, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)
    assert reply.result.tzinfo is UTC
