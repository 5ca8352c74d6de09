"""End to end on CPU: a gate against a saved baseline times a control on both sides (workflows/gate.py,
analyze/compare/control.py), so a host shift no longer passes a slower kernel as "faster".

Issue 51's hostile case: a ~30% slower plugin gated against a baseline saved while the box was loaded read
"PASS: 4 faster"; the unchanged naive backend had moved 80% and nothing said so.
"""

from __future__ import annotations

import dataclasses

import pytest

from qlabench.analyze.compare import CompareOptions, Verdict
from qlabench.analyze.compare.comparison import compare_paths
from qlabench.backends.synthetic import SLOWDOWN_ENV
from qlabench.core.errors import ConfigError
from qlabench.core.spec import parse_suite
from qlabench.run.options import RunOptions
from qlabench.run.sweep import run_sweep
from qlabench.store.files import write_rows
from qlabench.workflows.gate import run_gate, with_control

CONTROL = "naive-recurrent"
SUITE = {
    "name": "gate-control", "device": "cpu", "baseline": CONTROL,
    # synthetic stands in for the kernel under test (its slowdown knob is the change); naive-recurrent is untouched
    "sweep": {"backends": [CONTROL, "synthetic"], "modes": ["fwd"], "seqlen": [32, 64, 96, 128],
              "heads": [{"h_qk": 1, "h_v": 1}], "K": 32, "V": 32, "dtype": "float32"},
    "timing": {"timer": "wall", "warmup": 2, "min_samples": 15, "max_samples": 15, "max_time_s": 5.0},
}
LOAD = 1.8  # the box was this much slower when the baseline was saved


@pytest.fixture
def suite():
    return parse_suite(SUITE, "gate-control.toml")


def _loaded(rows, factor):
    """The rows as the loaded box measured them: every time `factor` times longer."""
    ms = ("median_ms", "mean_ms", "stdev_ms", "min_ms", "p20_ms", "p80_ms", "iqr_ms")
    return [dataclasses.replace(r, samples_ms=tuple(x * factor for x in r.samples_ms),
                                **{f: getattr(r, f) * factor for f in ms if getattr(r, f) is not None})
            for r in rows]


def test_a_slower_kernel_against_a_baseline_from_a_loaded_box_is_not_a_pass(suite, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # one torch thread per worker (docs/GATING.md)
    base = run_sweep(suite, tmp_path / "base", RunOptions(replicates=3))
    assert all(r.ok for r in base.rows)
    saved = write_rows(tmp_path / "loaded.parquet", _loaded(base.rows, LOAD))
    monkeypatch.setenv(SLOWDOWN_ENV, "1.3")  # the kernel under test is 30% slower
    g = run_gate(suite, [saved], tmp_path / "head", confirm=0, replicates=3)
    c = g.comparison
    assert c.options.control == CONTROL and c.control is not None  # the suite's baseline backend, by default
    mine = [p for p in c.pairs if p.backend == "synthetic"]
    # was "PASS: 4 faster"
    assert c.exit_code != 0 and not any(p.verdict in (Verdict.FASTER, Verdict.SAME) for p in mine), \
        [(p.verdict, p.reason) for p in c.pairs]
    # it says what it did about the shift, with the shift measured
    assert any(n.startswith(f"host shift: control {CONTROL} moved -") or n.startswith(f"no host shift seen: control "
                                                                                        f"{CONTROL} moved -")
               for n in c.notes), c.notes
    if c.control.action == "normalised":  # the box was quiet enough to see the shift beyond the control's noise
        assert 0.4 < c.control.ratio < 0.75, c.control
        # the head's times were divided by the control's shift: each point's change is its raw change over that
        # shift (its sign is the box's to decide: a loaded CI box once read -4% at a run-to-run noise of 24%)
        raw = {p.key: p for p in compare_paths([saved], [tmp_path / "head"]).pairs}
        for p in mine:
            assert 1 + p.change == pytest.approx((1 + raw[p.key].change) / c.control.ratio, rel=1e-9), p.reason


def test_a_named_control_must_be_a_backend_of_the_suite_and_the_default_needs_its_rows(suite, tmp_path):
    import pandas as pd

    base = pd.DataFrame({"backend": ["synthetic"], "status": ["ok"]})
    with pytest.raises(ConfigError, match="--control fla: not a backend of suite 'gate-control'"):
        with_control(suite, base, CompareOptions(control="fla"))
    opt, note = with_control(suite, base, CompareOptions())
    assert opt.control is None and note.startswith("no control:")  # the baseline holds no row of it
    opt, note = with_control(suite, pd.DataFrame({"backend": [CONTROL], "status": ["ok"]}), CompareOptions())
    assert opt.control == CONTROL and note is None
    opt, _ = with_control(suite, pd.DataFrame({"backend": [CONTROL], "status": ["ok"]}), CompareOptions(drift=True))
    assert opt.control is None  # drift correction divides by its own shift
