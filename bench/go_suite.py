"""The Go implementation's suite wall time through `exec:` beside the served Python reference's.

One invocation builds examples/go with the machine's Go (no module proxy), then times
`conformance run` against the Go binary and against `conformance serve-reference`, both through
`exec:`, with the same seed and the same property budget, in turn (`--repeats` rounds, the two
alternating so that a busy spell of the machine falls on both). It prints one row per
implementation: the median wall time of its runs, every run's time, and the verdict line the run
printed, then the ratio. A run that does not pass is reported as such, never timed as if it had.

    .venv/bin/python -m bench.go_suite [--repeats 3] [--properties ci|none|thorough] [--sandbox]
        [--kit PATH-OF-A-CONFORMANCE-COMMAND]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "go"
CONFORMANCE = Path(sys.executable).with_name("conformance")
SEED = 20261202
VERDICT = re.compile(r"claims [^\n]*?criteria passed[^\n]*?(?= run (?:passed|failed)|$)")
RUN_TIMEOUT = 3600


@dataclass
class Timed:
    name: str
    command: str
    seconds: list[float] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def build(folder: Path) -> Path:
    go = shutil.which("go")
    if go is None:
        raise SystemExit("go is not on PATH (Debian: apt-get install golang-go)")
    binary = folder / "go-example"
    environment = {**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=EXAMPLE, env=environment, check=True)
    return binary


def time_run(kit: Path, target: Timed, folder: Path, properties: str, sandbox: bool) -> None:
    results = folder / f"{target.name}-{len(target.seconds)}.jsonl"
    command = [str(kit), "run", "--quiet", "--impl", f"exec:{target.command}"]
    command += ["--properties", properties, "--seed", str(SEED), "--results", str(results)]
    if sandbox:
        command.append("--sandbox")
    started = perf_counter()
    completed = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    elapsed = perf_counter() - started
    said = " ".join(completed.stdout.split())
    found = VERDICT.search(said)
    verdict = found.group(0) if found else "(no verdict line)"
    if completed.returncode != 0:
        target.failures.append(f"exit {completed.returncode}: {verdict}")
        return
    target.seconds.append(elapsed)
    target.verdicts.append(verdict)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--properties", default="ci", choices=["none", "ci", "thorough"])
    parser.add_argument("--sandbox", action="store_true")
    parser.add_argument(
        "--kit", type=Path, default=CONFORMANCE, help="the `conformance` command to time"
    )
    options = parser.parse_args(argv)
    kit: Path = options.kit
    with tempfile.TemporaryDirectory(prefix="go-suite-") as scratch:
        folder = Path(scratch)
        targets = [
            Timed("go", str(build(folder))),
            Timed("served reference", f"{kit} serve-reference"),
        ]
        for _ in range(options.repeats):
            for target in targets:
                time_run(kit, target, folder, options.properties, options.sandbox)
    print(
        f"suite wall time through exec: (properties {options.properties}, seed {SEED}, "
        f"{'sandboxed, ' if options.sandbox else ''}{options.repeats} run(s) each, in turn)"
    )
    print(f"{'implementation':<18} {'median s':>9}  runs (s)  verdict")
    for target in targets:
        if target.failures:
            print(f"{target.name:<18} {'failed':>9}  {'; '.join(target.failures)}")
            continue
        runs = ", ".join(f"{s:.1f}" for s in target.seconds)
        median = statistics.median(target.seconds)
        print(f"{target.name:<18} {median:>9.1f}  {runs}  {target.verdicts[-1]}")
    if all(target.seconds for target in targets):
        go, reference = (statistics.median(target.seconds) for target in targets)
        print(f"the Go implementation takes {go / reference:.2f}x the served reference's time")
    return 1 if any(target.failures for target in targets) else 0


if __name__ == "__main__":
    sys.exit(main())
