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

import hashlib
import hmac
import json
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

from pydantic import ValidationError

from conformance.results import (
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

SUPPORTED_PROTOCOLS: Final = frozenset({1})
R = TypeVar("R", bound=Record)


class BrokenStream(ValueError):
    """The stream cannot be trusted; the message says where and why."""


def inventory_digest(keys: list[str]) -> str:
    return "sha256:" + hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()


def read_key(path: Path) -> bytes:
    key = path.read_bytes().strip()
    if not key:
        raise BrokenStream(f"{path} is empty: no key to sign or check with")
    return key


class KitInventory(NamedTuple):
    """The kit reading a stream: its suite digests and its scenario keys."""

    suite: dict[str, str]
    keys: list[str]

    def features(self, suite: dict[str, str]) -> dict[str, str]:
        return {path: digest for path, digest in suite.items() if path.startswith("features/")}


def verify_stream(
    path: Path, *, key: bytes | None = None, kit: KitInventory | None = None
) -> ResultsRun:
    """The run the stream holds, or BrokenStream. With `kit`, a stream made from the same
    feature files must hold exactly the kit's scenarios."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as error:
        raise BrokenStream(f"{path}: cannot be read: {error}") from error
    if not lines:
        raise BrokenStream(f"{path} is empty")
    header = _parse(Header, lines[0], path, 1)
    chain = _follow(CHAIN_START, header, path, 1)
    scenarios: list[ScenarioResult] = []
    footer: Footer | None = None
    for number, line in enumerate(lines[1:], start=2):
        if footer is not None:
            raise BrokenStream(f"{path}:{number}: a line after the footer")
        kind = _kind(line, path, number)
        if kind == "scenario":
            record: Record = _parse(ScenarioResult, line, path, number)
            assert isinstance(record, ScenarioResult)
            scenarios.append(record)
        elif kind == "footer":
            record = footer = _parse(Footer, line, path, number)
        else:
            raise BrokenStream(f"{path}:{number}: unexpected record type {kind!r}")
        chain = _follow(chain, record, path, number)
    run = ResultsRun(header=header, scenarios=scenarios, footer=footer)
    _check_run(run, path, key, kit)
    return run


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
    if kit is not None and same_features and sorted(kit.keys) != sorted(keys):
        raise BrokenStream(f"{path}: the records are not this kit's inventory of scenarios")
    if key is not None:
        expected = sign(key, footer.chain)
        if footer.signature is None or not hmac.compare_digest(footer.signature, expected):
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
