"""One JSON line to one typed message and back, for both ends of the protocol.

Bad input never escapes as a bare ValueError: it is a ProtocolError whose kind
says what was wrong, carrying the seq when one could be read. With
`validate=True` every line is also checked against the shipped JSON Schema,
the same document an implementation in another language validates against.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from conformance.driver import ErrorCode
from conformance.protocol.messages import (
    OPERATIONS,
    PROTOCOL_VERSION,
    Args,
    ErrorBody,
    ErrorReply,
    NotSupportedReply,
    Operation,
    Request,
)
from conformance.protocol.schemas import request_definition, validator_for

if TYPE_CHECKING:
    from jsonschema_rs import Draft202012Validator

R = TypeVar("R")

EXCERPT_CHARS: Final = 200


class ProtocolErrorKind(StrEnum):
    NOT_JSON = "not_json"
    NOT_AN_OBJECT = "not_an_object"
    UNKNOWN_OP = "unknown_op"
    WRONG_SEQ = "wrong_seq"
    SCHEMA_INVALID = "schema_invalid"


class ProtocolError(Exception):
    """A line that is not a valid message. `seq` is the line's own seq, when readable."""

    def __init__(self, kind: ProtocolErrorKind, message: str, *, seq: int | None = None) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = kind
        self.message = message
        self.seq = seq


@dataclass(frozen=True)
class Ok(Generic[R]):
    """A success reply, with the operation's typed result."""

    seq: int
    result: R


# --------------------------------------------------------------------------
# Instants and other values on the wire
# --------------------------------------------------------------------------


def format_instant(instant: datetime) -> str:
    """UTC, always six fractional digits, `Z` for the zone."""
    if instant.tzinfo is None:
        raise ValueError(f"naive datetime {instant.isoformat()} cannot go on the wire")
    text = instant.astimezone(UTC).isoformat(timespec="microseconds")
    return text.removesuffix("+00:00") + "Z"


def _wire_value(value: object) -> object:
    if isinstance(value, datetime):
        return format_instant(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} has no wire form")


def _dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, default=_wire_value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------


def encode_request(
    seq: int, operation: Operation[Any, Any], args: Args, *, validate: bool = False
) -> str:
    line = _dumps(
        {
            "protocol": PROTOCOL_VERSION,
            "seq": seq,
            "op": operation.name,
            "args": args.model_dump(mode="python"),
        }
    )
    if validate:
        _check_schema(json.loads(line), validator_for(request_definition(operation)), seq)
    return line


def encode_ok(seq: int, operation: Operation[Any, R], result: R, *, validate: bool = False) -> str:
    dumped = operation.result_adapter.dump_python(result, mode="python")
    line = _dumps({"seq": seq, "ok": True, "result": dumped})
    if validate:
        _check_schema(json.loads(line), validator_for(operation.ok_model.__name__), seq)
    return line


def encode_error(seq: int, code: ErrorCode, message: str, *, definite: bool) -> str:
    body = ErrorBody(code=code, definite=definite, message=message)
    return _dumps(ErrorReply(seq=seq, ok=False, error=body).model_dump(mode="python"))


def encode_not_supported(seq: int, message: str) -> str:
    return _dumps({"seq": seq, "not_supported": True, "message": message})


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------


def decode_request(line: str | bytes, *, validate: bool = False) -> Request:
    """A typed request; UNKNOWN_OP, SCHEMA_INVALID and the rest as ProtocolError."""
    message = _load_object(line)
    seq = _readable_seq(message)
    name = message.get("op")
    if not isinstance(name, str):
        raise ProtocolError(
            ProtocolErrorKind.SCHEMA_INVALID, f"a request needs an op string, got {name!r}", seq=seq
        )
    operation = OPERATIONS.get(name)
    if operation is None:
        raise ProtocolError(ProtocolErrorKind.UNKNOWN_OP, f"no operation named {name!r}", seq=seq)
    if message.get("protocol") != PROTOCOL_VERSION:
        raise ProtocolError(
            ProtocolErrorKind.SCHEMA_INVALID,
            f"protocol {message.get('protocol')!r} is not {PROTOCOL_VERSION}",
            seq=seq,
        )
    if validate:
        _check_schema(message, validator_for(request_definition(operation)), seq)
    typed = _validate_model(operation.request_model, line, seq)
    args = _in_utc(getattr(typed, "args"))  # noqa: B009  (a field of a model built by create_model)
    assert isinstance(args, Args)
    return Request(seq=getattr(typed, "seq"), operation=operation, args=args)  # noqa: B009


