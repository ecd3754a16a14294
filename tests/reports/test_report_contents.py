"""Every report leads with what a person needs: the failing step, then expected vs observed.

One real run of a mutant (a few scenarios, one of them failing, one not
applicable) writes every format; each test reads one format as its reader would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from rich.console import Console
from typer.testing import CliRunner

from conformance.cli import EXIT_UNUSABLE, EXIT_USAGE, app
from conformance.reports.compare import comparison_table
from conformance.reports.cucumber import render_cucumber
from conformance.spec.registry import default_registry
from conformance.spec.spec_drift import quote_clauses
from conformance.stream.results import ResultsRun, ScenarioResult, Status, StepResult
from conformance.stream.stream_integrity import verify_stream
from tests.paths import FAKES, SHARED_SPEC, STEPS, TEST_DATA
from tests.runs import a_header

CONFORMANCE = Path(sys.executable).with_name("conformance")
RUNNER = CliRunner()
SCHEMA = TEST_DATA / "cucumber-json.schema.json"
FAILING_STEP = 'Then the wake\'s outcome is "rate_limited"'
EXPECTED = "to be 'rate_limited', observed 'queued'"
SELECTION = "sixth or crash_in_the_middle_of_evaluating or (actor_type and agent_brings)"
FORMATS = ("results.jsonl", "junit.xml", "summary.md", "report.html", "cucumber.json")
OPTIONS = ("--results", "--junit", "--markdown", "--html", "--cucumber")


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("mutant-run")
    outputs = dict(zip(OPTIONS, FORMATS, strict=True))
    command = [str(CONFORMANCE), "run", "--impl", "mutant:allowance_off_by_one", "-k", SELECTION]
    for option, name in outputs.items():
        command += [option, str(folder / name)]
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=folder, check=False
    )
    assert completed.returncode == 1, completed.stdout[-3000:]
    return folder, completed.stdout


def test_the_stream_holds_the_failure_as_a_person_reads_it(mutant_run: tuple[Path, str]) -> None:
    folder, _ = mutant_run
    failed = [r for r in verify_stream(folder / "results.jsonl").scenarios if r.failure]
    sixth = next(r for r in failed if "sixth" in r.scenario)
    assert sixth.failure is not None and sixth.failure.step is not None
    assert sixth.failure.step.render().startswith(FAILING_STEP)
    assert EXPECTED in sixth.failure.headline
    assert all(cite.startswith("AC-OFFICE-ASSIGN-RATE-001.2") for cite in sixth.failure.clauses)
    assert (sixth.evidence or "").startswith(f"Step: {FAILING_STEP}")
    after = [step.status for step in sixth.steps][[s.status for s in sixth.steps].index("failed") :]
    assert after[0] == "failed" and set(after[1:]) <= {"skipped"}


def test_the_terminal_shows_the_step_and_expected_vs_observed_first(
    mutant_run: tuple[Path, str],
) -> None:
    _, terminal = mutant_run
    lines = terminal.splitlines()
    start = next(
        i  # the account's heading, after the tables (not the line the scenario printed)
        for i, line in enumerate(lines)
        if re.match(r"failed \S+\.feature:\d+ ", line) and "sixth" in line
    )
    first = "\n".join(lines[start + 1 : start + 5])
    assert f"Step: {FAILING_STEP}" in first and EXPECTED in " ".join(first.split())
    assert "did not run" in terminal and terminal.count("did not run") == 1, "one summary line"


def test_junit_s_message_is_the_one_line_expected_vs_observed(
    mutant_run: tuple[Path, str],
) -> None:
    folder, _ = mutant_run
    failures = ET.parse(folder / "junit.xml").getroot().iter("failure")
    sixth = next(
        f for f in failures if "sixth" in (f.text or "") or EXPECTED in f.get("message", "")
    )
    assert EXPECTED in sixth.get("message", "") and "\n" not in sixth.get("message", "")
    assert (sixth.text or "").startswith(f"Step: {FAILING_STEP}")


def test_markdown_names_the_failure_in_its_summary_line(mutant_run: tuple[Path, str]) -> None:
    folder, _ = mutant_run
    markdown = (folder / "summary.md").read_text()
    summary = next(
        line for line in markdown.splitlines() if "sixth" in line and "<summary>" in line
    )
    assert EXPECTED in summary
    block = markdown[markdown.index(summary) :]
    assert block.split("```\n", 1)[1].startswith(f"Step: {FAILING_STEP}")


def test_the_html_page_opens_failures_with_the_headline_and_coloured_steps(
    mutant_run: tuple[Path, str],
) -> None:
    folder, _ = mutant_run
    page = (folder / "report.html").read_text()
    failed = re.search(
        r"<details class='scenario' data-status='failed' open>.*?</details>", page, re.S
    )
    assert failed is not None
    assert "class='headline'" in failed[0] and "observed &#x27;queued&#x27;" in failed[0]
    assert "class='step-failed'" in failed[0] and "class='step-skipped'" in failed[0]
    ran = re.findall(r"data-status='(?:passed|failed)'[^>]*><summary>(.*?)</summary>", page)
    assert ran and not any("&lt;" in summary for summary in ran), "outline placeholders left"


def test_cucumber_json_is_valid_and_never_shows_a_not_applicable_scenario_as_passed(
    mutant_run: tuple[Path, str],
) -> None:
    folder, _ = mutant_run
    features: list[dict[str, Any]] = json.loads((folder / "cucumber.json").read_text())
    jsonschema.validate(features, json.loads(SCHEMA.read_text()))
    records = {r.key: r for r in verify_stream(folder / "results.jsonl").scenarios}
    elements = {e["id"]: e for feature in features for e in feature["elements"]}
    assert all(not feature["name"].endswith(".feature") for feature in features)
    not_applicable = [r for r in records.values() if r.status.value == "not_applicable"]
    assert not_applicable, "the selection should hold a scenario the reference cannot run"
    for result in not_applicable:
        element = next(e for e in elements.values() if e["name"] == result.title)
        statuses = [step["result"]["status"] for step in element["steps"]]
        assert "skipped" in statuses and "failed" not in statuses
        skipped = next(step for step in element["steps"] if step["result"]["status"] == "skipped")
        assert skipped["result"]["error_message"].startswith("not applicable:")
    failed = next(e for e in elements.values() if "sixth" in e["name"])
    failing = next(step for step in failed["steps"] if step["result"]["status"] == "failed")
    message = failing["result"]["error_message"]
    assert message.startswith(f"Step: {FAILING_STEP}") and EXPECTED in message
    statuses = [step["result"]["status"] for step in failed["steps"]]
    assert statuses[statuses.index("failed") + 1 :] and set(
        statuses[statuses.index("failed") + 1 :]
    ) == {"skipped"}
    rows = [e for e in elements.values() if e["keyword"] == "Scenario Outline"]
    ran_rows = [e for e in rows if any(s["result"]["status"] != "skipped" for s in e["steps"])]
    assert ran_rows and all("<" not in e["name"] and e["description"] for e in ran_rows)


def test_compare_writes_a_matrix_and_keeps_ids_readable_at_80_columns(
    mutant_run: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = mutant_run
    twin = tmp_path / "twin.jsonl"  # an implementation that never starts: every row differs
    fake = FAKES / "wrong_version.py"
    fake_impl = ["--impl", f"exec:{sys.executable} {fake}", "--properties", "none"]
    RUNNER.invoke(app, ["run", *fake_impl, "--results", str(twin)])
    html, markdown = tmp_path / "matrix.html", tmp_path / "matrix.md"
    both = [str(folder / "results.jsonl"), str(twin)]
    outcome = RUNNER.invoke(
        app, ["compare", *both, "--html", str(html), "--markdown", str(markdown)]
    )
    assert outcome.exit_code == 0, outcome.output
    assert "| **criteria passed** |" in markdown.read_text()
    page = html.read_text()
    criterion = page[page.index("<summary>AC-OFFICE-ASSIGN-RATE-001.2</summary>") :]
    assert "<td class='failed'>failed</td><td class='undefined'>undefined</td>" in criterion
    narrow = Console(width=80, record=True)
    runs = [verify_stream(folder / "results.jsonl"), verify_stream(twin)]
    narrow.print(comparison_table(runs, ["results", "twin"], default_registry()))
    assert "OFFICE-001.2" in narrow.export_text() and "…" not in narrow.export_text()


def test_a_badge_states_the_claimed_criteria_passed(
    mutant_run: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = mutant_run
    svg = tmp_path / "badge.svg"
    outcome = RUNNER.invoke(app, ["badge", str(folder / "results.jsonl"), "--output", str(svg)])
    assert outcome.exit_code == 0, outcome.output
    root = ET.parse(svg).getroot()
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[0] == "conformance" and re.fullmatch(r"\d+/38", texts[1] or "")


def test_an_unusable_implementation_still_gets_every_report_with_the_cause(
    tmp_path: Path,
) -> None:
    fake = FAKES / "wrong_version.py"
    outputs = {option: tmp_path / name for option, name in zip(OPTIONS, FORMATS, strict=True)}
    arguments = [item for option, path in outputs.items() for item in (option, str(path))]
    outcome = RUNNER.invoke(
        app, ["run", "--quiet", "--impl", f"exec:{sys.executable} {fake}", *arguments]
    )
    assert outcome.exit_code == EXIT_UNUSABLE, outcome.output
    for path in outputs.values():
        assert "protocol_version" in path.read_text(), f"{path.name} does not say why"
    assert verify_stream(outputs["--results"]).header.implementation_error is not None
    report = RUNNER.invoke(app, ["report", str(outputs["--results"])])
    assert report.exit_code == EXIT_UNUSABLE


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--database", "postgresql+psycopg://nobody@127.0.0.1:1/none"], "cannot reach"),
        (["--expectations", "MISSPELT"], "unknown table(s) expected"),
    ],
)
def test_configuration_mistakes_exit_2_and_say_what(
    arguments: list[str], said: str, tmp_path: Path
) -> None:
    misspelt = tmp_path / "expectations.toml"
    misspelt.write_text('[[expected]]\nscenario = "x"\nissue = "y"\n')
    arguments = [str(misspelt) if a == "MISSPELT" else a for a in arguments]
    outcome = RUNNER.invoke(app, ["run", "--quiet", *arguments])
    assert outcome.exit_code == EXIT_USAGE, outcome.output
    assert said in " ".join(outcome.output.split())


def test_the_small_commands_answer(tmp_path: Path) -> None:
    version = RUNNER.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.startswith("conformance ")
    for command, count in (("mutants", "mutants"), ("variants", "variants")):
        listed = RUNNER.invoke(app, [command], terminal_width=200)
        assert listed.exit_code == 0 and re.search(rf"\d+ {count}", listed.output)
    mutants = " ".join(RUNNER.invoke(app, ["mutants"], terminal_width=400).output.split())
    assert "allowance_off_by_one" in mutants
    assert "[now - W, now]" in mutants, "a description's brackets were read as markup"
    assert "nested_remainder_to_parent │ WORKREQ-001.13 │ WR-1 as from-campaign" in mutants
    wide = RUNNER.invoke(app, ["run", "--help"], env={"COLUMNS": "400"})
    help_text = " ".join(wide.output.split())
    for promised in ("mutant:<name>", "python:<module>:<factory>", "--junit FILE JUnit XML"):
        assert promised in help_text


def test_an_expectations_file_gives_each_failure_its_expected_vs_observed_as_reason(
    mutant_run: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = mutant_run
    written = tmp_path / "expected.toml"
    outcome = RUNNER.invoke(
        app, ["expectations", "update", str(folder / "results.jsonl"), "--output", str(written)]
    )
    assert outcome.exit_code == 0, outcome.output
    reasons = re.findall(r'^reason = "(.*)"$', written.read_text(), re.M)
    assert reasons and any(EXPECTED in reason for reason in reasons), reasons


def test_a_claim_says_what_it_covers_and_counts_the_rest_as_out_of_scope(tmp_path: Path) -> None:
    markdown = tmp_path / "summary.md"
    outcome = RUNNER.invoke(
        app, ["run", "--quiet", "--claim", "office", "-k", "sixth", "--markdown", str(markdown)]
    )
    said = " ".join(outcome.output.split())
    assert re.search(r"claims office: \d+ of 25 criteria passed; 13 out of scope", said), said
    summary = markdown.read_text()
    assert "It claims office:" in summary
    scope = "Out of scope (the claim is office): 13 criteria, AC-ARMONIA-WORKREQ-001.1,"
    for report in (said, " ".join(summary.split())):
        assert scope in report, "the criteria outside the claim are one line"
        assert report.count("AC-ARMONIA-WORKREQ-001.1,") == 1
        assert not re.search(r"\bWR-\d", report), "open questions of no claimed criterion: out"


@pytest.mark.parametrize("status", ["errored", "xpass", "timeout"])
def test_a_scenario_that_fails_the_run_after_all_its_steps_passed_is_not_shown_passed(
    status: str,
) -> None:
    """Errored in teardown, or passed although listed as a known failure: a failed hook says so."""
    steps = [StepResult(keyword="Given", text="x", line=3, status="passed", duration_s=0.0)]
    result = ScenarioResult(
        key="f.feature::s", criterion=None, feature="f.feature", scenario="s", line=2,
        status=Status(status), duration_s=0.0, evidence="it failed in teardown", steps=steps,
    )  # fmt: skip
    rendered = json.loads(
        render_cucumber(
            ResultsRun(header=a_header(), scenarios=[result], footer=None), default_registry()
        )
    )
    element = rendered[0]["elements"][0]
    jsonschema.validate(rendered, json.loads(SCHEMA.read_text()))
    assert element["after"][0]["result"]["status"] == "failed"
    assert element["after"][0]["result"]["error_message"] == "it failed in teardown"


def a_result(status: Status, evidence: str, steps: list[StepResult]) -> ScenarioResult:
    return ScenarioResult(
        key="f.feature::s", criterion=None, feature="f.feature", scenario="s", line=2,
        status=status, duration_s=0.0, evidence=evidence, steps=steps,
    )  # fmt: skip


def test_what_no_format_may_get_wrong_about_a_failure() -> None:
    """Teardown named as such; Markdown fenced and escaped against the evidence; the HTML page
    says the run failed even when every criterion it shows passed; a skip after the last step
    is still skipped in Cucumber; the trace keeps to the kit's own packages."""
    from conformance.reports.html import render_html
    from conformance.reports.markdown import render_markdown
    from conformance.running.failure_evidence import _in_kit
    from conformance.spec.registry import default_registry
    from conformance.stream.results import Failure, Footer
    from conformance.suite import SUITE_INI

    teardown = Failure(step=None, phase="teardown", observed="expected <none>, observed ```")
    assert "(after the last step, while tearing down)" in teardown.render()
    passed = StepResult(keyword="Given", text="x", line=3, status="passed", duration_s=0.0)
    failed = a_result(Status.ERRORED, "a ``` b", [passed]).model_copy(update={"failure": teardown})
    run = ResultsRun(header=a_header(), scenarios=[failed], footer=None)
    markdown = render_markdown(run, default_registry())
    assert "expected &lt;none&gt;" in markdown and "````\na ``` b\n````" in markdown
    page = render_html(
        run.model_copy(
            update={
                "scenarios": [],
                "footer": Footer(
                    finished_at=a_header().started_at, totals={}, integrity="changed on disk"
                ),
            }
        ),
        default_registry(),
    )
    assert "run failed" in page and "integrity: changed on disk" in page
    late_skip = a_result(Status.NOT_APPLICABLE, "needs restart", [passed])
    element = json.loads(
        render_cucumber(run.model_copy(update={"scenarios": [late_skip]}), default_registry())
    )
    assert element[0]["elements"][0]["after"][0]["result"]["status"] == "skipped"
    assert not _in_kit(Path(pytest.__file__)) and _in_kit(STEPS / "common.py")
    assert "timeout = 300" in SUITE_INI.read_text()


