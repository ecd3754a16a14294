"""A run spread over cores (`--jobs`) or over machines (`--shard` + `merge`) gives the verdicts
of a single run.

Each comparison runs the same selection twice or more, from one seed: the window scenarios and
the office properties over the window (`-k window`), which a mutant of the window fails and a
variant of its instants passes, with property checks in the mix (one search each, which a
worker or a part runs whole).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.inventory import load_inventory
from conformance.running.merge import MergeRefused, merge_parts
from conformance.running.options import Progress, SuiteOptions, parse
from conformance.running.spread import SpreadError, jobs_count
from conformance.stream.shards import ShardError, parse_shard, part_of, unit_of, units_in_turn
from conformance.stream.stream_integrity import verify_stream
from tests.paths import CHECKOUT

SELECTION = (
    "-k",
    "window and not same_instant and not admission",
    "--properties",
    "ci",
    "--seed",
    "3",
)
TARGETS = ("reference", "mutant:window_closed_both_ends", "variant:millisecond_run_instants")


def command(*arguments: str) -> list[str]:
    return [sys.executable, "-c", "from conformance.cli import main; main()", *arguments]


ENVIRONMENT = {**os.environ, "COLUMNS": "200"}


def conformance(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*arguments),
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=ENVIRONMENT,
    )


def verdicts(stream: Path) -> dict[str, str]:
    return {record.key: record.status.value for record in verify_stream(stream).scenarios}


def order(stream: Path) -> list[str]:
    return [record.key for record in verify_stream(stream).scenarios]


def inventory_keys() -> list[str]:
    return [entry.key for entry in load_inventory(properties=True)]


pytestmark = pytest.mark.slow(seconds=60)

RUNS: dict[str, tuple[str, ...]] = {
    **{f"{impl}-one": ("--impl", impl) for impl in TARGETS},
    **{f"{impl}-two": ("--impl", impl, "--jobs", "2") for impl in TARGETS},
    "part1": ("--impl", TARGETS[1], "--shard", "1/2"),
    "part2": ("--impl", TARGETS[1], "--shard", "2/2"),
    "other2": ("--impl", TARGETS[1], "--shard", "2/2", "--seed", "4"),
}
"""Every run the tests compare, by name: each target with one job and with two, and the
mutant's run (its one-job run) in two parts, and a part of it from another seed."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of every run of RUNS: `<name>.jsonl`, `<name>.md` (its Markdown report) and
    `<name>.code` (its exit code). Made once for the whole test session, by whichever pytest-xdist
    worker comes first (the others wait for it), three runs at a time."""
    folder = tmp_path_factory.getbasetemp().parent / "spread-runs"
    folder.mkdir(exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".made").exists():
            make_runs(folder)
            (folder / ".made").write_text("")
    return folder


def make_runs(folder: Path) -> None:
    pending = list(RUNS.items())
    running: list[tuple[str, subprocess.Popen[str]]] = []
    while pending or running:
        while pending and len(running) < 3:
            name, extra = pending.pop(0)
            safe = name.replace(":", "-")
            arguments = ("run", "--quiet", "--results", f"{safe}.jsonl", "--markdown", f"{safe}.md")
            with (folder / f"{safe}.log").open("w") as log:
                process = subprocess.Popen(
                    command(*arguments, *SELECTION, *extra),
                    cwd=folder,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    text=True,
                    env=ENVIRONMENT,
                )
            running.append((safe, process))
        safe, process = running.pop(0)
        (folder / f"{safe}.code").write_text(str(process.wait(timeout=600)))


def stream_of(runs: Path, name: str) -> Path:
    stream = runs / f"{name.replace(':', '-')}.jsonl"
    assert stream.exists(), (runs / f"{name.replace(':', '-')}.log").read_text()
    return stream


def code_of(runs: Path, name: str) -> int:
    return int((runs / f"{name.replace(':', '-')}.code").read_text())


# -- --jobs --------------------------------------------------------------------


@pytest.mark.parametrize("impl", TARGETS)
def test_two_jobs_give_the_verdicts_of_one(runs: Path, impl: str) -> None:
    one, two = stream_of(runs, f"{impl}-one"), stream_of(runs, f"{impl}-two")
    assert verdicts(two) == verdicts(one)
    assert code_of(runs, f"{impl}-two") == code_of(runs, f"{impl}-one")
    assert order(two) == order(one)  # what ran in the inventory's order, then what did not
    assert sorted(order(one)) == sorted(inventory_keys())
    ran = {status for status in verdicts(one).values() if status != "undefined"}
    assert ran == ({"failed", "passed"} if impl.startswith("mutant:") else {"passed"})
    said = (runs / f"{impl.replace(':', '-')}-two.log").read_text()
    assert "bringing up nodes" not in said, "pytest-xdist's own status line is pytest's words"


def test_a_jobs_run_draws_one_seed_for_its_workers_and_records_it(tmp_path: Path) -> None:
    """Without --seed, the run draws one seed for every worker, and the header records it."""
    selection = ("-k", "admission_decisions or same_instant", "--properties", "ci")
    finished = conformance(tmp_path, "run", "--results", "r.jsonl", *selection, "--jobs", "2")
    run = verify_stream(tmp_path / "r.jsonl")
    assert finished.returncode == 1  # the scenarios -k left out did not run
    assert run.header.seed is not None
    searched = [r.evidence or "" for r in run.scenarios if r.status.value == "passed"]
    assert len(searched) > 10
    assert all(f"seed {run.header.seed}:" in evidence for evidence in searched)
    assert f"--seed {run.header.seed}" in finished.stdout


def test_jobs_and_a_given_database_are_refused(tmp_path: Path) -> None:
    finished = conformance(tmp_path, "run", "--jobs", "2", "--database", "sqlite://")
    assert finished.returncode == 2
    assert "--database" in finished.stdout


def test_jobs_counts() -> None:
    assert jobs_count("3") == 3
    assert jobs_count("auto") >= 1
    for wrong in ("0", "-1", "two", ""):
        with pytest.raises(SpreadError):
            jobs_count(wrong)


def test_a_worker_writes_no_stream_of_the_run_and_signs_nothing(tmp_path: Path) -> None:
    run = SuiteOptions(
        results=tmp_path / "r.jsonl",
        sign_key_file=tmp_path / "k",
        progress=Progress.SCENARIOS,
        sandbox=True,
    )
    worker = parse(run.for_worker(tmp_path / "w").argument().removeprefix("--suite-options="))
    assert worker.results == tmp_path / "w" / "share.jsonl" and worker.sign_key_file is None
    assert worker.progress is Progress.NONE and worker.sandbox
    assert set(worker.masked) == {tmp_path / "r.jsonl", tmp_path / "k"}


# -- shards --------------------------------------------------------------------


def test_shards_are_disjoint_stable_and_cover_the_inventory() -> None:
    keys = inventory_keys()
    for count in (1, 2, 3, 5):
        parts = [part_of(keys, index, count) for index in range(1, count + 1)]
        assert sorted(key for part in parts for key in part) == sorted(keys)
        assert parts == [part_of(list(keys), index, count) for index in range(1, count + 1)]
        sizes = [len({unit_of(key) for key in part}) for part in parts]
        assert max(sizes) - min(sizes) <= 1  # as many units each, to one
    by_unit: dict[str, set[int]] = {}
    for index in (1, 2, 3):
        for key in part_of(keys, index, 3):
            by_unit.setdefault(unit_of(key), set()).add(index)
    assert all(len(parts) == 1 for parts in by_unit.values())  # a property's records stay whole
    checks = [unit for unit in units_in_turn(keys) if unit.startswith("properties/")]
    assert len({index for unit in checks[:2] for index in by_unit[unit]}) == 2


def test_shard_texts() -> None:
    assert parse_shard("2/3") == (2, 3)
    for wrong in ("0/3", "4/3", "1/0", "a/b", "1", "1/2/3"):
        with pytest.raises(ShardError):
            parse_shard(wrong)


def test_a_shard_needs_a_seed_when_it_checks_properties(tmp_path: Path) -> None:
    finished = conformance(tmp_path, "run", "--shard", "1/2", "--results", "r.jsonl")
    assert finished.returncode == 2
    assert "--seed" in finished.stdout
    assert not (tmp_path / "r.jsonl").exists()


def test_merged_parts_are_the_single_run(runs: Path, tmp_path: Path) -> None:
    single = stream_of(runs, f"{TARGETS[1]}-one")
    parts = [str(stream_of(runs, name)) for name in ("part2", "part1")]  # in any order
    merged, markdown = tmp_path / "merged.jsonl", tmp_path / "merged.md"
    finished = conformance(
        tmp_path, "merge", *parts, "--output", str(merged), "--markdown", str(markdown)
    )
    assert finished.returncode == code_of(runs, f"{TARGETS[1]}-one") == 1, finished.stdout
    assert verdicts(merged) == verdicts(single)
    assert markdown.read_text() == single.with_suffix(".md").read_text()
    run = verify_stream(merged)
    assert run.header.shard is None and order(merged) == order(single)
    for part in parts:  # each part ran something of its own
        assert set(verdicts(Path(part)).values()) - {"undefined"}
    report = conformance(tmp_path, "report", str(merged))
    assert report.returncode == 1, report.stdout


@pytest.mark.parametrize(
    ("parts", "reason"),
    [
        (["part1"], "part 2/2 is missing"),
        (["part1", "part1", "part2"], "part 1/2 is given twice"),
        (["part1", "other2"], "its seed differs"),
        (["part1", "reference-one"], "not of a part"),
        (["part1", "tampered"], "hash chain breaks"),
    ],
)
def test_a_merge_of_parts_that_are_not_one_whole_run_is_refused(
    runs: Path, tmp_path: Path, parts: list[str], reason: str
) -> None:
    lines = (runs / "part2.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["status"] = "passed" if record["status"] != "passed" else "failed"
    lines[1] = json.dumps(record)
    (tmp_path / "tampered.jsonl").write_text("\n".join(lines) + "\n")
    paths = [
        str(tmp_path / "tampered.jsonl") if p == "tampered" else str(runs / f"{p}.jsonl")
        for p in parts
    ]
    refused = tmp_path / "refused.jsonl"
    finished = conformance(tmp_path, "merge", *paths, "--output", str(refused))
    assert finished.returncode == 2, finished.stdout
    assert reason in " ".join(finished.stdout.split()), finished.stdout
    assert not refused.exists()


def test_merge_refuses_a_part_of_another_inventory(runs: Path) -> None:
    """A part whose records are not its share of this kit's inventory does not verify."""
    from conformance.cli.common import _kit_inventory

    kit = _kit_inventory()
    fewer = kit._replace(keys=kit.keys[1:])
    with pytest.raises(MergeRefused, match="not a trustworthy part"):
        merge_parts([runs / "part1.jsonl", runs / "part2.jsonl"], kit=fewer)


