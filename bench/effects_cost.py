"""What the office effects model adds to a run: `conformance run` against the in-process
reference with every check, and the same run without the effects property, side by side in one
run of this script (alternating, so that the machine's load falls on both alike).

    python -m bench.effects_cost [--rounds 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.stats import median

WITHOUT_MODEL = "not test_every_operation_shows_what_the_model_says"


def timed_run(folder: Path, deselect: str | None, seed: int) -> float:
    """Seconds of one run; a run that ends as a harness fault (exit 2 or 4) measures nothing."""
    command = [sys.executable, "-c", "from conformance.cli import main; main()", "run"]
    command += ["--quiet", "--properties", "ci"]
    command += ["--seed", str(seed), "--results", str(folder / "results.jsonl")]
    command += ["-k", deselect] if deselect else []
    started = time.perf_counter()
    finished = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if finished.returncode not in (0, 1):
        raise SystemExit(f"the run ended with exit {finished.returncode}: {finished.stderr[-500:]}")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args(argv)
    full: list[float] = []
    without: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for _ in range(options.rounds):
            full.append(timed_run(folder, None, options.seed))
            without.append(timed_run(folder, WITHOUT_MODEL, options.seed))
    rounds = f"median of {options.rounds}"
    print(f"whole run, in-process reference, --properties ci: {median(full):.1f} s ({rounds})")
    print(f"the same without the office effects property:  {median(without):.1f} s")
    print(f"ratio: {median(full) / median(without):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
