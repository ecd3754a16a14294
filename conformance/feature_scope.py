"""A pytest plugin that runs only the scenarios of some feature files.

`conformance strength` loads it (`-p conformance.feature_scope --feature-glob GLOB`)
to run a mutant of one capability against that capability's features only:
scenarios of the other features are deselected, and left out of the verdict.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import pytest

from conformance.scenario_items import scenario_template


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("conformance").addoption(
        "--feature-glob",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only the scenarios of feature files whose name matches (repeatable)",
    )


def feature_name(item: pytest.Item) -> str | None:
    """The file name of the feature an item's scenario comes from; None for other tests."""
    template = scenario_template(item)
    return None if template is None else Path(template.feature.filename).name


def in_scope(name: str, patterns: list[str]) -> bool:
    return not patterns or any(fnmatch(name, pattern) for pattern in patterns)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    patterns: list[str] = config.getoption("--feature-glob")
    if not patterns:
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        name = feature_name(item)
        (kept if name is None or in_scope(name, patterns) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
