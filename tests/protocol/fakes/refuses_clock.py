"""Completes the handshake but refuses to let the harness set its clock."""

from fake_protocol import send, serve


def refuse(seq: int, args: dict[str, object]) -> None:
    message = "this implementation reads the wall clock"
    send(
        {
            "seq": seq,
            "ok": False,
            "error": {"code": "invalid_input", "definite": True, "message": message},
        }
    )


serve(refuse, trigger="set_clock")
