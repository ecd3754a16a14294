"""The results stream: one append-only JSON-lines file per run, the source of every report.

Line 1 is the header (with the run's provenance), then one record per scenario
as it finishes, then a footer with the totals. Every line carries a link of a
hash chain over all lines so far, the footer the last one (see
stream_integrity). A stream without a footer is an interrupted run.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from conformance.spec.evidence import Tally
from conformance.spec.scenario_keys import ScenarioEntry


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
QUIET: Final = (Status.PASSED, Status.NOT_APPLICABLE, Status.XFAIL, Status.DIVERGED)
"""What a person need not read in a failure account: a pass, a skip, an expected failure, a
reading taken otherwise (the verdict tables show each)."""

HEADLINE_CHARS: Final = 300
HYPOTHESIS_NOTES: Final = "  # What Hypothesis noted of the same example:"
"""Where a counterexample's Gherkin ends and Hypothesis' own notes of it (its program, its
draws, the reproduction blob) begin: the stream keeps them, the terminal leaves them out."""
NOT_RUN: Final = "the scenario is in the feature files but did not run"
"""The evidence of a scenario that was deselected (-k) or never reached."""

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

    chain: str = ""
    """SHA-256 over the previous line's link and this record without it (see stream_integrity)."""


class Provenance(BaseModel):
    """What produced the run (see provenance): the kit, the implementation, the machine."""

    model_config = ConfigDict(extra="forbid")

    kit_commit: str | None
    suite: dict[str, str]
    """The SHA-256 of every feature file, step module, registry and schema file, by path."""
    inventory: str
    """The SHA-256 over the sorted keys of every scenario the feature files hold."""
    implementation_digests: dict[str, str]
    sandbox: bool
    pass_env: list[str]
    host: str
    os: str
    python: str


