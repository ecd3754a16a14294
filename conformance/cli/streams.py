"""The commands that read results streams: report, compare, merge, badge, and expectations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

if TYPE_CHECKING:
    pass


import conformance.cli.common as common
from conformance.cli.common import (
    EXIT_USAGE,
    CucumberOut,
    HtmlOut,
    JunitOut,
    MarkdownOut,
    SignKey,
    TracebackOption,
    _kit_inventory,
    _read,
    app,
    expectations_app,
)
from conformance.cli.run import exit_code, write_reports


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
        print_verdicts(outcome, default_registry(), common.console, results, traceback=traceback)
    write_reports(outcome, junit=junit, markdown=markdown, html=html, cucumber=cucumber, spec=spec)
    raise typer.Exit(exit_code(outcome, pytest_code=None))


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
        common.console.print(
            f"{name}: {run.header.implementation}, claims {', '.join(run.header.claim.specs)}",
            markup=False,
            highlight=False,
        )
    for line in diff_lines(matrix(runs, names, registry)):
        common.console.print(line, markup=False, highlight=False)
    common.console.print(comparison_table(runs, names, registry))
    common.console.print(divergence_table(runs, names, registry))
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
        common.console.print(f"[bold red]not merged:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error
    write_run(merged, output, sign_key=key)
    print_verdicts(merged, default_registry(), common.console, output)
    write_reports(merged, junit=junit, markdown=markdown, html=html, cucumber=cucumber)
    raise typer.Exit(exit_code(merged, pytest_code=None))


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
    common.console.print(f"wrote {output}", markup=False)


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
    common.console.print(f"wrote {len(entries)} expected failures to {output}", markup=False)
    if "[search]" in text:
        common.console.print(
            f"and the seed of the search that found its property-check failures, "
            f"{outcome.header.seed}: a run given the file repeats that search (unless told "
            "--seed), so they are met again on every run",
            markup=False,
        )
