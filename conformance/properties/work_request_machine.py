"""The work-request state machine, through the driver port, judged by the spec's text.

This module holds the machine (its rules, its invariants and how it follows a reading); the
model it keeps beside the implementation is `conformance.oracle.work_requests`, the hostile
names it draws from are `conformance.properties.hostile_data`'s, and the test `conformance run`
runs is `test_work_request_machine.py`, which only calls `run_work_request_machine`.

Hypothesis interleaves delegations (spawn or subagent, from root or child
sessions, with narrowing or escalating permissions), claims, heartbeats, clock
moves (some a microsecond either side of a lease's expiry), fresh and stale
publishes, usage, restarts and listings. Every answer is held to the oracle,
and every check names the clause (or registered interpretation) it enforces:

- a refusal must be one the oracle finds applicable; where several apply, any
  of them will do, since the spec ranks none above another;
- where the spec leaves a value to the implementation, the machine accepts
  every value the text allows and adopts it: a claim's generation (newer than
  every earlier one, not necessarily one more), a heartbeat's new expiry (later,
  by however much), a grant narrowed to within the originator's set, the live
  holder's own lease answered to its second claim;
- after every step the store keeps the invariants: budgets conserved and never
  negative, at most one accepted publish per request carrying the generation
  current when it was accepted, every request's grants within its originator's,
  and every request reading as the model predicts. A clause those reads break, a call
  refused that the model accepts, a call accepted that it refuses, or a step that breaks a
  clause under every reading, is noted, the model adopts what the implementation reads, and
  the program goes on; every break noted fails it at its end (see `going_on`, `overrule`,
  `past_unexplained`).

The data are hostile (see `hostile_data`): grant names that contain one another, a principal in
both environments, environment and campaign ids that are prefixes of one another. Where the
implementation evaluates batches concurrently, the machine races too: usages of one slice, with
or without the publish of the same request, usages of sibling requests' slices, publishes of
one request, a claim followed at once by rivals' claims, the holder's heartbeat and its publish,
and delegations of one root or child session, a child's with usages of its own slice.
A batch, with the read after it, is judged by the linearizability search over the model
(`conformance.concurrency.work_request_calls`): some order of its calls must explain every
answer. The model then takes the state that order leaves, so the program goes on.

Where the spec leaves a question open, the model predicts by the reading the implementation
declares (the kit's when it declares none). A step that fails only a check of a reading is
judged again under each alternative the model can predict by (see `following`); when one
explains every answer, the machine records the divergence, follows that reading from then
on, and goes on checking everything else, so one open question read otherwise never hides a
budget leak or a broken fence. The run then ends `diverged`, charged to that reading's
criteria alone.

A failure shrinks to a short program of steps, with each step's answer noted.
To replay a printed blob, put the printed `@reproduce_failure(...)` on
WorkRequestMachine.
"""

from __future__ import annotations

