"""The driver port: the one interface an implementation serves to be tested.

Steps talk to this interface only. It speaks the specs' vocabulary (assign,
wake, delegate, claim, publish), never an implementation's tables, and every
value crossing it is a pydantic model so that the wire protocol can carry it
unchanged and validate it against a JSON Schema.

Identifiers (workspaces, agents, tasks, environments, principals, campaigns,
sessions) are chosen by the harness; run and work-request identifiers are
chosen by the implementation and returned.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from conformance.spec.registry import KIT_READING, default_registry


class Value(BaseModel):
    """Base of every value crossing the port: immutable, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------
# Canonical vocabulary
# --------------------------------------------------------------------------


class Outcome(StrEnum):
    """What the enqueue pipeline reports to a wake's producer."""

    QUEUED = "queued"
    COALESCED = "coalesced"
    DEDUPLICATED = "deduplicated"
    RATE_LIMITED = "rate_limited"
    NONE = "none"


class RateLimitReason(StrEnum):
    """The closed label set of the assignment rate-limit counter."""

    ALLOWANCE_EXHAUSTED = "allowance_exhausted"
    COUNT_READ_FAILED = "count_read_failed"
    TASK_UNATTRIBUTED = "task_unattributed"


class Producer(StrEnum):
    """The five producers of `task_assigned` wakes the Office spec names.

    The port takes producers as plain strings: an implementation reports its own
    set (which includes these five), and may have more.
    """

    ASSIGNEE_MUTATION = "assignee_mutation"
    TASK_CREATED_SUBSCRIBER = "task_created_subscriber"
    ONBOARDING = "onboarding"
    UNSTARTED_TASK_RECOVERY = "unstarted_task_recovery"
    WORKFLOW_AUTO_START = "workflow_auto_start"


class Capability(StrEnum):
    """What an implementation may declare it serves."""

    OFFICE = "office"
    WORK_REQUESTS = "work_requests"
    HOOK_COUNT_READ_FAILURE = "hook:count_read_failure"
    HOOK_KEYLESS_ASSIGNMENT = "hook:keyless_assignment"
    RESTART = "restart"
    CONCURRENCY = "concurrency"
    RESET = "reset"
    """Served over the wire only: the process empties itself, so the harness can reuse it."""
    MULTIPROCESS = "multiprocess"
    """Served over the wire only: several processes of the command may run at once on one
    store, sharing nothing but what they keep in it (see concurrency.process_pool)."""
    PRELAUNCH = "prelaunch"
    """Served over the wire only: the process touches its store only from its handshake on,
    so the harness may launch the process of a restart ahead of time."""


class ErrorCode(StrEnum):
    """Typed errors. Every one but `indeterminate` and `internal` is definite."""

    INVALID_INPUT = "invalid_input"
    NOT_FOUND = "not_found"
    FORBIDDEN = "forbidden"
    INSUFFICIENT_BUDGET = "insufficient_budget"
    PERMISSION_ESCALATION = "permission_escalation"
    DEPTH_CAP = "depth_cap"
    COUNT_CAP = "count_cap"
    NOT_ASSIGNEE = "not_assignee"
    LEASE_HELD = "lease_held"
    LEASE_EXPIRED = "lease_expired"
    STALE_GENERATION = "stale_generation"
    ALREADY_COMPLETED = "already_completed"
    USAGE_EXCEEDS_SLICE = "usage_exceeds_slice"
    NOT_SUPPORTED = "not_supported"
    INDETERMINATE = "indeterminate"
    INTERNAL = "internal"


class DriverError(Exception):
    """An operation's typed failure.

    `definite` is True when the operation certainly did not happen. An
    indeterminate error (timeout, dropped connection) may have happened; a
    checker must treat it as an unknown outcome.
    """

    def __init__(self, code: ErrorCode, message: str, *, definite: bool = True) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.definite = definite


# --------------------------------------------------------------------------
# Description
# --------------------------------------------------------------------------


class ReasonLabels(Value):
    """The label value the implementation's rate-limit counter uses for each canonical reason."""

    allowance_exhausted: str = RateLimitReason.ALLOWANCE_EXHAUSTED.value
    count_read_failed: str = RateLimitReason.COUNT_READ_FAILED.value
    task_unattributed: str = RateLimitReason.TASK_UNATTRIBUTED.value

    def of(self, reason: RateLimitReason) -> str:
        value: str = getattr(self, reason.value)
        return value

    @model_validator(mode="after")
    def _distinct(self) -> ReasonLabels:
        """Three reasons must stay three label values, or a count could not be told apart."""
        values = [self.allowance_exhausted, self.count_read_failed, self.task_unattributed]
        if any(not value for value in values):
            raise ValueError("every reason needs a non-empty label value")
        if len(set(values)) != len(values):
            raise ValueError(f"the three reason label values must be distinct, got {values}")
        return self


