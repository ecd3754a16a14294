"""Generates the protocol's JSON Schema from the message models, and loads the shipped copy.

One document, `conformance/schemas/protocol-v1.schema.json`: its root accepts
any request, and `$defs` holds `<Op>Request` and `<Op>Reply` for every
operation (plus the values they share), so an implementation in any language
can validate a line with any JSON Schema 2020-12 library. Regenerate it with
`python -m conformance.protocol.schemas` after changing a message.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import TypeAdapter

from conformance.protocol.messages import OPERATIONS, PROTOCOL_VERSION, Operation

if TYPE_CHECKING:
    from jsonschema_rs import Draft202012Validator

SCHEMA_PATH: Final = Path(__file__).resolve().parents[1] / "schemas" / "protocol-v1.schema.json"
DEFS_PREFIX: Final = "#/$defs/"

# What an instant looks like on the wire: ISO 8601 with a zone and at most
# microsecond precision (the harness always sends exactly six digits).
INSTANT_PATTERN: Final = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$"


def request_definition(operation: Operation[Any, Any]) -> str:
    return operation.request_model.__name__


def reply_definition(operation: Operation[Any, Any]) -> str:
    return request_definition(operation).removesuffix("Request") + "Reply"


def build_schema() -> dict[str, Any]:
    """The protocol's schema document, generated from the pydantic message models."""
    keyed: list[tuple[str, Any, TypeAdapter[Any]]] = []
    for operation in OPERATIONS.values():
        keyed.append(
            (request_definition(operation), "validation", TypeAdapter(operation.request_model))
        )
        keyed.append((reply_definition(operation), "validation", operation.reply_adapter))
    schemas, shared = TypeAdapter.json_schemas(keyed, ref_template="#/$defs/{model}")
    definitions: dict[str, Any] = dict(shared["$defs"])
    for operation in OPERATIONS.values():
        reply = dict(schemas[(reply_definition(operation), "validation")])
        reply["title"] = reply_definition(operation)
        definitions[reply_definition(operation)] = reply
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Conformance kit protocol v{PROTOCOL_VERSION}",
        "description": (
            "The root accepts any request. Validate a reply against "
            "#/$defs/<Op>Reply for the operation of the request it answers."
        ),
        "oneOf": [
            {"$ref": f"#/$defs/{request_definition(operation)}"}
            for operation in OPERATIONS.values()
        ],
        "$defs": dict(sorted(definitions.items())),
    }
    patterned: dict[str, Any] = _with_instant_pattern(document)
    return patterned


def _with_instant_pattern(node: Any) -> Any:
    """Every date-time string also gets INSTANT_PATTERN, since `format` is not enforced."""
    if isinstance(node, list):
        return [_with_instant_pattern(item) for item in node]
    if not isinstance(node, dict):
        return node
    rewritten = {key: _with_instant_pattern(value) for key, value in node.items()}
    if rewritten.get("format") == "date-time":
        rewritten["pattern"] = INSTANT_PATTERN
    return rewritten


def render_schema() -> str:
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


@cache
def shipped_schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@cache
def validator_for(definition: str) -> Draft202012Validator:
    """A validator for one `$defs` entry of the shipped schema.

    jsonschema-rs (compiled), because the harness validates every message an implementation
    sends, and the pure-Python validator was a fifth of a property's time through `exec:`.
    `format` is not enforced (as in any 2020-12 validator by default): instants are held to
    INSTANT_PATTERN instead. Imported here: only the validating mode needs it.
    """
    from jsonschema_rs import Draft202012Validator

    definitions = shipped_schema()["$defs"]
    if definition not in definitions:
        raise KeyError(f"the shipped schema has no definition {definition!r}")
    document = {"$ref": f"{DEFS_PREFIX}{definition}", "$defs": definitions}
    return Draft202012Validator(document, validate_formats=False)


def main() -> None:
    SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_PATH.write_text(render_schema(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")


if __name__ == "__main__":
    main()
