"""The per-kernel explanation of a compared point (qlabench/analyze/compare/kernels.py) and where it shows."""

import json

import numpy as np
import pandas as pd

from qlabench.analyze.compare import CompareOptions, Verdict, compare_frames
from qlabench.analyze.compare.kernels import kernel_change
from qlabench.analyze.evidence.kernels import short_name
from qlabench.analyze.compare.render import markdown, to_json

FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float)"
# FLA fwd at TP8 as two leases of the H200 compiled it (results/h200 and results/h200-selfbench rows)
BASE = dict(kernels=("chunk_local_cumsum_scalar_kernel", "chunk_gated_delta_rule_fwd_kkt_solve_kernel",
                     FILL, "chunk_fwd_kernel_o"),
            kernel_dur_us=(2.0, 74.1, 1.0, 34.5), kernel_grid=("1024,1,1", "128,8,1", "128,1,1", "256,8,1"),
            kernel_block=("64,1,1", "128,1,1", "128,1,1", "128,1,1"))


def _with(**changes):
    return {**BASE, **changes}


def test_short_names_drop_namespaces_templates_and_arguments():
    assert short_name(FILL) == "vectorized_elementwise_kernel"
    assert short_name("chunk_fwd_kernel_o") == "chunk_fwd_kernel_o"
    assert short_name("void foo::bar(int)") == "bar"
    assert short_name("void at::native::(anonymous namespace)::reduce_kernel<512, 1>(float*)") == "reduce_kernel"


def test_an_autotuned_kernel_is_named_with_its_time_and_new_block():
    head = _with(kernel_dur_us=(2.0, 23.1, 1.0, 34.6), kernel_block=("64,1,1", "32,1,1", "128,1,1", "128,1,1"))
    assert kernel_change(BASE, head) == "chunk_gated_delta_rule_fwd_kkt_solve_kernel 74.1->23.1 us (block 128,1,1->32,1,1)"


def test_jitter_below_the_share_and_no_shape_change_says_nothing():
    head = _with(kernel_dur_us=(2.1, 75.0, 1.0, 35.0))  # 0.9 us of 111.6: under 5%
    assert kernel_change(BASE, head) is None
    assert kernel_change(BASE, BASE) is None


def test_a_shape_change_is_named_even_where_the_time_barely_moved():
    head = _with(kernel_grid=("1024,1,1", "128,8,1", "128,1,1", "512,4,1"))
    assert kernel_change(BASE, head) == "chunk_fwd_kernel_o grid 256,8,1->512,4,1"


def test_another_dispatch_path_lists_new_and_gone_kernels():
    head = dict(kernels=("chunk_local_cumsum_scalar_kernel", "tilelang_fwd_o"), kernel_dur_us=(2.0, 30.0),
                kernel_grid=("1024,1,1", "64,1,1"), kernel_block=("64,1,1", "256,1,1"))
    assert kernel_change(BASE, head) == ("new kernels: tilelang_fwd_o; gone: chunk_gated_delta_rule_fwd_kkt_solve_kernel, "
                                         "vectorized_elementwise_kernel, chunk_fwd_kernel_o")


def test_a_kernel_launched_twice_is_told_apart_by_occurrence():
    base = dict(kernels=("k", "k"), kernel_dur_us=(10.0, 10.0), kernel_grid=("1,1,1",) * 2, kernel_block=("32,1,1",) * 2)
    head = dict(base, kernel_dur_us=(10.0, 30.0))
    assert kernel_change(base, head) == "k#2 10->30 us"


def test_rows_without_a_breakdown_have_no_explanation():
    assert kernel_change({"kernels": ()}, BASE) is None
    assert kernel_change({"kernels": None}, {"kernels": float("nan")}) is None


