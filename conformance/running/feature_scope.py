"""A pytest plugin that runs only the scenarios of some feature files, or of one criterion.

`conformance strength` loads it (`-p conformance.running.feature_scope`): a mutant of one
capability runs against that capability's features only (`--feature-glob`),
and first against the scenarios of the criterion it targets only
(`--criterion`), where one failure is enough to call it killed. Scenarios left
out are deselected, and left out of the verdict.

A property check is scoped the same way, by its module's file name (what its records carry
as their feature, `properties/<module>`) and by the criteria it names: with `--properties`,
a work-request variant runs the work-request machine and not the office properties.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import pytest

from conformance.properties.catalogue import check_of_item
from conformance.running.scenario_items import scenario_template
from conformance.spec.registry import CRITERION_TAG


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance")
    group.addoption(
        "--feature-glob",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only the scenarios of feature files whose name matches (repeatable)",
    )
    group.addoption(
        "--criterion",
        default=None,
        metavar="ID",
        help="run only the scenarios tagged with this criterion",
    )


def feature_name(item: pytest.Item) -> str | None:
    """The file name of the feature an item's scenario comes from; None for other tests."""
    template = scenario_template(item)
    return None if template is None else Path(template.feature.filename).name


def criterion_of(item: pytest.Item) -> str | None:
    template = scenario_template(item)
    if template is None:
        return None
    return next((tag for tag in template.tags if CRITERION_TAG.fullmatch(tag)), None)


def in_scope(name: str, patterns: list[str]) -> bool:
    return not patterns or any(fnmatch(name, pattern) for pattern in patterns)


def wanted(item: pytest.Item, patterns: list[str], criterion: str | None) -> bool:
    check = check_of_item(item)
    if check is not None:
        named = criterion is None or criterion in check.criteria
        return in_scope(check.module, patterns) and named
    name = feature_name(item)
    if name is None:
        return not criterion
    return in_scope(name, patterns) and (criterion is None or criterion_of(item) == criterion)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    patterns: list[str] = config.getoption("--feature-glob")
    criterion: str | None = config.getoption("--criterion")
    if not patterns and criterion is None:
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if wanted(item, patterns, criterion) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
