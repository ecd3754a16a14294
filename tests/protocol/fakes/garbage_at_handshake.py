"""Says on stderr why it is not ready, and answers the handshake with a line that is no JSON."""

from fake_protocol import serve


def garbage(seq: int, args: dict[str, object]) -> None:
    print("Listening on port 8080", flush=True)


serve(garbage, trigger="handshake")
