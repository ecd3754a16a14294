"""Replies with a JSON object that is not a valid get_task result."""

from fake_protocol import ok, serve


def schema_invalid(seq: int, args: dict[str, object]) -> None:
    ok(seq, {"task_id": 42, "generation": "one"})


serve(schema_invalid)
