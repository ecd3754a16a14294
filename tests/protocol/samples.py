"""One sample argument set and one sample result per protocol operation.

`test_every_operation_has_a_sample` keeps this table complete, so a new
operation cannot slip past the round-trip and schema tests.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from conformance.driver import (
    AssignmentResult,
    BudgetSnapshot,
    CallOutcome,
    Capability,
    Completion,
    ConcurrentCall,
    DelegationKind,
    Description,
    ErrorCode,
    Lease,
    MutationEffects,
    OfficeConstants,
    OfficeSession,
    OfficeVocabulary,
    Outcome,
    Permissions,
    Producer,
    PublishedEvent,
    ReasonLabels,
    RequestState,
    Run,
    SessionInterrupt,
    SessionView,
    TaskView,
    WakeResult,
    WarningLog,
    WorkRequest,
    WorkRequestLimits,
)
from conformance.protocol import messages as m

INSTANT = datetime(2026, 1, 1, 12, 30, 15, 123456, tzinfo=UTC)
ELSEWHERE = datetime(2026, 1, 1, 14, 30, 15, 7, tzinfo=timezone(timedelta(hours=2)))
PERMISSIONS = Permissions(tools=frozenset({"shell", "browser"}), devices=frozenset({"gpu"}))
DESCRIPTION = Description(
    name="sample",
    version="1.2.3",
    capabilities=[
        Capability.OFFICE,
        Capability.WORK_REQUESTS,
        Capability.RESTART,
        Capability.RESET,
    ],
    office=OfficeConstants(
        allowance=5,
        window_seconds=600,
        coalesce_window_seconds=5,
        dedup_lookback_seconds=86400,
        producers=[*Producer, "escalation_sweep"],
        vocabulary=OfficeVocabulary(
            rate_limit_counter="kandev_wake_throttle_total",
            reason_label="cause",
            reasons=ReasonLabels(allowance_exhausted="exhausted"),
            interrupted_session_state="interrupted",
        ),
    ),
    work_requests=WorkRequestLimits(max_depth=3, max_children_per_session=4, lease_seconds=30),
)
TASK = TaskView(task_id="t-1", workspace_id="w-1", assignee_agent_id="a-1", assignment_generation=2)
WAKE = WakeResult(outcome=Outcome.QUEUED, run_id="r-1")
ASSIGNMENT = AssignmentResult(task_id="t-1", assignee_agent_id="a-1", generation=2, wake=WAKE)
LEASE = Lease(holder="p-1", generation=1, expires_at=ELSEWHERE, closed_at=None)
WORK_REQUEST = WorkRequest(
    request_id="wr-1",
    kind=DelegationKind.SUBAGENT,
    environment_id="e-1",
    campaign_id="c-1",
    originating_session_id="s-1",
    child_session_id="s-2",
    deliverable="a report",
    acceptance_checks=["has a title", "cites sources"],
    budget_slice=40,
    budget_spent=5,
    permissions=PERMISSIONS,
    assignee=None,
    lease=LEASE,
    state=RequestState.IN_PROGRESS,
    result_ref=None,
)
ASSIGN = m.ASSIGN_TASK.args(task_id="t-1", assignee_agent_id="a-1", acting_agent_id="a-0")

SAMPLES: dict[str, tuple[m.Args, Any]] = {
    "handshake": (
        m.NoArgs(),
        m.HandshakeResult(
            protocol_version=1,
            implementation=m.Implementation(name="sample", version="1.2.3"),
            description=DESCRIPTION,
        ),
    ),
    "reset": (m.NoArgs(), None),
    "set_clock": (m.SET_CLOCK.args(instant=ELSEWHERE), None),
    "advance_clock": (m.AdvanceClockArgs(delta_microseconds=1_500_001), INSTANT),
    "create_workspace": (m.CREATE_WORKSPACE.args(workspace_id="w-1"), None),
    "create_agent": (
        m.CREATE_AGENT.args(workspace_id="w-1", agent_id="a-1", can_assign_tasks=True),
        None,
    ),
    "create_task": (m.CREATE_TASK.args(workspace_id="w-1", task_id="t-1"), TASK),
    "open_office_session": (m.OPEN_OFFICE_SESSION.args(agent_id="a-1", task_id="t-1"), None),
    "assign_task": (ASSIGN, ASSIGNMENT),
    "assign_task_keyless": (
        ASSIGN,
        AssignmentResult(task_id="t-1", assignee_agent_id="", generation=3, wake=None),
    ),
    "produce_wake": (
        m.PRODUCE_WAKE.args(producer=Producer.ONBOARDING, task_id="t-1", agent_id="a-1"),
        WakeResult(outcome=Outcome.RATE_LIMITED, run_id=None),
    ),
    "enqueue_wake": (
        m.ENQUEUE_WAKE.args(
            agent_id="a-1", reason="task_assigned", payload="{not json", dedup_key=None
        ),
        WakeResult(outcome=Outcome.COALESCED, run_id="r-1"),
    ),
    "set_run_status": (m.SET_RUN_STATUS.args(run_id="r-1", status="finished"), None),
    "delete_run": (m.DELETE_RUN.args(run_id="r-1"), None),
    "get_task": (m.GET_TASK.args(task_id="t-1"), TASK),
    "list_runs": (
        m.NoArgs(),
        [
            Run(
                run_id="r-1",
                agent_id="a-1",
                reason="task_assigned",
                payload='{"task_id": 42, "note": "caf\u00e9 \u2713"}',
                dedup_key="task_assigned:t-1:a-1:2",
                requested_at=INSTANT,
                status="queued",
                coalesced_count=3,
            )
        ],
    ),
    "telemetry": (
        m.NoArgs(),
        'office_assignment_rate_limit_total{reason="allowance_exhausted"} 1.0\n',
    ),
    "warning_logs": (
        m.NoArgs(),
        [WarningLog(message="refused", fields={"observed_count": 5, "task_id": "t-1", "x": None})],
    ),
    "mutation_effects": (
        m.NoArgs(),
        MutationEffects(
            interrupts=[SessionInterrupt(agent_id="a-0", task_id="t-1")],
            office_sessions=[OfficeSession(agent_id="a-0", task_id="t-1", state="completed")],
            events=[
                PublishedEvent(
                    event_type="task.updated", task_id="t-1", fields=["assignee_agent_id"]
                )
            ],
        ),
    ),
    "fail_next_count_read": (m.NoArgs(), None),
    "create_environment": (
        m.CREATE_ENVIRONMENT.args(environment_id="e-1", members=["p-1", "p-2"]),
        None,
    ),
    "create_campaign": (
        m.CREATE_CAMPAIGN.args(campaign_id="c-1", environment_id="e-1", budget=100),
        None,
    ),
    "create_session": (
        m.CREATE_SESSION.args(
            session_id="s-1", campaign_id="c-1", principal="p-1", permissions=PERMISSIONS
        ),
        None,
    ),
    "delegate": (
        m.DELEGATE.args(
            kind=DelegationKind.SUBAGENT,
            originating_session_id="s-1",
            deliverable="a report",
            acceptance_checks=["has a title"],
            budget_slice=40,
            permissions=Permissions(),
            assignee="p-2",
        ),
        WORK_REQUEST,
    ),
    "claim": (m.CLAIM.args(request_id="wr-1", holder="p-1"), LEASE),
    "heartbeat": (m.HEARTBEAT.args(request_id="wr-1", holder="p-1", generation=1), LEASE),
    "publish": (
        m.PUBLISH.args(request_id="wr-1", holder="p-1", generation=1, result_ref="s3://x"),
        Completion(
            request_id="wr-1",
            holder="p-1",
            generation=1,
            result_ref="s3://x",
            completed_at=INSTANT,
            budget_returned=35,
        ),
    ),
    "record_usage": (m.RECORD_USAGE.args(session_id="s-2", amount=5), None),
    "get_request": (m.GET_REQUEST.args(request_id="wr-1"), WORK_REQUEST),
    "list_requests": (m.LIST_REQUESTS.args(environment_id="e-1", principal="p-1"), [WORK_REQUEST]),
    "budget": (
        m.BUDGET.args(campaign_id="c-1"),
        BudgetSnapshot(campaign_id="c-1", total=100, available=55, reserved=35, spent=10),
    ),
    "list_sessions": (
        m.BUDGET.args(campaign_id="c-1"),
        [
            SessionView(
                session_id="s-1", campaign_id="c-1", request_id=None, depth=0, delegations=1
            ),
            SessionView(
                session_id="s-2", campaign_id="c-1", request_id="wr-1", depth=1, delegations=0
            ),
        ],
    ),
    "run_concurrently": (
        m.RUN_CONCURRENTLY.args(
            calls=[
                ConcurrentCall(
                    operation="claim", arguments={"request_id": "wr-1", "holder": "p-1"}
                ),
                ConcurrentCall(
                    operation="claim", arguments={"request_id": "wr-1", "holder": "p-2"}
                ),
            ]
        ),
        [
            CallOutcome(
                ok=True,
                result={"holder": "p-1", "generation": 1, "expires_at": "2026-01-01T00:00:30Z"},
                error=None,
                definite=True,
                message="",
                invoked_at_ns=10,
                completed_at_ns=900,
            ),
            CallOutcome(
                ok=False,
                result=None,
                error=ErrorCode.LEASE_HELD,
                definite=True,
                message="held by p-1",
                invoked_at_ns=12,
                completed_at_ns=950,
            ),
        ],
    ),
}
