"""The README stays short and true: its commands are the kit's, its links lead somewhere.

It is a newcomer's first screen and a half: at most about 120 lines. Its test command must be
exactly the one `.ci/run` runs, and `.ci/run` the one command that sets everything up; every
`conformance` command it shows must parse (each option a real one, each file it names there),
and every link must reach a file and, with an anchor, a heading of that file.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from conformance.cli import app

CHECKOUT = Path(__file__).resolve().parent.parent
README = CHECKOUT / "README.md"
CI_RUN = CHECKOUT / ".ci" / "run"
MOST_LINES = 120
TEST_COMMAND = ".venv/bin/pytest -n auto --cov --cov-fail-under=90"
INSTALL = "-e '.[dev]'"


def readme() -> str:
    return README.read_text(encoding="utf-8")


def shell_lines(text: str) -> list[str]:
    """The lines of the README's ```sh blocks, a line continued with a backslash joined up."""
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    joined = [re.sub(r"\\\n\s*", "", block) for block in blocks]
    return [line.strip() for block in joined for line in block.splitlines() if line.strip()]


def conformance_commands(text: str) -> list[list[str]]:
    """Every `conformance ...` command the README shows, in a block or inline, as arguments."""
    commands = []
    for line in shell_lines(text):
        for part in line.split("&&"):
            words = shlex.split(part)
            if words and words[0].endswith("conformance"):
                commands.append(words[1:])
    for inline in re.findall(r"`((?:\.venv/bin/)?conformance [^`]+)`", text):
        commands.append(shlex.split(inline)[1:])
    return commands


def parse(arguments: list[str]) -> Any:
    """The context click makes of a command line, raising on an unknown option or command
    (typer keeps its click private: duck-typed)."""
    group: Any = typer.main.get_command(app)
    context = group.make_context("conformance", list(arguments), resilient_parsing=False)
    rest = [*context._protected_args, *context.args]
    if not rest:
        return context
    name, command, more = group.resolve_command(context, rest)
    assert command is not None and name is not None, rest
    return command.make_context(name, more, parent=context)


def test_the_readme_is_a_screen_and_a_half() -> None:
    lines = readme().splitlines()
    assert len(lines) <= MOST_LINES, len(lines)
    assert not re.search(r"\b[0-9a-f]{7,40}\b", readme()), "no commit hashes: see docs/bench.md"
    assert max(len(line) for line in lines) <= 120


def test_the_test_command_is_the_one_ci_runs() -> None:
    assert TEST_COMMAND in shell_lines(readme())
    ci_lines = [line for line in CI_RUN.read_text().splitlines() if line and line[0] != "#"]
    assert ci_lines[-1] == TEST_COMMAND, "the README's command, verbatim, last in .ci/run"
    assert "bash .ci/run" in shell_lines(readme()), "the one command for a fresh machine"
    assert INSTALL in CI_RUN.read_text()


def test_the_quick_start_sets_up_and_runs_the_suite() -> None:
    quick = shell_lines(readme())[0]
    assert quick.startswith("python3 -m venv .venv && ")
    assert f"pip install -q {INSTALL}" in quick
    assert quick.endswith(
        "&& .venv/bin/conformance run --allow-unverified AC-OFFICE-ASSIGN-RATE-002.4"
    ), "the reference in-process, embedded SQLite, whose crash clause needs a process"


def test_every_conformance_command_parses_and_names_real_files() -> None:
    commands = conformance_commands(readme())
    assert len(commands) >= 5, commands
    for arguments in commands:
        asked = [a for a in arguments if a != "--help"]
        if not asked:
            continue  # `conformance --help`: answered below
        context = parse(asked)
        impl = context.params.get("impl") or ""
        if impl.startswith("exec:"):
            named = [word for word in shlex.split(impl.removeprefix("exec:")) if "/" in word]
            assert named and all((CHECKOUT / word).exists() for word in named), impl


@pytest.mark.parametrize("arguments", [["--help"], ["run", "--help"], ["criteria"], ["readings"]])
def test_the_commands_the_readme_points_to_answer(arguments: list[str]) -> None:
    outcome = CliRunner().invoke(app, arguments)
    assert outcome.exit_code == 0, outcome.output


def test_every_option_the_readme_names_is_an_option_of_run() -> None:
    run = parse(["run"]).command
    known = {name for parameter in run.params for name in parameter.opts}
    named = set(re.findall(r"`(--[a-z-]+)", readme()))
    assert named and named <= known | {"--help", "--version"}, named - known


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def test_every_link_reaches_a_file_and_its_heading() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#([^)\s]+))?\)", readme())
    assert len(links) >= 10, links
    for target, anchor in links:
        path = CHECKOUT / target
        assert path.exists(), target
        if anchor:
            headings = re.findall(r"(?m)^#+ (.+)$", path.read_text(encoding="utf-8"))
            assert anchor in {slug(h) for h in headings}, (target, anchor)
