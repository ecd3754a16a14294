"""Answers every concurrent batch without running it: every outcome "indeterminate".

Unknown outcomes excuse whatever they might have done, so a checker that
accepts a batch of nothing but unknowns proves nothing: the race scenarios
must refuse to call this a pass.
"""

from __future__ import annotations

from typing import Any

from proxy import proxy


def unknown_outcomes(request: dict[str, Any]) -> dict[str, Any] | None:
    if request.get("op") != "run_concurrently":
        return None
    calls = request["args"]["calls"]
    outcomes = [
        {
            "ok": False,
            "result": None,
            "error": "indeterminate",
            "definite": False,
            "message": "timed out",
            "invoked_at_ns": index,
            "completed_at_ns": index + 1,
        }
        for index, _ in enumerate(calls)
    ]
    return {"seq": request["seq"], "ok": True, "result": outcomes}


proxy(bend=unknown_outcomes)
