"""The assignee mutation and the producers: what commits, what is recorded, what wakes."""

from __future__ import annotations

import json

import pytest
from sqlalchemy.exc import OperationalError

from conformance.reference.clock import ManualClock
from conformance.reference.errors import Forbidden, InvalidInput, NotFound
from conformance.reference.office import run_queue
from conformance.reference.office.assignment import PublishedEvent, SessionInterrupt
from conformance.reference.office.constants import ASSIGNMENT_ALLOWANCE, COALESCE_WINDOW
from conformance.reference.office.producers import Producer
from conformance.reference.office.service import OfficeService
from conformance.reference.office.wake import EnqueueResult, Outcome

TASK_UPDATED = PublishedEvent("task.updated", "t", ("assignee_agent_id",))


def states(office: OfficeService) -> list[tuple[str, str]]:
    return [(row.agent_id, row.state) for row in office.office_sessions()]


def agent_payload() -> str:
    return json.dumps({"task_id": "t", "actor_type": "agent", "actor_id": "a"})


def test_an_agent_assignment_wakes_the_assignee_with_the_actor_on_the_payload(
    office: OfficeService,
) -> None:
    result = office.assign_task("t", "b", "a")
    assert (result.generation, result.wake) == (1, EnqueueResult(Outcome.QUEUED, "1"))
    [run] = office.list_runs()
    assert (run.agent_id, run.reason, run.dedup_key) == (
        "b",
        "task_assigned",
        "task_assigned:t:b:1",
    )
    assert json.loads(run.payload) == {
        "task_id": "t",
        "workspace_id": "w",
        "actor_type": "agent",
        "actor_id": "a",
    }
    assert office.effects.events == [TASK_UPDATED]


def test_a_user_assignment_is_labelled_user(office: OfficeService) -> None:
    office.assign_task("t", "b", "")
    [run] = office.list_runs()
    assert json.loads(run.payload)["actor_type"] == "user"
    assert json.loads(run.payload)["actor_id"] == ""


def test_a_refused_wake_leaves_the_mutation_and_its_effects_in_place(
    office: OfficeService, clock: ManualClock
) -> None:
    office.open_office_session("b", "t")
    for index in range(ASSIGNMENT_ALLOWANCE):
        office.assign_task("t", "a" if index % 2 else "b", "a")
        clock.advance(COALESCE_WINDOW * 2)
    assert office.get_task("t").assignee_agent_id == "b"
    result = office.assign_task("t", "a", "a")
    assert result.wake == EnqueueResult(Outcome.RATE_LIMITED, None)
    task = office.get_task("t")
    assert (task.assignee_agent_id, task.assignment_generation) == ("a", ASSIGNMENT_ALLOWANCE + 1)
    assert office.effects.events[-1] == TASK_UPDATED
    assert office.effects.interrupts[-1] == SessionInterrupt("b", "t")
    assert states(office) == [("b", "completed")]


