"""Writes a line that is not JSON where a reply belongs."""

from fake_protocol import ok, serve, task


def garbage(seq: int, args: dict[str, object]) -> None:
    print("<html><body>502 Bad Gateway</body></html>", flush=True)
    ok(seq, task(str(args["task_id"])))


serve(garbage)