def test_criteria_lists_each_clause_with_its_wording_and_the_spec_s_words() -> None:
    spec = SHARED_SPEC
    criterion = "AC-OFFICE-ASSIGN-RATE-002.2"
    arguments = ["criteria", criterion, *(["--spec", str(spec)] if spec.exists() else [])]
    listed = RUNNER.invoke(app, arguments, terminal_width=400)
    said = " ".join(listed.output.split())
    assert listed.exit_code == 0, listed.output
    for clause in default_registry().criterion(criterion).clauses:
        assert clause.id.split("/")[1] in said
        assert " ".join(clause.statement.split())[:60] in said
    if spec.exists():
        assert "the spec:" in said
    assert "AC-OFFICE-ASSIGN-RATE-001.1" not in said
    unknown = RUNNER.invoke(app, ["criteria", "AC-NOPE-1"])
    assert unknown.exit_code == EXIT_USAGE and "unknown criterion" in unknown.output


def test_readings_name_each_question_s_criteria_allowances_and_retired_numbers() -> None:
    said = " ".join(RUNNER.invoke(app, ["readings"], terminal_width=400).output.split())
    assert "WORKREQ-001.4" in said and "refused:forbidden" in said
    assert "reads WORKREQ-001.4/claimable-again" in said, "the clause WR-6 reads"
    for retired in ("WR-9", "WR-13", "OF-1", "OF-2", "OF-3"):  # the numbering's gaps
        assert retired in said.split("Retired questions")[1]


