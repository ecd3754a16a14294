"""Replies with another request's seq."""

from fake_protocol import ok, serve, task


def wrong_seq(seq: int, args: dict[str, object]) -> None:
    ok(seq - 1, task(str(args["task_id"])))


serve(wrong_seq)
