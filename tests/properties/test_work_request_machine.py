"""The work-request state machine, through the driver port.

Hypothesis interleaves delegations (spawn or subagent, from root or child
sessions, with narrowing or escalating permissions), claims, heartbeats, clock
moves (some landing exactly on a lease's expiry), fresh and stale publishes,
usage, restarts and listings. Every answer, value or refusal, must equal the
oracle's prediction, and after every step the observed store must keep the
invariants: at most one accepted publish per request, carrying the generation
current when it was accepted; one generation step per claim; budgets conserved
and never negative; every request's permissions within its originator's.

A failure shrinks to a short program of steps, with each step's answer noted.
To replay a printed blob, put the printed `@reproduce_failure(...)` on
WorkRequestMachine.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, ClassVar, TypeVar

import pytest
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from conformance.driver import (
    BudgetSnapshot,
    Capability,
    Completion,
    DelegationKind,
    DriverError,
    ErrorCode,
    Lease,
    Permissions,
    RequestState,
    WorkRequest,
)
from conformance.oracle.work_requests import WorkRequestOracle, within

if TYPE_CHECKING:
    from tests.properties.conftest import DriverFactory

T = TypeVar("T")

T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
MICRO = timedelta(microseconds=1)
MEMBERS = {"env": ("alice", "bob", "carol"), "annex": ("dave",)}
PRINCIPALS = ("alice", "bob", "carol", "dave")
CAMPAIGNS = {"camp": "env", "annex-camp": "annex"}
GRANT_NAMES = ("read", "write", "shell", "net", "gpu", "camera", "mic")
"""Tool and device grants drawn from one pool of names, so that a check pooling
tools with devices (a device "camera" letting a tool "camera" through) shows."""


def granting(tools: set[str], devices: set[str]) -> Permissions:
    return Permissions(tools=frozenset(tools), devices=frozenset(devices))


ROOTS = {
    "root-alice": ("camp", "alice", granting({"read", "write", "shell"}, {"gpu", "camera"})),
    "root-bob": ("camp", "bob", granting({"read"}, set())),
    "root-dave": ("annex-camp", "dave", granting({"read", "net"}, {"mic"})),
}


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
        assert error.definite, f"the outcome is unknown, so nothing can be checked: {error}"
        return error.code


def render(answer: object) -> str:
    if isinstance(answer, ErrorCode):
        return f"refused {answer.value}"
    if isinstance(answer, Permissions):
        return f"tools {sorted(answer.tools)} devices {sorted(answer.devices)}"
    return repr(answer)


def grants(names: tuple[str, ...] | frozenset[str]) -> st.SearchStrategy[frozenset[str]]:
    if not names:
        return st.just(frozenset())
    return st.frozensets(st.sampled_from(sorted(names)))


def narrowings(origin: Permissions) -> st.SearchStrategy[Permissions]:
    return st.builds(Permissions, tools=grants(origin.tools), devices=grants(origin.devices))


def widenings(origin: Permissions) -> st.SearchStrategy[Permissions]:
    """A narrowing of `origin` plus one grant from the pool, tool or device."""
    extra = st.frozensets(st.sampled_from(GRANT_NAMES), min_size=1, max_size=1)
    return st.one_of(
        st.builds(
            Permissions,
            tools=st.builds(frozenset.union, grants(origin.tools), extra),
            devices=grants(origin.devices),
        ),
        st.builds(
            Permissions,
            tools=grants(origin.tools),
            devices=st.builds(frozenset.union, grants(origin.devices), extra),
        ),
    )


def permission_sets(origin: Permissions, root: Permissions) -> st.SearchStrategy[Permissions]:
    """Mostly a narrowing of the originator's set; sometimes one grant wider, or what
    the lineage's root holds (which a narrowed originator may have dropped)."""
    return st.one_of(narrowings(origin), narrowings(origin), widenings(origin), narrowings(root))


forgeries = st.sampled_from(["as granted", "by another principal", "one generation ahead"])
result_refs = st.sampled_from(["s3://results/a", "s3://results/b"])


def assignees(environment: str) -> st.SearchStrategy[str | None]:
    """Mostly nobody or a member of the originator's environment, sometimes a stranger."""
    members = st.sampled_from(MEMBERS[environment])
    return st.one_of(st.none(), st.none(), members, members, st.sampled_from(PRINCIPALS))


def claimants(request: WorkRequest) -> st.SearchStrategy[str]:
    """Mostly someone entitled to claim the request, sometimes anyone at all."""
    entitled = (
        st.just(request.assignee)
        if request.assignee is not None
        else st.sampled_from(MEMBERS[request.environment_id])
    )
    return st.one_of(entitled, entitled, st.sampled_from(PRINCIPALS))


