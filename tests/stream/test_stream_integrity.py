"""A results stream carries its provenance, and a changed one is refused before any report.

One real run (in-process, a few scenarios, signed) makes the stream; each test
edits a copy the way a hand, a script or a forger would, and `report`,
`compare` and `expectations update` must refuse it with exit 2 and the reason.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conformance.cli import EXIT_FAILURES, EXIT_USAGE, app
from conformance.inventory import load_inventory
from conformance.spec.scenario_keys import inventory_digest
from conformance.stream.provenance import KIT_ROOT
from conformance.stream.results import CHAIN_START, Footer, Header, ScenarioResult, Status, link
from conformance.stream.stream_integrity import BrokenStream, verify_stream

RUNNER = CliRunner()
CONFORMANCE = Path(sys.executable).with_name("conformance")
Lines = list[dict[str, Any]]


@pytest.fixture(scope="module")
def signed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real stream of a short run, signed with a key; and the key file."""
    folder = tmp_path_factory.mktemp("signed-run")
    key, results = folder / "team.key", folder / "results.jsonl"
    key.write_text("a team secret that signs results\n")
    command = [str(CONFORMANCE), "run", "--quiet", "-k", "sixth", "--results", str(results)]
    completed = subprocess.run(
        [*command, "--sign-key-file", str(key)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == EXIT_FAILURES, completed.stdout[-2000:]  # -k: undefined rest
    return results, key


def records(stream: Path) -> Lines:
    return [json.loads(line) for line in stream.read_text().splitlines()]


def rewrite(lines: Lines, target: Path, *, rechain: bool) -> Path:
    """Write `lines` to `target`; with `rechain`, with a fresh, consistent hash chain, as a
    forger who read the kit's source would."""
    previous = CHAIN_START
    models = {"header": Header, "scenario": ScenarioResult, "footer": Footer}
    out = []
    for line in lines:
        if rechain:
            record = models[line["type"]].model_validate(line)
            previous = record.chain = link(previous, record)
            line = json.loads(record.model_dump_json())
        out.append(json.dumps(line))
    target.write_text("\n".join(out) + "\n")
    return target


def flip_first_to_passed(lines: Lines) -> Lines:
    first = next(line for line in lines if line.get("status") == "undefined")
    first["status"] = "passed"
    return lines


def drop_most_records(lines: Lines) -> Lines:
    return [line for index, line in enumerate(lines) if line["type"] != "scenario" or index < 20]


def with_footer(change: Callable[[dict[str, Any]], None]) -> Callable[[Lines], Lines]:
    def edit(lines: Lines) -> Lines:
        change(lines[-1])
        return lines

    return edit


def duplicate_a_record(lines: Lines) -> Lines:
    lines.insert(2, dict(lines[1]))
    lines[-1]["records"] += 1
    lines[-1]["totals"][lines[1]["status"]] += 1
    return lines


def set_protocol(lines: Lines) -> Lines:
    lines[0]["protocol_version"] = 7
    return lines


def everything_passed(lines: Lines) -> Lines:
    scenarios = [line for line in lines if line["type"] == "scenario"]
    for line in scenarios:
        line["status"], line["evidence"] = "passed", None
    lines[-1]["totals"] = {status: 0 for status in lines[-1]["totals"]} | {"passed": len(scenarios)}
    return lines


EDITS: list[tuple[str, Callable[[Lines], Lines], bool, str]] = [
    ("a scenario that did not run flipped to passed", flip_first_to_passed, False, "hash chain"),
    ("records deleted", drop_most_records, False, "hash chain breaks"),
    ("records deleted, chain redone", drop_most_records, True, "the footer counts"),
    (
        "footer totals that contradict the records",
        with_footer(lambda footer: footer["totals"].update(passed=195)),
        True,
        "totals contradict",
    ),
    (
        "records deleted, footer and chain redone",
        lambda lines: with_footer(lambda f: f.update(records=19, totals=_totals(lines[1:20])))(
            drop_most_records(lines)
        ),
        True,
        "not the inventory the header names",
    ),
    ("protocol version 7", set_protocol, True, "protocol version 7"),
    ("a scenario recorded twice", duplicate_a_record, True, "recorded twice"),
    ("no footer", lambda lines: lines[:-1], True, "no footer"),
    (
        "an unknown field",
        lambda lines: [lines[0], {**lines[1], "verdict": "passed"}, *lines[2:]],
        False,
        "not a valid scenario record",
    ),
]


def _totals(lines: Lines) -> dict[str, int]:
    """Totals that match `lines` exactly, as a careful forger would write them."""
    return {status.value: sum(line["status"] == status for line in lines) for status in Status}


@pytest.mark.parametrize(
    ("edit", "rechain", "reason"),
    [pytest.param(edit, rechain, reason, id=name) for name, edit, rechain, reason in EDITS],
)
def test_an_edited_stream_is_refused_with_its_reason_by_every_command(
    signed_run: tuple[Path, Path],
    tmp_path: Path,
    edit: Callable[[Lines], Lines],
    rechain: bool,
    reason: str,
) -> None:
    stream, _ = signed_run
    edited = rewrite(edit(records(stream)), tmp_path / "edited.jsonl", rechain=rechain)
    for command in (
        ["report", str(edited)],
        ["report", str(edited), "--junit", str(tmp_path / "junit.xml")],
        ["compare", str(stream), str(edited)],
        ["expectations", "update", str(edited), "--output", str(tmp_path / "x.toml")],
    ):
        outcome = RUNNER.invoke(app, command)
        assert outcome.exit_code == EXIT_USAGE, (command, outcome.output)
        assert reason in " ".join(outcome.output.split()), outcome.output
        assert "Traceback" not in outcome.output
    assert not (tmp_path / "junit.xml").exists() and not (tmp_path / "x.toml").exists()


def test_a_record_holding_other_line_separators_still_verifies(tmp_path: Path) -> None:
    """An implementation controls what its evidence says, U+2028 and U+0085 included; they are
    not line ends of the stream."""
    from conformance.stream.results import ResultsWriter

    stream = tmp_path / "r.jsonl"
    writer = ResultsWriter(stream)
    header = Header.model_validate(records_of_a_fresh_header())
    writer.write(header)
    writer.write(
        ScenarioResult(
            key="k",
            criterion=None,
            feature="f",
            scenario="s",
            status=Status.FAILED,
            duration_s=0.0,
            evidence="before\u2028after\u0085end",
        )
    )
    writer.write(
        Footer(finished_at=header.started_at, totals=_totals([{"status": "failed"}]), records=1)
    )
    writer.close()
    assert verify_stream(stream).scenarios[0].evidence == "before\u2028after\u0085end"


def records_of_a_fresh_header() -> dict[str, Any]:
    from conformance.stream.results import Provenance

    provenance = Provenance(
        kit_commit=None, suite={}, inventory=inventory_digest(["k"]),
        implementation_digests={}, sandbox=False, pass_env=[], host="h", os="o", python="p",
    )  # fmt: skip
    return {
        "kit_version": "0", "protocol_version": 1, "spec_hashes": {}, "implementation": "x",
        "description": None, "database": None, "seed": None,
        "started_at": "2026-01-01T00:00:00Z", "provenance": provenance.model_dump(),
    }  # fmt: skip


def test_a_signature_that_is_not_ascii_is_refused_not_a_crash(
    signed_run: tuple[Path, Path], tmp_path: Path
) -> None:
    stream, key = signed_run
    lines = records(stream)
    lines[-1]["signature"] = "hmac-sha256:\u00e9t\u00e9"
    edited = rewrite(lines, tmp_path / "edited.jsonl", rechain=False)
    outcome = RUNNER.invoke(app, ["report", str(edited), "--sign-key-file", str(key)])
    assert outcome.exit_code == EXIT_USAGE, outcome.output
    assert "signature does not match" in outcome.output


def test_a_line_that_is_not_json_is_refused(signed_run: tuple[Path, Path], tmp_path: Path) -> None:
    stream, _ = signed_run
    broken = tmp_path / "broken.jsonl"
    lines = stream.read_text().splitlines()
    broken.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    with pytest.raises(BrokenStream, match=r"broken.jsonl:2: not JSON"):
        verify_stream(broken)


def test_report_exits_with_the_run_s_verdict_and_checks_the_signature(
    signed_run: tuple[Path, Path], tmp_path: Path
) -> None:
    stream, key = signed_run
    assert RUNNER.invoke(app, ["report", str(stream)]).exit_code == EXIT_FAILURES
    signed = RUNNER.invoke(app, ["report", str(stream), "--sign-key-file", str(key)])
    assert signed.exit_code == EXIT_FAILURES, signed.output
    wrong = tmp_path / "wrong.key"
    wrong.write_text("someone else's key")
    refused = RUNNER.invoke(app, ["report", str(stream), "--sign-key-file", str(wrong)])
    assert refused.exit_code == EXIT_USAGE
    assert "signature does not match" in refused.output


def test_a_forger_who_redoes_the_chain_passes_the_chain_but_not_the_signature(
    signed_run: tuple[Path, Path], tmp_path: Path
) -> None:
    """What the chain does not prove (docs/trust.md): who wrote the stream."""
    stream, key = signed_run
    forged = rewrite(everything_passed(records(stream)), tmp_path / "forged.jsonl", rechain=True)
    assert verify_stream(forged).footer is not None
    outcome = RUNNER.invoke(app, ["report", str(forged), "--sign-key-file", str(key)])
    assert outcome.exit_code == EXIT_USAGE
    assert "signature does not match" in outcome.output


def test_the_header_records_the_run_s_provenance(signed_run: tuple[Path, Path]) -> None:
    stream, _ = signed_run
    header = verify_stream(stream).header
    provenance = header.provenance
    assert provenance is not None
    assert header.kit_version == importlib.metadata.version("assign-delegate-conformance")
    for feature in (KIT_ROOT / "features").glob("*.feature"):
        digest = "sha256:" + hashlib.sha256(feature.read_bytes()).hexdigest()
        assert provenance.suite[f"conformance/features/{feature.name}"] == digest
    assert {"conformance/steps/common.py", "conformance/data/criteria.toml"} <= set(
        provenance.suite
    )
    checked = load_inventory(properties=header.properties != "none")
    assert provenance.inventory == inventory_digest([entry.key for entry in checked])
    assert set(provenance.implementation_digests) == {"reference/"}
    assert provenance.python == ".".join(map(str, sys.version_info[:3]))
    assert provenance.host and provenance.os and not provenance.sandbox
    if (KIT_ROOT / ".git").exists():
        assert provenance.kit_commit is not None and len(provenance.kit_commit) >= 40
