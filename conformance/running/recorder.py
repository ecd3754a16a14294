"""Records every Gherkin scenario's verdict into the results stream while pytest runs.

Verdicts come from what actually happened, never from what was expected:
an assertion or a wrong typed answer is `failed`; a fault of the implementation
(crash, hang, garbage) is `errored` or `timeout`; a missing capability is
`not_applicable`; a missing step definition is `undefined`; any other skip or
exception is `errored`. Expectations then turn failed into xfail and passed into
xpass. Scenarios in the inventory that produced no record are written as
`undefined` before the footer.

In a `--jobs` run (see `workers`) a worker's recorder makes the records of its items and hands
them home on their reports; the controller's writes the run's stream from them, when the run
ends, in the inventory's order, as a run of one job writes what ran in its collection's order.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pytest
from pytest_bdd.parser import Step

from conformance.adapters.containment import Containment
from conformance.adapters.factory import open_driver
from conformance.adapters.faults import ImplementationFault, stderr_of, unusable_cause
from conformance.applicability import NOT_APPLICABLE_PREFIX
from conformance.properties import MODULE_TITLES
from conformance.properties.catalogue import (
    PropertyCheck,
    check_of_item,
    search_of_item,
    search_seed,
)
from conformance.running.expectations import ExpectedFailure
from conformance.running.failure_evidence import (
    counterexample_of,
    failure_verdict,
    unreplayed_violation,
)
from conformance.running.fault_budget import stopped_reason
from conformance.running.property_records import fanned_out
from conformance.running.reading_verdict import first_divergence, weighed
from conformance.running.run_header import header_of
from conformance.running.scenario_items import (
    clause_tags,
    feature_file,
    interpretation_tags,
    scenario_template,
)
from conformance.running.workers import (
    KEYS,
    RECORDS,
    carried,
    hand_home,
    is_controller,
    is_worker,
)
from conformance.scratch import RUN_FOLDER
from conformance.spec.clause_check import (
    ClauseViolation,
    FollowedDivergence,
    ReadingLog,
    open_reading_log,
)
from conformance.spec.evidence import Ledger, Tally, open_ledger
from conformance.spec.registry import (
    CRITERION_TAG,
    INTERPRETATION_ID,
    Registry,
)
from conformance.spec.scenario_keys import ScenarioEntry, scenario_key
from conformance.stream.redaction import REDACT, masked_url
from conformance.stream.results import (
    Claim,
    FailedStep,
    Failure,
    Footer,
    Header,
    ResultsRun,
    ResultsWriter,
    ScenarioResult,
    Shard,
    Status,
    StepResult,
    totals,
    undefined_results,
)

ALTERED = (
    "the results stream was changed on disk during the run by something other than the "
    "harness; it was rewritten from the harness's own records, and the run fails"
)
#: Notes a scenario leaves for its result record (see the `evidence` fixture).
EVIDENCE_KEY = pytest.StashKey[list[str]]()
DRIVER_KEY = pytest.StashKey[object]()
"""The scenario's driver (see the `driver` fixture), whose stderr lines a failure shows."""
SEARCH = pytest.StashKey[str]()
"""Hypothesis' account of a property's search (see properties_plugin), for its evidence."""
_EVIDENCE_LIMIT = 4000