@pytest.mark.skipif(not SHARED_SPEC.exists(), reason="the source specs are not beside the kit")
def test_readings_quote_the_spec_sentence_each_question_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kit stores where each question's sentence stands, never the sentence: `--spec`
    quotes it from the spec files given (read unwrapped here, on a wide console)."""
    monkeypatch.setattr("conformance.cli.common.console", Console(width=3000))
    listed = RUNNER.invoke(app, ["readings", "--spec", str(SHARED_SPEC)])
    said = " ".join(listed.output.split())
    assert listed.exit_code == 0, listed.output
    quoted = quote_clauses([SHARED_SPEC], default_registry())
    for interpretation in default_registry().active_interpretations():
        for clause_id in interpretation.interprets:
            assert " ".join(quoted[clause_id].split())[:50] in said, (interpretation.id, clause_id)


def test_the_spec_page_shows_a_property_check_once_per_requirement() -> None:
    """A property writes a record per criterion it names; its account stands once under each
    requirement it judged, and each criterion's card names it in one line."""
    from conformance.reports.html import render_html
    from conformance.stream.results import Failure

    account = "Property: every admission decision\nCounterexample:\nScenario: the one"
    failure = Failure(step=None, property_title="every admission decision", observed="x")
    named = ["AC-OFFICE-ASSIGN-RATE-001.2", "AC-OFFICE-ASSIGN-RATE-001.4"]
    named.append("AC-OFFICE-ASSIGN-RATE-002.1")
    records = [
        a_result(
            Status.FAILED if criterion.endswith("001.2") else Status.PASSED, "", []
        ).model_copy(
            update={
                "key": f"properties/test_office_window.py::p[{criterion}]",
                "criterion": criterion,
                "feature": "properties/test_office_window.py",
                "scenario": "every admission decision",
                "evidence": account if criterion.endswith("001.2") else "",
                "failure": failure if criterion.endswith("001.2") else None,
            }
        )
        for criterion in named
    ]
    run = ResultsRun(header=a_header(), scenarios=records, footer=None)
    page = render_html(run, default_registry())
    blocks = re.findall(r"<div class='checks' id='checks-([^']+)'>(.*?)</div>", page, re.S)
    assert [requirement for requirement, _ in blocks] == [
        "REQ-OFFICE-ASSIGN-RATE-001",
        "REQ-OFFICE-ASSIGN-RATE-002",
    ]
    assert page.count("Scenario: the one") == 1, "the account, once, under 001"
    assert "OFFICE-001.2 <em>failed</em>, OFFICE-001.4 <em>passed</em>" in blocks[0][1]
    cards = re.findall(r"<div class='criterion' id='([^']+)'.*?Also judged by", page, re.S)
    assert len(cards) == 3
