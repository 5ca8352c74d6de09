"""Correctness against a reference: relative L2 error per output, and per-dtype tolerances.

A point is checked against one of two references (`[check] reference`, core/spec.py): `oracle`, the
fp32 token-by-token recurrence on a reduced problem of the point's layout (at most `oracle_max_tokens`),
or `fp64-full`, the float64 chunked form at the point's real size (backends/reference/fp64_full.py).
Both are held to the same tolerances; outputs are compared in float64.

Where the tolerances come from: the libraries' own test suites, which compare with an fp32 reference
at T <= 1000 tokens. FLA's chunk tests (fp16) allow 0.005 on o and ht, 0.007-0.008 on dq, dk, dv and
dh0, 0.015-0.02 on dbeta and dg; FlashQLA's allow 0.02 in bf16. The table keeps one number per
(dtype, tensor), the looser of the two where they differ, and 1e-4 / 1e-9 for fp32 / fp64 kernels.

What they mean at long T (docs/NUMERICS.md): against float64 the reference's own error (~1e-13) is
gone and the error is the kernel's alone. The state is a decay-weighted sum over a window of past
tokens, and each token's rounding adds to it: about 1 / |g| tokens under decay, up to all T where
g = 0 (zero-gate heads, weak decay), bounded then only by the delta rule's own forgetting
(I - beta k k^T, about K / beta tokens, long when beta is near 0). Random roundings add as the square
root of the window, a systematic one (a rounded cumsum, a dropped low-order part) linearly. The
tolerance does not grow with T on purpose: a user at 128k tokens gets no looser bar than the
library's test at 300, so a kernel inside it at 128k with zero-gate heads is inside it everywhere.
"""

from __future__ import annotations

import math

import torch

from qlabench.core.tolerances import TOLERANCES, tolerance  # noqa: F401 (in the core: analyze reads it)


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
    errors = {name: rel_l2(got[name], r) for name, r in ref.items() if name in got}
    missing = [n for n in ("o", "ht", "pool") if n in ref and n not in got]
    return errors, failure_reason(errors, dtype, missing)


def failure_reason(errors: dict[str, float], dtype: str, missing: list[str] = ()) -> str | None:
    """Why these errors fail the dtype's tolerances (NaN/Inf, over tolerance, missing outputs), or None."""
    failures = []
    for name, e in errors.items():
        tol = tolerance(dtype, name)
        if math.isnan(e):
            failures.append(f"{name} has NaN/Inf")
        elif not e <= tol:
            failures.append(f"{name} rel err {e:.3g} > {tol:g}")
    if missing:
        failures.append("missing outputs: " + ", ".join(missing))
    return "; ".join(failures) or None


class RelL2Sums:
    """`rel_l2` of tensors compared a piece at a time (e.g. a block of heads): the squared norms of the
    difference and of the reference are summed in float64, so any split of a tensor into pieces gives
    the error of the whole, to round-off. A piece that is not finite makes its tensor's error NaN."""

    def __init__(self) -> None:
        self._num: dict[str, float] = {}
        self._den: dict[str, float] = {}

    def add(self, name: str, got: torch.Tensor, ref: torch.Tensor) -> None:
        if got.shape != ref.shape:
            self.set(name, math.inf)
            return
        got64, ref64 = got.detach().double(), ref.detach().double().to(got.device)
        num = math.nan if not torch.isfinite(got64).all() else (got64 - ref64).square().sum().item()
        self._num[name] = self._num.get(name, 0.0) + num
        self._den[name] = self._den.get(name, 0.0) + ref64.square().sum().item()

    def set(self, name: str, error: float) -> None:
        """Fix a tensor's error outright (inf: its shape is wrong, whatever its pieces hold)."""
        self._num[name], self._den[name] = error, 1.0

    def errors(self) -> dict[str, float]:
        out = {}
        for name, num in self._num.items():
            den = self._den[name]
            out[name] = math.sqrt(num) / math.sqrt(den) if den > 0 else math.sqrt(num)
        return out


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
            if name in ("o", "ht", "pool"):
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
