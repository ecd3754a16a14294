"""Protocol v1 messages: the envelopes, and one operation per driver-port method.

An operation's arguments are a model whose field names are the port method's
parameter names, and its result is the port method's return type, so the wire
carries the port's own values. Two methods have no message because they act
on the process, not through it: `restart` (the harness kills the process and
launches it again on the same store) and `close` (the harness closes stdin).
`describe` is answered once, by the handshake. One operation has no port
method: `reset` (capability `reset`) empties the implementation between two
scenarios, so that the harness can hand the same process to the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Annotated, Any, Final, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, Field, TypeAdapter, create_model

from conformance.driver import (
    AssignmentResult,
    BudgetSnapshot,
    CallOutcome,
    Completion,
    ConcurrentCall,
    DelegationKind,
    Description,
    ErrorCode,
    Lease,
    MutationEffects,
    Permissions,
    Run,
    RunStatus,
    SessionView,
    TaskView,
    Value,
    WakeResult,
    WarningLog,
    WorkRequest,
)

PROTOCOL_VERSION: Final = 1
STORE_ENV: Final = "CONFORMANCE_STORE"
"""Names the scenario's store directory: empty at its first launch, kept across restarts."""

RequestSeq = Annotated[int, Field(ge=1, description="Chosen by the harness, increasing from 1.")]
ReplySeq = Annotated[
    int,
    Field(ge=0, description="The request's seq; 0 when the request's seq could not be read."),
]


# --------------------------------------------------------------------------
# Arguments, one model per operation that takes any
# --------------------------------------------------------------------------


class Args(Value):
    """Base of every operation's `args` object."""


class NoArgs(Args):
    pass


class SetClockArgs(Args):
    instant: datetime


#: A century in microseconds: any larger step is a mistake, refused as invalid input.
MAX_CLOCK_STEP_MICROSECONDS = 100 * 366 * 24 * 3600 * 10**6


class AdvanceClockArgs(Args):
    delta_microseconds: int = Field(ge=0, le=MAX_CLOCK_STEP_MICROSECONDS)


class WorkspaceArgs(Args):
    workspace_id: str


class CreateAgentArgs(Args):
    workspace_id: str
    agent_id: str
    can_assign_tasks: bool


class CreateTaskArgs(Args):
    workspace_id: str
    task_id: str
    assignee_agent_id: str = ""


class AgentTaskArgs(Args):
    agent_id: str
    task_id: str


class AssignTaskArgs(Args):
    task_id: str
    assignee_agent_id: str
    acting_agent_id: str


class ProduceWakeArgs(Args):
    producer: str
    task_id: str
    agent_id: str


class EnqueueWakeArgs(Args):
    agent_id: str
    reason: str
    payload: str
    dedup_key: str | None


class SetRunStatusArgs(Args):
    run_id: str
    status: RunStatus


class RunArgs(Args):
    run_id: str


class TaskArgs(Args):
    task_id: str


class CreateEnvironmentArgs(Args):
    environment_id: str
    members: list[str]


class CreateCampaignArgs(Args):
    campaign_id: str
    environment_id: str
    budget: int


class CreateSessionArgs(Args):
    session_id: str
    campaign_id: str
    principal: str
    permissions: Permissions


class DelegateArgs(Args):
    kind: DelegationKind
    originating_session_id: str
    deliverable: str
    acceptance_checks: list[str]
    budget_slice: int
    permissions: Permissions
    assignee: str | None


class ClaimArgs(Args):
    request_id: str
    holder: str


class HeartbeatArgs(Args):
    request_id: str
    holder: str
    generation: int


class PublishArgs(Args):
    request_id: str
    holder: str
    generation: int
    result_ref: str


class RecordUsageArgs(Args):
    session_id: str
    amount: int


class RequestArgs(Args):
    request_id: str


class ListRequestsArgs(Args):
    environment_id: str
    principal: str


class CampaignArgs(Args):
    campaign_id: str


class RunConcurrentlyArgs(Args):
    calls: list[ConcurrentCall]


# --------------------------------------------------------------------------
# The handshake's result
# --------------------------------------------------------------------------


class Implementation(Value):
    name: str
    version: str


class HandshakeResult(Value):
    protocol_version: Literal[1]
    implementation: Implementation
    description: Description


# --------------------------------------------------------------------------
# Operations
# --------------------------------------------------------------------------

A = TypeVar("A", bound=Args)
R = TypeVar("R")


@dataclass(frozen=True)
class Operation(Generic[A, R]):
    """One request kind: its name on the wire, its arguments and its result type.

    Its models are built when first used: a process that serves a few operations and exits
    (a restart, a property's example) should not pay for all of them at start-up.
    """

    name: str
    args: type[A]
    result: type[R]

    @cached_property
    def request_model(self) -> type[BaseModel]:
        return create_model(
            f"{self._camel}Request",
            __base__=Value,
            protocol=(Literal[1], ...),
            seq=(RequestSeq, ...),
            op=(cast(Any, Literal)[self.name], ...),
            args=(self.args, ...),
        )

    @cached_property
    def ok_model(self) -> type[BaseModel]:
        return create_model(
            f"{self._camel}Ok",
            __base__=Value,
            seq=(ReplySeq, ...),
            ok=(Literal[True], ...),
            result=(self.result, ...),
        )

    @cached_property
    def reply_adapter(self) -> TypeAdapter[Any]:
        reply: Any = self.ok_model | ErrorReply | NotSupportedReply
        return TypeAdapter(reply)

    @cached_property
    def result_adapter(self) -> TypeAdapter[R]:
        return TypeAdapter(self.result)

    @property
    def _camel(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))


