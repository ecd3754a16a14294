"""Each recorded work-request call applied to the pure model, for the linearizability search.

`judge_history` asks whether some order of a history's calls, consistent with when each began
and ended, is one in which `WorkRequestOracle`, under the readings it follows, gives every
definite answer the implementation gave. Each call is judged as the state machine judges a call
made alone: a refusal needs a code that applies at its point in the order, an acceptance needs
none to apply, and what the implementation chose (a request's ids, a claim's generation, a
renewal's expiry, a completion's instant) is adopted. Reads of a request or a budget must show
the model's figures at their point. A mismatch cites the clause the serial check would, from
`conformance.oracle.work_request_cites`.

A call whose outcome is unknown takes effect, if at all, as the model would have it: the
identifiers of a delegation nobody saw made are placeholders, and a claim gets the next
generation. Listings are not judged here (their serial check reads the whole environment).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.concurrency.history import Operation
from conformance.concurrency.linearizable import Mismatch, Verdict, describe, linearize
from conformance.driver import (
    BudgetSnapshot,
    Completion,
    ErrorCode,
    Lease,
    Permissions,
    RequestState,
    WorkRequest,
)
from conformance.oracle.refusals import Refusals
from conformance.oracle.stored_instants import as_stored
from conformance.oracle.work_request_cites import (
    ACCEPT_CITES,
    EXPIRED_STATE,
    EXPIRY_PRECISION,
    KIND_CREATES,
    REMAINDER_RETURNED,
    USAGE_FROM_SLICE,
    bad_input_cite,
    refusal_cites,
    wrong_code_cites,
)
from conformance.oracle.work_request_cites import Operation as Judged
from conformance.oracle.work_requests import WorkRequestOracle
from conformance.spec.clause_check import ScenarioError

Judge = Callable[[WorkRequestOracle, Operation], Mismatch | None]


def judge_history(history: list[Operation], start: WorkRequestOracle) -> Verdict[WorkRequestOracle]:
    """Whether some order of the history's calls, from the model's state `start`, explains every
    answer; `start` is never changed (the search copies it before each try)."""
    return linearize(
        history,
        start,
        judge_call,
        WorkRequestOracle.state_key,
        WorkRequestOracle.copy,
        inert if start.reads("WR-4", "slot-kept") else inert_with_refused_delegations,
        alike,
    )


CHOSEN_NAMES = ("request_id", "child_session_id")
"""What a delegation's answer names that the implementation chose."""


def alike(operation: Operation) -> str:
    """Delegations made alike, answered alike but for the names the implementation chose, are
    interchangeable (twenty delegations from five sessions: 5^5 sets placed, not 2^20)."""
    value = operation.value
    if operation.operation == "delegate" and isinstance(value, dict):
        value = {name: part for name, part in value.items() if name not in CHOSEN_NAMES}
    return repr(
        (
            operation.operation,
            operation.arguments,
            operation.outcome,
            value,
            operation.error,
            operation.clock,
        )
    )


def inert(operation: Operation) -> bool:
    """A call that changes the model nowhere: a read, or a refusal (a refused delegation apart,
    which may keep a count-cap slot under WR-4's alternative)."""
    if operation.operation in ("get_request", "budget"):
        return True
    return operation.outcome == "fail" and operation.operation != "delegate"


def inert_with_refused_delegations(operation: Operation) -> bool:
    """`inert`, where no reading lets a refused delegation keep a slot: a refusal of any call
    then judges nothing after it, so the search places it wherever it is first explained. The
    model still counts the slot it would keep (for a later change of reading); no answer under
    the readings searched depends on it. Without this, twenty staggered delegations refused and
    accepted under a campaign-wide count cap can take the search past its bound."""
    return inert(operation) or operation.outcome == "fail"


