"""Small made-up runs for tests of what reads a run (reports, verdicts, cross-checks)."""

from __future__ import annotations

from datetime import UTC, datetime

from conformance.spec.evidence import Tally
from conformance.spec.registry import default_registry
from conformance.stream.results import Header, Provenance

STARTED = datetime(2026, 1, 1, tzinfo=UTC)


def a_header(provenance: Provenance | None = None) -> Header:
    """The header of a run of a fake implementation, with nothing else to say."""
    return Header(
        kit_version="0",
        protocol_version=1,
        spec_hashes={},
        implementation="fake",
        description=None,
        database=None,
        seed=None,
        started_at=STARTED,
        provenance=provenance,
    )


def held_checks(criterion_id: str) -> dict[str, Tally]:
    """A record's evidence that every observable clause of the criterion held: what a passed
    criterion needs (`conformance.verdicts`), for a made-up record."""
    criterion = default_registry().criterion(criterion_id)
    return {c.id: Tally(held=1) for c in criterion.clauses if not c.not_observable}