import copy
import functools
import inspect
import pickle
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyStrategyDefinition
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance.applicability import not_applicable
from conformance.concurrency.checker import (
    check_definite_share,
)
from conformance.concurrency.history import HistoryRecorder
from conformance.concurrency.linearizable import HistoryTooWide
from conformance.concurrency.process_pool import PeerProcess, ProcessPool
from conformance.concurrency.races import MINIMUM_DEFINITE_SHARE
from conformance.concurrency.work_request_calls import judge_history
from conformance.driver import (
    BudgetSnapshot,
    CallOutcome,
    Capability,
    Completion,
    ConcurrentCall,
    DelegationKind,
    Driver,
    DriverError,
    ErrorCode,
    LaunchesPeers,
    Lease,
    Permissions,
    RequestState,
    WorkRequest,
)
from conformance.oracle.grants import within
from conformance.oracle.refusals import Refusals
from conformance.oracle.stored_instants import as_stored
from conformance.oracle.work_request_cites import (
    ACCEPT_CITES,
    BUDGET_READINGS,
    COMPLETES_ONCE,
    EXPIRED_STATE,
    EXPIRY_PRECISION,
    KIND_CREATES,
    LEASE_FENCE,
    MOVES_BUDGET,
    NARROWED,
    PAST_COMPLETED_PARENT,
    REMAINDER_RETURNED,
    RESERVED_AT_DELEGATION,
    ROOT_USAGE,
    USAGE_FROM_SLICE,
    USAGE_LEDGER,
    ZERO_SLICE,
    ZERO_USAGE,
    Operation,
    bad_input_cite,
    cited_here,
    refusal_cites,
    wrong_code_cites,
)
from conformance.oracle.work_requests import FOLLOWED, WorkRequestOracle
from conformance.properties import RESTARTS_PER_EXAMPLE, Budget, restart_permits
from conformance.properties.catalogue import (
    WORK_REQUEST_SEARCHES,
    examples_of_a_search,
    search_seed,
)
from conformance.properties.following import (
    Draws,
    OffTheTape,
    Tape,
    TapedData,
    replaying,
    taped,
)
from conformance.properties.gherkin import SCENARIO_NOTE
from conformance.properties.hostile_data import (
    CAMPAIGN_ENVIRONMENTS,
    ENVIRONMENT_MEMBERS,
    IDLE_CAMPAIGN_BUDGET,
    LISTED_ENVIRONMENTS,
    PRINCIPALS,
    ROOT_SESSIONS,
    assignees,
    claimants,
    grant_masks,
    narrowed,
    permission_sets,
)
from conformance.properties.surprises import Surprises
from conformance.properties.work_request_scenario import Outcome, WorkRequestScenario
from conformance.spec.clause_check import (
    Cite,
    ClauseViolation,
    Detail,
    FollowedDivergence,
    PortViolation,
    ScenarioError,
    cites_of,
    expect,
    port_requires,
    port_value,
    scenario_requires,
    scenario_value,
    violated,
)
from conformance.spec.evidence import current_ledger
from conformance.spec.registry import INTERPRETATION_ID, KIT_READING, default_registry

if TYPE_CHECKING:
    from conformance.properties import Drivers

T = TypeVar("T")

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

MAX_FOLLOWED_AT_ONCE = 2
"""How many open questions one step may be found to read otherwise at once."""


def holds(condition: bool, cite: Cite, detail: Detail) -> None:
    """`expect`, for the checks the invariants make of every request after every step: the
    registry is consulted only when one fails (the test checks every cite here up front); a
    check that holds still leaves its mark in the evidence ledger."""
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


# -- strategies -------------------------------------------------------------------


def up_to(most: int) -> st.SearchStrategy[int]:
    """An integer from 1 to `most` (1 when `most` is below it), drawn the same way whatever
    `most` is: a race may leave the model's figures differing between two runs of one example,
    and a draw whose bounds followed them would make Hypothesis call the search flaky."""
    return st.integers(0, 2**20).map(lambda drawn: 1 + drawn % max(most, 1))


def slices(available: int) -> st.SearchStrategy[int]:
    """Any slice up to 20, often one the originator can afford, so that lineages grow deep and
    wide enough to meet the caps and to narrow grants several levels down, and sometimes one
    just beyond what it has left (what its other children were carved counts against it)."""
    affordable = up_to(available)
    beyond = st.integers(1, 8).map(lambda extra: max(available, 0) + extra)
    return st.one_of(st.integers(-3, 20), affordable, affordable, beyond)


forgeries = st.sampled_from(["as granted", "by another principal", "one generation ahead"])
result_refs = st.sampled_from(["s3://results/a", "s3://results/b"])


UNCOPIED: frozenset[str] = frozenset({"driver", "peers", "tape", "_resources", "judging_again"})


def readings_to_try(cites: tuple[str, ...], oracle: WorkRequestOracle) -> Iterator[tuple[str, str]]:
    """Every other reading the model can predict by, of each open question a failed check
    cites: its alternatives first, then the kit's own (for a reading declared otherwise)."""
    for question in cites:
        current = oracle.readings.get(question, KIT_READING)
        names = [*sorted(FOLLOWED.get(question, frozenset())), KIT_READING]
        yield from ((question, name) for name in names if name != current)


