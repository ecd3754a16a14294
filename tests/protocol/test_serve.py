"""The reference served over the protocol: one reply per line, whatever the line holds."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.inprocess import InProcessDriver
from conformance.driver import ErrorCode
from conformance.protocol.messages import STORE_ENV
from conformance.wire.serve import (
    EXIT_NO_STORE,
    EXIT_OK,
    ProtocolServer,
    ServedReference,
    prepare_store,
    serve,
)

HANDSHAKE = '{"protocol":1,"seq":1,"op":"handshake","args":{}}'


def request(seq: int, op: str, **args: Any) -> str:
    return json.dumps({"protocol": 1, "seq": seq, "op": op, "args": args})


def converse(lines: list[str], store: Path, *, validate: bool = False) -> list[dict[str, Any]]:
    writer = io.StringIO()
    reader = io.StringIO("".join(line + "\n" for line in lines))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(STORE_ENV, str(store))
        assert serve(reader, writer, None, validate=validate) == EXIT_OK
    return [json.loads(line) for line in writer.getvalue().splitlines()]


@pytest.mark.parametrize("validate", [False, True])
def test_each_request_gets_one_reply_echoing_its_seq(tmp_path: Path, validate: bool) -> None:
    replies = converse(
        [
            HANDSHAKE,
            request(2, "create_workspace", workspace_id="w"),
            request(3, "create_workspace", workspace_id="w"),
            request(4, "advance_clock", delta_microseconds=1_000_001),
        ],
        tmp_path / "store",
        validate=validate,
    )
    assert [reply["seq"] for reply in replies] == [1, 2, 3, 4]
    assert replies[0]["result"]["protocol_version"] == 1
    assert replies[1] == {"seq": 2, "ok": True, "result": None}
    assert (
        replies[2]["error"]["code"] == ErrorCode.INVALID_INPUT and replies[2]["error"]["definite"]
    )
    assert replies[3]["result"] == "2026-01-01T00:00:01.000001Z"


def test_bad_lines_get_typed_replies_and_serving_goes_on(tmp_path: Path) -> None:
    replies = converse(
        [
            request(1, "get_task", task_id="t"),
            HANDSHAKE,
            "this is not json",
            request(3, "frobnicate"),
            request(4, "get_task", task_id=7),
            request(5, "get_task", task_id="t"),
        ],
        tmp_path / "store",
    )
    assert replies[0]["error"]["code"] == "invalid_input"
    assert "first request must be handshake" in replies[0]["error"]["message"]
    assert replies[1]["ok"] is True
    assert (replies[2]["seq"], replies[2]["error"]["code"]) == (0, "invalid_input")
    assert replies[3] == {
        "seq": 3,
        "not_supported": True,
        "message": "no operation named 'frobnicate'",
    }
    assert (replies[4]["seq"], replies[4]["error"]["code"]) == (4, "invalid_input")
    assert replies[5]["error"] == {
        "code": "not_found",
        "definite": True,
        "message": "unknown task 't'",
    }


def test_stray_prints_go_to_stderr_not_into_the_protocol_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def chatty_telemetry(self: InProcessDriver) -> str:
        print("debugging output that must not corrupt stdout")
        return "# nothing yet\n"

    monkeypatch.setattr(InProcessDriver, "telemetry", chatty_telemetry)
    replies = converse([HANDSHAKE, request(2, "telemetry")], tmp_path / "store")
    assert replies[1]["result"] == "# nothing yet\n"
    assert "debugging output" in capsys.readouterr().err


def test_an_unexpected_exception_is_an_indeterminate_internal_error(tmp_path: Path) -> None:
    class BrokenDriver(InProcessDriver):
        def list_runs(self) -> Any:
            raise RuntimeError("disk on fire")

    driver = BrokenDriver(f"sqlite:///{tmp_path / 'store.sqlite'}")
    try:
        server = ProtocolServer(lambda: driver, validate=True)
        server.answer(HANDSHAKE)
        broken = json.loads(server.answer(request(2, "list_runs")))
        after = json.loads(server.answer(request(3, "telemetry")))
    finally:
        driver.close()
    assert broken["error"] == {
        "code": "internal",
        "definite": False,
        "message": "RuntimeError: disk on fire",
    }
    assert after["ok"] is True


def test_without_a_store_the_server_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert serve(io.StringIO(HANDSHAKE + "\n"), io.StringIO(), None) == EXIT_NO_STORE


def test_a_store_directory_is_emptied_on_its_first_launch_only(tmp_path: Path) -> None:
    store = tmp_path / "store"
    url = prepare_store(None, str(store))
    driver = InProcessDriver(url)
    driver.create_workspace("w")
    driver.close()
    assert prepare_store(None, str(store)) == url
    relaunched = InProcessDriver(url)
    try:
        relaunched.create_agent("w", "a", can_assign_tasks=False)  # "w" survived
    finally:
        relaunched.close()
    assert url == f"sqlite:///{store / 'reference.sqlite'}"


def test_a_database_url_without_a_store_directory_is_used_as_given() -> None:
    assert prepare_store("postgresql+psycopg://h/db", None) == "postgresql+psycopg://h/db"


def test_the_served_reference_declares_reset_and_reset_empties_its_store(
    tmp_path: Path,
) -> None:
    replies = converse(
        [
            HANDSHAKE,
            request(2, "create_workspace", workspace_id="w"),
            request(3, "reset"),
            request(4, "create_workspace", workspace_id="w"),
        ],
        tmp_path / "store",
        validate=True,
    )
    assert "reset" in replies[0]["result"]["description"]["capabilities"]
    assert replies[2] == {"seq": 3, "ok": True, "result": None}
    assert replies[3] == {"seq": 4, "ok": True, "result": None}, "the workspace survived"


def test_a_reset_keeps_the_sqlite_store_open_and_closing_lets_it_go(tmp_path: Path) -> None:
    """SQLite folds its write-ahead log into the database when the last connection closes;
    a reset must not be that moment (it was, twice, and cost as much again), the end is."""
    store = tmp_path / "store"
    served = ServedReference(None, str(store))
    served.open().create_workspace("w")
    served.reset()
    with contextlib.closing(sqlite3.connect(store / "reference.sqlite")) as reader:
        _, logged, _ = reader.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert logged > 0, "the reset closed the store's last connection: its log was folded away"
    served.close()
    assert not (store / "reference.sqlite-wal").exists(), "a connection outlived the server"


def test_a_server_without_reset_neither_declares_nor_serves_it(tmp_path: Path) -> None:
    driver = InProcessDriver(f"sqlite:///{tmp_path / 'store.sqlite'}")
    try:
        server = ProtocolServer(lambda: driver, validate=True)
        greeting = json.loads(server.answer(HANDSHAKE))
        refused = json.loads(server.answer(request(2, "reset")))
    finally:
        driver.close()
    assert "reset" not in greeting["result"]["description"]["capabilities"]
    assert refused == {"seq": 2, "not_supported": True, "message": "reset is not offered"}
