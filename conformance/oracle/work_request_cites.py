"""The clauses the work-request checks keep: which clause a refusal, an acceptance or a figure
answers to, shared by the state machine and the history search so that a break is charged
to the same clause wherever it is found."""

from __future__ import annotations

import inspect
import re
from types import ModuleType
from typing import Literal

from conformance.driver import DelegationKind, ErrorCode
from conformance.oracle.refusals import Refusals
from conformance.spec.registry import INTERPRETATION_ID

ZERO_SLICE, EMPTY_DELIVERABLE, STRANGER, ZERO_USAGE = "WR-21", "WR-22", "WR-23", "WR-24"
"""The questions of what a delegation's or a usage's bad input is (see `bad_input_cite`)."""
GRANT_NAMES_EXACT = "WR-25"
"""Whether grant names that differ only in case or trailing spaces are one grant."""
LATE_HEARTBEAT = "WR-19"
KIND_CREATES = {
    DelegationKind.SPAWN: "AC-ARMONIA-WORKREQ-001.11/spawn-creates",
    DelegationKind.SUBAGENT: "AC-ARMONIA-WORKREQ-001.11/subagent-creates",
}
NARROWED = (
    "AC-ARMONIA-WORKREQ-001.2/no-wider-grant",
    "AC-ARMONIA-WORKREQ-001.9/no-authority-created",
)
RESERVED_AT_DELEGATION = "WR-1"
USAGE_FROM_SLICE = "WR-2"
REMAINDER_RETURNED = "WR-3"
ROOT_USAGE = "WR-14"
PAST_COMPLETED_PARENT = "WR-15"
BUDGET_READINGS = (
    RESERVED_AT_DELEGATION,
    USAGE_FROM_SLICE,
    REMAINDER_RETURNED,
    ROOT_USAGE,
    PAST_COMPLETED_PARENT,
)
"""What an exact budget figure may rest on: reservation at delegation, usage charged
to the slice, the remainder returned on completion, a root's own usage, and where a
remainder goes past a completed parent. A check cites those a run has exercised."""

Operation = Literal["delegate", "claim", "heartbeat", "publish", "record_usage", "list_requests"]

MOVES_BUDGET: frozenset[Operation] = frozenset({"delegate", "publish", "record_usage"})
"""Operations whose acceptance can move a campaign's budget."""

