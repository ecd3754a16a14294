"""What the work-request machine checks after every step: budgets conserved and within
their open slices, every request fenced, within its grants and slice, completed at most once,
and reading as the model predicts; a break is noted and the program goes on from what the
implementation reads (see `going_on`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from conformance.driver import BudgetSnapshot, ErrorCode, RequestState, WorkRequest
from conformance.oracle.grants import within
from conformance.oracle.work_request_cites import (
    BUDGET_READINGS,
    EXPIRED_STATE,
    KIND_CREATES,
    NARROWED,
    PAST_COMPLETED_PARENT,
    REMAINDER_RETURNED,
    RESERVED_AT_DELEGATION,
)
from conformance.properties.work_request_state import MachineState
from conformance.properties.work_request_terms import (
    CAMPAIGNS,
    HeldLease,
    T,
    closing,
    contract_fields,
    holds,
    render,
)
from conformance.spec.clause_check import ClauseViolation
from conformance.spec.evidence import current_ledger
from conformance.spec.registry import INTERPRETATION_ID


def closed_expiry(view: WorkRequest, expected: WorkRequest) -> datetime | None:
    """The expiry a request shows, where a completed request's closed lease may show none (the
    contract does not say whether a closed lease keeps its last expiry): then the model's."""
    completed = expected.state is RequestState.COMPLETED
    return (
        expected.lease.expires_at
        if completed and view.lease.expires_at is None
        else (view.lease.expires_at)
    )


