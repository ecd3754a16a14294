"""The results stream: one append-only JSON-lines file per run, the source of every report.

Line 1 is the header, then one record per scenario as it finishes, then a
footer with the totals. A stream without a footer is an interrupted run.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict

from conformance.inventory import ScenarioEntry


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    TIMEOUT = "timeout"
    NOT_APPLICABLE = "not_applicable"
    XFAIL = "xfail"
    XPASS = "xpass"
    UNDEFINED = "undefined"
    DIVERGED = "diverged"
    """The scenario's only broken checks cite registered interpretations: an open question the
    implementation reads otherwise. Fails a run only with --strict-interpretations."""
    UNVERIFIED = "unverified"
    """Criterion level only: none of the criterion's scenarios ran and passed."""


#: Scenario statuses that make a run unsuccessful (exit code 1).
FAILING = frozenset({Status.FAILED, Status.ERRORED, Status.TIMEOUT, Status.XPASS, Status.UNDEFINED})

#: The specs a run can claim conformance to, by the prefix of their criterion IDs.
SPEC_PREFIXES = {"office": "AC-OFFICE-ASSIGN-RATE-", "work-requests": "AC-ARMONIA-WORKREQ-"}


class Claim(BaseModel):
    """What a run claims: which specs, which criteria may stay unverified, how divergence counts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    specs: list[str] = sorted(SPEC_PREFIXES)
    allow_unverified: list[str] = []
    strict_interpretations: bool = False

    def covers(self, criterion_id: str) -> bool:
        return any(criterion_id.startswith(SPEC_PREFIXES[spec]) for spec in self.specs)


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Header(Record):
    type: Literal["header"] = "header"
    kit_version: str
    protocol_version: int
    spec_hashes: dict[str, str]
    implementation: str
    description: dict[str, Any] | None
    implementation_error: str | None = None
    database: str | None
    seed: int | None
    needs_review: list[str] = []
    claim: Claim = Claim()
    started_at: datetime


class StepResult(Record):
    keyword: str
    text: str
    line: int
    status: Literal["passed", "failed", "undefined"]
    duration_s: float


class ScenarioResult(Record):
    type: Literal["scenario"] = "scenario"
    key: str
    criterion: str | None
    feature: str
    scenario: str
    line: int = 0
    status: Status
    duration_s: float
    evidence: str | None = None
    steps: list[StepResult] = []
    violated: list[str] = []
    """The clauses and interpretations the failing check cited."""
    interpretations: list[str] = []
    """The registered interpretations the scenario rests on (its `@interpretation:` tags)."""
    clauses: list[str] = []
    """The clauses of its criterion the scenario checks (its `@clause:` tags, as full IDs)."""


class Footer(Record):
    type: Literal["footer"] = "footer"
    finished_at: datetime
    totals: dict[Status, int]
    stopped: str | None = None


class ResultsRun(BaseModel):
    header: Header
    scenarios: list[ScenarioResult]
    footer: Footer | None

    def by_key(self) -> dict[str, ScenarioResult]:
        return {result.key: result for result in self.scenarios}


class ResultsWriter:
    """Appends records and flushes each, so a crash leaves every finished record behind."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("w", encoding="utf-8")

    def write(self, record: Record) -> None:
        self._file.write(record.model_dump_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_results(path: Path) -> ResultsRun:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty: not a results stream")
    header = Header.model_validate_json(lines[0])
    scenarios: list[ScenarioResult] = []
    footer: Footer | None = None
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON: {error}") from error
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "scenario":
            scenarios.append(ScenarioResult.model_validate_json(line))
        elif kind == "footer":
            footer = Footer.model_validate_json(line)
        else:
            raise ValueError(f"{path}:{number}: unexpected record type {kind!r}")
    return ResultsRun(header=header, scenarios=scenarios, footer=footer)


def undefined_results(
    recorded: Iterable[ScenarioResult], inventory: Iterable[ScenarioEntry]
) -> list[ScenarioResult]:
    """A result for every inventoried scenario that has no record: it did not run."""
    seen = {result.key for result in recorded}
    return [
        ScenarioResult(
            key=entry.key,
            criterion=entry.criteria[0] if len(entry.criteria) == 1 else None,
            feature=entry.feature_file,
            scenario=entry.name,
            line=entry.line,
            status=Status.UNDEFINED,
            duration_s=0.0,
            evidence="the scenario is in the feature files but did not run",
        )
        for entry in inventory
        if entry.key not in seen
    ]


def totals(results: Iterable[ScenarioResult]) -> dict[Status, int]:
    counted = Counter(result.status for result in results)
    return {status: counted.get(status, 0) for status in Status}


def file_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
