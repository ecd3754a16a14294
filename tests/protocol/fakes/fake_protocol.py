"""A minimal, standalone protocol v1 speaker that each broken fake bends in one way.

It answers the handshake and a few operations correctly, so that a harness can
launch it, use it and restart it, and hands every request for the trigger
operation (get_task unless a fake says otherwise) to the fake's misbehaviour.
It imports nothing from the kit: it stands for an implementation in any language.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Misbehaviour = Callable[[int, dict[str, Any]], None]

DESCRIPTION: dict[str, Any] = {
    "name": "fake",
    "version": "0",
    "capabilities": ["office", "restart"],
}
OFFICE = {
    "allowance": 5,
    "window_seconds": 600.0,
    "coalesce_window_seconds": 5.0,
    "dedup_lookback_seconds": 86400.0,
    "producers": ["assignee_mutation"],
    "vocabulary": {
        "rate_limit_counter": "office_assignment_rate_limit_total",
        "reason_label": "reason",
        "reasons": {
            "allowance_exhausted": "allowance_exhausted",
            "count_read_failed": "count_read_failed",
            "task_unattributed": "task_unattributed",
        },
        "dedup_counters": ["office_run_dedup_total"],
        "task_updated_event": "task.updated",
        "interrupted_session_state": "completed",
    },
}
"""Office constants a fake declares when scenarios should get as far as their first action."""
RESULTS: dict[str, Any] = {"set_clock": None, "telemetry": "", "list_runs": [], "warning_logs": []}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ok(seq: int, result: Any) -> None:
    send({"seq": seq, "ok": True, "result": result})


def task(task_id: str) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "workspace_id": "w",
        "assignee_agent_id": "",
        "assignment_generation": 0,
    }


def serve(misbehave: Misbehaviour, *, trigger: str = "get_task", protocol_version: int = 1) -> None:
    print(f"fake {sys.argv[0]} starting", file=sys.stderr, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        seq, op = request["seq"], request["op"]
        if op == trigger:
            misbehave(seq, request["args"])
        elif op == "handshake":
            implementation = {"name": DESCRIPTION["name"], "version": DESCRIPTION["version"]}
            greeting = {"implementation": implementation, "description": DESCRIPTION}
            ok(seq, {"protocol_version": protocol_version, **greeting})
        elif op in RESULTS:
            ok(seq, RESULTS[op])
        else:
            send({"seq": seq, "not_supported": True, "message": f"the fake has no {op}"})
