"""Race programs: concurrent batches through the driver port, recorded and judged.

Each program builds its own small world through a HistoryRecorder, runs its
batches with `run_concurrently`, and returns the verdicts on the whole recorded
history: the office's by the checker's rules (the spec lets racing evaluations
over-admit, within a bound), the work requests' by the linearizability search.
The Gherkin race scenarios and the kit's own race tests run the same programs,
so any implementation is judged by the same checks as the reference.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import combinations
from typing import Any

from conformance.concurrency.checker import (
    CheckResult,
    check_allowance,
    check_assignment_generations,
    check_definite_share,
)
from conformance.concurrency.history import HistoryRecorder, Operation
from conformance.concurrency.linearizable import HistoryTooWide
from conformance.concurrency.work_request_calls import judge_history
from conformance.driver import (
    ConcurrentCall,
    DelegationKind,
    OfficeConstants,
    Permissions,
    WorkRequest,
    WorkRequestLimits,
)
from conformance.oracle.work_requests import WorkRequestOracle
from conformance.spec.clause_check import (
    Cite,
    expect,
    port_requires,
    port_value,
    scenario_requires,
)
from conformance.spec.registry import INTERPRETATION_ID, KIT_READING, default_registry

#: Result references the concurrent publishes of one request carry (an exact retry included).
PUBLISHED_RESULTS = ("result-a", "result-a", "result-b", "result-c", "result-d", "result-e")


@dataclass(frozen=True)
class RaceVerdict:
    """The checks a race program ran, in the order they matter for its scenario; for work
    requests, the linearizability search's clauses broken and the kind of answer it blamed."""

    checks: tuple[CheckResult, ...]
    broken: tuple[str, ...] = ()
    observed: str | None = None
    history: tuple[Operation, ...] = ()
    allows: dict[str, set[str]] | None = None
    """Where only readings are `broken`: the alternatives under which the search explained
    the history."""
    undecided: str | None = None
    """Why the search could not judge the history (it grew too wide from a reading the
    implementation may follow): its clauses are then neither broken nor verified."""

    @property
    def ok(self) -> bool:
        return self.undecided is None and all(check.ok for check in self.checks)

    def check(self, name: str) -> CheckResult:
        return next(check for check in self.checks if check.check == name)

    def __str__(self) -> str:
        return "\n".join(str(check) for check in self.checks)

    def evidence(self) -> list[str]:
        """What each check counted, for the scenario's record whether it passes or fails."""
        return [
            f"{check.check}: {check.operations_checked} operations checked, counts "
            f"{dict(check.counts)}"
            for check in self.checks
        ]

    def expect_definite(self) -> None:
        """Too many unknown outcomes judge nothing: the port's fault, never a pass."""
        share = self.check("definite_share")
        port_requires(
            share.ok,
            "the concurrent batches left too many outcomes unknown to judge anything "
            f"(at least {MINIMUM_DEFINITE_SHARE:.0%} of each batch must be definite):\n{share}",
        )

    def expect_explained(self, judged: Cite) -> None:
        """The linearizability search explained the history; where it did not, the clauses it
        blamed are broken (`judged`, what it checks, are credited where it did). A step leaves
        an undecided verdict unjudged before it gets here (`steps.concurrency.decided`)."""
        scenario_requires(self.undecided is None, f"an undecided search judged: {self.undecided}")
        search = self.check("linearizable")
        expect(
            search.ok,
            self.broken or judged,
            lambda: f"the history's calls, in no order, explain every answer:\n{search}",
            observed=self.observed,
            allows=self.allows,
        )


# -- Office -------------------------------------------------------------------

MINIMUM_DEFINITE_SHARE = 0.9
"""The share of a batch's calls that must come back with a definite outcome."""


def office_race_cast(recorder: HistoryRecorder, concurrent: int) -> None:
    """A workspace, an agent allowed to assign, and one assignee per wake of a batch.

    Idempotent within one history: the race steps of one scenario share the cast.
    """
    if any(op.operation == "create_workspace" for op in recorder.operations()):
        return
    allowance = _office(recorder).allowance
    recorder.invoke("create_workspace", workspace_id="race-ws")
    recorder.invoke("create_agent", workspace_id="race-ws", agent_id="lead", can_assign_tasks=True)
    assignees = [f"early-{i}" for i in range(allowance)]
    assignees += [f"racer-{i}" for i in range(concurrent)]
    for agent in assignees:
        recorder.invoke(
            "create_agent", workspace_id="race-ws", agent_id=agent, can_assign_tasks=False
        )


