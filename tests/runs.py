"""Small made-up runs for tests of what reads a run (reports, verdicts, cross-checks)."""

from __future__ import annotations

from datetime import UTC, datetime

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
