"""Jepsen-style checks: invariants that must hold on a history whatever the interleaving.

Each check reads a history's operations (see `conformance.concurrency.history`) and judges
only what the history proves. An operation whose outcome is unknown (`info`)
may or may not have taken effect: it is never counted as a success nor as a
refusal, and it can only excuse what would otherwise be a violation (a gap in
the generations, a refusal that needed it to have happened).

Real-time order is the only order a checker may assume: operation A precedes
B when A completed before B was invoked; otherwise they overlapped and either
may have taken effect first.

The checks work on any implementation's histories, recorded in-process or read
back from JSON lines. Each returns a CheckResult with its violations and the
number of operations it checked, so evidence can say how much was verified.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from conformance.concurrency.history import HistoryError, Operation
from conformance.driver import ErrorCode

# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckResult:
    """What one check found. `counts` always holds `operations` (how many it checked)."""

    check: str
    violations: tuple[str, ...]
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def operations_checked(self) -> int:
        return self.counts.get("operations", 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "ok": self.ok,
            "violations": list(self.violations),
            "counts": dict(self.counts),
        }

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"{len(self.violations)} violation(s)"
        lines = [f"{self.check}: {verdict}; counts {dict(self.counts)}"]
        return "\n".join(lines + [f"  - {violation}" for violation in self.violations])


def over_admission_evidence(result: CheckResult) -> str:
    """The line a results record carries about the allowance under concurrency."""
    counts = result.counts
    return (
        f"largest over-admission observed: {counts.get('largest_over_admission', 0)} beyond the "
        f"allowance (largest concurrent batch {counts.get('largest_concurrency', 0)}; "
        f"{counts.get('definite', 0)} definite and {counts.get('indeterminate', 0)} "
        f"indeterminate outcomes checked; "
        f"{'no violations' if result.ok else f'{len(result.violations)} violation(s)'})"
    )


# --------------------------------------------------------------------------
# (a) Claims
# --------------------------------------------------------------------------

_OTHER_CLAIM_REFUSALS = frozenset(
    {ErrorCode.NOT_ASSIGNEE, ErrorCode.NOT_FOUND, ErrorCode.FORBIDDEN}
)
"""Refusals of a claimant not entitled to the request (forbidden as WR-6 read as
outsider-forbidden): no conflict, so the claims check leaves them to whoever judges entitlement."""


def check_claims(history: Sequence[Operation], *, exact_steps: bool = False) -> CheckResult:
    """Per request: one grant per generation, generations rising, losers told why.

    With `exact_steps`, generations must rise by exactly one (interpretation
    WR-7); without it, any rise will do (the spec asks only for a fence).

    A `lease_held` refusal needs a lease that may have been live at the
    refused instant; an `already_completed` one needs a publish that may have
    come first. Reads of the request (get_request) must see a generation some
    claim before them granted, and no older one than a claim that finished
    before them.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    claims = _select(history, "claim")
    initial = _initial_generations(history)
    for request_id, ops in _group(claims, "request_id").items():
        subject = f"request {request_id}"
        granted = [op for op in ops if op.outcome == "ok"]
        unknown = [op for op in ops if op.outcome == "info"]
        counts["requests"] += 1
        counts["succeeded"] += len(granted)
        counts["unknown"] += len(unknown)
        counts["unclaimed"] += int(not granted and not unknown)
        violations += _holder_mismatches(subject, granted)
        violations += _generation_violations(
            subject,
            [(op, op.value["generation"]) for op in granted],
            unknown=len(unknown),
            start=initial.get(request_id),
            exact_steps=exact_steps,
        )
        violations += _granted_while_live(subject, granted, history)
        for refusal in (op for op in ops if op.outcome == "fail"):
            counts[f"refused_{refusal.error}"] += 1
            violations += _unjustified_claim_refusal(subject, refusal, history)
        reads = [op for op in _select(history, "get_request") if _about(op, request_id)]
        renewals = [
            op
            for op in _select(history, "heartbeat")
            if _about(op, request_id) and op.outcome == "ok"
        ]
        violations += _stale_generation_reads(
            subject, reads, [*ops, *renewals], initial.get(request_id)
        )
    counts["operations"] = len(claims)
    return CheckResult("claims", tuple(violations), dict(counts))


def _granted_while_live(
    subject: str, granted: Sequence[Operation], history: Sequence[Operation]
) -> list[str]:
    """A lease handed to another holder while the previous grant (as renewed) was still live.

    Grant B follows grant A when B's generation is the higher; A's lease runs to
    the latest expiry A's grant or a heartbeat under A's generation that surely
    came before B reported. Under a frozen clock every claim of a batch shares
    one instant, so two winners of one batch are caught here even when their
    generations differ.
    """
    violations = []
    for earlier in granted:
        for later in granted:
            if later.value["generation"] <= earlier.value["generation"]:
                continue
            if later.value["holder"] == earlier.value["holder"] or later.clock is None:
                continue
            expiry = _renewed_expiry(earlier, later, history)
            if expiry is not None and expiry > later.clock:
                violations.append(
                    f"{subject}: generation {later.value['generation']} was granted to "
                    f"{later.value['holder']!r} at {later.clock.isoformat()} while generation "
                    f"{earlier.value['generation']} of {earlier.value['holder']!r} was live "
                    f"until {expiry.isoformat()}"
                )
    return violations


