"""The `conformance` command: each command imports what it needs in its own body, since the
harness launches `serve-reference` once per scenario or restart, and it must not pay for pytest,
the reports and the spec tools at every start. The exit codes are defined once, in EXIT_CODES.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from conformance.properties import Budget

if TYPE_CHECKING:
    from conformance.adapters.containment import Containment
    from conformance.implementations import Family
    from conformance.running.harness_memory import HarnessMemory
    from conformance.running.progress import Progress
    from conformance.stream.results import Claim, ResultsRun, ScenarioResult
    from conformance.stream.stream_integrity import KitInventory
    from conformance.strength import TargetRun

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


@app.command(epilog=EXIT_CODES_HELP, short_help="run the suite against an implementation")
def run(
    impl: Annotated[
        str,
        typer.Option(
            metavar="IMPL",
            help="'reference'; 'exec:<command>' (any language, protocol v1; a bare `conformance` "
            "is found beside this kit); 'python:<module>:<factory>'; 'mutant:<name>' or "
            "'variant:<name>' (`conformance mutants`, `conformance variants`)",
        ),
    ] = "reference",
    database: Annotated[
        str | None,
        typer.Option(metavar="URL", help="SQLAlchemy URL of the in-process reference's store"),
    ] = None,
    results: ResultsOut = None,
    junit: JunitOut = None,
    markdown: MarkdownOut = None,
    html: HtmlOut = None,
    cucumber: CucumberOut = None,
    expectations: Annotated[
        Path | None,
        typer.Option(
            exists=True, dir_okay=False, help="known failures, TOML (docs/expectations.md)"
        ),
    ] = None,
    spec: Annotated[
        list[Path] | None,
        typer.Option(
            exists=True, dir_okay=False, metavar="FILE", help="source spec file, for drift marks"
        ),
    ] = None,
    max_fail: Annotated[
        int,
        typer.Option(min=0, metavar="N", help="stop after N failing scenarios (0: never)"),
    ] = 0,
    restart_budget: Annotated[
        int,
        typer.Option(min=0, metavar="N", help="stop after N implementation faults (exit code 3)"),
    ] = 10,
    select: Annotated[
        str | None, typer.Option("-k", metavar="EXPR", help="pytest -k expression")
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", help="no line per scenario: the verdict tables, failures and verdict only"
        ),
    ] = False,
    every_record: Annotated[
        bool,
        typer.Option(
            "--every-record",
            help="a line per record as it is judged, passes too (default: those to read only)",
        ),
    ] = False,
    traceback: TracebackOption = False,
    claim: Annotated[
        list[str] | None,
        typer.Option(
            metavar="SPEC",
            help="claim conformance to this spec only: office or work-requests (repeatable)",
        ),
    ] = None,
    allow_unverified: Annotated[
        list[str] | None,
        typer.Option(
            metavar="CRITERION",
            help="a criterion that may stay unverified (a capability it needs is missing)",
        ),
    ] = None,
    strict_interpretations: Annotated[
        bool,
        typer.Option(
            "--strict-interpretations", help="a scenario diverging from a reading fails the run"
        ),
    ] = False,
    sandbox: Annotated[
        bool,
        typer.Option(
            "--sandbox",
            help="run the exec: implementation under bubblewrap: read-only files, no network, "
            "its own PID namespace (docs/trust.md)",
        ),
    ] = False,
    pass_env: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="hand this environment variable to the implementation too (repeatable); it "
            "gets only PATH, HOME, LANG, TMPDIR and CONFORMANCE_STORE otherwise",
        ),
    ] = None,
    sign_key_file: SignKey = None,
    properties: Annotated[
        Budget,
        typer.Option(
            help="the property checks beside the scenarios: none, ci (seconds each) or thorough "
            "(many more examples); a counterexample is printed as a Gherkin scenario"
        ),
    ] = Budget.CI,
    seed: Seed = None,
    jobs: Annotated[
        str,
        typer.Option(
            metavar="N",
            help="spread the scenarios and property checks over N worker processes, each with "
            "implementation processes of its own (auto: one per core); one stream, in the "
            "inventory's order, with the verdicts of --jobs 1",
        ),
    ] = "1",
    shard: Annotated[
        str | None,
        typer.Option(
            metavar="K/N",
            help="run the K-th of N disjoint, stable parts of the inventory (a CI matrix; needs "
            "--seed); `conformance merge` joins the parts' streams into one run's",
        ),
    ] = None,
) -> None:
    """Run the Gherkin suite and the property checks against an implementation, and print the
    per-criterion verdict."""
    import pytest

    from conformance.adapters.containment import Containment
    from conformance.adapters.process_tree import adopting_orphans
    from conformance.reports.terminal import print_verdicts
    from conformance.running.jobs import JobsMemory
    from conformance.running.spread import run_suite
    from conformance.scratch import RUN_FOLDER
    from conformance.spec.registry import default_registry
    from conformance.stream.provenance import suite_digests
    from conformance.stream.redaction import REDACT
    from conformance.suite import pytest_arguments

    REDACT.keep(impl)  # the command as given is the run's identity, never a secret
    if expectations is not None:
        listed_seed = _check_expectations(expectations)
        seed = listed_seed if seed is None else seed
    workers, seed = _spread(jobs, shard, seed, properties, database)
    _load_the_suite()
    kit_before = suite_digests()
    hidden = tuple(path.resolve() for path in (results, sign_key_file) if path is not None)
    containment = Containment(pass_env=tuple(pass_env or ()), sandbox=sandbox, hidden=hidden)
    _check_claim(claim or [], allow_unverified or [])
    scratch = RUN_FOLDER.make("run-")
    stream = results or scratch / "results.jsonl"
    args = [
        *pytest_arguments(properties),
        f"--basetemp={scratch / 'scenarios'}",
        "--impl",
        impl,
        "--results",
        str(stream),
        "-p",
        "no:cov",
        f"--progress={_progress(quiet, every_record)}",
        *TERMINAL_ARGUMENTS,
    ]
    args += ["--database", database] if database else []
    args += ["--expectations", str(expectations)] if expectations else []
    args += ["--maxfail", str(max_fail)] if max_fail else []
    args += ["--restart-budget", str(restart_budget)]
    for spec_file in spec or []:
        args += ["--spec-file", str(spec_file)]
    for spec_name in claim or []:
        args += ["--claim", spec_name]
    for criterion_id in allow_unverified or []:
        args += ["--allow-unverified", criterion_id]
    args += ["--strict-interpretations"] if strict_interpretations else []
    args += ["--sandbox"] if sandbox else []
    for name in pass_env or []:
        args += ["--pass-env", name]
    args += ["--sign-key-file", str(sign_key_file)] if sign_key_file else []
    args += ["-k", select] if select else []
    args += [f"--hypothesis-seed={seed}"] if seed is not None else []
    args += ["--shard", shard] if shard else []
    with adopting_orphans():
        unusable = _preflight(impl, database, containment)
        if unusable is not None:
            _end_every_process()
            run_of_nothing = _unusable(
                impl, unusable, containment, claim, allow_unverified, properties
            )
            _write_stream(run_of_nothing, results, sign_key_file)
            reports = {"junit": junit, "markdown": markdown, "html": html, "cucumber": cucumber}
            _write_reports(run_of_nothing, spec=spec, **reports)
            console.print(f"[bold red]implementation unusable:[/] {escape(unusable)}")
            raise typer.Exit(EXIT_UNUSABLE)
        code, memory = run_suite(
            workers,
            args,
            stream=stream,
            sign_key_file=sign_key_file,
            properties=properties,
            scratch=scratch,
            max_fail=max_fail,
            restart_budget=restart_budget,
            shard=shard,
            progress=_progress_printer(
                _progress(quiet, every_record), _claim_of(claim, allow_unverified)
            ),
        )
        _end_every_process()
    if isinstance(memory, JobsMemory) and memory.fault is not None:
        console.print(f"[bold red]fault of the harness:[/] {escape(memory.fault)}")
        raise typer.Exit(EXIT_HARNESS)
    if code == pytest.ExitCode.INTERNAL_ERROR:
        console.print("[bold red]fault of the harness:[/] pytest stopped with an internal error")
        raise typer.Exit(EXIT_HARNESS)
    if code == pytest.ExitCode.USAGE_ERROR or memory.run is None:
        console.print(f"[bold red]the suite could not run (pytest exit code {int(code)})[/]")
        raise typer.Exit(EXIT_USAGE)
    outcome = memory.run
    trusted = [
        _stream_is_the_harness_s(memory),
        _agrees_with_pytest(memory),
        _kit_unchanged(kit_before),
    ]
    shown = outcome if all(trusted) else _distrusted(outcome)
    _write_reports(shown, junit=junit, markdown=markdown, html=html, cucumber=cucumber, spec=spec)
    print_verdicts(shown, default_registry(), console, results, traceback=traceback)
    verdict = _exit_code(outcome, code)
    raise typer.Exit(verdict if all(trusted) else max(verdict, EXIT_FAILURES))


TERMINAL_ARGUMENTS: Final = ("-qq", "--tb=no", "--no-summary")
"""pytest's own output silenced (its failure section, its letters, its count line): the kit
prints its progress lines, then each failure's account once, after the verdict tables (see
running/progress.py); the stream keeps the whole evidence either way."""


def _progress(quiet: bool, every_record: bool) -> Progress:
    from conformance.running.progress import Progress

    if quiet:
        return Progress.NONE
    return Progress.SCENARIOS if every_record else Progress.PROBLEMS


def _spread(
    jobs: str, shard: str | None, seed: int | None, properties: Budget, database: str | None
) -> tuple[int, int | None]:
    """The workers and the seed of the run (see running.spread); a usage error exits 2."""
    from conformance.running.spread import SpreadError, check_spread

    try:
        return check_spread(jobs, shard, seed, properties, database)
    except SpreadError as error:
        console.print(f"[bold red]configuration error:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error


def _progress_printer(progress: Progress, claim: Claim) -> Callable[[ScenarioResult], None]:
    """A `--jobs` run's progress lines, as a run of one job prints them (running.progress)."""
    from conformance.running.progress import ProgressLines

    lines = ProgressLines(progress, claim)

    def printed(record: ScenarioResult) -> None:
        line = lines.line_for(record)
        if line is not None:
            console.print(line, markup=False, highlight=False)

    return printed


