"""Runs an office schedule through the driver port and checks, after every operation, all that
the capability shows: the outcome, the run rows, each reason's counter move, the warning and its
fields, the label values, and (for a refusal) the mutation kept.

So no clause is checked on one path only: a refusal's counter and log are checked wherever a
refusal happens (keyed, keyless, raw, concurrent, after a restart, after odd wakes), a degraded
admission's wherever one happens. The schedule's steps so far are kept as a Gherkin scenario in
the features' own phrasing, noted when a check fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from hypothesis import note

from conformance.driver import (
    AssignmentResult,
    ConcurrentCall,
    Driver,
    OfficeVocabulary,
    Outcome,
    RateLimitReason,
    Run,
    RunStatus,
    WakeResult,
    WarningLog,
)
from conformance.oracle.office_shapes import (
    REFUSAL_MISREPORTED,
    SUPPRESSED_QUIET,
    counts_as_agent_run,
)
from conformance.oracle.office_telemetry import (
    LOGGED_CLAUSES,
    REQUIRED_FIELD_CLAUSES,
    Telemetry,
    count_in_range,
    count_within,
    holds_identifier,
    moves_between,
    without_field,
)
from conformance.oracle.stored_runs import (
    DELETION_KEPT_STEP,
    KEPT_STEP,
    RESTART_KEPT_STEP,
    counted_toward,
    expect_all_kept,
    expect_kept,
    stored_at,
)
from conformance.properties.gherkin import CRITERION_PLACEHOLDER, SCENARIO_NOTE, Steps, instant_text
from conformance.properties.hostile_data import ASSIGNEES, OFFICE_TASKS, OFFICE_WORKSPACE
from conformance.properties.office_model import (
    ODD_ROW_CLAUSES,
    REFUSAL,
    Expected,
    ExpectedWarning,
    OfficeModel,
    row_of,
)
from conformance.properties.office_operations import (
    Assign,
    Batch,
    DeleteNewest,
    Operation,
    Produce,
    Raw,
    Redeliver,
    Restart,
    describe,
    path_of,
    workspace_steps,
)
from conformance.properties.office_then_steps import then_effects, then_outcome
from conformance.properties.surprises import Surprises
from conformance.spec.clause_check import (
    ClauseViolation,
    expect,
    port_requires,
    port_value,
    violated,
)

REFUSAL_LOGGED = LOGGED_CLAUSES[REFUSAL]


@dataclass(frozen=True)
class Observation:
    runs: list[Run]
    telemetry: Telemetry
    warnings: int

    def ids(self) -> set[str]:
        return {run.run_id for run in self.runs}

    def run(self, run_id: str | None) -> Run | None:
        return next((run for run in self.runs if run.run_id == run_id), None)


@dataclass
class OfficeEffects:
    """One schedule's run: the driver, the model, and the scenario written so far."""

    driver: Driver
    model: OfficeModel
    vocabulary: OfficeVocabulary
    lines: list[str] = field(default_factory=list)
    steps: Steps = field(init=False)
    surprises: Surprises = field(default_factory=Surprises)
    store: list[Run] = field(default_factory=list)
    """The runs as last read and accepted: what every stored field is held to next."""

    def __post_init__(self) -> None:
        self.lines += [
            f"@{CRITERION_PLACEHOLDER}",
            "Scenario: every operation's effects are the model's, as a counterexample showed",
        ]
        self.steps = Steps(self.lines)
        for keyword, text in workspace_steps():
            self.steps.add(keyword, text)

    # -- the world ------------------------------------------------------

    def prepare(self) -> None:
        driver = self.driver
        driver.create_workspace(OFFICE_WORKSPACE)
        for agent in ASSIGNEES:
            driver.create_agent(OFFICE_WORKSPACE, agent, can_assign_tasks=agent in ("ada", "bob"))
        for task_id in OFFICE_TASKS:
            driver.create_task(OFFICE_WORKSPACE, task_id)

    def observe(self) -> Observation:
        return Observation(
            self.driver.list_runs(),
            Telemetry(self.driver.telemetry(), self.vocabulary),
            len(self.driver.warning_logs()),
        )

    @contextmanager
    def kept_as_scenario(self) -> Iterator[None]:
        """Run the schedule; at its end, every distinct break it met fails together (see
        `surprises`), with the schedule as a Gherkin scenario, as is any other failure (an error
        the implementation answered, a fault): the breaks met before it are still raised, with
        the error noted, never dropped for it."""
        try:
            yield
            self.surprises.raise_if_any()
        except Exception as error:
            note(SCENARIO_NOTE + "\n".join(self.lines))
            if isinstance(error, ClauseViolation):
                raise
            self.surprises.raise_if_any(after=error)
            raise

    # -- performing -----------------------------------------------------

    def perform(self, op: Operation) -> None:
        """One operation and every check of it; a break is noted and the model adopts the
        store as the implementation shows it, so the schedule goes on to its end."""
        try:
            self.performed(op)
        except ClauseViolation as violation:
            self.surprises.note(violation, describe(op))
            self.store = self.driver.list_runs()
            self.model.adopt(self.store, {run.run_id: counted_toward(run) for run in self.store})

    def performed(self, op: Operation) -> None:
        note(describe(op))
        if isinstance(op, Redeliver) and not self.driver.list_runs():
            return
        self.driver.set_clock(op.at)
        self.steps.add("When", f'the clock reads "{instant_text(op.at)}"')
        for text in op.when():
            self.steps.add("When", text)
        merged: set[str] = set()
        if isinstance(op, Restart):
            before = self.driver.list_runs()
            self.driver.restart()
            self.model.restart()
            self.check_store_across(before, "restart", op.at)
            return
        if isinstance(op, DeleteNewest):
            self.check_store_across(self.delete_newest(), "deletion", op.at)
            return
        if isinstance(op, Batch):
            merged = self.batch(op)
        elif isinstance(op, Redeliver):
            merged = self.wake(self.redelivery(op))
        elif isinstance(op, Assign | Produce | Raw):
            merged = self.wake(op)
        self.check_store(merged)

    def redelivery(self, op: Redeliver) -> Raw:
        """The stored run's wake as it reads now (its agent, reason, payload and key), the way
        the features' step delivers it again."""
        runs = self.driver.list_runs()
        run = runs[-1] if op.newest else runs[0]
        return Raw(op.at, op.settle_as, run.agent_id, run.reason, run.payload, run.dedup_key)

    def delete_newest(self) -> list[Run]:
        """The other runs, as read just before the newest was deleted (none if none was)."""
        runs = self.driver.list_runs()
        for newest in runs[-1:]:
            self.driver.delete_run(newest.run_id)
            self.model.delete(newest.run_id)
        return runs[:-1]

    def wake(self, op: Assign | Produce | Raw) -> set[str]:
        """One wake and its checks; the run it was reported merged into, if any."""
        before = self.observe()
        expected, result = self.answer(op)
        after = self.observe()
        outcome = None if result is None else result.outcome
        merged = outcome is Outcome.COALESCED
        decided_degraded = not merged and expected.degraded
        if decided_degraded and not self.model.settle_fault(degraded_moved(before, after)):
            expected = self.model.predict(op)
        then_outcome(self.steps, expected, merged)
        if merged or (outcome is Outcome.DEDUPLICATED and expected.duplicate):
            if merged:
                self.check_merged(result, op, after)
            expected = replace(expected, moves={}, move_cites=SUPPRESSED_QUIET, warning=None)
        else:
            self.check_outcome(expected, outcome)
            self.model.fault_armed = self.model.fault_armed and not expected.degraded
        then_effects(self.steps, expected)
        self.check_moves(before, after, expected.moves, expected.move_cites)
        if expected.warning is not None:
            self.check_warning(before, expected.warning)
        self.check_labels(after)
        if before.runs:  # a check of stored rows needs rows
            self.steps.add("Then", KEPT_STEP.format(that="that wake", it="it"))
        self.check_rows(before, after, expected, result, op)
        return {result.run_id} if merged and result and result.run_id else set()

    def answer(self, op: Assign | Produce | Raw) -> tuple[Expected, WakeResult | None]:
        driver = self.driver
        if isinstance(op, Produce):
            return self.model.produced(op), driver.produce_wake(
                op.producer, op.task_id, op.agent_id
            )
        if isinstance(op, Raw):
            if op.degraded:
                driver.fail_next_count_read()
                self.model.arm_fault()
            expected = self.model.raw(op)
            return expected, driver.enqueue_wake(
                op.agent_id, op.reason, op.payload, dedup_key=op.dedup_key
            )
        if op.degraded:
            driver.fail_next_count_read()
            self.model.arm_fault()
        expected = self.model.assignment(op)
        assign = driver.assign_task_keyless if op.keyless else driver.assign_task
        result = assign(op.task_id, op.assignee, acting_agent_id=op.acting)
        self.check_mutation(op, result, expected)
        return expected, result.wake

    # -- checks ---------------------------------------------------------

    def check_outcome(self, expected: Expected, outcome: Outcome | None) -> None:
        shown = "no wake" if outcome is None else outcome.value
        if expected.refused:  # reported as a refusal at all (003.5), then the right one
            expect(
                shown not in REFUSAL_MISREPORTED,
                REFUSAL_MISREPORTED.get(shown, ("AC-OFFICE-ASSIGN-RATE-003.5/distinct-outcome",)),
                f"the wake came out {shown}; the model says it is refused",
            )
        expect(
            outcome in expected.outcomes,
            expected.outcome_cites,
            f"the wake came out {shown}; the model says {named(expected)}",
        )

    def check_merged(self, result: WakeResult | None, op: Operation, after: Observation) -> None:
        """A merge stands whatever run it chose (which runs absorb a wake is the coalescer's
        business), but it must be one: a stored run that has absorbed a wake."""
        merged = after.run(None if result is None else result.run_id)
        expect(
            merged is not None and merged.coalesced_count > 0,
            "AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",
            f"{op!r} was reported merged into {result!r}, which reads {merged!r}",
        )
        if merged is not None:
            self.model.recount({merged.run_id: counted_toward(merged)})

    def check_mutation(self, op: Assign, result: AssignmentResult, expected: Expected) -> None:
        """A refusal must leave the new assignee stored and the generation bumped (001.7)."""
        port_requires(
            result.task_id == op.task_id, f"the mutation answered for task {result.task_id!r}"
        )
        if result.wake is None or result.wake.outcome is not Outcome.RATE_LIMITED:
            return
        stored = self.driver.get_task(op.task_id)
        expect(
            stored.assignee_agent_id == op.assignee and result.assignee_agent_id == op.assignee,
            "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept",
            f"after a refused wake, task {op.task_id} reads assignee {stored.assignee_agent_id!r}, "
            f"not {op.assignee!r}",
        )

    def check_moves(
        self,
        before: Observation,
        after: Observation,
        moves: dict[RateLimitReason, int],
        cites: tuple[str, ...],
    ) -> None:
        moved = moves_between(before.telemetry, after.telemetry)
        want = {after.telemetry.label_of(reason): float(amount) for reason, amount in moves.items()}
        expect(
            moved == want,
            cites,
            f"{self.vocabulary.rate_limit_counter} moved by {moved or 'nothing'}, the model says "
            f"{want or 'nothing'}",
        )
        self.check_closed_reasons(after.telemetry)

    def check_closed_reasons(self, telemetry: Telemetry) -> None:
        allowed = {telemetry.label_of(reason) for reason in RateLimitReason}
        stray = [
            s.labels
            for s in telemetry.rate_limit_samples()
            if s.labels.get(self.vocabulary.reason_label) not in allowed
        ]
        expect(
            not stray,
            "AC-OFFICE-ASSIGN-RATE-003.1/closed-reasons",
            f"rate-limit samples outside the three reasons: {stray}",
        )

    def check_warning(self, before: Observation, wanted: ExpectedWarning) -> None:
        logged = self.driver.warning_logs()[before.warnings :]
        carrying = [w for w in logged if self.carries(w, wanted)]
        expect(
            bool(carrying),
            LOGGED_CLAUSES[wanted.kind],
            f"expected a warning with {wanted.carried}"
            + (
                f" and observed_count {wanted.observed_count}"
                if wanted.observed_count is not None
                else ""
            )
            + f"; the wake logged {[w.fields for w in logged] or 'no warning'}",
        )
        for name in wanted.absent:  # present and empty: OF-8's question, not a break
            without_field(carrying, name, f"the {wanted.kind} warning")
        for name in wanted.non_empty:
            expect(
                any(str(w.fields.get(name) or "").strip() for w in carrying),
                REQUIRED_FIELD_CLAUSES[name],
                f"the {wanted.kind} warning must carry a non-empty {name!r}: {fields_of(carrying)}",
            )

    def carries(self, warning: WarningLog, wanted: ExpectedWarning) -> bool:
        fields = warning.fields
        for name, value in wanted.carried.items():
            if name not in fields:
                return False
            shown = str(fields[name])
            if name == "reason":
                reason = RateLimitReason(value)
                if shown not in (reason.value, self.vocabulary.reasons.of(reason)):
                    return False
            elif shown != value:
                return False
        if wanted.observed_count is None:
            return True
        return count_within(fields.get("observed_count"), wanted.observed_count, self.model.merges)

    def check_labels(self, after: Observation) -> None:
        identifiers = {OFFICE_WORKSPACE, *ASSIGNEES, *OFFICE_TASKS, *after.ids()}
        leaks = sorted(
            (name, value, ident)
            for sample in after.telemetry.rate_limit_samples()
            for name, value in sample.labels.items()
            for ident in identifiers
            if holds_identifier(value, ident)
        )
        expect(
            not leaks,
            "AC-OFFICE-ASSIGN-RATE-003.2/no-identifier-labels",
            f"counter labels carry identifiers: {leaks}",
        )

    def check_rows(
        self,
        before: Observation,
        after: Observation,
        expected: Expected,
        result: WakeResult | None,
        op: Assign | Produce | Raw,
    ) -> None:
        """A refusal inserts no row and merges into none; an admission inserts its row, which
        counts exactly when the model says; no other row comes or goes."""
        added, gone = after.ids() - before.ids(), before.ids() - after.ids()
        expect(
            not gone, "AC-OFFICE-ASSIGN-RATE-002.4/stateless", f"{op!r} removed rows {sorted(gone)}"
        )
        outcome = None if result is None else result.outcome
        if outcome is not Outcome.QUEUED:
            cite = (
                "AC-OFFICE-ASSIGN-RATE-001.6/no-row"
                if outcome is Outcome.RATE_LIMITED
                else "AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted"
            )
            expect(not added, cite, f"{op!r} came out {outcome} yet inserted rows {sorted(added)}")
            if outcome is Outcome.RATE_LIMITED:
                self.check_no_merge(before, after)
            return
        run_id = port_value(
            result.run_id if result else None, f"{op!r} was queued without naming its run"
        )
        expect(
            added == {run_id},
            expected.outcome_cites,
            f"{op!r} was queued as {run_id}; rows added: {sorted(added)}",
        )
        stored = port_value(
            after.run(run_id), f"{op!r} was queued as {run_id}, which is not stored"
        )
        self.check_stamp(op, stored, expected)
        self.check_stored_as_asked(op, stored, expected)
        self.driver.set_run_status(run_id, op.settle_as)
        self.steps.add("When", f'the run of that wake is marked "{op.settle_as}"')
        self.model.insert(run_id, expected, row_of(stored, path_of(op), op.settle_as == "queued"))

    def check_no_merge(self, before: Observation, after: Observation) -> None:
        absorbed = {run.run_id: run.coalesced_count for run in before.runs}
        grown = [
            run.run_id
            for run in after.runs
            if run.coalesced_count != absorbed.get(run.run_id, run.coalesced_count)
        ]
        expect(
            not grown,
            "AC-OFFICE-ASSIGN-RATE-001.6/no-merge",
            f"a refused wake was merged into {grown}",
        )

    def check_stamp(self, op: Operation, stored: Run, expected: Expected) -> None:
        """The mutation's agent wake says agent on the row (001.13); a user's does not (001.1)."""
        if not isinstance(op, Assign):
            return
        says_agent = counts_as_agent_run(stored, op.task_id)
        if op.acting:
            expect(
                says_agent,
                "AC-OFFICE-ASSIGN-RATE-001.13/mutation-stamps-agent",
                f"the agent mutation's run reads {stored.payload}",
            )
        else:
            expect(
                not says_agent,
                "AC-OFFICE-ASSIGN-RATE-001.1/internal-caller-is-user",
                f"a user's assignment's run reads {stored.payload}",
            )

    def check_stored_as_asked(self, op: Operation, stored: Run, expected: Expected) -> None:
        """An admitted row holds what later decisions read: the task it counts toward, the
        instant it frees its place from (at whatever precision the store keeps), its key. Like
        the store's check, these only ever break: a row stored right proves no clause."""
        counts = counted_toward(stored)
        if counts != expected.counts_for:
            raise violated(
                counting_cites(counts, expected),
                f"the admitted row counts toward {counts!r}, the model says "
                f"{expected.counts_for!r}: {stored.payload}",
            )
        if expected.counts_for is None:
            return
        if not stored_at(op.at, stored.requested_at):
            raise violated(
                "AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",
                f"a wake admitted at {instant_text(op.at)} is stored as requested at "
                f"{instant_text(stored.requested_at)}",
            )
        if isinstance(op, Raw) and op.dedup_key not in (None, stored.dedup_key):
            raise violated(
                "AC-OFFICE-ASSIGN-RATE-002.5/keyed-once",
                f"a wake keyed {op.dedup_key!r} is stored keyed {stored.dedup_key!r}",
            )

    def check_store(self, merged: set[str]) -> None:
        """After every wake or batch, every run stored before it reads as it did, but for what
        the spec lets change (see `conformance.oracle.stored_runs`); the scenario's step makes
        the same check."""
        before, self.store = self.store, self.driver.list_runs()
        expect_kept(before, self.store, merged)

    def check_store_across(
        self, kept: list[Run], across: Literal["restart", "deletion"], at: datetime
    ) -> None:
        """Across a restart every run stored before reads as it did, across a deletion every
        other one, and none still in the window is gone; the scenario's step checks the same."""
        self.store = self.driver.list_runs()
        if not kept:
            return
        self.steps.add("Then", RESTART_KEPT_STEP if across == "restart" else DELETION_KEPT_STEP)
        expect_all_kept(kept, self.store, across, at - self.model.window)

    # -- concurrency ------------------------------------------------------

    def batch(self, op: Batch) -> set[str]:
        """A batch of assignments at once and its checks; the runs its wakes merged into."""
        before = self.observe()
        observed = self.model.in_window(op.task_id, op.at)
        room = max(0, self.model.allowance - observed)
        calls = [
            ConcurrentCall(
                operation="assign_task",
                arguments={
                    "task_id": op.task_id,
                    "assignee_agent_id": who,
                    "acting_agent_id": op.acting,
                },
            )
            for who in op.assignees
        ]
        answers = self.driver.run_concurrently(calls)
        results: list[AssignmentResult] = []
        for answer in answers:
            expect(
                answer.ok,
                "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept",
                f"a concurrent assignment failed: {answer.error} {answer.message}",
            )
            results.append(AssignmentResult.model_validate(answer.result))
        outcomes = [result.wake.outcome if result.wake else None for result in results]
        admitted = outcomes.count(Outcome.QUEUED)
        refused = outcomes.count(Outcome.RATE_LIMITED)
        merged = outcomes.count(Outcome.COALESCED)
        after = self.observe()
        degraded = self.degraded_in_batch(before, after, admitted + refused)
        self.steps.add(
            "Then", "every refusal among those wakes moved the rate-limit counter and was logged"
        )
        if observed >= self.model.allowance and not self.model.fault_armed:
            self.steps.add("Then", 'each of those wakes was "rate_limited" or "coalesced"')
        expect(
            all(o in (Outcome.QUEUED, Outcome.RATE_LIMITED, Outcome.COALESCED) for o in outcomes),
            "AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",
            f"concurrent agent wakes came out {[str(o) for o in outcomes]}",
        )
        expect(
            refused == 0 or admitted >= room - merged,
            "AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early",
            f"{refused} refused while only {admitted} of the {room} places left were taken"
            + (f" ({merged} merged, each of which may relabel a row)" if merged else ""),
        )
        expect(
            admitted <= (len(calls) if observed < self.model.allowance else 0) + degraded,
            (
                "AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",
                "AC-OFFICE-ASSIGN-RATE-002.1/over-admission-bounded",
            ),
            f"{admitted} of {len(calls)} wakes evaluated at once were admitted, on a window that "
            f"held {observed} admitted wakes before any of them began (allowance "
            f"{self.model.allowance}): each must have read at least those",
        )
        moves = {
            RateLimitReason.ALLOWANCE_EXHAUSTED: refused,
            RateLimitReason.COUNT_READ_FAILED: degraded,
        }
        self.check_moves(
            before,
            after,
            {reason: amount for reason, amount in moves.items() if amount},
            ("AC-OFFICE-ASSIGN-RATE-003.1/counted-by-reason",),
        )
        self.note_fault_in_batch(degraded, merged)
        self.check_batch_warnings(before, op, refused, observed)
        self.check_labels(after)
        added = after.ids() - before.ids()
        expect(
            len(added) == admitted,
            "AC-OFFICE-ASSIGN-RATE-001.6/no-row",
            f"{admitted} admitted, rows added: {sorted(added)}",
        )
        targets = merge_targets(results)
        if targets:  # each recount widens the model's tolerance by one merge
            self.model.recount({t: counted_toward(run) for t in targets if (run := after.run(t))})
        if before.runs:  # a check of stored rows needs rows
            self.steps.add("Then", KEPT_STEP.format(that="those wakes", it="they"))
        self.settle_every_run(after.runs, added, op.settle_as)
        return targets

    def degraded_in_batch(self, before: Observation, after: Observation, decided: int) -> int:
        """With a fault armed, one count read of the batch may fail, or none: whether reads made
        inside a concurrent batch meet a hook armed outside it is the implementation's. The
        counter says which; more than one is wrong."""
        if not self.model.fault_armed or not decided:
            return 0
        return int(degraded_moved(before, after))

    def note_fault_in_batch(self, degraded: int, merged: int) -> None:
        """A degraded wake spent the fault. Without one, a wake of the batch that merged may
        still have spent it: its read failed, and deciding it again it found a sibling's run
        to merge into (the reference retries in a fresh transaction)."""
        if degraded:
            self.model.fault_armed = self.model.fault_maybe_spent = False
        elif merged and self.model.fault_armed:
            self.model.fault_maybe_spent = True

    def settle_every_run(self, runs: list[Run], added: set[str], status: RunStatus) -> None:
        """Mark every stored run as the features' step does, the batch's own rows among them."""
        for run in runs:
            self.driver.set_run_status(run.run_id, status)
            if run.run_id in added:
                self.model.insert_concurrent(run.run_id, row_of(run, "concurrent", False))
            row = self.model.runs.get(run.run_id)
            if row is not None:
                row.queued = status == "queued"
        self.steps.add("When", f'every run in the queue is marked "{status}"')

    def check_batch_warnings(
        self, before: Observation, op: Batch, refused: int, observed: int
    ) -> None:
        """One refusal warning per refusal, each naming the task, the acting agent, the allowance
        and a count no lower than the allowance and no higher than what the batch could add."""
        logged = self.driver.warning_logs()[before.warnings :]
        allowance, tolerance = self.model.allowance, self.model.merges
        low, high = allowance - tolerance, observed + len(op.assignees) - 1 + tolerance
        fitting = [
            w
            for w in logged
            if str(w.fields.get("task_id")) == op.task_id
            and str(w.fields.get("acting_agent_id")) == op.acting
            and str(w.fields.get("allowance")) == str(allowance)
            and str(w.fields.get("assignee_agent_profile_id")) in op.assignees
            and count_in_range(w.fields.get("observed_count"), low, high)
        ]
        expect(
            len(fitting) >= refused,
            REFUSAL_LOGGED,
            f"{refused} concurrent refusals, {len(fitting)} refusal warnings fit: "
            f"{fields_of(logged)}",
        )


