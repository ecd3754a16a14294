"""The work-request machine's races, where the implementation evaluates batches concurrently:
usages of one slice, with or without the publish of the same request, usages of sibling
requests' slices, publishes of one request, a claim followed at once by rivals' claims, and
delegations of one session. A batch, with the read after it, is judged by the
linearizability search over the model (`conformance.concurrency.work_request_calls`)."""

from __future__ import annotations

from functools import partial

from hypothesis import strategies as st
from hypothesis.stateful import multiple, precondition, rule

from conformance.concurrency.checker import check_definite_share
from conformance.concurrency.history import HistoryRecorder
from conformance.concurrency.linearizable import HistoryTooWide
from conformance.concurrency.races import MINIMUM_DEFINITE_SHARE
from conformance.concurrency.work_request_calls import judge_history
from conformance.driver import CallOutcome, ConcurrentCall, DelegationKind, Lease, WorkRequest
from conformance.oracle.work_request_cites import (
    COMPLETES_ONCE,
    KIND_CREATES,
    LEASE_FENCE,
    USAGE_FROM_SLICE,
    USAGE_LEDGER,
)
from conformance.properties.following import Draws
from conformance.properties.hostile_data import PRINCIPALS
from conformance.properties.work_request_judging import followed_step
from conformance.properties.work_request_leases import LeaseRules
from conformance.properties.work_request_terms import (
    LEASES,
    REQUESTS,
    Delegation,
    HeldLease,
    delegation_call,
    holds,
    publish_call,
    render_outcome,
    result_refs,
    unknown,
    up_to,
    usage_calls,
)
from conformance.spec.clause_check import (
    Cite,
    ScenarioError,
    port_requires,
    scenario_value,
    violated,
)


