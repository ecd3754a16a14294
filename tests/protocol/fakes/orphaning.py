"""Exits on get_task, leaving a child that still holds its stdout open."""

import subprocess
import sys

from fake_protocol import serve


def orphan(seq: int, args: dict[str, object]) -> None:
    subprocess.Popen(["sleep", "30"])
    sys.exit(4)


serve(orphan)
