"""The command line of a gate that cannot see its threshold (docs/GATING.md, "Exit codes"): `compare` exits 3 on
inconclusive points and 0 with --accept-inconclusive; a refused host shift exits 2 whatever is accepted; `gate` and
`ab` take the same flags."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import write_rows

PLUGIN, CONTROL = "naive-chunk", "naive-recurrent"


def _write(path, make_row, rng, specs, run_id):
    """specs: (backend, factor, run-to-run SD) for six points, three replicates each."""
    out = []
    for backend, factor, sigma in specs:
        for r in range(3):
            for i, m in enumerate([0.4, 0.8, 1.2, 1.6, 2.0, 2.4]):
                s = m * factor * math.exp(rng.normal(0.0, sigma)) * np.exp(rng.normal(0.0, 0.01, 20))
                out.append(make_row(run_id=run_id, backend=backend, seed=i, replicate=r, samples_ms=tuple(s),
                                    median_ms=float(np.median(s)), n_samples=20,
                                    timestamp=f"2025-01-01T00:{r:02d}:00+00:00"))
    return write_rows(path, out)


def _invoke(*args):
    r = CliRunner().invoke(app, list(map(str, args)))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def test_compare_exits_3_on_inconclusive_points_unless_accepted(tmp_path, make_row, rng):
    base = _write(tmp_path / "b.parquet", make_row, rng, [(PLUGIN, 1.0, 0.2)], "b")
    head = _write(tmp_path / "h.parquet", make_row, rng, [(PLUGIN, 1.3, 0.2)], "h")
    r = _invoke("compare", base, head, "--format", "comment")
    assert r.exit_code == 3, r.output
    assert r.output.splitlines()[1].startswith("### :grey_question: qlabench compare: INCONCLUSIVE (exit 3)")
    ok = _invoke("compare", base, head, "--accept-inconclusive")
    assert ok.exit_code == 0 and "PASS, 6 inconclusive accepted" in " ".join(ok.output.split())


def test_compare_with_a_control_refusing_a_host_shift_exits_2(tmp_path, make_row, rng):
    base = _write(tmp_path / "b.parquet", make_row, rng, [(PLUGIN, 1.8, 0.005), (CONTROL, 1.8, 0.005)], "b")
    head = _write(tmp_path / "h.parquet", make_row, rng, [(PLUGIN, 1.3, 0.005), (CONTROL, 1.0, 0.005)], "h")
    assert _invoke("compare", base, head).exit_code == 0  # blind to the host: "PASS: faster"
    norm = _invoke("compare", base, head, "--control", CONTROL, "--format", "json")
    assert norm.exit_code == 1 and '"action": "normalised"' in norm.output
    refused = _invoke("compare", base, head, "--control", CONTROL, "--host-shift", "refuse", "--accept-inconclusive")
    assert refused.exit_code == 2 and "NOT A PASS (exit 2)" in " ".join(refused.output.split())
    bad = _invoke("compare", base, head, "--control", CONTROL, "--host-shift", "ignore")
    assert bad.exit_code == 2 and "--host-shift must be one of normalise, refuse" in bad.output


@pytest.mark.parametrize("command, flags", [("gate", ("--accept-inconclusive", "--control", "--host-shift")),
                                            ("ab", ("--accept-inconclusive",))])
def test_gate_and_ab_take_the_flags(command, flags):
    r = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and all(f in r.output for f in flags), r.output
