"""The work-request machine's world and its delegations: the campaigns, environments and
root sessions a program starts from, and delegations of every kind, from root or child
sessions, judged against the oracle."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import cast

from hypothesis import strategies as st
from hypothesis.stateful import initialize, multiple, rule

from conformance.concurrency.process_pool import PeerProcess, ProcessPool
from conformance.driver import DelegationKind, Driver, ErrorCode, WorkRequest
from conformance.oracle.grants import within
from conformance.oracle.refusals import Refusals
from conformance.oracle.work_request_cites import (
    KIND_CREATES,
    NARROWED,
    ZERO_SLICE,
    bad_input_cite,
    refusal_cites,
)
from conformance.oracle.work_requests import WorkRequestOracle
from conformance.properties.following import Draws, taped
from conformance.properties.hostile_data import (
    IDLE_CAMPAIGN_BUDGET,
    assignees,
    grant_masks,
    narrowed,
    permission_sets,
)
from conformance.properties.work_request_judging import JudgingMachine, followed_step
from conformance.properties.work_request_scenario import Outcome
from conformance.properties.work_request_terms import (
    CAMPAIGNS,
    MEMBERS,
    PROCESSES,
    REQUESTS,
    ROOTS,
    T0,
    Delegation,
    attempt,
    render,
    slices,
)
from conformance.spec.clause_check import expect
from conformance.spec.registry import INTERPRETATION_ID


class DelegationRules(JudgingMachine):
    """The setup, and the delegation rule."""

    @initialize(
        target=REQUESTS,
        budget=st.integers(30, 200),
        annex_budget=st.integers(1, 60),
        seeds=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 6)), max_size=6),
        data=st.data(),
        side_budget=st.integers(1, 60),
    )
    @followed_step
    def setup(
        self,
        budget: int,
        annex_budget: int,
        seeds: list[tuple[int, int]],
        data: Draws,
        side_budget: int = 20,
    ) -> object:
        """Two environments, four campaigns, three root sessions, and a few first requests.

        Each first request is delegated from alice's root session (so her count
        cap is in reach), from the child session of a recent first request (so
        lineages start several levels deep), or from another root. Whether the program may
        restart is drawn here too. Everything is drawn before the first delegation, so that
        the step judged again under another reading draws nothing its first run did not. Each
        first request's campaign is checked as soon as it is made: a reading the
        implementation takes (a nested slice out of the campaign, WR-1) must show at the
        delegation that takes it, not at a later one the kit's reading then misjudges.
        """
        self.may_restart = data.draw(st.sampled_from(self.restart_permits), label="may restart")
        if data.draw(st.booleans(), label="served by several processes"):
            self.spread_over(PROCESSES)
        self.build_world(
            {
                "camp": budget,
                "camp-2": side_budget,
                "annex-camp": annex_budget,
                "Camp": IDLE_CAMPAIGN_BUDGET,
            }
        )
        created: list[str] = []
        masks = [data.draw(grant_masks(), label="narrowed to") for _ in seeds]
        for (pick, amount), mask in zip(seeds, masks, strict=True):
            children = [self.child_session_of[r] for r in reversed(created)]
            origins = ["root-alice", *children, "root-bob", "root-carol"]
            origin = origins[pick % len(origins)]
            permissions = narrowed(self.permissions_of[origin], mask)
            request = self.try_delegation(
                Delegation(DelegationKind.SPAWN, origin, "seed", (), amount, permissions, None)
            )
            if request is not None:
                created.append(request)
            self.check_budget(self.campaign_of[origin])
        return multiple(*created)

    def spread_over(self, processes: int) -> None:
        """Serve the program from `processes` processes of the implementation on one store,
        where it runs as several and the adapter can start them (drawn either way, so that a
        seed draws the same program in-process and over the wire): each batch is dealt over
        them, so only the store can decide its races; a restart restarts the first."""
        if self.peers is None:
            return
        pool = ProcessPool(cast(PeerProcess, self.peers), self.peers.launch_peer, processes, T0)
        self._resources.callback(pool.close_peers)
        self.driver = taped(cast(Driver, pool), lambda: self.tape)
        self.scenario.processes(processes)

    def build_world(self, budgets: dict[str, int]) -> None:
        for environment, members in MEMBERS.items():
            self.setup_step(
                f"create_environment({environment})",
                partial(self.driver.create_environment, environment, list(members)),
                self.oracle.create_environment(environment, list(members)),
            )
        for campaign, amount in budgets.items():
            self.setup_step(
                f"create_campaign({campaign}, budget {amount})",
                partial(self.driver.create_campaign, campaign, CAMPAIGNS[campaign], amount),
                self.oracle.create_campaign(campaign, CAMPAIGNS[campaign], amount),
            )
        for session, (campaign, principal, permissions) in ROOTS.items():
            self.setup_step(
                f"create_session({session})",
                partial(self.driver.create_session, session, campaign, principal, permissions),
                self.oracle.create_session(session, campaign, principal, permissions),
            )
            self.permissions_of[session] = permissions
            self.environment_of[session] = CAMPAIGNS[campaign]
            self.campaign_of[session] = campaign
        campaigns = {
            campaign: (CAMPAIGNS[campaign], amount) for campaign, amount in budgets.items()
        }
        roots = {session: root for session, root in ROOTS.items()}
        self.scenario.world(T0, MEMBERS, campaigns, roots)

    def session(self, data: Draws) -> str:
        """Any session so far: a root, or the child session of any request."""
        return data.draw(st.sampled_from(list(self.permissions_of)), label="session")

    @rule(
        target=REQUESTS,
        kind=st.sampled_from(DelegationKind),
        deliverable=st.sampled_from(["summarise logs", "patch parser", "review", "triage", ""]),
        checks=st.lists(st.sampled_from(["tests pass", "cites sources"]), max_size=2, unique=True),
        data=st.data(),
    )
    @followed_step
    def delegate(
        self,
        kind: DelegationKind,
        deliverable: str,
        checks: list[str],
        data: Draws,
    ) -> object:
        """A delegation that bad input, caps, permissions or budget may refuse."""
        origin = self.session(data)
        delegation = Delegation(
            kind,
            origin,
            deliverable,
            tuple(checks),
            data.draw(slices(self.oracle.available_to(origin)), label="slice"),
            data.draw(
                permission_sets(
                    self.permissions_of[origin], self.permissions_of[self.root_of[origin]]
                ),
                label="permissions",
            ),
            data.draw(assignees(self.environment_of[origin]), label="assignee"),
        )
        created = self.try_delegation(delegation)
        return multiple() if created is None else created

    def try_delegation(self, delegation: Delegation) -> str | None:
        """Delegate through the driver and the oracle; the new request id, if any."""
        refusals = self.oracle.delegation_refusals(
            delegation.origin,
            deliverable=delegation.deliverable,
            budget_slice=delegation.budget_slice,
            permissions=delegation.permissions,
            assignee=delegation.assignee,
        )
        before = self.budget_now(delegation.origin) if delegation.origin in ROOTS else None
        answer = attempt(
            partial(
                self.driver.delegate,
                delegation.kind,
                delegation.origin,
                deliverable=delegation.deliverable,
                acceptance_checks=list(delegation.checks),
                budget_slice=delegation.budget_slice,
                permissions=delegation.permissions,
                assignee=delegation.assignee,
            )
        )
        optional = refusals if WorkRequestOracle.may_narrow(refusals) else frozenset()
        created = (
            (answer.request_id, answer.child_session_id)
            if isinstance(answer, WorkRequest)
            else None
        )
        self.scenario.delegation(
            delegation.origin,
            delegation.kind,
            delegation.budget_slice,
            delegation.permissions,
            delegation.assignee,
            delegation.deliverable,
            Outcome(answer, refusals, optional, created),
        )
        stands = self.judge(
            repr(delegation),
            "delegate",
            answer,
            refusals,
            optional=optional,
            accepting=("AC-ARMONIA-WORKREQ-001.1/creates-request", KIND_CREATES[delegation.kind]),
            resting_on=self.readings_deciding(delegation),
        )
        if not isinstance(answer, WorkRequest):
            self.check_no_session_made(delegation, refusals)
            self.oracle.refused(delegation.origin)
            return None
        if not stands:
            self.adopt_overruled_delegation(delegation, answer)
            return answer.request_id
        self.check_created(delegation, answer)
        self.adopt(delegation, answer)
        if before is not None:
            self.check_drawn(repr(delegation), before, "available", -delegation.budget_slice)
        return answer.request_id

    def check_no_session_made(self, delegation: Delegation, refusals: Refusals) -> None:
        """A refused delegation did not happen: its campaign lists no session the machine has
        not seen made (a child made before the checks and left behind breaks this)."""
        campaign = self.campaign_of[delegation.origin]
        listed = self.read(
            f"list_sessions({campaign})", partial(self.driver.list_sessions, campaign), None
        )
        made = sorted(view.session_id for view in listed if view.session_id not in self.campaign_of)
        clauses = [c for c in refusal_cites("delegate", refusals) if not INTERPRETATION_ID.match(c)]
        expect(
            not made,
            ("AC-ARMONIA-WORKREQ-001.1/creates-request", *clauses),
            f"{delegation!r} was refused, yet {campaign} now lists sessions {made}",
        )

    def readings_deciding(self, delegation: Delegation) -> dict[ErrorCode, str]:
        """The refusals of a delegation whose condition here a reading decides (see `judge`)."""
        deciding = self.nested_slice_reading(delegation)
        environment = self.environment_of.get(delegation.origin)
        stranger = delegation.assignee is not None and (
            environment is None or delegation.assignee not in MEMBERS[environment]
        )
        bad = bad_input_cite(
            delegation.budget_slice, ZERO_SLICE, empty=not delegation.deliverable, stranger=stranger
        )
        if bad is not None:
            deciding[ErrorCode.INVALID_INPUT] = bad
        if delegation.origin not in self.permissions_of:
            return deciding
        if self.oracle.slot_readings_differ(delegation.origin):
            deciding[ErrorCode.COUNT_CAP] = "WR-4"
        if self.oracle.count_cap_readings_differ(delegation.origin):
            deciding[ErrorCode.COUNT_CAP] = "WR-18"
        return deciding

    def nested_slice_reading(self, delegation: Delegation) -> dict[ErrorCode, str]:
        """A child's slice that what is left of its own slice and what its campaign has left
        judge differently: whether it is refused for budget rests on WR-1 (nested slices from
        the child's remainder, or from the campaign), whichever the model follows."""
        if delegation.origin in ROOTS:
            return {}
        remainder = self.oracle.remaining_of(delegation.origin)
        campaign = self.predicted_budget(self.campaign_of[delegation.origin]).available
        fits = (delegation.budget_slice <= remainder, delegation.budget_slice <= campaign)
        return {ErrorCode.INSUFFICIENT_BUDGET: "WR-1"} if fits[0] != fits[1] else {}

    def check_created(self, delegation: Delegation, created: WorkRequest) -> None:
        """A new request with a new child session, granting nothing the originator lacks:
        what was asked when that is within the originator's set, else a narrowing."""
        expect(
            created.request_id not in self.request_ids
            and created.child_session_id not in self.permissions_of,
            "AC-ARMONIA-WORKREQ-001.1/creates-request",
            f"{delegation!r} answered an existing request or session: {created!r}",
        )
        origin = self.permissions_of[delegation.origin]
        if within(delegation.permissions, origin):
            expect(
                created.permissions == delegation.permissions,
                "AC-ARMONIA-WORKREQ-001.10/contract-fields",
                f"{delegation!r} was granted {render(created.permissions)}",
            )
            return
        expect(
            within(created.permissions, origin),
            NARROWED,
            f"{delegation!r} was accepted with {render(created.permissions)}, "
            f"beyond the originator's {render(origin)}",
        )

    def adopt(self, delegation: Delegation, created: WorkRequest) -> None:
        """Record the accepted delegation as the implementation shaped it, then compare."""
        predicted = self.record_delegation(delegation, created, self.oracle.delegate)
        self.check_view(repr(delegation), created, predicted)

    def adopt_overruled_delegation(self, delegation: Delegation, created: WorkRequest) -> None:
        """A delegation accepted where the model refuses it (the break noted): recorded as the
        implementation made it, which the reads after the step then judge (see `overrule`)."""
        self.record_delegation(delegation, created, self.oracle.adopt_delegation)

    def record_delegation(
        self, delegation: Delegation, created: WorkRequest, record: Callable[..., WorkRequest]
    ) -> WorkRequest:
        """The delegation in the model (`record`: the oracle's way of taking it) and in the
        machine's own notes, under the identifiers and grants the implementation chose."""
        predicted = record(
            delegation.origin,
            kind=delegation.kind,
            deliverable=delegation.deliverable,
            acceptance_checks=list(delegation.checks),
            budget_slice=delegation.budget_slice,
            permissions=created.permissions,
            assignee=delegation.assignee,
            request_id=created.request_id,
            child_session_id=created.child_session_id,
            generation=created.lease.generation,
        )
        self.note_request(delegation, created)
        return predicted

    def note_request(self, delegation: Delegation, created: WorkRequest) -> None:
        """The machine's own notes of a request the model holds: its lineage, who may claim it."""
        request_id, child = created.request_id, created.child_session_id
        self.restarts_before[request_id] = self.restarts
        self.request_ids.append(request_id)
        self.permissions_of[child] = created.permissions
        self.environment_of[child] = created.environment_id
        self.campaign_of[child] = created.campaign_id
        self.request_of[child] = request_id
        self.child_session_of[request_id] = child
        self.origin_of[request_id] = delegation.origin
        self.root_of[child] = self.root_of[delegation.origin]
        self.unclaimed_generation[request_id] = created.lease.generation
        self.entitled[request_id] = (created.assignee, created.environment_id)
