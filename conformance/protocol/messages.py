"""Protocol v1 messages: the envelopes, and one operation per driver-port method.

An operation's arguments are a model read off the port method's signature (its
parameters' names, types and defaults: `port_args`), and its result is the port
method's return type, so the wire carries the port's own values and the port's
signatures are written once, in `Driver`. Two methods have no message because they act
on the process, not through it: `restart` (the harness kills the process and
launches it again on the same store) and `close` (the harness closes stdin).
`describe` is answered once, by the handshake. One operation has no port
method: `reset` (capability `reset`) empties the implementation between two
scenarios, so that the harness can hand the same process to the next one.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Annotated, Any, Final, Generic, Literal, TypeVar, cast, get_type_hints

from pydantic import BaseModel, Field, TypeAdapter, create_model

from conformance.driver import (
    Description,
    Driver,
    ErrorCode,
    Value,
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
# Arguments: read off the driver port's signatures, never written twice
# --------------------------------------------------------------------------


class Args(Value):
    """Base of every operation's `args` object."""


class NoArgs(Args):
    pass


#: A century in microseconds: any larger step is a mistake, refused as invalid input.
MAX_CLOCK_STEP_MICROSECONDS = 100 * 366 * 24 * 3600 * 10**6


# The one operation whose wire form is not its port method's: a step in whole microseconds,
# where the port takes a timedelta.
class AdvanceClockArgs(Args):
    delta_microseconds: int = Field(ge=0, le=MAX_CLOCK_STEP_MICROSECONDS)


_ARGS: dict[str, type[Args]] = {"NoArgs": NoArgs}


def port_args(method: str, model: str) -> type[Args]:
    """The args model of the port method `method`, named `model`: one field per parameter,
    typed and defaulted as `Driver` declares it, in its order. Operations whose parameters
    agree may share a model (the schema names it once)."""
    parameters = list(inspect.signature(getattr(Driver, method)).parameters.values())[1:]
    hints = get_type_hints(getattr(Driver, method))
    fields: dict[str, Any] = {
        parameter.name: (
            hints[parameter.name],
            ... if parameter.default is inspect.Parameter.empty else parameter.default,
        )
        for parameter in parameters
    }
    shared = _ARGS.get(model)
    if shared is None:
        shared = _ARGS[model] = create_model(model, __base__=Args, __module__=__name__, **fields)
    elif list(shared.model_fields) != list(fields):
        raise TypeError(f"{method} cannot share {model}: its parameters are {list(fields)}")
    return shared


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


def port_operation(method: str, model: str | None = None) -> Operation[Any, Any]:
    """The operation of the port method `method`: its arguments the method's parameters (the
    model `model`, else `<Method>Args`), its result the method's return type."""
    returned = get_type_hints(getattr(Driver, method))["return"]
    named = model or "".join(part.capitalize() for part in method.split("_")) + "Args"
    return Operation(method, port_args(method, named), returned)


HANDSHAKE = Operation("handshake", NoArgs, HandshakeResult)
RESET = Operation("reset", NoArgs, _None)
SET_CLOCK = port_operation("set_clock")
ADVANCE_CLOCK = Operation("advance_clock", AdvanceClockArgs, datetime)
CREATE_WORKSPACE = port_operation("create_workspace", "WorkspaceArgs")
CREATE_AGENT = port_operation("create_agent")
CREATE_TASK = port_operation("create_task")
OPEN_OFFICE_SESSION = port_operation("open_office_session", "AgentTaskArgs")
ASSIGN_TASK = port_operation("assign_task")
PRODUCE_WAKE = port_operation("produce_wake")
ENQUEUE_WAKE = port_operation("enqueue_wake")
SET_RUN_STATUS = port_operation("set_run_status")
DELETE_RUN = port_operation("delete_run", "RunArgs")
GET_TASK = port_operation("get_task", "TaskArgs")
LIST_RUNS = port_operation("list_runs", "NoArgs")
TELEMETRY = port_operation("telemetry", "NoArgs")
WARNING_LOGS = port_operation("warning_logs", "NoArgs")
MUTATION_EFFECTS = port_operation("mutation_effects", "NoArgs")
FAIL_NEXT_COUNT_READ = port_operation("fail_next_count_read", "NoArgs")
ASSIGN_TASK_KEYLESS = port_operation("assign_task_keyless", "AssignTaskArgs")
CREATE_ENVIRONMENT = port_operation("create_environment")
CREATE_CAMPAIGN = port_operation("create_campaign")
CREATE_SESSION = port_operation("create_session")
DELEGATE = port_operation("delegate")
CLAIM = port_operation("claim")
HEARTBEAT = port_operation("heartbeat")
PUBLISH = port_operation("publish")
RECORD_USAGE = port_operation("record_usage")
GET_REQUEST = port_operation("get_request", "RequestArgs")
LIST_REQUESTS = port_operation("list_requests")
BUDGET = port_operation("budget", "CampaignArgs")
LIST_SESSIONS = port_operation("list_sessions", "CampaignArgs")
RUN_CONCURRENTLY = port_operation("run_concurrently")

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
