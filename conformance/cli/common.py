"""What every command of `conformance` shares: the exit codes, the app, the console and the
options several commands take. Each command imports what it needs in its own body, since the
harness launches `serve-reference` once per scenario or restart, and it must not pay for pytest,
the reports and the spec tools at every start. The exit codes are defined once, in EXIT_CODES.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from conformance.stream.results import ResultsRun
    from conformance.stream.stream_integrity import KitInventory


EXIT_OK, EXIT_FAILURES, EXIT_USAGE, EXIT_UNUSABLE, EXIT_HARNESS = 0, 1, 2, 3, 4
EXIT_CODES: dict[int, tuple[str, str]] = {
    EXIT_OK: (
        "passed",
        "every claimed criterion passed (or failed as the expectations file lists, or diverged "
        "from a reading)",
    ),
    EXIT_FAILURES: (
        "failed",
        "a scenario failed, errored, timed out, passed although listed as a known failure, or "
        "did not run; or a claimed criterion is unverified; or the results stream or the kit's "
        "files were changed during the run",
    ),
    EXIT_USAGE: (
        "usage error",
        "a bad option, an unreachable database, a malformed expectations file, a results stream "
        "that fails verification: nothing was judged",
    ),
    EXIT_UNUSABLE: (
        "implementation unusable",
        "it did not start, refused the handshake, or used up the restart budget; every report "
        "asked for is still written, saying why",
    ),
    EXIT_HARNESS: (
        "fault of the harness",
        "no verdict on the implementation: one line names the fault and the file keeping its "
        "traceback, for the kit's maintainers",
    ),
}
"""What each exit code means, said once: `--help` names them, docs/ci.md's table says them."""
EXIT_CODES_HELP = (
    "Exit codes: "
    + ", ".join(f"{code} {label}" for code, (label, _) in EXIT_CODES.items())
    + " (docs/ci.md, Exit codes)."
)
NO_TESTS_COLLECTED = 5  # pytest.ExitCode.NO_TESTS_COLLECTED

TracebackOption = Annotated[
    bool,
    typer.Option(
        "--traceback", help="show the kit's own frames under each failure (for its maintainers)"
    ),
]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # click's plain help: at 80 columns no option name is cut
    help="Run the conformance suite against an implementation, and read its results "
    "(see the README).",
    epilog=EXIT_CODES_HELP,
)


def _print_version(asked: bool) -> None:
    """The version and commit, and what decides whether an upgrade can change a verdict: the
    protocol version and the hashes of the spec texts (see conformance/identity.py)."""
    if asked:
        from conformance.identity import kit_identity

        for line in kit_identity().lines():
            console.print(line, markup=False, highlight=False)
        raise typer.Exit(EXIT_OK)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="print the kit's version, commit, protocol version and spec hashes",
        ),
    ] = False,
) -> None:
    """The conformance kit's command (see the README)."""


expectations_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Manage expectations files (docs/expectations.md).",
    short_help="manage expectations files of known failures",
)
app.add_typer(expectations_app, name="expectations")
#: CI logs are no terminal; give the verdict table room there instead of 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)

ResultsOut = Annotated[
    Path | None,
    typer.Option(
        dir_okay=False, writable=True, metavar="FILE", help="the results stream (JSON lines)"
    ),
]
JunitOut = Annotated[
    Path | None, typer.Option(dir_okay=False, writable=True, metavar="FILE", help="JUnit XML")
]
MarkdownOut = Annotated[
    Path | None,
    typer.Option(dir_okay=False, writable=True, metavar="FILE", help="the Markdown verdict table"),
]
HtmlOut = Annotated[
    Path | None,
    typer.Option(dir_okay=False, writable=True, metavar="FILE", help="the living spec page (HTML)"),
]
CucumberOut = Annotated[
    Path | None,
    typer.Option(dir_okay=False, writable=True, metavar="FILE", help="Cucumber JSON"),
]
Seed = Annotated[
    int | None,
    typer.Option(
        min=0, metavar="N", help="the properties' Hypothesis seed (default: a new one, recorded)"
    ),
]
SignKey = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        dir_okay=False,
        metavar="KEY",
        help="the team's key: a run signs its stream with it (HMAC-SHA256), the other "
        "commands check the signature",
    ),
]


def _kit_inventory() -> KitInventory:
    """This kit, as a stream is checked against it: its suite files and its inventory."""
    from conformance.inventory import load_inventory
    from conformance.properties.catalogue import property_entries
    from conformance.stream.provenance import suite_digests
    from conformance.stream.stream_integrity import KitInventory

    return KitInventory(
        suite_digests(),
        [entry.key for entry in load_inventory()],
        [entry.key for entry in property_entries()],
    )


def _read(path: Path, sign_key_file: Path | None = None) -> ResultsRun:
    """The run a stream holds, verified (see stream_integrity); a broken one exits 2."""
    from conformance.stream.stream_integrity import BrokenStream, read_key, verify_stream

    try:
        key = read_key(sign_key_file) if sign_key_file else None
        return verify_stream(path, key=key, kit=_kit_inventory())
    except BrokenStream as error:
        console.print(f"[bold red]not a trustworthy results stream:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error