def _distrusted(outcome: ResultsRun) -> ResultsRun:
    """The run as its reports must show it when a check after it failed (the lines above say
    which): failed, whatever its records say, since its exit code is at least 1."""
    footer = outcome.footer
    if footer is None or footer.integrity is not None:
        return outcome
    breach = "a check after the run failed (the stream, pytest's outcomes or the kit's files)"
    return outcome.model_copy(update={"footer": footer.model_copy(update={"integrity": breach})})


def _load_the_suite() -> None:
    """Import the kit's plugin and step modules before any implementation runs: whatever it
    then writes into their folders (a forged .pyc) is never loaded."""
    import importlib

    from conformance.suite import PLUGINS

    for plugin in PLUGINS:
        importlib.import_module(plugin)


def _kit_unchanged(before: dict[str, str]) -> bool:
    """Whether the kit's own files (features, steps, registry, harness code) are as they were
    when the run began: an implementation running as the same user could change them."""
    from conformance.stream.provenance import suite_digests

    after = suite_digests()
    changed = sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )
    for path in changed[:10]:
        console.print(
            f"[bold red]integrity:[/] the kit's file {escape(path)} changed during the run"
        )
    return not changed


def _end_every_process() -> None:
    """Kill every process the run started (parked, spare, or adopted) before judging."""
    from conformance.adapters.exec_pool import PARK
    from conformance.adapters.exec_spares import SPARES
    from conformance.adapters.process_tree import sweep_orphans

    PARK.kill_all()
    SPARES.shut_down()
    sweep_orphans()


