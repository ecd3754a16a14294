"""Redaction keeps secrets out and the identity of the run in.

The GitHub Action hands the implementation's command over in `CONFORMANCE_IMPL`; redacting
every environment value then replaced the command wherever it appeared, and the job summary
read `## Conformance: exec:[redacted $CONFORMANCE_IMPL] passed`. The command given on the
command line is what the run tested: it is never redacted, and neither are the values of the
variables the kit itself defines (a URL's password in them still is). A secret of the kit's
own naming (`CONFORMANCE_BOT_TOKEN`, in docs/ci.md) stays a secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conformance.stream.redaction import Redactor
from conformance.stream.stream_integrity import verify_stream

CONFORMANCE = Path(sys.executable).with_name("conformance")
COMMAND = "./bin/conformance-adapter --mode ci"


def test_the_implementation_s_command_is_kept_and_secrets_still_go() -> None:
    redactor = Redactor({"CONFORMANCE_IMPL": COMMAND, "MY_TOKEN": "glpat-abcdefgh"})
    redactor.keep(f"exec:{COMMAND}")
    said = redactor.text(f"exec:{COMMAND} printed glpat-abcdefgh")
    assert said == f"exec:{COMMAND} printed [redacted $MY_TOKEN]"


def test_a_value_the_command_spells_is_kept_and_nothing_else_is() -> None:
    """An unrelated variable whose value is part of the command names the run, not a secret;
    a secret the command does not spell stays one."""
    redactor = Redactor({"ADAPTER": "/opt/never/adapter", "OTHER": "/opt/never/other"})
    redactor.keep("exec:/opt/never/adapter --fast")
    assert redactor.text("/opt/never/adapter /opt/never/other") == (
        "/opt/never/adapter [redacted $OTHER]"
    )


def test_the_kit_s_own_variables_are_public_but_a_password_in_them_is_not() -> None:
    redactor = Redactor(
        {
            "CONFORMANCE_IMPL": COMMAND,
            "CONFORMANCE_ARGS": "-k sixth --max-fail 3",
            "CONFORMANCE_KIT": "kit @ git+https://ci-bot:s3cr3t-token@example.org/kit@v1",
            "CONFORMANCE_BOT_TOKEN": "glpat-abcdefghij",
        }
    )
    said = redactor.text(f"{COMMAND}; -k sixth --max-fail 3; s3cr3t-token; glpat-abcdefghij")
    assert said == (
        f"{COMMAND}; -k sixth --max-fail 3; [redacted $CONFORMANCE_KIT]; "
        "[redacted $CONFORMANCE_BOT_TOKEN]"
    )


def test_a_run_s_reports_name_the_command_held_in_an_environment_variable(
    tmp_path: Path,
) -> None:
    """As the Action runs the kit: the command is in CONFORMANCE_IMPL and on the command line,
    and another variable of the environment holds the same words."""
    command = "conformance serve-reference"
    results, markdown = tmp_path / "results.jsonl", tmp_path / "summary.md"
    arguments = [
        "run",
        "--quiet",
        "--properties",
        "none",
        "-k",
        "sixth",
        "--impl",
        f"exec:{command}",
    ]
    arguments += ["--results", str(results), "--markdown", str(markdown)]
    completed = subprocess.run(
        [str(CONFORMANCE), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "CONFORMANCE_IMPL": command, "SOME_COMMAND": command},
        check=False,
    )
    assert completed.returncode == 1, completed.stdout[-3000:]  # -k: the rest did not run
    assert verify_stream(results).header.implementation == f"exec:{command}"
    first = markdown.read_text().splitlines()[0]
    assert first == f"## Conformance: exec:{command} did not pass", first