REFUSAL_CITES: dict[tuple[Operation, ErrorCode], tuple[str, ...]] = {
    ("delegate", ErrorCode.INVALID_INPUT): (EMPTY_DELIVERABLE,),
    ("delegate", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.1/creates-request",),
    ("delegate", ErrorCode.DEPTH_CAP): ("AC-ARMONIA-WORKREQ-001.8/depth-cap",),
    ("delegate", ErrorCode.COUNT_CAP): ("AC-ARMONIA-WORKREQ-001.8/count-cap",),
    ("delegate", ErrorCode.PERMISSION_ESCALATION): ("AC-ARMONIA-WORKREQ-001.2/no-wider-grant",),
    ("delegate", ErrorCode.INSUFFICIENT_BUDGET): ("AC-ARMONIA-WORKREQ-001.9/no-budget-created",),
    ("delegate", ErrorCode.ALREADY_COMPLETED): (REMAINDER_RETURNED, "WR-16"),
    ("claim", ErrorCode.NOT_FOUND): ("WR-6",),
    ("claim", ErrorCode.NOT_ASSIGNEE): ("WR-6",),
    ("claim", ErrorCode.FORBIDDEN): ("WR-6",),
    ("claim", ErrorCode.ALREADY_COMPLETED): ("AC-ARMONIA-WORKREQ-001.6/closes-once",),
    ("claim", ErrorCode.LEASE_HELD): ("AC-ARMONIA-WORKREQ-001.7/fenced",),
    ("heartbeat", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.12/stale-heartbeat-rejected",),
    ("heartbeat", ErrorCode.STALE_GENERATION): (
        "AC-ARMONIA-WORKREQ-001.12/stale-heartbeat-rejected",
    ),
    ("heartbeat", ErrorCode.LEASE_EXPIRED): (LATE_HEARTBEAT,),
    ("heartbeat", ErrorCode.ALREADY_COMPLETED): ("AC-ARMONIA-WORKREQ-001.6/closes-once",),
    ("publish", ErrorCode.INVALID_INPUT): ("AC-ARMONIA-WORKREQ-001.6/records-result",),
    ("publish", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.7/stale-rejected",),
    ("publish", ErrorCode.STALE_GENERATION): ("AC-ARMONIA-WORKREQ-001.7/stale-rejected",),
    ("publish", ErrorCode.LEASE_EXPIRED): ("AC-ARMONIA-WORKREQ-001.4/expired-cannot-publish",),
    ("publish", ErrorCode.ALREADY_COMPLETED): ("AC-ARMONIA-WORKREQ-001.6/closes-once",),
    ("record_usage", ErrorCode.INVALID_INPUT): (ZERO_USAGE,),
    ("record_usage", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",),
    ("record_usage", ErrorCode.INSUFFICIENT_BUDGET): (
        "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
        "WR-14",
    ),
    ("record_usage", ErrorCode.USAGE_EXCEEDS_SLICE): (USAGE_FROM_SLICE,),
    ("record_usage", ErrorCode.ALREADY_COMPLETED): ("WR-16",),
    ("record_usage", ErrorCode.FORBIDDEN): ("WR-14",),
    ("record_usage", ErrorCode.NOT_SUPPORTED): ("WR-14",),
    ("list_requests", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.5/non-members-cannot",),
}
"""Why an operation must be refused when a code's condition holds: the clause the refusal keeps."""

ACCEPT_CITES: dict[Operation, tuple[str, ...]] = {
    "heartbeat": ("AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",),
    "publish": ("AC-ARMONIA-WORKREQ-001.6/records-result",),
    "list_requests": ("AC-ARMONIA-WORKREQ-001.5/members-list",),
}
"""Why an operation nothing forbids must be accepted (delegations, claims and usage say
their own, since theirs depend on the kind, the lease's history and the session)."""


USAGE_LEDGER = (
    "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
    "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
)
"""What a race of usages is credited with when some order explains it: spent never beyond the
slice, and what the accepted usages asked drawn from it."""
COMPLETES_ONCE = ("AC-ARMONIA-WORKREQ-001.6/records-result", "AC-ARMONIA-WORKREQ-001.6/closes-once")
LEASE_FENCE = ("AC-ARMONIA-WORKREQ-001.7/fenced", "AC-ARMONIA-WORKREQ-001.7/stale-rejected")

EXPIRED_STATE = "WR-20"
"""What a request whose lease lapsed reads: the state's name is WR-20's reading."""
EXPIRY_PRECISION = "WR-12"

CITE = re.compile(r"AC-[A-Z0-9.-]+/[a-z-]+|(?:WR|OF)-\d+")


def cited_in(*modules: ModuleType) -> set[str]:
    """Every clause and interpretation ID written in the modules' source, wherever it stands (a
    table, a check's cite, a constant): what their checks may cite."""
    return {cite for module in modules for cite in CITE.findall(inspect.getsource(module))}


def bad_input_cite(
    amount: int, zero_question: str, *, empty: bool = False, stranger: bool = False
) -> str | None:
    """What refusing a call as bad input keeps: below zero, a clause every reading holds (no
    budget runs backwards); else the question that makes this input bad (an amount of 0, an
    empty deliverable, an assignee outside the environment); None for good input."""
    if amount < 0:
        return "AC-ARMONIA-WORKREQ-001.9/no-negative-amount"
    causes = [(amount == 0, zero_question), (empty, EMPTY_DELIVERABLE), (stranger, STRANGER)]
    return next((question for cause, question in causes if cause), None)


def refusal_cites(operation: Operation, codes: Refusals) -> tuple[str, ...]:
    cites = [cite for code in sorted(codes) for cite in REFUSAL_CITES[(operation, code)]]
    return tuple(dict.fromkeys(cites))


def wrong_code_cites(operation: Operation, codes: Refusals) -> tuple[str, ...]:
    """What a refusal with a code none of the applicable ones breaks: it was refused, as every
    clause behind them asks, so only the readings among their reasons, where there are any
    (which code a condition gets is theirs); else the clauses, whose codes the kit fixes."""
    cites = refusal_cites(operation, codes)
    readings = tuple(cite for cite in cites if INTERPRETATION_ID.fullmatch(cite))
    return readings or cites
