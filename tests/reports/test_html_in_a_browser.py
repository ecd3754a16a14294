"""The living spec page and the compare matrix, as a person sees them in a real browser.

Headless Chromium loads each page from its file, runs its script, and hands
back the DOM it ends with (and a screenshot): the filters must really hide
what they say, and a failure must be visible without a click. Chromium comes
from Debian's packages; .ci/run installs it and sets CONFORMANCE_REQUIRE_BROWSER=1
so that a missing browser fails there instead of skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from tests.paths import FAKES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow(seconds=30),
    pytest.mark.skipif(
        CHROMIUM is None and os.environ.get("CONFORMANCE_REQUIRE_BROWSER") != "1",
        reason="headless Chromium is not installed (Debian: apt-get install chromium)",
    ),
]
RUNNER = CliRunner()
SCREENSHOTS_ENV = "CONFORMANCE_SCREENSHOTS"
"""Where the screenshots go: a scratch folder, unless this names one (docs/screenshots/ holds
the ones the README shows: `CONFORMANCE_SCREENSHOTS=docs/screenshots pytest this file`)."""


def browse(page: Path, profile: Path, *, fragment: str = "", screenshot: Path | None = None) -> str:
    """The DOM after the page's script ran; optionally a screenshot of the first screen."""
    assert CHROMIUM is not None, "CONFORMANCE_REQUIRE_BROWSER=1 but no chromium on PATH"
    flags = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1280,1400",
    ]
    url = page.resolve().as_uri() + fragment
    if screenshot is not None:
        subprocess.run(
            [*flags, f"--screenshot={screenshot}", url],
            capture_output=True,
            timeout=120,
            check=True,
        )
    dumped = subprocess.run(
        [*flags, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    )
    return dumped.stdout


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A failing mutant's spec page, and a matrix of it beside an implementation that never
    starts."""
    folder = tmp_path_factory.mktemp("pages")
    mutant, broken = folder / "mutant.jsonl", folder / "never-starts.jsonl"
    outputs = ["--results", str(mutant), "--html", str(folder / "spec.html")]
    failing = ["--impl", "mutant:allowance_off_by_one", "--properties", "none"]
    RUNNER.invoke(app, ["run", "--quiet", *failing, *outputs])
    fake = f"exec:{sys.executable} {FAKES / 'wrong_version.py'}"
    never_starts = ["--impl", fake, "--properties", "none", "--results", str(broken)]
    RUNNER.invoke(app, ["run", "--quiet", *never_starts])
    RUNNER.invoke(app, ["compare", str(mutant), str(broken), "--html", str(folder / "matrix.html")])
    return {"spec": folder / "spec.html", "matrix": folder / "matrix.html", "folder": folder}


def visible_criteria(dom: str) -> list[str]:
    return re.findall(r"<div class=\"criterion\" id=\"([^\"]+)\" data-verdict", dom)


def screenshots(pages: dict[str, Path]) -> Path:
    folder = Path(os.environ.get(SCREENSHOTS_ENV) or pages["folder"] / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_spec_page_shows_failures_open_and_its_filters_work(pages: dict[str, Path]) -> None:
    profile = pages["folder"] / "profile"
    shot = screenshots(pages) / "spec-page.png"
    everything = browse(pages["spec"], profile, fragment="#verdicts=failed", screenshot=shot)
    assert shot.stat().st_size > 10_000, "the screenshot is empty"
    opened = browse(pages["spec"], profile)
    leading = [
        c for c in re.findall(r"<div class=\"criterion\"[^>]*>", opened) if "hidden" not in c
    ]
    assert leading, "the script did not run, or shows nothing"
    assert all(
        re.search(r'data-verdict="(failed|unverified|undefined|errored)"', c) for c in leading
    )
    assert f'<span id="shown">{len(leading)}</span>' in opened, "it opens on what fails"
    everything = browse(pages["spec"], profile, fragment="#verdicts=all")
    assert re.search(r"<span id=\"shown\">38</span> shown", everything), "show all"
    assert "expected the wake" in everything and "observed 'queued'" in everything
    assert re.search(r"<details class=\"scenario\" data-status=\"failed\" open=\"\">", everything)
    assert 'class="step-failed"' in everything

    only_failed = browse(pages["spec"], profile, fragment="#verdicts=failed")
    cards = re.findall(r"<div class=\"criterion\"[^>]*>", only_failed)
    verdicts = [re.findall(r'data-verdict="(\w+)"', card)[0] for card in cards]
    failed = [card for card, verdict in zip(cards, verdicts, strict=True) if verdict == "failed"]
    hidden = [card for card in cards if "hidden" in card]
    assert failed and "passed" in verdicts
    assert len(hidden) == len(cards) - len(failed), "only failed criteria stay visible"
    assert not any("hidden" in card for card in failed)
    assert f'<span id="shown">{len(failed)}</span>' in only_failed

    searched = browse(pages["spec"], profile, fragment="#search=AC-OFFICE-ASSIGN-RATE-001.2")
    assert re.search(r"<span id=\"shown\">1</span> shown", searched), "the search box"

    passing = re.search(r'<div class="criterion" id="([^"]+)" data-verdict="passed"', everything)
    assert passing, "the mutant passes some criterion"
    linked = browse(pages["spec"], profile, fragment=f"#{passing[1]}")
    card = re.search(rf'<div class="criterion" id="{re.escape(passing[1])}"[^>]*>', linked)
    assert card and "hidden" not in card[0], "an anchor shows its criterion whatever it passed"


def test_the_matrix_marks_where_implementations_differ(pages: dict[str, Path]) -> None:
    shot = screenshots(pages) / "compare.png"
    dom = browse(pages["matrix"], pages["folder"] / "profile", screenshot=shot)
    assert "0/38 passed" in dom and re.search(r"[1-9]\d*/38 passed", dom)
    assert re.search(
        r"<tr class=\"differs\"><td><details><summary>AC-OFFICE-ASSIGN-RATE-001.2", dom
    )
