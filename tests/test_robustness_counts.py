"""docs/ROBUSTNESS.md's round-5 table against the tests: every test a row names exists, every row names one, and
the counts the page states are the table's."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _round5() -> str:
    text = (ROOT / "docs" / "ROBUSTNESS.md").read_text(encoding="utf-8")
    return text[text.index("## Round 5"):]


def test_every_row_of_round_5_names_a_test_that_exists_and_the_counts_are_the_tables():
    section = _round5()
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith(("| case tried", "| ---"))]
    assert rows
    for row in rows:
        refs = re.findall(r"`(tests/[\w/]+\.py)::(\w+)", row)
        assert refs, row[:120]
        for path, name in refs:
            assert re.search(rf"^def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), (path, name)
    held_now = len(rows)
    m = re.search(r"are the (\d+) rows above .*all (\d+) hold now", " ".join(section.split()))
    assert m and int(m.group(1)) == held_now and int(m.group(2)) == held_now, m
    assert all("| no |" in r for r in rows)  # each row a case that did not hold in the trial
