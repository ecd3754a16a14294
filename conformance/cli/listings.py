"""The commands that list what the kit holds (criteria, readings, mutants, variants), check the
spec's text, and serve the reference."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape

if TYPE_CHECKING:
    from conformance.implementations import Family


import conformance.cli.common as common
from conformance.cli.common import (
    EXIT_FAILURES,
    EXIT_USAGE,
    app,
)


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
    common.console.print(table)


def _unknown(criterion: str) -> NoReturn:
    common.console.print(
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
                common.console.print(f"accepted the current text of {escape(criterion_id)}")
            return
        drift = check_drift(paths, registry, load_inventory())
    except SpecDriftError as error:
        common.console.print(f"[bold red]{escape(str(error))}[/]")
        raise typer.Exit(EXIT_USAGE) from error
    for criterion_id in drift.new:
        note = " (no scenario yet)" if criterion_id in drift.uncovered_new else ""
        common.console.print(
            f"new: {escape(criterion_id)} is in the spec but not in the registry{note}"
        )
    for criterion_id, scenarios in drift.removed:
        common.console.print(
            f"removed: {escape(criterion_id)} left the spec; {scenarios} scenario(s) still pin it"
        )
    for criterion_id in drift.changed:
        common.console.print(
            f"changed: {escape(criterion_id)}: its scenarios need review (then --accept it)"
        )
    for clause_id in drift.changed_clauses:
        common.console.print(
            f"changed: clause {escape(clause_id)}: its span's words changed (review, --accept)"
        )
    for clause_id, reason in drift.lost_clauses:
        common.console.print(
            f"lost: clause {escape(clause_id)}: {escape(reason)} (correct its locator)"
        )
    if not drift.clean:
        raise typer.Exit(EXIT_FAILURES)
    common.console.print(f"no drift: {len(paths)} spec file(s) match the registry")


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
    common.console.print(table)


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
    common.console.print(table)
    retired = [i for i in registry.interpretations if not i.active]
    if retired:
        gone = Table(title="Retired questions (never reused)", title_justify="left")
        gone.add_column("question", no_wrap=True)
        gone.add_column("why")
        for interpretation in retired:
            gone.add_row(interpretation.id, escape(interpretation.retired or ""))
        common.console.print(gone)


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
    common.console.print(table)


def _family(kind: str) -> Family[Any]:
    """The mutants or variants, as their package hands them in; a kit installed without them
    exits 2 saying so."""
    from conformance.implementations import FamilyMissing, family

    try:
        return family(kind)
    except FamilyMissing as error:
        common.console.print(f"[bold red]configuration error:[/] {escape(str(error))}")
        raise typer.Exit(EXIT_USAGE) from error