def _stream_is_the_harness_s(memory: HarnessMemory) -> bool:
    """Whether the stream on disk is still the one the harness wrote, now that every process
    of the run is gone; if not, the harness's own records are put back."""
    if not memory.stream_altered():
        return True
    memory.restore_stream()
    console.print(
        "[bold red]integrity:[/] the results stream was changed on disk after the run ended; "
        "it was rewritten from the harness's own records, and the run fails"
    )
    return False


def _agrees_with_pytest(memory: HarnessMemory) -> bool:
    disagreements = memory.disagreements()
    for line in disagreements[:10]:
        console.print(f"[bold red]records disagree with pytest:[/] {escape(line)}")
    return not disagreements


def _preflight(impl: str, database: str | None, containment: Containment) -> str | None:
    """Open the implementation once before the suite. A configuration error (an unknown
    implementation, a database that cannot be reached) exits 2 before anything is written; an
    implementation that cannot even start is returned as the cause, for exit 3 with reports."""
    from sqlalchemy.exc import ArgumentError, InterfaceError, OperationalError

    from conformance.adapters.factory import ConfigurationError, open_driver
    from conformance.adapters.faults import unusable_cause
    from conformance.scratch import RUN_FOLDER

    with tempfile.TemporaryDirectory(prefix="preflight-", dir=RUN_FOLDER.path()) as scratch:
        try:
            driver = open_driver(impl, database, Path(scratch), containment=containment)
        except (ConfigurationError, ArgumentError) as error:
            console.print(f"[bold red]configuration error:[/] {escape(str(error))}")
            raise typer.Exit(EXIT_USAGE) from error
        except (OperationalError, InterfaceError) as error:
            reason = str(error.orig) if error.orig is not None else str(error)
            console.print(
                f"[bold red]configuration error:[/] cannot reach the database: {escape(reason)}"
            )
            raise typer.Exit(EXIT_USAGE) from error
        except Exception as error:  # whatever the implementation did, it is unusable
            return unusable_cause(error)
        driver.close()
    return None


def _unusable(
    impl: str,
    cause: str,
    containment: Containment,
    specs: list[str] | None,
    allowed: list[str] | None,
    properties: Budget,
) -> ResultsRun:
    from conformance.inventory import load_inventory
    from conformance.running.run_header import unusable_run
    from conformance.spec.registry import default_registry

    run = unusable_run(
        impl,
        cause,
        containment=containment,
        inventory=load_inventory(properties=properties is not Budget.NONE),
        registry=default_registry(),
        claim=_claim_of(specs, allowed),
    )
    run.header.properties = properties.value
    return run


def _claim_of(specs: list[str] | None, allowed: list[str] | None) -> Claim:
    from conformance.stream.results import SPEC_PREFIXES, Claim

    return Claim(
        specs=sorted(set(specs or [])) or sorted(SPEC_PREFIXES),
        allow_unverified=sorted(set(allowed or [])),
    )