@dataclass
class _Pending:
    key: str
    criterion: str | None
    feature: str
    scenario: str
    line: int
    started: float | None = None
    """When the scenario's setup began; None if pytest never announced its start."""
    steps: list[StepResult] = field(default_factory=list)
    step_started: float | None = None
    """When the running step began; None between steps (an undefined step never began)."""
    ledger_at_step: dict[str, Tally] = field(default_factory=dict)
    """The ledger as the running step found it, to tell that step's evidence apart."""
    status: Status | None = None
    evidence: str | None = None
    interpretations: list[str] = field(default_factory=list)
    clauses: list[str] = field(default_factory=list)
    violated: list[str] = field(default_factory=list)
    failure: Failure | None = None
    title: str = ""
    example: dict[str, str] = field(default_factory=dict)
    feature_title: str = ""
    planned: list[Step] = field(default_factory=list)
    """Every step of the scenario (background first, outline values substituted)."""
    check: PropertyCheck | None = None
    """Set for a property check: it writes one record per criterion it names."""
    followed: list[str] = field(default_factory=list)
    """A property's readings followed past a divergence (see `FollowedDivergence`)."""
    readings: ReadingLog | None = None
    """The failed checks of readings a Gherkin scenario went on past (see `reading_verdict`)."""
    close_readings: Callable[[], None] | None = None
    ledger: Ledger = field(default_factory=Ledger)
    """What every check of the item judged (see `conformance.spec.evidence`)."""
    close_ledger: Callable[[], None] | None = None

    def failed_step(self) -> FailedStep | None:
        """The step that failed (or had no definition); None when none had begun."""
        failed = next((s for s in reversed(self.steps) if s.status != "passed"), None)
        if failed is None:
            return None
        return FailedStep(
            keyword=failed.keyword, text=failed.text, feature=self.feature, line=failed.line
        )

    def all_steps(self) -> list[StepResult]:
        """The steps that ran, then every planned step that did not, as skipped."""
        unrun = self.planned[len(self.steps) :]
        return self.steps + [
            StepResult(
                keyword=step.keyword.strip(),
                text=step.name,
                line=step.line_number,
                status="skipped",
                duration_s=0.0,
            )
            for step in unrun
        ]


