"""Small made-up runs for tests of what reads a run (reports, verdicts, cross-checks), and real
runs of this checkout's `conformance run` for tests of what a run judges."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

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


def suite_run(
    folder: Path, *arguments: str, environment: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`conformance run` of this checkout, in `folder`, writing its results stream there: what
    it printed, and the stream's path."""
    stream = folder / "results.jsonl"
    finished = subprocess.run(
        [
            *(sys.executable, "-c", "from conformance.cli import main; main()"),
            *("run", *arguments, "--results", str(stream)),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )
    return finished, stream
