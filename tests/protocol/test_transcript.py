"""docs/protocol.md's worked transcript is a real conversation with the served reference.

Adapter authors copy it. It went stale once (a `delegate` without the required `kind`, a
handshake without `multiprocess` and `vocabulary`), and copying it gave schema-invalid replies.
So its requests are sent, in one process as the doc tells it, to the reference served over
protocol v1 with every message checked against the schema both ways, and its replies must be
the ones the reference gives, but for the ids the reference draws at random and the kit's
version. `CONFORMANCE_WRITE_TRANSCRIPT=1` rewrites the doc's replies from the run instead.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest

from conformance import __version__
from conformance.protocol.codec import decode_reply, decode_request
from conformance.protocol.messages import OPERATIONS, STORE_ENV
from conformance.wire.serve import EXIT_OK, serve

PROTOCOL_DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
SECTION = "## A worked transcript"
WRITE_ENV = "CONFORMANCE_WRITE_TRANSCRIPT"
DRAWN = (re.compile(r"\b(wr|cs)-[0-9a-f]{32}\b"), r"\1-<drawn>")
"""Request and child-session ids, drawn at random by the reference."""
VERSION = (re.compile(r'"version":"[^"]+"'), '"version":"<kit version>"')


def section(text: str) -> tuple[int, int]:
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return start, len(text) if end < 0 else end


def blocks(text: str) -> list[str]:
    """The transcript's ```text blocks, in order."""
    start, end = section(text)
    return re.findall(r"```text\n(.*?)```", text[start:end], flags=re.DOTALL)


def requests_of(block: str) -> list[str]:
    return [line.removeprefix("> ") for line in block.splitlines() if line.startswith("> ")]


def normalised(text: str) -> str:
    for pattern, replacement in (DRAWN, VERSION):
        text = pattern.sub(replacement, text)
    return text


def conversation(requests: list[str], store: Path) -> list[str]:
    """The served reference's replies, one process, every message checked against the schema."""
    reader = io.StringIO("".join(f"{line}\n" for line in requests))
    writer = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(STORE_ENV, str(store))
        assert serve(reader, writer, None, validate=True) == EXIT_OK
    replies = writer.getvalue().splitlines()
    assert len(replies) == len(requests)
    for request, reply in zip(requests, replies, strict=True):
        decoded = decode_request(request, validate=True)
        decode_reply(reply, decoded.operation, decoded.seq, validate=True)
    return replies


def transcript(requests: list[str], replies: list[str]) -> str:
    return "".join(f"> {q}\n< {a}\n" for q, a in zip(requests, replies, strict=True))


def test_the_worked_transcript_is_what_the_served_reference_answers(tmp_path: Path) -> None:
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    *conversed, illustration = blocks(text)
    assert len(conversed) == 2, "the first scenario, then the next one after the reset"
    asked = [requests_of(block) for block in conversed]
    replies = conversation([line for part in asked for line in part], tmp_path)
    answered = [replies[: len(asked[0])], replies[len(asked[0]) :]]
    fresh = [transcript(q, a) for q, a in zip(asked, answered, strict=True)]
    if os.environ.get(WRITE_ENV):
        for old, new in zip(conversed, fresh, strict=True):
            text = text.replace(old, new, 1)
        PROTOCOL_DOC.write_text(text, encoding="utf-8")
        *conversed, _ = blocks(text)
    for shown, real in zip(conversed, fresh, strict=True):
        assert normalised(shown) == normalised(real), f"refresh it: {WRITE_ENV}=1"
    handshake = json.loads(answered[0][0])["result"]["description"]
    assert "multiprocess" in handshake["capabilities"]
    assert "vocabulary" in handshake["office"]
    assert __version__ in answered[0][0]
    assert illustration.startswith("> "), "the not_supported reply is shown last"


def test_the_illustrated_not_supported_reply_is_schema_valid() -> None:
    *_, illustration = blocks(PROTOCOL_DOC.read_text(encoding="utf-8"))
    request, reply = (line[2:] for line in illustration.splitlines())
    decoded = decode_request(request, validate=True)
    assert decoded.operation is OPERATIONS["run_concurrently"]
    assert decode_reply(reply, decoded.operation, decoded.seq, validate=True)
