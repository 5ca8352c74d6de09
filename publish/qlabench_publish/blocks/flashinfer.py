"""FlashInfer 0.7's own CP decision against `use_cp=False`, and FlashInfer against FlashQLA, from one run.

    <!-- qlabench:block flashinfer-cp suite=flashqla-study gpu=H200 -->
    <!-- qlabench:block library-vs heads=2/8 backends=flash_qla,flashinfer,flashinfer-nocp suite=flashqla-study -->

No ratio divides times of two runs: `library-vs` is one run, the newest of the current evidence (of `suite`, when
given) that measured every backend it shows at its heads; `flashinfer-cp` takes, for each head configuration,
the newest run that measured both FlashInfer settings there (a row of the table is one run, named in its run
column), so it covers every head configuration the suite's current runs hold. A time is bold where it is faster than the other beyond both rows' measured
noise (analyze/kit/ties.py, the one tie rule); "CP" marks a FlashInfer call that split (its row's `flashinfer_cp`).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from qlabench_publish.blocks.context import BlockContext
from qlabench_publish.blocks.params import heads_param
from qlabench.analyze.answer.answer import of_gpu
from qlabench.analyze.kit.ties import faster_beyond_noise
from qlabench.core.errors import ConfigError
from qlabench.core.text import md_code
from qlabench.core.versions import READ, versions_of

AUTO, NOCP = "flashinfer", "flashinfer-nocp"


def _lens(v) -> tuple[int, ...]:
    return tuple(int(x) for x in v)


def _layout(lens: tuple[int, ...]) -> str:
    return f"{len(lens)} x {lens[0]}" if len(set(lens)) == 1 else "+".join(map(str, lens))


def _split(row) -> bool | None:
    try:
        return json.loads(row.get("extra_json") or "{}").get("flashinfer_cp")
    except (TypeError, ValueError):
        return None


def _candidates(rows: pd.DataFrame, backends: tuple[str, ...], suite: str | None) -> pd.DataFrame:
    d = rows[(rows["status"] == "ok") & (rows["mode"] == "fwd") & rows["backend"].isin(backends)]
    if suite:
        d = d[d["suite"] == suite]
    return d


def one_run(rows: pd.DataFrame, backends: tuple[str, ...], heads: tuple[int, int] | None = None,
            suite: str | None = None) -> pd.DataFrame:
    """The ok forward rows of the run holding every one of `backends` on the most calls, the newest of those (at
    `heads`, of `suite`, when given)."""
    d = _candidates(rows, backends, suite)
    if heads:
        d = d[(d["h_qk"] == heads[0]) & (d["h_v"] == heads[1])]
    chosen = _widest_run(d, backends)
    if chosen is None:
        raise ConfigError(f"no run of the current evidence measured {', '.join(backends)}"
                          + (f" at {heads[0]}/{heads[1]}" if heads else "") + (f" in suite {suite}" if suite else ""))
    return d[d["run_id"] == chosen]


def _widest_run(d: pd.DataFrame, backends: tuple[str, ...]) -> str | None:
    """Of the runs in `d` that measured every one of `backends`, the one holding the most calls (sequence layouts)
    that every one of them measured, the newest of those: a run of a few calls made for one answer must not
    shrink a table of every layout to its own few. None where no run measured them all."""
    best, key = None, None
    for run, g in d.groupby("run_id"):
        if not set(backends) <= set(g["backend"]):
            continue
        calls = set.intersection(*(set(g[g["backend"] == b]["seqlens"].map(tuple)) for b in backends))
        k = (len(calls), str(g["timestamp"].max()))
        if key is None or k > key:
            best, key = str(run), k
    return best


def _cell(a: float, b: float, *noise) -> tuple[str, str]:
    fa, fb = f"{a:.3f}", f"{b:.3f}"
    if faster_beyond_noise(a, b, *noise):
        fa = f"**{fa}**"
    elif faster_beyond_noise(b, a, *noise):
        fb = f"**{fb}**"
    return fa, fb


def newest_run_per_heads(rows: pd.DataFrame, backends: tuple[str, ...], suite: str | None = None) -> pd.DataFrame:
    """For each head configuration, the ok forward rows of the run that measured every one of `backends` there on
    the most calls, the newest of those (of `suite`, when given): each head configuration's rows come from one
    run."""
    d = _candidates(rows, backends, suite)
    keep = []
    for _, at in d.groupby(["h_qk", "h_v"], sort=False):
        chosen = _widest_run(at, backends)
        if chosen is not None:
            keep.append(at[at["run_id"] == chosen])
    if not keep:
        raise ConfigError(f"no run of the current evidence measured {', '.join(backends)}"
                          + (f" in suite {suite}" if suite else ""))
    return pd.concat(keep)


def flashinfer_cp_block(ctx: BlockContext, suite: str | None = None, gpu: str | None = None) -> str:
    """`gpu`: the runs of that GPU model only (as `advise --gpu`): a head configuration measured on one model
    alone must not sit in a table of another's; None: any, each row naming its run and the header the models."""
    d = newest_run_per_heads(ctx.rows if gpu is None else of_gpu(ctx.rows, gpu)[0], (AUTO, NOCP), suite)
    d = d.assign(_lens=d["seqlens"].map(_lens))
    runs = list(dict.fromkeys(d.sort_values("timestamp", kind="stable")["run_id"].astype(str)))
    recorded = {versions_of(r).get("flashinfer") for r in d[[c for c in READ if c in d]].to_dict("records")}
    versions = sorted(v for v in recorded if v) or ["not recorded"]
    layouts = list(dict.fromkeys(d.sort_values("total_tokens", ascending=False, kind="stable")["_lens"]))
    heads = sorted({(int(a), int(b)) for a, b in zip(d["h_qk"], d["h_v"])}, key=lambda h: (h[1], h[0]))
    run_of = {h: str(d[(d["h_qk"] == h[0]) & (d["h_v"] == h[1])]["run_id"].iloc[0]) for h in heads}
    lines = [f"FlashInfer {', '.join(versions)}, at {len(heads)} head configuration"
             f"{'s' if len(heads) > 1 else ''} ({', '.join(f'{a}/{b}' for a, b in heads)})"
             + (f" of suite `{suite}`" if suite else "") + _on(d) + ", each from "
             + ("one run: " if len(runs) == 1 else "the newest run that measured it (the run column): ")
             + "; ".join(ctx.run_label(r) for r in runs)
             + ". Median ms, `flashinfer` (its own choice) / `flashinfer-nocp` (`use_cp=False`); CP: the auto call "
             "split; bold: faster beyond both rows' noise.", "",
             "| heads (h_qk/h_v) | run | " + " | ".join(_layout(x) for x in layouts) + " |",
             "|---|---|" + "---|" * len(layouts)]
    ratios, split_ratios, verdicts = {}, [], {}  # verdicts: -1 auto faster, 1 auto slower, 0 a tie
    for h in heads:
        cells = []
        for lens in layouts:
            at = d[(d["h_qk"] == h[0]) & (d["h_v"] == h[1]) & (d["_lens"] == lens)]
            by = {r["backend"]: r for r in at.to_dict("records")}
            if AUTO not in by or NOCP not in by:
                cells.append("-")
                continue
            a, b = float(by[AUTO]["median_ms"]), float(by[NOCP]["median_ms"])
            noise = (by[AUTO].get("rel_noise"), by[NOCP].get("rel_noise"))
            fa, fb = _cell(a, b, *noise)
            split = _split(by[AUTO])
            cells.append(f"{fa} / {fb}" + (" CP" if split else ""))
            ratios[(h, lens)] = a / b
            verdicts[(h, lens)] = -1 if faster_beyond_noise(a, b, *noise) else 1 if faster_beyond_noise(b, a, *noise) else 0
            if split:
                split_ratios.append((h, lens))
        lines.append(f"| {h[0]}/{h[1]} | `{run_of[h][-6:]}` | " + " | ".join(cells) + " |")
    lines.append("")
    if split_ratios:
        faster = sum(verdicts[k] < 0 for k in split_ratios)
        slower = sum(verdicts[k] > 0 for k in split_ratios)
        gm = math.exp(sum(math.log(ratios[k]) for k in split_ratios) / len(split_ratios))
        lines += [f"Where the auto call split ({len(split_ratios)} of {len(ratios)} points), auto / unsplit is "
                  f"{gm:.2f} in geometric mean: faster on {faster}, slower on {slower} (beyond both rows' noise)."]
    wrong = {k: r for k, r in ratios.items() if verdicts[k] > 0}
    if wrong:
        worst = max(wrong, key=wrong.get)
        lines.append(f"Its own choice is slower than `use_cp=False` on {len(wrong)} points, "
                     f"{min(wrong.values()):.2f}-{max(wrong.values()):.2f}x (worst: {worst[0][0]}/{worst[0][1]}, "
                     f"{_layout(worst[1])}).")
    return "\n".join(lines)


