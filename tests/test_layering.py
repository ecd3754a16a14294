"""The kit's packages form layers: no package imports one that imports it back.

Every import counts, a lazy one inside a function and one made for type checking included:
a cycle hidden in a function is still a cycle a reader must hold in their head. A package is
`conformance.<name>`, a top-level module of the kit counting as one; the directories beside
`conformance/` (steps, reference, mutants, variants) count under the names the kit imports
them by. Within a package, modules may import each other freely.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("steps", "reference", "mutants", "variants")
"""Kit packages kept beside conformance/, imported as `conformance.<name>`."""
RUNNER = ("running", "cli", "strength", "reports")
"""The packages that run the suite and report on it, which the steps must not depend on."""


def kit_modules() -> Iterator[tuple[str, Path]]:
    """Each kit module's package (`conformance.spec`) and its file, read where it really is."""
    for path in sorted((ROOT / "conformance").rglob("*.py")):
        parts = path.relative_to(ROOT / "conformance").parts
        if parts[0] in OUTSIDE:
            continue  # a symlink to a directory read below
        yield package_of(("conformance", *parts)), path
    for outside in OUTSIDE:
        for path in sorted((ROOT / outside).rglob("*.py")):
            yield f"conformance.{outside}", path


def package_of(parts: tuple[str, ...]) -> str:
    """`conformance.spec` for any module under conformance/spec/, `conformance.strength` for
    strength.py, `conformance` for the package's own __init__."""
    if len(parts) < 2 or parts[1] == "__init__.py":
        return "conformance"
    return f"conformance.{parts[1].removesuffix('.py')}"


def imported_packages(path: Path) -> set[str]:
    """The kit packages a module imports, wherever in it the import is written."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {
            package_of(tuple(name.split(".")))
            for name in names
            if name.split(".")[0] == "conformance"
        }
    return found


def package_graph() -> dict[str, set[str]]:
    """Each package and the other packages it imports."""
    graph: dict[str, set[str]] = defaultdict(set)
    for package, path in kit_modules():
        graph[package] |= imported_packages(path) - {package}
    return dict(graph)


def test_no_package_imports_one_that_imports_it_back() -> None:
    graph = package_graph()
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        cycle = error.args[1]
        chain = " imports ".join(reversed(cycle))
        raise AssertionError(f"packages import each other round: {chain}") from None


def test_the_steps_depend_on_no_part_of_the_runner() -> None:
    """The steps judge through the driver port; how a run is spread, recorded and reported is
    the runner's business, which they must not reach into."""
    reached = package_graph()["conformance.steps"] & {f"conformance.{name}" for name in RUNNER}
    assert not reached, f"the steps import the runner's {sorted(reached)}"


def test_the_reference_stands_alone() -> None:
    """The reference is an implementation like any other: it imports nothing of the kit."""
    assert package_graph()["conformance.reference"] == set()


def test_the_graph_sees_lazy_imports() -> None:
    """A lazy import is read as any other (the check above would miss a cycle through one)."""
    cli = package_graph()["conformance.cli"]
    assert {"conformance.strength", "conformance.inventory"} <= cli
