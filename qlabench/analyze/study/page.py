"""The study as one markdown page with its PNGs: what a reader takes in at a glance first, details after.

Nothing here computes a number: everything comes from the Study (study.py) and the figures (figures.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.analyze.evidence.regimes import regime_series
from qlabench.analyze.kit.tables import md_table
from qlabench.core.regimes import RECOMMENDED_REGIME
from qlabench.analyze.study.figures import all_figures, regret_stem
from qlabench.analyze.study.heads import head_scaling
from qlabench.analyze.study.intracp import intracp_sentence
from qlabench.analyze.study.published import BACKEND_COLUMNS
from qlabench.analyze.study.regret import SETTINGS, library_regret, regret_sentence
from qlabench.core.backend_decl import AUTO_CHOICES
from qlabench.core.text import md_text, visible
from qlabench.analyze.study.study import Study

PAGE = "report.md"
MAX_ROWS = 60  # longer tables go into a collapsed <details> block


def _collapsible(summary: str, body: str, n_rows: int) -> str:
    if n_rows <= MAX_ROWS:
        return body
    return f"<details><summary>{summary} ({n_rows} rows)</summary>\n\n{body}\n</details>\n"


def _ratio_formats(df: pd.DataFrame) -> dict[str, str]:
    out = {}
    for c in df.columns:
        if c.endswith(" ratio") or c.startswith("speedup vs ") or c in ("ratio", "regret", "change"):
            out[c] = ".2f"
        elif c.endswith(" ms") or c.endswith(" published") or c.endswith("_ms"):
            out[c] = ".3f"
    return out


def _n(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _status_counts(study: Study) -> str:
    counts = study.rows["status"].value_counts().to_dict() if not study.rows.empty else {}
    return ", ".join(f"{n} {s}" for s, n in counts.items()) or "none"


def backend_summary(study: Study) -> pd.DataFrame:
    """Per backend: published values, within the tolerance, slower, faster, not ok, not measured, median ratio."""
    c = study.comparison
    recs = []
    for b in BACKEND_COLUMNS:
        sub = c[c["backend"] == b]
        if sub.empty:
            continue
        ok = sub[sub["status"] == "ok"]
        recs.append({"backend": b, "published values": len(sub),
                     f"within {study.tolerance:.0%}": int(sub["within"].sum()),
                     "slower": int((~ok["within"].astype(bool) & (ok["ratio"] > 1)).sum()),
                     "faster": int((~ok["within"].astype(bool) & (ok["ratio"] < 1)).sum()),
                     "not ok": int((sub["status"].notna() & (sub["status"] != "ok")).sum()),
                     "not measured": int(sub["status"].isna().sum()),
                     "median ratio (ok)": ok["ratio"].median() if len(ok) else float("nan"),
                     "ours from": study.primary.get(b, "-")})
    return pd.DataFrame(recs)


def regime_line(rows: pd.DataFrame) -> str:
    """What regime the page's times were read in: the recommended one where a point has it (prepare.py)."""
    ok = rows[rows["status"] == "ok"] if not rows.empty else rows
    regimes = regime_series(ok)
    n = int((regimes == RECOMMENDED_REGIME).sum())
    line = (f"Timing regime: {n} of {len(ok)} timed rows in the {RECOMMENDED_REGIME} regime (docs/BENCHMARKS.md "
            "recommends it: each point's calls back to back for 200 ms before its samples, as an engine under load), "
            "which supersedes a point's rows in another regime")
    other = ok[regimes != RECOMMENDED_REGIME]
    if other.empty:
        return line + "."
    per = ", ".join(f"{md_text(b)} {k}" for b, k in other.groupby("backend").size().items())
    return (line + f"; the other {len(other)} were timed in short bursts from idle ({per}): a call that draws the "
            "card to its power cap reads faster that way, so a ratio between the two regimes is unverified.")


