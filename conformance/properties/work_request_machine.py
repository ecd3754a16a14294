"""The work-request state machine, through the driver port, judged by the spec's text.

The machine is assembled here from one module per idea, each class building on the one
before: what it holds and how it reads the implementation back (`work_request_state`), the
checks after every step (`work_request_invariants`), how an answer is judged and a reading
followed (`work_request_judging`), and the rules: the world and its delegations
(`work_request_delegations`), a request's life after it (`work_request_leases`) and the races
(`work_request_races`); what the rules draw and hand one another is `work_request_terms`. The
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

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from hypothesis import settings
from hypothesis.errors import FlakyStrategyDefinition
from hypothesis.stateful import run_state_machine_as_test

from conformance.applicability import not_applicable
from conformance.driver import Capability
from conformance.oracle.work_request_cites import cited_in
from conformance.properties import (
    MODEL_MODULES,
    RESTARTS_PER_EXAMPLE,
    WORK_REQUEST_MODULE,
    Budget,
    restart_permits,
)
from conformance.properties.catalogue import (
    WORK_REQUEST_SEARCHES,
    examples_of_a_search,
    search_seed,
)
from conformance.properties.gherkin import SCENARIO_NOTE
from conformance.properties.work_request_races import RaceRules
from conformance.spec.clause_check import FollowedDivergence, scenario_requires
from conformance.spec.registry import default_registry

if TYPE_CHECKING:
    from conformance.properties import Drivers


class WorkRequestMachine(RaceRules):
    """The whole machine: its state, invariants, judging and rules, run as one."""


def judging_modules() -> list[ModuleType]:
    """The modules the machine's checks are written in: its own parts (MODEL_MODULES), the
    cites it shares with the history search, and the search's judge of a batch."""
    parts = [
        f"conformance.properties.{name.removesuffix('.py')}"
        for name in MODEL_MODULES[WORK_REQUEST_MODULE]
    ]
    shared = ["conformance.oracle.work_request_cites", "conformance.concurrency.work_request_calls"]
    return [importlib.import_module(name) for name in [*parts, *shared]]


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
    unknown = sorted(cite for cite in cited_in(*judging_modules()) if not registry.is_citable(cite))
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
