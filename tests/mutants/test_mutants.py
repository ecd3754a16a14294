"""The mutant registry: every criterion is targeted, every patch is real and undone on close."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from conformance import mutants
from conformance.adapters.factory import ConfigurationError, open_driver
from conformance.adapters.patched import (
    AlterationInForce,
    Capability,
    Patch,
    PatchedDriver,
    open_patched,
)
from conformance.driver import Description, Driver, Outcome
from conformance.mutants.mutant import Mutant
from conformance.mutants.office_count import StatementGate
from conformance.mutants.office_pipeline import ReorderedQueue
from conformance.mutants.office_reporting import ReportingGate
from conformance.reference.office import service as office_service
from conformance.spec.registry import default_registry


def reference_description(folder: Path) -> Description:
    driver = open_driver("reference", None, folder)
    try:
        return driver.describe()
    finally:
        driver.close()


def test_every_criterion_is_targeted_by_a_mutant_or_says_why_not() -> None:
    targeted = {mutant.criterion for mutant in mutants.MUTANTS.values()}
    criteria = set(default_registry().ids())
    assert targeted <= criteria, f"mutants target unknown criteria: {targeted - criteria}"
    unexplained = criteria - targeted - set(mutants.NOT_MUTATED)
    assert not unexplained, f"criteria with neither a mutant nor a reason: {sorted(unexplained)}"
    assert not targeted & set(mutants.NOT_MUTATED), (
        "a mutated criterion is also listed as unmutable"
    )
    assert len(mutants.MUTANTS) >= 25


@pytest.mark.parametrize("name", sorted(mutants.MUTANTS))
def test_each_mutant_replaces_existing_reference_attributes(name: str) -> None:
    mutant = mutants.MUTANTS[name]
    patches = mutant.patches()
    assert patches, f"{name} patches nothing"
    for patch in patches:
        original = getattr(patch.target, patch.attribute)
        assert patch.replacement is not original, f"{name}: {patch.describe()} changes nothing"
    criterion, description, how = mutants.registry()[name]
    assert (criterion, description) == (mutant.criterion, mutant.description)
    assert how.count(":=") == len(patches)


def test_a_mutant_driver_names_itself_and_undoes_its_patches_on_close(tmp_path: Path) -> None:
    original = office_service.AllowanceGate
    driver = mutants.open_mutant("per_agent_allowance", None, tmp_path)
    try:
        assert office_service.AllowanceGate is not original
        assert driver.describe().name == "mutant:per_agent_allowance"
    finally:
        driver.close()
    assert office_service.AllowanceGate is original


def test_a_mutant_declares_its_readings_and_an_unregistered_one_is_refused(
    tmp_path: Path,
) -> None:
    declaring = [mutant for mutant in mutants.MUTANTS.values() if mutant.readings]
    assert declaring, "no mutant declares a reading: nothing checks a legal variant gone wrong"
    for mutant in declaring:
        driver = mutants.open_mutant(mutant.name, None, tmp_path / mutant.name)
        try:
            assert driver.describe().readings == dict(mutant.readings)
        finally:
            driver.close()
    plain = mutants.MUTANTS["usage_unbounded"]
    moonstruck = replace(plain, readings={"WR-1": "from-the-moon"})
    with pytest.raises(ValidationError, match="WR-1 has no reading 'from-the-moon'"):
        moonstruck.declared(plain.declared(reference_description(tmp_path)))


def test_the_in_process_adapter_opens_mutants_by_name(tmp_path: Path) -> None:
    driver = open_driver("mutant:refusal_reported_as_none", None, tmp_path)
    try:
        assert driver.describe().name == "mutant:refusal_reported_as_none"
    finally:
        driver.close()
    with pytest.raises(ConfigurationError, match="no mutant named 'nope'"):
        open_driver("mutant:nope", None, tmp_path)


# The hook bases some mutants override must behave exactly like the reference when
# nothing is overridden, so that a kill is caused by the one change and nothing else.
UNCHANGED_HOOKS = Mutant(
    "unchanged_hooks",
    "AC-OFFICE-ASSIGN-RATE-001.2",
    Capability.OFFICE,
    "the hook bases with no hook overridden",
    lambda: [
        Patch(office_service, "AllowanceGate", type("Hooks", (StatementGate, ReportingGate), {})),
        Patch(office_service, "RunQueue", ReorderedQueue),
    ],
)


def test_the_hook_bases_alone_behave_like_the_reference(tmp_path: Path) -> None:
    (tmp_path / "reference").mkdir()
    (tmp_path / "hooks").mkdir()
    expected = _story_of(open_driver("reference", None, tmp_path / "reference"))
    assert expected[:3] == ["queued", "coalesced", "queued"]
    assert "rate_limited" in expected
    assert _story_of(open_patched(UNCHANGED_HOOKS, None, tmp_path / "hooks")) == expected


def _story_of(driver: Driver) -> list[str]:
    try:
        return _pipeline_story(driver)
    finally:
        driver.close()


def _pipeline_story(driver: Driver) -> list[str]:
    """Outcomes of admissions, a merge, a redelivery, refusals and a failed count read."""
    driver.create_workspace("w")
    driver.create_agent("w", "a", can_assign_tasks=True)
    driver.create_task("w", "t")
    outcomes: list[str] = []
    for step in range(8):
        wake = driver.assign_task("t", "a", acting_agent_id="a").wake
        outcomes.append(wake.outcome if wake is not None else Outcome.NONE)
        driver.advance_clock(timedelta(seconds=2 if step == 0 else 30))
    run = driver.list_runs()[-1]
    redelivered = driver.enqueue_wake("a", run.reason, run.payload, dedup_key=run.dedup_key)
    driver.fail_next_count_read()
    degraded = driver.assign_task("t", "a", acting_agent_id="a").wake
    assert degraded is not None
    unattributed = driver.enqueue_wake(
        "a", "task_assigned", '{"actor_type": "agent"}', dedup_key=None
    )
    logs = [log.fields.get("reason") for log in driver.warning_logs()]
    return [*outcomes, redelivered.outcome, degraded.outcome, unattributed.outcome, *logs]


def test_one_altered_driver_at_a_time_and_none_left_in_force(tmp_path: Path) -> None:
    """Patches replace module attributes for the whole process: a second altered driver while
    one is open is refused with the reason, and a closed one leaves nothing in force."""
    first = open_patched(UNCHANGED_HOOKS, None, tmp_path / "first")
    try:
        with pytest.raises(AlterationInForce, match="in force in this process"):
            open_patched(UNCHANGED_HOOKS, None, tmp_path / "second")
    finally:
        first.close()
    assert PatchedDriver.in_force is None
    open_patched(UNCHANGED_HOOKS, None, tmp_path / "third").close()
