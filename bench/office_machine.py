"""The office effects search drawn as one schedule, beside the same search as a rule-based
machine: how long each takes to find and shrink a counterexample, and how long that is.

Both draw the same operations from `conformance.properties.office_operations` and judge them
with the same `OfficeEffects`; only the drawing differs. The schedule (what the kit ships) draws
an opening and a list of operations, each after a drawn gap. The machine is Hypothesis' stateful
style: an `initialize` rule makes the opening, one rule per kind of operation (each drawing its
own gap), a bundle of assignments for a rule that repeats one. A cell is the wall time of one
search of up to `--examples` examples against an in-process mutant from one seed, shrinking
included, and the operations its counterexample holds after the opening ("missed": none found).

    python -m bench.office_machine --examples 100 --seeds 1 2 \
        --mutant keyless_refusal_silent --mutant merge_refreshes_instant
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)
from rich.console import Console
from rich.table import Table

from conformance.adapters.factory import open_driver
from conformance.driver import Description, Driver
from conformance.properties.hostile_data import ACTING_AGENTS, ASSIGNEES, OFFICE_TASKS
from conformance.properties.office_effects import OfficeEffects
from conformance.properties.office_operations import (
    ANY_ACTING,
    ANY_ASSIGNEE,
    ANY_TASK,
    REPEAT_GAPS,
    SETTLING,
    Assign,
    Batch,
    DeleteNewest,
    Operation,
    Powers,
    Produce,
    Redeliver,
    Restart,
    assigned_by_someone,
    assignments,
    effect_schedules,
    gaps,
    raw_wakes,
)
from conformance.properties.test_office_effects import effects_of, powers_of

START = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)
STEPS = 14
"""Operations after the opening, at most: the schedule's size at the `ci` budget."""


@dataclass(frozen=True)
class Cell:
    seconds: float
    operations: int | None
    """After the opening, in the counterexample; None when the search found none."""

    def __str__(self) -> str:
        if self.operations is None:
            return f"{self.seconds:.0f} s, missed"
        plural = "" if self.operations == 1 else "s"
        return f"{self.seconds:.0f} s, {self.operations} operation{plural}"


class Search:
    """One implementation's world: what it declares, and a fresh driver and effects per
    example, the program of the last example kept for counting."""

    def __init__(self, impl: str, scratch: Path) -> None:
        self.impl, self.scratch = impl, scratch
        with closing(self.driver()) as driver:
            self.description: Description = driver.describe()
        self.powers: Powers = powers_of(self.description)
        self.performed: list[Operation] = []

    def driver(self) -> Driver:
        return open_driver(self.impl, None, Path(tempfile.mkdtemp(dir=self.scratch)))

    def effects(self, driver: Driver) -> OfficeEffects:
        effects = effects_of(driver, self.description)
        effects.prepare()
        self.performed = []
        return effects

    def perform(self, effects: OfficeEffects, operation: Operation) -> None:
        self.performed.append(operation)
        effects.perform(operation)


def search_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        report_multiple_bugs=False,
        phases=[phase for phase in Phase if phase is not Phase.explain],
        suppress_health_check=list(HealthCheck),
    )


def as_a_schedule(search: Search, examples: int, seed_value: int) -> None:
    @seed(seed_value)
    @search_settings(examples)
    @given(effect_schedules(search.powers, START, STEPS, None))
    def schedule_search(schedule: list[Operation]) -> None:
        with closing(search.driver()) as driver:
            effects = search.effects(driver)
            for operation in schedule:
                search.perform(effects, operation)
            effects.surprises.raise_if_any()

    schedule_search()


def as_a_machine(search: Search, examples: int, seed_value: int) -> None:
    machine = office_machine(search)
    machine._hypothesis_internal_use_seed = seed_value  # what @seed sets on a test
    run_state_machine_as_test(machine, settings=search_settings(examples))


