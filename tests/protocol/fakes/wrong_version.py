"""Speaks a protocol version the kit does not."""

from fake_protocol import serve


def unused(seq: int, args: dict[str, object]) -> None:
    raise AssertionError("never reached: the handshake fails first")


serve(unused, protocol_version=2)