def decode_reply(
    line: str | bytes,
    operation: Operation[Any, R],
    expected_seq: int,
    *,
    validate: bool = False,
) -> Ok[R] | ErrorReply | NotSupportedReply:
    """The typed reply to request `expected_seq`; anything else is a ProtocolError."""
    message = _load_object(line)
    seq = _readable_seq(message)
    if seq is not None and seq != expected_seq:
        raise ProtocolError(
            ProtocolErrorKind.WRONG_SEQ,
            f"expected the reply to seq {expected_seq}, got seq {seq}: {_excerpt(line)}",
            seq=seq,
        )
    form = _reply_form(message, operation)
    if validate:
        _check_schema(message, validator_for(form.__name__), seq)
    reply = _validate_model(form, line, seq)
    if isinstance(reply, ErrorReply | NotSupportedReply):
        return reply
    result: R = _in_utc(getattr(reply, "result"))  # noqa: B009  (a field of a create_model model)
    return Ok(seq=expected_seq, result=result)


def _reply_form(message: dict[str, Any], operation: Operation[Any, Any]) -> type[BaseModel]:
    """Which of the three reply forms the line claims to be, so errors speak of that form.

    Each form's model is named like its definition in the schema.
    """
    if message.get("ok") is True:
        return operation.ok_model
    if message.get("ok") is False:
        return ErrorReply
    if "not_supported" in message:
        return NotSupportedReply
    raise ProtocolError(
        ProtocolErrorKind.SCHEMA_INVALID,
        f"a reply carries ok (true or false) or not_supported: {_excerpt(message)}",
        seq=_readable_seq(message),
    )


def _in_utc(value: Any) -> Any:
    """Decoded instants carry datetime.UTC, like the values an in-process driver returns.

    Whatever zone an implementation wrote, the suite then sees (and reports)
    the same values over the wire as in-process.
    """
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo is not None else value
    if isinstance(value, BaseModel):
        fields = {name: _in_utc(getattr(value, name)) for name in type(value).model_fields}
        return value.model_copy(update=fields)
    if isinstance(value, list):
        return [_in_utc(item) for item in value]
    if isinstance(value, dict):
        return {key: _in_utc(item) for key, item in value.items()}
    return value


def _load_object(line: str | bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError) as error:
        raise ProtocolError(ProtocolErrorKind.NOT_JSON, f"{error}: {_excerpt(line)}") from error
    if not isinstance(message, dict):
        raise ProtocolError(
            ProtocolErrorKind.NOT_AN_OBJECT,
            f"a message is a JSON object, got {type(message).__name__}: {_excerpt(line)}",
        )
    return message


def _readable_seq(message: dict[str, Any]) -> int | None:
    seq = message.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _check_schema(message: Any, validator: Draft202012Validator, seq: int | None) -> None:
    error = next(iter(validator.iter_errors(message)), None)
    if error is not None:
        where = "/".join(str(part) for part in error.instance_path) or "(root)"
        raise ProtocolError(
            ProtocolErrorKind.SCHEMA_INVALID, f"at {where}: {error.message}", seq=seq
        )


def _validate_model(model: type[BaseModel], line: str | bytes, seq: int | None) -> BaseModel:
    try:
        return model.model_validate_json(line, strict=True)
    except ValidationError as error:
        raise _schema_invalid(error, line, seq) from error


def _schema_invalid(error: ValidationError, line: str | bytes, seq: int | None) -> ProtocolError:
    first = error.errors()[0]
    where = "/".join(str(part) for part in first["loc"]) or "(root)"
    return ProtocolError(
        ProtocolErrorKind.SCHEMA_INVALID,
        f"at {where}: {first['msg']} ({error.error_count()} error(s)) in {_excerpt(line)}",
        seq=seq,
    )


def _excerpt(line: str | bytes | dict[str, Any]) -> str:
    if isinstance(line, dict):
        line = json.dumps(line)
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    text = text.rstrip("\n")
    return repr(text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "...")
