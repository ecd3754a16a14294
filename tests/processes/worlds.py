"""The worlds the process tests build, and the calls they make, on both capabilities."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from conformance.concurrency.history import HistoryRecorder, Operation
from conformance.driver import CallOutcome, ConcurrentCall, Permissions, Run

M = TypeVar("M", bound=BaseModel)

HOLDERS = [f"holder-{index}" for index in range(12)]
SESSIONS, SLICE = 5, 10


def work_request_world(recorder: HistoryRecorder, campaign: str, *, budget: int) -> None:
    """An environment (once), a campaign and its root sessions, all owned by `owner`."""
    if not any(op.operation == "create_environment" for op in recorder.operations()):
        recorder.invoke("create_environment", environment_id="env", members=["owner", *HOLDERS])
    recorder.invoke("create_campaign", campaign_id=campaign, environment_id="env", budget=budget)
    for index in range(SESSIONS):
        recorder.invoke(
            "create_session",
            session_id=f"{campaign}-root-{index}",
            campaign_id=campaign,
            principal="owner",
            permissions=Permissions(),
        )


def json_delegation(session: str) -> dict[str, Any]:
    """A spawn of one slice from `session`, in the JSON form a concurrent call carries."""
    return {
        "kind": "spawn",
        "originating_session_id": session,
        "deliverable": "a report",
        "acceptance_checks": ["it exists"],
        "budget_slice": SLICE,
        "permissions": {"tools": [], "devices": []},
        "assignee": None,
    }


def delegation(session: str) -> dict[str, Any]:
    return {**json_delegation(session), "permissions": Permissions()}


def office_cast(recorder: HistoryRecorder, assignees: list[str]) -> None:
    """A workspace, an agent allowed to assign (`lead`), and the assignees."""
    recorder.invoke("create_workspace", workspace_id="ws")
    recorder.invoke("create_agent", workspace_id="ws", agent_id="lead", can_assign_tasks=True)
    for agent in assignees:
        recorder.invoke("create_agent", workspace_id="ws", agent_id=agent, can_assign_tasks=False)


def agent_assignment(task: str, assignee: str) -> dict[str, Any]:
    return {"task_id": task, "assignee_agent_id": assignee, "acting_agent_id": "lead"}


def agent_wake_rows(runs: list[Run]) -> dict[str, int]:
    """Persisted agent-initiated assignment runs, per task."""
    counted: dict[str, int] = {}
    for run in runs:
        payload = json.loads(run.payload)
        if run.reason == "task_assigned" and payload.get("actor_type") == "agent":
            counted[payload["task_id"]] = counted.get(payload["task_id"], 0) + 1
    return counted


def concurrent_claims(request_id: str, holders: list[str]) -> list[ConcurrentCall]:
    return [
        ConcurrentCall(operation="claim", arguments={"request_id": request_id, "holder": holder})
        for holder in holders
    ]


def concurrent_agent_wakes(task: str, assignees: list[str]) -> list[ConcurrentCall]:
    """One agent-initiated assignment of `task` per assignee: each produces one agent wake."""
    return [
        ConcurrentCall(operation="assign_task", arguments=agent_assignment(task, assignee))
        for assignee in assignees
    ]


def successes(outcomes: list[CallOutcome], model: type[M]) -> list[M]:
    """The results of a batch's successful calls, read back into the port's type."""
    return [model.model_validate(outcome.result) for outcome in outcomes if outcome.ok]


def wake_outcomes(history: Sequence[Operation]) -> Counter[str]:
    """How the wakes of the assignments that answered ended: queued, rate_limited, none..."""
    return Counter(
        op.value["wake"]["outcome"]
        for op in history
        if op.operation == "assign_task" and op.outcome == "ok" and op.value["wake"]
    )


def admitted_wakes(history: Sequence[Operation]) -> dict[str, int]:
    """Per task, how many assignments the history shows with their wake admitted (queued)."""
    admitted = Counter(
        op.arguments["task_id"]
        for op in history
        if op.operation == "assign_task" and op.outcome == "ok"
        if op.value["wake"] and op.value["wake"]["outcome"] == "queued"
    )
    return dict(admitted)