def render(study: Study, figures: dict[str, str], layer_rows: pd.DataFrame | None = None) -> str:
    """The page's markdown; `figures` maps a figure's stem to its file name beside the page."""
    s = study.summary
    tol = f"{study.tolerance:.0%}"
    pub = study.table
    out = [f"# The FlashQLA study: qlabench against FlashQLA's published {pub.name} table", "",
           *([f"**Cross-GPU table: {s.cross_gpu.removeprefix('cross-GPU table: ')}.** A ratio below is one GPU's "
              "time over another's, not qlabench against FlashQLA on one card: whatever its label names, the two "
              "GPUs differ first.", ""] if s.cross_gpu else []),
           f"Results: {', '.join(f'`{x}`' for x in study.sources) or '(a DataFrame)'}; {len(study.rows)} rows "
           f"({_status_counts(study)}), newest per point and library version. Published: {s.n_rows} rows "
           f"measured with {pub.stack_text} (mean of CUDA-graph replays, packed varlen, 25% zero-gate heads).", "",
           *[f"Other GPUs: {line}." for line in study.apart], *([""] if study.apart else []),
           *([f"Made by `{study.command}`.", ""] if study.command else []),
           regime_line(study.rows), "",
           f"**{s.line}.**", "",
           md_table(backend_summary(study), {"median ratio (ok)": ".2f"}),
           f"_ratio = ours / published; within {tol}: |ratio - 1| <= {study.tolerance:g}. Only ok rows give numbers; "
           "a row that is skipped, incorrect or errored shows its status and reason._", ""]

    def img(stem: str, alt: str) -> None:
        if stem in figures:
            out.extend([f"![{alt}]({figures[stem]})", ""])

    out += _correctness_section(study)
    out += ["## Speedup curves", ""]
    stems = [k for k in figures if k.startswith("speedup_")]
    if not stems:
        out += ["_No point has flash_qla and a baseline both ok._", ""]
    for stem in stems:
        img(stem, stem.replace("_", " "))

    out += ["## Ours against published", ""]
    img("published_vs_ours", "ours vs published")
    out += ["### Values grouped by explanation", "",
            "Each label is derived from what the rows recorded: the library version against the published "
            "stack (and whether a re-run on another version met the published value), whether FlashQLA's "
            "intra-card CP warm-up kernel (`get_warmup_chunks`) launched, what the nocp / forcecp variants "
            "took on the same point, SM coverage, the timer, gate profile and layout against the published "
            "method, clock drops, and for a row that is not ok its status and reason.", "",
            md_table(study.by_explanation()), ""]
    outside = study.comparison[~study.comparison["within"].astype(bool) & study.comparison["status"].notna()]
    table = md_table(outside, _ratio_formats(outside) | {"ours_ms": ".3f", "published_ms": ".3f", "ratio": ".2f"},
                     ["mode", "heads", "sequences", "backend", "ours_ms", "published_ms", "ratio", "status",
                      "explanation", "factors"])
    out += [f"### Measured values outside {tol}", "", _collapsible("values outside the tolerance", table, len(outside))]
    fwd = study.published_wide("fwd")
    if not fwd.empty:
        out += ["### Every forward row", "",
                "`runs`: the runs our values on the row come from; where it names more than one, each speedup "
                "divides times of different runs and holds their run-to-run variation too.", "",
                _collapsible("forward: ours, published, ratio per backend", md_table(fwd, _ratio_formats(fwd)),
                             len(fwd))]

    out += _heads_section(study, figures)

    out += ["## Backward", "",
            "Published method: the backward kernels alone (FlashQLA's forward run first); the published split of "
            "the total into sequences is random, so rows match on (heads, total tokens, sequences).", ""]
    bwd = study.published_wide("bwd")
    out += [md_table(bwd, _ratio_formats(bwd)) if not bwd.empty else "_No backward rows in the published table._\n"]
    for mode, t in study.unpublished_modes().items():
        out += [f"### Mode `{mode}` (no published counterpart)", "", _collapsible(mode, md_table(t, _ratio_formats(t)),
                                                                                  len(t))]

    out += ["## Gate values", "",
            "FlashQLA's intra-card CP warms each split up from a chunk count computed from g at run time; heads "
            "with g = 0 need long warm-ups. The published method zeroes 25% of the value heads and divides g by 16 (gate_scale 16).", ""]
    if "gate_gate_zero_frac" not in figures and "gate_gate_scale" not in figures:
        out += ["_No gate sweep in these results (no point measured at two gate_zero_frac or gate_scale values)._",
                ""]
    img("gate_gate_zero_frac", "time vs gate_zero_frac")
    img("gate_gate_scale", "time vs gate_scale")

    out += _regret_section(study, img)
    out += autotune_regret_section(study.sources)
    out += _intracp_section(study)
    out += _advice_section(study, layer_rows)
    out += ["## Library versions", "", md_table(study.versions), ""]
    if study.history:
        out += ["Older evidence, not in the tables above (results/catalog.toml marks it history):", "",
                *[f"- {line}" for line in study.history], ""]
    if study.stacks:
        out += ["## The same points on two library stacks", "",
                "`change` = newest / oldest stack; `explains` = the newest stack misses the published value and "
                "another stack meets it (the version explains that gap).", ""]
        for backend, t in study.stacks.items():
            n_explained = int((t["explains"] == True).sum())  # noqa: E712 (None: not in the table)
            n_missed = int(t["explains"].notna().sum())
            out += [f"### {md_text(backend)}", "",
                    f"{_n(len(t), 'point')} on two or more stacks, {n_missed} of them in the published table; the "
                    f"version explains the gap on {n_explained}.", "", md_table(t, _ratio_formats(t))]
    out += ["## About the published table", "",
            f"- Source: {pub.source}" + (f", shipped as `qlabench/analyze/data/{pub.csv}`." if pub.gpu else "."),
            "- Its FlashInfer column called FlashInfer with FlashQLA's conventions (log-space g, untransposed "
            "state): the same kernel and time on wrong inputs. qlabench's flashinfer rows pass its own "
            "conventions and are checked against the oracle.",
            "- FlashQLA's speed depends on the gate values through its CP warm-up; every row records its gate "
            "profile, and the gate section above shows how much.", ""]
    return "\n".join(out)


