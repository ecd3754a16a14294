"""What the work-request machine writes is the features' own language, and it replays: a program
using every step the machine can write (the world, delegations made and refused, claims,
heartbeats, publishes and their exact retry, usage, clock moves, a restart, listings, and each
kind of race), pasted into a feature file, runs through the kit's own steps; the reference passes
it, and a mutant fails it at the step its defect breaks, the way a shrunk counterexample would.

tests/properties/test_gherkin_counterexamples.py pastes what a search found and shrank; this
pastes every step kind, without paying for a search."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.driver import DelegationKind, ErrorCode, Permissions
from conformance.properties.gherkin import CRITERION_PLACEHOLDER
from conformance.properties.hostile_data import (
    CAMPAIGN_ENVIRONMENTS,
    ENVIRONMENT_MEMBERS,
    ROOT_SESSIONS,
)
from conformance.properties.work_request_scenario import Outcome, WorkRequestScenario
from tests.properties.test_gherkin_counterexamples import paste, run_pasted, steps_of

pytestmark = pytest.mark.cost(seconds=15)

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
BUDGETS = {"camp": 100, "camp-2": 20, "annex-camp": 20}
ALICE = ROOT_SESSIONS["root-alice"][2]
ACCEPTED = Outcome(None, frozenset())
PAST_THE_LEASE = timedelta(seconds=31)
"""Past the reference's lease of 30 seconds (its default settings)."""


def refused(code: ErrorCode) -> Outcome:
    """An operation the model must see refused with `code`, and the implementation did."""
    return Outcome(code, frozenset({code}))


def made(request: str) -> Outcome:
    """An accepted delegation, the implementation's ids standing in as `<request>` and its
    child `child-<request>` (the scenario names them r1, r2, ... in the order they were made)."""
    return Outcome(None, frozenset(), created=(request, f"child-{request}"))


def new_scenario() -> WorkRequestScenario:
    scenario = WorkRequestScenario()
    campaigns = {name: (CAMPAIGN_ENVIRONMENTS[name], budget) for name, budget in BUDGETS.items()}
    scenario.world(START, ENVIRONMENT_MEMBERS, campaigns, ROOT_SESSIONS)
    return scenario


def tagged(scenario: WorkRequestScenario, criterion: str) -> str:
    return scenario.text().replace(f"@{CRITERION_PLACEHOLDER}", f"@{criterion}")


def race_scenario() -> str:
    """Three spawns of 10 each at once from alice's root."""
    scenario = new_scenario()
    made_at_once = [(f"req-{index}", f"child-{index}") for index in range(3)]
    scenario.delegation_race("root-alice", DelegationKind.SPAWN, 10, ALICE, made_at_once, 3)
    return tagged(scenario, "AC-ARMONIA-WORKREQ-001.9")


def every_step_scenario() -> str:
    """One program with every operation, outcome and race the machine writes."""
    scenario = new_scenario()
    spawn, subagent = DelegationKind.SPAWN, DelegationKind.SUBAGENT
    scenario.delegation("root-alice", spawn, 10, ALICE, None, "report", made("a"))
    scenario.delegation(
        "root-alice",
        spawn,
        1000,
        Permissions(),
        None,
        "too much",
        refused(ErrorCode.INSUFFICIENT_BUDGET),
    )
    wider = Permissions(tools=frozenset({"shell"}), devices=frozenset())
    scenario.delegation(
        "root-bob", spawn, 1, wider, None, "wider", refused(ErrorCode.PERMISSION_ESCALATION)
    )
    scenario.claim("a", "alice", ACCEPTED)
    scenario.heartbeat("a", "alice", 1, ACCEPTED)
    scenario.heartbeat("a", "alice", 2, refused(ErrorCode.STALE_GENERATION))
    scenario.claim("a", "bob", refused(ErrorCode.LEASE_HELD))
    scenario.usage("child-a", 3, ACCEPTED)
    scenario.usage("child-a", 50, refused(ErrorCode.USAGE_EXCEEDS_SLICE))
    scenario.clock(PAST_THE_LEASE)
    scenario.claim("a", "bob", ACCEPTED)
    scenario.publish("a", "alice", 1, "late", refused(ErrorCode.STALE_GENERATION))
    scenario.publish("a", "bob", 2, "done", ACCEPTED)
    scenario.restart()
    scenario.listing("studio", "alice", refused=False)
    scenario.listing("studio", "dave", refused=True)
    scenario.delegation("root-carol", subagent, 5, Permissions(), "dave", "assigned", made("b"))
    scenario.delegation_race(
        "root-alice", spawn, 10, ALICE, [("c", "child-c"), ("d", "child-d")], 2
    )
    scenario.usage_race("child-c", [2, 3, 4])
    scenario.lease_race("c", "carol", ["bob"], "raced")
    scenario.claim("d", "alice", ACCEPTED)
    scenario.publish_race("d", "alice", 1, ["first", "second"])
    # The exact retry comes last: a race's check searches the whole history before it, so a
    # retry that gives back twice would show at the next race's check, not at the closing one.
    scenario.retry("a", "bob", "done")
    return tagged(scenario, "AC-ARMONIA-WORKREQ-001.12")