class ResultsRecorder:
    def __init__(
        self,
        path: Path,
        *,
        impl: str,
        database: str | None,
        registry: Registry,
        features_dir: Path,
        inventory: list[ScenarioEntry],
        expectations: dict[str, ExpectedFailure],
        needs_review: list[str],
        claim: Claim | None = None,
        containment: Containment | None = None,
        sign_key: bytes | None = None,
        properties: str = "none",
        seed: int | None = None,
        shard: Shard | None = None,
    ) -> None:
        self._writer = ResultsWriter(path, sign_key=sign_key)
        self._shard = shard
        self._worker = False
        """A `--jobs` worker's: it hands its records home, and its share is not known ahead
        (so no `undefined` record for what it did not run)."""
        self._gathers = False
        """A `--jobs` run's controller's: it runs no item, and writes what the workers made."""
        self._properties = properties
        self._seed = seed
        self._containment = containment or Containment()
        self._redact = REDACT
        self._header: Header | None = None
        self._footer: Footer | None = None
        self.keys_by_nodeid: dict[str, list[str]] = {}
        """Which records each collected pytest item writes, for cross-checking pytest's outcome."""
        self._impl = impl
        self._database = database
        self._registry = registry
        self._features_dir = features_dir.resolve()
        self._inventory = inventory
        self._expectations = expectations
        self._needs_review = needs_review
        self._claim = claim or Claim()
        self._pending: dict[str, _Pending] = {}
        self._seen: list[ScenarioResult] = []
        """Every record made here or handed home so far, as they came."""
        self._written: list[ScenarioResult] = []
        self.implementation_error: str | None = None
        self.clock: Callable[[], float] = time.perf_counter
        """The stopwatch of scenario and step durations (tests substitute their own)."""

    # -- session -------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._worker, self._gathers = is_worker(session.config), is_controller(session.config)
        description, error = self._describe_implementation()
        self.implementation_error = self._redact.optional(error)
        self._header = header_of(
            self._impl,
            self._containment,
            self._inventory,
            self._registry,
            self._claim,
            description=self._redacted_description(description),
            error=self.implementation_error,
            database=masked_url(self._database),
            needs_review=self._needs_review,
        ).model_copy(
            update={"properties": self._properties, "seed": self._seed, "shard": self._shard}
        )
        self._writer.write(self._header)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        for result in in_inventory_order(self._seen, self._inventory) if self._gathers else []:
            self._write(result)
        for result in [] if self._worker else undefined_results(self._written, self._inventory):
            self._write(result)
        altered = self._writer.altered()
        self._footer = Footer(
            finished_at=datetime.now(UTC),
            totals=totals(self._written),
            stopped=stopped_reason(session.config),
            records=len(self._written),
            integrity=ALTERED if altered else None,
        )
        self._writer.write(self._footer)
        if altered:
            self._writer.rewrite()
        self._writer.close()

    def run(self) -> ResultsRun:
        """The run as the harness recorded it, from its own memory (never re-read from disk)."""
        if self._header is None:
            raise RuntimeError("the session never started: nothing was recorded")
        return ResultsRun(header=self._header, scenarios=list(self._written), footer=self._footer)

    def seen(self) -> list[ScenarioResult]:
        """Every record so far, written or not yet (a `--jobs` run writes them at its end)."""
        return list(self._seen)

    def stream_altered(self) -> bool:
        """Whether the stream on disk differs from what the harness wrote (checked again after
        the session: something could have changed it since)."""
        return self._writer.altered()

    def restore_stream(self) -> None:
        self._writer.rewrite()

    # -- collection ----------------------------------------------------------
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            pending = self._identify(item)
            if pending is not None:
                self._pending[item.nodeid] = pending

    # -- verdicts ------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        pending = self._pending.get(item.nodeid)
        if pending is None:
            return
        if pending.status in (None, Status.PASSED):
            self._judge(item, call, report, pending)
        if self._worker and call.when == "setup":
            hand_home(report, KEYS, self.keys_by_nodeid.get(item.nodeid, []))
        if call.when == "teardown":
            records = self._finish(item.nodeid)
            if self._worker:
                hand_home(report, RECORDS, [record.model_dump(mode="json") for record in records])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """What a worker handed home with an item's report (the controller's only)."""
        if not self._gathers:
            return
        for keys in carried(report, KEYS):
            self.keys_by_nodeid[report.nodeid] = [str(key) for key in keys]
        for records in carried(report, RECORDS):
            self._seen += [ScenarioResult.model_validate(record) for record in records]

    def _judge(
        self,
        item: pytest.Item,
        call: pytest.CallInfo[None],
        report: pytest.TestReport,
        pending: _Pending,
    ) -> None:
        """The verdict so far, from one phase's report of a scenario that has not failed."""
        noted: list[str] = item.stash.get(EVIDENCE_KEY, [])
        if pending.check is not None and call.when == "call":
            noted = [*noted, self._search_of(item)]
        notes = "\n".join(noted)
        if report.skipped:
            pending.status, pending.evidence = _skip_verdict(report)
        elif report.failed:
            pending.status, pending.failure, pending.violated = failure_verdict(
                call, pending.failed_step(), pending.interpretations
            )
            said = _implementation_said(item, call)
            if said:
                pending.failure = pending.failure.model_copy(update={"stderr": said})
            if pending.check is not None:
                ended = unreplayed_violation(call.excinfo.value if call.excinfo else None)
                pending.followed = followed_readings(ended)
                pending.failure = pending.failure.model_copy(
                    update={
                        "property_title": pending.check.title,
                        "counterexample": counterexample_of(ended),
                    }
                )
            rendered = pending.failure.render()
            pending.evidence = _clip(f"{rendered}\n\nMeasured:\n{notes}" if notes else rendered)
            self._weigh_readings(pending, call)
            _ledger_the_end(pending, call.excinfo.value if call.excinfo else None)
            if pending.status is Status.NOT_APPLICABLE:
                _reported_as_skipped(report)
        elif call.when == "call":
            pending.status, pending.evidence = Status.PASSED, _clip(notes) if notes else None
            self._weigh_readings(pending, call)
            if pending.status is Status.PASSED:
                pending.ledger.held(pending.clauses)
            if pending.status in (Status.FAILED, Status.DIVERGED):
                _reported_as_failed(report, pending)

    def _weigh_readings(self, pending: _Pending, call: pytest.CallInfo[None]) -> None:
        """Weigh in the checks of readings the scenario went on past, and a check of a reading
        the implementation declared otherwise that stopped it (see `reading_verdict`)."""
        log = pending.readings
        if log is None or call.when != "call":
            return
        error = call.excinfo.value if call.excinfo is not None else None
        verdict = weighed(pending.status or Status.ERRORED, pending.violated, error, log)
        if verdict.status is pending.status and not verdict.note:
            return
        pending.status, pending.violated = verdict.status, verdict.violated
        if verdict.status is Status.DIVERGED:
            pending.failure = first_divergence(log) or pending.failure
        elif verdict.status in (Status.PASSED, Status.NOT_APPLICABLE):
            pending.failure = None
        if verdict.status is Status.NOT_APPLICABLE:
            pending.evidence = _clip(f"{verdict.note}\n\nThe check set aside:\n{pending.evidence}")
            return
        said = f"Readings the scenario went on past:\n{verdict.note}" if verdict.note else ""
        pending.evidence = _clip("\n\n".join(p for p in (pending.evidence, said) if p))

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        """A scenario's duration runs from here (its setup) to the end of its teardown; a
        Gherkin scenario's checks of readings are noted from here on, not raised."""
        pending = self._pending.get(nodeid)
        if pending is not None:
            pending.started = self.clock()
            pending.close_ledger = open_ledger(pending.ledger)
            if pending.check is None:
                pending.readings = ReadingLog(declared=self._declared_readings())
                pending.close_readings = open_reading_log(pending.readings)

    def _declared_readings(self) -> dict[str, str]:
        """The readings the implementation declared, the kit's own among them: one that
        declares the kit's reading and answers otherwise has no alternative to excuse it."""
        description = (self._header.description if self._header else None) or {}
        readings: dict[str, str] = description.get("readings") or {}
        return dict(readings)

    def _finish(self, nodeid: str) -> list[ScenarioResult]:
        """The item's records, once its teardown is over: one, or one per criterion for a
        property check."""
        pending = self._pending.pop(nodeid)
        if pending.close_readings is not None:
            pending.close_readings()
        if pending.close_ledger is not None:
            pending.close_ledger()
        result = ScenarioResult(
            key=pending.key,
            criterion=pending.criterion,
            feature=pending.feature,
            scenario=pending.scenario,
            line=pending.line,
            status=pending.status or Status.ERRORED,
            duration_s=round(_since(self.clock, pending.started), 6),
            evidence=pending.evidence,
            failure=pending.failure,
            title=pending.title,
            example=pending.example,
            feature_title=pending.feature_title,
            steps=pending.all_steps(),
            violated=pending.violated,
            followed=pending.followed,
            interpretations=pending.interpretations,
            clauses=pending.clauses,
            checks=pending.ledger.snapshot(),
        )
        records = [result] if pending.check is None else fanned_out(result, pending.check)
        made = [self._expected(record) for record in records]
        for record in made:
            record.evidence = self._redact.optional(record.evidence)
            self._seen.append(record)
            self._write(record)
        return made

    def _expected(self, result: ScenarioResult) -> ScenarioResult:
        """The record as the expectations file has it: a listed failure is xfail, a listed
        scenario that passed is xpass."""
        expected = self._expectations.get(result.key)
        if expected is None:
            return result
        status, evidence = _apply_expectation(result.status, result.evidence, expected)
        return result.model_copy(update={"status": status, "evidence": evidence})

    def _search_of(self, item: pytest.Item) -> str:
        """What a property's search was: its budget, the seed, and Hypothesis' statistics."""
        statistics = item.stash.get(SEARCH, "no search was made")
        search = search_of_item(item)
        if search is None or self._seed is None:
            return f"Hypothesis, budget {self._properties}, seed {self._seed}:\n{statistics}"
        own = search_seed(self._seed, search)
        return (
            f"Hypothesis, budget {self._properties}, seed {self._seed} (search {search} of the "
            f"check's, drawing from seed {own}, derived from the run's):\n{statistics}"
        )

    # -- steps ---------------------------------------------------------------
    def pytest_bdd_before_step(self, request: pytest.FixtureRequest, step: Step) -> None:
        pending = self._pending.get(request.node.nodeid)
        if pending is not None:
            pending.step_started = self.clock()
            pending.ledger_at_step = pending.ledger.snapshot()
            if pending.readings is not None:
                pending.readings.step = FailedStep(
                    keyword=step.keyword.strip(),
                    text=step.name,
                    feature=pending.feature,
                    line=step.line_number,
                )

    def pytest_bdd_after_step(self, request: pytest.FixtureRequest, step: Step) -> None:
        self._record_step(request, step, "passed")

    def pytest_bdd_step_error(self, request: pytest.FixtureRequest, step: Step) -> None:
        self._record_step(request, step, "failed")

    def pytest_bdd_step_func_lookup_error(self, request: pytest.FixtureRequest, step: Step) -> None:
        self._record_step(request, step, "undefined")

    def _record_step(
        self,
        request: pytest.FixtureRequest,
        step: Step,
        status: Literal["passed", "failed", "undefined"],
    ) -> None:
        pending = self._pending.get(request.node.nodeid)
        if pending is None:
            return
        elapsed = _since(self.clock, pending.step_started)
        pending.steps.append(
            StepResult(
                keyword=step.keyword.strip(),
                text=step.name,
                line=step.line_number,
                status=status,
                duration_s=round(elapsed, 6),
                checks=pending.ledger.since(pending.ledger_at_step),
            )
        )
        pending.step_started = None

    # -- helpers -------------------------------------------------------------
    def _write(self, result: ScenarioResult) -> None:
        self._written.append(result)
        self._writer.write(result)

    def _identify(self, item: pytest.Item) -> _Pending | None:
        template = scenario_template(item)
        if template is None:
            return self._identify_property(item)
        callspec = getattr(item, "callspec", None)
        example = callspec.id if callspec is not None and template.templated else None
        criteria = [tag for tag in template.tags if CRITERION_TAG.fullmatch(tag)]
        criterion = criteria[0] if len(criteria) == 1 else None
        path = feature_file(template.feature.filename, self._features_dir)
        key = scenario_key(path, template.name, example)
        self.keys_by_nodeid[item.nodeid] = [key]
        values: dict[str, str] = (
            dict(callspec.params.get("_pytest_bdd_example", {})) if callspec and example else {}
        )
        rendered = template.render(values)
        return _Pending(
            key=key,
            title=rendered.name,
            example=values,
            feature_title=template.feature.name,
            planned=list(rendered.steps),
            criterion=criterion,
            feature=path,
            scenario=template.name,
            line=template.line_number,
            interpretations=interpretation_tags(template.tags),
            clauses=clause_tags(criterion, template.tags),
        )

    def _identify_property(self, item: pytest.Item) -> _Pending | None:
        check = check_of_item(item)
        if check is None:
            return None
        self.keys_by_nodeid[item.nodeid] = [check.key(c) for c in check.criteria]
        return _Pending(
            key=check.key(check.criteria[0]),
            title=check.title,
            feature_title=MODULE_TITLES[check.module],
            criterion=None,
            feature=check.feature_file,
            scenario=check.title,
            line=check.line(),
            interpretations=check.interpretations(),
            check=check,
        )

    def _describe_implementation(self) -> tuple[dict[str, object] | None, str | None]:
        try:
            with tempfile.TemporaryDirectory(prefix="describe-", dir=RUN_FOLDER.path()) as scratch:
                driver = open_driver(
                    self._impl, self._database, Path(scratch), containment=self._containment
                )
                try:
                    return driver.describe().model_dump(mode="json"), None
                finally:
                    driver.close()
        except Exception as error:  # any failure here means the implementation is unusable
            return None, unusable_cause(error)

    def _redacted_description(
        self, description: dict[str, object] | None
    ) -> dict[str, object] | None:
        """What the implementation said of itself, with any value of the harness's environment
        it repeats redacted."""
        return None if description is None else self._redact.values(description)