class InvariantChecks(MachineState):
    """The checks after every step, and how the model goes on past a break they find."""

    def keep_invariants(self) -> None:
        """After every step (inside it, so that a step judged again is judged with them). A
        clause one of them breaks is noted and the implementation's state adopted, so that the
        program goes on (see `going_on`); a check of a reading alone still goes to `follow`."""
        self.adopting = False
        snapshots = self.budgets_are_conserved()
        views = self.requests_stay_fenced_and_narrowed()
        self.going_on(
            "the campaigns' reserves", partial(self.reserves_within_open_slices, snapshots, views)
        )
        if self.adopting:
            self.adopt_observed(views, snapshots)

    def going_on(self, during: str, check: Callable[[], T]) -> T | None:
        """Run a check of the state the implementation reads back; a clause it breaks is noted
        (see `Surprises`), to fail with every other at the program's end, and the program goes
        on from the state read back (a call accepted that the model refuses is `overrule`'s, a
        step no reading explains `past_unexplained`'s)."""
        try:
            return check()
        except ClauseViolation as violation:
            if self.stops_at(violation):
                raise
            self.surprises.note(violation, during)
            self.adopting = True
            return None

    def stops_at(self, violation: ClauseViolation) -> bool:
        """Whether a break must be raised rather than noted: a check of readings alone (it goes
        to `follow`), or, while a step is judged again under another reading, a break not
        noted before (it rules that reading out)."""
        return violation.interpretations_only or (
            self.judging_again and not self.noted_already(violation)
        )

    def noted_already(self, violation: ClauseViolation) -> bool:
        """Whether every clause `violation` breaks was noted before this step: a break that
        recurs (a field never stored) rules out no reading the step is judged again under."""
        clauses = [cite for cite in violation.cites if not INTERPRETATION_ID.fullmatch(cite)]
        return all(cite in self.surprises.first for cite in clauses)

    def adopt_observed(self, views: list[WorkRequest], snapshots: list[BudgetSnapshot]) -> None:
        """After a break was noted: the model takes each request's lease, spending and
        completion, and each campaign's figures, as the implementation reads them."""
        for view in views:
            self.oracle.adopt_request(view)
            if view.lease.holder is not None:
                held = HeldLease(view.request_id, view.lease.holder, view.lease.generation)
                self.newest[view.request_id] = held
            completion = self.oracle.completion_of(view.request_id)
            if completion is not None and view.request_id not in self.completions:
                self.note_completion(view.request_id, completion)
        for snapshot in snapshots:
            if snapshot != self.predicted_budget(snapshot.campaign_id):
                self.oracle.adopt_budget(snapshot)
                self.adopted_budgets.add(snapshot.campaign_id)

    def budgets_are_conserved(self) -> list[BudgetSnapshot]:
        """No budget is created: every part is non-negative and together they never exceed the
        total; that they add up to it is the remainder's return (WR-3), and the exact figures
        rest on the budget readings the run has exercised."""
        return [self.check_budget(campaign) for campaign in CAMPAIGNS]

    def check_budget(self, campaign: str) -> BudgetSnapshot:
        snapshot = self.read_budget(campaign)
        created = self.going_on(
            f"budget({campaign})", partial(self.budget_created_nowhere, snapshot)
        )
        expected = self.predicted_budget(campaign)
        if campaign in self.adopted_budgets and snapshot == expected:
            self.adopted_budgets.discard(campaign)  # the model predicts it again: judged again
        if created is None or campaign in self.adopted_budgets:
            return snapshot
        parts = (snapshot.available, snapshot.reserved, snapshot.spent)
        holds(
            sum(parts) == snapshot.total or self.remainders_may_be_lost(),
            (REMAINDER_RETURNED, PAST_COMPLETED_PARENT),
            lambda: f"budget not conserved: {snapshot!r}, the campaign had {expected!r}",
        )
        holds(
            snapshot == expected,
            tuple(reading for reading in BUDGET_READINGS if reading in self.budget_readings),
            lambda: f"budget {snapshot!r}, the oracle predicts {expected!r}",
        )
        self.observed[campaign] = snapshot
        return snapshot

    def remainders_may_be_lost(self) -> bool:
        """Whether a reading the model follows lets a returned remainder go to nobody, so that
        a campaign's parts add up to less than its total: WR-3's forfeit, or WR-15's loss of a
        remainder whose parent request has completed (the model predicts the figures either
        way; conservation is what these readings give up)."""
        lost_past_completed = self.oracle.reads(PAST_COMPLETED_PARENT, "lost-past-completed")
        every_slice_from_campaign = self.oracle.reads(RESERVED_AT_DELEGATION, "from-campaign")
        return self.oracle.reads(REMAINDER_RETURNED, "forfeit") or (
            lost_past_completed and not every_slice_from_campaign
        )

    def reserves_within_open_slices(
        self, snapshots: list[BudgetSnapshot], views: list[WorkRequest]
    ) -> None:
        """What no reading changes: a campaign reserves no more than its open requests' slices
        hold unspent, or a remainder went to a request whose slice it never came out of, and
        that request's child can spend beyond its slice. Set aside where a reading may lose a
        remainder (it may sit anywhere) or a delegation's outcome was never known."""
        if self.remainders_may_be_lost() or self.unseen_requests:
            return
        for snapshot in snapshots:
            self.check_reserve_against_open_slices(snapshot, views)

    @staticmethod
    def check_reserve_against_open_slices(
        snapshot: BudgetSnapshot, views: list[WorkRequest]
    ) -> None:
        unspent = sum(
            view.budget_slice - view.budget_spent
            for view in views
            if view.campaign_id == snapshot.campaign_id and view.state is not RequestState.COMPLETED
        )
        holds(
            snapshot.reserved <= unspent,
            "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
            lambda: (
                f"{snapshot.campaign_id} reserves {snapshot.reserved}, more than its open "
                f"requests' slices hold unspent ({unspent}): a child can spend beyond its slice"
            ),
        )

    def lineages_within_slices(self, views: list[WorkRequest]) -> None:
        """As WR-1 reads it (a nested slice comes out of its originator's own), what a request
        spent and what its child's requests hold of its slice never exceed it: an
        over-committed child hides its negative remainder inside the campaign's reserve, where
        conservation cannot see it. Read as from-campaign, nested slices are the campaign's and
        only spending is bounded (`request_within_its_grants_and_slice`). Checked where a step
        diverged in a way no alternative explains: after any other step every request already
        reads as the model, which keeps this bound, predicts."""
        if self.oracle.reads(RESERVED_AT_DELEGATION, "from-campaign") or self.unseen_requests:
            return
        self.check_lineages(views)

    @staticmethod
    def check_lineages(views: list[WorkRequest]) -> None:
        """An open child's request holds its whole slice; a completed one, what it spent and
        what its own children hold, the rest having gone back (or, under a reading that loses
        or forfeits it, nowhere: the bound is then looser, never wrong)."""
        children: dict[str, list[WorkRequest]] = {}
        for view in views:
            children.setdefault(view.originating_session_id, []).append(view)

        def held(view: WorkRequest) -> int:
            if view.state is not RequestState.COMPLETED:
                return view.budget_slice
            return view.budget_spent + sum(map(held, children.get(view.child_session_id, [])))

        for view in views:
            spent, sliced = view.budget_spent, view.budget_slice
            given = sum(map(held, children.get(view.child_session_id, [])))
            holds(
                spent + given <= sliced,
                RESERVED_AT_DELEGATION,
                f"{view.request_id} spent {spent} and its child's requests hold {given} of its "
                f"slice of {sliced}",
            )

    def budget_created_nowhere(self, snapshot: BudgetSnapshot) -> BudgetSnapshot:
        """What no reading of any open question changes: the campaign's total stands, no part
        is negative, and together they never exceed the total."""
        parts = (snapshot.available, snapshot.reserved, snapshot.spent)
        total = self.predicted_budget(snapshot.campaign_id).total
        holds(
            min(parts) >= 0,
            "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
            lambda: f"a negative budget part: {snapshot!r}",
        )
        holds(
            snapshot.total == total and sum(parts) <= snapshot.total,
            "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
            lambda: f"budget created: {snapshot!r}, the campaign's total is {total}",
        )
        return snapshot

    def read_budget(self, campaign: str) -> BudgetSnapshot:
        return self.read(f"budget({campaign})", partial(self.driver.budget, campaign), None)

    def keep_reading_free_invariants(self) -> None:
        """The invariants that hold under every reading, checked where a step diverged in a way
        no alternative explains: a divergence cannot hide a broken clause that needs no model."""
        views = [self.request_within_its_grants_and_slice(r) for r in self.request_ids]
        snapshots = [
            self.budget_created_nowhere(self.read_budget(campaign))
            for campaign in CAMPAIGNS
            if not isinstance(self.oracle.budget(campaign), ErrorCode)
        ]
        self.reserves_within_open_slices(snapshots, views)
        self.lineages_within_slices(views)

    def requests_stay_fenced_and_narrowed(self) -> list[WorkRequest]:
        """Every request still reads, within its originator's grants, completed at most once,
        and as the model predicts: each check going on past a break (see `going_on`)."""
        views = [
            self.going_on(f"get_request({r})", partial(self.read_request, r))
            for r in self.request_ids
        ]
        read = [view for view in views if view is not None]
        for view in read:
            what = f"get_request({view.request_id})"
            self.going_on(what, partial(self.check_grants_and_slice, view))
            self.going_on(what, partial(self.check_single_completion, view))
            self.check_view(what, view, self.predicted(view.request_id))
        return read

    def request_within_its_grants_and_slice(self, request_id: str) -> WorkRequest:
        view = self.read_request(request_id)
        self.check_grants_and_slice(view)
        return view

    def read_request(self, request_id: str) -> WorkRequest:
        return self.read(
            f"get_request({request_id})",
            partial(self.driver.get_request, request_id),
            (
                "AC-ARMONIA-WORKREQ-001.1/creates-request",
                "AC-ARMONIA-WORKREQ-001.3/request-survives",
            )
            if self.survived(request_id)
            else "AC-ARMONIA-WORKREQ-001.1/creates-request",
        )

    def check_grants_and_slice(self, view: WorkRequest) -> None:
        request_id = view.request_id
        origin = self.permissions_of[self.origin_of[request_id]]
        holds(
            within(view.permissions, origin),
            NARROWED,
            lambda: (
                f"{request_id} holds {render(view.permissions)}, its originator {render(origin)}"
            ),
        )
        holds(
            view.budget_spent <= view.budget_slice,
            "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
            lambda: f"{request_id} spent {view.budget_spent} of a slice of {view.budget_slice}",
        )

    def check_single_completion(self, view: WorkRequest) -> None:
        """Completed exactly when one publish was accepted, recording that publish."""
        accepted = self.completions.get(view.request_id)
        completed = view.state is RequestState.COMPLETED
        holds(
            completed == (accepted is not None),
            ("AC-ARMONIA-WORKREQ-001.6/records-result", "AC-ARMONIA-WORKREQ-001.6/closes-once"),
            lambda: f"{view.request_id} reads {view.state.value}, its publish: {accepted!r}",
        )
        if accepted is None:
            return
        recorded = (view.result_ref, view.lease.generation, view.lease.closed_at)
        holds(
            recorded == (accepted.result_ref, accepted.generation, accepted.completed_at),
            ("AC-ARMONIA-WORKREQ-001.6/records-result", "AC-ARMONIA-WORKREQ-001.6/closes-once"),
            lambda: f"{view.request_id} records {recorded}, its one publish was {accepted!r}",
        )

    def state_cites(self, request_id: str) -> tuple[str, ...]:
        """Why a request reads the state the model predicts: the contract's states, except the
        one a request whose lease lapsed reads, which is WR-20's reading (that it is claimable
        again is what the claims judge)."""
        return (
            (EXPIRED_STATE,)
            if self.oracle.lapsed(request_id)
            else ("AC-ARMONIA-WORKREQ-001.10/contract-fields",)
        )

    def check_view(self, what: str, view: WorkRequest, expected: WorkRequest) -> None:
        """Hold a reported request to the model, each part to the clause that fixes it.

        Most reads equal the model outright; only one that differs is taken apart
        (the invariants run this for every request after every step).
        """
        survived = (
            ("AC-ARMONIA-WORKREQ-001.3/lease-survives",) if self.survived(view.request_id) else ()
        )
        request_cites = (
            (
                "AC-ARMONIA-WORKREQ-001.10/contract-fields",
                "AC-ARMONIA-WORKREQ-001.3/request-survives",
            )
            if survived
            else ("AC-ARMONIA-WORKREQ-001.10/contract-fields",)
        )
        lease_cites = ("AC-ARMONIA-WORKREQ-001.10/contract-fields", *survived)
        if view == expected:  # the whole read held: each part's clauses are its evidence
            ledger = current_ledger()
            if ledger is not None:
                ledger.held(
                    (
                        *request_cites,
                        KIND_CREATES[expected.kind],
                        "AC-ARMONIA-WORKREQ-001.6/records-result",
                        "AC-ARMONIA-WORKREQ-001.6/closes-once",
                        "AC-ARMONIA-WORKREQ-001.7/fenced",
                        *survived,
                        *self.state_cites(view.request_id),
                        "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
                    )
                )
            return
        parts: list[tuple[str, object, object, tuple[str, ...]]] = [
            ("fields", contract_fields(view), contract_fields(expected), request_cites),
            ("kind", view.kind, expected.kind, (KIND_CREATES[expected.kind], *request_cites)),
            (
                "completion",
                closing(view),
                closing(expected),
                ("AC-ARMONIA-WORKREQ-001.6/records-result", "AC-ARMONIA-WORKREQ-001.6/closes-once"),
            ),
            (
                "lease generation",
                view.lease.generation,
                expected.lease.generation,
                ("AC-ARMONIA-WORKREQ-001.7/fenced", *survived),
            ),
            (
                "lease holder and expiry",
                (view.lease.holder, closed_expiry(view, expected)),
                (expected.lease.holder, expected.lease.expires_at),
                lease_cites,
            ),
            ("state", view.state, expected.state, self.state_cites(view.request_id)),
            (
                "budget spent",
                view.budget_spent,
                expected.budget_spent,
                ("AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",),
            ),
        ]
        for part, observed, predicted, cites in parts:
            self.going_on(
                what,
                partial(
                    holds,
                    observed == predicted,
                    cites,
                    f"{what}: {view.request_id}'s {part} read {observed!r}, "
                    f"the model predicts {predicted!r}"
                    if observed != predicted
                    else "",
                ),
            )
