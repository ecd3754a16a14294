"""Text that is not rich markup reaches the terminal as written, brackets and all.

rich reads `[word]` as a style tag and drops it: an expectations error read "the only one is
[]" where it meant `[[expected_failure]]`, and a redacted value (`[redacted $NAME]`) vanished
from every line that named it. One test pushes bracketed text through each way a message
reaches the terminal: the CLI's errors, its verdict lines, the terminal report (tables,
scenario keys, evidence) and the comparison tables.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from conformance import cli
from conformance.cli import common
from conformance.cli.run import exit_code
from conformance.reports.compare import comparison_table, divergence_table
from conformance.reports.terminal import print_verdicts
from conformance.spec.registry import default_registry
from conformance.stream.results import Claim, Footer, ResultsRun, ScenarioResult, Status
from conformance.strength import (
    StrengthReport,
    Target,
    TargetRun,
    VariantVerdict,
    select_variants,
)
from conformance.strength_report import print_report
from tests.runs import STARTED, a_header

BRACKETS = "[redacted $MY_TOKEN] [bold]x[/bold] [[expected_failure]]"


def flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def a_bracketed_run() -> ResultsRun:
    """A run whose implementation, scenario keys, evidence and unusable cause hold brackets,
    with a claimed criterion left unverified."""
    first, second = default_registry().criteria[:2]
    failed = ScenarioResult(
        key=f"office.feature::failed {BRACKETS}", criterion=first.id, feature="office.feature",
        scenario="failed", status=Status.FAILED, duration_s=0.0, evidence=f"saw {BRACKETS}",
        title=f"failed {BRACKETS}",
    )  # fmt: skip
    unverified = failed.model_copy(
        update={
            "key": "office.feature::needs",
            "criterion": second.id,
            "status": Status.NOT_APPLICABLE,
            "evidence": f"the implementation does not declare {BRACKETS}",
        }
    )
    header = a_header().model_copy(
        update={"implementation": f"exec:{BRACKETS}", "claim": Claim(specs=["office"])}
    )
    footer = Footer(finished_at=STARTED, totals={}, stopped=f"stopped at {BRACKETS}")
    return ResultsRun(header=header, scenarios=[failed, unverified], footer=footer)


def a_bracketed_strength_report() -> StrengthReport:
    """Strength's report of a variant with an error and one with a false failure, both
    quoting a run's log or its citations (which hold brackets, as test ids do)."""
    (variant,) = select_variants(["generation_steps_by_two"])
    error = f"pytest exited with 3; the end of its log: {BRACKETS}"
    verdicts = [
        VariantVerdict(variant, frozenset(), (), error, 1.0),
        VariantVerdict(variant, frozenset(), (f"k: failed {BRACKETS}",), None, 1.0),
    ]
    control = TargetRun(Target("reference", ()), None, None, 0.0)
    return StrengthReport(control, [], [], 1, 0.0, verdicts)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Console:
    console = Console(record=True, width=400)
    monkeypatch.setattr(common, "console", console)
    return console


def test_brackets_reach_the_terminal_on_every_path(terminal: Console, tmp_path: Path) -> None:
    expectations = tmp_path / "expectations.toml"
    expectations.write_text("[[expected_failur]]\nscenario = 'x'\nissue = 'y'\n")
    runner = CliRunner()
    refused = runner.invoke(cli.app, ["run", "--expectations", str(expectations)])
    assert refused.exit_code == cli.EXIT_USAGE
    claimed = runner.invoke(cli.app, ["run", "--claim", "[office]"])
    assert claimed.exit_code == cli.EXIT_USAGE
    run = a_bracketed_run()
    exit_code(run, pytest_code=None)
    exit_code(run.model_copy(update={"footer": run.footer and run.footer.model_copy(
        update={"stopped": None})}), pytest_code=None)  # fmt: skip
    exit_code(
        run.model_copy(update={"header": run.header.model_copy(
            update={"implementation_error": f"it said {BRACKETS}"})}),
        pytest_code=None,
    )  # fmt: skip
    print_verdicts(run, default_registry(), terminal)
    terminal.print(comparison_table([run], [f"impl {BRACKETS}"], default_registry()))
    terminal.print(divergence_table([run], [f"impl {BRACKETS}"], default_registry()))
    print_report(a_bracketed_strength_report(), terminal)
    said = flat(terminal.export_text())
    assert "the only ones are [[expected_failure]] and [search]" in said, said
    assert "unknown spec '[office]'" in said, said
    for line in (
        f"implementation unusable: it said {BRACKETS}",
        f"run stopped: stopped at {BRACKETS}",
        f"(the implementation does not declare {BRACKETS})",
        f"failed office.feature failed {BRACKETS}",
        f"saw {BRACKETS}",
        f"impl {BRACKETS}",
        f"error: pytest exited with 3; the end of its log: {BRACKETS}",
        f"the kit (a false failure): k: failed {BRACKETS}",
    ):
        assert line in said, (line, said)