def _write_stream(run: ResultsRun, path: Path | None, sign_key_file: Path | None) -> None:
    """A results stream of a run made without pytest (an unusable implementation's)."""
    from conformance.stream.results import ResultsWriter
    from conformance.stream.stream_integrity import read_key

    if path is None:
        return
    writer = ResultsWriter(path, sign_key=read_key(sign_key_file) if sign_key_file else None)
    for record in (run.header, *run.scenarios, *([run.footer] if run.footer else [])):
        writer.write(record)
    writer.close()


def _check_claim(specs: list[str], allowed: list[str]) -> None:
    """A claim naming an unknown spec or criterion is a usage error, caught before running."""
    from conformance.spec.registry import default_registry
    from conformance.stream.results import SPEC_PREFIXES

    unknown = [f"spec {s!r}" for s in specs if s not in SPEC_PREFIXES] + [
        f"criterion {c!r}" for c in allowed if c not in default_registry().ids()
    ]
    if unknown:
        known = ", ".join(sorted(SPEC_PREFIXES))
        console.print(
            f"[bold red]configuration error:[/] unknown {escape(', '.join(unknown))} "
            f"(specs: {known}; criteria: see `conformance criteria`)"
        )
        raise typer.Exit(EXIT_USAGE)


def _check_expectations(path: Path) -> int | None:
    """Check the file before anything runs; the seed of the search it lists failures of."""
    from conformance.inventory import load_inventory
    from conformance.running.expectations import (
        ExpectationsError,
        expectations_seed,
        load_expectations,
    )

    try:
        load_expectations(path, [entry.key for entry in load_inventory(properties=True)])
        return expectations_seed(path)
    except ExpectationsError as error:
        console.print(f"[bold red]configuration error:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error


def _exit_code(outcome: ResultsRun, pytest_code: int | None) -> int:
    """The run's exit code from its records; `pytest_code` is None when judging a stored
    stream."""
    from conformance.reports.summary import run_succeeded
    from conformance.spec.registry import default_registry

    if outcome.header.implementation_error is not None:
        console.print(
            f"[bold red]implementation unusable:[/] {escape(outcome.header.implementation_error)}"
        )
        return EXIT_UNUSABLE
    if outcome.footer is not None and outcome.footer.integrity is not None:
        console.print(f"[bold red]integrity:[/] {escape(outcome.footer.integrity)}")
        return EXIT_FAILURES
    if outcome.footer is not None and outcome.footer.stopped is not None:
        console.print(f"[bold red]run stopped:[/] {escape(outcome.footer.stopped)}")
        return EXIT_UNUSABLE
    if pytest_code == NO_TESTS_COLLECTED or not outcome.scenarios:
        console.print("[bold red]no scenario ran[/]")
        return EXIT_FAILURES
    return EXIT_OK if run_succeeded(outcome, default_registry()) else EXIT_FAILURES


def _write_reports(
    outcome: ResultsRun,
    *,
    junit: Path | None,
    markdown: Path | None,
    html: Path | None,
    cucumber: Path | None,
    spec: list[Path] | None = None,
) -> None:
    """Every report asked for; with spec files, the cited clauses quote the spec's own words."""
    from conformance.reports.cucumber import render_cucumber
    from conformance.reports.html import render_html
    from conformance.reports.junit import render_junit
    from conformance.reports.markdown import render_markdown
    from conformance.spec.registry import default_registry
    from conformance.spec.spec_drift import quote_clauses

    registry = default_registry()
    quotes = quote_clauses(spec, registry) if spec else {}
    renderers: list[tuple[Path | None, Callable[[], str]]] = [
        (junit, lambda: render_junit(outcome, registry)),
        (markdown, lambda: render_markdown(outcome, registry, quotes)),
        (html, lambda: render_html(outcome, registry, quotes)),
        (cucumber, lambda: render_cucumber(outcome, registry)),
    ]
    for path, render in renderers:
        if path is not None:
            path.write_text(render(), encoding="utf-8")


@app.command(short_help="verify a results stream and derive reports from it")
def report(
    results: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
    junit: JunitOut = None,
    markdown: MarkdownOut = None,
    html: HtmlOut = None,
    cucumber: CucumberOut = None,
    spec: Annotated[
        list[Path] | None,
        typer.Option(exists=True, help="source spec file or folder: reports quote its words"),
    ] = None,
    sign_key_file: SignKey = None,
    traceback: TracebackOption = False,
) -> None:
    """Verify a results stream, derive reports from it (with no option, print the verdict
    table) and exit with the run's verdict: 0, 1 or 3, as `run` did; 2 for a broken stream."""
    from conformance.reports.terminal import print_verdicts
    from conformance.spec.registry import default_registry

    outcome = _read(results, sign_key_file)
    if not any((junit, markdown, html, cucumber)):
        print_verdicts(outcome, default_registry(), console, results, traceback=traceback)
    _write_reports(outcome, junit=junit, markdown=markdown, html=html, cucumber=cucumber, spec=spec)
    raise typer.Exit(_exit_code(outcome, pytest_code=None))


@app.command(short_help="list the criteria, their clauses and the scenarios covering each")
def criteria(
    spec: Annotated[
        list[Path] | None,
        typer.Option(exists=True, help="source spec file or folder: quote each clause's words"),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Argument(metavar="[CRITERION]...", help="only these criteria (default: all)"),
    ] = None,
) -> None:
    """List every criterion with its clauses: each clause's id and the kit's wording of it, how
    many scenarios cite it, whether it cannot be observed through the port and why, and with
    `--spec`, the source sentences it rests on."""
    from rich.table import Table

    from conformance.inventory import load_inventory
    from conformance.spec.registry import default_registry
    from conformance.spec.spec_drift import quote_clauses

    registry = default_registry()
    chosen = [registry.criterion(c) if c in registry.ids() else _unknown(c) for c in only or []]
    inventory = load_inventory()
    quoted = quote_clauses(spec, registry) if spec else {}
    table = Table(
        title=f"{len(registry.criteria)} criteria, {len(registry.clauses)} clauses",
        title_justify="left",
        show_lines=True,
    )
    for column in ("criterion / clause", "scenarios", "what it requires"):
        table.add_column(column, no_wrap=column != "what it requires")
    for criterion in chosen or registry.criteria:
        covering = [entry for entry in inventory if criterion.id in entry.criteria]
        style = "" if covering else "[bold red]"
        table.add_row(
            f"[bold]{escape(criterion.id)}", f"{style}{len(covering)}", escape(criterion.statement)
        )
        for clause in criterion.clauses:
            tag = f"clause:{clause.id.split('/')[1]}"
            citing = sum(1 for entry in covering if tag in entry.tags)
            said = escape(clause.statement)
            if clause.not_observable:
                said += (
                    f"\n[italic]not observable through the port: {escape(clause.not_observable)}"
                )
            if clause.id in quoted:
                said += f"\n[dim]the spec: {escape(quoted[clause.id])}"
            table.add_row(f"  {escape(clause.id.split('/')[1])}", str(citing), said)
    console.print(table)


def _unknown(criterion: str) -> NoReturn:
    console.print(
        f"[bold red]configuration error:[/] unknown criterion {escape(criterion)!r} "
        "(`conformance criteria` lists them)"
    )
    raise typer.Exit(EXIT_USAGE)


@app.command("serve-reference", short_help="serve the reference over protocol v1")
def serve_reference(
    database: Annotated[
        str | None,
        typer.Option(help="SQLAlchemy URL of the store (default: a file in $CONFORMANCE_STORE)"),
    ] = None,
    validate: Annotated[bool, typer.Option(help="check every message against the schema")] = False,
    mutant: Annotated[str | None, typer.Option(help="serve this deliberate defect")] = None,
    variant: Annotated[
        str | None, typer.Option(help="serve this legal variant (see `conformance variants`)")
    ] = None,
) -> None:
    """Serve the reference over protocol v1 on stdin and stdout (for `--impl exec:`)."""
    from conformance.wire.serve import main as serve_main

    argv = (["--database", database] if database else []) + (["--validate"] if validate else [])
    argv += ["--mutant", mutant] if mutant else []
    argv += ["--variant", variant] if variant else []
    raise typer.Exit(serve_main(argv))


@app.command("check-spec", short_help="compare source spec files with the registry")
def check_spec(
    paths: Annotated[list[Path], typer.Argument(exists=True, help="spec files or folders")],
    accept_ids: Annotated[
        list[str] | None,
        typer.Option("--accept", help="record this criterion's or clause's current text hash"),
    ] = None,
) -> None:
    """Compare source spec files with the registry: new, removed and changed criteria."""
    from conformance.inventory import load_inventory
    from conformance.spec.registry import default_registry
    from conformance.spec.spec_drift import SpecDriftError, accept, check_drift, expand_spec_paths

    registry = default_registry()
    paths = expand_spec_paths(paths, registry)
    try:
        if accept_ids:
            for criterion_id in accept(accept_ids, paths, registry):
                console.print(f"accepted the current text of {escape(criterion_id)}")
            return
        drift = check_drift(paths, registry, load_inventory())
    except SpecDriftError as error:
        console.print(f"[bold red]{escape(str(error))}[/]")
        raise typer.Exit(EXIT_USAGE) from error
    for criterion_id in drift.new:
        note = " (no scenario yet)" if criterion_id in drift.uncovered_new else ""
        console.print(f"new: {escape(criterion_id)} is in the spec but not in the registry{note}")
    for criterion_id, scenarios in drift.removed:
        console.print(
            f"removed: {escape(criterion_id)} left the spec; {scenarios} scenario(s) still pin it"
        )
    for criterion_id in drift.changed:
        console.print(
            f"changed: {escape(criterion_id)}: its scenarios need review (then --accept it)"
        )
    for clause_id in drift.changed_clauses:
        console.print(
            f"changed: clause {escape(clause_id)}: its span's words changed (review, --accept)"
        )
    for clause_id, reason in drift.lost_clauses:
        console.print(f"lost: clause {escape(clause_id)}: {escape(reason)} (correct its locator)")
    if not drift.clean:
        raise typer.Exit(EXIT_FAILURES)
    console.print(f"no drift: {len(paths)} spec file(s) match the registry")


@app.command(short_help="several implementations' verdicts side by side")
def compare(
    results: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False)],
    html: Annotated[
        Path | None, typer.Option(dir_okay=False, help="write the matrix as an HTML page here")
    ] = None,
    markdown: Annotated[
        Path | None, typer.Option(dir_okay=False, help="write the matrix as Markdown here")
    ] = None,
    sign_key_file: SignKey = None,
) -> None:
    """Show several runs' per-criterion verdicts side by side (each stream verified first):
    runs as columns, named by implementation (and, for two of one implementation, by when,
    seed and kit), each judged by its own run's claim, with counts, the rows where they
    disagree marked, and who reads each open question otherwise. Given two runs, first what
    newly fails, what was fixed and what else changed verdict from the first to the second."""
    from conformance.reports.compare import (
        column_names,
        comparison_table,
        diff_lines,
        divergence_table,
        matrix,
        render_compare_html,
        render_compare_markdown,
    )
    from conformance.spec.registry import default_registry

    runs = [_read(path, sign_key_file) for path in results]
    names = column_names(runs, [path.stem for path in results])
    registry = default_registry()
    for name, run in zip(names, runs, strict=True):
        console.print(
            f"{name}: {run.header.implementation}, claims {', '.join(run.header.claim.specs)}",
            markup=False,
            highlight=False,
        )
    for line in diff_lines(matrix(runs, names, registry)):
        console.print(line, markup=False, highlight=False)
    console.print(comparison_table(runs, names, registry))
    console.print(divergence_table(runs, names, registry))
    if html is not None:
        html.write_text(render_compare_html(runs, names, registry), encoding="utf-8")
    if markdown is not None:
        markdown.write_text(render_compare_markdown(runs, names, registry), encoding="utf-8")


