"""The site's pages as HTML text: the index, one page per model/TP/workload ranking (with its points'
history) and one per results folder. Computing is done before (rankings.py, history.py, source.py).
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from qlabench.analyze.answer.ranking import version_label
from qlabench.analyze.site.folders import Folder
from qlabench.analyze.site.history import PointHistory
from qlabench.analyze.site.html import esc, figure, md, page, table
from qlabench.analyze.site.rankings import CURRENT, Ranking
from qlabench.core.names import slug
from qlabench.core.versions import OWN_CODE, READ, own_key, own_version

HOME = ("index", "index.html")


def folder_href(name: str) -> str:
    """A folder's page: its name slugged (core/names.slug: a space, an accent or markup never reaches a file
    name or a URL as it is; the page shows the name as it is)."""
    return f"folder-{slug(name)}.html"


def ranking_href(r: Ranking) -> str:
    return f"rank-{r.slug}.html"


def link(href: str, text: str) -> str:
    """<a> to a page of the site: the URL and the text escaped."""
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def winners(r: Ranking) -> str:
    """'fastest: flash_qla in 12, flashinfer in 5 (of 19 cases); tied in 1; provisional in 1': a case counts as a
    win only where every candidate was measured and the two fastest are apart beyond their noise (kit.ties);
    a tie and a provisional answer (a candidate not measured) are counted as such, never as a win."""
    won = Counter(c.best.backend for c in r.cases if c.best and not c.tied)
    tied = sum(1 for c in r.cases if c.best and c.tied)
    provisional = sum(1 for c in r.cases if c.provisional)
    parts = [f"{b} in {n}" for b, n in won.most_common()]
    text = ("fastest: " + ", ".join(parts) + f" (of {len(r.cases)} cases)") if parts else f"no winner (of {len(r.cases)} cases)"
    if tied:
        text += f"; tied in {tied}"
    if provisional:
        text += f"; provisional in {provisional} (a candidate not measured there)"
    if not (parts or tied or provisional):
        return "no correct time"
    return text


def index_page(rankings: list[Ranking], folders: list[Folder], rows: pd.DataFrame, root: str,
               current: list[str], serving: bool = False) -> str:
    rank_rows = [([link(ranking_href(r), r.model), esc(r.tp), esc(r.workload), esc(r.gpu or ""), esc(len(r.cases)),
                   esc(winners(r))], "") for r in rankings]
    counts = rows.groupby("folder").agg(files=("file", "nunique"), rows=("file", "size"))
    folder_rows = []
    for f in folders:
        n = counts.loc[f.name] if f.name in counts.index else None
        folder_rows.append(([link(folder_href(f.name), f.name), esc(f.status or ""),
                             esc(int(n["files"]) if n is not None else 0), esc(int(n["rows"]) if n is not None else 0),
                             md(f.what) if f.what else '<span class="note">not in the catalog</span>'], ""))
    body = (f'<p class="note">Built from <code>{esc(root)}</code>: {len(rows)} result rows in '
            f'{rows["file"].nunique()} files. The current ranking reads '
            f'{", ".join(f"<code>{esc(c)}</code>" for c in current) or "no folder"} (the results catalog\'s current '
            "kernel timings); the history of each point reads every folder.</p>"
            "<h2>Which kernel, per model, TP degree and workload</h2>"
            + table(["model", "TP", "workload", "GPU", "cases", "answer"], rank_rows, numeric=[1, 4])
            + ('<p>Serving (decode and multi-token verify steps against a state pool): '
               '<a href="serving.html">the fastest correct variant by batch</a>.</p>' if serving else "")
            + "<h2>Results folders</h2>" + table(["folder", "status", "files", "rows", "what"], folder_rows, numeric=[2, 3]))
    return page("qlabench: the evidence", body)


def _case_table(case, current: str) -> str:
    rows = []
    best = case.best
    for e in case.entries:
        if e.ok:
            cells = [esc(e.backend), f"{e.time_ms:.3f}", f"{e.speedup:.2f}x" if e.speedup else "-",
                     f"{e.rel_noise:.1%}" if e.rel_noise is not None else "-",
                     f"ok {e.max_err:.0e}" if e.max_err is not None else "ok", esc(version_label(e)),
                     esc(", ".join(e.runs))]
        else:
            cells = [esc(e.backend), "-", "-", "-", f'<span class="bad">{esc(e.status)}</span>',
                     esc(version_label(e)), esc(", ".join(e.runs))]
        rows.append((cells, "best" if best is not None and e is best else ""))
    head = ["backend", "ms", f"vs {current}", "noise", "check", "library", "run"]
    return table(head, rows, numeric=[1, 2, 3], attrs=f'class="ranking" data-case="{esc(case.case.label)}"')


def ranking_page(r: Ranking, ranking_png: str, history: list[PointHistory], history_png: str | None) -> str:
    q = r.question
    h_qk, h_v = q.heads
    parts = [f'<p>{esc(q.model)} at TP {q.tp}: heads {h_qk}/{h_v} per GPU, K = V = {q.head_dim}, {esc(q.dtype)}; '
             f'workload {esc(r.workload)}; gate {esc(q.gate.label)}. Speedups are against {esc(CURRENT)}; a backend '
             "whose rows are incorrect, skipped or failed is listed with its status and never ranked. The same "
             f'answer, case by case: <code>qlabench advise --model {esc(q.model)} --tp {q.tp} --workload '
             f'{esc(r.workload)} --seqlens {esc(",".join(c.case.label for c in r.cases))}</code>.</p>',
             f'<p class="note">{esc(winners(r))}</p>', figure(ranking_png, f"{r.title}: speedup vs FLA per case")]
    parts.append("<h2>Ranking per sequence mix</h2>")
    for c in r.cases:
        best, prov = c.best, c.provisional
        parts.append(f'<h3 id="case-{esc(c.case.label)}">{esc(c.case.label)} ({c.case.total_tokens:,} tokens'
                     + (f", {esc(c.device)}" if c.device else "") + "): "
                     + (f"use {esc(best.backend)} ({esc(best.setting)})" if best else
                        f"no winner: {esc(_unanswered(c))}; provisional among those ranked: {esc(prov.backend)}"
                        if prov else "no backend has a correct time")
                     + "</h3>")
        if c.entries:
            parts.append(_case_table(c, CURRENT))
        notes = c.caveats
        if notes:
            parts.append('<ul class="caveats">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    parts.append(_history_section(history, history_png))
    return page(r.title, "\n".join(parts), nav=[HOME])


def _history_section(history: list[PointHistory], png: str | None) -> str:
    out = ["<h2>Each point's time across library versions and commits</h2>"]
    if not history:
        out.append('<p class="note">Every point of this page was measured at one library version and commit only.</p>')
        return "\n".join(out)
    out.append(f'<p class="note">{len(history)} points of this page were measured at more than one library '
               "version or qlabench commit (in any results folder, with the same timer on the same GPU).</p>")
    if png:
        out.append(figure(png, "time of each point across library versions and commits"))
    rows = []
    for h in sorted(history, key=lambda h: (h.backend, h.mode, sum(h.seqlens), h.seqlens)):
        runs = "<br>".join(f"{esc(m.label)}: {m.median_ms:.3f} ms <span class=\"note\">({esc(m.date)}, "
                           f"{esc(m.folder)}/)</span>" for m in h.runs)
        rows.append(([esc(h.backend), esc(h.mode), esc("+".join(map(str, h.seqlens))), esc(h.gate), esc(h.timer),
                      runs], ""))
    out.append("<details><summary>every run of every point</summary>"
               + table(["backend", "mode", "sequences", "gate", "timer", "runs, oldest first"], rows) + "</details>")
    return "\n".join(out)


def folder_page(f: Folder, rows: pd.DataFrame, rankings: list[Ranking]) -> str:
    parts = [f"<p>{md(f.what)}</p>" if f.what else '<p class="note">This folder is not in the results catalog.</p>']
    if f.how:
        parts.append(f"<p>How it was made, or where it is written up: {md(f.how)}</p>")
    facts = [(k, v) for k, v in (("kind", f.kind), ("status", f.status), ("date", f.date), ("stack", f.stack),
                                 ("current for", ", ".join(f.backends) if f.backends else None)) if v]
    if f.superseded_by:
        facts.append(("superseded by", link(folder_href(f.superseded_by), f.superseded_by)))
    if facts:
        parts.append(table(["", ""], [([esc(k), v if k == "superseded by" else esc(v)], "") for k, v in facts]))
    if rankings:
        parts.append("<p>The current ranking reads this folder: "
                     + ", ".join(link(ranking_href(r), r.title) for r in rankings) + ".</p>")
    mine = rows[rows["folder"] == f.name]
    if mine.empty:
        parts.append('<p class="note">No result rows here (tables, reports or baselines only).</p>')
        return page(f"results/{f.name}", "\n".join(parts), nav=[HOME])
    runs = []
    for file, grp in mine.groupby("file", sort=True):
        status = Counter(grp["status"])
        # each backend's own library and its version, from the rows' version record (core/versions.py)
        recs = grp[[c for c in READ if c in grp.columns]].to_dict("records")
        versions = sorted({f"{own} {own_version(r)}" for r in recs
                           if (own := own_key(r)) not in (None, OWN_CODE) and own_version(r)})
        shas = sorted({str(s)[:7] for s in grp["git_sha"].dropna().unique()})
        runs.append(([esc(file), esc(", ".join(sorted(grp["suite"].dropna().unique()))),
                      esc(str(grp["timestamp"].min())[:16].replace("T", " ")), esc(len(grp)),
                      esc(", ".join(f"{n} {s}" for s, n in status.most_common())),
                      esc(", ".join(sorted(grp["backend"].unique()))), esc(", ".join(versions)),
                      esc(", ".join(shas) or "not recorded"), esc(", ".join(sorted(grp["device"].dropna().unique())))],
                     ""))
    parts.append("<h2>Result files</h2>" + table(
        ["file", "suite", "started (UTC)", "rows", "status", "backends", "libraries", "commit", "device"], runs,
        numeric=[3]))
    return page(f"results/{f.name}", "\n".join(parts), nav=[HOME])


def _unanswered(c) -> str:
    """What keeps a case from a winner: candidates with no row, and those with rows that could not be ranked."""
    parts = [f"{', '.join(c.missing)} not measured"] if c.missing else []
    return "; ".join(parts + ([f"{', '.join(c.unranked)} unranked"] if c.unranked else []))