def pasted(folder: Path, scenario: str, impl: str) -> list[dict[str, Any]]:
    """Each step of `scenario` as it ran against `impl`, pasted into a feature file."""
    paste(folder, scenario)
    return steps_of(run_pasted(folder, impl))


def test_the_race_is_one_step_naming_each_request() -> None:
    assert (
        'When session "root-alice" delegates "r1", "r2" and "r3" at once, each by spawn with a '
        'slice of 10 granting tools "browser, shell" and devices "camera, gpu"'
    ) in race_scenario()


def test_the_race_pasted_runs_through_the_kits_steps_and_the_reference_passes_it(
    tmp_path: Path,
) -> None:
    steps = pasted(tmp_path, race_scenario(), "reference")
    assert any("at once, each by spawn" in step["name"] for step in steps)
    assert {step["result"]["status"] for step in steps} == {"passed"}, steps


def test_every_step_the_machine_writes_runs_and_the_reference_passes_them(
    tmp_path: Path,
) -> None:
    steps = pasted(tmp_path, every_step_scenario(), "reference")
    failed = [step for step in steps if step["result"]["status"] != "passed"]
    assert not failed, failed
    written = [
        line for line in every_step_scenario().splitlines()[2:] if not line.startswith("  #")
    ]
    assert len(steps) == len(written), "every written step ran"


def refusal(codes: str) -> str:
    return f"the attempt is refused with {codes} and nothing changes"


BROKEN_AT = [
    (
        "heartbeat_ignores_generation",
        '"alice" tries to heartbeat "r1" at generation 2',
        refusal('"stale_generation"'),
        "AC-ARMONIA-WORKREQ-001.12",
    ),
    (
        "usage_unbounded",
        'the child session of "r1" tries to record usage of 50',
        refusal('"usage_exceeds_slice"'),
        "WR-2",
    ),
    (
        "non_member_gets_empty_list",
        '"dave" tries to list the requests of "studio"',
        "the listing is refused and nothing changes",
        "AC-ARMONIA-WORKREQ-001.5",
    ),
    (
        "unspent_returned_twice",
        '"bob" publishes "r1" with result "done" again',
        'the budget of "camp" is conserved',
        "AC-ARMONIA-WORKREQ-001.9",
    ),
]
"""A mutant for each kind of check the machine writes (an operation refused with a code, a
usage refused, a listing refused, the closing budget check), with the step that shows its defect,
the check that then fails, and what the failure cites (test_property_counterexamples.py pastes a
delegation refused for want of budget). A race's check is left out: whether a mutant of a race
shows its defect in one race is chance, which the features' race scenarios meet with many rounds."""


@pytest.mark.parametrize(
    ("mutant", "shown_by", "failing", "cited"), BROKEN_AT, ids=[row[0] for row in BROKEN_AT]
)
def test_a_mutant_fails_the_program_at_the_step_its_defect_breaks(
    tmp_path: Path, mutant: str, shown_by: str, failing: str, cited: str
) -> None:
    steps = pasted(tmp_path, every_step_scenario(), f"mutant:{mutant}")
    first_failing = next((step for step in steps if step["result"]["status"] == "failed"), None)
    assert first_failing is not None, f"every step passed against {mutant}"
    assert first_failing["name"] == failing, first_failing
    assert steps[steps.index(first_failing) - 1]["name"] == shown_by
    assert cited in first_failing["result"]["error_message"], first_failing["result"]
