"""`conformance merge`: the parts of a sharded run (`--shard K/N`) joined into one run's stream.

Every part is verified first, as `report` would (schema, chain, totals, its part of this kit's
inventory, the signature with a key). The parts must then be one run's: the same kit (version,
commit, the digests of every suite file), the same implementation (the command, its digests and
what it said of itself), the same seed and budget of the property checks, the same claim, and
the same N; together they must hold each part 1..N exactly once, so every scenario of the
inventory exactly once. Anything else is refused with the reason (`MergeRefused`).

The merged stream is the stream a single run would have written: the first part's header
without its shard (the inventory it names is the whole one), the records in the order a single
run writes them (what ran in the inventory's order, then what did not run), and a footer whose
totals, count and stop are the parts' together; it is chained (and signed, with a key) anew.
Its reports and exit code are those of the single run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from conformance.spec.scenario_keys import inventory_digest
from conformance.stream.results import (
    NOT_RUN,
    Footer,
    Header,
    ResultsRun,
    ResultsWriter,
    ScenarioResult,
    Status,
    totals,
)
from conformance.stream.stream_integrity import BrokenStream, KitInventory, verify_stream

SAME_RUN: Final[tuple[tuple[str, Callable[[Header], object]], ...]] = (
    ("kit version", lambda h: h.kit_version),
    ("protocol version", lambda h: h.protocol_version),
    ("kit commit", lambda h: h.provenance.kit_commit if h.provenance else None),
    ("kit's suite files", lambda h: h.provenance.suite if h.provenance else None),
    ("spec texts", lambda h: h.spec_hashes),
    ("implementation", lambda h: h.implementation),
    (
        "implementation's files",
        lambda h: h.provenance.implementation_digests if h.provenance else None,
    ),
    ("implementation's description of itself", lambda h: h.description),
    ("database", lambda h: h.database),
    ("property budget", lambda h: h.properties),
    ("seed", lambda h: h.seed),
    ("claim", lambda h: h.claim),
    ("number of parts", lambda h: h.shard.count if h.shard else None),
    ("inventory", lambda h: h.shard.inventory if h.shard else None),
    ("sandbox", lambda h: h.provenance.sandbox if h.provenance else None),
    ("environment handed on", lambda h: h.provenance.pass_env if h.provenance else None),
)
"""What every part of one run has in common, each with the name the refusal gives it."""


class MergeRefused(ValueError):
    """The parts given are not the whole of one run; the message says why."""


def merge_parts(
    paths: Sequence[Path], *, kit: KitInventory, key: bytes | None = None
) -> ResultsRun:
    """The single run the parts at `paths` make together, or MergeRefused."""
    if not paths:
        raise MergeRefused("no part given")
    parts = []
    for path in paths:
        try:
            parts.append((path, verify_stream(path, key=key, kit=kit)))
        except BrokenStream as error:
            raise MergeRefused(f"not a trustworthy part: {error}") from error
    _check_one_run(parts)
    _check_every_part_once(parts)
    return _joined([run for _, run in parts], kit)


def _check_one_run(parts: list[tuple[Path, ResultsRun]]) -> None:
    for path, run in parts:
        if run.header.shard is None:
            raise MergeRefused(f"{path} is the stream of a whole run, not of a part (--shard K/N)")
    first_path, first = parts[0]
    for path, run in parts[1:]:
        for name, value in SAME_RUN:
            if value(run.header) != value(first.header):
                raise MergeRefused(
                    f"{path} is a part of another run than {first_path}: its {name} differs "
                    f"({_difference(value(run.header), value(first.header))})"
                )


def _check_every_part_once(parts: list[tuple[Path, ResultsRun]]) -> None:
    count = parts[0][1].header.shard.count if parts[0][1].header.shard else 0
    seen: dict[int, Path] = {}
    for path, run in parts:
        assert run.header.shard is not None
        index = run.header.shard.index
        if index in seen:
            raise MergeRefused(f"part {index}/{count} is given twice: {seen[index]} and {path}")
        seen[index] = path
    missing = [index for index in range(1, count + 1) if index not in seen]
    if missing:
        named = ", ".join(f"{index}/{count}" for index in missing)
        raise MergeRefused(f"part {named} is missing: the run is not whole without it")


def _joined(runs: list[ResultsRun], kit: KitInventory) -> ResultsRun:
    first = runs[0].header
    assert first.shard is not None and first.provenance is not None
    whole = kit.expected_keys(first.model_copy(update={"shard": None}))
    records: dict[str, ScenarioResult] = {}
    for run in runs:
        for record in run.scenarios:
            if record.key in records:
                raise MergeRefused(f"{record.key} is recorded by two parts")
            records[record.key] = record
    if sorted(records) != sorted(whole) or inventory_digest(whole) != first.shard.inventory:
        raise MergeRefused("the parts together are not this kit's inventory of scenarios")
    order = {key: position for position, key in enumerate(kit.keys + kit.property_keys)}
    scenarios = sorted(
        records.values(),
        key=lambda r: (_not_run(r), order.get(r.key, len(order))),
    )
    footers = [run.footer for run in runs if run.footer is not None]
    header = first.model_copy(
        update={
            "shard": None,
            "started_at": min(run.header.started_at for run in runs),
            "provenance": first.provenance.model_copy(update={"inventory": first.shard.inventory}),
        }
    )
    footer = Footer(
        finished_at=max(footer.finished_at for footer in footers),
        totals=totals(scenarios),
        stopped=_first_said([f.stopped for f in footers], runs),
        records=len(scenarios),
        integrity=_first_said([f.integrity for f in footers], runs),
    )
    return ResultsRun(header=header, scenarios=scenarios, footer=footer)


def _not_run(record: ScenarioResult) -> bool:
    """A record of a scenario that did not run: a single run writes them last."""
    return record.status is Status.UNDEFINED and record.evidence == NOT_RUN


def _first_said(said: list[str | None], runs: list[ResultsRun]) -> str | None:
    """What the first part to say something said, prefixed with the part."""
    for text, run in zip(said, runs, strict=False):
        if text is not None and run.header.shard is not None:
            return f"part {run.header.shard.label}: {text}"
    return None


def write_run(run: ResultsRun, path: Path, *, sign_key: bytes | None) -> None:
    """The run as a stream at `path`, chained anew (and signed with `sign_key`)."""
    writer = ResultsWriter(path, sign_key=sign_key)
    for record in (run.header, *run.scenarios, *([run.footer] if run.footer else [])):
        writer.write(record.model_copy())
    writer.close()


def _difference(theirs: object, ours: object) -> str:
    """What differs, shortly: for digests by path, the first path whose digest differs."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        differing = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))
        first = differing[0]
        more = f", and {len(differing) - 1} more" if len(differing) > 1 else ""
        return f"{first}: {_shown(theirs.get(first))} against {_shown(ours.get(first))}{more}"
    return f"{_shown(theirs)} against {_shown(ours)}"


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:79] + "…"