def degraded_moved(before: Observation, after: Observation) -> bool:
    """Whether the counter shows exactly one degraded admission between the two reads."""
    label = after.telemetry.label_of(RateLimitReason.COUNT_READ_FAILED)
    return moves_between(before.telemetry, after.telemetry).get(label) == 1


def fields_of(warnings: list[WarningLog]) -> list[dict[str, object]]:
    return [warning.fields for warning in warnings]


def named(expected: Expected) -> str:
    return " or ".join("no wake" if o is None else o.value for o in expected.outcomes)


def merge_targets(results: list[AssignmentResult]) -> set[str]:
    return {
        result.wake.run_id
        for result in results
        if result.wake and result.wake.run_id and result.wake.outcome is Outcome.COALESCED
    }


def counting_cites(counts: str | None, expected: Expected) -> tuple[str, ...]:
    """Why an admitted row must count toward the task the model says: another task's row uses
    up none of this one's allowance; a row that should count and does not lets more in; one
    that should not and does is an out-of-scope wake consuming the allowance."""
    if counts and expected.counts_for:
        return ("AC-OFFICE-ASSIGN-RATE-001.3/per-task",)
    if expected.counts_for:
        return ("AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",)
    return ODD_ROW_CLAUSES.get(expected.shape, ("AC-OFFICE-ASSIGN-RATE-001.4/admitted-consume",))
