"""The legal variants: each patch is real and undone on close, each divergence is registered,
and a variant is reachable in-process, through `exec:` and by `serve-reference`."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from conformance import variants
from conformance.adapters.factory import ConfigurationError, open_driver
from conformance.driver import ConcurrentCall, DelegationKind, Description, Permissions
from conformance.reference.office import service as office_service
from conformance.spec.registry import default_registry
from conformance.wire.serve import main as serve_main


def test_there_are_at_least_fifteen_variants_and_most_diverge_from_nothing() -> None:
    assert len(variants.VARIANTS) >= 15
    clean = [v for v in variants.VARIANTS.values() if not v.diverges]
    assert len(clean) >= 15, "at least fifteen must pass outright"


@pytest.mark.parametrize("name", sorted(variants.VARIANTS))
def test_each_variant_patches_something_real(name: str) -> None:
    variant = variants.VARIANTS[name]
    patches = variant.patches()
    assert patches, f"{name} patches nothing"
    for patch in patches:
        assert getattr(patch.target, patch.attribute) is not patch.replacement, (
            f"{name}: {patch.describe()} changes nothing"
        )
    assert variant.how().count(":=") == len(patches)


@pytest.mark.parametrize("name", sorted(variants.VARIANTS))
def test_each_declared_divergence_is_an_active_interpretation(name: str) -> None:
    registry = default_registry()
    for interpretation in variants.VARIANTS[name].diverges:
        assert registry.is_citable(interpretation), f"{name} names {interpretation}"


def test_a_variant_driver_names_itself_declares_its_names_and_undoes_its_patches(
    tmp_path: Path,
) -> None:
    original = office_service.OfficeTelemetry
    driver = variants.open_variant("declared_metric_names", None, tmp_path)
    try:
        assert office_service.OfficeTelemetry is not original
        description = driver.describe()
        assert description.name == "variant:declared_metric_names"
        assert description.office is not None
        assert description.office.vocabulary.rate_limit_counter == (
            "kandev_office_wake_throttle_total"
        )
        assert "kandev_office_wake_throttle_total" in driver.telemetry()
    finally:
        driver.close()
    assert office_service.OfficeTelemetry is original


def test_the_in_process_adapter_opens_variants_by_name(tmp_path: Path) -> None:
    driver = open_driver("variant:sixth_actorless_producer", None, tmp_path)
    try:
        office = driver.describe().office
        assert office is not None and "escalation_sweep" in office.producers
    finally:
        driver.close()
    with pytest.raises(ConfigurationError, match="no variant named 'nope'"):
        open_driver("variant:nope", None, tmp_path)


def test_serve_reference_serves_a_variant_and_its_declarations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_STORE", str(tmp_path))
    monkeypatch.setattr(
        sys, "stdin", io.StringIO('{"protocol":1,"seq":1,"op":"handshake","args":{}}\n')
    )
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert serve_main(["--variant", "renamed_task_updated_event"]) == 0
    reply = json.loads(out.getvalue().splitlines()[0])
    description = Description.model_validate(reply["result"]["description"])
    assert description.name == "variant:renamed_task_updated_event"
    assert description.office is not None
    assert description.office.vocabulary.task_updated_event == "TaskUpdated"


def test_serve_reference_refuses_an_unknown_variant() -> None:
    with pytest.raises(SystemExit) as exited:
        serve_main(["--variant", "nope"])
    assert exited.value.code == 2


def test_a_variant_through_exec_declares_across_the_wire(tmp_path: Path) -> None:
    command = shlex.join(
        [sys.executable, "-m", "conformance.wire.serve", "--variant", "extra_static_label"]
    )
    driver = open_driver(f"exec:{command}", None, tmp_path)
    try:
        assert driver.describe().name == "variant:extra_static_label"
        driver.create_workspace("w")
        driver.create_agent("w", "a", can_assign_tasks=True)
        driver.create_task("w", "t")
        driver.fail_next_count_read()
        driver.assign_task("t", "a", acting_agent_id="a")
        assert 'queue="office"' in driver.telemetry()
    finally:
        driver.close()


def test_capped_usages_made_at_once_charge_what_any_order_would(tmp_path: Path) -> None:
    """A capped variant must hold its reading under races too: usages of 3 made at once on a
    slice of 5 charge 5, and none is refused, in every round. A cap taken against a read made
    before the charge would charge 3 and refuse two in some rounds, and make the machine's
    searches flaky."""
    nothing = Permissions()
    for round_ in range(12):
        driver = open_driver("variant:usage_capped_at_slice", None, tmp_path / str(round_))
        try:
            driver.create_environment("studio", ["alice"])
            driver.create_campaign("camp", "studio", 50)
            driver.create_session("root", "camp", "alice", nothing)
            request = driver.delegate(
                DelegationKind.SPAWN,
                "root",
                deliverable="patch",
                acceptance_checks=[],
                budget_slice=5,
                permissions=nothing,
                assignee=None,
            )
            usage = {"session_id": request.child_session_id, "amount": 3}
            calls = [ConcurrentCall(operation="record_usage", arguments=usage)] * 3
            outcomes = driver.run_concurrently(calls)
            assert [outcome.ok for outcome in outcomes] == [True] * 3, outcomes
            assert driver.get_request(request.request_id).budget_spent == 5
        finally:
            driver.close()