def test_a_part_is_judged_on_its_own_records() -> None:
    """A part that holds records of some criteria only passes when none of them fails, in every
    format alike (its verdict is `run_succeeded`'s); the criteria it cannot judge alone are
    judged once the parts are merged, as they are in a whole run."""
    from datetime import UTC, datetime

    from conformance.reports.summary import run_succeeded
    from conformance.spec.registry import default_registry
    from conformance.stream.results import Footer, ResultsRun, ScenarioResult, Shard, Status, totals
    from tests.runs import a_header

    criterion = default_registry().criteria[0].id
    passed = ScenarioResult(
        key="a.feature::a",
        criterion=criterion,
        feature="a.feature",
        scenario="a",
        status=Status.PASSED,
        duration_s=0.0,
    )
    failed = passed.model_copy(update={"key": "a.feature::b", "status": Status.FAILED})

    def part(*records: ScenarioResult) -> ResultsRun:
        header = a_header().model_copy(update={"shard": Shard(index=1, count=2, inventory="x")})
        footer = Footer(finished_at=datetime.now(UTC), totals=totals(records), records=len(records))
        return ResultsRun(header=header, scenarios=list(records), footer=footer)

    assert run_succeeded(part(passed), default_registry())  # a part: one verdict, every format
    whole = part(passed).model_copy(update={"header": a_header()})
    assert not run_succeeded(whole, default_registry())  # the other criteria: no record
    assert not run_succeeded(part(passed, failed), default_registry())


