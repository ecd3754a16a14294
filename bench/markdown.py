"""Print a bench run as the Markdown table docs/bench.md shows: `python bench/markdown.py run.json`.

The documented figures are pasted from this output, never typed by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import Report, Row, read_report
from bench.table import ratio_text, target_text, value_text


def markdown_table(report: Report) -> str:
    lines = ["| measure | baseline | subject | cost × | target |", "|---|---|---|---:|---|"]
    section = ""
    for row in report.rows:
        if row.section != section:
            section = row.section
            lines.append(f"| **{section}** | | | | |")
        lines.append(_line(row))
    return "\n".join(lines)


def _line(row: Row) -> str:
    target = f"{target_text(row)} {row.verdict}".strip() if row.verdict else target_text(row)
    cells = [
        row.what,
        value_text(row.baseline),
        value_text(row.subject),
        ratio_text(row.ratio),
        target,
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a run written with bench/run.py --json")
    options = parser.parse_args(argv)
    try:
        report = read_report(options.report)
    except (OSError, ValueError, KeyError) as error:
        print(f"cannot read {options.report}: {error}", file=sys.stderr)
        return 2
    print(markdown_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
