"""The work-request machine's rules for leases, usage, the clock, restarts and listings:
claims, heartbeats and publishes (fresh and forged), usage drawn on a slice, clock moves
around a lease's expiry, restarts, and listings by members and strangers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import cache, partial

from hypothesis import strategies as st
from hypothesis.stateful import multiple, precondition, rule

from conformance.driver import Completion, ErrorCode, Lease, WorkRequest
from conformance.oracle.refusals import Refusals
from conformance.oracle.stored_instants import as_stored
from conformance.oracle.work_request_cites import (
    EXPIRY_PRECISION,
    ROOT_USAGE,
    USAGE_FROM_SLICE,
    ZERO_USAGE,
    bad_input_cite,
    refusal_cites,
)
from conformance.properties.following import Draws
from conformance.properties.hostile_data import LISTED_ENVIRONMENTS, PRINCIPALS, claimants
from conformance.properties.work_request_delegations import DelegationRules
from conformance.properties.work_request_judging import followed_step
from conformance.properties.work_request_scenario import Outcome
from conformance.properties.work_request_terms import (
    LEASES,
    MICRO,
    REQUESTS,
    ROOTS,
    T0,
    HeldLease,
    attempt,
    forgeries,
    off_every,
    render,
    result_refs,
)
from conformance.spec.clause_check import (
    ScenarioError,
    expect,
    port_requires,
    port_value,
    scenario_value,
    violated,
)


class LeaseRules(DelegationRules):
    """The rules of a request's life after its delegation."""

    @rule(target=LEASES, request=REQUESTS, data=st.data())
    @followed_step
    def claim(self, request: str, data: Draws) -> object:
        held = self.try_claim(request, self.claimant(request, data))
        return multiple() if held is None else held

    @rule(target=LEASES, request=REQUESTS, result_ref=result_refs, data=st.data())
    @followed_step
    def claim_and_publish(self, request: str, result_ref: str, data: Draws) -> object:
        """Claim and publish at once, so that completions, nested ones too, are frequent."""
        held = self.try_claim(request, self.claimant(request, data))
        if held is None:
            return multiple()
        self.try_publish(held, result_ref)
        return held

    def claimant(self, request: str, data: Draws) -> str:
        return data.draw(claimants(*self.entitled[request]), label="holder")

    def try_claim(
        self,
        request: str,
        holder: str,
        call: Callable[[], Lease] | None = None,
        *,
        racing: bool = False,
    ) -> HeldLease | None:
        """Claim through the driver and the oracle; the lease granted, if any.

        The live holder claiming again may be refused or answered with its own
        lease; any other grant must carry a generation newer than every earlier
        one (not necessarily one more: that is WR-7's reading, which the
        Gherkin scenarios pin), and the machine adopts it.
        """
        refusals = self.oracle.claim_refusals(request, holder)
        own = self.oracle.held_by(request, holder)
        answer = attempt(call or partial(self.driver.claim, request, holder))
        optional = frozenset({ErrorCode.LEASE_HELD}) if own else frozenset()
        if not racing or not isinstance(answer, Lease):
            self.scenario.claim(request, holder, Outcome(answer, refusals, optional))
        stands = self.judge(
            f"claim({request}, {holder})",
            "claim",
            answer,
            refusals,
            optional=optional,
            accepting=("WR-6", "AC-ARMONIA-WORKREQ-001.4/claimable-again")
            if request in self.newest
            else ("WR-6",),
        )
        if not stands or not isinstance(answer, Lease):
            return None
        expect(
            answer.holder == holder,
            "AC-ARMONIA-WORKREQ-001.10/contract-fields",
            f"{holder}'s claim granted {answer!r}",
        )
        expires = port_value(answer.expires_at, f"a granted lease has an expiry: {answer!r}")
        if own is not None and answer.generation == own.generation:
            self.oracle.extend(request, expires)
            self.renewed_at[request] = self.oracle.now
            return self.newest[request]
        return self.grant(request, holder, answer.generation, expires)

    def grant(self, request: str, holder: str, generation: int, expires: datetime) -> HeldLease:
        """Adopt a new grant: newer than every earlier one, and one lease duration long."""
        earlier = self.newest.get(request)
        expect(
            earlier is None or generation > earlier.generation,
            "AC-ARMONIA-WORKREQ-001.7/fenced",
            f"{holder}'s claim of {request} got generation {generation}, "
            f"after {earlier!r} had been granted",
        )
        expect(
            self.expiry_as_reported(expires),
            EXPIRY_PRECISION,
            f"{holder}'s claim of {request} expires at T0+{expires - T0}, "
            f"expected the reported lease duration from now, T0+{self.oracle.fresh_expiry() - T0}",
        )
        self.oracle.claim(request, holder, generation=generation, expires_at=expires)
        self.renewed_at[request] = self.oracle.now
        self.newest[request] = HeldLease(request, holder, generation)
        return self.newest[request]

    def expiry_as_reported(self, expires: datetime) -> bool:
        """A lease granted now expires one reported duration from now (WR-12), as the
        implementation stored that instant (to any precision the protocol allows)."""
        return expires in as_stored(self.oracle.fresh_expiry())

    @rule(lease=LEASES)
    @followed_step
    def heartbeat(self, lease: HeldLease) -> None:
        """Renew with a lease some claim granted, current or long superseded."""
        self.try_heartbeat(lease)

    @rule(request=REQUESTS, forgery=forgeries)
    @followed_step
    def heartbeat_current(self, request: str, forgery: str) -> None:
        """Renew with the request's current fencing pair, or a near miss of it."""
        self.try_heartbeat(self.current_lease(request, forgery))

    @rule(lease=LEASES, result_ref=result_refs)
    @followed_step
    def publish(self, lease: HeldLease, result_ref: str) -> None:
        """Publish with a lease some claim granted, current or long superseded."""
        self.try_publish(lease, result_ref)

    @rule(request=REQUESTS, forgery=forgeries, result_ref=result_refs)
    @followed_step
    def publish_current(self, request: str, forgery: str, result_ref: str) -> None:
        """Publish with the request's current fencing pair, or a near miss of it."""
        self.try_publish(self.current_lease(request, forgery), result_ref)

    def current_lease(self, request: str, forgery: str) -> HeldLease:
        """The newest lease granted for `request` (before any claim, the generation its
        unclaimed lease reports), or a forgery of it."""
        unclaimed = HeldLease(request, PRINCIPALS[0], self.unclaimed_generation[request])
        lease = self.newest.get(request, unclaimed)
        if forgery == "by another principal":
            others = [p for p in PRINCIPALS if p != lease.holder]
            return HeldLease(request, others[lease.generation % len(others)], lease.generation)
        if forgery == "one generation ahead":
            return HeldLease(request, lease.holder, lease.generation + 1)
        return lease

    def try_heartbeat(self, lease: HeldLease) -> None:
        """Renew through the driver; an accepted renewal's later expiry is adopted."""
        what = f"heartbeat{lease!r}"
        refusals = self.oracle.heartbeat_refusals(lease.request_id, lease.holder, lease.generation)
        before = self.predicted(lease.request_id).lease
        answer = attempt(
            partial(self.driver.heartbeat, lease.request_id, lease.holder, lease.generation)
        )
        self.scenario.heartbeat(
            lease.request_id, lease.holder, lease.generation, Outcome(answer, refusals)
        )
        if not self.judge(what, "heartbeat", answer, refusals):
            return
        if not isinstance(answer, Lease):
            self.check_extends_nothing(what, lease.request_id, refusals)
            return
        expect(
            answer.holder == lease.holder,
            "AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",
            f"{what} moved the lease to {answer!r}",
        )
        expires = port_value(answer.expires_at, f"a renewed lease has an expiry: {answer!r}")
        self.check_extended(what, lease.request_id, before, expires)
        self.oracle.extend(lease.request_id, expires)
        self.renewed_at[lease.request_id] = self.oracle.now
        if not self.oracle.reads("WR-7", "heartbeat-regenerates"):
            expect(answer.generation == lease.generation, "WR-7", f"{what} answered {answer!r}")
            return
        expect(
            answer.generation > lease.generation,
            "AC-ARMONIA-WORKREQ-001.7/fenced",
            f"{what} answered {answer!r}",
        )
        self.oracle.regenerate(lease.request_id, answer.generation)
        self.newest[lease.request_id] = HeldLease(lease.request_id, lease.holder, answer.generation)

    def check_extended(self, what: str, request_id: str, before: Lease, expires: datetime) -> None:
        """The expiry moves later, by however much; a renewal at the very instant of the last
        grant or renewal may leave it where it was (a lease duration from now is then no later)."""
        old = scenario_value(before.expires_at, f"{request_id} was renewed unclaimed")
        idle = self.renewed_at[request_id] == self.oracle.now
        fresh = as_stored(self.oracle.fresh_expiry())
        expect(
            expires > old or (expires == old and (idle or old in fresh)),
            "AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",
            f"{what} moved the expiry from T0+{old - T0} to T0+{expires - T0}",
        )

    def check_extends_nothing(self, what: str, request_id: str, refusals: Refusals) -> None:
        """A refused heartbeat leaves the lease exactly as it was."""
        view = self.read(
            f"get_request({request_id})",
            partial(self.driver.get_request, request_id),
            "AC-ARMONIA-WORKREQ-001.1/creates-request",
        )
        expected = self.predicted(request_id).lease
        expect(
            view.lease == expected,
            refusal_cites("heartbeat", refusals)
            or ("AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",),
            f"{what} was refused, yet the lease reads {view.lease!r}, not {expected!r}",
        )

    def try_publish(self, lease: HeldLease, result_ref: str) -> None:
        """Publish through the driver; an exact retry of a recorded completion is WR-10's."""
        what = f"publish{lease!r} {result_ref}"
        fencing = (lease.request_id, lease.holder, lease.generation, result_ref)
        recorded = self.oracle.recorded_retry(*fencing)
        answer = attempt(partial(self.driver.publish, *fencing))
        if recorded is not None:
            self.scenario.retry(lease.request_id, lease.holder, result_ref)
            self.judge_retry(what, answer, recorded)
            return
        refusals = self.oracle.publish_refusals(*fencing)
        self.scenario.publish(*fencing, Outcome(answer, refusals))
        stands = self.judge(what, "publish", answer, refusals)
        if stands and isinstance(answer, Completion):
            self.record_completion(what, lease, result_ref, answer)

    def judge_retry(self, what: str, answer: object, recorded: Completion) -> None:
        """An exact retry closes nothing again; WR-10 reads it as answering the completion."""
        self.tape.say(f"{what} (an exact retry) -> {render(answer)}")
        self.observed.clear()
        if self.oracle.reads("WR-10", "retry-refused"):
            expect(
                answer is ErrorCode.ALREADY_COMPLETED,
                "WR-10",
                f"{what}: the exact retry answered {render(answer)}, not already_completed",
            )
            return
        if isinstance(answer, ErrorCode):
            raise violated("WR-10", f"{what}: the exact retry was {render(answer)}")
        expect(
            answer == recorded,
            "WR-10",
            f"{what}: the exact retry answered {answer!r}, the recorded completion is {recorded!r}",
        )

    def record_completion(
        self, what: str, lease: HeldLease, result_ref: str, completion: Completion
    ) -> None:
        """The one accepted publish: it records what was published, by the newest lease."""
        request = lease.request_id
        expect(
            request not in self.completions,
            "AC-ARMONIA-WORKREQ-001.6/closes-once",
            f"{what}: a second publish accepted",
        )
        published = (request, lease.holder, lease.generation, result_ref)
        recorded = (
            completion.request_id,
            completion.holder,
            completion.generation,
            completion.result_ref,
        )
        expect(
            recorded == published,
            "AC-ARMONIA-WORKREQ-001.6/records-result",
            f"{what} answered {completion!r}",
        )
        newest = scenario_value(self.newest.get(request), f"{request} completed unclaimed")
        expect(
            completion.generation == newest.generation,
            "AC-ARMONIA-WORKREQ-001.7/stale-rejected",
            f"{what} was accepted, yet the newest grant is {newest!r}",
        )
        predicted = self.oracle.complete(*published, completed_at=completion.completed_at)
        expect(
            completion.budget_returned == predicted.budget_returned,
            "WR-3",
            f"{what} returned {completion.budget_returned}, "
            f"the unspent slice is {predicted.budget_returned}",
        )
        self.note_completion(request, completion)

    @rule(amount=st.integers(-2, 15), data=st.data())
    @followed_step
    def record_usage(self, amount: int, data: Draws) -> None:
        """Usage of a root (WR-14) or a child session, within what it may spend or beyond."""
        session = self.session(data)
        what = f"record_usage({session}, {amount})"
        refusals = self.oracle.usage_refusals(session, amount)
        root = session in ROOTS
        before = None if root else self.budget_now(session)
        answer = attempt(partial(self.driver.record_usage, session, amount))
        accepting = (
            (ROOT_USAGE,)
            if root
            else ("AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign", USAGE_FROM_SLICE)
        )
        self.scenario.usage(session, amount, Outcome(answer, refusals))
        bad = bad_input_cite(amount, ZERO_USAGE)
        resting_on = {ErrorCode.INVALID_INPUT: bad} if bad is not None else None
        stands = self.judge(
            what, "record_usage", answer, refusals, accepting=accepting, resting_on=resting_on
        )
        if not stands or isinstance(answer, ErrorCode):
            return
        charged = self.oracle.record_usage(session, amount)
        self.budget_readings.add(ROOT_USAGE if root else USAGE_FROM_SLICE)
        if before is not None:
            self.check_drawn(what, before, "spent", charged)
            self.check_charged(what, self.request_of[session])

    def check_charged(self, what: str, request_id: str) -> None:
        """A child's usage is charged to its request's slice: what the request has spent
        rises by the amount (001.13: drawn from the campaign through the slice)."""
        view = self.read(
            f"get_request({request_id})",
            partial(self.driver.get_request, request_id),
            "AC-ARMONIA-WORKREQ-001.1/creates-request",
        )
        spent = self.predicted(request_id).budget_spent
        expect(
            view.budget_spent == spent,
            "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
            f"{what}: {request_id} reports {view.budget_spent} spent, {spent} were charged to it",
        )

    @rule(data=st.data())
    @followed_step
    def advance_clock(self, data: Draws) -> None:
        """Move time, often to a microsecond either side of a live lease's expiry.

        Never onto an expiry itself: whether a lease is live at that instant is
        WR-8's reading, which the Gherkin scenarios pin.
        """
        lease = self.oracle.lease_duration
        delta = data.draw(clock_steps(lease), label="by")
        target = self.oracle.now + delta
        expiries = self.oracle.live_expiries()
        aim = data.draw(st.booleans(), label="aim at an expiry")
        which = data.draw(st.integers(0, 15), label="expiry")
        off = data.draw(st.sampled_from([-MICRO, MICRO]), label="off by")
        if aim and expiries:
            target = expiries[which % len(expiries)] + off
        delta = off_every(target, expiries) - self.oracle.now
        now = self.driver.advance_clock(delta)
        target = self.oracle.now + delta
        self.oracle.set_clock(target)
        self.tape.say(f"advance_clock({delta}) -> T0+{now - T0}")
        self.scenario.clock(delta)
        port_requires(now == target, f"the clock reads {now}, expected {target}")

    @precondition(
        lambda self: (
            self.may_restart and (self.max_restarts is None or self.restarts < self.max_restarts)
        )
    )
    @rule()
    @followed_step
    def restart(self) -> None:
        self.tape.say("restart")
        self.scenario.restart()
        self.driver.restart()
        self.observed.clear()
        self.restarts += 1

    @rule(
        environment=st.sampled_from(LISTED_ENVIRONMENTS),
        principal=st.sampled_from(PRINCIPALS),
    )
    @followed_step
    def list_requests(self, environment: str, principal: str) -> None:
        """A member lists the open and in-progress requests, in any order; others are refused."""
        what = f"list_requests({environment}, {principal})"
        answer = attempt(partial(self.driver.list_requests, environment, principal))
        self.tape.say(f"{what} -> {render(answer)}")
        refused = bool(self.oracle.listing_refusals(environment, principal))
        self.scenario.listing(environment, principal, refused)
        if refused:
            self.judge_listing_refusal(what, answer)
            return
        if isinstance(answer, ErrorCode):
            raise violated("AC-ARMONIA-WORKREQ-001.5/members-list", f"{what} was {render(answer)}")
        expected = self.oracle.list_requests(environment, principal)
        if isinstance(expected, ErrorCode):
            raise ScenarioError(f"the model refuses {what}")
        self.check_listing(what, environment, principal, answer, expected)

    def judge_listing_refusal(self, what: str, answer: object) -> None:
        """Refused, and with the same refusal whether the environment exists or not (WR-11)."""
        if not isinstance(answer, ErrorCode):
            raise violated(
                "AC-ARMONIA-WORKREQ-001.5/non-members-cannot", f"{what} listed {render(answer)}"
            )
        first = self.listing_refusal = self.listing_refusal or answer
        expect(
            answer == first or self.oracle.reads("WR-11", "distinct-refusal"),
            "WR-11",
            f"{what} was {render(answer)}, another {render(first)}",
        )

    def check_listing(
        self,
        what: str,
        environment: str,
        principal: str,
        listed: list[WorkRequest],
        expected: list[WorkRequest],
    ) -> None:
        """Every open and in-progress request of the environment, each once, in any order."""
        ids = [view.request_id for view in listed]
        expect(
            len(ids) == len(set(ids)),
            "AC-ARMONIA-WORKREQ-001.5/members-list",
            f"{what} lists a request twice: {ids}",
        )
        by_id = {view.request_id: view for view in expected}
        missing = sorted(by_id.keys() - set(ids))
        expect(not missing, "AC-ARMONIA-WORKREQ-001.5/members-list", f"{what} leaves out {missing}")
        for view in listed:
            self.check_listed(what, environment, principal, view, by_id.get(view.request_id))

    def check_listed(
        self,
        what: str,
        environment: str,
        principal: str,
        view: WorkRequest,
        expected: WorkRequest | None,
    ) -> None:
        if expected is not None:
            self.check_view(what, view, expected)
            return
        known = self.oracle.get_request(view.request_id)
        if isinstance(known, WorkRequest) and known.environment_id == environment:
            if self.oracle.may_list_completed():
                self.check_view(what, view, known)
                return
            raise violated("WR-17", f"{what} lists {view.request_id}, which has completed")
        if isinstance(known, WorkRequest):
            self.listed_elsewhere(what, view.request_id, known.environment_id, principal)
        raise violated(
            "AC-ARMONIA-WORKREQ-001.5/members-list",
            f"{what} lists {view.request_id}, which nobody delegated",
        )

    def listed_elsewhere(
        self, what: str, request_id: str, environment: str, principal: str
    ) -> None:
        """A listing holding another environment's request: shown to someone outside that
        environment, it lists requests to a non-member; to a member of both (or where a
        request's environment is matched by prefix), it is not the asked environment's list."""
        member = not self.oracle.listing_refusals(environment, principal)
        raise violated(
            "AC-ARMONIA-WORKREQ-001.5/members-list"
            if member
            else "AC-ARMONIA-WORKREQ-001.5/non-members-cannot",
            f"{what} lists {request_id}, a request of {environment}",
        )


@cache
def clock_steps(lease: timedelta) -> st.SearchStrategy[timedelta]:
    """A step of the clock: within a lease, past it, or far beyond. Built once per lease
    duration: a strategy made anew at every draw costs Hypothesis more than the draw."""
    return st.one_of(
        st.timedeltas(MICRO, lease / 3),
        st.timedeltas(lease / 3, 2 * lease),
        st.just(timedelta(hours=2)),
    )
