"""`qlabench site` in a real browser: the pages load from file:// with no console error and no broken
image, and the 397B TP8 page shows the current ranking, case by case, as `advise` answers it.

Headless Chromium (Debian's `chromium` package) is started by the test (tests/browser.py). Where none is
installed the test skips, unless QLABENCH_REQUIRE_BROWSER is set: CI (.ci/run) installs Chromium and
sets it, so there a missing browser fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import browser
from qlabench.analyze.advise import advise
from qlabench.analyze.answer import make_question

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
STUDY = REPO / "results" / "h200-study"

pytestmark = pytest.mark.skipif(browser.chromium() is None and not os.environ.get("QLABENCH_REQUIRE_BROWSER"),
                                reason="no Chromium installed (apt-get install chromium); CI installs it")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site of a results tree holding the committed current evidence (the study) and its catalog."""
    root = tmp_path_factory.mktemp("results")
    shutil.copy(REPO / "results" / "README.md", root / "README.md")
    shutil.copytree(STUDY, root / "h200-study")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "qlabench", "site", str(root), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


FIRST_BACKENDS = ("Array.from(document.querySelectorAll('table.ranking'))"
                  ".map(t => [t.dataset.case, Array.from(t.querySelectorAll('tbody tr')).map(r => r.cells[0].textContent)])")


def test_397b_tp8_page_shows_the_current_ranking_with_no_console_error(site):
    page = site / "rank-qwen3.5-397b-tp8-prefill.html"
    got = browser.load(page.as_uri(), {"rankings": FIRST_BACKENDS})
    assert got.errors == []
    assert got.broken_images == []
    assert "qwen3.5-397b TP8" in got.text
    shown = {case: backends for case, backends in got.values["rankings"]}
    cases = ",".join(shown)
    answer = advise(make_question("qwen3.5-397b", 8, "prefill", cases), [STUDY])
    expected = {c.case.label: [e.backend for e in c.entries] for c in answer.cases}
    assert shown == expected  # every case, every backend, in advise's order
    assert len(shown) >= 10 and all(shown.values())


def test_every_page_loads_without_an_error(site):
    pages = sorted(site.glob("*.html"))
    assert site / "index.html" in pages and len(pages) > 5
    with browser.Browser() as b:
        for page in pages:
            got = b.load(page.as_uri())
            assert (page.name, got.errors, got.broken_images) == (page.name, [], [])
        index = b.load((site / "index.html").as_uri(), {"links": "Array.from(document.links).map(a => a.href)"})
    linked = {Path(h.removeprefix("file://")).name for h in index.values["links"]}
    assert "rank-qwen3.5-397b-tp8-prefill.html" in linked and "folder-h200-study.html" in linked