class ErrorBody(Value):
    code: ErrorCode
    definite: bool = Field(description="True when the operation certainly did not happen.")
    message: str


class ErrorReply(Value):
    seq: ReplySeq
    ok: Literal[False]
    error: ErrorBody


class NotSupportedReply(Value):
    seq: ReplySeq
    not_supported: Literal[True]
    message: str


_None = type(None)

HANDSHAKE = Operation("handshake", NoArgs, HandshakeResult)
RESET = Operation("reset", NoArgs, _None)
SET_CLOCK = Operation("set_clock", SetClockArgs, _None)
ADVANCE_CLOCK = Operation("advance_clock", AdvanceClockArgs, datetime)
CREATE_WORKSPACE = Operation("create_workspace", WorkspaceArgs, _None)
CREATE_AGENT = Operation("create_agent", CreateAgentArgs, _None)
CREATE_TASK = Operation("create_task", CreateTaskArgs, TaskView)
OPEN_OFFICE_SESSION = Operation("open_office_session", AgentTaskArgs, _None)
ASSIGN_TASK = Operation("assign_task", AssignTaskArgs, AssignmentResult)
PRODUCE_WAKE = Operation("produce_wake", ProduceWakeArgs, WakeResult)
ENQUEUE_WAKE = Operation("enqueue_wake", EnqueueWakeArgs, WakeResult)
SET_RUN_STATUS = Operation("set_run_status", SetRunStatusArgs, _None)
DELETE_RUN = Operation("delete_run", RunArgs, _None)
GET_TASK = Operation("get_task", TaskArgs, TaskView)
LIST_RUNS = Operation("list_runs", NoArgs, list[Run])
TELEMETRY = Operation("telemetry", NoArgs, str)
WARNING_LOGS = Operation("warning_logs", NoArgs, list[WarningLog])
MUTATION_EFFECTS = Operation("mutation_effects", NoArgs, MutationEffects)
FAIL_NEXT_COUNT_READ = Operation("fail_next_count_read", NoArgs, _None)
ASSIGN_TASK_KEYLESS = Operation("assign_task_keyless", AssignTaskArgs, AssignmentResult)
CREATE_ENVIRONMENT = Operation("create_environment", CreateEnvironmentArgs, _None)
CREATE_CAMPAIGN = Operation("create_campaign", CreateCampaignArgs, _None)
CREATE_SESSION = Operation("create_session", CreateSessionArgs, _None)
DELEGATE = Operation("delegate", DelegateArgs, WorkRequest)
CLAIM = Operation("claim", ClaimArgs, Lease)
HEARTBEAT = Operation("heartbeat", HeartbeatArgs, Lease)
PUBLISH = Operation("publish", PublishArgs, Completion)
RECORD_USAGE = Operation("record_usage", RecordUsageArgs, _None)
GET_REQUEST = Operation("get_request", RequestArgs, WorkRequest)
LIST_REQUESTS = Operation("list_requests", ListRequestsArgs, list[WorkRequest])
BUDGET = Operation("budget", CampaignArgs, BudgetSnapshot)
LIST_SESSIONS = Operation("list_sessions", CampaignArgs, list[SessionView])
RUN_CONCURRENTLY = Operation("run_concurrently", RunConcurrentlyArgs, list[CallOutcome])

OPERATIONS: Final[dict[str, Operation[Any, Any]]] = {
    operation.name: operation
    for operation in (
        HANDSHAKE,
        RESET,
        SET_CLOCK,
        ADVANCE_CLOCK,
        CREATE_WORKSPACE,
        CREATE_AGENT,
        CREATE_TASK,
        OPEN_OFFICE_SESSION,
        ASSIGN_TASK,
        PRODUCE_WAKE,
        ENQUEUE_WAKE,
        SET_RUN_STATUS,
        DELETE_RUN,
        GET_TASK,
        LIST_RUNS,
        TELEMETRY,
        WARNING_LOGS,
        MUTATION_EFFECTS,
        FAIL_NEXT_COUNT_READ,
        ASSIGN_TASK_KEYLESS,
        CREATE_ENVIRONMENT,
        CREATE_CAMPAIGN,
        CREATE_SESSION,
        DELEGATE,
        CLAIM,
        HEARTBEAT,
        PUBLISH,
        RECORD_USAGE,
        GET_REQUEST,
        LIST_REQUESTS,
        BUDGET,
        LIST_SESSIONS,
        RUN_CONCURRENTLY,
    )
}


@dataclass(frozen=True)
class Request:
    """A decoded request: the operation, its typed arguments and the seq to echo."""

    seq: int
    operation: Operation[Any, Any]
    args: Args
