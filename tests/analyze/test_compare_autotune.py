"""`compare` names an autotuned kernel whose config changed between two runs of a point, read back from
result files (the `autotune` column, schema 5)."""

from __future__ import annotations

import numpy as np

from qlabench.analyze.compare import CompareOptions, Verdict, compare_frames
from qlabench.analyze.compare.kernels import autotune_change
from qlabench.analyze.compare.render import markdown
from qlabench.store import files as store


def choice(num_warps, BV="64", kernel="chunk_fwd_kernel_o"):
    return {"kernel": kernel, "num_warps": num_warps, "num_stages": 3, "num_ctas": 1, "kwargs": {"BT": "64", "BV": BV}}


def test_a_slower_fla_point_names_the_kernel_whose_config_moved(tmp_path, make_row):
    rng = np.random.default_rng(5)
    fast = 0.93 * (1 + 0.003 * rng.standard_normal(30))
    slow = 1.13 * (1 + 0.003 * rng.standard_normal(30))
    same = choice(4, kernel="chunk_scaled_dot_kkt_fwd_kernel")
    base = store.write_rows(tmp_path / "b.parquet", [make_row(
        run_id="b", backend="fla", samples_ms=tuple(fast), median_ms=float(np.median(fast)), n_samples=30,
        autotune=[same, choice(4)])])
    head = store.write_rows(tmp_path / "h.parquet", [make_row(
        run_id="h", backend="fla", samples_ms=tuple(slow), median_ms=float(np.median(slow)), n_samples=30,
        autotune=[same, choice(8)])])
    c = compare_frames(store.read_results([base]), store.read_results([head]), CompareOptions(method="samples"))
    (p,) = c.pairs
    assert p.verdict is Verdict.SLOWER
    assert p.kernels == "fla kernel chunk_fwd_kernel_o: config num_warps 4->8"
    assert "fla kernel chunk_fwd_kernel_o: config num_warps 4->8" in markdown(c)


def test_block_sizes_are_named_and_unrecorded_sides_say_nothing():
    base, head = {"backend": "fla", "autotune": [choice(4)]}, {"backend": "fla", "autotune": [choice(4, BV="32")]}
    assert autotune_change(base, head) == "fla kernel chunk_fwd_kernel_o: config BV 64->32"
    assert autotune_change(base, base) is None
    assert autotune_change({"backend": "fla", "autotune": []}, head) is None  # an older row recorded nothing
    assert autotune_change({"backend": "fla", "autotune": float("nan")}, head) is None
