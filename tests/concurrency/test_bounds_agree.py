"""The race steps' arithmetic bounds and the linearizability search agree on recorded histories.

Each Gherkin race is judged first by the search, then by one bound a reader can check by hand
(at most so many usages accepted, spent and carved within the slice, spent or given back but
never both, no more delegations than the count cap). The search over the pure model is the
statement of the semantics; a bound that broke where the search had explained the history would
mean the two disagree. Run against the reference and every mutant only a race shows, the race
scenarios never fail at a bound: where a mutant breaks one, the search broke first.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.stream.results import Status
from conformance.stream.stream_integrity import verify_stream
from tests.runs import suite_run

RACE_MUTANTS = (
    "usage_checked_then_charged",
    "usage_written_back",
    "campaign_spending_written_back",
    "remainder_read_before_completing",
    "nested_slice_checked_then_carved",
    "count_cap_checked_then_taken",
)
BOUND_STEPS = re.compile(
    r"at most \d+ of the usages made at once|spent and carved out for its own requests"
    r"|never add up to more than was left|has spent no more than its slice"
    r"|at most as many delegations as the count cap"
)
"""The Then steps whose check is arithmetic over the race's reads, after the search."""


SEARCH_BROKE = "in no order, explain every answer"
"""How the search's own failure reads (`RaceVerdict.expect_explained`): a bound step that asks
the search first fails with it when the search broke, and with its arithmetic's otherwise."""


def race_run(impl: str, folder: Path) -> list[tuple[str, Status, str | None]]:
    """The work-request race scenarios against `impl`: each one's name, status, and the text of
    the step that failed where its arithmetic, not the search, broke."""
    finished, stream = suite_run(
        folder,
        *("--impl", impl, "--properties", "none", "--claim", "work-requests"),
        *("-k", "at_once and not office", "--quiet"),
    )
    assert finished.returncode in (0, 1), finished.stdout[-3000:] + finished.stderr[-3000:]
    ran = []
    for scenario in verify_stream(stream).scenarios:
        if scenario.status is Status.UNDEFINED or not scenario.key.startswith("armonia"):
            continue
        failing = next((step.text for step in scenario.steps if step.status == "failed"), None)
        observed = scenario.failure.observed if scenario.failure is not None else ""
        ran.append(
            (scenario.scenario, scenario.status, None if SEARCH_BROKE in observed else failing)
        )
    return ran


RUNS_TO_CATCH = 3
"""A race mutant's defect shows only where its calls happen to interleave so: on loaded cores
one run of the race scenarios may miss it, so a mutant gets up to this many."""


@pytest.mark.parametrize("impl", ["reference", *(f"mutant:{name}" for name in RACE_MUTANTS)])
def test_no_race_fails_at_a_bound_the_search_had_explained(impl: str, tmp_path: Path) -> None:
    mutant = impl != "reference"
    for attempt in range(RUNS_TO_CATCH if mutant else 1):
        folder = tmp_path / str(attempt)
        folder.mkdir()
        ran = race_run(impl, folder)
        assert len(ran) >= 10, ran
        at_a_bound = [(name, step) for name, _, step in ran if step and BOUND_STEPS.search(step)]
        assert not at_a_bound, f"a bound broke where the search explained the race: {at_a_bound}"
        failed = [name for name, status, _ in ran if status is Status.FAILED]
        if bool(failed) is mutant:
            return
        assert mutant, f"the reference failed: {failed}"
    pytest.fail(f"{impl} was caught by no race scenario in {RUNS_TO_CATCH} runs")
