"""Declares the office, then crashes when the harness reads its telemetry surface."""

import sys

import fake_protocol
from fake_protocol import serve

fake_protocol.DESCRIPTION["office"] = fake_protocol.OFFICE


def crash(seq: int, args: dict[str, object]) -> None:
    print("panic: metrics registry poisoned", file=sys.stderr, flush=True)
    sys.exit(2)


serve(crash, trigger="telemetry")