class WorkRequestMachine(RuleBasedStateMachine):
    """One implementation and the oracle, driven side by side."""

    drivers: ClassVar[DriverFactory]
    requests = Bundle("requests")
    leases = Bundle("leases")

    def __init__(self) -> None:
        super().__init__()
        self._resources = ExitStack()
        self.driver = self._resources.enter_context(self.drivers.fresh())
        limits = self.driver.describe().work_requests
        assert limits is not None, "an implementation serving work requests reports its limits"
        self.driver.set_clock(T0)
        self.oracle = WorkRequestOracle(limits, T0)
        self.request_ids: list[str] = []
        self.permissions_of: dict[str, Permissions] = {}
        self.environment_of: dict[str, str] = {}
        self.child_session_of: dict[str, str] = {}
        self.root_of: dict[str, str] = {root: root for root in ROOTS}
        self.claims: dict[str, int] = {}
        self.completions: dict[str, Completion] = {}
        self.newest: dict[str, HeldLease] = {}
        self.claimants: dict[str, st.SearchStrategy[str]] = {}

    def teardown(self) -> None:
        self._resources.close()

    def check(self, what: str, operation: Callable[[], T], expected: object) -> T | ErrorCode:
        """Run one driver call, note its answer, and hold it to the oracle's prediction."""
        answer = attempt(operation)
        note(f"{what} -> {render(answer)}")
        assert answer == expected, (
            f"{what}: the implementation answered {render(answer)}, "
            f"the oracle predicts {render(expected)}"
        )
        return answer

    # -- setup ------------------------------------------------------------------
    @initialize(
        target=requests,
        budget=st.integers(30, 200),
        annex_budget=st.integers(1, 60),
        seeds=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 6)), max_size=6),
        data=st.data(),
    )
    def setup(
        self, budget: int, annex_budget: int, seeds: list[tuple[int, int]], data: st.DataObject
    ) -> object:
        """Two environments with a campaign each, three root sessions, and a few first requests.

        Each first request is delegated from alice's root session (so her count
        cap is in reach), from the child session of a recent first request (so
        lineages start several levels deep), or from another root.
        """
        for environment, members in MEMBERS.items():
            self.check(
                f"create_environment({environment})",
                partial(self.driver.create_environment, environment, list(members)),
                self.oracle.create_environment(environment, list(members)),
            )
        for campaign, amount in (("camp", budget), ("annex-camp", annex_budget)):
            self.check(
                f"create_campaign({campaign}, budget {amount})",
                partial(self.driver.create_campaign, campaign, CAMPAIGNS[campaign], amount),
                self.oracle.create_campaign(campaign, CAMPAIGNS[campaign], amount),
            )
        for session, (campaign, principal, permissions) in ROOTS.items():
            self.check(
                f"create_session({session})",
                partial(self.driver.create_session, session, campaign, principal, permissions),
                self.oracle.create_session(session, campaign, principal, permissions),
            )
            self.permissions_of[session] = permissions
            self.environment_of[session] = CAMPAIGNS[campaign]
        created: list[str] = []
        for pick, amount in seeds:
            children = [self.child_session_of[r] for r in reversed(created)]
            origins = ["root-alice", *children, "root-bob", "root-dave"]
            origin = origins[pick % len(origins)]
            permissions = data.draw(narrowings(self.permissions_of[origin]), label="narrowed to")
            request = self.try_delegation(
                Delegation(DelegationKind.SPAWN, origin, "seed", (), amount, permissions, None)
            )
            if isinstance(request, str):
                created.append(request)
        return multiple(*created)

    def session(self, data: st.DataObject) -> str:
        """Any session so far: a root, or the child session of any request."""
        return data.draw(st.sampled_from(list(self.permissions_of)), label="session")

    # -- delegation ----------------------------------------------------------------
    @rule(
        target=requests,
        kind=st.sampled_from(DelegationKind),
        deliverable=st.sampled_from(["summarise logs", "patch parser", "review", "triage", ""]),
        checks=st.lists(st.sampled_from(["tests pass", "cites sources"]), max_size=2, unique=True),
        budget_slice=st.integers(1, 20),
        data=st.data(),
    )
    def delegate(
        self,
        kind: DelegationKind,
        deliverable: str,
        checks: list[str],
        budget_slice: int,
        data: st.DataObject,
    ) -> object:
        """A delegation that bad input, caps, permissions or budget may refuse."""
        origin = self.session(data)
        delegation = Delegation(
            kind,
            origin,
            deliverable,
            tuple(checks),
            budget_slice,
            data.draw(
                permission_sets(
                    self.permissions_of[origin], self.permissions_of[self.root_of[origin]]
                ),
                label="permissions",
            ),
            data.draw(assignees(self.environment_of[origin]), label="assignee"),
        )
        return self.try_delegation(delegation)

    def try_delegation(self, delegation: Delegation) -> object:
        """Delegate through the driver and the oracle; the new request id, if any."""
        what = repr(delegation)
        refusal = self.oracle.delegation_refusal(
            delegation.origin,
            deliverable=delegation.deliverable,
            budget_slice=delegation.budget_slice,
            permissions=delegation.permissions,
            assignee=delegation.assignee,
        )
        call = partial(
            self.driver.delegate,
            delegation.kind,
            delegation.origin,
            deliverable=delegation.deliverable,
            acceptance_checks=list(delegation.checks),
            budget_slice=delegation.budget_slice,
            permissions=delegation.permissions,
            assignee=delegation.assignee,
        )
        if refusal is not None:
            self.check(what, call, refusal)
            return multiple()
        created = attempt(call)
        assert isinstance(created, WorkRequest), f"{what}: {render(created)}, expected a request"
        predicted = self.oracle.delegate(
            delegation.origin,
            deliverable=delegation.deliverable,
            acceptance_checks=list(delegation.checks),
            budget_slice=delegation.budget_slice,
            permissions=delegation.permissions,
            assignee=delegation.assignee,
            request_id=created.request_id,
            child_session_id=created.child_session_id,
        )
        self.check(what, lambda: created, predicted)
        self.request_ids.append(created.request_id)
        self.permissions_of[created.child_session_id] = created.permissions
        self.environment_of[created.child_session_id] = created.environment_id
        self.child_session_of[created.request_id] = created.child_session_id
        self.root_of[created.child_session_id] = self.root_of[delegation.origin]
        self.claims[created.request_id] = 0
        self.claimants[created.request_id] = claimants(created)
        return created.request_id

    # -- lease ---------------------------------------------------------------------
    @rule(target=leases, request=requests, data=st.data())
    def claim(self, request: str, data: st.DataObject) -> object:
        held = self.try_claim(request, data.draw(self.claimants[request], label="holder"))
        return multiple() if held is None else held

    @rule(target=leases, request=requests, result_ref=result_refs, data=st.data())
    def claim_and_publish(self, request: str, result_ref: str, data: st.DataObject) -> object:
        """Claim and publish at once, so that completions, nested ones too, are frequent."""
        held = self.try_claim(request, data.draw(self.claimants[request], label="holder"))
        if held is None:
            return multiple()
        self.try_publish(held, result_ref)
        return held

    def try_claim(self, request: str, holder: str) -> HeldLease | None:
        """Claim through the driver and the oracle; the lease granted, if any."""
        lease = self.check(
            f"claim({request}, {holder})",
            partial(self.driver.claim, request, holder),
            self.oracle.claim(request, holder),
        )
        if not isinstance(lease, Lease):
            return None
        self.claims[request] += 1
        assert lease.generation == self.claims[request], (
            f"claim number {self.claims[request]} of {request} got generation {lease.generation}"
        )
        self.newest[request] = HeldLease(request, holder, lease.generation)
        return self.newest[request]

    @rule(lease=leases)
    def heartbeat(self, lease: HeldLease) -> None:
        """Renew with a lease some claim granted, current or long superseded."""
        self.try_heartbeat(lease)

    @rule(request=requests, forgery=forgeries)
    def heartbeat_current(self, request: str, forgery: str) -> None:
        """Renew with the request's current fencing pair, or a near miss of it."""
        self.try_heartbeat(self.current_lease(request, forgery))

    @rule(lease=leases, result_ref=result_refs)
    def publish(self, lease: HeldLease, result_ref: str) -> None:
        """Publish with a lease some claim granted, current or long superseded."""
        self.try_publish(lease, result_ref)

    @rule(request=requests, forgery=forgeries, result_ref=result_refs)
    def publish_current(self, request: str, forgery: str, result_ref: str) -> None:
        """Publish with the request's current fencing pair, or a near miss of it."""
        self.try_publish(self.current_lease(request, forgery), result_ref)

    def current_lease(self, request: str, forgery: str) -> HeldLease:
        """The newest lease granted for `request` (generation 0 before any claim), or a forgery."""
        lease = self.newest.get(request, HeldLease(request, PRINCIPALS[0], 0))
        if forgery == "by another principal":
            others = [p for p in PRINCIPALS if p != lease.holder]
            return HeldLease(request, others[lease.generation % len(others)], lease.generation)
        if forgery == "one generation ahead":
            return HeldLease(request, lease.holder, lease.generation + 1)
        return lease

    def try_heartbeat(self, lease: HeldLease) -> None:
        self.check(
            f"heartbeat{lease!r}",
            partial(self.driver.heartbeat, lease.request_id, lease.holder, lease.generation),
            self.oracle.heartbeat(lease.request_id, lease.holder, lease.generation),
        )

    def try_publish(self, lease: HeldLease, result_ref: str) -> None:
        completion = self.check(
            f"publish{lease!r} {result_ref}",
            partial(
                self.driver.publish, lease.request_id, lease.holder, lease.generation, result_ref
            ),
            self.oracle.publish(lease.request_id, lease.holder, lease.generation, result_ref),
        )
        if isinstance(completion, Completion):
            accepted = self.completions.setdefault(lease.request_id, completion)
            assert completion == accepted, f"{lease.request_id} accepted a second publish"
            assert completion.generation == self.claims[lease.request_id], (
                f"{lease.request_id} accepted generation {completion.generation}, "
                f"current is {self.claims[lease.request_id]}"
            )

    # -- budget, clock, restart, listing ------------------------------------------------
    @rule(amount=st.integers(0, 15), data=st.data())
    def record_usage(self, amount: int, data: st.DataObject) -> None:
        session = self.session(data)
        self.check(
            f"record_usage({session}, {amount})",
            partial(self.driver.record_usage, session, amount),
            self.oracle.record_usage(session, amount),
        )

    @rule(data=st.data())
    def advance_clock(self, data: st.DataObject) -> None:
        """Move time, often landing exactly on a live lease's expiry or just before it."""
        lease = self.oracle.lease_duration
        delta = data.draw(
            st.one_of(
                st.timedeltas(MICRO, lease / 3),
                st.timedeltas(lease / 3, 2 * lease),
                st.just(timedelta(hours=2)),
            ),
            label="by",
        )
        expiries = self.oracle.live_expiries()
        aim = bool(expiries) and data.draw(st.booleans(), label="aim at an expiry")
        if aim:
            target = data.draw(st.sampled_from(expiries), label="expiry")
            target -= data.draw(st.sampled_from([timedelta(0), MICRO]), label="minus")
            delta = target - self.oracle.now
        now = self.driver.advance_clock(delta)
        self.oracle.set_clock(self.oracle.now + delta)
        note(f"advance_clock({delta}) -> T0+{now - T0}")
        assert now == self.oracle.now, f"the clock reads {now}, expected {self.oracle.now}"

    @rule()
    def restart(self) -> None:
        note("restart")
        self.driver.restart()

    @rule(
        environment=st.sampled_from([*MEMBERS, "nowhere"]),
        principal=st.sampled_from(PRINCIPALS),
    )
    def list_requests(self, environment: str, principal: str) -> None:
        self.check(
            f"list_requests({environment}, {principal})",
            partial(self.driver.list_requests, environment, principal),
            self.oracle.list_requests(environment, principal),
        )

    # -- invariants ----------------------------------------------------------------
    @invariant()
    def budgets_are_conserved(self) -> None:
        for campaign in CAMPAIGNS:
            snapshot = attempt(partial(self.driver.budget, campaign))
            assert isinstance(snapshot, BudgetSnapshot), f"budget({campaign}) {render(snapshot)}"
            parts = (snapshot.available, snapshot.reserved, snapshot.spent)
            assert min(parts) >= 0, f"a negative budget part: {snapshot!r}"
            assert snapshot.total == sum(parts), f"budget not conserved: {snapshot!r}"
            expected = self.oracle.budget(campaign)
            assert snapshot == expected, f"budget {snapshot!r}, the oracle predicts {expected!r}"

    @invariant()
    def requests_stay_fenced_and_narrowed(self) -> None:
        for request_id in self.request_ids:
            view = attempt(partial(self.driver.get_request, request_id))
            assert isinstance(view, WorkRequest), f"get_request({request_id}) {render(view)}"
            origin = self.permissions_of[view.originating_session_id]
            assert within(view.permissions, origin), f"{request_id} holds more than its originator"
            assert view.lease.generation == self.claims[request_id], (
                f"{request_id} reports generation {view.lease.generation} "
                f"after {self.claims[request_id]} claims"
            )
            self.assert_single_completion(view)
            expected = self.oracle.get_request(request_id)
            assert view == expected, f"{view!r}, the oracle predicts {expected!r}"

    def assert_single_completion(self, view: WorkRequest) -> None:
        accepted = self.completions.get(view.request_id)
        if view.state is not RequestState.COMPLETED:
            assert accepted is None, f"{view.request_id} was published yet reads {view.state}"
            return
        assert accepted is not None, f"{view.request_id} completed without an accepted publish"
        recorded = (view.result_ref, view.lease.generation, view.lease.closed_at)
        assert recorded == (accepted.result_ref, accepted.generation, accepted.completed_at), (
            f"{view.request_id} records {recorded}, its one accepted publish was {accepted!r}"
        )


def test_work_request_machine(drivers: DriverFactory) -> None:
    with drivers.fresh() as driver:
        if Capability.WORK_REQUESTS not in driver.describe().capabilities:
            pytest.skip("not_applicable: the implementation does not declare work_requests")
    WorkRequestMachine.drivers = drivers
    run_state_machine_as_test(WorkRequestMachine)
