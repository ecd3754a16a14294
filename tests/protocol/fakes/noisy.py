"""Answers correctly, but floods stderr (far beyond a pipe's buffer) before every reply."""

import sys

from fake_protocol import ok, serve, task


def noisy(seq: int, args: dict[str, object]) -> None:
    for line in range(5000):
        print(f"debug: request {seq} line {line} " + "x" * 80, file=sys.stderr)
    sys.stderr.flush()
    ok(seq, task(str(args["task_id"])))


serve(noisy)
