"""The dependency rule: steps never reach the reference, the reference never reaches the kit."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = {"steps": "reference", "features": "reference", "reference": "conformance"}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize(("package", "forbidden"), sorted(RULES.items()))
def test_no_module_imports_what_the_layering_forbids(package: str, forbidden: str) -> None:
    offenders = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / package).rglob("*.py"))
        if forbidden in imported_packages(path)
    ]
    assert offenders == [], f"{package}/ must not import {forbidden}: {offenders}"


def test_the_rule_is_checked_on_real_files() -> None:
    assert list((ROOT / "steps").rglob("*.py")) and list((ROOT / "reference").rglob("*.py"))
