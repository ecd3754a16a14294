"""Fails every second assignment with an error of its own, and says why on stderr.

Its account of a failure must carry its own words (the error's message, the stderr line)
beside the kit's, and a property it fails must still give its counterexample as Gherkin,
although what failed is an error, not a check.
"""

from __future__ import annotations

import sys
from itertools import count
from typing import Any

from proxy import proxy

ASSIGNMENTS = [count(1)]
"""Counted from the last reset, so that a process the harness reuses fails the same assignments
in every example: Hypothesis replays a failure only if it fails the same way again."""


def every_second_assignment_fails(request: dict[str, Any]) -> dict[str, Any] | None:
    if request.get("op") == "reset":
        ASSIGNMENTS[0] = count(1)
    if request.get("op") != "assign_task" or next(ASSIGNMENTS[0]) % 2:
        return None
    task = request["args"]["task_id"]
    print(f"grumbler: lock wait timeout on task {task}", file=sys.stderr, flush=True)
    error = {"code": "internal", "definite": True, "message": "the task row is locked"}
    return {"seq": request["seq"], "ok": False, "error": error}


proxy(bend=every_second_assignment_fails)
