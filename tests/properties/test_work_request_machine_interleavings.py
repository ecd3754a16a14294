"""Every legal interleaving of a race leaves the work-request machine's model as any other does.

Hypothesis runs an example more than once (to shrink it, to replay a failure) and demands the
same draws each time. The draws after a race follow the model's figures (what a session may
still hand out, which requests exist, which leases are live), so those figures must not depend
on the order in which the implementation happened to serve the race's calls; if they did, a
search on the reference could end `errored` with FlakyStrategyDefinition.

Here the reference serves each batch one call after another, once in the order given and once
in the reverse order: two legal interleavings, which must leave the same figures behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from conformance import variants
from conformance.concurrency.history import CallOutcome
from conformance.driver import ConcurrentCall, DelegationKind, Permissions
from conformance.properties.hostile_data import ROOT_SESSIONS
from conformance.properties.work_request_machine import WorkRequestMachine
from conformance.properties.work_request_terms import Delegation
from conformance.variants.variant import Variant
from tests.scripted_machine import REFERENCE, Machines, Scripted

Order = Callable[[int], list[int]]


def forward(count: int) -> list[int]:
    return list(range(count))


def backward(count: int) -> list[int]:
    return list(reversed(range(count)))


class OneAfterAnother:
    """A driver that serves a batch one call at a time, in `order`: one interleaving of it."""

    def __init__(self, driver: Any, order: Order) -> None:
        self._driver = driver
        self._order = order

    def run_concurrently(self, calls: list[ConcurrentCall]) -> list[CallOutcome]:
        """Each call a batch of one, its times moved onto one time line for the whole batch,
        each after the one before, so that the checker sees the order they were made in."""
        outcomes: dict[int, CallOutcome] = {}
        origin = time.monotonic_ns()
        for position in self._order(len(calls)):
            started = time.monotonic_ns() - origin
            (alone,) = self._driver.run_concurrently([calls[position]])
            shift = started - alone.invoked_at_ns
            outcomes[position] = alone.model_copy(
                update={
                    "invoked_at_ns": started,
                    "completed_at_ns": max(alone.completed_at_ns + shift, started),
                }
            )
        return [outcomes[position] for position in range(len(calls))]

    def __getattr__(self, operation: str) -> Any:
        return getattr(self._driver, operation)


def figures_draws_follow(machine: WorkRequestMachine) -> dict[str, object]:
    """Everything a later draw's bounds or a rule's choice rest on, each request and session
    named by its place (the reference's ids are random: the same program gets others). A
    lease's generation is a value some checks compare, never a bound a draw takes."""
    sessions = list(machine.permissions_of)
    requests = list(machine.request_ids)
    return {
        "sessions": len(sessions),
        "requests": len(requests),
        "permissions": [machine.permissions_of[s] for s in sessions],
        "available": [machine.oracle.available_to(s) for s in sessions],
        "remaining": [machine.oracle.remaining_of(s) for s in sessions],
        "live expiries": machine.oracle.live_expiries(),
        "completed": sorted(requests.index(r) for r in machine.completions),
        "holders": {requests.index(r): lease.holder for r, lease in machine.newest.items()},
    }


Opening = Callable[[Variant, dict[str, str], Order], AbstractContextManager[WorkRequestMachine]]


@pytest.fixture
def machine_in(tmp_path: Path) -> Opening:
    """Opens a machine on an alteration of the reference, with one slice of 10 delegated from
    each root, its batches served in the order given; it is torn down before the next one
    opens, since an alteration's patches replace module attributes for as long as it is open."""

    @contextmanager
    def opening(
        alteration: Variant, declared: dict[str, str], order: Order
    ) -> Iterator[WorkRequestMachine]:
        machines = Machines(tmp_path / order.__name__)
        try:
            machine = machines.open(
                alteration, declared, budget=100, annex_budget=100, side_budget=100
            )
            machine.driver = OneAfterAnother(machine.driver, order)  # type: ignore[assignment]
            for root in ROOT_SESSIONS:
                made = Delegation(DelegationKind.SPAWN, root, "seed", (), 10, Permissions(), None)
                assert machine.try_delegation(made) is not None
            yield machine
        finally:
            machines.close()

    return opening


def race_usages(machine: WorkRequestMachine) -> None:
    """Usages of 4, three at once, on a slice of 10: two fit, whichever they are."""
    machine.race_usage(machine.request_ids[0], Scripted([4, 3]))


def race_publishes(machine: WorkRequestMachine) -> None:
    """A claim, then two different results published at once: either may win."""
    request = machine.request_ids[1]
    assert machine.try_claim(request, "bob") is not None
    machine.race_publishes(request, ["s3://results/a", "s3://results/b"])


def race_the_lease(machine: WorkRequestMachine) -> None:
    """A claim, then at once two rivals' claims, the holder's heartbeat and its publish."""
    request = machine.request_ids[2]
    assert machine.race_lease(request, "s3://results/a", Scripted(["carol", ["dave", "al"]]))


def race_siblings(machine: WorkRequestMachine) -> None:
    """Three usages of 4 by each of two sibling requests' children at once, on slices of 10:
    two of each fit, whichever they are."""
    made = Delegation(DelegationKind.SPAWN, "root-alice", "seed", (), 10, Permissions(), None)
    sibling = machine.try_delegation(made)
    assert sibling is not None
    machine.race_sibling_usages(machine.request_ids[0], Scripted([sibling, 4, 3]))


def race_nested(machine: WorkRequestMachine) -> None:
    """A child's two nested slices of 2 and two usages of 3 at once, on a slice of 10: all fit."""
    child = machine.child_session_of[machine.request_ids[0]]
    nested = Delegation(
        DelegationKind.SUBAGENT, child, "race", (), 2, machine.permissions_of[child], None
    )
    assert len(machine.race_delegations(nested, 2, [3, 3])) == 2


def figures_after(
    machine_in: Opening,
    race: Callable[[WorkRequestMachine], None],
    alteration: Variant = REFERENCE,
    declared: dict[str, str] | None = None,
) -> list[dict[str, object]]:
    """The figures the race leaves, served forward and served backward."""
    after = []
    for order in (forward, backward):
        with machine_in(alteration, declared or {}, order) as machine:
            race(machine)
            machine.keep_invariants()
            after.append(figures_draws_follow(machine))
    return after


@pytest.mark.parametrize(
    "race", [race_usages, race_siblings, race_nested, race_publishes, race_the_lease]
)
def test_a_race_leaves_the_same_figures_in_every_interleaving(
    machine_in: Opening, race: Callable[[WorkRequestMachine], None]
) -> None:
    served_forward, served_backward = figures_after(machine_in, race)
    assert served_forward == served_backward


def test_a_heartbeat_that_regenerates_before_the_publish_is_followed_by_a_publish_again(
    machine_in: Opening,
) -> None:
    """Read as heartbeat-regenerates (WR-7), a heartbeat served before the publish makes the
    publish stale: the holder publishes again under the new generation, so the request ends
    completed as it does when the publish came first."""
    regenerating = variants.VARIANTS["heartbeat_bumps_generation"]
    served_forward, served_backward = figures_after(
        machine_in, race_the_lease, regenerating, {"WR-7": "heartbeat-regenerates"}
    )
    assert served_forward == served_backward
    assert served_forward["completed"] == [2]
    left = [
        p.describe()
        for p in regenerating.patches()
        if getattr(p.target, p.attribute) is p.replacement
    ]
    assert not left, f"the variant's patches outlived its machines: {left}"
