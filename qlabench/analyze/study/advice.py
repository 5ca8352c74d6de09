"""The study page's advice: per model and TP degree, the recommended backend for a short, a long and a
packed prompt, each from `advise`'s own ranking of the rows (so the page and the command never differ)."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.answer.answer import answer_case
from qlabench.analyze.answer.question import Question, parse_case
from qlabench.core.errors import QlabenchError
from qlabench.core.models import CATALOGUE

# The prompts the page advises on: FlashQLA's table has each of them at every head configuration.
PROMPTS = (("short", "4096"), ("long", "32768"), ("packed", "8x4096"))


def advice_table(df: pd.DataFrame, current: str = "fla", layer_rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (model, TP, prompt) that the rows can answer: the winner, its time and speedup over
    `current`, the runner-up, and the caveats behind the answer. With `layer_rows` (the `layer:<core>`
    backends' rows), `layer x vs <current>`: the whole layer's speedup from swapping `current`'s core for
    the winner's, where both layers were measured at that model, TP and prompt."""
    out = []
    pairs = df[["model", "tp"]].dropna().drop_duplicates().itertuples(index=False, name=None)
    known = {m.name for m in CATALOGUE}
    for model, tp in sorted(pairs, key=lambda mt: (str(mt[0]), -int(mt[1]))):
        if model not in known:
            continue
        for kind, text in PROMPTS:
            try:
                q = Question(model, int(tp), "prefill", (parse_case(text),), current=current)
                ans = answer_case(df, q, q.cases[0])
            except QlabenchError:
                continue
            timed = [e for e in ans.entries if e.ok]
            if not timed:
                continue
            best = timed[0]
            out.append({
                "model": model, "tp": int(tp), "heads": f"{q.heads[0]}/{q.heads[1]}", "prompt": f"{kind} ({text})",
                # provisional where a candidate has no row: the fastest measured, and what was not
                "recommended": best.backend if ans.best else f"{best.backend} (provisional)",
                "not measured": ", ".join(ans.missing) or "-", "ms": round(best.time_ms, 3),
                f"x vs {current}": round(best.speedup, 2) if best.speedup else None,
                "runner-up": f"{timed[1].backend} ({timed[1].time_ms:.3f} ms)" if len(timed) > 1 else "-",
                "caveats": "; ".join(dict.fromkeys(c.split(":")[0] for c in ans.caveats)) or "-",
            })
            if layer_rows is not None:
                out[-1][f"layer x vs {current}"] = layer_gain(layer_rows, model, int(tp), q.cases[0].seqlens,
                                                                best.backend, current)
    return pd.DataFrame(out)


def layer_gain(layer_rows: pd.DataFrame, model: str, tp: int, seqlens: tuple[int, ...], best: str,
               current: str) -> float | None:
    """time(layer around `current`'s core) / time(layer around `best`'s), newest ok rows of one run at
    this model, TP and packed prompt; None where either layer was not measured there."""
    if layer_rows.empty:
        return None
    d = layer_rows[(layer_rows["model"] == model) & (layer_rows["tp"] == tp) & (layer_rows["status"] == "ok")
                   & (layer_rows["layout"] == "varlen")]
    d = d[d["seqlens"].map(lambda s: tuple(int(x) for x in s)) == tuple(seqlens)]
    times = {}
    for b in (best, current):
        rows = d[d["backend"] == f"layer:{b}"].sort_values("timestamp")
        if rows.empty:
            return None
        times[b] = (rows.iloc[-1]["run_id"], float(rows.iloc[-1]["median_ms"]))
    if times[best][0] != times[current][0]:  # a ratio within one run only
        return None
    return round(times[current][1] / times[best][1], 2)


def advice_markdown(table: pd.DataFrame) -> str:
    if table.empty:
        return "_no model rows to advise on_"
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join("-" if pd.isna(r[c]) else str(r[c]) for c in cols) + " |")
    return "\n".join(lines)
