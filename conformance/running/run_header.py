"""The stream's first line: what ran, against which kit and spec, where, and for what claim.

A run that could not even start still gets one (`unusable_run`), with every scenario not run
and why, so that every report the user asked for says what happened.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from conformance import __version__ as kit_version
from conformance.adapters.containment import Containment
from conformance.identity import spec_hashes
from conformance.protocol.messages import PROTOCOL_VERSION
from conformance.spec.registry import Registry
from conformance.spec.scenario_keys import ScenarioEntry, inventory_digest
from conformance.stream import provenance
from conformance.stream.redaction import REDACT
from conformance.stream.results import (
    Claim,
    Footer,
    Header,
    Provenance,
    ResultsRun,
    totals,
    undefined_results,
)


def header_of(
    impl: str,
    containment: Containment,
    inventory: list[ScenarioEntry],
    registry: Registry,
    claim: Claim,
    *,
    description: dict[str, Any] | None,
    error: str | None,
    database: str | None = None,
    needs_review: list[str] | None = None,
) -> Header:
    """The stream's first line: what ran, against which kit, where (see provenance)."""
    return Header(
        kit_version=kit_version,
        protocol_version=PROTOCOL_VERSION,
        spec_hashes=spec_hashes(registry),
        implementation=REDACT.text(impl),
        description=description,
        implementation_error=error,
        database=database,
        seed=None,
        needs_review=needs_review or [],
        claim=claim,
        started_at=datetime.now(UTC),
        provenance=provenance_of(impl, containment, inventory),
    )


def provenance_of(
    impl: str, containment: Containment, inventory: list[ScenarioEntry]
) -> Provenance:
    return Provenance(
        kit_commit=provenance.kit_commit(),
        suite=provenance.suite_digests(),
        inventory=inventory_digest([entry.key for entry in inventory]),
        implementation_digests=provenance.implementation_digests(impl),
        sandbox=containment.sandbox,
        pass_env=list(containment.pass_env),
        **provenance.machine(),
    )


def unusable_run(
    impl: str,
    cause: str,
    *,
    containment: Containment,
    inventory: list[ScenarioEntry],
    registry: Registry,
    claim: Claim,
) -> ResultsRun:
    """The run of an implementation that could not even start: every scenario not run, and
    why, so that every report the user asked for still says what happened."""
    cause = REDACT.text(cause)
    header = header_of(impl, containment, inventory, registry, claim, description=None, error=cause)
    scenarios = [
        result.model_copy(update={"evidence": f"not run: the implementation is unusable: {cause}"})
        for result in undefined_results([], inventory)
    ]
    footer = Footer(
        finished_at=header.started_at,
        totals=totals(scenarios),
        stopped=f"the implementation is unusable: {cause}",
        records=len(scenarios),
    )
    return ResultsRun(header=header, scenarios=scenarios, footer=footer)