@pytest.mark.parametrize(
    ("args", "given", "seed"),
    [("", "", "12345"), ("--seed 7", "", "7"), ("-k x --seed=8", "", "8"), ("", "9", "9")],
)
def test_the_action_s_shard_input_runs_a_part_from_the_workflow_s_seed(
    tmp_path: Path, args: str, given: str, seed: str
) -> None:
    """The run step with `shard: 2/3`, a stand-in `conformance` printing what it was given; the
    `seed` input, or one in `args`, is the search's, else the workflow run's id."""
    import yaml

    action = yaml.safe_load((CHECKOUT / "action.yml").read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    fake = tmp_path / "bin" / "conformance"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGUMENTS"\n')
    fake.chmod(0o755)
    environment = {
        **os.environ,
        "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}",
        "ARGUMENTS": str(tmp_path / "arguments"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_RUN_ID": "12345",
        "CONFORMANCE_IMPL": "./adapter",
        "CONFORMANCE_CLAIM": "all",
        "CONFORMANCE_SANDBOX": "false",
        "CONFORMANCE_ARGS": args,
        "CONFORMANCE_SHARD": "2/3",
        "CONFORMANCE_SEED": given,
        "CONFORMANCE_REPORTS": str(tmp_path / "reports"),
    }
    subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], env=environment, check=True)
    passed = (tmp_path / "arguments").read_text().splitlines()
    assert passed[passed.index("--shard") + 1] == "2/3"
    seeds = [a.removeprefix("--seed=") for a in passed if a.startswith("--seed=")]
    seeds += [passed[i + 1] for i, a in enumerate(passed) if a == "--seed"]
    assert seeds == [seed]