def broken_under_every_reading(
    violation: ClauseViolation, breaks: list[ClauseViolation]
) -> ClauseViolation:
    """A step whose answers break a reading's check under the model's reading and clauses under
    every other it can follow, with no alternative left that allows them: the clauses are broken
    whichever reading the implementation follows, so they are what the failure is charged to
    (the readings stay cited beside them, as what the checks rested on)."""
    clauses = [c for b in breaks for c in b.cites if not INTERPRETATION_ID.fullmatch(c)]
    cites = tuple(dict.fromkeys([*clauses, *violation.cites]))
    under = "\n".join(f"- {b.detail}" for b in breaks)
    return violated(
        cites,
        f"{violation.detail}\nJudged again under every other reading the model can follow, "
        f"the answers still break clauses:\n{under}",
    )


def nothing_from(step: Callable[..., T]) -> T:
    """What a step the machine went on past gives Hypothesis: nothing, for a rule that feeds
    no bundle (declared `-> None`), and nothing to add, for one that does."""
    returns_nothing = inspect.signature(step).return_annotation in ("None", None)
    return cast(T, None if returns_nothing else multiple())


def followed_step(step: Callable[..., T]) -> Callable[..., T]:
    """A rule whose answers are judged, with the invariants after it, under the reading the
    model follows, and judged again under another where only a reading's check failed."""

    @functools.wraps(step)
    def judged(machine: WorkRequestMachine, **arguments: Any) -> T:
        return machine.judged(step, arguments)

    return judged


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


