"""Work-request Then steps on batches made at once, judged by the linearizability search over
the whole recorded history."""

from __future__ import annotations

from pytest_bdd import parsers, then

from conformance.concurrency.history import Operation
from conformance.concurrency.races import RaceVerdict, work_request_checks
from conformance.driver import (
    WorkRequest,
)
from conformance.spec.clause_check import (
    expect,
    scenario_requires,
    scenario_value,
)
from conformance.steps.common import READING
from conformance.steps.concurrency import decided
from conformance.steps.workreq_checks import (
    cite_or_reading,
    request,
)
from conformance.steps.workreq_world import (
    WorkRequestWorld,
)

# --------------------------------------------------------------------------
# Batches made at once, judged by the linearizability search
# --------------------------------------------------------------------------

USAGE_LEDGER = (
    "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
    "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
)
"""The usage ledger: what accepted usages asked drawn from the slice, and never beyond it."""


def race_verdict(world: WorkRequestWorld, evidence: list[str]) -> RaceVerdict:
    """The scenario's whole history, from the world's creation, judged by the search over the
    pure model (`conformance.concurrency.races.work_request_checks`): some order of its calls,
    consistent with when each began and ended, explains every answer and every read. The last
    batch must have left enough definite outcomes to judge anything. Searched once a race: the
    steps after the first read its verdict."""
    racing = scenario_value(world.racing, "no batch was made at once in this scenario")
    scenario_requires(
        not world.recorded.partial,
        "the store changed where no history shows it (a crash): the search cannot judge it",
    )
    if racing.verdict is None:
        racing.verdict = work_request_checks(world.recorded.recorder)
        evidence.extend(racing.verdict.evidence())
    decided(racing.verdict)
    racing.verdict.expect_definite()
    return racing.verdict


def race_about(world: WorkRequestWorld, name: str) -> list[Operation]:
    """The last race's calls, which the scenario says were about `name`."""
    racing = scenario_value(world.racing, "no batch was made at once in this scenario")
    scenario_requires(racing.name == name, f"the last batch was about {racing.name!r}")
    return world.race_calls()


