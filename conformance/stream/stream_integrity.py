"""Is this results stream whole, consistent and unchanged since the harness wrote it?

Every report is made from a stream, so a stream is verified before anything is
made of it: each line valid against its schema, header first and footer last,
no scenario twice, the footer's totals equal to the records, every scenario of
the inventory present, the hash chain intact and, for a signed stream checked
with the team's key, the signature right.

What the chain proves: the stream is the one its footer sealed; an edited,
reordered, dropped or added line breaks it. What it does not prove: who wrote
it. Anyone can compute a chain, so a forger who rewrites the whole stream can
make a consistent one. Only a keyed signature (`--sign-key-file`), made by a
harness the forger cannot reach, ties a stream to whoever holds the key.
"""

from __future__ import annotations

import hmac
import json
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

from pydantic import ValidationError

from conformance.spec.scenario_keys import inventory_digest
from conformance.stream.results import (
    CHAIN_START,
    Footer,
    Header,
    Record,
    ResultsRun,
    ScenarioResult,
    link,
    sign,
    totals,
)
from conformance.stream.shards import part_of

SUPPORTED_PROTOCOLS: Final = frozenset({1})
KEY_SOURCES: Final = ("conformance/features/", "conformance/properties/catalogue.py")
RECORD_TYPES: Final[dict[object, type[Record]]] = {
    "header": Header,
    "scenario": ScenarioResult,
    "footer": Footer,
}
R = TypeVar("R", bound=Record)


class BrokenStream(ValueError):
    """The stream cannot be trusted; the message says where and why."""


def read_key(path: Path) -> bytes:
    key = path.read_bytes().strip()
    if not key:
        raise BrokenStream(f"{path} is empty: no key to sign or check with")
    return key


class KitInventory(NamedTuple):
    """The kit reading a stream: its suite digests, its scenario keys and its properties'."""

    suite: dict[str, str]
    keys: list[str]
    property_keys: list[str]

    @staticmethod
    def features(suite: dict[str, str]) -> dict[str, str]:
        """The digests that decide the keys: the feature files and the property catalogue."""
        return {path: d for path, d in suite.items() if path.startswith(KEY_SOURCES)}

    def expected_keys(self, header: Header) -> list[str]:
        """The keys a stream of this kit holds: the inventory, or the part a shard names."""
        checked_properties = header.properties != "none"
        keys = self.keys + (self.property_keys if checked_properties else [])
        if header.shard is not None:
            keys = part_of(keys, header.shard.index, header.shard.count)
        return sorted(keys)


def read_stream(path: Path) -> ResultsRun:
    """The run a stream holds, each line parsed, without the checks below: for a stream the
    kit itself just wrote, which may be an interrupted run's (no footer)."""
    return _run_of([record for _, record in _records(path)])


def verify_stream(
    path: Path, *, key: bytes | None = None, kit: KitInventory | None = None
) -> ResultsRun:
    """The run the stream holds, or BrokenStream. With `kit`, a stream made from the same
    feature files must hold exactly the kit's scenarios."""
    records = _records(path)
    chain = CHAIN_START
    for number, record in records:
        chain = _follow(chain, record, path, number)
    run = _run_of([record for _, record in records])
    _check_run(run, path, key, kit)
    return run


def _records(path: Path) -> list[tuple[int, Record]]:
    """Every line's record with its line number: the header first, a footer only last.
    Lines end at newlines only: a record may hold other line separators (U+2028) in its text."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BrokenStream(f"{path}: cannot be read: {error}") from error
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not lines:
        raise BrokenStream(f"{path} is empty")
    records: list[tuple[int, Record]] = []
    for number, line in lines:
        if records and isinstance(records[-1][1], Footer):
            raise BrokenStream(f"{path}:{number}: a line after the footer")
        kind = _kind(line, path, number)
        model = RECORD_TYPES.get(kind) if records else Header
        if model is None or (model is Header and (records or kind != "header")):
            raise BrokenStream(f"{path}:{number}: unexpected record type {kind!r}")
        records.append((number, _parse(model, line, path, number)))
    return records


def _run_of(records: list[Record]) -> ResultsRun:
    header, *rest = records
    assert isinstance(header, Header)
    footer = rest[-1] if rest and isinstance(rest[-1], Footer) else None
    scenarios = [record for record in rest if isinstance(record, ScenarioResult)]
    return ResultsRun(header=header, scenarios=scenarios, footer=footer)


def _check_run(run: ResultsRun, path: Path, key: bytes | None, kit: KitInventory | None) -> None:
    header, footer = run.header, run.footer
    if header.protocol_version not in SUPPORTED_PROTOCOLS:
        raise BrokenStream(
            f"{path}: protocol version {header.protocol_version} is not one this kit speaks "
            f"({', '.join(map(str, sorted(SUPPORTED_PROTOCOLS)))})"
        )
    if header.provenance is None:
        raise BrokenStream(f"{path}: the header records no provenance")
    if footer is None:
        raise BrokenStream(f"{path}: no footer: the run was interrupted or the stream cut short")
    keys = [result.key for result in run.scenarios]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise BrokenStream(f"{path}: scenarios recorded twice: {', '.join(duplicates[:5])}")
    if footer.records != len(keys):
        raise BrokenStream(
            f"{path}: the footer counts {footer.records} records, the stream holds {len(keys)}"
        )
    counted = totals(run.scenarios)
    if footer.totals != counted:
        wrong = sorted(s.value for s in counted if footer.totals.get(s, 0) != counted[s])
        raise BrokenStream(
            f"{path}: the footer's totals contradict the records ({', '.join(wrong)})"
        )
    if inventory_digest(keys) != header.provenance.inventory:
        raise BrokenStream(
            f"{path}: the records are not the inventory the header names "
            "(scenarios added, dropped or renamed)"
        )
    same_features = kit is not None and kit.features(kit.suite) == kit.features(
        header.provenance.suite
    )
    if kit is not None and same_features and kit.expected_keys(header) != sorted(keys):
        what = f"part {header.shard.label} of " if header.shard else ""
        raise BrokenStream(f"{path}: the records are not {what}this kit's inventory of scenarios")
    whole = kit.expected_keys(header.model_copy(update={"shard": None})) if kit else []
    if same_features and header.shard and header.shard.inventory != inventory_digest(whole):
        raise BrokenStream(
            f"{path}: part {header.shard.label} was cut from another inventory than the kit's"
        )
    if key is not None:
        expected = sign(key, footer.chain)
        signature = (footer.signature or "").encode()
        if not hmac.compare_digest(signature, expected.encode()):
            raise BrokenStream(f"{path}: the signature does not match the key given")


def _follow(previous: str, record: Record, path: Path, number: int) -> str:
    expected = link(previous, record)
    if record.chain != expected:
        raise BrokenStream(
            f"{path}:{number}: the hash chain breaks here: the line was changed, or a line "
            "before it was changed, dropped or added"
        )
    return expected


def _kind(line: str, path: Path, number: int) -> object:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise BrokenStream(f"{path}:{number}: not JSON: {error}") from error
    return record.get("type") if isinstance(record, dict) else None


def _parse(model: type[R], line: str, path: Path, number: int) -> R:
    try:
        return model.model_validate_json(line)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the line"
        raise BrokenStream(
            f"{path}:{number}: not a valid {model.model_fields['type'].default} record: {where}: "
            f"{first['msg']} ({error.error_count()} problem(s) in all)"
        ) from error
