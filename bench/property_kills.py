"""What the property checks catch on their own, mutant by mutant: `python bench/property_kills.py`.

`conformance strength` judges mutants by the Gherkin scenarios alone (a kill that hung on a
random search would depend on the seed). This measures what the property checks add to that:
every mutant run through the property checks only (`-k properties`) at the thorough profile,
at a reduced size by default, from one seed, without shrinking (a verdict is wanted here, not
the shortest counterexample). A mutant is *in sight* when some property check
names its criterion: those the properties should fail, and the table says which they did and
which record failed. The others are listed as out of sight, with their criterion.

    python bench/property_kills.py --examples 40 --seed 1 --jobs 2 --json kills.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from fnmatch import fnmatch
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from conformance.implementations import Mutation, mutants
from conformance.properties.catalogue import PROPERTIES
from conformance.running.properties_plugin import SHRINK, THOROUGH_EXAMPLES
from conformance.stream.results import Status
from conformance.stream.stream_integrity import read_stream

RUN_TIMEOUT_S = 3600


@dataclass(frozen=True)
class Caught:
    mutant: str
    criterion: str
    in_sight: bool
    failed: tuple[str, ...]
    """Each failed property record: 'criterion: check title'."""
    other: tuple[str, ...]
    """Records that ran and neither passed nor failed (errored, diverged, timeout...): 'status
    criterion' (a check `-k` left out is undefined, and not listed)."""
    exit_code: int
    seconds: float

    @property
    def caught(self) -> bool:
        return bool(self.failed)


def criteria_in_sight() -> frozenset[str]:
    return frozenset(criterion for check in PROPERTIES for criterion in check.criteria)


def run_one(
    mutant: Mutation, examples: int, seed: int, in_sight: frozenset[str], select: str
) -> Caught:
    """The mutant's property checks at the thorough profile, in a throwaway folder."""
    with tempfile.TemporaryDirectory(prefix="property-kills-") as folder:
        stream = Path(folder) / "results.jsonl"
        started = time.perf_counter()
        finished = subprocess.run(
            [
                *(sys.executable, "-c", "from conformance.cli import main; main()", "run"),
                *("--impl", f"mutant:{mutant.name}", "--properties", "thorough"),
                *("--seed", str(seed), "-k", select, "--quiet", "--results", str(stream)),
            ],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
            timeout=RUN_TIMEOUT_S,
            env={**os.environ, THOROUGH_EXAMPLES: str(examples), SHRINK: "0"},
        )
        seconds = time.perf_counter() - started
        records = [r for r in read_stream(stream).scenarios if r.feature.startswith("properties/")]
    failed = sorted({f"{r.criterion}: {r.scenario}" for r in records if r.status is Status.FAILED})
    other = sorted(
        {
            f"{r.status.value} {r.criterion}"
            for r in records
            if r.status
            not in (Status.PASSED, Status.FAILED, Status.NOT_APPLICABLE, Status.UNDEFINED)
        }
    )
    return Caught(
        mutant=mutant.name,
        criterion=mutant.criterion,
        in_sight=mutant.criterion in in_sight,
        failed=tuple(failed),
        other=tuple(other),
        exit_code=finished.returncode,
        seconds=seconds,
    )


def print_table(results: Sequence[Caught], console: Console) -> None:
    table = Table(title="mutants through the property checks alone")
    for column in ("mutant", "criterion", "in sight", "caught by", "else", "s"):
        table.add_column(column)
    for caught in sorted(results, key=lambda c: (not c.in_sight, c.caught, c.mutant)):
        table.add_row(
            caught.mutant,
            caught.criterion.removeprefix("AC-"),
            "yes" if caught.in_sight else "no",
            "\n".join(dict.fromkeys(f.split(": ", 1)[1] for f in caught.failed)) or "-",
            "\n".join(caught.other) or "",
            f"{caught.seconds:.0f}",
        )
    console.print(table)
    sighted = [c for c in results if c.in_sight]
    console.print(
        f"in sight: {len(sighted)} mutants, {sum(c.caught for c in sighted)} caught; "
        f"out of sight: {len(results) - len(sighted)}, "
        f"{sum(c.caught for c in results if not c.in_sight)} caught all the same"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=40, help="examples a search (thorough)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    parser.add_argument("--mutant", action="append", default=[], help="only names matching")
    parser.add_argument("--json", type=Path, help="write every mutant's account here")
    parser.add_argument(
        "-k", dest="select", default="properties", help="which checks (a pytest -k expression)"
    )
    options = parser.parse_args()
    family = mutants().members
    chosen = [
        family[name]
        for name in sorted(family)
        if not options.mutant or any(fnmatch(name, p) for p in options.mutant)
    ]
    in_sight = criteria_in_sight()
    console = Console(width=200)
    results: list[Caught] = []
    keeping = threading.Lock()

    def judged(mutant: Mutation) -> Caught:
        """One mutant's account, printed and kept as soon as it is known (a long sweep that is
        stopped keeps what it found)."""
        caught = run_one(mutant, options.examples, options.seed, in_sight, options.select)
        with keeping:
            console.print(f"{caught.mutant}: {'caught' if caught.caught else 'not caught'}")
            results.append(caught)
            if options.json:
                options.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
        return caught

    with ThreadPoolExecutor(options.jobs) as pool:
        list(pool.map(judged, chosen))
    print_table(results, console)


if __name__ == "__main__":
    main()
