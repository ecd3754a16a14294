"""What the work-request machine holds beside the implementation, and how it reads the
implementation back: the state every other part of the machine builds on."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from hypothesis.stateful import RuleBasedStateMachine

from conformance.driver import (
    BudgetSnapshot,
    Capability,
    Completion,
    DriverError,
    ErrorCode,
    LaunchesPeers,
    Permissions,
    WorkRequest,
)
from conformance.oracle.work_request_cites import (
    PAST_COMPLETED_PARENT,
    REMAINDER_RETURNED,
    RESERVED_AT_DELEGATION,
)
from conformance.oracle.work_requests import WorkRequestOracle
from conformance.properties.following import Tape, taped
from conformance.properties.surprises import Surprises
from conformance.properties.work_request_scenario import WorkRequestScenario
from conformance.properties.work_request_terms import ROOTS, T0, HeldLease, T
from conformance.spec.clause_check import (
    Cite,
    ClauseViolation,
    PortViolation,
    ScenarioError,
    port_value,
    violated,
)

if TYPE_CHECKING:
    from conformance.properties import Drivers


UNCOPIED: frozenset[str] = frozenset({"driver", "peers", "tape", "_resources", "judging_again"})
"""What a step judged again does not start over from: the driver, the peers, the tape."""


class MachineState(RuleBasedStateMachine):
    """One implementation and the oracle, driven side by side."""

    drivers: ClassVar[Drivers]
    max_restarts: ClassVar[int | None] = None
    """Restarts one program may ask for (see RESTARTS_PER_EXAMPLE)."""
    restart_permits: ClassVar[tuple[bool, ...]] = (True,)
    """Whether a program may restart at all is drawn from these (see RESTARTING_EXAMPLES)."""
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

    def survived(self, request_id: str) -> bool:
        """Whether a restart came between the request's creation and now."""
        return self.restarts > self.restarts_before[request_id]

    def note_completion(self, request: str, completion: Completion) -> None:
        """Remember a completion the model has recorded, and the budget readings it rests on."""
        self.completions[request] = completion
        self.budget_readings.add(REMAINDER_RETURNED)
        served = self.request_of.get(self.origin_of[request])
        if served in self.completions:
            self.budget_readings.add(PAST_COMPLETED_PARENT)