def autotune_regret_section(sources) -> list[str]:
    """FLA's time at each shape under the configs another shape tuned first (`qlabench autotune-regret`
    writes the table into a results folder; this section shows every one found among the sources)."""
    from qlabench.store.autotune_regret import find_regret_files, read_regret, regret_markdown

    out = ["## Autotune regret: what sweep order costs FLA", "",
           "FLA's Triton kernels autotune once per process on keys without the sequence length, so the first "
           "shape of a head configuration decides the configs of every later one. Rows here are tuned for each "
           "point (`[run] autotune = \"point\"`); the table times each shape under the configs every other shape "
           "picked first: what an engine that tuned on another shape, or a worker that ran another point first, "
           "gets.", ""]
    files = find_regret_files(p for p in sources if isinstance(p, (str, os.PathLike)))
    if not files:
        return out + ["_No autotune-regret table among these results (`qlabench autotune-regret --suite "
                      "autotune-regret --out RESULTS/autotune-regret`)._", ""]
    for f in files:
        out += [f"From `{f}`:", "", regret_markdown(read_regret(f))]
    return out


def _correctness_section(study: Study) -> list[str]:
    """How the timed rows were checked, against which reference and at what size, and every speedup left
    out because its faster side is over tolerance (analyze/evidence/accuracy.py)."""
    from qlabench.analyze.evidence.accuracy import LEGEND, evidence_of, evidence_summary

    rows = study.primary_rows
    ok = rows[rows["status"] == "ok"] if not rows.empty else rows
    line = evidence_summary(evidence_of(ok, study.numerics)) if not ok.empty else None
    if line is None:
        return []
    source = ("their own checks and the rows of the numerics folder given (`report --numerics`; its own "
              "page: [numerics.md](numerics.md))"
              if study.numerics is not None else "their own checks only (`report --numerics DIR` adds the "
              "float64 full-size rows of the same backend and problem)")
    out = ["## Correctness of the timed kernels", "",
           f"Evidence: {source}. {line[0].upper() + line[1:]}. A row checked at a reduced size only passed "
           "its check there; it says nothing of the error at its own size.", "", f"_{LEGEND}._", ""]
    over = ok[ok["err_over"].map(bool)] if "err_over" in ok else ok.iloc[:0]
    if over.empty:
        out += ["No timed row is over tolerance in its evidence.", ""]
    else:
        out += [f"{_n(len(over), 'timed row')} over tolerance (their speedups are not given):", "",
                md_table(over, columns=["mode", "heads", "sequences", "backend", "err_mark"])]
    withheld = study.speedups[study.speedups["withheld"].notna()] if "withheld" in study.speedups else None
    if withheld is not None and not withheld.empty:
        out += [f"{_n(len(withheld), 'speedup')} withheld (the faster side over tolerance):", "",
                md_table(withheld, columns=["mode", "heads", "x_label", "baseline", "withheld"])]
    return out


