"""A protocol v1 proxy in front of the served reference, bending its answers in one way.

Each adversary script here launches `python -m conformance.wire.serve` behind it and
passes every request line through, except the operation it bends: the kit's
checks must see through the bend. It reads and writes JSON lines only, as an
adapter in any language would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

Bend = Callable[[dict[str, Any]], dict[str, Any] | None]
"""Given a request, the reply to send instead of the reference's, or None to pass it through."""
Rewrite = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
"""Given a request and the reference's reply, the reply to send."""


def proxy(bend: Bend | None = None, rewrite: Rewrite | None = None) -> None:
    served = subprocess.Popen(
        [sys.executable, "-m", "conformance.wire.serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert served.stdin is not None and served.stdout is not None
    for line in sys.stdin:
        request = json.loads(line)
        own = bend(request) if bend is not None else None
        if own is None:
            served.stdin.write(line)
            served.stdin.flush()
            reply = json.loads(served.stdout.readline())
            own = rewrite(request, reply) if rewrite is not None else reply
        sys.stdout.write(json.dumps(own) + "\n")
        sys.stdout.flush()
