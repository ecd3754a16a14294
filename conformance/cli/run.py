"""`conformance run`: the suite against an implementation, its stream, reports and exit code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from conformance.properties import Budget

if TYPE_CHECKING:
    from conformance.running.options import Progress, SuiteOptions
    from conformance.stream.results import ResultsRun


import conformance.cli.common as common
from conformance.cli.common import (
    EXIT_CODES_HELP,
    EXIT_FAILURES,
    EXIT_HARNESS,
    EXIT_OK,
    EXIT_UNUSABLE,
    EXIT_USAGE,
    NO_TESTS_COLLECTED,
    CucumberOut,
    HtmlOut,
    JunitOut,
    MarkdownOut,
    ResultsOut,
    Seed,
    SignKey,
    TracebackOption,
    app,
)


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
    from conformance.reports.terminal import print_verdicts
    from conformance.running.options import SuiteOptions
    from conformance.running.suite_run import (
        HarnessFault,
        Misconfigured,
        NotRun,
        RunPlan,
        Unusable,
        load_the_suite,
        run_the_suite,
    )
    from conformance.scratch import RUN_FOLDER
    from conformance.spec.registry import default_registry
    from conformance.stream.redaction import REDACT

    REDACT.keep(impl)  # the command as given is the run's identity, never a secret
    if expectations is not None:
        listed_seed = _check_expectations(expectations)
        seed = listed_seed if seed is None else seed
    workers, seed = _spread(jobs, shard, seed, properties, database)
    kit_before = load_the_suite()
    _check_claim(claim or [], allow_unverified or [])
    scratch = RUN_FOLDER.make("run-")
    options = SuiteOptions(
        impl=impl,
        database=database,
        results=results or scratch / "results.jsonl",
        restart_budget=restart_budget,
        expectations=expectations,
        claim=tuple(claim or ()),
        allow_unverified=tuple(allow_unverified or ()),
        strict_interpretations=strict_interpretations,
        sandbox=sandbox,
        pass_env=tuple(pass_env or ()),
        sign_key_file=sign_key_file,
        shard=shard,
        spec_files=tuple(spec or ()),
        progress=_progress(quiet, every_record),
    )
    plan = RunPlan(properties, workers, seed, select, max_fail, scratch)
    reports = {"junit": junit, "markdown": markdown, "html": html, "cucumber": cucumber}
    outcome = run_the_suite(options, plan, kit_before)
    if isinstance(outcome, Misconfigured):
        common.console.print(f"[bold red]configuration error:[/] {escape(outcome.message)}")
        raise typer.Exit(EXIT_USAGE)
    if isinstance(outcome, Unusable):
        run_of_nothing = _unusable(options, outcome.cause, properties)
        _write_stream(run_of_nothing, results, sign_key_file)
        write_reports(run_of_nothing, spec=spec, **reports)
        common.console.print(f"[bold red]implementation unusable:[/] {escape(outcome.cause)}")
        raise typer.Exit(EXIT_UNUSABLE)
    if isinstance(outcome, HarnessFault):
        common.console.print(f"[bold red]fault of the harness:[/] {escape(outcome.message)}")
        raise typer.Exit(EXIT_HARNESS)
    if isinstance(outcome, NotRun):
        code = outcome.pytest_code
        common.console.print(f"[bold red]the suite could not run (pytest exit code {code})[/]")
        raise typer.Exit(EXIT_USAGE)
    for breach in outcome.breaches:
        common.console.print(f"[bold red]{breach.check}:[/] {escape(breach.found)}")
    shown = _distrusted(outcome.run) if outcome.breaches else outcome.run
    write_reports(shown, spec=spec, **reports)
    print_verdicts(shown, default_registry(), common.console, results, traceback=traceback)
    verdict = exit_code(outcome.run, outcome.pytest_code)
    raise typer.Exit(max(verdict, EXIT_FAILURES) if outcome.breaches else verdict)


def _progress(quiet: bool, every_record: bool) -> Progress:
    from conformance.running.options import Progress

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
        common.console.print(f"[bold red]configuration error:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error


def _distrusted(outcome: ResultsRun) -> ResultsRun:
    """The run as its reports must show it when a check after it failed (the lines above say
    which): failed, whatever its records say, since its exit code is at least 1."""
    footer = outcome.footer
    if footer is None or footer.integrity is not None:
        return outcome
    breach = "a check after the run failed (the stream, pytest's outcomes or the kit's files)"
    return outcome.model_copy(update={"footer": footer.model_copy(update={"integrity": breach})})


def _unusable(options: SuiteOptions, cause: str, properties: Budget) -> ResultsRun:
    from conformance.inventory import load_inventory
    from conformance.running.run_header import unusable_run
    from conformance.spec.registry import default_registry

    run = unusable_run(
        options.impl,
        cause,
        containment=options.containment(),
        inventory=load_inventory(properties=properties is not Budget.NONE),
        registry=default_registry(),
        claim=options.claimed(),
    )
    run.header.properties = properties.value
    return run


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
        common.console.print(
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
        common.console.print(f"[bold red]configuration error:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error


def exit_code(outcome: ResultsRun, pytest_code: int | None) -> int:
    """The run's exit code from its records; `pytest_code` is None when judging a stored
    stream."""
    from conformance.reports.summary import run_succeeded
    from conformance.spec.registry import default_registry

    if outcome.header.implementation_error is not None:
        common.console.print(
            f"[bold red]implementation unusable:[/] {escape(outcome.header.implementation_error)}"
        )
        return EXIT_UNUSABLE
    if outcome.footer is not None and outcome.footer.integrity is not None:
        common.console.print(f"[bold red]integrity:[/] {escape(outcome.footer.integrity)}")
        return EXIT_FAILURES
    if outcome.footer is not None and outcome.footer.stopped is not None:
        common.console.print(f"[bold red]run stopped:[/] {escape(outcome.footer.stopped)}")
        return EXIT_UNUSABLE
    if pytest_code == NO_TESTS_COLLECTED or not outcome.scenarios:
        common.console.print("[bold red]no scenario ran[/]")
        return EXIT_FAILURES
    return EXIT_OK if run_succeeded(outcome, default_registry()) else EXIT_FAILURES


def write_reports(
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