def in_inventory_order(
    records: list[ScenarioResult], inventory: list[ScenarioEntry]
) -> list[ScenarioResult]:
    """The records in the inventory's order; a record of no inventoried scenario last."""
    place = {entry.key: index for index, entry in enumerate(inventory)}
    return sorted(records, key=lambda record: place.get(record.key, len(place)))


def _implementation_said(item: pytest.Item, call: pytest.CallInfo[None]) -> list[str]:
    """The implementation's last stderr lines, from the scenario's driver or the property's
    factory, unless the failure is a fault whose account already holds them."""
    if call.excinfo is not None and isinstance(call.excinfo.value, ImplementationFault):
        return []
    factory = getattr(item, "funcargs", {}).get("drivers")
    return [*stderr_of(item.stash.get(DRIVER_KEY, None)), *stderr_of(factory)]


def followed_readings(error: BaseException | None) -> list[str]:
    """The readings a property followed to the end past a divergence, if that is how it ended."""
    return error.readings() if isinstance(error, FollowedDivergence) else []


def _ledger_the_end(pending: _Pending, error: BaseException | None) -> None:
    """The check that ended an item, into its ledger: a break of the clauses it cites (of the
    readings, where it cites only readings that nothing explains), or a divergence."""
    error = unreplayed_violation(error)
    if not isinstance(error, ClauseViolation) or isinstance(error, FollowedDivergence):
        if isinstance(error, FollowedDivergence):
            for question, names in error.allowed.items():
                pending.ledger.diverged(question, (f"{question}={n}" for n in names))
        return
    if pending.status is Status.DIVERGED:
        for question, names in error.allowed.items():
            pending.ledger.diverged(question, (f"{question}={n}" for n in names))
    elif pending.status is Status.NOT_APPLICABLE:
        pending.ledger.set_aside(error.cites)
    elif pending.status is Status.FAILED:
        clauses = [cite for cite in error.cites if not INTERPRETATION_ID.fullmatch(cite)]
        pending.ledger.broken(clauses or error.cites)
        for question, names in error.allowed.items() if error.readings_apart else ():
            if names:
                pending.ledger.diverged(question, (f"{question}={n}" for n in names))
            else:
                pending.ledger.broken([question])


