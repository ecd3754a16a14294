"""`conformance --help` and `conformance run --help` read well at 80 columns, and the exit
codes are defined once.

The rich help of typer cut option names at 80 columns (`--strict-interpretati…`) and took 142
lines for `run`; an option had no help; the top-level help carried a note for the kit's
developers; exit code 1 was defined three ways (README, docs/ci.md, `--help`). Now the codes
live in `conformance.cli.EXIT_CODES`: the help names them, docs/ci.md's table says them, and
every other page points there.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from conformance.cli import EXIT_CODES, EXIT_CODES_HELP, app
from tests.paths import CHECKOUT

COLUMNS = 80
RUN_HELP_LINES = 80


def help_of(*arguments: str) -> str:
    outcome = CliRunner().invoke(app, [*arguments, "--help"], env={"COLUMNS": str(COLUMNS)})
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


def commands() -> list[Any]:
    """Every command and subcommand, as click sees them (typer keeps its click private)."""
    found: list[Any] = []
    for command in typer.main.get_command(app).commands.values():  # type: ignore[attr-defined]
        found.extend(getattr(command, "commands", {}).values() or [command])
    return found


def test_run_s_help_fits_80_columns_and_cuts_no_option() -> None:
    said = help_of("run")
    lines = said.splitlines()
    assert len(lines) <= RUN_HELP_LINES, len(lines)
    assert max(len(line) for line in lines) <= COLUMNS
    assert "…" not in said
    for option in ("--strict-interpretations", "--allow-unverified", "--expectations"):
        assert re.search(rf"(?m)^  {option}\b", said), option


@pytest.mark.parametrize("command", commands(), ids=lambda command: command.name or "")
def test_every_option_of_every_command_says_what_it_is_for(command: Any) -> None:
    for parameter in command.params:
        if parameter.param_type_name == "option" and "--help" not in parameter.opts:
            assert parameter.help, (command.name, parameter.opts)


def test_the_top_level_help_is_for_users() -> None:
    said = help_of()
    listed = said[said.index("Commands:") :]
    assert "..." not in listed and max(len(line) for line in listed.splitlines()) <= COLUMNS
    assert "imports what it needs" not in said and "serve-reference` once" not in said
    assert EXIT_CODES_HELP.split(" (")[0] in " ".join(said.split())


def test_the_exit_codes_are_defined_once_and_docs_ci_says_them() -> None:
    ci = (CHECKOUT / "docs" / "ci.md").read_text()
    table = dict(
        (int(code), (label, meaning))
        for code, label, meaning in re.findall(r"(?m)^\| (\d) \| ([^|]+?) \| ([^|]+?) \|$", ci)
    )
    assert table == EXIT_CODES
    for page in ("README.md", "docs/kit.md"):
        text = (CHECKOUT / page).read_text()
        assert "ci.md#exit-codes" in text, page
        assert not re.search(r"\*\*1\*\*|\b1 (a scenario )?failed\b", text), page
    assert " ".join(EXIT_CODES_HELP.split()) in " ".join(help_of("run").split())