DYING = '''
import os
from conformance.adapters.factory import open_reference

OPENED = [0]


def factory(database, scratch):
    """The reference, in-process, whose third driver ends the process it runs in."""
    OPENED[0] += 1
    if OPENED[0] == 3:
        os._exit(9)
    return open_reference(database, scratch)
'''


def test_a_worker_that_dies_is_a_fault_of_the_harness(tmp_path: Path) -> None:
    """An in-process implementation that ends its worker leaves the run without the records
    of what that worker was running: no verdict (exit 4), never a verdict with holes."""
    (tmp_path / "dying.py").write_text(DYING, encoding="utf-8")
    finished = subprocess.run(
        command(
            *("run", "--impl", "python:dying:factory", "--jobs", "2", "--properties", "none"),
            *("-k", "window", "--results", "r.jsonl"),
        ),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**ENVIRONMENT, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
    )
    assert finished.returncode == 4, finished.stdout + finished.stderr
    said = " ".join(finished.stdout.split())
    assert "fault of the harness" in said and "ended without finishing" in said


def test_the_heaviest_searches_come_first_each_beside_a_scenario() -> None:
    """xdist hands each worker the first two items it has not handed out: each gets a search."""
    from conformance.running.workers import interleaved

    weights = {"a": None, "p": 1.0, "b": None, "q": 2.4, "c": None, "d": None, "r": 2.0}
    assert interleaved(list(weights), weights.__getitem__) == ["q", "a", "r", "b", "p", "c", "d"]


def test_every_check_is_weighed_as_measured() -> None:
    """The machine's searches are the heaviest, the office effects and same-instant checks
    next, the window checks lightest (docs/bench.md, the deep search)."""
    from conformance.properties.catalogue import PROPERTIES

    searches = [check.weight for check in PROPERTIES if check.search is not None]
    others = [check.weight for check in PROPERTIES if check.search is None]
    assert min(searches) > max(others) and min(others) == 1


def test_a_worker_masks_the_run_s_stream_and_key_from_the_implementation(tmp_path: Path) -> None:
    """What a worker's implementation may not see is the run's, not the worker's own share."""
    run = SuiteOptions(results=tmp_path / "results.jsonl", sign_key_file=tmp_path / "key")
    hidden = run.for_worker(tmp_path).containment().hidden
    assert set(hidden) == {tmp_path / "share.jsonl", tmp_path / "results.jsonl", tmp_path / "key"}
