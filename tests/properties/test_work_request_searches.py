"""The work-request machine's examples are spread over several searches: each a check
of its own in the inventory, each from a seed derived from the run's, together the budget's
examples, so that `--jobs` and `--shard` can spread the longest search of a thorough run."""

from __future__ import annotations

from conformance.properties import WORK_REQUEST_MODULE
from conformance.properties.catalogue import (
    PROPERTIES,
    WORK_REQUEST_SEARCHES,
    examples_of_a_search,
    property_check,
    property_entries,
    search_seed,
)
from conformance.stream.shards import part_of, unit_of


def machine_checks() -> list[str]:
    return [check.title for check in PROPERTIES if check.module == WORK_REQUEST_MODULE]


def test_the_machine_is_as_many_checks_as_searches_each_naming_every_criterion() -> None:
    checks = [check for check in PROPERTIES if check.module == WORK_REQUEST_MODULE]
    assert [check.search for check in checks] == list(range(1, WORK_REQUEST_SEARCHES + 1))
    assert len(set(machine_checks())) == WORK_REQUEST_SEARCHES
    assert all(
        check.title.endswith(f"(search {check.search} of {WORK_REQUEST_SEARCHES})")
        for check in checks
    )
    assert {check.criteria for check in checks} == {
        tuple(f"AC-ARMONIA-WORKREQ-001.{n}" for n in range(1, 14))
    }
    assert property_check(WORK_REQUEST_MODULE, "test_work_request_machine", 3) == checks[2]
    assert property_check(WORK_REQUEST_MODULE, "test_work_request_machine") is None


def test_each_search_draws_from_a_seed_of_its_own_that_the_run_s_seed_decides() -> None:
    for seed in (0, 1, 27, 2**32 - 1):
        seeds = [search_seed(seed, n) for n in range(1, WORK_REQUEST_SEARCHES + 1)]
        assert seeds[0] == seed, "the first search is the run's own seed"
        assert len(set(seeds)) == WORK_REQUEST_SEARCHES
        assert seeds == [search_seed(seed, n) for n in range(1, WORK_REQUEST_SEARCHES + 1)]
    assert search_seed(1, 2) != search_seed(2, 2)


def test_the_searches_together_try_at_least_the_budget_s_examples_and_barely_more() -> None:
    for examples in (1, 4, 15, 25, 250, 1000, 1001):
        share = examples_of_a_search(examples, WORK_REQUEST_SEARCHES)
        assert examples <= share * WORK_REQUEST_SEARCHES < examples + WORK_REQUEST_SEARCHES


def test_two_parts_share_the_searches_out() -> None:
    keys = [entry.key for entry in property_entries()]
    machine = {key for key in keys if "(search " in key}
    units = {unit_of(key) for key in machine}
    assert len(units) == WORK_REQUEST_SEARCHES
    first, second = (
        {unit_of(key) for key in part_of(keys, index, 2) if key in machine} for index in (1, 2)
    )
    assert first and second and not first & second and first | second == units
