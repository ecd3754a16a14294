"""What checking on every path costs a run: `conformance run` against the in-process
reference with every check, beside the same run without the office effects property, or beside
the kit as it was at an earlier commit (`--baseline REV`, checked out into a throwaway
worktree), side by side in one run of this script (alternating, so that the machine's load
falls on both alike). Each run must pass (a run with checks deselected: fail no record): a
ratio of runs that judged differently would compare nothing.

    python -m bench.effects_cost [--rounds 3] [--seed 1]
    python -m bench.effects_cost --baseline REV [--rounds 3]
    CONFORMANCE_THOROUGH_EXAMPLES=250 python -m bench.effects_cost --baseline REV \
        --properties thorough --jobs 2 --rounds 1     # the deep search, side by side
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.stats import median

CHECKOUT = Path(__file__).resolve().parent.parent
WITHOUT_MODEL = "not test_every_operation_shows_what_the_model_says"
IN_PROCESS_UNVERIFIED = "AC-OFFICE-ASSIGN-RATE-002.4"
"""In-process, nothing can kill the implementation mid-batch: 002.4's crash clause alone stays
unverified, which the run allows by name."""


@dataclass(frozen=True)
class Profile:
    """What every run of one comparison asks for: the properties' budget and its workers."""

    properties: str = "ci"
    jobs: int = 1
    seed: int = 1


@dataclass(frozen=True)
class Subject:
    """One side of the comparison: a kit (its source folder, None for this checkout) and a
    `-k` expression, if any."""

    name: str
    source: Path | None = None
    deselect: str | None = None


def timed_run(folder: Path, subject: Subject, profile: Profile) -> tuple[float, str]:
    """Seconds of one run, and its verdict line; a run that does not pass measures nothing."""
    command = [sys.executable, "-c", "from conformance.cli import main; main()", "run"]
    command += ["--quiet", "--properties", profile.properties, "--jobs", str(profile.jobs)]
    command += ["--allow-unverified", IN_PROCESS_UNVERIFIED]
    command += ["--seed", str(profile.seed), "--results", str(folder / "results.jsonl")]
    command += ["-k", subject.deselect] if subject.deselect else []
    environment = dict(os.environ)
    if subject.source is not None:
        environment["PYTHONPATH"] = str(subject.source)  # its `conformance`, not this checkout's
    started = time.perf_counter()
    finished = subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    verdict = _verdict_line(finished.stdout)
    if not _passed(finished.returncode, verdict, subject):
        raise SystemExit(
            f"{subject.name}: the run ended with exit {finished.returncode}, not a pass: "
            f"{verdict or finished.stderr[-500:]}"
        )
    return seconds, verdict


def _passed(exit_code: int, verdict: str, subject: Subject) -> bool:
    """Exit 0; or, with checks deselected, exit 1 for the criteria only they verify and no
    record failed, errored or diverged."""
    if exit_code == 0:
        return True
    bad = (" failed", " errored", " diverged", " timeout")
    return subject.deselect is not None and exit_code == 1 and not any(b in verdict for b in bad)


def _verdict_line(output: str) -> str:
    return next((line for line in output.splitlines() if line.startswith("claims ")), "")


@contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """The kit at `revision`, in a throwaway worktree of this repository."""
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as scratch:
        folder = Path(scratch) / "kit"
        git = ["git", "-C", str(CHECKOUT), "worktree"]
        subprocess.run([*git, "add", "-q", "--detach", str(folder), revision], check=True)
        try:
            yield folder
        finally:
            subprocess.run([*git, "remove", "--force", str(folder)], check=False)


def compare(subject: Subject, baseline: Subject, rounds: int, profile: Profile) -> None:
    times: dict[str, list[float]] = {subject.name: [], baseline.name: []}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for _ in range(rounds):
            for side in (subject, baseline):
                seconds, verdict = timed_run(folder, side, profile)
                times[side.name].append(seconds)
                print(f"{side.name}: {seconds:.1f} s, {verdict}", flush=True)
    ours, theirs = median(times[subject.name]), median(times[baseline.name])
    examples = os.environ.get("CONFORMANCE_THOROUGH_EXAMPLES", "the profile's")
    asked = f"--properties {profile.properties} --jobs {profile.jobs} --seed {profile.seed}"
    size = f", {examples} examples a search" if profile.properties == "thorough" else ""
    print(f"{subject.name}: {ours:.1f} s (median of {rounds}, in-process, {asked}{size})")
    print(f"{baseline.name}: {theirs:.1f} s")
    print(f"ratio: {ours / theirs:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline", metavar="REV", help="compare with the kit at this commit")
    parser.add_argument("--properties", choices=("ci", "thorough"), default="ci")
    parser.add_argument("--jobs", type=int, default=1)
    options = parser.parse_args(argv)
    profile = Profile(options.properties, options.jobs, options.seed)
    whole = Subject("the whole run")
    if options.baseline is None:
        without = Subject("without the office effects property", deselect=WITHOUT_MODEL)
        compare(whole, without, options.rounds, profile)
        return 0
    with worktree(options.baseline) as source:
        compare(whole, Subject(f"the kit at {options.baseline}", source), options.rounds, profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