class OfficeVocabulary(Value):
    """How the implementation names what the Office spec leaves unnamed.

    The defaults are the names of Kandev's own design; an implementation that
    names things otherwise declares its names in the handshake, and the suite
    reads them from here instead of assuming any.
    """

    rate_limit_counter: str = "office_assignment_rate_limit_total"
    """The sample name of the rate-limit counter in the telemetry text."""
    reason_label: str = "reason"
    """The label that carries the reason on that counter."""
    reasons: ReasonLabels = ReasonLabels()
    dedup_counters: list[str] = ["office_run_dedup_total", "office_run_dedup_keyless_total"]
    """The sample names of the run-deduplication counters on the same surface."""
    task_updated_event: str = "task.updated"
    """The event type of the task-updated publication."""
    interrupted_session_state: str | None = None
    """The state an interrupted assignee's office session row moves to; None: any other state."""

    @model_validator(mode="after")
    def _usable(self) -> OfficeVocabulary:
        """A vocabulary the telemetry checks could not read is refused at the handshake."""
        if not self.rate_limit_counter or not self.reason_label or not self.task_updated_event:
            raise ValueError("the counter name, the reason label and the event type are required")
        if not self.dedup_counters or any(not name for name in self.dedup_counters):
            raise ValueError("at least one run-deduplication counter must be named")
        if self.rate_limit_counter in self.dedup_counters:
            raise ValueError("the rate-limit counter cannot also be a deduplication counter")
        return self


class OfficeConstants(Value):
    allowance: int
    window_seconds: float
    coalesce_window_seconds: float
    dedup_lookback_seconds: float
    producers: list[str]
    """Every producer of task_assigned wakes the implementation has: an open set."""
    vocabulary: OfficeVocabulary = OfficeVocabulary()


class WorkRequestLimits(Value):
    max_depth: int
    max_children_per_session: int
    lease_seconds: float


def _readings_schema() -> dict[str, Any]:
    """The schema of `readings`: each open question of the register, with the names of its
    readings, so that a validator refuses an unknown one before the harness does."""
    return {
        "properties": {
            interpretation.id: {"enum": interpretation.names()}
            for interpretation in default_registry().active_interpretations()
        },
        "additionalProperties": False,
    }


class Description(Value):
    name: str
    version: str
    capabilities: list[Capability]
    office: OfficeConstants | None = None
    work_requests: WorkRequestLimits | None = None
    readings: dict[str, str] = Field(default_factory=dict, json_schema_extra=_readings_schema())
    """Per open question (an interpretation ID of the register), the reading the implementation
    follows: `kit` (the register's own) or one of the alternatives the register lists. The
    suite judges by it; a question not named here is judged by the kit's reading."""

    @model_validator(mode="after")
    def _registered_readings(self) -> Description:
        """A reading the register does not list cannot be judged by: refused at the handshake."""
        registry = default_registry()
        for interpretation_id, name in self.readings.items():
            if not registry.is_citable(interpretation_id):
                raise ValueError(
                    f"readings names {interpretation_id!r}: no open question of the register"
                )
            names = registry.interpretation(interpretation_id).names()
            if name not in names:
                raise ValueError(
                    f"readings: {interpretation_id} has no reading {name!r}; "
                    f"the register lists {', '.join(names)}"
                )
        return self

    def reading_of(self, interpretation_id: str) -> str:
        """The reading followed for one open question (the kit's unless declared otherwise)."""
        return self.readings.get(interpretation_id, KIT_READING)


# --------------------------------------------------------------------------
# Office values
# --------------------------------------------------------------------------


class WakeResult(Value):
    """What a producer is told about one wake it handed to the pipeline."""

    outcome: Outcome
    run_id: str | None = None


class AssignmentResult(Value):
    """The assignee mutation's answer: the committed generation, and the wake.

    `wake` is None when the mutation produced no wake (an unassignment).
    """

    task_id: str
    assignee_agent_id: str
    generation: int
    wake: WakeResult | None


class Run(Value):
    """One persisted run row. `payload` is the stored JSON text, verbatim."""

    run_id: str
    agent_id: str
    reason: str
    payload: str
    dedup_key: str | None
    requested_at: datetime
    status: str
    coalesced_count: int


class TaskView(Value):
    task_id: str
    workspace_id: str
    assignee_agent_id: str
    assignment_generation: int