def office_machine(search: Search) -> type[RuleBasedStateMachine]:
    powers = search.powers
    settle = SETTLING
    gap = st.one_of(gaps(powers.window), REPEAT_GAPS)

    def drawn(make: Callable[[st.DrawFn], Operation]) -> st.SearchStrategy[Operation]:
        return st.composite(lambda draw: make(draw))()

    class OfficeMachine(RuleBasedStateMachine):
        assigned = Bundle("assigned")

        def __init__(self) -> None:
            super().__init__()
            self.driver = search.driver()
            self.effects = search.effects(self.driver)
            self.now = START

        def perform(self, operation: Operation, after: timedelta) -> None:
            self.now += after
            search.perform(self.effects, replace(operation, at=self.now))

        @initialize(last=settle)
        def fill_the_first_window(self, last: Any) -> None:
            for index in range(powers.allowance):
                settle_as = last if index == powers.allowance - 1 else "finished"
                acting, assignee = ACTING_AGENTS[index % 2], ASSIGNEES[index % 2]
                opening = Assign(self.now, settle_as, OFFICE_TASKS[0], assignee, acting)
                self.perform(opening, timedelta(seconds=1))

        @rule(
            target=assigned, after=gap, op=drawn(lambda d: assignments(d, START, "queued", powers))
        )
        def assign(self, after: timedelta, op: Assign) -> tuple[str, str]:
            self.perform(op, after)
            return op.task_id, op.assignee or ASSIGNEES[0]

        @rule(pair=assigned, after=REPEAT_GAPS, settle_as=settle, data=st.data())
        def assign_again(
            self, pair: tuple[str, str], after: timedelta, settle_as: Any, data: st.DataObject
        ) -> None:
            task_id, assignee = pair
            self.perform(
                assigned_by_someone(data.draw, START, settle_as, powers, task_id, assignee), after
            )

        @rule(after=gap, op=drawn(lambda d: raw_wakes(d, START, d(settle), 0, powers)))
        def deliver_raw(self, after: timedelta, op: Operation) -> None:
            self.perform(op, after)

        @rule(after=gap, newest=st.booleans(), settle_as=settle)
        def deliver_again(self, after: timedelta, newest: bool, settle_as: Any) -> None:
            self.perform(Redeliver(START, settle_as, newest), after)

        @rule(after=gap)
        def delete_newest(self, after: timedelta) -> None:
            self.perform(DeleteNewest(START, "finished"), after)

        @precondition(lambda _: powers.concurrent)
        @rule(
            after=gap,
            task_id=ANY_TASK,
            acting=ANY_ACTING,
            who=st.lists(ANY_ASSIGNEE, min_size=2, max_size=4),
            settle_as=settle,
        )
        def assign_at_once(
            self, after: timedelta, task_id: str, acting: str, who: list[str], settle_as: Any
        ) -> None:
            self.perform(Batch(START, settle_as, task_id, tuple(who), acting), after)

        @precondition(lambda _: bool(powers.producers))
        @rule(
            after=gap,
            producer=st.sampled_from(powers.producers or ("none",)),
            task_id=ANY_TASK,
            agent=ANY_ASSIGNEE,
        )
        def produce(self, after: timedelta, producer: str, task_id: str, agent: str) -> None:
            self.perform(Produce(START, "finished", producer, task_id, agent), after)

        @precondition(lambda _: powers.restartable)
        @rule(after=gap)
        def restart(self, after: timedelta) -> None:
            self.perform(Restart(START, "finished"), after)

        def teardown(self) -> None:
            try:
                self.effects.surprises.raise_if_any()
            finally:
                self.driver.close()

    return OfficeMachine


STYLES: dict[str, Callable[[Search, int, int], None]] = {
    "schedule": as_a_schedule,
    "machine": as_a_machine,
}


def measure(impl: str, style: str, examples: int, seed_value: int) -> Cell:
    with tempfile.TemporaryDirectory() as scratch:
        search = Search(impl, Path(scratch))
        started = time.perf_counter()
        try:
            STYLES[style](search, examples, seed_value)
        except Exception:  # a break, or an error the implementation answered: a counterexample
            operations = len(search.performed) - search.powers.allowance
            return Cell(time.perf_counter() - started, operations)
        return Cell(time.perf_counter() - started, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mutant", action="append", default=[], required=True)
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    arguments = parser.parse_args(argv)
    table = Table("mutant", "seed", *STYLES, title="office effects search: schedule vs machine")
    for mutant in arguments.mutant:
        for seed_value in arguments.seeds:
            cells = [
                str(measure(f"mutant:{mutant}", style, arguments.examples, seed_value))
                for style in STYLES
            ]
            table.add_row(mutant, str(seed_value), *cells)
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
