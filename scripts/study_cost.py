"""What the FlashQLA study costs, from the rows it wrote: each phase of a point per backend and run (the rows'
`phases_s`, `first_call_s`, `compile_s`, `sampling_s`), the suite's size, and what a sweep of the whole suite
would spend inside its points at those per-point costs (docs/BENCHMARKS.md, "What the study costs, cold to
report").

    python scripts/study_cost.py                 # results/h200-current/flashqla-study, qlabench/suites/flashqla-study.toml
    python scripts/study_cost.py --results DIR --suite NAME --run RUN_ID

Every figure is read or summed from the rows; the projection multiplies the suite's points by the mean seconds
one point of that backend spent inside its run (`--run`: the run whose regime the suite asks for). Outside the
points (worker start-up, the environment capture, the device's peaks, writing) and the compile of a head
configuration a warm-up did ahead are not in the rows, and not in these figures.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys

import pandas as pd

from qlabench.analyze.evidence.costs import in_point_s, phase_s, point_costs
from qlabench.core.backend_facts import facts_of
from qlabench.core.spec import load_suite, resolve_suite_path
from qlabench.run.warmup import head_groups
from qlabench.store.files import read_results

RESULTS = "results/h200-current/flashqla-study"
SUITE = "flashqla-study"
RUN = "20261201T180105Z-1397cf"  # the sustained run: the suite's own regime


def tuned_for(rows: pd.DataFrame) -> str:
    """'point 53', 'point-cached 50, point 3': where the rows' autotune choices came from (docs/METRICS.md)."""
    def one(raw):
        try:
            return json.loads(raw).get("autotune_tuned_for") if isinstance(raw, str) and raw else None
        except ValueError:
            return None
    counts = collections.Counter(v for v in rows["extra_json"].map(one) if v)
    return ", ".join(f"{k} {n}" for k, n in counts.most_common())


def per_backend(rows: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (run, backend), g in rows.groupby(["run_id", "backend"], sort=True):
        opens = g[g["compile_s"].notna()]  # the first point of a compile group in its worker
        rest = g[g["compile_s"].isna()]
        out.append({
            "run": run[-6:], "backend": backend, "points": len(g),
            "groups opened": len(opens), "compile_s (sum)": opens["compile_s"].sum(),
            "first call, other points (median s)": rest["first_call_s"].median(),
            "first calls (sum s)": g["first_call_s"].sum(),
            "check (median s)": phase_s(g, "check").median(),
            "sampling (median s)": g["sampling_s"].median(),
            "in point (mean s)": in_point_s(g).mean(),
            "in points (sum s)": in_point_s(g).sum(),
            "tuned for": tuned_for(g),
        })
    return pd.DataFrame(out)


def suite_size(suite_name: str) -> tuple[pd.DataFrame, int]:
    suite = load_suite(str(resolve_suite_path(suite_name)))
    counts = collections.Counter((p.backend, p.mode) for p in suite.points)
    table = pd.DataFrame([{"backend": b, "mode": m, "points": n} for (b, m), n in sorted(counts.items())])
    return table, len(head_groups(suite.points))


def projection(size: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """The suite's points of each backend times the mean seconds one of its points took in the run."""
    mean = costs.set_index("backend")["in point (mean s)"]
    pts = size.groupby("backend")["points"].sum()
    out = pd.DataFrame({"suite points": pts, "mean s in a point (run)": mean.reindex(pts.index)})
    out["projected s in points"] = out["suite points"] * out["mean s in a point (run)"]
    return out.reset_index()


def tuning_share(proj: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """For each backend whose library autotunes: its median first call in the run (a point that opened no
    compile group: the per-point tuning, `[run] autotune`), and that over the suite's points of it, the part
    of the projection a re-run that installs the stored tunings (`point-cached`) does not repeat."""
    tunes = [b for b in proj["backend"] if facts_of(b).autotune_modules]
    first = costs.set_index("backend")["first call, other points (median s)"]
    out = proj[proj["backend"].isin(tunes)][["backend", "suite points"]].copy()
    out["median first call (run)"] = out["backend"].map(first)
    out["projected tuning s"] = out["suite points"] * out["median first call (run)"]
    return out


def measured_suite(rows: pd.DataFrame, suite_name: str) -> tuple[str, pd.DataFrame]:
    """The whole suite as these rows measured it (analyze/evidence/costs.py, what `run sweep --dry-run` prints): each
    point at the seconds its newest ok row spent inside it, a point without a row at the median of its backend's
    and mode's rows; the GPU model with most of the points' own rows."""
    suite = load_suite(str(resolve_suite_path(suite_name)))
    priced = point_costs(suite.points, rows)[0]
    return priced.device, pd.DataFrame([{
        "backend": p.backend, "mode": p.mode, "suite points": p.points, "own row": p.own, "at median": p.at_median,
        "not priced": p.unknown, "s in points": p.seconds} for p in priced.parts])


def md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    fmt = [lambda v: "" if pd.isna(v) else (f"{v:.3f}" if isinstance(v, float) else str(v))]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt[0](v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--suite", default=SUITE)
    ap.add_argument("--run", default=RUN, help="the run whose per-point costs the projection uses")
    a = ap.parse_args()
    rows = read_results([a.results])
    rows = rows[rows["status"] == "ok"]
    costs = per_backend(rows)
    print(f"## Per backend and run ({a.results}, ok rows)\n\n{md(costs)}\n")
    by_run = rows.assign(s=in_point_s(rows)).groupby("run_id")["s"].agg(["count", "sum"])
    print("in points per run: " + "; ".join(f"{r[-6:]} {int(c)} points {t:.1f} s" for r, (c, t) in by_run.iterrows())
          + "\n")
    size, groups = suite_size(a.suite)
    print(f"## Suite {a.suite}: {int(size['points'].sum())} points, {groups} warm-up groups "
          f"(head configuration x dims x dtype x mode x backend)\n\n{md(size)}\n")
    run = costs[costs["run"] == a.run[-6:]]
    if run.empty:
        print(f"no rows of run {a.run}", file=sys.stderr)
        return 1
    proj = projection(size, run)
    print(f"## Projected seconds inside the points of the whole suite, at run {a.run}'s per-point costs\n\n"
          f"{md(proj)}\n\ntotal: {proj['projected s in points'].sum():.0f} s over "
          f"{int(proj['suite points'].sum())} points (backends without a row in the run: blank)\n")
    tuning = tuning_share(proj, run)
    print(f"## Of which per-point tuning (autotuning backends' first calls)\n\n{md(tuning)}\n\n"
          f"total: {tuning['projected tuning s'].sum():.0f} s\n")
    device, whole = measured_suite(rows, a.suite)
    print(f"## The whole suite as measured on {device}: each point at the seconds its row spent inside it\n\n"
          f"{md(whole)}\n\ntotal: {int(whole['own row'].sum())} of {int(whole['suite points'].sum())} points at "
          f"their own row's seconds, {int(whole['at median'].sum())} at their backend's and mode's median, "
          f"{int(whole['not priced'].sum())} not priced: {whole['s in points'].sum():.0f} s inside the points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