def judge_call(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    """Apply one recorded call to the model, at the instant it was made; None if it explains
    the answer."""
    if operation.clock is not None:
        oracle.set_clock(operation.clock)
    judge = JUDGES.get(operation.operation)
    return None if judge is None else judge(oracle, operation)


# -- refusals, shared by every operation ------------------------------------------------


def refusal_mismatch(
    operation: Operation, kind: Judged, refusals: Refusals, accepting: tuple[str, ...] = ()
) -> Mismatch | None:
    """A refused call against the refusals that apply at its point: None when its code is one."""
    code = operation.error
    if code in refusals:
        return None
    if not refusals:
        cites = accepting or ACCEPT_CITES.get(kind, ("AC-ARMONIA-WORKREQ-001.1/creates-request",))
        return mismatch(operation, cites, "nothing forbids it at this point")
    return mismatch(
        operation, wrong_code_cites(kind, refusals), f"the refusals that apply: {codes(refusals)}"
    )


def acceptance_mismatch(
    operation: Operation, kind: Judged, refusals: Refusals, *, amount: int = 1
) -> Mismatch | None:
    """An accepted call against the refusals that apply at its point: None when none does."""
    if not refusals:
        return None
    cites = refusal_cites(kind, refusals)
    below_zero = bad_input_cite(amount, "")
    if ErrorCode.INVALID_INPUT in refusals and below_zero:
        cites = (below_zero, *cites)
    return mismatch(operation, cites, f"it must be refused: {codes(refusals)}")


def mismatch(
    operation: Operation, cites: tuple[str, ...], why: str, observed: str | None = None
) -> Mismatch:
    """`observed` is the kind of answer (for the readings cited); by default, an acceptance or
    the refusal's code."""
    kind = "accepted" if operation.outcome == "ok" else f"refused:{operation.error}"
    return Mismatch(operation, cites, f"{describe(operation)}: {why}", observed or kind)


def codes(refusals: Refusals) -> str:
    return ", ".join(sorted(refusals))


# -- the world ---------------------------------------------------------------------------


def judge_setup(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    """The world a race runs in: it must be built as the scenario asked, or nothing is judged."""
    arguments = operation.arguments
    made: ErrorCode | None
    if operation.operation == "create_environment":
        made = oracle.create_environment(arguments["environment_id"], arguments["members"])
    elif operation.operation == "create_campaign":
        made = oracle.create_campaign(
            arguments["campaign_id"], arguments["environment_id"], arguments["budget"]
        )
    else:
        made = oracle.create_session(
            arguments["session_id"],
            arguments["campaign_id"],
            arguments["principal"],
            Permissions.model_validate(arguments["permissions"]),
        )
    if made is not None or operation.outcome != "ok":
        raise ScenarioError(f"the race's world was not built: {describe(operation)}")
    return None


# -- delegation ----------------------------------------------------------------------------


def judge_delegate(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    arguments = operation.arguments
    origin = arguments["originating_session_id"]
    asked = delegation_refusals(oracle, arguments, arguments["permissions"])
    kind_cites = ("AC-ARMONIA-WORKREQ-001.1/creates-request", KIND_CREATES[arguments["kind"]])
    if operation.outcome == "fail":
        found = refusal_mismatch(operation, "delegate", asked, kind_cites)
        if found is None:
            oracle.refused(origin)
        return found
    if operation.outcome == "info":
        if not asked:
            record_delegation(oracle, arguments, f"unseen-{operation.process}", None)
        return None
    view = WorkRequest.model_validate(operation.value)
    granted = delegation_refusals(oracle, arguments, view.permissions)
    narrowing = oracle.may_narrow(asked) and not granted
    refused = acceptance_mismatch(
        operation, "delegate", granted if narrowing else asked, amount=arguments["budget_slice"]
    )
    if refused is not None:
        return refused
    record_delegation(oracle, arguments, view.request_id, view)
    return None


def delegation_refusals(
    oracle: WorkRequestOracle, arguments: dict[str, Any], permissions: object
) -> Refusals:
    return oracle.delegation_refusals(
        arguments["originating_session_id"],
        deliverable=arguments["deliverable"],
        budget_slice=arguments["budget_slice"],
        permissions=Permissions.model_validate(permissions),
        assignee=arguments["assignee"],
    )


def record_delegation(
    oracle: WorkRequestOracle, arguments: dict[str, Any], request_id: str, view: WorkRequest | None
) -> None:
    """Adopt a delegation as made: its ids and granted set as reported, or placeholders for one
    whose answer nobody saw."""
    oracle.delegate(
        arguments["originating_session_id"],
        kind=arguments["kind"],
        deliverable=arguments["deliverable"],
        acceptance_checks=list(arguments["acceptance_checks"]),
        budget_slice=arguments["budget_slice"],
        permissions=Permissions.model_validate(
            arguments["permissions"] if view is None else view.permissions
        ),
        assignee=arguments["assignee"],
        request_id=request_id,
        child_session_id=f"{request_id}-session" if view is None else view.child_session_id,
        generation=0 if view is None else view.lease.generation,
    )


# -- leases ----------------------------------------------------------------------------------


def judge_claim(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    request_id, holder = operation.arguments["request_id"], operation.arguments["holder"]
    refusals = oracle.claim_refusals(request_id, holder)
    known = not isinstance(oracle.get_request(request_id), ErrorCode)
    own = oracle.held_by(request_id, holder) if known else None
    required = refusals - {ErrorCode.LEASE_HELD} if own is not None else refusals
    if operation.outcome == "fail":
        again = known and oracle_lease(oracle, request_id).holder is not None
        accepting = ("WR-6", "AC-ARMONIA-WORKREQ-001.4/claimable-again") if again else ("WR-6",)
        return refusal_mismatch(operation, "claim", refusals, accepting)
    if operation.outcome == "info":
        if not required:
            oracle.claim(request_id, holder)
        return None
    refused = acceptance_mismatch(operation, "claim", required)
    if refused is not None:
        return refused
    lease = Lease.model_validate(operation.value)
    if lease.holder != holder or lease.expires_at is None:
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.10/contract-fields",),
            f"{holder}'s claim was granted {lease!r}",
        )
    if own is not None and lease.generation == own.generation:
        oracle.extend(request_id, lease.expires_at)
        return None
    newest = oracle_lease(oracle, request_id).generation
    if lease.generation <= newest:
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.7/fenced",),
            f"generation {newest} was already granted",
            "other-generation",
        )
    if lease.expires_at not in as_stored(oracle.fresh_expiry()):
        return mismatch(
            operation, (EXPIRY_PRECISION,), f"a lease granted now expires {oracle.fresh_expiry()}"
        )
    oracle.claim(request_id, holder, generation=lease.generation, expires_at=lease.expires_at)
    return None


def judge_heartbeat(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    arguments = operation.arguments
    request_id, generation = arguments["request_id"], arguments["generation"]
    refusals = oracle.heartbeat_refusals(request_id, arguments["holder"], generation)
    if operation.outcome == "fail":
        return refusal_mismatch(operation, "heartbeat", refusals)
    if operation.outcome == "info":
        if not refusals:
            oracle.extend(request_id)
        return None
    refused = acceptance_mismatch(operation, "heartbeat", refusals)
    if refused is not None:
        return refused
    lease = Lease.model_validate(operation.value)
    before = oracle_lease(oracle, request_id).expires_at
    if lease.holder != arguments["holder"]:
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",),
            f"renewed for {lease.holder!r}",
        )
    if lease.expires_at is None or (before is not None and lease.expires_at < before):
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",),
            f"the lease expired at {before}",
        )
    if lease.generation != generation:
        if not oracle.reads("WR-7", "heartbeat-regenerates") or lease.generation < generation:
            return mismatch(
                operation, ("WR-7",), f"renewed under generation {generation}", "other-generation"
            )
        oracle.regenerate(request_id, lease.generation)
    oracle.extend(request_id, lease.expires_at)
    return None


# -- completion --------------------------------------------------------------------------------


def judge_publish(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    arguments = operation.arguments
    fencing = (
        arguments["request_id"],
        arguments["holder"],
        arguments["generation"],
        arguments["result_ref"],
    )
    recorded = oracle.recorded_retry(*fencing)
    if recorded is not None:
        return judge_exact_retry(oracle, operation, recorded)
    refusals = oracle.publish_refusals(*fencing)
    if operation.outcome == "fail":
        return refusal_mismatch(operation, "publish", refusals)
    if operation.outcome == "info":
        if not refusals:
            oracle.complete(*fencing)
        return None
    refused = acceptance_mismatch(operation, "publish", refusals)
    if refused is not None:
        return refused
    completion = Completion.model_validate(operation.value)
    left = oracle.remaining_of(oracle_view(oracle, fencing[0]).child_session_id)
    predicted = oracle.complete(*fencing, completed_at=completion.completed_at)
    return completion_mismatch(operation, completion, predicted, left)


def completion_mismatch(
    operation: Operation, completion: Completion, predicted: Completion, left: int
) -> Mismatch | None:
    """The completion as acknowledged against the model's at this point: giving back more
    than was left creates budget under every reading; any other figure than the model's
    rests on WR-3 (what happens to the remainder)."""
    returned = completion.budget_returned
    if returned > left:
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.9/no-budget-created",),
            f"{returned} given back, {left} was left",
            "other-figures",
        )
    if returned != predicted.budget_returned:
        return mismatch(
            operation,
            (REMAINDER_RETURNED,),
            f"the model gives back {predicted.budget_returned}",
            "other-figures",
        )
    if completion != predicted:
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.6/records-result",),
            f"the model records {predicted!r}",
        )
    return None


