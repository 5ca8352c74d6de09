"""The study reads `gate_scale` as core does (a divisor of g; the flashqla default 16), from the rows
that `qlabench run sweep` itself writes."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from qlabench.analyze.study import build_study
from qlabench.analyze.study.prepare import prepare
from qlabench.cli import app
from qlabench.core.point import FLASHQLA_GATE_SCALE, FLASHQLA_GATE_ZERO_FRAC, Point
from qlabench.store.files import read_results
from qlabench.store.keys import key_value

SCALES = (4, FLASHQLA_GATE_SCALE, 64)

SUITE = f"""
name = "gate-scale-cpu"
device = "cpu"
[sweep]
backends = ["naive-recurrent", "naive-chunk"]
modes = ["fwd"]
varlen = [[24, 8]]
heads = [{{ h_qk = 1, h_v = 4 }}]
K = 16
V = 16
dtype = "float32"
gate = "flashqla"
gate_scale = [{", ".join(f"{s:g}" for s in SCALES)}]
[timing]
timer = "wall"
warmup = 0
min_samples = 2
max_samples = 2
max_time_s = 0.1
target_rel_noise = 0.5
[check]
oracle_max_tokens = 32
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """The rows of a real CPU sweep over three gate scales (the default one stored as null)."""
    root = tmp_path_factory.mktemp("gate-scale")
    suite = root / "gate-scale-cpu.toml"
    suite.write_text(SUITE)
    result = CliRunner().invoke(app, ["run", "sweep", "--suite", str(suite), "--out", str(root / "out")])
    assert result.exit_code == 0, result.output
    df = read_results([root / "out"])
    assert (df["status"] == "ok").all(), df[["backend", "status", "reason"]]
    return df


def _point(row) -> Point:
    return Point(**{f.name: key_value(row[f.name]) for f in dataclasses.fields(Point)})


def test_the_study_fills_gate_defaults_as_core_does(swept):
    d = prepare(swept)
    assert d["gate_scale"].isna().any(), "the default scale is stored as null"
    for r in d.to_dict("records"):
        eff = _point(r).gate_params_effective()
        assert r["gate_scale_eff"] == eff["gate_scale"]
        assert r["gate_zero_frac_eff"] == eff["gate_zero_frac"] == FLASHQLA_GATE_ZERO_FRAC


def test_the_gate_scale_sweep_puts_the_default_among_the_values_run(swept):
    # The gate figure draws the study's backends only: the naive rows stand in for them, values as written.
    rows = swept.assign(backend=swept["backend"].map({"naive-recurrent": "fla", "naive-chunk": "flash_qla"}))
    s = build_study(rows).gate_scale
    for backend in ("fla", "flash_qla"):
        assert sorted(s.loc[s["backend"] == backend, "value"]) == sorted(float(x) for x in SCALES)


def test_a_scale_other_than_the_default_is_labelled_as_the_divisor(swept):
    d = prepare(swept)
    labels = set(d["gate_label"])
    assert any("g/64" in lbl for lbl in labels) and any("g/4" in lbl for lbl in labels)
    assert not any("1/" in lbl for lbl in labels)