def _renewed_expiry(
    grant: Operation, successor: Operation, history: Sequence[Operation]
) -> datetime | None:
    expiries = [_instant(grant.value["expires_at"])] if grant.value["expires_at"] else []
    for op in history:
        if (
            op.operation == "heartbeat"
            and op.outcome == "ok"
            and op.arguments.get("request_id") == grant.arguments["request_id"]
            and op.value["generation"] == grant.value["generation"]
            and op.surely_before(successor)
            and op.value["expires_at"]
        ):
            expiries.append(_instant(op.value["expires_at"]))
    return max(expiries, default=None)


def _holder_mismatches(subject: str, granted: Iterable[Operation]) -> list[str]:
    return [
        f"{subject}: process {op.process} claimed as {op.arguments['holder']!r} "
        f"but was granted a lease for {op.value['holder']!r}"
        for op in granted
        if op.value["holder"] != op.arguments["holder"]
    ]


def _unjustified_claim_refusal(
    subject: str, refusal: Operation, history: Sequence[Operation]
) -> list[str]:
    request_id = refusal.arguments["request_id"]
    where = f"{subject}: process {refusal.process}"
    if refusal.error == ErrorCode.LEASE_HELD:
        grants = [
            op
            for op in history
            if op.operation in ("claim", "heartbeat")
            and op.outcome != "fail"
            and op is not refusal
            and op.arguments.get("request_id") == request_id
            and op.possibly_before(refusal)
        ]
        if not any(_may_be_live(grant, refusal.clock) for grant in grants):
            return [f"{where} was refused lease_held, but no lease could have been live"]
        return []
    if refusal.error == ErrorCode.ALREADY_COMPLETED:
        if not _completion_possibly_before(refusal, request_id, history):
            return [f"{where} was refused already_completed, but no publish could have come first"]
        return []
    if refusal.error in _OTHER_CLAIM_REFUSALS:
        return []
    return [f"{where} lost with {refusal.error}, not a typed conflict"]


def _may_be_live(grant: Operation, instant: datetime | None) -> bool:
    if grant.outcome == "info" or instant is None:
        return True
    return _instant(grant.value["expires_at"]) > instant


def _stale_generation_reads(
    subject: str, reads: Iterable[Operation], claims: Sequence[Operation], start: int | None
) -> list[str]:
    """`claims` may hold accepted heartbeats too: one that renewed under another generation
    (WR-7's alternative) explains a read of it, though no claim granted it."""
    violations = []
    for read in (op for op in reads if op.outcome == "ok"):
        seen = read.value["lease"]["generation"]
        finished = [
            op.value["generation"]
            for op in claims
            if op.operation == "claim" and _granted_surely_before(op, read)
        ]
        if finished and seen < max(finished):
            violations.append(
                f"{subject}: process {read.process} read generation {seen} after "
                f"generation {max(finished)} had been granted"
            )
        possible = {op.value["generation"] for op in claims if _granted_possibly_before(op, read)}
        unknown = sum(1 for op in claims if op.outcome == "info" and op.possibly_before(read))
        explained = seen in possible or seen == start
        ceiling = max(possible | {start if start is not None else 0}) + unknown
        if not explained and not (unknown and seen <= ceiling):
            violations.append(
                f"{subject}: process {read.process} read generation {seen}, "
                "which no claim before it granted"
            )
    return violations


def _granted_surely_before(claim: Operation, other: Operation) -> bool:
    return claim.outcome == "ok" and claim.surely_before(other)


def _granted_possibly_before(claim: Operation, other: Operation) -> bool:
    return claim.outcome == "ok" and claim.possibly_before(other)


def _initial_generations(history: Sequence[Operation]) -> dict[str, int]:
    """The lease generation each request was created with, when its delegation is recorded."""
    return {
        op.value["request_id"]: op.value["lease"]["generation"]
        for op in _select(history, "delegate")
        if op.outcome == "ok"
    }


# --------------------------------------------------------------------------
# (b) Publishes
# --------------------------------------------------------------------------

_EXPECTED_PUBLISH_REFUSALS = frozenset(
    {ErrorCode.STALE_GENERATION, ErrorCode.LEASE_EXPIRED, ErrorCode.NOT_FOUND}
)


