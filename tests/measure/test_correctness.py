"""Correctness verdicts: relative L2 errors against the oracle, per-dtype tolerances, failure reasons."""

from __future__ import annotations

import math

import pytest
import torch

from qlabench.measure.correctness import (
    TOLERANCES, RelL2Sums, compare, compare_lean, failure_reason, rel_l2, tolerance,
)


def ref_outputs(seed=0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {"o": torch.randn(2, 8, 4, generator=gen), "ht": torch.randn(2, 4, 4, generator=gen)}


def perturbed(ref: dict, rel_err: float, seed=1) -> dict:
    """Copies of `ref` with a perturbation of exactly `rel_err` relative L2 size."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for n, r in ref.items():
        noise = torch.randn(r.shape, generator=gen, dtype=torch.float64)
        out[n] = r.double() + noise * (rel_err * r.double().norm() / noise.norm())
    return out


def test_rel_l2():
    ref = torch.tensor([3.0, 4.0])
    assert rel_l2(ref.clone(), ref) == 0.0
    assert rel_l2(torch.tensor([3.0, 4.5]), ref) == pytest.approx(0.1)
    assert rel_l2(torch.zeros(3), torch.zeros(3)) == 0.0  # zero reference: absolute error
    assert rel_l2(torch.ones(3), torch.ones(2)) == math.inf
    assert math.isnan(rel_l2(torch.tensor([float("nan"), 1.0]), ref))
    assert math.isnan(rel_l2(torch.tensor([float("inf"), 1.0]), ref))


def test_identical_outputs_pass():
    ref = ref_outputs()
    errors, failure = compare({n: t.clone() for n, t in ref.items()}, ref, "float32")
    assert failure is None
    assert errors == {"o": 0.0, "ht": 0.0}


def test_nan_output_is_a_failure_with_a_reason():
    ref = ref_outputs()
    got = {n: t.clone() for n, t in ref.items()}
    got["o"][0, 0, 0] = float("nan")
    errors, failure = compare(got, ref, "bfloat16")
    assert math.isnan(errors["o"]) and errors["ht"] == 0.0
    assert failure == "o has NaN/Inf"


@pytest.mark.parametrize("dtype", list(TOLERANCES))
def test_error_above_tolerance_fails_and_below_passes(dtype):
    ref = ref_outputs()
    tol = tolerance(dtype, "o")
    _, ok = compare(perturbed(ref, tol * 0.5), ref, dtype)
    assert ok is None
    errors, failure = compare(perturbed(ref, tol * 2), ref, dtype)
    assert errors["o"] == pytest.approx(tol * 2, rel=1e-6)
    assert failure is not None and "o rel err" in failure and "ht rel err" in failure
    assert f"> {tol:g}" in failure


def test_tolerances_are_per_dtype_and_per_tensor():
    order = [tolerance(dt, "o") for dt in ("float64", "float32", "float16", "bfloat16")]
    assert order == sorted(order) and len(set(order)) == 4
    assert tolerance("bfloat16", "dg") > tolerance("bfloat16", "o")
    assert tolerance("float32", "dbeta") > tolerance("float32", "dq")
    # the same error passes in bf16 and fails in fp32
    ref = ref_outputs()
    got = perturbed(ref, 0.01)
    assert compare(got, ref, "bfloat16")[1] is None
    assert compare(got, ref, "float32")[1] is not None


def test_gradient_tolerances_apply_by_name():
    ref = {"dg": torch.randn(64, generator=torch.Generator().manual_seed(3))}
    got = perturbed(ref, 0.03)
    assert compare(got, ref, "bfloat16")[1] is None  # dg allows 0.035 in bf16
    assert compare({"dq": got["dg"]}, {"dq": ref["dg"]}, "bfloat16")[1] is not None  # dq allows 0.02


def test_missing_outputs_fail_and_extra_ones_are_ignored():
    ref = ref_outputs()
    errors, failure = compare({"o": ref["o"].clone(), "dq": torch.zeros(1)}, ref, "float32")
    assert errors == {"o": 0.0}
    assert failure == "missing outputs: ht"


def test_wrong_shape_fails():
    ref = ref_outputs()
    got = {"o": ref["o"][:, :4].clone(), "ht": ref["ht"].clone()}
    errors, failure = compare(got, ref, "float32")
    assert errors["o"] == math.inf
    assert failure.startswith("o rel err inf")


def test_compare_lean_matches_compare():
    gen = torch.Generator().manual_seed(0)
    ref = {n: torch.randn(4, 8, generator=gen) for n in ("o", "ht", "dq", "dg")}
    got = {n: t + 0.03 * torch.randn(4, 8, generator=gen) for n, t in ref.items()}
    got["dg"] = ref["dg"] + 0.01 * torch.randn(4, 8, generator=gen)
    del got["ht"]
    want = compare(dict(got), dict(ref), "bfloat16")
    g2, r2 = dict(got), dict(ref)
    errors, failure = compare_lean(g2, r2, "bfloat16")
    assert errors == want[0] and g2 == {} and r2 == {}
    assert sorted(failure.split("; ")) == sorted(want[1].split("; "))
    assert "missing outputs: ht" in failure and "o rel err" in failure and "dg" not in failure
    ok = {n: t.clone() for n, t in ref.items()}
    assert compare_lean(ok, dict(ref), "bfloat16")[1] is None


# -- a tensor compared piece by piece (the fp64-full check's head blocks) ----------------------------------


@pytest.mark.parametrize("pieces", [1, 2, 3, 8])
def test_summed_pieces_give_the_error_of_the_whole(pieces):
    ref = ref_outputs(seed=3)
    got = perturbed(ref, 0.01, seed=4)
    sums = RelL2Sums()
    for name, r in ref.items():
        for gp, rp in zip(got[name].tensor_split(pieces, dim=1), r.tensor_split(pieces, dim=1), strict=True):
            sums.add(name, gp, rp)
    want, _ = compare(got, ref, "bfloat16")
    assert sums.errors() == pytest.approx(want, rel=1e-12)


def test_a_non_finite_piece_makes_the_tensor_nan_and_a_wrong_shape_inf():
    ref = ref_outputs()
    got = perturbed(ref, 0.001)
    sums = RelL2Sums()
    bad = got["o"][:, :4].clone()
    bad[0, 0, 0] = math.inf
    sums.add("o", bad, ref["o"][:, :4])
    sums.add("o", got["o"][:, 4:], ref["o"][:, 4:])
    sums.add("ht", got["ht"][:1], ref["ht"][:1])
    sums.add("ht", got["ht"][1:, :2], ref["ht"][1:])
    errors = sums.errors()
    assert math.isnan(errors["o"]) and errors["ht"] == math.inf
    assert failure_reason(errors, "bfloat16") == "o has NaN/Inf; ht rel err inf > 0.02"


def test_a_zero_reference_gives_the_absolute_error_as_rel_l2_does():
    ref, got = torch.zeros(3, 4), torch.full((3, 4), 0.5)
    sums = RelL2Sums()
    sums.add("o", got, ref)
    assert sums.errors()["o"] == pytest.approx(rel_l2(got, ref))
