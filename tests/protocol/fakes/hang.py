"""Hangs: never replies, and keeps a child process alive that must die with it."""

import subprocess
import sys
import time

from fake_protocol import serve


def hang(seq: int, args: dict[str, object]) -> None:
    child = subprocess.Popen(["sleep", "300"])
    print(f"child pid {child.pid}", file=sys.stderr, flush=True)
    time.sleep(300)


serve(hang)
