"""The harness's own reading of its environment never fails, and a fault of the harness is
never mistaken for a verdict: it exits with a code of its own (4), not 1 (a scenario failed).

Any environment a CI job can have (a 400-character JWT, a value holding a NUL or a few hundred
path separators, a name no shell would write) must leave the redactor working, and a secret in
it must still be redacted wherever the harness stores text.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conformance import cli
from conformance.stream.redaction import Redactor
from conformance.stream.results import Status
from conformance.stream.stream_integrity import verify_stream
from tests.paths import CHECKOUT

CONFORMANCE = Path(sys.executable).with_name("conformance")
LONG_TOKEN = "eyJhbGciOiJIUzI1NiJ9." + "x" * 400 + ".c2lnbmF0dXJl"
"""A JWT longer than any file name the file system allows (255 bytes)."""

VALUES = st.one_of(
    st.text(),
    st.text(min_size=250, max_size=1200),
    st.lists(st.text(min_size=0, max_size=300), max_size=5).map(os.pathsep.join),
    st.sampled_from(["/", "/tmp", sys.prefix, f"/tmp{os.pathsep}/nowhere", "\x00" * 9]),
)
ENVIRONMENTS = st.dictionaries(st.text(min_size=1, max_size=40), VALUES, max_size=8)
QUICK = settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@QUICK
@given(environment=ENVIRONMENTS, texts=st.lists(st.text(), max_size=3))
def test_any_environment_gives_a_working_redactor(
    environment: dict[str, str], texts: list[str]
) -> None:
    redactor = Redactor(environment)
    for text in texts:
        assert isinstance(redactor.text(text), str)
    assert redactor.values({"a": [*texts, 1]})["a"][-1] == 1


@QUICK
@given(
    environment=ENVIRONMENTS,
    secret=st.text(min_size=8, max_size=600).filter(lambda s: not s.startswith("/")),
    before=st.text(max_size=20),
    after=st.text(max_size=20),
)
def test_a_secret_in_any_environment_is_redacted(
    environment: dict[str, str], secret: str, before: str, after: str
) -> None:
    """The value of a variable that may be a secret never comes out, however long or odd; the
    only exception is a value that the replacement itself spells (`[redacted $NAME]`)."""
    environment = {**environment, "THE_SECRET": secret}
    assume(not any(secret in f"[redacted ${name}]" for name in environment))
    assert secret not in Redactor(environment).text(before + secret + after)


def test_a_token_longer_than_a_file_name_is_redacted() -> None:
    redactor = Redactor({"MY_TOKEN": LONG_TOKEN})
    assert redactor.text(f"got {LONG_TOKEN}!") == "got [redacted $MY_TOKEN]!"


def test_a_run_with_a_long_token_in_its_environment_runs_its_scenarios(tmp_path: Path) -> None:
    """The bug: the redactor stat'ed the token as a path at import, and the run died with a
    traceback and exit code 1 before any scenario ran."""
    results = tmp_path / "results.jsonl"
    command = [str(CONFORMANCE), "run", "--quiet", "--properties", "none", "--claim", "office"]
    command += ["-k", "sixth", "--results", str(results)]
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "MY_TOKEN": LONG_TOKEN},
        check=False,
    )
    said = completed.stdout + completed.stderr
    assert "Traceback" not in said and "OSError" not in said, said[-3000:]
    ran = [r for r in verify_stream(results).scenarios if "sixth" in r.scenario]
    assert ran and all(r.status is Status.PASSED for r in ran), said[-3000:]


def test_a_fault_of_the_harness_exits_4_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken() -> None:
        raise OSError(36, "File name too long", "a" * 400)

    monkeypatch.setattr(cli, "app", broken)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == cli.EXIT_HARNESS == 4
    said = capsys.readouterr()
    lines = said.err.strip().splitlines()
    assert len(lines) == 1 and "harness" in lines[0] and "File name too long" in lines[0], said
    assert len(lines[0]) < 400 and "Traceback" not in said.out + said.err


@pytest.mark.parametrize("where", ["docs/ci.md", "action.yml", "run --help"])
def test_every_definition_of_the_exit_codes_names_the_harness_fault(where: str) -> None:
    """The README defines no exit code: it points to docs/ci.md (tests/cli/test_help.py)."""
    if where == "run --help":
        text = CliRunner().invoke(cli.app, ["run", "--help"], terminal_width=200).output
    else:
        text = (CHECKOUT / where).read_text()
    flat = " ".join(text.replace("│", " ").split())
    assert re.search(r"\b4\b\W{0,3}[^.;]{0,60}harness", flat), flat[:300]
    assert re.search(r"\b3\b\W{0,3}[^.;]{0,60}(implementation|unusable)", flat), flat[:300]
