"""The library versions the results were measured with, and the same points measured on two stacks.

A stack is the version of the library a backend runs (see prepare.stack_label); rows of two stacks on
one point (say flash-qla 0.1.2 and 0.1.3) are compared point by point, and where a published value is
missed by one stack and met by the other, the version explains that gap.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.study.explain import within
from qlabench.core.libraries import package_name, version_columns, version_key
from qlabench.analyze.data.published_tables import PublishedTable, published_table

VERSION_COLUMNS = version_columns()


def versions_table(rows: pd.DataFrame, table: PublishedTable | None = None) -> pd.DataFrame:
    """One row per distinct combination of recorded versions (and device): rows, backends, runs;
    the published table's stack last, for reference (None: the H200 table's)."""
    table = table or published_table()
    cols = [c for c in VERSION_COLUMNS if c in rows.columns and rows[c].notna().any()]
    if rows.empty:
        return pd.DataFrame(columns=["device"] + [package_name(c) for c in cols] + ["rows", "backends", "runs"])
    d = rows.assign(**{c: rows[c].astype(object).where(rows[c].notna(), "-") for c in cols + ["device"]})
    out = (d.groupby(["device"] + cols, sort=True, dropna=False)
           .agg(rows=("backend", "size"), backends=("backend", lambda s: ", ".join(sorted(set(map(str, s))))),
                runs=("run_id", "nunique"))
           .reset_index())
    pub = {"device": f"{table.gpu or table.name} (published)", **{c: table.versions.get(c, "-") for c in cols},
           "rows": None, "backends": "flash_qla, fla, flashinfer", "runs": None}
    out = pd.concat([out, pd.DataFrame([pub])], ignore_index=True)
    return out.rename(columns={c: package_name(c) for c in cols})


def stack_comparison(rows: pd.DataFrame, comparison_all: pd.DataFrame, tolerance: float) -> dict[str, pd.DataFrame]:
    """Per backend measured on two or more stacks: one row per point measured ok on at least two of them.

    Columns: mode, heads, sequences, gate_label, `<stack> ms` for each stack (newest first), `change` (newest /
    oldest), and where the point is in the published table, published_ms and `explains`: True when the
    newest stack misses the published value (beyond the tolerance) and another stack meets it.
    """
    ok = rows[rows["status"] == "ok"]
    out = {}
    for backend, grp in ok.groupby("backend", sort=True):
        version_of = dict(zip(grp["stack"], grp["lib_version"]))
        stacks = sorted(version_of, key=lambda s: (version_key(version_of[s]), s), reverse=True)
        if len(stacks) < 2:
            continue
        wide = grp.pivot_table(index="study_key", columns="stack", values="median_ms", aggfunc="first")
        wide = wide[wide.notna().sum(axis=1) >= 2]
        if wide.empty:
            continue
        labels = grp.drop_duplicates("study_key").set_index("study_key")[["mode", "heads", "sequences", "gate_label",
                                                                           "total_tokens"]]
        t = labels.loc[wide.index].join(wide[[s for s in stacks if s in wide.columns]].add_suffix(" ms"))
        newest, oldest = f"{stacks[0]} ms", f"{stacks[-1]} ms"
        t["change"] = t[newest] / t[oldest] if newest in t and oldest in t else float("nan")
        pub = _published_by_point(comparison_all, backend)
        t["published_ms"] = [pub.get(k, (None, {}))[0] for k in t.index]
        t["explains"] = [_explains(pub.get(k), stacks[0], tolerance) for k in t.index]
        out[str(backend)] = (t.sort_values(["mode", "total_tokens", "heads"], kind="stable")
                             .drop(columns="total_tokens").reset_index(drop=True))
    return out


def _published_by_point(comparison_all: pd.DataFrame, backend: str) -> dict[str, tuple[float, dict[str, float]]]:
    """study_key -> (published_ms, {stack: ratio}) for the backend's ok values matched to the table."""
    if comparison_all.empty:
        return {}
    d = comparison_all[(comparison_all["backend"] == backend) & (comparison_all["status"] == "ok")]
    out: dict[str, tuple[float, dict[str, float]]] = {}
    for r in d.to_dict("records"):
        pub_ms, ratios = out.setdefault(r["study_key"], (float(r["published_ms"]), {}))
        ratios[r["stack"]] = float(r["ratio"])
    return out


def _explains(entry, newest: str, tolerance: float) -> bool | None:
    if entry is None:
        return None
    ratios = entry[1]
    if newest not in ratios:
        return None
    return not within(ratios[newest], tolerance) and any(
        within(r, tolerance) for s, r in ratios.items() if s != newest)
