"""Correctness against the oracle: relative L2 error per output, and per-dtype tolerances.

Tolerances follow the libraries' own test suites: FlashQLA's tests allow 0.02 relative error in bf16;
FLA's use 0.005-0.035 depending on the tensor (gate and beta gradients are the loosest). Outputs are
compared in float64.
"""

from __future__ import annotations

import math

import torch

# dtype -> tensor -> max relative L2 error. "*" is the default for tensors not listed.
TOLERANCES: dict[str, dict[str, float]] = {
    "float64": {"*": 1e-9},
    "float32": {"*": 1e-4, "dg": 1e-3, "dbeta": 1e-3},
    "bfloat16": {"*": 0.02, "dg": 0.035, "dbeta": 0.035},
    "float16": {"*": 0.01, "dg": 0.02, "dbeta": 0.02},
}


def tolerance(dtype: str, tensor: str) -> float:
    table = TOLERANCES[dtype]
    return table.get(tensor, table["*"])


def rel_l2(got: torch.Tensor, ref: torch.Tensor) -> float:
    """||got - ref|| / ||ref|| in float64; inf on shape mismatch, nan if got is not finite."""
    if got.shape != ref.shape:
        return math.inf
    got64, ref64 = got.detach().double(), ref.detach().double().to(got.device)
    if not torch.isfinite(got64).all():
        return math.nan
    denom = ref64.norm().item()
    num = (got64 - ref64).norm().item()
    return num / denom if denom > 0 else num


def compare(got: dict[str, torch.Tensor], ref: dict[str, torch.Tensor], dtype: str) -> tuple[dict[str, float], str | None]:
    """Errors for every tensor both sides have, and the failure reason (None when all pass)."""
    errors: dict[str, float] = {}
    failures = []
    for name, r in ref.items():
        if name not in got:
            continue
        e = rel_l2(got[name], r)
        errors[name] = e
        tol = tolerance(dtype, name)
        if math.isnan(e):
            failures.append(f"{name} has NaN/Inf")
        elif not e <= tol:
            failures.append(f"{name} rel err {e:.3g} > {tol:g}")
    missing = [n for n in ("o", "ht") if n in ref and n not in got]
    if missing:
        failures.append("missing outputs: " + ", ".join(missing))
    return errors, ("; ".join(failures) or None)


def compare_lean(got: dict[str, torch.Tensor], ref: dict[str, torch.Tensor],
                 dtype: str) -> tuple[dict[str, float], str | None]:
    """`compare`, one tensor at a time, each dropped once compared (`got` and `ref` are emptied).

    For outputs too large to hold twice: at 1M tokens with h 16/16 an output is 2^31 elements (4 GiB in
    bf16) and `rel_l2` makes float64 copies of both sides (3 x 16 GiB), which would not fit next to all
    the other outputs at once. Same errors and verdict as compare.
    """
    errors: dict[str, float] = {}
    failures: list[str] = []
    missing: list[str] = []
    for name in list(ref):
        r = ref.pop(name)
        g = got.pop(name, None)
        if g is None:
            if name in ("o", "ht"):
                missing.append(name)
            continue
        e, failure = compare({name: g}, {name: r}, dtype)
        del g, r
        errors.update(e)
        if failure:
            failures.append(failure)
    got.clear()
    if missing:
        failures.append("missing outputs: " + ", ".join(missing))
    return errors, ("; ".join(failures) or None)