def one_place_rounds(recorder: HistoryRecorder, *, rounds: int, concurrent: int) -> None:
    """Per round, a fresh task gets N - 1 agent wakes, then `concurrent` more at once: a
    correct gate admits between 1 and `concurrent` of them."""
    office_race_cast(recorder, concurrent)
    for _ in range(rounds):
        task = _fresh_task(recorder)
        _sequential_wakes(recorder, task, _office(recorder).allowance - 1)
        _concurrent_wakes(recorder, task, concurrent)
        recorder.advance_clock(timedelta(seconds=1))


def full_window_rounds(recorder: HistoryRecorder, *, rounds: int, concurrent: int) -> None:
    """One task gets N agent wakes, then `rounds` batches of `concurrent` at once within the
    same window: a gate admits none of them, and a missing gate goes past any bound.

    Batches are spaced past the coalescing window, so a wake of one batch is never folded
    into a wake of the one before (that would hide a missing gate); all of them still fall
    inside one rolling window.
    """
    office = _office(recorder)
    spacing = timedelta(seconds=office.coalesce_window_seconds + 1)
    port_requires(
        spacing * rounds < timedelta(seconds=office.window_seconds),
        f"the declared windows leave no room for {rounds} rounds spaced {spacing} in one "
        "allowance window",
    )
    office_race_cast(recorder, concurrent)
    task = _fresh_task(recorder)
    _sequential_wakes(recorder, task, office.allowance)
    for _ in range(rounds):
        recorder.advance_clock(spacing)
        _concurrent_wakes(recorder, task, concurrent)


def office_wake_checks(recorder: HistoryRecorder, *, exact_steps: bool = False) -> RaceVerdict:
    """The allowance, the generations and the share of definite outcomes, over the history."""
    office = _office(recorder)
    history = recorder.operations()
    window = timedelta(seconds=office.window_seconds)
    return RaceVerdict(
        (
            check_allowance(history, allowance=office.allowance, window=window),
            check_assignment_generations(history, exact_steps=exact_steps),
            check_definite_share(history, minimum=MINIMUM_DEFINITE_SHARE),
        )
    )


def office_wake_race(
    recorder: HistoryRecorder, *, rounds: int, concurrent: int, exact_steps: bool = False
) -> RaceVerdict:
    """Rounds with one place left, then as many at a full window: the kit's own race test."""
    one_place_rounds(recorder, rounds=rounds, concurrent=concurrent)
    full_window_rounds(recorder, rounds=rounds, concurrent=concurrent)
    return office_wake_checks(recorder, exact_steps=exact_steps)


def _office(recorder: HistoryRecorder) -> OfficeConstants:
    office = recorder.driver.describe().office
    if office is None:
        raise ValueError("the implementation reports no Office constants")
    return office


def _fresh_task(recorder: HistoryRecorder) -> str:
    task = f"race-task-{sum(op.operation == 'create_task' for op in recorder.operations())}"
    recorder.invoke("create_task", workspace_id="race-ws", task_id=task)
    return task


def _sequential_wakes(recorder: HistoryRecorder, task: str, count: int) -> None:
    for index in range(count):
        recorder.invoke(
            "assign_task", task_id=task, assignee_agent_id=f"early-{index}", acting_agent_id="lead"
        )


def _concurrent_wakes(recorder: HistoryRecorder, task: str, count: int) -> None:
    recorder.run_concurrently(
        [
            ConcurrentCall(
                operation="assign_task",
                arguments={
                    "task_id": task,
                    "assignee_agent_id": f"racer-{index}",
                    "acting_agent_id": "lead",
                },
            )
            for index in range(count)
        ]
    )


# -- Work requests ------------------------------------------------------------


def holders(count: int) -> list[str]:
    return [f"holder-{index}" for index in range(count)]


def work_request_world(
    recorder: HistoryRecorder, *, budget: int, sessions: int, members: int
) -> None:
    """An environment of `members` holders plus an owner, a campaign, and root sessions."""
    recorder.invoke(
        "create_environment", environment_id="race-env", members=["owner", *holders(members)]
    )
    recorder.invoke(
        "create_campaign", campaign_id="race-camp", environment_id="race-env", budget=budget
    )
    for index in range(sessions):
        recorder.invoke(
            "create_session",
            session_id=f"race-root-{index}",
            campaign_id="race-camp",
            principal="owner",
            permissions=Permissions(),
        )