class WorkRequestMachine(RuleBasedStateMachine):
    """One implementation and the oracle, driven side by side."""

    drivers: ClassVar[Drivers]
    max_restarts: ClassVar[int | None] = None
    """Restarts one program may ask for (see RESTARTS_PER_EXAMPLE)."""
    restart_permits: ClassVar[tuple[bool, ...]] = (True,)
    """Whether a program may restart at all is drawn from these (see RESTARTING_EXAMPLES)."""
    requests = Bundle("requests")
    leases = Bundle("leases")
    divergences: ClassVar[dict[str, set[str]]] = {}
    """Across the whole search: each open question the implementation was found to read
    otherwise than it declared (or than the kit, undeclared), with the readings it answered by."""
    declared: ClassVar[dict[str, str]] = {}
    seen: ClassVar[list[tuple[ClauseViolation, str]]] = []
    """Across the whole search: the first violation a step raised, with the program that led to
    it. A race may show a violation once and not when Hypothesis runs the example again, which
    then stops drawing where the first run went on: Hypothesis calls the search flaky, and
    this violation, which the kit did see, is the verdict instead."""

    def __init__(self) -> None:
        super().__init__()
        hypothesis_own = set(vars(self))
        self._resources = ExitStack()
        self.tape = Tape()
        live = self._resources.enter_context(self.drivers.fresh())
        description = live.describe()
        limits = port_value(
            description.work_requests,
            "an implementation serving work requests reports its limits",
        )
        live.set_clock(T0)
        self.concurrent = Capability.CONCURRENCY in description.capabilities
        """Whether the races may run (the implementation evaluates batches concurrently)."""
        self.peers = (
            live
            if isinstance(live, LaunchesPeers)
            and Capability.MULTIPROCESS in description.capabilities
            else None
        )
        """Where the implementation runs as several processes on one store and the adapter can
        start them: the first process, whose peers a program may deal its batches over."""
        self.driver = taped(live, lambda: self.tape)
        self.oracle = WorkRequestOracle(limits, T0, type(self).declared)
        self.request_ids: list[str] = []
        self.permissions_of: dict[str, Permissions] = {}
        self.environment_of: dict[str, str] = {}
        self.campaign_of: dict[str, str] = {}
        self.request_of: dict[str, str] = {}
        """The request each child session serves."""
        self.budget_readings = {RESERVED_AT_DELEGATION}
        """The budget readings the run has exercised so far."""
        self.child_session_of: dict[str, str] = {}
        self.origin_of: dict[str, str] = {}
        self.root_of: dict[str, str] = {root: root for root in ROOTS}
        self.unclaimed_generation: dict[str, int] = {}
        self.newest: dict[str, HeldLease] = {}
        self.renewed_at: dict[str, datetime] = {}
        self.completions: dict[str, Completion] = {}
        self.entitled: dict[str, tuple[str | None, str]] = {}
        """Each request's assignee and environment: who may claim it, for drawing claimants."""
        self.restarts = 0
        self.may_restart = False
        self.restarts_before: dict[str, int] = {}
        self.listing_refusal: ErrorCode | None = None
        self.observed: dict[str, BudgetSnapshot] = {}
        """Each campaign's budget as last read, while nothing accepted since can have moved it."""
        self.unseen_requests = False
        """Whether a delegation made at once had an unknown outcome: the implementation may hold
        a request, and reserve its slice, that the machine never saw."""
        self.scenario = WorkRequestScenario()
        """The program so far, as a Gherkin scenario (noted after every step)."""
        self.judging_again = False
        """Whether a step is being judged again under another reading: a new break then fails
        that reading, never noted to go on past (see `going_on`)."""
        self.surprises = Surprises()
        """The clauses the invariants found broken so far, each with its first account: they
        fail together at the program's end (see `going_on`)."""
        self.adopting = False
        """Whether the invariants after this step noted a break, so the model adopts what the
        implementation reads."""
        self.overruled = False
        """Whether this step's call was accepted where the model refuses it (see `overrule`)."""
        self.adopted_budgets: set[str] = set()
        """Campaigns whose figures the model took from the implementation after a break and
        cannot predict exactly yet (a reserve it cannot take from a read): until a read agrees
        with the model again, only what no reading changes is judged of them."""
        self.model_fields = [name for name in vars(self) if name not in UNCOPIED | hypothesis_own]
        """The machine's own state, which a step judged again starts from (Hypothesis' own
        attributes, the driver and the tape are not part of it)."""

    def teardown(self) -> None:
        """The program ended: every break the invariants noted on the way fails it now."""
        breaks, self.surprises = self.surprises.gathered(), Surprises()
        try:
            self._resources.close()
        finally:
            if breaks is not None:
                self.remember(breaks)
                raise breaks

    # -- following a reading --------------------------------------------------------
    def judged(self, step: Callable[..., T], arguments: dict[str, Any]) -> T:
        """Run a step and the invariants; where only a reading's check failed, look for the
        reading the implementation follows (see `follow`)."""
        before = self.model_state()
        self.tape = Tape()
        taped = {
            name: TapedData(value, self.tape) if isinstance(value, Draws) else value
            for name, value in arguments.items()
        }
        try:
            try:
                return self.checked(step, taped)
            except ClauseViolation as violation:
                if not violation.interpretations_only:
                    raise
                noted, written = copy.deepcopy(self.surprises), copy.deepcopy(self.scenario)
                try:
                    return self.follow(step, taped, before, violation, 1)
                except ClauseViolation as unexplained:
                    # No reading explains the step: what its first pass noted and wrote stands
                    # (the search restored the state from before the step, notes and all).
                    self.surprises, self.scenario = noted, written
                    self.scenario.note()  # the tries under other readings noted theirs
                    if unexplained.interpretations_only or self.made_unseen():
                        raise
                    return self.past_unexplained(step, unexplained)
        except ClauseViolation as violation:
            if not self.surprises.first:
                self.remember(violation)
                raise
            self.surprises.note(violation, "the step that stopped the program")
            breaks = cast(ClauseViolation, self.surprises.gathered())
            self.surprises = Surprises()  # raised here, so not again at the teardown
            self.remember(breaks)
            raise breaks from violation

    def past_unexplained(self, step: Callable[..., T], unexplained: ClauseViolation) -> T:
        """A step that breaks a clause under every reading the model can follow: the break is
        noted, the model takes what the implementation now reads (it stands where it stood
        before the step), and the program goes on from there."""
        self.surprises.note(unexplained, "a step no reading explains")
        self.adopt_overruled()
        self.keep_invariants()
        return nothing_from(step)

    def made_unseen(self) -> bool:
        """Whether the implementation holds a session the machine never saw made: a step that
        made one (a delegation accepted where no reading accepts it) left a request no read
        of the known ones shows, so the model cannot go on from it."""
        return any(
            view.session_id not in self.campaign_of
            for campaign in CAMPAIGNS
            if not isinstance(self.oracle.budget(campaign), ErrorCode)
            for view in self.read(
                f"list_sessions({campaign})", partial(self.driver.list_sessions, campaign), None
            )
        )

    def remember(self, violation: ClauseViolation) -> None:
        """Keep the search's first violation, and the program that showed it (see `seen`)."""
        if not type(self).seen:
            type(self).seen.append((violation, self.scenario.text()))

    def checked(self, step: Callable[..., T], arguments: dict[str, Any]) -> T:
        result = step(self, **arguments)
        if self.overruled:
            self.adopt_overruled()
        self.keep_invariants()
        return result

    def adopt_overruled(self) -> None:
        """After a call accepted that the model refused (see `overrule`): the model takes every
        request's lease, spending and completion, and every campaign's figures, as read now."""
        self.overruled = False
        self.observed.clear()
        views = [self.read_request(request_id) for request_id in self.request_ids]
        campaigns = [c for c in CAMPAIGNS if not isinstance(self.oracle.budget(c), ErrorCode)]
        self.adopt_observed(views, [self.read_budget(campaign) for campaign in campaigns])

    def follow(
        self,
        step: Callable[..., T],
        arguments: dict[str, Any],
        before: bytes,
        violation: ClauseViolation,
        depth: int,
    ) -> T:
        """Judge the step again from `before` under each other reading of the questions the
        failed check rests on; adopt the first that explains every answer. None does: the
        check's failure stands, allowed only by the readings the machine could not judge (the
        machine stops at a divergence it cannot follow)."""
        oracle_before = pickle.loads(before)["oracle"]
        readings_before = dict(oracle_before.readings)
        ruled_out = {q: {oracle_before.readings.get(q, KIT_READING)} for q in violation.cites}
        breaks: list[ClauseViolation] = []
        unjudged = False
        for question, name in readings_to_try(violation.cites, oracle_before):
            following = pickle.loads(before)
            following["oracle"].follow(question, name)
            state = pickle.dumps(following)
            try:
                result = self.again(step, arguments, state)
            except OffTheTape:
                unjudged = True
                continue
            except ClauseViolation as again:
                alone = set(again.cites) <= {question}
                if not again.interpretations_only or alone or depth >= MAX_FOLLOWED_AT_ONCE:
                    ruled_out[question].add(name)
                    breaks += [again] if not again.interpretations_only else []
                    unjudged |= again.interpretations_only and not alone
                    continue
                try:
                    result = self.follow(step, arguments, state, again, depth + 1)
                except (ClauseViolation, OffTheTape):
                    unjudged = True
                    continue
            if depth == 1:
                self.note_also_explaining(step, arguments, before, violation, (question, name))
            self.record_divergences(readings_before)
            return result
        self.restore(before)
        narrowed = violation.narrowed(ruled_out)
        if breaks and not unjudged and not narrowed.explained:
            raise broken_under_every_reading(narrowed, breaks)
        self.keep_reading_free_invariants()
        raise narrowed

    def note_also_explaining(
        self,
        step: Callable[..., T],
        arguments: dict[str, Any],
        before: bytes,
        violation: ClauseViolation,
        followed: tuple[str, str],
    ) -> None:
        """Every other single reading, of a question the implementation does not declare, that
        explains the step too is a divergence as well: which of them the implementation follows,
        this step cannot tell (a remainder sent straight to the campaign is WR-15's to-campaign
        and, in some programs, WR-1's from-campaign alike), so the run names each; the model
        goes on by the first."""
        chosen = self.model_state()
        oracle_before = pickle.loads(before)["oracle"]
        for question, name in readings_to_try(violation.cites, oracle_before):
            if (question, name) == followed or question in type(self).declared:
                continue
            following = pickle.loads(before)
            following["oracle"].follow(question, name)
            try:
                self.again(step, arguments, pickle.dumps(following))
            except (ClauseViolation, OffTheTape):
                continue
            self.tape.say(f"(the implementation may read {question} as {name} as well)")
            if name != type(self).declared.get(question, KIT_READING):
                type(self).divergences.setdefault(question, set()).add(name)
        self.restore(chosen)

    def again(self, step: Callable[..., T], arguments: dict[str, Any], state: bytes) -> T:
        self.restore(state)
        judging_again, self.judging_again = self.judging_again, True
        try:
            with replaying(self.tape):
                return self.checked(step, arguments)
        finally:
            self.judging_again = judging_again

    def record_divergences(self, before: dict[str, str]) -> None:
        """Note each reading the model now follows that it did not before the step."""
        for question, name in self.oracle.readings.items():
            if before.get(question) == name:
                continue
            self.tape.say(f"(the implementation reads {question} as {name}; followed from here)")
            if name != type(self).declared.get(question, KIT_READING):
                type(self).divergences.setdefault(question, set()).add(name)

    def model_state(self) -> bytes:
        """The machine's own state, pickled: taken before every step and read back only where
        a step is judged again (pickling is a fraction of a deep copy's cost)."""
        fields = {name: getattr(self, name) for name in self.model_fields}
        return pickle.dumps(fields, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, state: bytes) -> None:
        for name, value in pickle.loads(state).items():
            setattr(self, name, value)

    # -- judging ---------------------------------------------------------------------
    def judge(
        self,
        what: str,
        operation: Operation,
        answer: object,
        refusals: Refusals,
        *,
        optional: Refusals = frozenset(),
        accepting: Cite | None = None,
        resting_on: Mapping[ErrorCode, str] | None = None,
    ) -> bool:
        """Hold one answer to the refusals that apply, noting it for the shortest program;
        whether the model stands (False: the call was overruled, see `overrule`).

        A refusal needs a reason that applies and must carry one of the
        applicable codes (any of them: the spec ranks none). An acceptance needs
        every applicable refusal to be `optional`, one the implementation may
        meet otherwise (a narrowed grant, the holder's own lease). `resting_on` names a
        refusal whose condition here a reading decides: accepted where the model requires it,
        or answered where the model does not, it breaks that reading alone.
        """
        self.tape.say(f"{what} -> {render(answer)}")
        reading = (resting_on or {}).get(answer) if isinstance(answer, ErrorCode) else None
        if reading is not None and answer not in refusals:
            raise violated(
                reading,
                f"{what}: refused {render(answer)}; the refusals that apply are {codes(refusals)}",
            )
        if isinstance(answer, ErrorCode):
            # Refused, the call changed nothing in the model: a wrong refusal is noted and the
            # program goes on, the model and the implementation agreeing that nothing happened
            # (what the implementation did all the same, the reads after the step show).
            self.going_on(
                what,
                partial(
                    expect,
                    bool(refusals),
                    accepting or ACCEPT_CITES[operation],
                    f"{what}: refused {answer.value}, yet nothing forbids it",
                ),
            )
            if refusals:
                self.going_on(
                    what,
                    partial(
                        expect,
                        answer in refusals,
                        wrong_code_cites(operation, refusals),
                        f"{what}: refused {answer.value}; the refusals that apply are "
                        f"{codes(refusals)}",
                    ),
                )
            return True
        if operation in MOVES_BUDGET:
            self.observed.clear()
        required = refusals - optional
        if not required:
            return True
        cites = tuple(
            dict.fromkeys(
                cite
                for code in sorted(required)
                for cite in (
                    ((resting_on or {})[code],)
                    if code in (resting_on or {})
                    else refusal_cites(operation, frozenset({code}))
                )
            )
        )
        violation = violated(
            cites, f"{what}: accepted ({render(answer)}); it must be refused: {codes(required)}"
        )
        if self.stops_at(violation):
            raise violation
        self.overrule(violation, what)
        return False

    def overrule(self, violation: ClauseViolation, during: str) -> None:
        """A call the model refuses was accepted: the break is noted (see `going_on`), the step
        ends there, and before the invariants judge anything after it the model takes what the
        implementation reads of every request and campaign (`adopt_overruled`), so the call's
        effects are judged by the reads that show them, never blamed again on the clauses
        they would break in a model that refused it. A delegation so accepted is recorded as
        made first (`adopt_overruled_delegation`): what it drew from its originator's slice no
        read shows, so the model draws it as an accepted delegation does."""
        self.surprises.note(violation, during)
        self.overruled = True

    def read(self, what: str, operation: Callable[[], T], cite: Cite | None) -> T:
        """A read the machine relies on; refused, it breaks `cite`, or the port when None."""
        try:
            return operation()
        except DriverError as error:
            if cite is None:
                raise PortViolation(f"{what} was refused: {error}") from error
            raise violated(cite, f"{what} was refused: {error}") from error

    def predicted(self, request_id: str) -> WorkRequest:
        """What the model says the request reads now."""
        view = self.oracle.get_request(request_id)
        if isinstance(view, ErrorCode):
            raise ScenarioError(f"the model lost {request_id}")
        return view

    def predicted_budget(self, campaign: str) -> BudgetSnapshot:
        """What the model says the campaign's budget reads now."""
        snapshot = self.oracle.budget(campaign)
        if isinstance(snapshot, ErrorCode):
            raise ScenarioError(f"the model lost {campaign}")
        return snapshot

    def budget_now(self, session: str) -> BudgetSnapshot:
        """The budget of the session's campaign now: as last read, unless an operation
        accepted since can have moved it (the invariants read every budget after each step)."""
        campaign = self.campaign_of[session]
        if campaign not in self.observed:
            budget = partial(self.driver.budget, campaign)
            self.observed[campaign] = self.read(f"budget({campaign})", budget, None)
        return self.observed[campaign]

    def check_drawn(self, what: str, before: BudgetSnapshot, part: str, change: int) -> None:
        """One part of the campaign's budget moved by exactly `change` in one accepted operation:
        a root's slice leaves what is available (001.1), usage adds to what is spent (001.13)."""
        after = self.read(
            f"budget({before.campaign_id})", partial(self.driver.budget, before.campaign_id), None
        )
        self.observed[before.campaign_id] = after
        moved = getattr(after, part) - getattr(before, part)
        cite = {
            "available": "AC-ARMONIA-WORKREQ-001.1/slice-deducted",
            "spent": "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
        }[part]
        expect(moved == change, cite, f"{what} moved {part} by {moved}: {before!r} -> {after!r}")

    def survived(self, request_id: str) -> bool:
        """Whether a restart came between the request's creation and now."""
        return self.restarts > self.restarts_before[request_id]

    def setup_step(self, what: str, call: Callable[[], None], predicted: ErrorCode | None) -> None:
        """A setup call the machine's world needs: valid by the model, so it must succeed."""
        scenario_requires(predicted is None, f"{what}: the machine's own setup is invalid")
        answer = attempt(call)
        self.tape.say(f"{what} -> {render(answer)}")
        port_requires(answer is None, f"{what}: a valid setup call was {render(answer)}")

    # -- setup ------------------------------------------------------------------
    @initialize(
        target=requests,
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

    # -- delegation ----------------------------------------------------------------
    @rule(
        target=requests,
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

    # -- lease ---------------------------------------------------------------------
    @rule(target=leases, request=requests, data=st.data())
    @followed_step
    def claim(self, request: str, data: Draws) -> object:
        held = self.try_claim(request, self.claimant(request, data))
        return multiple() if held is None else held

    @rule(target=leases, request=requests, result_ref=result_refs, data=st.data())
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

    @rule(lease=leases)
    @followed_step
    def heartbeat(self, lease: HeldLease) -> None:
        """Renew with a lease some claim granted, current or long superseded."""
        self.try_heartbeat(lease)

    @rule(request=requests, forgery=forgeries)
    @followed_step
    def heartbeat_current(self, request: str, forgery: str) -> None:
        """Renew with the request's current fencing pair, or a near miss of it."""
        self.try_heartbeat(self.current_lease(request, forgery))

    @rule(lease=leases, result_ref=result_refs)
    @followed_step
    def publish(self, lease: HeldLease, result_ref: str) -> None:
        """Publish with a lease some claim granted, current or long superseded."""
        self.try_publish(lease, result_ref)

    @rule(request=requests, forgery=forgeries, result_ref=result_refs)
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

    def note_completion(self, request: str, completion: Completion) -> None:
        """Remember a completion the model has recorded, and the budget readings it rests on."""
        self.completions[request] = completion
        self.budget_readings.add(REMAINDER_RETURNED)
        served = self.request_of.get(self.origin_of[request])
        if served in self.completions:
            self.budget_readings.add(PAST_COMPLETED_PARENT)

    # -- races: concurrent batches judged by the linearizability search ------------------
    @precondition(lambda self: self.concurrent)
    @rule(target=leases, request=requests, data=st.data())
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
    @rule(target=requests, kind=st.sampled_from(DelegationKind), data=st.data())
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

    # -- budget, clock, restart, listing ------------------------------------------------
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
        delta = data.draw(
            st.one_of(
                st.timedeltas(MICRO, lease / 3),
                st.timedeltas(lease / 3, 2 * lease),
                st.just(timedelta(hours=2)),
            ),
            label="by",
        )
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

    # -- invariants ----------------------------------------------------------------
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


def closed_expiry(view: WorkRequest, expected: WorkRequest) -> datetime | None:
    """The expiry a request shows, where a completed request's closed lease may show none (the
    contract does not say whether a closed lease keeps its last expiry): then the model's."""
    completed = expected.state is RequestState.COMPLETED
    return (
        expected.lease.expires_at
        if completed and view.lease.expires_at is None
        else (view.lease.expires_at)
    )


def run_work_request_machine(
    drivers: Drivers, budget: Budget, seed: int | None, search: int
) -> None:
    """Search number `search` for a program the implementation answers otherwise than the model
    (the test `conformance run` runs, `test_work_request_machine.py`, is this and nothing else):
    its share of the budget's examples, from its own seed (see WORK_REQUEST_SEARCHES)."""
    with drivers.fresh() as driver:
        description = driver.describe()
    if Capability.WORK_REQUESTS not in description.capabilities:
        not_applicable("the implementation does not declare work_requests")
    registry = default_registry()
    unknown = sorted(cite for cite in cited_here() if not registry.is_citable(cite))
    scenario_requires(not unknown, f"the machine cites what the registry lacks: {unknown}")
    WorkRequestMachine.drivers = drivers
    WorkRequestMachine.max_restarts = RESTARTS_PER_EXAMPLE[budget]
    WorkRequestMachine.restart_permits = tuple(restart_permits(budget))
    WorkRequestMachine.declared = dict(description.readings)
    WorkRequestMachine.divergences = {}
    WorkRequestMachine.seen = []
    share = settings(
        max_examples=examples_of_a_search(settings().max_examples, WORK_REQUEST_SEARCHES)
    )
    # What hypothesis.seed() sets on a test; run_state_machine_as_test reads it from the class.
    WorkRequestMachine._hypothesis_internal_use_seed = (
        None if seed is None else search_seed(seed, search)
    )
    try:
        try:
            run_state_machine_as_test(WorkRequestMachine, settings=share)
        except FlakyStrategyDefinition as flaky:
            if not WorkRequestMachine.seen:
                raise
            violation, program = WorkRequestMachine.seen[0]
            violation.__notes__ = [
                SCENARIO_NOTE + program,
                "seen once: when Hypothesis ran the same program again, a concurrent batch went "
                "otherwise and the violation did not show (a race decides it)",
            ]
            raise violation from flaky
    except Exception as failure:
        if WorkRequestMachine.divergences:
            failure.add_note(f"Readings followed before it: {WorkRequestMachine.divergences}")
        raise
    if WorkRequestMachine.divergences:
        raise FollowedDivergence(
            WorkRequestMachine.divergences, WorkRequestMachine.declared, registry
        )