class Shard(BaseModel):
    """The part of the inventory a `--shard K/N` run recorded (see stream.shards)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    """K: which part, from 1."""
    count: int
    """N: how many parts the inventory was cut into."""
    inventory: str
    """The digest of the whole inventory the part was cut from (`provenance.inventory` is the
    part's own)."""

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


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
    """The Hypothesis seed of the run's property checks (None when none ran)."""
    properties: str = "none"
    """The property checks' budget: none, ci or thorough (`--properties`)."""
    needs_review: list[str] = []
    claim: Claim = Claim()
    started_at: datetime
    provenance: Provenance | None = None
    shard: Shard | None = None
    """Set for one part of a sharded run (`--shard K/N`): its records are that part's only,
    until `conformance merge` joins the parts."""


class StepResult(Record):
    keyword: str
    text: str
    line: int
    status: Literal["passed", "failed", "undefined", "skipped"]
    """`skipped`: the step never ran (an earlier one failed, or the scenario was not applicable)."""
    duration_s: float
    checks: dict[str, Tally] = {}
    """The evidence the step's own checks left (its share of the record's `checks`)."""


class FailedStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keyword: str
    text: str
    feature: str
    line: int

    def render(self) -> str:
        return f"{self.keyword} {self.text} ({self.feature}:{self.line})"


class Failure(BaseModel):
    """What a person reads first about a scenario that did not pass, in this order: the step that
    failed, the clauses its check enforces, what was expected against what was observed, and a
    short trace through the kit's own code."""

    model_config = ConfigDict(extra="forbid")

    step: FailedStep | None
    """None when the scenario failed outside its steps (see `phase`), or for a property."""
    property_title: str | None = None
    """For a property check: its title (it has no steps)."""
    counterexample: str = ""
    """For a property check: the shrunk counterexample, as a Gherkin scenario where the kit
    can write one (paste it into a feature file to keep it), else as Hypothesis printed it."""
    phase: Literal["setup", "call", "teardown"] = "call"
    clauses: dict[str, str] = {}
    """The cited clause or interpretation IDs, each with the kit's statement of it."""
    observed: str
    """Expected against observed, as the failing check put it (or the error, for a fault)."""
    stderr: list[str] = []
    """The implementation's last stderr lines in the scenario (or the failing example), where
    it runs as a process: its own words beside the kit's. A fault's account holds its own."""
    trace: str = ""

    @property
    def headline(self) -> str:
        """One line: expected against observed."""
        first = next((line for line in self.observed.splitlines() if line.strip()), "")
        return first if len(first) <= HEADLINE_CHARS else first[: HEADLINE_CHARS - 1] + "…"

    def render(self, *, hypothesis_notes: bool = True, trace: bool = True) -> str:
        """The account in reading order; without Hypothesis' notes (the terminal's), a
        counterexample is its Gherkin scenario only; without `trace`, the kit's own frames are
        left out (the terminal shows them with --traceback)."""
        outside = {
            "setup": "(before the first step, while setting up)",
            "call": "(outside any step)",
            "teardown": "(after the last step, while tearing down)",
        }
        step = self.step.render() if self.step else outside[self.phase]
        lines = [f"Property: {self.property_title}" if self.property_title else f"Step: {step}"]
        lines += [f"Clause {cite}: {statement}" for cite, statement in self.clauses.items()]
        lines.append(f"Expected vs observed: {self.observed}")
        if self.stderr:
            lines += ["", "The implementation's stderr (its last lines):"]
            lines += [f"  {line}" for line in self.stderr]
        counterexample = self.counterexample
        if not hypothesis_notes:
            counterexample = without_hypothesis_notes(counterexample)
        if counterexample:
            lines += ["", "Counterexample:", counterexample]
        if self.trace and trace:
            lines += ["", "Trace:", self.trace]
        return "\n".join(lines)


def without_hypothesis_notes(counterexample: str) -> str:
    """A counterexample's Gherkin without what Hypothesis noted beside each scenario (its
    program of steps, its reproduction blob: comment lines under HYPOTHESIS_NOTES)."""
    kept: list[str] = []
    noting = False
    for line in counterexample.splitlines():
        noting = line == HYPOTHESIS_NOTES or (noting and line.startswith("  #"))
        if not noting:
            kept.append(line)
    return "\n".join(kept).rstrip("\n")


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
    failure: Failure | None = None
    """For a scenario that did not pass: the failing step, clauses, expected vs observed."""
    title: str = ""
    """The scenario's name as Cucumber writes it: an outline row's values substituted."""
    example: dict[str, str] = {}
    """An outline row's values by column; empty for a plain scenario."""
    feature_title: str = ""
    """The feature's own name (its `Feature:` line), beside its file in `feature`."""
    steps: list[StepResult] = []
    violated: list[str] = []
    """The clauses and interpretations the failing check cited."""
    followed: list[str] = []
    """For a property: the readings it followed past a divergence to check everything else,
    as `<interpretation>=<reading>` (a divergence it followed is charged to that reading's
    criteria only; the property verified the rest)."""
    interpretations: list[str] = []
    """The registered interpretations the scenario rests on (its `@interpretation:` tags)."""
    clauses: list[str] = []
    """The clauses of its criterion the scenario checks (its `@clause:` tags, as full IDs)."""
    checks: dict[str, Tally] = {}
    """The evidence: per clause or reading a check of this record cited, how its checks came
    out (see `conformance.spec.evidence`). Verdicts are computed from these
    (`conformance.verdicts`), not from where a check stood."""
    ended: Status | None = None
    """For a property's record: how the search as a whole ended where that was a fault
    (errored, timeout), which fails the run once, not each criterion the property names."""

    @property
    def shown_status(self) -> Status:
        """How the record reads in an account: a property's end where no check judged it."""
        return self.ended or self.status

    @property
    def shown_title(self) -> str:
        """Its title in an account: a property that ended in what no check judged goes by its
        own title, without this record's criterion, since it blames none."""
        return self.scenario if self.ended else self.title or self.scenario


class Footer(Record):
    type: Literal["footer"] = "footer"
    finished_at: datetime
    totals: dict[Status, int]
    stopped: str | None = None
    records: int | None = None
    """How many scenario records precede the footer."""
    integrity: str | None = None
    """Set when the harness found its stream altered by someone else during the run."""
    signature: str | None = None
    """HMAC-SHA256 of the footer's link under the team's key (`--sign-key-file`), if signed."""


class ResultsRun(BaseModel):
    header: Header
    scenarios: list[ScenarioResult]
    footer: Footer | None

    def by_key(self) -> dict[str, ScenarioResult]:
        return {result.key: result for result in self.scenarios}


class ResultsWriter:
    """Appends records, each linked into the chain, and flushes each, so a crash leaves every
    finished record behind; keeps every line it wrote, to tell its own stream from a changed one.
    """

    def __init__(self, path: Path, *, sign_key: bytes | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self.lines: list[str] = []
        self._link = CHAIN_START
        self._sign_key = sign_key

    def write(self, record: Record) -> None:
        self._link = record.chain = link(self._link, record)
        if isinstance(record, Footer) and self._sign_key is not None:
            record.signature = sign(self._sign_key, record.chain)
        line = record.model_dump_json() + "\n"
        self.lines.append(line)
        self._file.write(line)
        self._file.flush()

    def altered(self) -> bool:
        """Whether the file at the stream's path is no longer what this writer wrote."""
        try:
            return self.path.read_text(encoding="utf-8") != "".join(self.lines)
        except (OSError, UnicodeDecodeError):
            return True

    def rewrite(self) -> None:
        """Put the lines this writer wrote back at the stream's path, in one atomic rename."""
        self._file.close()
        replacement = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        replacement.write_text("".join(self.lines), encoding="utf-8")
        replacement.replace(self.path)

    def close(self) -> None:
        self._file.close()


CHAIN_START: Final = hashlib.sha256(b"conformance results stream v1").hexdigest()


def sign(key: bytes, digest: str) -> str:
    """The keyed signature of a chain's last link."""
    return "hmac-sha256:" + hmac.new(key, digest.encode(), hashlib.sha256).hexdigest()


def link(previous: str, record: Record) -> str:
    """The chain's next link: SHA-256 over the previous link and the record without its own."""
    body = record.model_dump_json(exclude={"chain", "signature"})
    return hashlib.sha256(f"{previous}\n{body}".encode()).hexdigest()


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
            evidence=NOT_RUN,
            title=entry.name + (f" [{entry.example}]" if entry.example else ""),
            feature_title=entry.feature,
        )
        for entry in inventory
        if entry.key not in seen
    ]