class WarningLog(Value):
    """A warning-level log record with its structured fields."""

    message: str
    fields: dict[str, Any]


class SessionInterrupt(Value):
    agent_id: str
    task_id: str


class OfficeSession(Value):
    agent_id: str
    task_id: str
    state: str


class PublishedEvent(Value):
    event_type: str
    task_id: str
    fields: list[str]


class MutationEffects(Value):
    """Observable side effects of assignee mutations, in the order they occurred."""

    interrupts: list[SessionInterrupt]
    office_sessions: list[OfficeSession]
    events: list[PublishedEvent]


RunStatus = Literal["queued", "claimed", "running", "finished", "failed", "cancelled"]


# --------------------------------------------------------------------------
# Work-request values
# --------------------------------------------------------------------------


class DelegationKind(StrEnum):
    SPAWN = "spawn"
    SUBAGENT = "subagent"


class RequestState(StrEnum):
    OPEN = "open"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class Permissions(Value):
    tools: frozenset[str] = frozenset()
    devices: frozenset[str] = frozenset()


class SessionView(Value):
    """A session of a campaign, as far as the caps and the lineage go.

    `request_id` is the request the session serves (None for a root session);
    `depth` is what the depth cap is compared with (0 for a root session);
    `delegations` is what the count cap is compared with.
    """

    session_id: str
    campaign_id: str
    request_id: str | None
    depth: int
    delegations: int


class Lease(Value):
    holder: str | None
    generation: int
    expires_at: datetime | None
    closed_at: datetime | None = None


class WorkRequest(Value):
    """Every field of the delegation data contract, as an implementation reports it."""

    request_id: str
    kind: DelegationKind
    environment_id: str
    campaign_id: str
    originating_session_id: str
    child_session_id: str
    deliverable: str
    acceptance_checks: list[str]
    budget_slice: int
    budget_spent: int
    permissions: Permissions
    assignee: str | None
    lease: Lease
    state: RequestState
    result_ref: str | None


class Completion(Value):
    request_id: str
    holder: str
    generation: int
    result_ref: str
    completed_at: datetime
    budget_returned: int


class BudgetSnapshot(Value):
    """A campaign's budget. Conservation: total == available + reserved + spent."""

    campaign_id: str
    total: int
    available: int
    reserved: int
    spent: int


# --------------------------------------------------------------------------
# Concurrency values
# --------------------------------------------------------------------------

ConcurrentOperation = Literal[
    "assign_task", "claim", "heartbeat", "publish", "delegate", "record_usage"
]


class ConcurrentCall(Value):
    """One call of a concurrent batch: a port operation and its keyword arguments.

    `arguments` uses the port method's parameter names with JSON values (enums
    as their strings, permissions as {"tools": [...], "devices": [...]}).
    """

    operation: ConcurrentOperation
    arguments: dict[str, Any]


class CallOutcome(Value):
    """How one call of a concurrent batch ended.

    `result` is the port method's return value in JSON form (None for methods
    returning nothing); `error` is set when `ok` is False. `definite` is False
    when the call may or may not have happened (an indeterminate or internal
    error). The times are nanoseconds on a monotonic clock, measured from one
    origin the implementation picks for the whole batch, so that the harness can
    tell which calls overlapped.
    """

    ok: bool
    result: Any | None
    error: ErrorCode | None
    definite: bool
    message: str
    invoked_at_ns: int
    completed_at_ns: int

    @model_validator(mode="after")
    def _consistent(self) -> CallOutcome:
        if self.ok != (self.error is None):
            raise ValueError("an outcome carries an error exactly when it is not ok")
        if self.ok and not self.definite:
            raise ValueError("a successful outcome is definite")
        if self.completed_at_ns < self.invoked_at_ns:
            raise ValueError("a call cannot complete before it was invoked")
        return self


# --------------------------------------------------------------------------
# The port
# --------------------------------------------------------------------------


