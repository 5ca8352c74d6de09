"""One exit code per outcome of `compare` and `ab`, and the text says the code the command exits with: PASS (exit
0), FAIL (exit 1), NOT A PASS (exit 2). Was: "nothing was compared, which is not a pass (exit 2)" printed by a
comparison that then exited 1 (a head whose every row failed: nothing timed, and its status changes fail)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from qlabench.analyze.compare.comparison import compare_paths
from qlabench.cli import app
from qlabench.store.files import write_rows

FORMATS = ("table", "markdown", "comment", "json")


@pytest.fixture
def sides(make_row, tmp_path):
    """Result files of one suite: a base, a copy of it, a head 10x slower on one point, a head whose rows all
    failed, a base whose rows all failed."""
    def side(name, slow=(), **changes):
        rows = [make_row(run_id=name, seed=s, replicate=r, median_ms=10.0 if s in slow else 1.0,
                         samples_ms=tuple(x * (10.0 if s in slow else 1.0) for x in (1.0, 1.02, 0.99, 1.01, 1.0)),
                         **changes) for s in range(2) for r in range(3)]
        return write_rows(tmp_path / f"{name}.parquet", rows)

    return {"base": side("base"), "same": side("same"), "slow": side("slow", slow=(0,)),
            "failed": side("failed", status="error", reason="boom"),
            "base-failed": side("base-failed", status="error", reason="boom")}


# outcome -> (base, head, the exit code, the words of the verdict)
OUTCOMES = {"pass": ("base", "same", 0, "PASS (exit 0)"),
            "a point slower": ("base", "slow", 1, "FAIL (1 failing; exit 1)"),
            "every head row failed (nothing timed, statuses changed)": ("base", "failed", 1, "FAIL (2 failing; exit 1)"),
            "nothing compared": ("base-failed", "same", 2, "NOT A PASS (exit 2)")}


def _codes_said(text: str) -> set[int]:
    return {int(m) for m in re.findall(r"\bexit (\d+)", text)}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_compare_exits_with_the_code_its_text_says(sides, outcome, fmt):
    base, head, code, verdict = OUTCOMES[outcome]
    r = CliRunner().invoke(app, ["compare", str(sides[base]), str(sides[head]), "-f", fmt])
    assert r.exit_code == code, r.output
    if fmt == "json":
        assert json.loads(r.stdout)["exit_code"] == code
    else:
        assert verdict in " ".join(r.output.split()), r.output
    assert _codes_said(r.output) <= {code}, r.output  # no other code is ever named


@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_ab_exits_with_the_code_its_text_says(sides, outcome, monkeypatch, tmp_path):
    """`ab`'s command line over each outcome: the rounds themselves are a sweep each (tests/workflows/test_ab.py
    runs them); here run_ab hands back the comparison of the outcome's two sides, paired as an A/B's are."""
    from qlabench.workflows import ab

    base, head, code, verdict = OUTCOMES[outcome]

    def fake_run_ab(suite, a, b, out, rounds, opt, **kw):
        c = compare_paths([sides[base]], [sides[head]], opt, fail_on=kw["fail_on"])
        return ab.ABResult(c, a, b, rounds, [], sides[base], sides[head])

    monkeypatch.setattr(ab, "run_ab", fake_run_ab)
    for fmt in FORMATS:
        r = CliRunner().invoke(app, ["ab", "current", "current", "--suite", "quick-cpu", "--out",
                                     str(tmp_path / "ab"), "--no-warmup", "-f", fmt])
        assert r.exit_code == code, (fmt, r.output)
        if fmt != "json":
            assert verdict in " ".join(r.output.split()), (fmt, r.output)
        assert _codes_said(r.output) <= {code}, (fmt, r.output)