def _advice_section(study: Study, layer_rows: pd.DataFrame | None = None) -> list[str]:
    """Per model and TP, the recommended backend for a short, a long and a packed prompt: `qlabench
    advise`'s own ranking of these rows (its caveats by name; the command prints them in full)."""
    from qlabench.analyze.study.advice import advice_markdown, advice_table

    table = advice_table(study.rows, layer_rows=layer_rows) if not study.rows.empty else pd.DataFrame()
    if table.empty:
        return []
    return ["## Advice: which kernel for a model and TP degree", "",
            "The fastest correct backend per model, TP degree and prompt (published gate, bf16, packed as the "
            "table packs; the newest library version of each backend), ranked as `qlabench advise --model M --tp N "
            "--seqlens 4096,32768,8x4096` ranks them; `caveats` names what changes the answer (ties within noise, "
            "FlashQLA's auto-CP decision, gate values, library version, rows from several runs). What a core's "
            "speedup is worth in a whole Qwen3.5 layer: `docs/LAYER.md`; `layer x vs fla` (with `report --layer`) is the "
            "measured layer speedup from that core swap, where both layers ran at that point in one run.", "",
            advice_markdown(table), ""]


def _intracp_section(study: Study) -> list[str]:
    """fla-intracp (FLA's own intra-card CP) beside flash_qla (auto CP) and fla on the same forward points."""
    out = ["## FLA's CP against FlashQLA's", "",
           "`fla-intracp` is FLA's own intra-card CP (FLA_INTRACARD_CP=1, under inference mode, packed varlen "
           "calls only; docs/CONTEXT-PARALLEL.md). `vs X` = fla-intracp time / X time on the same point (below 1: "
           "fla-intracp faster); `kernel vs X` = the same ratio of the GPU kernel time of each row's traced call, "
           "which no timer's launch gaps enter; `fla split` / `flash_qla split` = whether each library's intra-card split ran, "
           "from the kernels its row launched. fla-intracp cannot be captured in a CUDA graph and is timed with "
           "CUDA events, which include launch gaps: where `timers` differ, a ratio leans against it.", ""]
    t = study.fla_intracp()
    if t.empty:
        return out + ["_No fla-intracp forward row is ok in these results: nothing measured "
                      "(qlabench/suites/flashqla-study.toml runs it on the forward points)._", ""]
    table = md_table(t, _ratio_formats(t) | {"vs fla": ".2f", "vs flash_qla": ".2f", "kernel ms": ".3f",
                                             "kernel vs fla": ".2f", "kernel vs flash_qla": ".2f"},
                     ["heads", "sequences", "fla-intracp ms", "fla ms", "flash_qla ms", "vs fla", "vs flash_qla",
                      "kernel vs fla", "kernel vs flash_qla", "fla split", "flash_qla split", "timers", "runs"])
    return out + [intracp_sentence(t), "", _collapsible("fla-intracp per point", table, len(t))]


# A time that grows by less than this for several times the heads is "flat": the added heads ran on idle SMs.
FLAT = 1.5


def flashinfer_heads_sentence(lo, hi, tokens: int) -> str:
    """What FlashInfer's time does from the fewest value heads to the most on one sequence, read from the rows: flat
    where its kernel's blocks grow with the heads onto idle SMs (0.6's one block per value head), growing where
    the SMs were already covered (0.7's split call covers them at the fewest heads)."""
    heads = hi["h_v"] // lo["h_v"]
    grew = hi["median_ms"] / lo["median_ms"]
    per_head = lo["main_blocks"] == lo["h_v"] and hi["main_blocks"] == hi["h_v"]
    blocks = f"{lo['main_blocks']} to {hi['main_blocks']} blocks{', one per value head' if per_head else ''}"
    out = (f"FlashInfer at 1x{tokens}: {lo['median_ms']:.3f} ms at {lo['heads']} and {hi['median_ms']:.3f} ms at "
           f"{hi['heads']} ({heads}x the value heads, {grew:.1f}x the time). Its main kernel launches {blocks}, "
           f"covering {lo['sm_coverage']:.0%} to {hi['sm_coverage']:.0%} of the SMs: ")
    if grew < FLAT and hi["sm_coverage"] > lo["sm_coverage"]:
        return out + "more heads fill idle SMs instead of adding time."
    if grew < FLAT:
        return out + "the time stays nearly flat with the heads."
    if lo["sm_coverage"] >= 0.9:
        return out + "the SMs are already covered at the fewest heads, so the added heads add time."
    return out + "the added heads add time."