def test_a_failed_wake_leaves_the_mutation_committed(
    office: OfficeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> None:
        raise OperationalError("SELECT", {}, Exception("the database went away"))

    monkeypatch.setattr(run_queue, "coalesce", broken)
    assert office.assign_task("t", "b", "a").wake == EnqueueResult(Outcome.NONE, None)
    assert office.get_task("t").assignment_generation == 1


def test_an_unassignment_wakes_nobody_and_interrupts_the_previous_assignee(
    office: OfficeService,
) -> None:
    office.assign_task("t", "b", "")
    office.open_office_session("b", "t")
    result = office.assign_task("t", "", "a")
    assert (result.generation, result.wake) == (2, None)
    assert len(office.list_runs()) == 1
    assert office.effects.interrupts == [SessionInterrupt("b", "t")]
    assert states(office) == [("b", "completed")]


def test_reassigning_the_same_agent_bumps_the_generation_and_interrupts_nobody(
    office: OfficeService, clock: ManualClock
) -> None:
    office.open_office_session("b", "t")
    office.assign_task("t", "b", "a")
    clock.advance(COALESCE_WINDOW)
    result = office.assign_task("t", "b", "a")
    assert (result.generation, result.wake) == (2, EnqueueResult(Outcome.QUEUED, "2"))
    assert office.effects.interrupts == []
    assert states(office) == [("b", "active")]


@pytest.mark.parametrize("acting", ["c", "nobody"])
def test_an_agent_without_the_permission_changes_nothing(
    office: OfficeService, acting: str
) -> None:
    with pytest.raises(Forbidden):
        office.assign_task("t", "b", acting)
    assert office.get_task("t").assignment_generation == 0
    assert (office.list_runs(), office.effects.events) == ([], [])


@pytest.mark.parametrize(
    ("task", "assignee", "error"),
    [("nope", "b", NotFound), ("t", "nope", NotFound), (" ", "b", InvalidInput)],
)
def test_unknown_or_blank_targets_are_refused(
    office: OfficeService, task: str, assignee: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        office.assign_task(task, assignee, "a")
    assert office.get_task("t").assignment_generation == 0


def test_a_keyless_assignment_is_counted_and_still_gated(
    office: OfficeService, clock: ManualClock
) -> None:
    for _ in range(ASSIGNMENT_ALLOWANCE):
        assert office.assign_task("t", "b", "a", keyless=True).wake is not None
        clock.advance(COALESCE_WINDOW * 2)
    assert {run.dedup_key for run in office.list_runs()} == {None}
    result = office.assign_task("t", "b", "a", keyless=True)
    assert result.wake == EnqueueResult(Outcome.RATE_LIMITED, None)
    surface = office.telemetry.render()
    expected = ASSIGNMENT_ALLOWANCE + 1
    assert (
        'office_run_dedup_keyless_total{cause="generation_unresolved",reason="task_assigned"} '
        f"{expected}.0"
    ) in surface


@pytest.mark.parametrize("producer", [p for p in Producer if p is not Producer.ASSIGNEE_MUTATION])
def test_no_other_producer_puts_an_actor_on_its_wake(
    office: OfficeService, producer: Producer
) -> None:
    assert office.produce_wake(producer, "t", "b").outcome is Outcome.QUEUED
    [run] = office.list_runs()
    assert run.reason == "task_assigned"
    assert json.loads(run.payload) == {"task_id": "t", "workspace_id": "w"}
    assert run.dedup_key is not None


def test_the_assignee_mutation_is_not_a_free_standing_producer(office: OfficeService) -> None:
    with pytest.raises(InvalidInput):
        office.produce_wake(Producer.ASSIGNEE_MUTATION, "t", "b")


def test_deleting_a_run_frees_its_share_of_the_allowance(
    office: OfficeService, clock: ManualClock
) -> None:
    for index in range(ASSIGNMENT_ALLOWANCE):
        office.enqueue_wake("b", "task_assigned", agent_payload(), f"k{index}")
        clock.advance(COALESCE_WINDOW * 2)
    first = office.list_runs()[0]
    office.delete_run(str(first.id))
    assert (
        office.enqueue_wake("b", "task_assigned", agent_payload(), "k9").outcome is Outcome.QUEUED
    )


@pytest.mark.parametrize(
    ("run_id", "status", "error"),
    [("1", "asleep", InvalidInput), ("99", "running", NotFound), ("x", "running", NotFound)],
)
def test_run_status_changes_are_checked(
    office: OfficeService, run_id: str, status: str, error: type[Exception]
) -> None:
    office.enqueue_wake("b", "task_assigned", agent_payload(), None)
    with pytest.raises(error):
        office.set_run_status(run_id, status)
    assert [run.status for run in office.list_runs()] == ["queued"]


@pytest.mark.parametrize(
    ("agent", "reason", "key", "error"),
    [
        ("nope", "task_assigned", None, NotFound),
        ("b", " ", None, InvalidInput),
        ("b", "task_assigned", "", InvalidInput),
    ],
)
def test_a_raw_wake_with_bad_input_writes_nothing(
    office: OfficeService, agent: str, reason: str, key: str | None, error: type[Exception]
) -> None:
    with pytest.raises(error):
        office.enqueue_wake(agent, reason, agent_payload(), key)
    assert office.list_runs() == []


def test_setup_refuses_duplicates_and_unknown_parents(office: OfficeService) -> None:
    with pytest.raises(InvalidInput):
        office.create_workspace("w")
    with pytest.raises(InvalidInput):
        office.create_agent("w", "a", can_assign_tasks=False)
    with pytest.raises(NotFound):
        office.create_task("nope", "t2")
    with pytest.raises(NotFound):
        office.create_task("w", "t2", assignee_agent_id="nope")
    with pytest.raises(NotFound):
        office.open_office_session("a", "nope")
    task = office.create_task("w", "t2", assignee_agent_id="a")
    assert (task.assignment_generation, office.list_runs()) == (0, [])