def totals(results: Iterable[ScenarioResult]) -> dict[Status, int]:
    counted = Counter(result.status for result in results)
    return {status: counted.get(status, 0) for status in Status}


class Attention:
    """Which records a person must read, as a run writes them: within the claim, those that ran
    and are not quiet (a divergence is not, where the claim makes it fail the run), and one
    record of each property check that ended in what no check judged, which its records per
    criterion do not show as failed. The terminal's progress lines and every account use it."""

    def __init__(self, claim: Claim, quiet: Iterable[Status] | None = None) -> None:
        strict = claim.strict_interpretations
        default = [s for s in QUIET if not (strict and s is Status.DIVERGED)]
        self._claim = claim
        self._quiet = frozenset(default if quiet is None else quiet)
        self._ended: set[tuple[str, str]] = set()

    def wants(self, result: ScenarioResult) -> bool:
        if result.criterion is not None and not self._claim.covers(result.criterion):
            return False
        if result.ended is None:
            return result.status not in self._quiet and result.evidence != NOT_RUN
        check = (result.feature, result.scenario)
        first = check not in self._ended
        self._ended.add(check)
        return first


def attention(run: ResultsRun, quiet: Iterable[Status] | None = None) -> list[ScenarioResult]:
    """The records of `run` a person must read (see `Attention`)."""
    wanted = Attention(run.header.claim, quiet)
    return [result for result in run.scenarios if wanted.wants(result)]