def _heads_section(study: Study, figures: dict[str, str]) -> list[str]:
    """Time against head count on single sequences, with each backend's SM coverage and main kernel."""
    h = head_scaling(study.primary_rows)
    if h.empty:
        return []
    out = ["## Time, SM coverage and head count", "",
           "One sequence per call, forward, the published method. `sm_coverage` is the time-weighted share of "
           "the GPU's SMs that the call's kernels gave a block; `main kernel` is the one it spent longest in, "
           "with its block count and share of the kernel time.", ""]
    fi = h[h["backend"] == "flashinfer"]
    if not fi.empty:
        T = int(fi["total_tokens"].max())
        f = fi[fi["total_tokens"] == T]
        lo, hi = f.loc[f["h_v"].idxmin()], f.loc[f["h_v"].idxmax()]
        out += [flashinfer_heads_sentence(lo, hi, T), ""]
    if "heads_coverage" in figures:
        out += [f"![time and SM coverage against heads]({figures['heads_coverage']})", ""]
    table = md_table(h, {"median_ms": ".3f", "sm_coverage": ".2f", "main_share": ".0%"},
                     ["total_tokens", "backend", "heads", "median_ms", "sm_coverage", "main_kernel", "main_blocks",
                      "main_share"])
    return out + [_collapsible("per backend, length and head config", table, len(h))]


@dataclass(frozen=True)
class ReportFiles:
    page: Path
    figures: tuple[Path, ...]


def write_report(study: Study, out_dir: str | os.PathLike, layer_rows: pd.DataFrame | None = None) -> ReportFiles:
    """Write every figure as PNG and the page (report.md) into out_dir; `layer_rows` (the layer backends'
    rows) add the layer-level gain to the advice."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for stem, fig in all_figures(study):
        name = f"{stem}.png"
        fig.savefig(out_dir / name, dpi=110)
        written[stem] = name
    page = out_dir / PAGE
    page.write_text(visible(render(study, written, layer_rows)))  # no control character reaches a page
    return ReportFiles(page=page, figures=tuple(out_dir / n for n in written.values()))


def _regret_section(study: Study, img) -> list[str]:
    """Per library that decides its own intra-card CP (core's AUTO_CHOICES), how much that decision cost."""
    out = ["## Auto-CP regret", "",
           "regret = auto time / the fastest pinned setting's time on the same point: above 1 the library's own "
           "intra-card CP decision lost by that factor. The times come from one run on one GPU where the results "
           "hold them; `mixes` names the GPUs or runs a ratio takes otherwise, and `unmeasured` a pinned setting "
           "with no ok row there (the regret is then a lower bound).", ""]
    for choice in AUTO_CHOICES:
        r = library_regret(study.regret, choice.library)
        pinned = ", ".join(f"`{b}`" for _, b in choice.pinned)
        out += [f"### {choice.library}: `{choice.auto}` against {pinned}", ""]
        if r.empty:
            out += [f"_No point has `{choice.auto}` and one of {pinned} both ok._", ""]
            continue
        out += [regret_sentence(r), ""]
        img(regret_stem(choice.library), f"{choice.library} auto-CP regret")
        out += [_collapsible(f"{choice.library} regret per point", regret_markdown(r), len(r))]
    return out


def regret_markdown(r: pd.DataFrame) -> str:
    """One library's regret rows as a table, every row with its run ids (and what it mixes)."""
    cols = ["stack", "mode", "heads", "sequences", "gate_label", "auto_ms", *[f"{s}_ms" for s in SETTINGS],
            "auto_cp", "best", "regret", "unmeasured", "run_id", "mixes"]
    return md_table(r, _ratio_formats(r), cols)
