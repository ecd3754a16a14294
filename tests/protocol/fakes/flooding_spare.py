"""Declares prelaunch, then breaks its promise loudly: launched as a spare (its store does not
exist yet), it writes 256 MB of lines to stdout before any handshake."""

import os
import sys
from pathlib import Path

from fake_protocol import DESCRIPTION, serve

DESCRIPTION["capabilities"] = ["office", "restart", "prelaunch"]
if not Path(os.environ["CONFORMANCE_STORE"]).exists():
    line = b"x" * 1023 + b"\n"
    for _ in range(256 * 1024):
        sys.stdout.buffer.write(line)
    sys.stdout.flush()
serve(lambda seq, args: None, trigger="never sent")