@then(
    parsers.re(
        r'the usages made at once charged "(?P<name>[^"]+)" what the accepted ones asked, and '
        r"never more than its slice"
    )
)
def usages_charged_what_was_accepted(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """Whatever a race did, some order of its calls explains what the reads after it show:
    the slice moved by what the accepted usages asked (refused beyond what was left, or
    charged up to it, as WR-2's readings say), and a usage whose answer is unknown may or may
    not count."""
    race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained(USAGE_LEDGER)


@then(
    parsers.re(
        READING + r'"(?P<name>[^"]+)" was charged exactly what the accepted usages made at once '
        r"asked"
    )
)
def usages_charged_in_full(
    workreq_world: WorkRequestWorld, reading: str | None, name: str, evidence: list[str]
) -> None:
    """The same search, credited to WR-2's reading: the model it explains the race by charges
    each accepted usage in full (the kit's reading, or the one declared)."""
    race_about(workreq_world, name)
    verdict = race_verdict(workreq_world, evidence)
    verdict.expect_explained(cite_or_reading(reading, "WR-2"))


@then(
    parsers.re(
        r'what "(?P<name>[^"]+)" spent and what its completion gave back never add up to more '
        r"than was left of its slice"
    )
)
def spent_or_returned_never_both(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """Under every reading a usage is charged before the completion closes the slice or
    refused after it: charged and given back both, it is budget nobody had."""
    operations = race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained(
        ("AC-ARMONIA-WORKREQ-001.9/no-budget-created", "AC-ARMONIA-WORKREQ-001.6/records-result")
    )
    racing = scenario_value(workreq_world.racing, "no batch was made at once in this scenario")
    request_id = workreq_world.request_id(name)
    room = scenario_value(racing.rooms.get(request_id), f"what {name!r} had left is unknown")
    publishes = [op for op in operations if op.operation == "publish"]
    expect(
        all(op.outcome != "fail" for op in publishes),
        "AC-ARMONIA-WORKREQ-001.6/records-result",
        f"the live holder's publish of {name!r} was refused: {[op.error for op in publishes]}",
    )
    reads = [op for op in operations if op.operation == "get_request" and op.outcome == "ok"]
    before, after = (WorkRequest.model_validate(reads[i].value) for i in (0, -1))
    completion = workreq_world.completions.get(name)
    returned = completion.budget_returned if completion is not None else 0
    charged = after.budget_spent - before.budget_spent
    expect(
        charged + returned <= room,
        "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
        f"{charged} was charged to {name!r} and {returned} given back, of the {room} left: "
        "a usage was both spent and returned",
    )


@then("every usage and delegation made at once was accepted")
def every_call_at_once_accepted(workreq_world: WorkRequestWorld) -> None:
    """The scenario asks only what fits together, whichever order the calls take effect in,
    so every one of them must be accepted."""
    made = [op for op in workreq_world.race_calls() if op.batch is not None]
    refused = [f"{op.operation}: {op.error}" for op in made if op.outcome != "ok"]
    expect(
        not refused,
        (
            "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
            "AC-ARMONIA-WORKREQ-001.1/creates-request",
        ),
        f"calls that fit together were made at once; not accepted: {refused}",
    )


def spent_and_carved(world: WorkRequestWorld, name: str) -> tuple[WorkRequest, int]:
    """The request as it reads now, and the slices of every request its child delegated."""
    current = request(world, name)
    carved = sum(
        made.budget_slice
        for made in world.requests.values()
        if made.originating_session_id == current.child_session_id
    )
    return current, carved


@then(
    parsers.re(
        r'what "(?P<name>[^"]+)" spent and carved out for its own requests is (?P<total>\d+), '
        r"within its slice"
    )
)
def spent_and_carved_exactly(workreq_world: WorkRequestWorld, name: str, total: str) -> None:
    """Each usage charged once and each slice carved once, though made at once: a usage or a
    reservation read and written back while the other landed loses one of them."""
    current, carved = spent_and_carved(workreq_world, name)
    expect(
        current.budget_spent + carved == int(total) <= current.budget_slice,
        (
            "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
            "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
        ),
        f"{name!r} spent {current.budget_spent} and carved {carved} for its own requests, of a "
        f"slice of {current.budget_slice}; expected {total} in all",
    )


@then(
    parsers.re(
        READING + r'what "(?P<name>[^"]+)" spent and carved out for its own requests is at most '
        r"its slice"
    )
)
def spent_and_carved_within(
    workreq_world: WorkRequestWorld, reading: str | None, name: str
) -> None:
    """A lineage's bound, where its nested slices come out of its own (WR-1): what a request
    spent and what it carved for its children never exceed its slice."""
    current, carved = spent_and_carved(workreq_world, name)
    expect(
        current.budget_spent + carved <= current.budget_slice,
        cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.13/usage-within-slice"),
        f"{name!r} spent {current.budget_spent} and carved {carved} for its own requests, "
        f"beyond its slice of {current.budget_slice}",
        observed="other-figures",
    )


@then(
    parsers.re(
        r"some order of the calls made at once explains every answer and what "
        r'"(?P<name>[^"]+)" and its campaign read after them'
    )
)
def calls_at_once_explained(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """The search alone: usages charged and slices carved each once, within what their source
    held when each took effect, whichever reading of WR-1 the implementation follows. A history
    no reading explains breaks the clauses of the call the search stopped at, or, where only a
    reading names that call's refusal, the ledger's: usage within the slice, charged once, and
    no budget created."""
    race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained(
        (
            "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
            "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
            "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
        )
    )


@then(parsers.re(READING + r"at most (?P<most>\d+) of the usages made at once were accepted"))
def at_most_accepted(
    workreq_world: WorkRequestWorld, reading: str | None, most: str, evidence: list[str]
) -> None:
    race_verdict(workreq_world, evidence)
    accepted = sum(
        1
        for op in workreq_world.race_calls()
        if op.batch is not None and op.operation == "record_usage" and op.outcome == "ok"
    )
    evidence.append(f"usages accepted at once: {accepted} (at most {most} fit the slice)")
    expect(
        accepted <= int(most),
        cite_or_reading(reading, "WR-2"),
        f"{accepted} of the usages made at once were accepted; what was left of the slice "
        f"holds at most {most} of them",
        observed="accepted",
    )


@then(
    parsers.re(
        r"at most as many delegations as the count cap allows were made at once from session "
        r'"(?P<name>[^"]+)"'
    )
)
def count_cap_held_at_once(workreq_world: WorkRequestWorld, name: str, evidence: list[str]) -> None:
    """Some order of the batch explains every answer (each refusal the cap's, once it was
    reached), and the cap is the ceiling: a count read before the insert lets them all in."""
    made = [
        op
        for op in race_about(workreq_world, name)
        if op.batch is not None and op.operation == "delegate" and op.outcome == "ok"
    ]
    race_verdict(workreq_world, evidence).expect_explained("AC-ARMONIA-WORKREQ-001.8/count-cap")
    cap = workreq_world.limits().max_children_per_session
    evidence.append(f"delegations made at once: {len(made)} (the count cap is {cap})")
    expect(
        len(made) <= cap,
        "AC-ARMONIA-WORKREQ-001.8/count-cap",
        f"{len(made)} delegations made at once from {name!r} were accepted; the cap is {cap}",
    )


@then(
    parsers.re(
        r'the publishes made at once completed "(?P<name>[^"]+)" at most once, and every one '
        r"accepted answered that completion"
    )
)
def publishes_completed_once(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained(
        ("AC-ARMONIA-WORKREQ-001.6/records-result", "AC-ARMONIA-WORKREQ-001.6/closes-once")
    )


@then(
    parsers.re(
        r'the claims, heartbeat and publish made at once on "(?P<name>[^"]+)" granted no second '
        r"lease and completed it at most once"
    )
)
def lease_race_kept_one_lease(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """No rival got the live lease (every refusal one a lease or a completion explains), and
    the holder's publish completed the request once."""
    race_about(workreq_world, name)
    verdict = race_verdict(workreq_world, evidence)
    verdict.expect_explained(
        (
            "AC-ARMONIA-WORKREQ-001.7/fenced",
            "AC-ARMONIA-WORKREQ-001.7/stale-rejected",
            "AC-ARMONIA-WORKREQ-001.6/records-result",
            "AC-ARMONIA-WORKREQ-001.6/closes-once",
        )
    )
