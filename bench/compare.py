"""Compare two bench runs: `python bench/compare.py a.json b.json`.

Rows are matched by key; each shows the subject measure in both runs, how it
moved, and the cost ratio in both runs against the target. Ratios travel
better than raw figures between runs on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console

from bench.report import read_report
from bench.table import print_comparison


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the earlier run (A)")
    parser.add_argument("after", type=Path, help="the later run (B)")
    options = parser.parse_args(argv)
    console = Console() if sys.stdout.isatty() else Console(width=150)
    try:
        before, after = read_report(options.before), read_report(options.after)
    except (OSError, ValueError, KeyError) as error:
        console.print(f"[bold red]cannot read the reports:[/] {error}")
        return 2
    print_comparison(before, after, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