def delegate(recorder: HistoryRecorder, session: str, budget_slice: int = 10) -> WorkRequest:
    request: WorkRequest = recorder.invoke(
        "delegate", **delegation_arguments(session, budget_slice)
    )
    return request


def delegation_arguments(session: str, budget_slice: int) -> dict[str, Any]:
    return {
        "kind": DelegationKind.SPAWN,
        "originating_session_id": session,
        "deliverable": "a report",
        "acceptance_checks": ["it exists"],
        "budget_slice": budget_slice,
        "permissions": Permissions(),
        "assignee": None,
    }


def work_request_checks(recorder: HistoryRecorder) -> RaceVerdict:
    """The whole history, from the world's creation, judged by the linearizability search over
    the pure model (`work_request_calls`): some order of its calls, consistent with when each
    began and ended, must explain every answer and every read. Too many unknown outcomes
    judge nothing: the search is not run (the definite share's check says why)."""
    history = recorder.operations()
    share = check_definite_share(history, minimum=MINIMUM_DEFINITE_SHARE)
    if not share.ok:
        return RaceVerdict((share,), history=tuple(history))
    searched = search_history(recorder)
    return replace(searched, checks=(*searched.checks, share))


def search_history(recorder: HistoryRecorder) -> RaceVerdict:
    """The search alone, whatever share of the calls ended unknown (a harness that killed a
    process itself knows why they did), from the readings the implementation declares; where
    no order explains the history, the other readings it could follow are tried."""
    history = recorder.operations()
    described = recorder.driver.describe()
    limits = port_value(described.work_requests, "work-request limits")
    clock = history[0].clock or datetime.now(UTC)
    declared = dict(described.readings)
    counts = Counter(outcome_key(operation) for operation in history)
    try:
        search = judge_history(history, WorkRequestOracle(limits, clock, declared))
    except HistoryTooWide as error:
        return too_wide(history, counts, f"from the readings declared: {error}")
    tried = (
        Explained({}, gave_up=False)
        if search.ok
        else readings_explaining(history, limits, clock, declared, search.cites)
    )
    explaining = tried.readings
    account = search.explanation() + "".join(
        f"\nexplained where {question} is read as {' or '.join(sorted(names))}"
        for question, names in sorted(explaining.items())
    )
    searched = CheckResult(
        "linearizable",
        () if search.ok else (account,),
        {**counts, "operations": len(history), "tries": search.tries},
    )
    if explaining:
        return RaceVerdict((searched,), tuple(sorted(explaining)), None, tuple(history), explaining)
    if tried.gave_up:
        return too_wide(history, counts, "from a reading the implementation may follow")
    clauses = tuple(cite for cite in search.cites if not INTERPRETATION_ID.fullmatch(cite))
    return RaceVerdict((searched,), clauses, search.observed if clauses else None, tuple(history))


def too_wide(history: list[Operation], counts: Counter[str], where: str) -> RaceVerdict:
    """A history no search could judge: not a pass, and not a break of what it would judge."""
    why = f"the history was too wide to search {where}"
    searched = CheckResult("linearizable", (why,), {**counts, "operations": len(history)})
    return RaceVerdict((searched,), history=tuple(history), undecided=why)


@dataclass(frozen=True)
class Explained:
    """The readings from which the search explains a history (per question, the alternatives),
    and whether a search from some reading grew too wide to say."""

    readings: dict[str, set[str]]
    gave_up: bool


def readings_explaining(
    history: list[Operation],
    limits: WorkRequestLimits,
    clock: datetime,
    declared: dict[str, str],
    cited: tuple[str, ...] = (),
) -> Explained:
    """The readings, other than those declared, from which the search explains the history: one
    question read otherwise (a registered alternative, or the kit's own reading of a question
    declared otherwise), each that does; else the first pair of two questions, one of them
    `cited` where the search stopped. Where one does, the answers break only those questions'
    readings, never a clause. Where none does and no search grew too wide, no reading explains
    the history: what broke is a clause, whichever call the search happened to stop at (it may
    stop at one whose refusal only a reading names)."""
    alternatives = [
        (interpretation.id, alternative.name)
        for interpretation in default_registry().active_interpretations()
        for alternative in interpretation.alternatives
        if alternative.followed
        and interpretation.id.startswith("WR-")
        and declared.get(interpretation.id) != alternative.name
    ]
    alternatives += [
        (question, KIT_READING)
        for question, name in declared.items()
        if name != KIT_READING and question.startswith("WR-")
    ]
    gave_up = False
    explaining: dict[str, set[str]] = {}
    for question, name in alternatives:
        explained = explains(history, limits, clock, {**declared, question: name})
        gave_up |= explained is None
        if explained:
            explaining.setdefault(question, set()).add(name)
    if explaining:
        return Explained(explaining, gave_up)
    for first, second in combinations(alternatives, 2):
        if first[0] == second[0] or not {first[0], second[0]} & set(cited):
            continue
        explained = explains(history, limits, clock, {**declared, **dict((first, second))})
        gave_up |= explained is None
        if explained:
            return Explained({first[0]: {first[1]}, second[0]: {second[1]}}, gave_up)
    return Explained({}, gave_up)


