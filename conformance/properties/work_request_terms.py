"""What the work-request machine's rules draw and hand one another: the world's names, a
held lease and a delegation to attempt, the strategies, the concurrent calls, and how an
answer is written in a failure's account."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import Bundle

from conformance.driver import (
    CallOutcome,
    ConcurrentCall,
    DelegationKind,
    DriverError,
    ErrorCode,
    Permissions,
    RequestState,
    WorkRequest,
)
from conformance.oracle.refusals import Refusals
from conformance.properties.hostile_data import (
    CAMPAIGN_ENVIRONMENTS,
    ENVIRONMENT_MEMBERS,
    ROOT_SESSIONS,
)
from conformance.properties.weighted import weighted
from conformance.spec.clause_check import Cite, Detail, cites_of, expect, port_requires
from conformance.spec.evidence import current_ledger

T = TypeVar("T")

REQUESTS = Bundle("requests")
"""The requests the machine delegated, for the rules that act on one."""
LEASES = Bundle("leases")
"""The leases claims handed out, for the rules that heartbeat or publish under one."""


T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)


MICRO = timedelta(microseconds=1)


MEMBERS = ENVIRONMENT_MEMBERS


CAMPAIGNS = CAMPAIGN_ENVIRONMENTS


ROOTS = ROOT_SESSIONS
"""The world the machine builds, from the hostile pools (see `hostile_data`): grant names that
contain one another, a principal in both environments, ids that are prefixes of one another."""


PROCESSES = 3
"""How many processes of an implementation that runs as several on one store serve a program
drawn to be served by several: its batches are dealt over them."""


def holds(condition: bool, cite: Cite, detail: Detail) -> None:
    """`expect`, for the checks the invariants make of every request after every step: the
    registry is consulted only when one fails (every ID the machine's modules write is checked
    against it before the search, see `run_work_request_machine`); a check that holds still
    leaves its mark in the evidence ledger."""
    if not condition:
        expect(condition, cite, detail)
        return
    ledger = current_ledger()
    if ledger is not None:
        ledger.held(cites_of(cite))


@dataclass(frozen=True)
class HeldLease:
    """What a successful claim handed its holder: the fencing pair for later calls."""

    request_id: str
    holder: str
    generation: int

    def __repr__(self) -> str:
        return f"<{self.request_id} held by {self.holder} at generation {self.generation}>"


@dataclass(frozen=True)
class Delegation:
    """One delegation to attempt, as the harness asks for it."""

    kind: DelegationKind
    origin: str
    deliverable: str
    checks: tuple[str, ...]
    budget_slice: int
    permissions: Permissions
    assignee: str | None

    def __repr__(self) -> str:
        return (
            f"delegate({self.kind.value} from {self.origin}, {self.deliverable!r}, "
            f"slice {self.budget_slice}, {render(self.permissions)}, assignee {self.assignee})"
        )


def attempt(operation: Callable[[], T]) -> T | ErrorCode:
    """The operation's value, or the code of its definite refusal."""
    try:
        return operation()
    except DriverError as error:
        port_requires(
            error.definite, f"a serial call must end definitely, so it can be judged: {error}"
        )
        return error.code


def render(answer: object) -> str:
    if isinstance(answer, ErrorCode):
        return f"refused {answer.value}"
    if isinstance(answer, Permissions):
        return f"tools {sorted(answer.tools)} devices {sorted(answer.devices)}"
    return repr(answer)


def render_outcome(outcome: CallOutcome) -> str:
    if outcome.ok:
        return "ok"
    code = outcome.error.value if outcome.error else "?"
    return f"refused {code}" if outcome.definite else f"unknown ({code})"


def codes(refusals: Refusals) -> str:
    return " or ".join(sorted(code.value for code in refusals)) or "none"


def contract_fields(view: WorkRequest) -> tuple[object, ...]:
    """The fields a request shows as it was delegated (checks compared as a set)."""
    return (
        view.request_id,
        view.environment_id,
        view.campaign_id,
        view.originating_session_id,
        view.child_session_id,
        view.deliverable,
        sorted(view.acceptance_checks),
        view.budget_slice,
        view.permissions,
        view.assignee,
    )


def closing(view: WorkRequest) -> tuple[object, ...]:
    """Whether the request completed, the result it records, and when its lease closed."""
    return (view.state is RequestState.COMPLETED, view.result_ref, view.lease.closed_at)


def up_to(most: int) -> st.SearchStrategy[int]:
    """An integer from 1 to `most` (1 when `most` is below it), drawn the same way whatever
    `most` is: a race may leave the model's figures differing between two runs of one example,
    and a draw whose bounds followed them would make Hypothesis call the search flaky."""
    return st.integers(0, 2**20).map(lambda drawn: 1 + drawn % max(most, 1))


@cache
def slices(available: int) -> st.SearchStrategy[int]:
    """Any slice up to 20, often one the originator can afford, so that lineages grow deep and
    wide enough to meet the caps and to narrow grants several levels down, and sometimes one
    just beyond what it has left (what its other children were carved counts against it)."""
    affordable = up_to(available)
    beyond = st.integers(1, 8).map(lambda extra: max(available, 0) + extra)
    return weighted((1, st.integers(-3, 20)), (2, affordable), (1, beyond))


forgeries = st.sampled_from(["as granted", "by another principal", "one generation ahead"])


result_refs = st.sampled_from(["s3://results/a", "s3://results/b"])


def publish_call(lease: HeldLease, result_ref: str) -> ConcurrentCall:
    arguments = {
        "request_id": lease.request_id,
        "holder": lease.holder,
        "generation": lease.generation,
        "result_ref": result_ref,
    }
    return ConcurrentCall(operation="publish", arguments=arguments)


def usage_calls(session: str, amounts: list[int]) -> list[ConcurrentCall]:
    return [
        ConcurrentCall(operation="record_usage", arguments={"session_id": session, "amount": a})
        for a in amounts
    ]


def delegation_call(delegation: Delegation) -> ConcurrentCall:
    arguments = {
        "kind": delegation.kind,
        "originating_session_id": delegation.origin,
        "deliverable": delegation.deliverable,
        "acceptance_checks": list(delegation.checks),
        "budget_slice": delegation.budget_slice,
        "permissions": delegation.permissions,
        "assignee": delegation.assignee,
    }
    return ConcurrentCall(operation="delegate", arguments=arguments)


def unknown(outcomes: list[CallOutcome]) -> bool:
    """Whether some call of a batch ended with its outcome unknown."""
    return not all(outcome.definite for outcome in outcomes)


def off_every(instant: datetime, expiries: list[datetime]) -> datetime:
    """`instant`, moved a microsecond on while it lands on a live lease's expiry: that
    instant is WR-8's boundary, which the Gherkin scenarios pin and the machine leaves alone."""
    while instant in expiries:
        instant += MICRO
    return instant
