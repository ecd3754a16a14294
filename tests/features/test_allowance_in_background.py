"""N is written once per office feature, in its Background, and the series count in it.

A change of the spec's N must be a handful of scenarios, not every series in the Gherkin: the
counts and positions that depend on N say so (`N times`, `wake N + 1 of that series`). Only
scenarios whose clock arithmetic is worked out for N = 5 keep literal counts.
"""

from __future__ import annotations

import re

import pytest

from conformance.driver import Description
from conformance.reference.office.constants import ASSIGNMENT_ALLOWANCE
from conformance.spec.clause_check import ScenarioError
from conformance.steps.office_scene import OfficeScene
from tests.paths import FEATURES

FEATURES = sorted(FEATURES.glob("office_*.feature"))
BACKGROUND = re.compile(r"the allowance is N = (\d+) agent wakes per task in any rolling")
LITERAL_SERIES = re.compile(
    rf"\b(?:{ASSIGNMENT_ALLOWANCE}|{ASSIGNMENT_ALLOWANCE + 1}) times\b"
    rf"|\bwakes? (?:\d+ to )?(?:{ASSIGNMENT_ALLOWANCE}|{ASSIGNMENT_ALLOWANCE + 1}) of that series"
)
WORKED_FOR_N = {
    "office_assign_rate_001.feature: Scenario: A steady stream of one agent wake a minute is "
    "admitted five at a time",
    "office_assign_rate_001.feature: Scenario: Refusals do not hold the window open: places free "
    "up ten minutes after each admitted wake",
    "office_assign_rate_001.feature: Scenario: Wakes requested at the very instant of the "
    "decision count",
    "office_assign_rate_002.feature: Scenario: A window already holding more than five counted "
    "runs is tolerated and keeps refusing",
}
"""The scenarios worked out for one N, which keep literal counts: their clock arithmetic (a
place freed at 09:10 by the wake of 09:00), or one assignee named per wake of a series. These
are what a change of N rewrites by hand."""


def scenarios_with_literal_series() -> list[str]:
    found = []
    for feature in FEATURES:
        for block in re.split(r"\n(?=\s*Scenario)", feature.read_text(encoding="utf-8"))[1:]:
            steps = [line for line in block.splitlines()[1:] if not line.strip().startswith("#")]
            if any(LITERAL_SERIES.search(line) for line in steps):
                found.append(f"{feature.name}: {block.splitlines()[0].strip()}")
    return found


def test_every_office_feature_states_the_spec_s_n_once_in_its_background() -> None:
    for feature in FEATURES:
        stated = BACKGROUND.findall(feature.read_text(encoding="utf-8"))
        assert stated == [str(ASSIGNMENT_ALLOWANCE)], (feature.name, stated)


def test_only_a_handful_of_scenarios_write_a_count_that_depends_on_n_literally() -> None:
    literal = set(scenarios_with_literal_series())
    assert literal == WORKED_FOR_N, "\n".join(sorted(literal ^ WORKED_FOR_N))


def test_the_configuration_mutant_never_coincides_with_the_spec() -> None:
    from conformance.mutants.office_count import configured_allowance

    assert configured_allowance() != ASSIGNMENT_ALLOWANCE


class Described:
    def describe(self) -> Description:
        return Description(name="counts", version="1", capabilities=[])


@pytest.mark.parametrize(
    ("written", "counted"),
    [("7", 7), ("N", 5), ("N - 1", 4), ("N + 1", 6), ("2N", 10), ("2N + 1", 11), ("4N", 20)],
)
def test_a_count_in_n_is_worked_out_from_the_background_s_n(written: str, counted: int) -> None:
    scene = OfficeScene(driver=Described(), constants=None, allowance=5)  # type: ignore[arg-type]
    assert scene.count(written) == counted


def test_a_count_in_n_without_a_background_stating_n_is_the_kit_s_defect() -> None:
    scene = OfficeScene(driver=Described(), constants=None)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match="no Background"):
        scene.count("N + 1")
    with pytest.raises(ScenarioError, match="not a count"):
        scene.count("N+1")


def test_a_table_cell_in_n_reads_as_its_figure_and_any_other_as_written() -> None:
    scene = OfficeScene(driver=Described(), constants=None, allowance=5)  # type: ignore[arg-type]
    assert [scene.cell(cell) for cell in ("N", "N - 1", "T-100", "5", "")] == [
        "5",
        "4",
        "T-100",
        "5",
        "",
    ]