def test_a_slower_point_carries_its_kernel_change_into_markdown_and_json(make_row):
    rng = np.random.default_rng(3)
    fast = 0.24 * (1 + 0.003 * rng.standard_normal(30))
    slow = 0.29 * (1 + 0.003 * rng.standard_normal(30))
    tuned = _with(kernel_dur_us=(2.0, 23.1, 1.0, 34.6), kernel_block=("64,1,1", "32,1,1", "128,1,1", "128,1,1"))
    base = pd.DataFrame([make_row(run_id="b", samples_ms=tuple(fast), median_ms=float(np.median(fast)),
                                  n_samples=30, **tuned).as_dict()])
    head = pd.DataFrame([make_row(run_id="h", samples_ms=tuple(slow), median_ms=float(np.median(slow)),
                                  n_samples=30, **BASE).as_dict()])
    c = compare_frames(base, head, CompareOptions(method="samples"))  # one run per side: per-sample method
    (p,) = c.pairs
    assert p.verdict is Verdict.SLOWER
    assert p.kernels == "chunk_gated_delta_rule_fwd_kkt_solve_kernel 23.1->74.1 us (block 32,1,1->128,1,1)"
    assert "kernels: chunk_gated_delta_rule_fwd_kkt_solve_kernel 23.1->74.1 us" in markdown(c)
    assert json.loads(to_json(c))["pairs"][0]["kernel_change"] == p.kernels


def test_long_lists_stay_one_line_with_a_count():
    head = dict(BASE, kernels=BASE["kernels"] + tuple(f"extra_{i}" for i in range(5)),
                kernel_dur_us=BASE["kernel_dur_us"] + (0.1,) * 5, kernel_grid=BASE["kernel_grid"] + ("1,1,1",) * 5,
                kernel_block=BASE["kernel_block"] + ("32,1,1",) * 5)
    assert kernel_change(BASE, head) == "new kernels: extra_0, extra_1, extra_2 +2 more"


def test_rows_from_before_the_shape_columns_show_no_false_reshape():
    # kernel_grid / kernel_block came after kernels: such rows read them back empty (or None)
    old = dict(kernels=BASE["kernels"], kernel_dur_us=BASE["kernel_dur_us"], kernel_grid=(), kernel_block=None)
    assert kernel_change(old, BASE) is None and kernel_change(BASE, old) is None
    half = dict(BASE, kernel_grid=(None, None, None, None))
    assert kernel_change(half, BASE) is None


def test_the_drift_scale_applies_to_kernel_times_as_to_samples():
    head = _with(kernel_dur_us=tuple(x * 1.2 for x in BASE["kernel_dur_us"]))  # everything 20% slower
    assert kernel_change(BASE, head).startswith("chunk_gated_delta_rule_fwd_kkt_solve_kernel 74.1->88.92 us")
    assert kernel_change(BASE, head, head_scale=1.2) is None  # nothing moved relative to the shift


def test_templates_sharing_a_short_name_are_numbered():
    other = "void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<bf16>>(int, bf16)"
    base = dict(kernels=(FILL, other), kernel_dur_us=(1.0, 10.0), kernel_grid=("1,1,1",) * 2,
                kernel_block=("128,1,1",) * 2)
    head = dict(base, kernel_dur_us=(1.0, 20.0))
    assert kernel_change(base, head) == "vectorized_elementwise_kernel#2 10->20 us"


def test_cute_dsl_names_read_as_their_class_or_their_head():
    """FlashInfer 0.7's kernels as launched on the H200: 180 characters with no delimiter."""
    cp = ("kernel_cutlass_kernel_flashinfergdn_kernelsdelta_rule_dsldelta_rule_cp_sm90CPDeltaRuleFixupSimtSm90_object_at_"
          "_tensorptrf32gmemalign128oi641i64i64_tensorptrf32gmemalign128oi641i64i64_tens_0")
    fused = ("kernel_cutlass_kernel_flashinfergdn_kernelsdelta_rule_dsldelta_rule_sm90_FullyFusedDeltaRuleSm90_object_"
             "at__tensorptrf32gmemalign16o1_tensorptrf32gmemalign16o1_CopyAtom_ThrID10_TVLayoutSr_0")
    decode = ("kernel_cutlass_gdn_decode_kernel_small_batch_pretranspose_TiledCopy_TilerMN411281_TVLayouttiled32441614_"
              "CopyAtom_ThrID10_TVLayoutSrc1401_TVLayoutDst1401_Valuetypef32_tensorptrf32gmemalign_0")
    assert short_name(cp) == "CPDeltaRuleFixupSimtSm90.kernel"
    assert short_name(fused) == "FullyFusedDeltaRuleSm90.kernel"
    assert short_name(decode).startswith("gdn_decode_kernel_small_batch_pretranspose") and len(short_name(decode)) <= 60