@runtime_checkable
class Driver(Protocol):
    """Every operation a step may perform on an implementation."""

    # -- lifecycle and clock ------------------------------------------------
    def describe(self) -> Description: ...
    def set_clock(self, instant: datetime) -> None: ...
    def advance_clock(self, delta: timedelta) -> datetime: ...
    def restart(self) -> None:
        """Stop and start again on the same store; nothing in memory survives."""

    def close(self) -> None: ...

    # -- Office: setup ------------------------------------------------------
    def create_workspace(self, workspace_id: str) -> None: ...
    def create_agent(self, workspace_id: str, agent_id: str, *, can_assign_tasks: bool) -> None: ...
    def create_task(
        self, workspace_id: str, task_id: str, *, assignee_agent_id: str = ""
    ) -> TaskView: ...
    def open_office_session(self, agent_id: str, task_id: str) -> None: ...

    # -- Office: actions ----------------------------------------------------
    def assign_task(
        self, task_id: str, assignee_agent_id: str, *, acting_agent_id: str
    ) -> AssignmentResult:
        """The assignee mutation. An empty acting agent id is a user/internal caller."""

    def produce_wake(self, producer: str, task_id: str, agent_id: str) -> WakeResult:
        """Have a named producer emit its `task_assigned` wake for a task."""

    def enqueue_wake(
        self, agent_id: str, reason: str, payload: str, *, dedup_key: str | None
    ) -> WakeResult:
        """Hand a wake with a raw JSON payload text straight to the enqueue pipeline."""

    def set_run_status(self, run_id: str, status: RunStatus) -> None: ...
    def delete_run(self, run_id: str) -> None: ...

    # -- Office: observation ------------------------------------------------
    def get_task(self, task_id: str) -> TaskView: ...
    def list_runs(self) -> list[Run]: ...
    def telemetry(self) -> str:
        """The operator telemetry surface, in the Prometheus text exposition format."""

    def warning_logs(self) -> list[WarningLog]: ...
    def mutation_effects(self) -> MutationEffects: ...

    # -- Office: fault hooks (optional capabilities) ------------------------
    def fail_next_count_read(self) -> None: ...
    def assign_task_keyless(
        self, task_id: str, assignee_agent_id: str, *, acting_agent_id: str
    ) -> AssignmentResult:
        """The assignee mutation with the generation made unresolvable, so its wake is keyless."""

    # -- Work requests: setup ----------------------------------------------
    def create_environment(self, environment_id: str, members: list[str]) -> None: ...
    def create_campaign(self, campaign_id: str, environment_id: str, budget: int) -> None: ...
    def create_session(
        self, session_id: str, campaign_id: str, principal: str, permissions: Permissions
    ) -> None:
        """A root session: depth 0, drawing on the campaign's budget."""

    # -- Work requests: actions --------------------------------------------
    def delegate(
        self,
        kind: DelegationKind,
        originating_session_id: str,
        *,
        deliverable: str,
        acceptance_checks: list[str],
        budget_slice: int,
        permissions: Permissions,
        assignee: str | None,
    ) -> WorkRequest: ...
    def claim(self, request_id: str, holder: str) -> Lease: ...
    def heartbeat(self, request_id: str, holder: str, generation: int) -> Lease: ...
    def publish(
        self, request_id: str, holder: str, generation: int, result_ref: str
    ) -> Completion: ...
    def record_usage(self, session_id: str, amount: int) -> None: ...

    # -- Work requests: observation ----------------------------------------
    def get_request(self, request_id: str) -> WorkRequest: ...
    def list_requests(self, environment_id: str, principal: str) -> list[WorkRequest]: ...
    def budget(self, campaign_id: str) -> BudgetSnapshot: ...
    def list_sessions(self, campaign_id: str) -> list[SessionView]:
        """Every session of the campaign, root and child, in any order."""

    # -- Concurrency (optional capability) -----------------------------------
    def run_concurrently(self, calls: list[ConcurrentCall]) -> list[CallOutcome]:
        """Start every call at once, each on its own worker and connection.

        Outcomes come back in call order. A refusal is an outcome, not an
        exception; only the batch itself failing (e.g. no concurrency
        capability: NOT_SUPPORTED) raises DriverError.
        """

    def crash_during(self, calls: list[ConcurrentCall], *, after: timedelta) -> None:
        """Start the batch as `run_concurrently` does and kill the implementation about
        `after` (real time) into it, answers unread; `restart` brings it back on its store.

        Only an adapter that can kill its implementation can serve this (`exec:`
        can); others raise DriverError(NOT_SUPPORTED).
        """


@runtime_checkable
class LaunchesPeers(Protocol):
    """An adapter that can start more processes of its implementation on the same store, and
    kill one in the middle of a call (`exec:` can; an implementation inside the harness
    cannot): what several processes on one store need (capability `multiprocess`). A peer is a
    driver of its own, so the pool can set its clock, ask it who it is and close it."""

    def launch_peer(self) -> LaunchesPeers: ...
    def crash_during_call(self, call: ConcurrentCall) -> None: ...
    def describe(self) -> Description: ...
    def set_clock(self, instant: datetime) -> None: ...
    def close(self) -> None: ...
