"""The numerics tables: each backend's error against the reference, per tensor, as T and the gate regime
vary; the worst cases; every point outside tolerance. Computed from stored rows (`err_*`, `oracle`), no
rendering (numerics_page.py draws and writes them).

An error is read against its tolerance (core/tolerances.py): `ratio` = error / tolerance(dtype, tensor),
`margin` = its inverse. A row that is not ok but recorded errors (incorrect) is counted; a skipped row
(a backend refusing a head dim, say) has no error and is listed apart with its reason.
"""

from __future__ import annotations


import pandas as pd

from qlabench.analyze.evidence.accuracy import check_dtype
from qlabench.analyze.kit.labels import gate_label_of, heads_label, layout_label
from qlabench.core.result import CHECKED_TENSORS
from qlabench.core.tolerances import TOLERANCES, error_ratio, tolerance
from qlabench.store.keys import key_value

FWD_TENSORS = ("o", "ht")
GRAD_TENSORS = tuple(t for t in CHECKED_TENSORS if t not in FWD_TENSORS)


def long_errors(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (result row, tensor with an error): the point's labels, error, tolerance, ratio."""
    recs = []
    for r in rows.to_dict("records"):
        # the dtype the check applied: a serving row's state dtype where it is the less precise (accuracy.py)
        tol_dtype = check_dtype(r)
        if tol_dtype not in TOLERANCES:
            continue
        base = {"backend": r["backend"], "mode": r["mode"], "dtype": r.get("dtype"), "heads": heads_label(r),
                "K": int(r["K"]), "V": int(r["V"]), "layout": r["layout"], "sequences": layout_label(r),
                "total_tokens": int(r["total_tokens"]), "gate": gate_label_of(r), "status": r["status"],
                "reference": str(r.get("oracle") or "").split(" ")[0] or None}
        for t in CHECKED_TENSORS:
            e = key_value(r.get(f"err_{t}"))
            if e is None:
                continue
            tol = tolerance(tol_dtype, t)
            recs.append({**base, "tensor": t, "error": float(e), "tolerance": tol,
                         "ratio": error_ratio(float(e), tol_dtype, t)})
    cols = ["backend", "mode", "dtype", "heads", "K", "V", "layout", "sequences", "total_tokens", "gate", "status",
            "reference", "tensor", "error", "tolerance", "ratio"]
    return pd.DataFrame(recs, columns=cols)


def base_regime(errs: pd.DataFrame) -> dict:
    """The configuration the T sweep runs at: (dtype, heads, K, gate) with the most distinct token counts."""
    if errs.empty:
        return {}
    n = errs.groupby(["dtype", "heads", "K", "gate"])["total_tokens"].nunique()
    dtype, heads, K, gate = n.idxmax()
    return {"dtype": dtype, "heads": heads, "K": K, "gate": gate}


def _select(errs: pd.DataFrame, where: dict) -> pd.DataFrame:
    for k, v in where.items():
        errs = errs[errs[k] == v]
    return errs


def error_vs_t(errs: pd.DataFrame) -> pd.DataFrame:
    """In the base regime, one sequence per call: error per (mode, backend, tensor) and T, T as columns."""
    d = _select(errs, base_regime(errs))
    d = d[d["layout"] == "dense"]
    if d.empty:
        return pd.DataFrame()
    t = d.pivot_table(index=["mode", "tensor", "backend"], columns="total_tokens", values="error", aggfunc="max")
    t.columns = [f"T={c // 1024}k" if c % 1024 == 0 else f"T={c}" for c in t.columns]
    return _tensor_order(t.reset_index())


def error_vs_gate(errs: pd.DataFrame) -> pd.DataFrame:
    """At the token count with the most gate regimes (base dtype, heads and K, one sequence): error per
    (mode, tensor, backend), a column per gate regime."""
    base = base_regime(errs)
    d = _select(errs, {k: v for k, v in base.items() if k != "gate"})
    d = d[d["layout"] == "dense"]
    if d.empty or d["gate"].nunique() < 2:
        return pd.DataFrame()
    T = d.groupby("total_tokens")["gate"].nunique().idxmax()
    d = d[d["total_tokens"] == T]
    t = d.pivot_table(index=["mode", "tensor", "backend"], columns="gate", values="error", aggfunc="max")
    t.columns = [str(c) for c in t.columns]
    return _tensor_order(t.reset_index()).assign(T=int(T))


def _tensor_order(t: pd.DataFrame) -> pd.DataFrame:
    order = {n: i for i, n in enumerate(CHECKED_TENSORS)}
    return t.sort_values(["mode", "tensor", "backend"], key=lambda s: s.map(order) if s.name == "tensor" else s,
                         kind="stable").reset_index(drop=True)


def worst_per_tensor(errs: pd.DataFrame) -> pd.DataFrame:
    """Per tensor, the point where its error is closest to (or over) its tolerance."""
    if errs.empty:
        return errs
    idx = errs.groupby("tensor")["ratio"].idxmax()
    out = errs.loc[idx].assign(margin=lambda d: 1 / d["ratio"])
    return _tensor_order(out)[["tensor", "error", "tolerance", "margin", "backend", "mode", "dtype", "heads", "K",
                               "sequences", "gate"]]


def worst_points(errs: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The n points (backend, mode, point) whose worst tensor is closest to its tolerance."""
    if errs.empty:
        return errs
    keys = ["backend", "mode", "dtype", "heads", "K", "sequences", "gate"]
    worst = errs.loc[errs.groupby(keys)["ratio"].idxmax()].sort_values("ratio", ascending=False).head(n)
    return worst.assign(margin=1 / worst["ratio"])[keys + ["tensor", "error", "tolerance", "margin"]]


def over_tolerance(errs: pd.DataFrame) -> pd.DataFrame:
    """Every (point, tensor) whose error exceeds its tolerance (NaN/Inf included)."""
    return errs[~(errs["ratio"] <= 1.0)].sort_values("ratio", ascending=False).reset_index(drop=True)


def refused(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows a backend refused or could not run (skipped / error), with their reasons, one per reason."""
    d = rows[rows["status"].isin(["skipped", "error"])]
    if d.empty:
        return pd.DataFrame(columns=["backend", "status", "points", "K", "reason"])
    return (d.groupby(["backend", "status", "reason"]).agg(points=("mode", "size"),
                                                           K=("K", lambda s: ", ".join(map(str, sorted(set(s))))))
            .reset_index()[["backend", "status", "points", "K", "reason"]])


def verdict(errs: pd.DataFrame) -> str:
    """One sentence: the points outside tolerance, or none and the smallest margin."""
    if errs.empty:
        return "No errors recorded."
    over = over_tolerance(errs)
    if not over.empty:
        pts = over.groupby(["backend", "mode", "sequences", "gate", "dtype", "K"]).ngroups
        return f"{pts} point(s) outside tolerance ({len(over)} tensor errors); every one is listed below."
    w = errs.loc[errs["ratio"].idxmax()]
    return (f"No point is outside tolerance. The smallest margin is {1 / w['ratio']:.1f}x: {w['backend']} "
            f"{w['mode']} {w['tensor']} {w['error']:.3g} against {w['tolerance']:g} ({w['dtype']}, {w['heads']}, "
            f"K = {w['K']}, {w['sequences']}, gate {w['gate']}).")