def _on(d: pd.DataFrame) -> str:
    """' on <GPU model(s)>' of the rows, where recorded."""
    models = sorted({str(x) for x in d["device"].dropna()}) if "device" in d else []
    return f" on {' and '.join(models)}" if models else ""


def library_vs_block(ctx: BlockContext, heads: str, backends: str, suite: str | None = None,
                     gpu: str | None = None) -> str:
    """`gpu`: the run is one on that GPU model (its name as `advise --gpu` takes it); None: any."""
    h = heads_param("heads", heads)
    names = tuple(backends.split(","))
    d = one_run(ctx.rows if gpu is None else of_gpu(ctx.rows, gpu)[0], names, h, suite)
    d = d.assign(_lens=d["seqlens"].map(_lens))
    run = str(d["run_id"].iloc[0])
    common = set.intersection(*(set(d[d["backend"] == b]["_lens"]) for b in names))
    layouts = [x for x in dict.fromkeys(d.sort_values("total_tokens", ascending=False, kind="stable")["_lens"])
               if x in common]
    ms = {(r["backend"], r["_lens"]): float(r["median_ms"]) for r in d.to_dict("records")}
    noise = {(r["backend"], r["_lens"]): r.get("rel_noise") for r in d.to_dict("records")}
    on = f" on {d['device'].iloc[0]}" if "device" in d else ""
    lines = [f"h {h[0]}/{h[1]}, one run ({ctx.run_label(run)}){on}, median ms; bold: the fastest per column, where it is "
             "faster than every other beyond both rows' noise (no bold: a tie).", "",
             "| backend | " + " | ".join(_layout(x) for x in layouts) + " |", "|---|" + "---:|" * len(layouts)]
    best = {}
    for x in layouts:
        first = min(names, key=lambda b: ms[(b, x)])
        if all(faster_beyond_noise(ms[(first, x)], ms[(b, x)], noise[(first, x)], noise[(b, x)])
               for b in names if b != first):
            best[x] = first
    for b in names:
        cells = [f"**{ms[(b, x)]:.3f}**" if best.get(x) == b else f"{ms[(b, x)]:.3f}" for x in layouts]
        lines.append(f"| {md_code(b)} | " + " | ".join(cells) + " |")
    wins = {b: sum(1 for x in layouts if best.get(x) == b) for b in names}
    ties = sum(1 for x in layouts if x not in best)
    lines += ["", f"Fastest beyond the noise, of {len(layouts)} layouts: "
              + ", ".join(f"{md_code(b)} on {n}" for b, n in wins.items())
              + (f"; a tie on {ties}" if ties else "") + "."]
    return "\n".join(lines)
