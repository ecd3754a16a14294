"""The harness stands on its own: nothing in conformance/ imports its strength tests' packages,
and no module of conformance/ or reference/ imports itself back through another.

conformance/ used to import mutants/ and variants/ (strength, the adapter factory, the CLI, the
served reference): now their packages hand their families in as entry points
(conformance.implementations). reference/db.py imported the two model modules that import it,
and the in-process adapter the store shelf that imported it. Every import counts, the ones
inside functions too: a lazy import is still a circle, only hidden.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.implementations import mutants, variants

CHECKOUT = Path(__file__).resolve().parent.parent
HARNESS = "conformance"
PACKAGES = ("conformance", "reference")
UPWARD = ("mutants", "variants")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((CHECKOUT / package).rglob("*.py")):
            parts = list(path.relative_to(CHECKOUT).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(path: Path) -> Iterator[str]:
    """Every module name an import statement of the file names, wherever it stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_nothing_in_the_harness_imports_mutants_or_variants() -> None:
    upward = [
        (name, target)
        for name, path in modules().items()
        if name.startswith(HARNESS)
        for target in imported(path)
        if target.split(".")[0] in UPWARD
    ]
    assert not upward, upward


def test_the_families_come_in_through_their_entry_points() -> None:
    assert "allowance_off_by_one" in mutants().members
    assert "declared_metric_names" in variants().members


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while (popped := stack.pop()) != module:
                component.append(popped)
            if component:
                found.append(sorted([module, *component]))

    for module in graph:
        if module not in index:
            visit(module)
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package: str) -> None:
    known = modules()
    graph = {
        name: {target for target in imported(path) if target in known and target != name}
        for name, path in known.items()
    }
    circles = [c for c in cycles(graph) if any(m.split(".")[0] == package for m in c)]
    assert not circles, circles