def judge_exact_retry(
    oracle: WorkRequestOracle, operation: Operation, recorded: Completion
) -> Mismatch | None:
    """A publish repeating the recorded completion: answered with it, or refused as completed
    where WR-10 is read as retry-refused."""
    if operation.outcome == "info":
        return None
    refused_reading = oracle.reads("WR-10", "retry-refused")
    if operation.outcome == "fail":
        if refused_reading and operation.error is ErrorCode.ALREADY_COMPLETED:
            return None
        return mismatch(operation, ("WR-10",), f"an exact retry of {recorded!r}")
    if not refused_reading and Completion.model_validate(operation.value) == recorded:
        return None
    return mismatch(operation, ("WR-10",), f"the recorded completion is {recorded!r}")


# -- budget ----------------------------------------------------------------------------------


def judge_usage(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    session, amount = operation.arguments["session_id"], operation.arguments["amount"]
    refusals = oracle.usage_refusals(session, amount)
    if operation.outcome == "fail":
        return refusal_mismatch(
            operation,
            "record_usage",
            refusals,
            ("AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign", USAGE_FROM_SLICE),
        )
    if operation.outcome == "ok":
        refused = acceptance_mismatch(operation, "record_usage", refusals, amount=amount)
        if refused is not None:
            return refused
    if not refusals:
        oracle.record_usage(session, amount)
    return None


# -- reads -------------------------------------------------------------------------------------


def judge_read_request(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    """A request read at its point in the order: what the race decides (who holds it under
    which generation, whether and how it completed and when its lease closed, what its child
    spent) as the model has it."""
    predicted = oracle.get_request(operation.arguments["request_id"])
    if operation.outcome != "ok":
        expected_missing = predicted is ErrorCode.NOT_FOUND
        if operation.outcome == "info" or (expected_missing and operation.error == predicted):
            return None
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.1/creates-request",),
            f"the model reads {predicted!r}",
        )
    if isinstance(predicted, ErrorCode):
        return mismatch(
            operation,
            ("AC-ARMONIA-WORKREQ-001.1/creates-request",),
            "the model holds no such request",
        )
    view = WorkRequest.model_validate(operation.value)
    state_cites = (
        (EXPIRED_STATE,) if oracle.lapsed(view.request_id) else ("AC-ARMONIA-WORKREQ-001.7/fenced",)
    )
    state_kind = "in-progress" if view.state is RequestState.IN_PROGRESS else "other-state"
    parts: list[tuple[str, object, object, tuple[str, ...], str]] = [
        (
            "result",
            view.result_ref,
            predicted.result_ref,
            ("AC-ARMONIA-WORKREQ-001.6/records-result", "AC-ARMONIA-WORKREQ-001.6/closes-once"),
            "other-state",
        ),
        (
            "lease holder",
            view.lease.holder,
            predicted.lease.holder,
            ("AC-ARMONIA-WORKREQ-001.7/fenced",),
            "other-state",
        ),
        (
            "lease generation",
            view.lease.generation,
            predicted.lease.generation,
            ("AC-ARMONIA-WORKREQ-001.7/fenced",),
            "other-generation",
        ),
        ("state", view.state, predicted.state, state_cites, state_kind),
        (
            "lease closing",
            view.lease.closed_at,
            predicted.lease.closed_at,
            ("AC-ARMONIA-WORKREQ-001.6/closes-once",),
            "other-state",
        ),
        (
            "budget spent",
            view.budget_spent,
            predicted.budget_spent,
            spent_cites(oracle, view),
            "other-figures",
        ),
    ]
    for part, observed, expected, cites, kind in parts:
        if observed != expected:
            return mismatch(operation, cites, f"its {part} reads {expected!r} in the model", kind)
    return None


def spent_cites(oracle: WorkRequestOracle, view: WorkRequest) -> tuple[str, ...]:
    """Spending beyond the slice breaks it under every reading; other figures rest on WR-2
    where the model caps usage at what is left."""
    if view.budget_spent > view.budget_slice:
        return ("AC-ARMONIA-WORKREQ-001.13/usage-within-slice",)
    capped = oracle.reads("WR-2", "capped-usage")
    return (
        ("AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign", USAGE_FROM_SLICE)
        if capped
        else ("AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",)
    )


def judge_read_budget(oracle: WorkRequestOracle, operation: Operation) -> Mismatch | None:
    """A campaign's budget read at its point in the order: each part as the model has it."""
    if operation.outcome != "ok":
        return (
            None
            if operation.outcome == "info"
            else mismatch(operation, ("AC-ARMONIA-WORKREQ-001.1/creates-request",), "refused")
        )
    snapshot = BudgetSnapshot.model_validate(operation.value)
    predicted = oracle.budget(operation.arguments["campaign_id"])
    if snapshot == predicted:
        return None
    created = isinstance(predicted, BudgetSnapshot) and snapshot.available > predicted.available
    cites = (
        ("AC-ARMONIA-WORKREQ-001.9/no-budget-created",)
        if created
        else (
            "AC-ARMONIA-WORKREQ-001.1/slice-deducted",
            "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
            REMAINDER_RETURNED,
        )
    )
    return mismatch(operation, cites, f"the model reads {predicted!r}", "other-figures")


def oracle_view(oracle: WorkRequestOracle, request_id: str) -> WorkRequest:
    view = oracle.get_request(request_id)
    if isinstance(view, ErrorCode):
        raise ScenarioError(f"the model holds no request {request_id}")
    return view


def oracle_lease(oracle: WorkRequestOracle, request_id: str) -> Lease:
    return oracle_view(oracle, request_id).lease


JUDGES: dict[str, Judge] = {
    "create_environment": judge_setup,
    "create_campaign": judge_setup,
    "create_session": judge_setup,
    "delegate": judge_delegate,
    "claim": judge_claim,
    "heartbeat": judge_heartbeat,
    "publish": judge_publish,
    "record_usage": judge_usage,
    "get_request": judge_read_request,
    "budget": judge_read_budget,
}
"""How each operation a race records is judged; listings are left to their serial checks."""