class RaceRules(LeaseRules):
    """The rules that send batches at once."""

    @precondition(lambda self: self.concurrent)
    @rule(target=LEASES, request=REQUESTS, data=st.data())
    @followed_step
    def race(self, request: str, data: Draws) -> object:
        """One of five races on a request, as one rule (five would take five times the share
        of a program's steps): its child's usages, its and its siblings' children's usages,
        publishes with its newest lease, a claim followed at once by rivals' claims, the
        heartbeat and the publish, or its child's usages with the publish."""
        kind = data.draw(
            st.sampled_from(["usages", "siblings", "publishes", "lease", "spending"]), label="race"
        )
        if kind == "usages":
            self.race_usage(request, data)
            return multiple()
        if kind == "siblings":
            self.race_sibling_usages(request, data)
            return multiple()
        if kind == "spending":
            self.race_spending_with_publish(request, data.draw(result_refs, label="result"), data)
            return multiple()
        if kind == "publishes":
            refs = data.draw(st.lists(result_refs, min_size=2, max_size=4), label="results")
            self.race_publishes(request, refs)
            return multiple()
        held = self.race_lease(request, data.draw(result_refs, label="result"), data)
        return multiple() if held is None else held

    def race_usage(self, request: str, data: Draws) -> None:
        """Usages of one child's slice made at once, all of one amount and often more than it
        has left between them, between two reads of the request: the linearizability search
        judges the batch, and the model takes the state it leaves.

        One amount, so that how many of them fit does not depend on their order: the model's
        figures after the race, and so every later draw, are those of any other interleaving.
        Amounts that differ would let the order decide the charge, and Hypothesis, running an
        example again, would meet other draws and call the search flaky.
        """
        session, request_id = self.child_session_of[request], request
        amounts = self.drawn_usages(session, data, 2, 5)
        what = f"record_usage({session}) of {amounts} at once"
        recorder = HistoryRecorder(self.driver)
        before = self.race_read(recorder, request_id)
        outcomes = self.batch(recorder, usage_calls(session, amounts))
        self.race_read(recorder, request_id)
        self.scenario.usage_race(session, amounts)
        self.tape.say(f"{what} -> {[render_outcome(outcome) for outcome in outcomes]}")
        self.check_view(
            f"get_request({request_id}) before {what}", before, self.predicted(request_id)
        )
        self.judge_batch(what, recorder, USAGE_LEDGER)
        if self.oracle.reads(USAGE_FROM_SLICE, "capped-usage"):
            self.budget_readings.add(USAGE_FROM_SLICE)

    def race_sibling_usages(self, request: str, data: Draws) -> None:
        """Usages of the children of requests delegated by one session, made at once, each
        child's of one amount (so that how many of each fit does not depend on the order):
        each draws on its own slice, and all of them on the campaign's one account, which a
        charge read and written back while a sibling's landed would lose one of. Between reads
        of every request; a request with no open sibling races alone."""
        siblings = [
            other
            for other in self.request_ids
            if other != request
            and self.origin_of[other] == self.origin_of[request]
            and other not in self.completions
        ]
        if request in self.completions or not siblings:
            self.race_usage(request, data)
            return
        racing = [request, data.draw(st.sampled_from(siblings), label="sibling")]
        sessions = [self.child_session_of[one] for one in racing]
        least = min(self.oracle.remaining_of(session) for session in sessions)
        amount = data.draw(up_to(least), label="each usage")
        amounts = [amount] * data.draw(st.integers(1, 4), label="usages each")
        what = f"record_usage of {amounts} by each of {sessions} at once"
        recorder = HistoryRecorder(self.driver)
        for one in racing:
            read = self.race_read(recorder, one)
            self.check_view(f"get_request({one}) before {what}", read, self.predicted(one))
        outcomes = self.batch(
            recorder, [call for session in sessions for call in usage_calls(session, amounts)]
        )
        for one in racing:
            self.race_read(recorder, one)
        self.scenario.sibling_race(racing, amounts)
        self.tape.say(f"{what} -> {[render_outcome(outcome) for outcome in outcomes]}")
        self.judge_batch(
            what, recorder, (*USAGE_LEDGER, "AC-ARMONIA-WORKREQ-001.9/no-budget-created")
        )
        if self.oracle.reads(USAGE_FROM_SLICE, "capped-usage"):
            self.budget_readings.add(USAGE_FROM_SLICE)

    def drawn_usages(self, session: str, data: Draws, fewest: int, most: int) -> list[int]:
        """Usages of one amount, at most what is left of the session's slice, to make at once."""
        amount = data.draw(up_to(self.oracle.remaining_of(session)), label="each usage")
        return [amount] * data.draw(st.integers(fewest, most), label="usages at once")

    def race_spending_with_publish(self, request: str, result_ref: str, data: Draws) -> None:
        """The child's usages and the holder's publish made at once, between two reads of the
        request: each usage is charged before the completion closes the slice, or refused after
        it, so what was spent and what the completion gave back together never exceed what was
        left (under WR-16's alternative too, what a completion gave back is never spent again).
        A completion that reads the remainder and writes it back later gives back a usage it
        also charged: no order explains that. Raced only where the scenario can say what was
        left: the holder's live lease, and a child that carved nothing out of its slice; else
        its usages race alone."""
        session = self.child_session_of[request]
        if request not in self.newest or session in self.origin_of.values():
            self.race_usage(request, data)
            return
        lease = self.current_lease(request, "as granted")
        amounts = self.drawn_usages(session, data, 1, 4)
        what = f"record_usage({session}) of {amounts} at once with publish{lease!r}"
        recorder = HistoryRecorder(self.driver)
        before = self.race_read(recorder, request)
        calls = [*usage_calls(session, amounts), publish_call(lease, result_ref)]
        outcomes = self.batch(recorder, calls)
        after = self.race_read(recorder, request)
        self.scenario.spending_race(session, amounts, lease.holder, request, result_ref)
        self.tape.say(f"{what} -> {[render_outcome(o) for o in outcomes]}")
        self.check_view(f"get_request({request}) before {what}", before, self.predicted(request))
        leased = self.predicted(request).lease
        self.judge_batch(
            what,
            recorder,
            (*USAGE_LEDGER, "AC-ARMONIA-WORKREQ-001.9/no-budget-created", *COMPLETES_ONCE),
        )
        published = outcomes[-1].ok
        self.settle(request, leased, after, acknowledged=published, unknown=unknown(outcomes))

    def judge_batch(self, what: str, recorder: HistoryRecorder, judged: Cite) -> None:
        """The batch's history, with the reads around it, judged by the linearizability search
        from the model's state: some order of its calls, consistent with when each began and
        ended, must explain every definite answer. The model then takes the state that order
        leaves. The reads after the batch pin what later steps depend on; where unknown outcomes
        still leave several states, the one in which the fewest of them took effect (a
        delegation nobody saw made is not put in the model: `unseen_requests` says it may be
        there), and `settle` takes the rest from the request's read."""
        try:
            verdict = judge_history(recorder.operations(), self.oracle)
        except HistoryTooWide as error:
            raise ScenarioError(f"{what}: the history search gave up: {error}") from error
        if not verdict.ok:
            raise violated(verdict.cites, f"{what}:\n{verdict.explanation()}")
        holds(True, judged, "")
        self.oracle = max(verdict.configurations, key=lambda end: len(end.pending)).model
        self.observed.clear()

    def race_publishes(self, request: str, refs: list[str]) -> None:
        """Publishes of one request made at once with its newest lease, exact retries among
        them: one completion at most, every accepted one answering it, the lease closed once
        (the search judges the batch and the read after it)."""
        lease = self.current_lease(request, "as granted")
        what = f"publish{lease!r} with {refs} at once"
        recorder = HistoryRecorder(self.driver)
        outcomes = self.batch(recorder, [publish_call(lease, ref) for ref in refs])
        after = self.race_read(recorder, request)
        self.scenario.publish_race(request, lease.holder, lease.generation, refs)
        self.tape.say(f"{what} -> {[render_outcome(outcome) for outcome in outcomes]}")
        before = self.predicted(request).lease
        self.judge_batch(what, recorder, COMPLETES_ONCE)
        acknowledged = any(outcome.ok for outcome in outcomes)
        self.settle(request, before, after, acknowledged=acknowledged, unknown=unknown(outcomes))

    def race_lease(self, request: str, result_ref: str, data: Draws) -> HeldLease | None:
        """A claim, then at once: other principals' claims, the holder's heartbeat and its
        publish. The live lease keeps every rival out, the heartbeat renews it or meets the
        completion, the publish completes it: one lease at a time, one completion."""
        holder = self.claimant(request, data)
        rivals = data.draw(
            st.lists(
                st.sampled_from([p for p in PRINCIPALS if p != holder]), min_size=1, max_size=3
            ),
            label="rivals",
        )
        held = self.try_claim(request, holder, racing=True)
        if held is None:
            return None
        fencing = {"request_id": request, "holder": holder, "generation": held.generation}
        calls = [
            *(
                ConcurrentCall(
                    operation="claim", arguments={"request_id": request, "holder": rival}
                )
                for rival in rivals
            ),
            ConcurrentCall(operation="heartbeat", arguments=fencing),
            ConcurrentCall(operation="publish", arguments={**fencing, "result_ref": result_ref}),
        ]
        recorder = HistoryRecorder(self.driver)
        outcomes = self.batch(recorder, calls)
        after = self.race_read(recorder, request)
        what = f"claims by {rivals} at once with {held!r}'s heartbeat and publish {result_ref}"
        self.scenario.lease_race(request, holder, rivals, result_ref)
        self.tape.say(f"{what} -> {[render_outcome(outcome) for outcome in outcomes]}")
        before = self.predicted(request).lease
        self.judge_batch(
            what,
            recorder,
            (*LEASE_FENCE, *COMPLETES_ONCE, "AC-ARMONIA-WORKREQ-001.12/heartbeat-extends"),
        )
        published = outcomes[-1].ok
        self.settle(request, before, after, acknowledged=published, unknown=unknown(outcomes))
        if request not in self.completions and self.newest[request] != held:
            # The heartbeat came first and renewed under a new generation (WR-7 read as
            # heartbeat-regenerates), so the publish was stale: the holder publishes again
            # under it, and the race ends with the request completed whichever came first (the
            # model's figures, and so every later draw, the same in every interleaving).
            self.try_publish(self.newest[request], result_ref)
        return held

    def settle(
        self, request: str, before: Lease, after: WorkRequest, *, acknowledged: bool, unknown: bool
    ) -> None:
        """The machine's own notes of a request follow the model after a batch the search
        explained (`judge_batch`): its newest grant, when it was last renewed, its completion.
        Where an outcome was unknown, what no answer acknowledged is taken as the request reads:
        when it completed (no publish of the batch was answered), where its lease now expires."""
        completion = self.oracle.completion_of(request)
        if completion is not None and request not in self.completions:
            closed = after.lease.closed_at
            if unknown and not acknowledged and closed is not None:
                self.oracle.closed_at(request, closed)
                completion = scenario_value(self.oracle.completion_of(request), "completed")
            self.note_completion(request, completion)
        elif completion is None and unknown and after.lease.expires_at is not None:
            self.oracle.extend(request, after.lease.expires_at)
        lease = self.predicted(request).lease
        if lease.holder is None:
            return
        newest = HeldLease(request, lease.holder, lease.generation)
        if self.newest.get(request) != newest or lease.expires_at != before.expires_at:
            self.newest[request] = newest
            self.renewed_at[request] = self.oracle.now

    def batch(self, recorder: HistoryRecorder, calls: list[ConcurrentCall]) -> list[CallOutcome]:
        """One batch through `run_concurrently`; too many unknown outcomes judge nothing."""
        outcomes = recorder.run_concurrently(calls)
        share = check_definite_share(recorder.operations(), minimum=MINIMUM_DEFINITE_SHARE)
        port_requires(
            share.ok,
            f"a concurrent batch left too many outcomes unknown to judge anything:\n{share}",
        )
        self.observed.clear()
        return outcomes

    def race_read(self, recorder: HistoryRecorder, request_id: str) -> WorkRequest:
        """A read of the request through the recorder, so that the search judges it too."""
        reading = partial(recorder.invoke, "get_request", request_id=request_id)
        view: WorkRequest = self.read(
            f"get_request({request_id})", reading, "AC-ARMONIA-WORKREQ-001.1/creates-request"
        )
        return view

    @precondition(lambda self: self.concurrent)
    @rule(target=REQUESTS, kind=st.sampled_from(DelegationKind), data=st.data())
    @followed_step
    def delegate_at_once(self, kind: DelegationKind, data: Draws) -> object:
        """Delegations of one slice made at once from a root or a child session, a child's
        often with usages of its own slice among them: as many as fit its budget under every
        reading of WR-1 and the count cap under every reading of WR-18 and WR-4, so that every
        order accepts them all. A reservation or a charge read and written back loses one,
        which no order explains."""
        origins = [session for session in self.permissions_of if self.may_delegate_now(session)]
        if not origins:
            return multiple()
        origin = data.draw(st.sampled_from(origins), label="origin")
        room = self.room_at_once(origin)
        fits = min(4, self.oracle.delegations_left(origin), room)
        child = origin in self.request_of
        asked = data.draw(st.integers(1 if child else 2, fits), label="asked")
        shares = asked + 1 if child and room > asked else asked
        budget_slice = data.draw(st.integers(1, room // shares), label="each slice")
        delegation = Delegation(
            kind, origin, "race", (), budget_slice, self.permissions_of[origin], None
        )
        usages = self.usages_beside(origin, room - asked * budget_slice, data)
        if asked + len(usages) < 2:
            return multiple()
        created = self.race_delegations(delegation, asked, usages)
        return multiple(*(view.request_id for view in created))

    def may_delegate_now(self, session: str) -> bool:
        """Whether a delegation of a slice of 1 from the session is accepted under every reading,
        and a second fits beside it or usages of its own slice can race it."""
        refusals = self.oracle.delegation_refusals(
            session,
            deliverable="race",
            budget_slice=1,
            permissions=self.permissions_of[session],
            assignee=None,
        )
        if refusals or self.unseen_requests:
            return False
        least = 1 if session in self.request_of else 2
        return min(self.oracle.delegations_left(session), self.room_at_once(session)) >= least

    def room_at_once(self, session: str) -> int:
        """Budget a session may hand out under every reading of WR-1: what is left of its own
        slice (a root's: its campaign's available budget), and its campaign's available
        budget, where a nested slice may come from instead."""
        campaign = self.predicted_budget(self.campaign_of[session]).available
        return min(self.oracle.remaining_of(session), campaign)

    def usages_beside(self, origin: str, room: int, data: Draws) -> list[int]:
        """A child's usages to make with its delegations, within what the slices leave of its
        own (a root's usage rests on WR-14, so roots make none)."""
        if origin not in self.request_of or room < 1:
            return []
        count = data.draw(st.integers(0, min(4, room)), label="usages beside")
        if count == 0:
            return []
        return [data.draw(st.integers(1, room // count), label="each usage beside")] * count

    def race_delegations(
        self, delegation: Delegation, asked: int, usages: list[int]
    ) -> list[WorkRequest]:
        what = f"{asked} x {delegation!r} at once"
        what += f" with record_usage({delegation.origin}) of {usages}" if usages else ""
        calls = [*usage_calls(delegation.origin, usages), *[delegation_call(delegation)] * asked]
        recorder = HistoryRecorder(self.driver)
        served = self.request_of.get(delegation.origin)
        if served is not None:
            before = self.race_read(recorder, served)
            self.check_view(f"get_request({served}) before {what}", before, self.predicted(served))
        outcomes = self.batch(recorder, calls)
        if served is not None:
            self.race_read(recorder, served)
        self.tape.say(f"{what} -> {[render_outcome(outcome) for outcome in outcomes]}")
        self.unseen_requests |= unknown(outcomes)
        created = [
            WorkRequest.model_validate(outcome.result)
            for outcome in outcomes[len(usages) :]
            if outcome.ok
        ]
        self.scenario.delegation_race(
            delegation.origin,
            delegation.kind,
            delegation.budget_slice,
            delegation.permissions,
            [(view.request_id, view.child_session_id) for view in created],
            asked,
            usages,
        )
        for view in created:
            self.check_created(delegation, view)
        spending = (*USAGE_LEDGER, "AC-ARMONIA-WORKREQ-001.9/no-budget-created") if usages else ()
        self.judge_batch(
            what,
            recorder,
            ("AC-ARMONIA-WORKREQ-001.1/creates-request", KIND_CREATES[delegation.kind], *spending),
        )
        for view in created:
            self.note_request(delegation, view)
            self.check_view(what, view, self.predicted(view.request_id))
        return created