def check_publishes(history: Sequence[Operation]) -> CheckResult:
    """Per request: one accepted completion, under the generation current then; one close.

    Every successful publish of a request must report the same completion
    (retries get the recorded one back) and must be the one it describes. No
    claim may succeed after a completion, and every observation of the lease's
    closing instant must agree.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    publishes = _select(history, "publish")
    for request_id, ops in _group(publishes, "request_id").items():
        subject = f"request {request_id}"
        accepted = [op for op in ops if op.outcome == "ok"]
        unknown = sum(1 for op in ops if op.outcome == "info")
        counts["requests"] += 1
        counts["unknown"] += unknown
        counts["uncompleted"] += int(not accepted and not unknown)
        completions = {_canonical(op.value) for op in accepted}
        counts["accepted"] += len(completions)
        counts["retries"] += len(accepted) - len(completions)
        if len(completions) > 1:
            violations.append(f"{subject}: {len(completions)} different completions accepted")
        claims = [op for op in _select(history, "claim") if _about(op, request_id)]
        if accepted:
            completion = accepted[0].value
            violations += _mismatched_acknowledgements(subject, accepted, completion)
            violations += _fence_violations(subject, accepted, completion, claims)
        reads = [op for op in _select(history, "get_request") if _about(op, request_id)]
        closes = _closing_instants(accepted, reads)
        counts["lease_closes"] += len(closes)
        if len(closes) > 1:
            violations.append(f"{subject}: the lease was closed at {len(closes)} instants")
        violations += _open_after_completion(subject, accepted, reads)
        for refusal in (op for op in ops if op.outcome == "fail"):
            counts[f"refused_{refusal.error}"] += 1
            violations += _unjustified_publish_refusal(subject, refusal, history)
    counts["operations"] = len(publishes)
    return CheckResult("publishes", tuple(violations), dict(counts))


def _mismatched_acknowledgements(
    subject: str, accepted: Iterable[Operation], completion: Mapping[str, Any]
) -> list[str]:
    recorded = (completion["holder"], completion["generation"], completion["result_ref"])
    return [
        f"{subject}: process {op.process} published {asked} and was told ok, "
        f"but the completion recorded is {recorded}"
        for op in accepted
        if (asked := _publish_key(op)) != recorded
    ]


def _fence_violations(
    subject: str,
    accepted: Sequence[Operation],
    completion: Mapping[str, Any],
    claims: Sequence[Operation],
) -> list[str]:
    """The completing generation was current: granted to that holder, not yet superseded."""
    violations = []
    generation = completion["generation"]
    for claim in (op for op in claims if op.outcome == "ok"):
        granted = claim.value["generation"]
        if granted == generation and claim.value["holder"] != completion["holder"]:
            violations.append(
                f"{subject}: completed by {completion['holder']!r} under generation "
                f"{generation}, which was granted to {claim.value['holder']!r}"
            )
        if granted > generation and all(claim.surely_before(op) for op in accepted):
            violations.append(
                f"{subject}: completed under generation {generation} although generation "
                f"{granted} had been granted before (process {claim.process})"
            )
        if any(op.surely_before(claim) for op in accepted):
            violations.append(
                f"{subject}: process {claim.process} claimed it after it was completed"
            )
    return violations


def _closing_instants(accepted: Iterable[Operation], reads: Iterable[Operation]) -> set[datetime]:
    closes = {_instant(op.value["completed_at"]) for op in accepted}
    for read in reads:
        closed = read.value["lease"]["closed_at"] if read.outcome == "ok" else None
        if closed is not None:
            closes.add(_instant(closed))
    return closes


def _open_after_completion(
    subject: str, accepted: Sequence[Operation], reads: Iterable[Operation]
) -> list[str]:
    return [
        f"{subject}: process {read.process} read it {read.value['state']} with an open lease "
        "after it was completed"
        for read in reads
        if read.outcome == "ok"
        and any(op.surely_before(read) for op in accepted)
        and (read.value["state"] != "completed" or read.value["lease"]["closed_at"] is None)
    ]


def _unjustified_publish_refusal(
    subject: str, refusal: Operation, history: Sequence[Operation]
) -> list[str]:
    """A fencing refusal needs a reason the history allows: a completion, a newer grant, expiry.

    `already_completed` needs a publish that may have come first. `stale_generation`,
    `not_found` and `lease_expired` are unjustified when the publisher's own grant surely
    came first, nothing newer may have come between and nothing may have completed the
    request; `lease_expired` is justified even so once that grant's lease had run out.
    """
    where = f"{subject}: process {refusal.process}"
    request_id = refusal.arguments["request_id"]
    completed = _completion_possibly_before(refusal, request_id, history)
    if refusal.error == ErrorCode.ALREADY_COMPLETED:
        if not completed:
            return [f"{where} was refused already_completed before any completion"]
        return []
    if refusal.error not in _EXPECTED_PUBLISH_REFUSALS:
        return [f"{where} was refused with {refusal.error}, not a fencing refusal"]
    grant = None if completed else _grant_surely_current(refusal, history)
    if grant is None:
        return []
    if refusal.error != ErrorCode.LEASE_EXPIRED:
        return [
            f"{where} was refused {refusal.error} under generation "
            f"{refusal.arguments['generation']}, granted to it and the newest any claim could "
            "have granted"
        ]
    expires_at = grant.value["expires_at"]
    if refusal.clock and expires_at and _instant(expires_at) > refusal.clock:
        return [
            f"{where} was refused lease_expired at {refusal.clock.isoformat()}, but its lease "
            f"ran until {expires_at}"
        ]
    return []


def _grant_surely_current(refusal: Operation, history: Sequence[Operation]) -> Operation | None:
    """The publisher's own grant, when it surely came first and nothing newer may have followed:
    no other claim, and no heartbeat that may have renewed it under another generation (which
    WR-7's reading forbids; the heartbeat's own check says so, not the publish's)."""
    request_id, holder = refusal.arguments["request_id"], refusal.arguments["holder"]
    generation = refusal.arguments["generation"]
    claims = [
        op
        for op in _select(history, "claim")
        if _about(op, request_id) and op.outcome != "fail" and op.possibly_before(refusal)
    ]
    own = [
        op
        for op in claims
        if op.outcome == "ok"
        and (op.value["holder"], op.value["generation"]) == (holder, generation)
        and op.surely_before(refusal)
    ]
    rivals = [
        op
        for op in claims
        if op not in own and (op.outcome == "info" or op.value["generation"] > generation)
    ]
    renewed = [
        op
        for op in _select(history, "heartbeat")
        if _about(op, request_id)
        and op.outcome != "fail"
        and op.possibly_before(refusal)
        and (op.outcome == "info" or op.value["generation"] != generation)
    ]
    return own[0] if own and not rivals and not renewed else None


def _publish_key(op: Operation) -> tuple[Any, Any, Any]:
    return (op.arguments["holder"], op.arguments["generation"], op.arguments["result_ref"])


def _completion_possibly_before(
    refusal: Operation, request_id: str, history: Sequence[Operation]
) -> bool:
    return any(
        op.operation == "publish"
        and op.outcome != "fail"
        and op is not refusal
        and op.arguments.get("request_id") == request_id
        and op.possibly_before(refusal)
        for op in history
    )


# --------------------------------------------------------------------------
# (c) Budget
# --------------------------------------------------------------------------


@dataclass
class _Campaign:
    total: int | None = None
    created_in_history: bool = False
    root_sessions: set[str] = field(default_factory=set)


def check_budget(history: Sequence[Operation]) -> CheckResult:
    """Snapshots never create budget (their parts never exceed the total) and never go
    negative; root delegations never overdraw a campaign.

    The campaign's consumption is what its root sessions took: slices of
    successful delegations (less what their completions returned) plus usage
    charged to root sessions; it may never exceed the total. A refusal for
    insufficient budget must have been possible: when the history holds the
    campaign's creation, everything that could have come before the refusal
    must leave less than the slice asked for.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    snapshots = [op for op in _select(history, "budget") if op.outcome == "ok"]
    for snapshot in snapshots:
        violations += _snapshot_violations(snapshot)
    campaigns = _campaigns(history)
    checked = len(snapshots)
    for campaign_id, campaign in campaigns.items():
        draws = [op for op in history if _draws_on(op, campaign)]
        checked += len(draws)
        delegations = [op for op in draws if op.operation == "delegate"]
        counts["delegations_succeeded"] += sum(1 for op in delegations if op.outcome == "ok")
        counts["unknown"] += sum(1 for op in draws if op.outcome == "info")
        taken = _consumption(draws, history)
        counts["largest_consumption"] = max(counts["largest_consumption"], taken)
        if campaign.total is not None and taken > campaign.total:
            violations.append(
                f"campaign {campaign_id}: its root sessions took {taken} of a budget of "
                f"{campaign.total}"
            )
        flat = campaign.created_in_history and not _nested(history, campaign_id, campaign)
        for refusal in (op for op in delegations if op.outcome == "fail"):
            counts[f"refused_{refusal.error}"] += 1
            if refusal.error == ErrorCode.INSUFFICIENT_BUDGET and flat:
                violations += _unjustified_budget_refusal(campaign_id, campaign, refusal, draws)
        if flat:
            ledger = _Ledger(campaign_id, campaign, draws, _root_returns(history, campaign))
            mine = [s for s in snapshots if s.value["campaign_id"] == campaign_id]
            violations += ledger.violations(mine)
            ledger.count(mine, counts)
    counts["snapshots"] = len(snapshots)
    counts["operations"] = checked
    return CheckResult("budget", tuple(violations), dict(counts))


def _snapshot_violations(snapshot: Operation) -> list[str]:
    value = snapshot.value
    where = f"campaign {value['campaign_id']}: snapshot by process {snapshot.process}"
    violations = [
        f"{where} has {name} {value[name]} < 0"
        for name in ("total", "available", "reserved", "spent")
        if value[name] < 0
    ]
    if value["total"] < value["available"] + value["reserved"] + value["spent"]:
        violations.append(
            f"{where} creates budget: total {value['total']} < available "
            f"{value['available']} + reserved {value['reserved']} + spent {value['spent']}"
        )
    return violations


def _campaigns(history: Sequence[Operation]) -> dict[str, _Campaign]:
    """Each campaign's total and root sessions, as far as the history tells."""
    campaigns: defaultdict[str, _Campaign] = defaultdict(_Campaign)
    children = {
        op.value["child_session_id"] for op in _select(history, "delegate") if op.outcome == "ok"
    }
    for op in history:
        if op.outcome != "ok":
            continue
        if op.operation == "create_campaign":
            campaign = campaigns[op.arguments["campaign_id"]]
            campaign.total, campaign.created_in_history = op.arguments["budget"], True
        elif op.operation == "budget":
            campaigns[op.value["campaign_id"]].total = op.value["total"]
        elif op.operation == "create_session":
            campaigns[op.arguments["campaign_id"]].root_sessions.add(op.arguments["session_id"])
        elif op.operation == "delegate" and op.value["originating_session_id"] not in children:
            campaigns[op.value["campaign_id"]].root_sessions.add(op.value["originating_session_id"])
    return dict(campaigns)


def _draws_on(op: Operation, campaign: _Campaign) -> bool:
    """A delegation or usage by one of the campaign's root sessions."""
    if op.operation == "delegate":
        return op.arguments["originating_session_id"] in campaign.root_sessions
    if op.operation == "record_usage":
        return op.arguments["session_id"] in campaign.root_sessions
    return False


def _amount(op: Operation) -> int:
    amount = op.arguments["budget_slice" if op.operation == "delegate" else "amount"]
    return int(amount)


def _consumption(draws: Iterable[Operation], history: Sequence[Operation]) -> int:
    """What the successful draws hold of the campaign at the end of the history."""
    returned = _returned_by_request(history)
    taken = 0
    for op in (op for op in draws if op.outcome == "ok"):
        taken += _amount(op)
        if op.operation == "delegate":
            taken -= returned.get(op.value["request_id"], 0)
    return taken


def _returned_by_request(history: Sequence[Operation]) -> dict[str, int]:
    """What completions gave back; an unknown publish may have given back everything."""
    returned: dict[str, int] = {}
    slices = {
        op.value["request_id"]: op.value["budget_slice"]
        for op in _select(history, "delegate")
        if op.outcome == "ok"
    }
    for op in _select(history, "publish"):
        request_id = op.arguments["request_id"]
        if op.outcome == "ok":
            returned[request_id] = op.value["budget_returned"]
        elif op.outcome == "info" and request_id not in returned:
            returned[request_id] = slices.get(request_id, 0)
    return returned


@dataclass(frozen=True)
class _Ledger:
    """What a campaign's available budget must read, replayed from the history.

    Definite draws (root delegations' slices, root usage) and definite returns
    (what completions of root-originated requests gave back, once per request)
    that surely came before a snapshot fix its value; operations that overlap
    the snapshot, or whose outcome is unknown, widen the range by what they
    could have moved. A snapshot outside the range lost an update, handed
    budget back that no completion returned, or returned one completion twice.
    """

    campaign_id: str
    campaign: _Campaign
    draws: Sequence[Operation]
    returns: Sequence[tuple[Operation, int]]

    def bounds(self, snapshot: Operation) -> tuple[int, int]:
        assert self.campaign.total is not None
        low = high = self.campaign.total
        moves = [(op, -_amount(op)) for op in self.draws if op.outcome != "fail"]
        for op, delta in [*moves, *self.returns]:
            if op.outcome == "ok" and op.surely_before(snapshot):
                low, high = low + delta, high + delta
            elif op.possibly_before(snapshot):
                low, high = low + min(delta, 0), high + max(delta, 0)
        return low, high

    def violations(self, snapshots: Iterable[Operation]) -> list[str]:
        found = []
        for snapshot in snapshots:
            low, high = self.bounds(snapshot)
            available = snapshot.value["available"]
            if not low <= available <= high:
                expected = f"{low}" if low == high else f"between {low} and {high}"
                found.append(
                    f"campaign {self.campaign_id}: snapshot by process {snapshot.process} "
                    f"reads {available} available, but the delegations, usage and completions "
                    f"recorded before it leave {expected}"
                )
        return found

    def count(self, snapshots: Sequence[Operation], counts: defaultdict[str, int]) -> None:
        """How much completions gave back, as acknowledged and as the last snapshot shows."""
        if not snapshots or self.campaign.total is None:
            return
        last = snapshots[-1]
        drawn = sum(_amount(op) for op in self.draws if op.outcome == "ok")
        counts["returned_acknowledged"] += sum(
            amount for op, amount in self.returns if op.outcome == "ok"
        )
        counts["returned_observed"] += last.value["available"] - (self.campaign.total - drawn)


def _nested(history: Sequence[Operation], campaign_id: str, campaign: _Campaign) -> bool:
    """Whether a child session of the campaign delegated. Where its slice came from (the
    child's own slice, or the campaign: WR-1) and where its remainder goes (up the lineage:
    WR-3, WR-15) rest on readings the checker does not follow, so the ledger and the
    refusals' justification judge flat histories only."""
    return any(
        op.operation == "delegate"
        and op.outcome == "ok"
        and op.value["campaign_id"] == campaign_id
        and op.arguments["originating_session_id"] not in campaign.root_sessions
        for op in history
    )


def _root_returns(history: Sequence[Operation], campaign: _Campaign) -> list[tuple[Operation, int]]:
    """Each completion of a request a root session delegated, with what it gave back: the
    first acknowledgement per request (retries return nothing more), or an unknown publish
    with all it could have given back (the slice)."""
    slices = {
        op.value["request_id"]: op.value["budget_slice"]
        for op in _select(history, "delegate")
        if op.outcome == "ok" and op.value["originating_session_id"] in campaign.root_sessions
    }
    returns: list[tuple[Operation, int]] = []
    acknowledged: set[str] = set()
    for op in _select(history, "publish"):
        request_id = op.arguments["request_id"]
        if request_id not in slices or request_id in acknowledged:
            continue
        if op.outcome == "ok":
            acknowledged.add(request_id)
            returns.append((op, int(op.value["budget_returned"])))
        elif op.outcome == "info":
            returns.append((op, slices[request_id]))
    return returns


def _unjustified_budget_refusal(
    campaign_id: str, campaign: _Campaign, refusal: Operation, draws: Iterable[Operation]
) -> list[str]:
    assert campaign.total is not None
    before = sum(
        _amount(op)
        for op in draws
        if op is not refusal and op.outcome != "fail" and op.possibly_before(refusal)
    )
    asked = _amount(refusal)
    if campaign.total - before >= asked:
        return [
            f"campaign {campaign_id}: process {refusal.process} was refused a slice of {asked}, "
            f"but at most {before} of {campaign.total} could have been taken before it"
        ]
    return []


# --------------------------------------------------------------------------
# (c') The usage ledger of a slice
# --------------------------------------------------------------------------


@dataclass
class _Slice:
    """A request's slice as the history shows it: from its delegation, or from reads of it."""

    request_id: str
    session_id: str
    budget_slice: int
    created: Operation | None = None
    reads: list[Operation] = field(default_factory=list)


@dataclass(frozen=True)
class _Baseline:
    """Where the ledger of one slice starts: what it had spent, and (when the history tells)
    what was left of it then."""

    spent: int
    room: int | None
    op: Operation | None
    """The delegation or the read it starts from; usages after it are replayed."""


MAYBE_EXACTLY: Final = 16
"""Up to this many usages that may or may not count are combined exactly (their subset sums);
beyond, a read is held to the range they span."""


def check_usage(
    history: Sequence[Operation], *, rooms: Mapping[str, int] | None = None
) -> CheckResult:
    """The usage ledger of every slice: what a child's usages charged, whatever the readings.

    - No read of a request ever shows more spent than its slice (usage-within-slice).
    - Between the ledger's start (the request's delegation, or its first read, given what was
      left of the slice then in `rooms`) and a later read, the slice's spending moved by
      min(room, S + x): S the definite successful usages that surely came before the read, x
      the sum of some of those whose answer is unknown or that overlapped it (a usage whose
      answer is indefinite may or may not count). Both readings of WR-2 fit: refused beyond
      the room (then S + x never exceeds it) or charged up to it. Less lost an accepted
      usage; more charged one twice, or beyond the slice.
    - A usage refused as exceeding the slice needed the room to be short: what every other
      usage that may have come first could have taken leaves less than it asked.

    Where the room is unknown (the slice was carved for the child's own delegations, or the
    history starts mid-way and `rooms` does not say), only 0 <= moved <= S + x is checked.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    usages = _select(history, "record_usage")
    for ledger in _slices(history).values():
        mine = [op for op in usages if op.arguments["session_id"] == ledger.session_id]
        counts["requests"] += 1
        counts["accepted"] += sum(1 for op in mine if op.outcome == "ok")
        counts["accepted_amount"] += sum(_amount(op) for op in mine if op.outcome == "ok")
        counts["refused"] += sum(1 for op in mine if op.outcome == "fail")
        counts["unknown"] += sum(1 for op in mine if op.outcome == "info")
        violations += _overspent_reads(ledger, counts)
        baseline = _baseline(ledger, mine, history, rooms or {})
        if baseline is None:
            continue
        after = [op for op in mine if baseline.op is None or baseline.op.surely_before(op)]
        for read in _reads_after(ledger, baseline):
            violations += _ledger_violations(ledger, baseline, after, read, exact=False)
        violations += _unjustified_usage_refusals(ledger, baseline, after)
    counts["operations"] = len(usages)
    return CheckResult("usage", tuple(violations), dict(counts))


def check_usage_exact(history: Sequence[Operation]) -> CheckResult:
    """The kit's reading of WR-2 on the same ledger: usage beyond what is left of the slice is
    refused, so every accepted usage is charged in full: a later read shows exactly S + x
    spent more (S the definite successful usages before it, x some of those unknown), never
    capped at the room."""
    violations: list[str] = []
    usages = _select(history, "record_usage")
    for ledger in _slices(history).values():
        mine = [op for op in usages if op.arguments["session_id"] == ledger.session_id]
        baseline = _baseline(ledger, mine, history, {})
        if baseline is None:
            continue
        after = [op for op in mine if baseline.op is None or baseline.op.surely_before(op)]
        for read in _reads_after(ledger, baseline):
            violations += _ledger_violations(ledger, baseline, after, read, exact=True)
    return CheckResult("usage_exact", tuple(violations), {"operations": len(usages)})


def _slices(history: Sequence[Operation]) -> dict[str, _Slice]:
    """Every request the history shows, by its child session."""
    slices: dict[str, _Slice] = {}
    for op in history:
        if op.outcome != "ok" or op.operation not in ("delegate", "get_request"):
            continue
        value = op.value
        ledger = slices.setdefault(
            value["child_session_id"],
            _Slice(value["request_id"], value["child_session_id"], int(value["budget_slice"])),
        )
        if op.operation == "delegate":
            ledger.created = op
        else:
            ledger.reads.append(op)
    return slices


def _overspent_reads(ledger: _Slice, counts: defaultdict[str, int]) -> list[str]:
    found = []
    for read in ledger.reads:
        spent = int(read.value["budget_spent"])
        counts["largest_spent"] = max(counts["largest_spent"], spent)
        if spent > ledger.budget_slice:
            found.append(
                f"request {ledger.request_id}: process {read.process} reads {spent} spent of a "
                f"slice of {ledger.budget_slice}"
            )
    return found


def _baseline(
    ledger: _Slice,
    usages: Sequence[Operation],
    history: Sequence[Operation],
    rooms: Mapping[str, int],
) -> _Baseline | None:
    """The delegation (nothing spent, the whole slice left), else the first read of the
    request, with what `rooms` says was left then; None when a usage overlapped that read (it
    may or may not be in what it shows). The room is unknown once the child delegated since."""
    room: int | None
    if ledger.created is not None:
        start, spent, room = ledger.created, 0, ledger.budget_slice
    elif ledger.reads:
        start = ledger.reads[0]
        spent, room = int(start.value["budget_spent"]), rooms.get(ledger.request_id)
        if any(not op.surely_before(start) and not start.surely_before(op) for op in usages):
            return None
    else:
        return None
    carving = any(
        op.operation == "delegate"
        and op.outcome != "fail"
        and op.arguments["originating_session_id"] == ledger.session_id
        and not op.surely_before(start)
        for op in history
    )
    return _Baseline(spent, None if carving else room, start)


def _reads_after(ledger: _Slice, baseline: _Baseline) -> list[Operation]:
    start = baseline.op
    return [read for read in ledger.reads if start is None or start.surely_before(read)]


def _ledger_violations(
    ledger: _Slice,
    baseline: _Baseline,
    usages: Sequence[Operation],
    read: Operation,
    *,
    exact: bool,
) -> list[str]:
    sure = sum(_amount(op) for op in usages if op.outcome == "ok" and op.surely_before(read))
    maybe = [
        _amount(op)
        for op in usages
        if op.outcome != "fail"
        and op.possibly_before(read)
        and not (op.outcome == "ok" and op.surely_before(read))
    ]
    moved = int(read.value["budget_spent"]) - baseline.spent
    sums = _subset_sums(maybe)
    room = baseline.room
    if exact:
        allowed = {sure + x for x in sums} if sums is not None else None
        low, high = sure, sure + sum(maybe)
    elif room is None:
        allowed, low, high = None, 0, sure + sum(maybe)
    else:
        allowed = {min(room, sure + x) for x in sums} if sums is not None else None
        low, high = min(room, sure), min(room, sure + sum(maybe))
    fits = moved in allowed if allowed is not None else low <= moved <= high
    if fits:
        return []
    unknown = f", and {len(maybe)} that may or may not count ({sum(maybe)})" if maybe else ""
    left = f" of the {room} left" if room is not None and not exact else ""
    return [
        f"request {ledger.request_id}: process {read.process} reads {moved} more spent than "
        f"{'its delegation' if ledger.created is baseline.op else 'the first read'}, but the "
        f"usages before it accepted {sure}{left}{unknown}"
    ]


def _subset_sums(amounts: Sequence[int]) -> set[int] | None:
    """Every sum of some of `amounts`; None for too many to combine (see MAYBE_EXACTLY)."""
    if len(amounts) > MAYBE_EXACTLY:
        return None
    sums = {0}
    for amount in amounts:
        sums |= {total + amount for total in sums}
    return sums


def _unjustified_usage_refusals(
    ledger: _Slice, baseline: _Baseline, usages: Sequence[Operation]
) -> list[str]:
    if baseline.room is None:
        return []
    found = []
    for refusal in usages:
        if refusal.outcome != "fail" or refusal.error != ErrorCode.USAGE_EXCEEDS_SLICE:
            continue
        taken = sum(
            _amount(op)
            for op in usages
            if op is not refusal and op.outcome != "fail" and op.possibly_before(refusal)
        )
        asked = _amount(refusal)
        if baseline.room - taken >= asked:
            found.append(
                f"request {ledger.request_id}: process {refusal.process} was refused usage of "
                f"{asked} as exceeding the slice, but at most {taken} of the {baseline.room} "
                "left could have been taken before it"
            )
    return found


# --------------------------------------------------------------------------
# (d) The Office allowance
# --------------------------------------------------------------------------


def check_allowance(
    history: Sequence[Operation], *, allowance: int, window: timedelta
) -> CheckResult:
    """Agent assignment wakes against the per-task allowance N over the window W.

    - No refusal while fewer than N admitted agent wakes may lie in the
      refusal's window (t - W, t]: every admission or unknown outcome that may
      have come before it counts in its favour.
    - No admission once N admissions in its window had finished before it
      began: only a race may over-admit.
    - Over-admission (admitted wakes in one window beyond N) never exceeds
      K, the most agent wakes for the task ever in flight at once: the bound the
      spec states (a correct gate reaches at most K - 1, from one place left).

    The instants are the controlled clock's, as recorded on each operation.
    Only admissions (`queued`) count; a wake merged or deduplicated adds no row.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    wakes = [op for op in _select(history, "assign_task") if op.arguments.get("acting_agent_id")]
    for task_id, ops in _group(wakes, "task_id").items():
        for op in ops:
            if op.clock is None:
                raise HistoryError(f"process {op.process} has no clock instant to window it by")
        admitted = [op for op in ops if _wake_outcome(op) == "queued"]
        refused = [op for op in ops if _wake_outcome(op) == "rate_limited"]
        unknown = [op for op in ops if op.outcome == "info"]
        counts["admitted"] += len(admitted)
        counts["refused"] += len(refused)
        counts["unknown"] += len(unknown)
        counts["definite"] += len(ops) - len(unknown)
        counts["indeterminate"] += len(unknown)
        violations += _premature_refusals(task_id, refused, admitted + unknown, allowance, window)
        violations += _sequential_over_admissions(task_id, admitted, allowance, window)
        over = _largest_over_admission(admitted, allowance, window)
        concurrency = _largest_overlap(ops)
        counts["largest_over_admission"] = max(counts["largest_over_admission"], over)
        counts["largest_concurrency"] = max(counts["largest_concurrency"], concurrency)
        if over > concurrency:
            violations.append(
                f"task {task_id}: {over} admitted beyond the allowance of {allowance}, "
                f"with at most {concurrency} wakes in flight at once"
            )
    counts["operations"] = len(wakes)
    return CheckResult("allowance", tuple(violations), dict(counts))


def _wake_outcome(op: Operation) -> str | None:
    if op.outcome != "ok" or op.value.get("wake") is None:
        return None
    outcome: str = op.value["wake"]["outcome"]
    return outcome


def _in_window(op: Operation, end: datetime, window: timedelta) -> bool:
    assert op.clock is not None
    return end - window < op.clock <= end


def _premature_refusals(
    task_id: str,
    refused: Iterable[Operation],
    counted: Sequence[Operation],
    allowance: int,
    window: timedelta,
) -> list[str]:
    violations = []
    for refusal in refused:
        assert refusal.clock is not None
        possible = sum(
            1
            for op in counted
            if op.possibly_before(refusal) and _in_window(op, refusal.clock, window)
        )
        if possible < allowance:
            violations.append(
                f"task {task_id}: process {refusal.process} was refused with at most "
                f"{possible} admitted wakes in its window (allowance {allowance})"
            )
    return violations


def _sequential_over_admissions(
    task_id: str, admitted: Sequence[Operation], allowance: int, window: timedelta
) -> list[str]:
    violations = []
    for wake in admitted:
        assert wake.clock is not None
        finished = sum(
            1 for op in admitted if op.surely_before(wake) and _in_window(op, wake.clock, window)
        )
        if finished >= allowance:
            violations.append(
                f"task {task_id}: process {wake.process} was admitted although {finished} "
                f"admitted wakes in its window had finished before it began"
            )
    return violations


def _largest_over_admission(
    admitted: Sequence[Operation], allowance: int, window: timedelta
) -> int:
    """The most admitted wakes in any one window, beyond the allowance."""
    largest = 0
    for end in {op.clock for op in admitted if op.clock is not None}:
        in_window = sum(1 for op in admitted if _in_window(op, end, window))
        largest = max(largest, in_window - allowance)
    return largest


def _largest_overlap(ops: Iterable[Operation]) -> int:
    """The most operations in flight at one moment (an unfinished one never ends)."""
    moments = []
    for op in ops:
        moments.append((op.invoked_ns, 1))
        if op.completed_ns is not None:
            moments.append((op.completed_ns, -1))
    in_flight = largest = 0
    for _, step in sorted(moments, key=lambda moment: (moment[0], -moment[1])):
        in_flight += step
        largest = max(largest, in_flight)
    return largest


# --------------------------------------------------------------------------
# Assignment generations
# --------------------------------------------------------------------------


def check_assignment_generations(
    history: Sequence[Operation], *, exact_steps: bool = False
) -> CheckResult:
    """Per task: every committed assignee mutation moved the generation on, none lost.

    Two mutations never commit one generation and a later one never commits an
    older one; with `exact_steps`, each also adds exactly one (the reference's
    choice; the spec asks only that the generation moves).
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    assignments = _select(history, "assign_task")
    initial = {
        op.value["task_id"]: op.value["assignment_generation"]
        for op in _select(history, "create_task")
        if op.outcome == "ok"
    }
    for task_id, ops in _group(assignments, "task_id").items():
        committed = [op for op in ops if op.outcome == "ok"]
        unknown = sum(1 for op in ops if op.outcome == "info")
        counts["committed"] += len(committed)
        counts["unknown"] += unknown
        violations += _generation_violations(
            f"task {task_id}",
            [(op, op.value["generation"]) for op in committed],
            unknown=unknown,
            start=initial.get(task_id),
            exact_steps=exact_steps,
        )
    counts["operations"] = len(assignments)
    return CheckResult("assignment_generations", tuple(violations), dict(counts))


# --------------------------------------------------------------------------
# Definite outcomes
# --------------------------------------------------------------------------


def check_definite_share(history: Sequence[Operation], *, minimum: float) -> CheckResult:
    """Every concurrent batch answered at least `minimum` of its calls definitely.

    Unknown outcomes excuse what they might have done, so a batch of nothing
    but unknown outcomes proves nothing: an implementation could answer every
    call "indeterminate" and pass every other check.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    batches: defaultdict[int, list[Operation]] = defaultdict(list)
    for op in history:
        if op.batch is not None:
            batches[op.batch].append(op)
    for batch, ops in sorted(batches.items()):
        definite = sum(1 for op in ops if op.outcome != "info")
        counts["definite"] += definite
        counts["indeterminate"] += len(ops) - definite
        if definite < minimum * len(ops):
            violations.append(
                f"batch {batch}: {definite} of {len(ops)} outcomes definite, fewer than "
                f"{minimum:.0%}: unknown outcomes cannot show the implementation right"
            )
    counts["batches"] = len(batches)
    counts["operations"] = sum(len(ops) for ops in batches.values())
    if not batches:
        violations.append("no concurrent batch was recorded")
    return CheckResult("definite_share", tuple(violations), dict(counts))


# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------


def _generation_violations(
    subject: str,
    granted: Sequence[tuple[Operation, int]],
    *,
    unknown: int,
    start: int | None,
    exact_steps: bool,
) -> list[str]:
    """Each generation granted once, rising in real-time order; by exactly one with
    `exact_steps`.

    A gap is then excused only by as many unknown outcomes, each of which may
    have taken the missing generation. Without a recorded start, the lowest
    generation granted is taken as the first.
    """
    violations = []
    by_generation: defaultdict[int, list[Operation]] = defaultdict(list)
    for op, generation in granted:
        by_generation[generation].append(op)
    for generation, ops in sorted(by_generation.items()):
        if len(ops) > 1:
            processes = ", ".join(str(op.process) for op in ops)
            violations.append(
                f"{subject}: generation {generation} granted {len(ops)} times "
                f"(processes {processes})"
            )
    generations = sorted(by_generation)
    if generations:
        first = start if start is not None else generations[0] - 1
        if generations[0] <= first:
            violations.append(f"{subject}: generation {generations[0]} does not rise above {first}")
        skipped = generations[-1] - first - len(generations)
        if exact_steps and skipped > unknown:
            violations.append(
                f"{subject}: generations {generations} from {first} skip {skipped} values, "
                f"but only {unknown} outcome(s) are unknown"
            )
    for earlier, earlier_generation in granted:
        for later, later_generation in granted:
            if earlier.surely_before(later) and earlier_generation >= later_generation:
                violations.append(
                    f"{subject}: process {later.process} got generation {later_generation} "
                    f"after process {earlier.process} had got {earlier_generation}"
                )
    return violations


def _select(history: Iterable[Operation], operation: str) -> list[Operation]:
    return [op for op in history if op.operation == operation]


def _group(ops: Iterable[Operation], argument: str) -> dict[str, list[Operation]]:
    groups: defaultdict[str, list[Operation]] = defaultdict(list)
    for op in ops:
        groups[str(op.arguments[argument])].append(op)
    return dict(groups)


def _about(op: Operation, request_id: str) -> bool:
    return op.arguments.get("request_id") == request_id


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)