def explains(
    history: list[Operation], limits: WorkRequestLimits, clock: datetime, readings: dict[str, str]
) -> bool | None:
    """Whether the search explains the history from a model following `readings`; None where it
    grew too wide."""
    try:
        return judge_history(history, WorkRequestOracle(limits, clock, readings)).ok
    except HistoryTooWide:
        return None


def outcome_key(operation: Operation) -> str:
    """How a call ended, as the search's counts name it: `claim_ok`, `claim_refused_lease_held`,
    `publish_unknown`."""
    if operation.outcome == "fail":
        return f"{operation.operation}_refused_{operation.error}"
    return f"{operation.operation}_{'ok' if operation.outcome == 'ok' else 'unknown'}"


def claim_race(recorder: HistoryRecorder, *, requests: int, claimants: int) -> RaceVerdict:
    """Every claimant claims the same open request at once, for several requests in turn."""
    work_request_world(recorder, budget=10 * requests, sessions=1, members=claimants)
    for _ in range(requests):
        request = delegate(recorder, "race-root-0")
        recorder.run_concurrently(
            [
                ConcurrentCall(
                    operation="claim",
                    arguments={"request_id": request.request_id, "holder": holder},
                )
                for holder in holders(claimants)
            ]
        )
        recorder.invoke("get_request", request_id=request.request_id)
    return work_request_checks(recorder)


def publish_race(recorder: HistoryRecorder, *, requests: int) -> RaceVerdict:
    """The holder publishes one claimed request several times at once (an exact retry included)."""
    work_request_world(recorder, budget=10 * requests, sessions=1, members=1)
    for _ in range(requests):
        request = delegate(recorder, "race-root-0")
        lease = recorder.invoke("claim", request_id=request.request_id, holder="holder-0")
        recorder.run_concurrently(
            [
                ConcurrentCall(
                    operation="publish",
                    arguments={
                        "request_id": request.request_id,
                        "holder": "holder-0",
                        "generation": lease.generation,
                        "result_ref": result_ref,
                    },
                )
                for result_ref in PUBLISHED_RESULTS
            ]
        )
        recorder.invoke("get_request", request_id=request.request_id)
    recorder.invoke("budget", campaign_id="race-camp")
    return work_request_checks(recorder)


def delegation_race(
    recorder: HistoryRecorder, *, budget: int, delegations: int, budget_slice: int, sessions: int
) -> RaceVerdict:
    """`delegations` slices requested at once from several root sessions of one campaign."""
    work_request_world(recorder, budget=budget, sessions=sessions, members=1)
    recorder.invoke("budget", campaign_id="race-camp")
    recorder.run_concurrently(
        [
            ConcurrentCall(
                operation="delegate",
                arguments={
                    **delegation_arguments(f"race-root-{index % sessions}", budget_slice),
                    "kind": "spawn",
                    "permissions": {"tools": [], "devices": []},
                },
            )
            for index in range(delegations)
        ]
    )
    recorder.invoke("budget", campaign_id="race-camp")
    return work_request_checks(recorder)


def usage_race(
    recorder: HistoryRecorder, *, requests: int, usages: int, amount: int, budget_slice: int
) -> RaceVerdict:
    """Per request: its child records `usages` usages of `amount` at once on a fresh slice,
    between two reads of the request: at most what fits is spent, and what was accepted."""
    work_request_world(recorder, budget=budget_slice * requests, sessions=1, members=1)
    for _ in range(requests):
        request = delegate(recorder, "race-root-0", budget_slice)
        recorder.run_concurrently(
            [
                ConcurrentCall(
                    operation="record_usage",
                    arguments={"session_id": request.child_session_id, "amount": amount},
                )
                for _ in range(usages)
            ]
        )
        recorder.invoke("get_request", request_id=request.request_id)
    recorder.invoke("budget", campaign_id="race-camp")
    return work_request_checks(recorder)