@app.command(short_help="join the parts of a sharded run into one run")
def merge(
    parts: Annotated[
        list[Path],
        typer.Argument(
            exists=True, dir_okay=False, metavar="PART", help="each part's results stream"
        ),
    ],
    output: Annotated[
        Path, typer.Option(dir_okay=False, metavar="FILE", help="the merged stream to write")
    ],
    junit: JunitOut = None,
    markdown: MarkdownOut = None,
    html: HtmlOut = None,
    cucumber: CucumberOut = None,
    sign_key_file: SignKey = None,
) -> None:
    """Join the streams of the N parts of one sharded run (`run --shard K/N`) into the stream
    of a single run, after verifying each and that together they are every part of one run
    (one kit, one implementation, one seed), each once; print its verdict and exit with it as
    `report` does. A part missing, given twice or of another run is refused: exit code 2."""
    from conformance.reports.terminal import print_verdicts
    from conformance.running.merge import MergeRefused, merge_parts, write_run
    from conformance.spec.registry import default_registry
    from conformance.stream.stream_integrity import BrokenStream, read_key

    try:
        key = read_key(sign_key_file) if sign_key_file else None
        merged = merge_parts(parts, kit=_kit_inventory(), key=key)
    except (MergeRefused, BrokenStream) as error:
        console.print(f"[bold red]not merged:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error
    write_run(merged, output, sign_key=key)
    print_verdicts(merged, default_registry(), console, output)
    _write_reports(merged, junit=junit, markdown=markdown, html=html, cucumber=cucumber)
    raise typer.Exit(_exit_code(merged, pytest_code=None))


@app.command(short_help="an SVG badge of a run")
def badge(
    results: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
    output: Annotated[Path, typer.Option(dir_okay=False, help="the SVG file to write")],
    label: Annotated[str, typer.Option(help="the badge's left-hand text")] = "conformance",
    sign_key_file: SignKey = None,
) -> None:
    """Write an SVG badge of a (verified) run: the claimed criteria passed, of all claimed."""
    from conformance.reports.badge import render_badge
    from conformance.spec.registry import default_registry

    output.write_text(render_badge(_read(results, sign_key_file), default_registry(), label))
    console.print(f"wrote {output}", markup=False)


@app.command(short_help="list the deliberate defects strength must catch")
def mutants() -> None:
    """List the deliberate defects `strength` must catch, each with the criterion it breaks."""
    from rich.table import Table

    from conformance.spec.registry import short_id

    known = _family("mutant").members
    table = Table(title=f"{len(known)} mutants (--impl mutant:NAME)", title_justify="left")
    for column in ("mutant", "criterion", "declares", "defect"):
        table.add_column(column, no_wrap=column != "defect")
    for mutant in sorted(known.values(), key=lambda m: (m.criterion, m.name)):
        table.add_row(
            escape(mutant.name),
            short_id(mutant.criterion),
            escape(_readings_named(mutant.readings)),
            escape(mutant.description),
        )
    console.print(table)


def _readings_named(readings: Mapping[str, str]) -> str:
    return ", ".join(f"{q} as {name}" for q, name in sorted(readings.items())) or "-"


@app.command(short_help="list the open questions and their readings")
def readings(
    spec: Annotated[
        list[Path] | None,
        typer.Option(exists=True, help="source spec file or folder: quote the sentences read"),
    ] = None,
) -> None:
    """List the open questions of the register, each with the criteria it touches, the clauses
    whose spec sentences it reads (quoted with `--spec`), and the readings an implementation may
    declare in its handshake (`readings`): the kit's own, then the alternatives, each with the
    kinds of answer it allows; then the retired questions, whose numbers are never reused."""
    from rich.table import Table

    from conformance.spec.registry import KIT_READING, default_registry, short_id
    from conformance.spec.spec_drift import quote_clauses

    registry = default_registry()
    quoted = quote_clauses(spec, registry) if spec else {}
    table = Table(title="Open questions and their readings", title_justify="left")
    for column in ("question", "criteria", "reading", "model follows", "allows", "what it says"):
        table.add_column(column, no_wrap=column not in ("what it says", "criteria"))
    for interpretation in registry.active_interpretations():
        kit_followed = "yes" if interpretation.id.startswith("WR-") else "-"
        criteria = ", ".join(short_id(c) for c in interpretation.criteria)
        table.add_row(
            interpretation.id,
            criteria,
            KIT_READING,
            kit_followed,
            "",
            escape(interpretation.reading) + _sentences_read(interpretation.interprets, quoted),
        )
        for alternative in interpretation.alternatives:
            followed = "yes" if alternative.followed else "-"
            allows = ", ".join(alternative.allows)
            table.add_row("", "", alternative.name, followed, allows, escape(alternative.reading))
    console.print(table)
    retired = [i for i in registry.interpretations if not i.active]
    if retired:
        gone = Table(title="Retired questions (never reused)", title_justify="left")
        gone.add_column("question", no_wrap=True)
        gone.add_column("why")
        for interpretation in retired:
            gone.add_row(interpretation.id, escape(interpretation.retired or ""))
        console.print(gone)


def _sentences_read(clause_ids: tuple[str, ...], quoted: dict[str, str]) -> str:
    """The clauses a question reads, each with its spec sentence where one was quoted."""
    from conformance.spec.registry import short_id

    lines = []
    for clause_id in clause_ids:
        said = f": {quoted[clause_id]}" if clause_id in quoted else ""
        lines.append(f"\n[dim]reads {escape(short_id(clause_id))}{escape(said)}[/]")
    return "".join(lines)


@app.command(short_help="list the legal variants strength must accept")
def variants() -> None:
    """List the legal variants `strength` must accept, each with the readings it takes."""
    from rich.table import Table

    known = _family("variant").members
    table = Table(title=f"{len(known)} variants (--impl variant:NAME)", title_justify="left")
    for column in ("variant", "reads otherwise", "declares it", "freedom taken"):
        table.add_column(column, no_wrap=column != "freedom taken")
    for variant in sorted(known.values(), key=lambda v: v.name):
        declares = "yes" if variant.declares_readings else "-"
        readings = _readings_named(variant.readings)
        table.add_row(escape(variant.name), escape(readings), declares, escape(variant.description))
    console.print(table)


def _family(kind: str) -> Family[Any]:
    """The mutants or variants, as their package hands them in; a kit installed without them
    exits 2 saying so."""
    from conformance.implementations import FamilyMissing, family

    try:
        return family(kind)
    except FamilyMissing as error:
        console.print(f"[bold red]configuration error:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error


@app.command(short_help="judge the kit: every mutant killed, every variant passed")
def strength(
    mutant: Annotated[
        list[str] | None,
        typer.Option(help="only mutants whose name matches this glob (repeatable)"),
    ] = None,
    variant: Annotated[
        list[str] | None,
        typer.Option(help="only variants whose name matches this glob (repeatable)"),
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="suite runs at once")] = 2,
    select: Annotated[str | None, typer.Option("-k", help="pytest -k expression")] = None,
    all_features: Annotated[
        bool, typer.Option(help="run every feature file against every mutant and variant")
    ] = False,
    thorough: Annotated[
        bool,
        typer.Option(help="run every mutant through its whole suite, for the full kills table"),
    ] = False,
    keep: Annotated[
        Path | None,
        typer.Option(file_okay=False, help="keep each run's results stream and log here"),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", dir_okay=False, help="write the kills and verdicts as JSON here"),
    ] = None,
    fresh_interpreters: Annotated[
        bool,
        typer.Option(help="start each suite run in a new interpreter, not forked from a warm one"),
    ] = False,
    over_the_wire: Annotated[
        bool,
        typer.Option(help="serve each variant through exec: (serve-reference --variant)"),
    ] = False,
    properties: Annotated[
        Budget,
        typer.Option(
            help="the property checks each run makes beside its scenarios, for the control, "
            "the mutants and the variants alike: none, ci or thorough (see docs/strength.md)"
        ),
    ] = Budget.NONE,
    seed: Seed = None,
) -> None:
    """Run the suite against every mutant (each must be killed by its own criterion) and every
    legal variant (each must pass, or diverge only where it says); 1 if either side fails."""
    from conformance import strength as kit_strength
    from conformance import strength_report

    narrowed = bool(mutant or variant)
    try:
        chosen = kit_strength.select_mutants(mutant or []) if mutant or not narrowed else []
        legal = kit_strength.select_variants(variant or []) if variant or not narrowed else []
        checks = kit_strength.Properties(properties, seed)
    except ValueError as error:
        console.print(f"[bold red]{escape(str(error))}[/]")
        raise typer.Exit(EXIT_USAGE) from error
    with _strength_progress(len(chosen), len(legal)) as progress:
        outcome = kit_strength.run_strength(
            chosen,
            variants=legal,
            jobs=jobs,
            select=select,
            partial=narrowed,
            all_features=all_features,
            thorough=thorough,
            keep=keep,
            progress=progress,
            method=kit_strength.Method(fresh_interpreters, over_the_wire),
            properties=checks,
        )
    strength_report.print_report(outcome, console)
    if json_out is not None:
        strength_report.write_json(outcome, json_out)
    raise typer.Exit(EXIT_OK if outcome.succeeded() else EXIT_FAILURES)


@contextmanager
def _strength_progress(mutants: int, variants: int) -> Iterator[Callable[[TargetRun], None]]:
    """Progress over the suite runs (the control, each mutant, each variant, and any mutant its
    own criterion missed, run again whole) with the kills so far: a bar on a terminal, a line
    per finished run in a CI log."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from conformance.stream.results import Status

    counts = {"done": 0, "kills": 0, "total": 1 + mutants + variants}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    on_terminal = console.is_terminal
    with Progress(
        *columns,
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not on_terminal,
    ) as bar:
        task = bar.add_task("strength", total=counts["total"])

        def finished(run: TargetRun) -> None:
            statuses = run.statuses().values() if run.results is not None else []
            killed = any(status is Status.FAILED for _, status in statuses)
            counts["kills"] += run.target.impl.startswith("mutant:") and killed
            counts["done"] += 1
            counts["total"] = max(counts["total"], counts["done"])
            line = (
                f"strength: {counts['done']}/{counts['total']} suite runs done "
                f"({run.target.label}), {counts['kills']} mutant(s) killed so far"
            )
            bar.update(task, completed=counts["done"], total=counts["total"], description=line)
            if not on_terminal:
                console.print(line, markup=False, highlight=False)

        yield finished


@expectations_app.command("update", short_help="write an expectations file from a run")
def expectations_update(
    results: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
    output: Annotated[
        Path, typer.Option(dir_okay=False, help="the expectations file to write (or update)")
    ],
    issue: Annotated[
        str, typer.Option(help="issue link recorded for new entries")
    ] = "TODO: link an issue",
    sign_key_file: SignKey = None,
) -> None:
    """Write an expectations file listing every scenario that failed in a (verified) results
    stream, with the seed of its property checks' search where one of them failed."""
    from conformance.inventory import load_inventory
    from conformance.running.expectations import (
        ExpectedFailure,
        load_expectations,
        render_expectations,
    )
    from conformance.stream.results import Status

    outcome = _read(results, sign_key_file)
    keys = [entry.key for entry in load_inventory(properties=True)]
    known = load_expectations(output, keys) if output.exists() else {}
    failing = {Status.FAILED, Status.XFAIL}
    entries = [
        known.get(r.key) or ExpectedFailure(r.key, issue, r.failure.headline if r.failure else "")
        for r in outcome.scenarios
        if r.status in failing
    ]
    text = render_expectations(entries, outcome.header.seed)
    output.write_text(text, encoding="utf-8")
    console.print(f"wrote {len(entries)} expected failures to {output}", markup=False)
    if "[search]" in text:
        console.print(
            f"and the seed of the search that found its property-check failures, "
            f"{outcome.header.seed}: a run given the file repeats that search (unless told "
            "--seed), so they are met again on every run",
            markup=False,
        )


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


def main() -> None:
    """The command, with any exception the harness did not expect turned into exit code 4 and
    one line: Python's own exit code for it, 1, would read as a failed scenario."""
    try:
        app()
    except Exception as error:  # every fault of the harness ends here
        sys.stderr.write(_harness_fault(error) + "\n")
        sys.exit(EXIT_HARNESS)


def _harness_fault(error: Exception) -> str:
    """The one line a harness fault prints, with the traceback kept in a file for a report."""
    import traceback

    cause = " ".join(f"{type(error).__name__}: {error}".split())
    cause = cause if len(cause) <= 200 else cause[:199] + "…"
    line = f"conformance: fault of the harness, no verdict on the implementation: {cause}"
    try:
        with tempfile.NamedTemporaryFile(
            "w", prefix="conformance-fault-", suffix=".txt", delete=False, encoding="utf-8"
        ) as kept:
            kept.write("".join(traceback.format_exception(error)))
    except OSError:
        return line
    return f"{line} (traceback in {kept.name})"
