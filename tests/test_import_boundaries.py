"""The kit's import boundaries: one import name, layers that point one way, no circles.

An installed kit owns the one name `conformance`: the step library, the reference, the mutants
and the variants stay top-level folders of the checkout and are imported through the links
beside the harness (`conformance.steps`, ...), so a user's own `steps` or `reference` package
cannot shadow them. The layers: steps never reach the reference, the reference never reaches
the harness, and the harness never imports its strength tests' packages (they hand their
families in as entry points, conformance.implementations). No module imports itself back
through another, and no package (`conformance.spec`, a top-level module such as
`conformance.strength`, a linked folder) imports one that imports it back: the packages form
the layers docs/kit.md lists. The steps import nothing of the runner. Every import counts, the
ones inside functions too: a lazy import is still a circle, only hidden.
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.implementations import mutants, variants

CHECKOUT = Path(__file__).resolve().parent.parent
KIT = "conformance"
LINKED = ("steps", "reference", "mutants", "variants")
"""The top-level folders an installed kit carries inside its own package."""
FORBIDDEN = {
    "steps": ("reference",),
    "reference": ("harness", "steps"),
    "harness": ("mutants", "variants"),
}
"""Which layer may not import which: the harness is conformance/ without the linked folders."""
RUNNER = ("running", "reports", "cli", "strength", "strength_report")
"""The packages that run the suite and report on it, which the steps must not reach into."""


def modules() -> dict[str, Path]:
    """Every module of the kit by the name it is imported as."""
    found: dict[str, Path] = {}
    for package in (KIT, *LINKED):
        prefix = [KIT] if package in LINKED else []
        for path in sorted((CHECKOUT / package).rglob("*.py")):
            parts = [*prefix, *path.relative_to(CHECKOUT).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] != KIT:
        return parts[0]
    return parts[1] if len(parts) > 1 and parts[1] in LINKED else "harness"


def imported(path: Path) -> Iterator[str]:
    """Every module name an import statement of the file names, wherever it stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def python_files_of_the_checkout() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=CHECKOUT, capture_output=True, text=True, check=True
    )
    return [CHECKOUT / name for name in listed.stdout.split()]


def test_nothing_imports_the_linked_folders_by_their_top_level_names() -> None:
    """`import reference` would load a second copy of the reference beside
    `conformance.reference`, and an installed kit has no such package at all."""
    offenders = [
        (path.relative_to(CHECKOUT).as_posix(), target)
        for path in python_files_of_the_checkout()
        for target in imported(path)
        if target.split(".")[0] in LINKED
    ]
    assert not offenders, offenders


@pytest.mark.parametrize(("importer", "forbidden"), sorted(FORBIDDEN.items()))
def test_no_layer_imports_what_the_layering_forbids(
    importer: str, forbidden: tuple[str, ...]
) -> None:
    offenders = [
        (name, target)
        for name, path in modules().items()
        if layer(name) == importer
        for target in imported(path)
        if layer(target) in forbidden
    ]
    assert not offenders, offenders


def test_the_layers_are_read_from_real_files() -> None:
    found = {layer(name) for name in modules()}
    assert found == {"harness", *LINKED}, found
    assert "conformance.reference.office.gate" in modules()


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


@pytest.mark.parametrize("package", ["harness", "reference"])
def test_no_import_circle(package: str) -> None:
    known = modules()
    graph = {
        name: {target for target in imported(path) if target in known and target != name}
        for name, path in known.items()
    }
    circles = [c for c in cycles(graph) if any(layer(m) == package for m in c)]
    assert not circles, circles


def package(module: str) -> str:
    """`conformance.spec` for any module under conformance/spec/, `conformance.strength` for
    strength.py, `conformance.steps` for any step module: the unit the layers are made of."""
    return ".".join(module.split(".")[:2])


def package_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {package(name): set() for name in known}
    for name, path in known.items():
        graph[package(name)] |= {
            package(target) for target in imported(path) if package(target) in graph
        } - {package(name)}
    return graph


def test_no_package_imports_one_that_imports_it_back() -> None:
    circles = cycles(package_graph())
    assert not circles, circles


def test_the_steps_import_nothing_of_the_runner() -> None:
    reached = package_graph()["conformance.steps"] & {f"{KIT}.{name}" for name in RUNNER}
    assert not reached, f"the steps import the runner's {sorted(reached)}"


def test_the_package_graph_sees_lazy_imports() -> None:
    """The cli imports strength and the inventory only inside its commands' bodies."""
    assert {"conformance.strength", "conformance.inventory"} <= package_graph()["conformance.cli"]


MODULE_LINES = 700
"""A module longer than this holds more than one idea; split it along them."""


def test_no_module_of_the_kit_is_longer_than_one_idea_needs() -> None:
    lengths = {
        name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules().items()
    }
    assert {name: n for name, n in lengths.items() if n > MODULE_LINES} == {}
