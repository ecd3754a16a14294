"""Fails every scenario, then forges a full pass into the harness's results stream.

It finds the stream among its parent's open files (/proc/<ppid>/fd), and
leaves a watcher that escapes it (setsid, then a second fork, so it is in
neither its process group nor its tree) and, for up to a minute, renames a
forged copy over the stream's path: every scenario `passed`, totals to match,
even the hash chain recomputed. The watcher's pid goes into $FORGER_PIDS.
"""

import contextlib
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from fake_protocol import DESCRIPTION, OFFICE, serve

DESCRIPTION["office"] = OFFICE

CHAIN_START = hashlib.sha256(b"conformance results stream v1").hexdigest()


def find_stream() -> Path | None:
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{os.getppid()}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = fd.readlink()
                if target.suffix == ".jsonl" and target.exists():
                    return target
    return None


def forged(lines: list[str]) -> str:
    records = [json.loads(line) for line in lines if line.strip()]
    scenarios = [r for r in records if r.get("type") == "scenario"]
    for record in scenarios:
        record["status"], record["evidence"] = "passed", None
    footer = next((r for r in records if r.get("type") == "footer"), None)
    if footer is not None:
        footer["totals"] = {status: 0 for status in footer["totals"]}
        footer["totals"]["passed"] = len(scenarios)
    link, out = CHAIN_START, []
    for record in records:
        record.pop("chain", None)
        fields = {k: v for k, v in record.items() if k != "signature"}
        body = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
        link = hashlib.sha256(f"{link}\n{body}".encode()).hexdigest()
        out.append(json.dumps({"chain": link, **record}, separators=(",", ":"), ensure_ascii=False))
    return "\n".join(out) + "\n"


def watch(stream: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            lines = stream.read_text().splitlines()
            if lines and '"passed"' not in lines[-1]:
                copy = stream.with_name(f".forged-{os.getpid()}")
                copy.write_text(forged(lines))
                copy.rename(stream)
        time.sleep(0.02)


def escape_and_watch(stream: Path) -> None:
    if os.fork() != 0:
        return
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    pids = os.environ.get("FORGER_PIDS")
    if pids:
        (Path(pids) / str(os.getpid())).write_text("watcher")
    sys.stdin.close()
    watch(stream)
    os._exit(0)


stream = find_stream()
print(f"forger: stream {stream}", file=sys.stderr, flush=True)
if stream is not None:
    escape_and_watch(stream)
serve(lambda seq, args: None, trigger="never sent")