def _reported_as_failed(report: pytest.TestReport, pending: _Pending) -> None:
    """A scenario whose steps all returned while a check of a reading it went on past broke
    (or diverged): pytest reports it failed, as its record says, so that harness memory's
    check of each record against pytest's outcome finds them agreeing."""
    report.outcome = "failed"
    report.longrepr = pending.evidence or f"{pending.status}: a check of a reading"


def _reported_as_skipped(report: pytest.TestReport) -> None:
    """A scenario stopped by a check of a reading the implementation declares otherwise
    verified nothing: pytest reports it skipped, as its record says, so that the run's check of
    each record against pytest's outcome (harness_memory) finds them agreeing."""
    path, line, _ = report.location
    report.outcome = "skipped"
    report.longrepr = (path, (line or 0) + 1, f"Skipped: {NOT_APPLICABLE_PREFIX}declared reading")


def _skip_verdict(report: pytest.TestReport) -> tuple[Status, str]:
    reason = _skip_reason(report)
    if reason.startswith(NOT_APPLICABLE_PREFIX):
        return Status.NOT_APPLICABLE, reason.removeprefix(NOT_APPLICABLE_PREFIX)
    return Status.ERRORED, f"skipped without a not-applicable reason: {reason}"


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _apply_expectation(
    status: Status, evidence: str | None, expected: ExpectedFailure
) -> tuple[Status, str | None]:
    if status is Status.FAILED:
        return Status.XFAIL, f"expected failure ({expected.issue}): {evidence}"
    if status is Status.PASSED:
        return Status.XPASS, f"listed as a known failure ({expected.issue}) but passed"
    return status, evidence


def _clip(text: str) -> str:
    """Redacted first (a cut could leave half a secret), then cut to the evidence limit."""
    text = REDACT.text(text)
    return text if len(text) <= _EVIDENCE_LIMIT else text[:_EVIDENCE_LIMIT] + "\n… (clipped)"


def _since(clock: Callable[[], float], began: float | None) -> float:
    """Seconds on `clock` since `began`; 0 for something never seen to begin."""
    return 0.0 if began is None else clock() - began
