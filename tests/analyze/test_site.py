"""analyze/site/: what the site reads (catalog, folders, history) and that its ranking is advise's.

The pages themselves are opened in a real browser by tests/e2e/test_site_browser.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qlabench.analyze.advise import advise
from qlabench.analyze.answer import make_question
from qlabench.analyze.serving.section import serving_section
from qlabench.analyze.site.build import build_site, page_points
from qlabench.analyze.site.folders import read_catalog
from qlabench.analyze.site.history import histories
from qlabench.analyze.site.rankings import rankings
from qlabench.analyze.site.source import folder_of, read_site_rows
from qlabench.core.errors import ConfigError
from qlabench.store.files import write_rows

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())

README = """# results

| folder | what | how it was made |
|---|---|---|
| `study/` | the study: `qlabench/suites/s.toml` | `docs/S.md` |
| `study/nested/` | a part of it | by hand |
| `gone/` | a folder no longer here | - |
| `baselines/<gpu>/<suite>.parquet` | gate baselines | `docs/GATING.md` |

| other | table |
|---|---|
| `x/` | not the catalog |
"""


def _tree(tmp_path: Path, rows_by_file: dict[str, list]) -> Path:
    root = tmp_path / "results"
    root.mkdir()
    (root / "README.md").write_text(README)
    for rel, rows in rows_by_file.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write_rows(root / rel, rows)
    return root


def test_catalog_lists_the_readme_table_then_uncatalogued_folders(tmp_path):
    root = tmp_path
    (root / "README.md").write_text(README)
    for d in ("study/nested", "baselines", "zz-new", "x"):
        (root / d).mkdir(parents=True)
    folders = read_catalog(root)
    assert [f.name for f in folders] == ["study", "study/nested", "baselines", "x", "zz-new"]
    assert folders[0].what == "the study: `qlabench/suites/s.toml`" and folders[0].how == "`docs/S.md`"
    assert folders[-1].what is None  # on disk, not in the catalog: said so, never dropped
    assert folder_of(Path("study/nested/r.parquet"), folders).name == "study/nested"
    assert folder_of(Path("study/r.parquet"), folders).name == "study"
    assert folder_of(Path("zz-new/r.parquet"), folders).what is None


def test_history_follows_a_point_across_versions_and_keeps_timers_and_test_backends_apart(tmp_path, make_row):
    point = dict(device="NVIDIA H200", timer="graph", dtype="bfloat16")
    root = _tree(tmp_path, {
        "study/old.parquet": [make_row(run_id="old", backend="fla", fla_version="0.5.1", git_sha="a" * 40,
                                       timestamp="2026-01-01T00:00:00+00:00", median_ms=2.0, **point)],
        "study/new.parquet": [make_row(run_id="new", backend="fla", fla_version="0.6.0", git_sha="b" * 40 + "+dirty",
                                       timestamp="2026-02-01T00:00:00+00:00", median_ms=r, replicate=i, **point)
                              for i, r in enumerate((1.0, 1.2, 1.1))],
        # the events timer's time includes the launch: another line, never a step in this one
        "x/events.parquet": [make_row(run_id="ev", backend="fla", fla_version="0.6.0", timer="events",
                                      device="NVIDIA H200", dtype="bfloat16", median_ms=5.0)],
        # deliberate slowdowns and the naive references have no library to follow
        "x/synthetic.parquet": [make_row(run_id="syn", backend="synthetic", median_ms=9.0, **point),
                                make_row(run_id="syn", backend="naive-chunk", median_ms=9.0, **point)],
    })
    ev = read_site_rows(root)
    hs = histories(ev.history())
    assert {(h.backend, h.timer) for h in hs} == {("fla", "graph"), ("fla", "events")}
    graph = next(h for h in hs if h.timer == "graph")
    assert graph.changed and graph.library == "fla"
    assert [(m.version, m.commit, m.median_ms, m.replicates, m.folder) for m in graph.runs] == [
        ("0.5.1", "aaaaaaa", 2.0, 1, "study"), ("0.6.0", "bbbbbbb+dirty", 1.1, 3, "study")]
    assert not next(h for h in hs if h.timer == "events").changed


def test_read_site_rows_refuses_a_missing_folder(tmp_path):
    with pytest.raises(ConfigError, match="not a folder"):
        read_site_rows(tmp_path / "nope")


@pytest.fixture(scope="module")
def study_rankings():
    return rankings(read_site_rows(REPO / "results").current())


def test_site_ranking_is_advises_answer_for_397b_tp8(study_rankings):
    """The site ranks the committed tree's current rows from a narrowed copy (analyze/site/rankings.py:
    ADVISE_COLUMNS); advise, given no results, the catalog's current evidence whole. Every entry, speedup
    and caveat must agree."""
    ours = [r for r in study_rankings if (r.model, r.tp, r.workload) == ("qwen3.5-397b", 8, "prefill")]
    # one ranking per GPU model the current rows measured it on, the one with most rows under the plain name
    assert [r.gpu for r in ours] == ["NVIDIA H200", "NVIDIA H100 80GB HBM3"] and [r.primary for r in ours] == [True, False]
    assert ours[0].slug == "qwen3.5-397b-tp8-prefill" and ours[1].slug.startswith("qwen3.5-397b-tp8-prefill-NVIDIA-H100")
    assert ours[1].title.endswith("· NVIDIA H100 80GB HBM3")
    r = ours[0]
    cases = ",".join(c.case.label for c in r.cases)
    answer = advise(make_question("qwen3.5-397b", 8, "prefill", cases, gpu=r.gpu))  # the catalog's current evidence
    assert len(r.cases) >= 10
    for mine, theirs in zip(r.cases, answer.cases, strict=True):
        assert mine.case == theirs.case
        assert [e.as_dict() for e in mine.entries] == [e.as_dict() for e in theirs.entries]
        assert (mine.caveats, mine.missing) == (theirs.caveats, theirs.missing)


def test_site_builds_pages_figures_and_a_history_per_ranking(tmp_path, make_row):
    point = dict(device="NVIDIA H200", timer="graph", dtype="bfloat16", model="qwen3.5-397b", tp=8, h_qk=2, h_v=8,
                 K=128, V=128, layout="varlen", seqlens=(4096,), total_tokens=4096, gate="flashqla")
    rows = [make_row(run_id=f"r{v}", backend=b, fla_version=v, flash_qla_version="0.1.3", median_ms=t,
                     timestamp=f"2026-0{i + 1}-01T00:00:00+00:00", **point)
            for i, (v, fla_ms) in enumerate((("0.5.1", 2.0), ("0.6.0", 1.0)))
            for b, t in (("fla", fla_ms), ("flash_qla", 0.5))]
    root = _tree(tmp_path, {"h200-study/a.parquet": rows[:2], "h200-study/b.parquet": rows[2:]})
    site = build_site(root, tmp_path / "site", serving=serving_section)
    names = {p.name for p in site.pages}
    assert {"index.html", "rank-qwen3.5-397b-tp8-prefill.html", "folder-h200-study.html"} <= names
    page = (tmp_path / "site" / "rank-qwen3.5-397b-tp8-prefill.html").read_text()
    # every candidate these rows measured has a time here: flash_qla wins (a backend never measured is none)
    assert 'data-case="4096"' in page and "use flash_qla (FlashQLA, auto intra-card CP)" in page
    assert "0.5.1 @ " in page and "img/history-qwen3.5-397b-tp8-prefill.png" in page  # fla moved with its version
    assert all(p.stat().st_size > 0 for p in site.figures)
    ranked = rankings(read_site_rows(root).current())
    assert [h.backend for h in page_points(ranked[0], [h for h in histories(read_site_rows(root).history())
                                                       if h.changed])] == ["fla"]


CATALOG = """format = 1

[[entry]]
path = "study"
kind = "kernel-timings"
status = "current"
date = 2026-12-01
question = "the study, current"
stack = { fla = "0.6.0" }
doc = "docs/S.md"
backends = ["fla"]

[[entry]]
path = "study/old.parquet"
kind = "kernel-timings"
status = "history"
date = 2026-11-30
question = "the study on the old stack"
stack = { fla = "0.5.1" }
superseded_by = "study"

[[entry]]
path = "gate"
kind = "gate"
status = "current"
date = 2026-11-30
question = "deliberate slowdowns"
stack = { fla = "0.6.0" }
"""


def test_with_a_catalog_toml_the_current_rows_are_its_current_kernel_timings(tmp_path, make_row):
    """results/catalog.toml (store/catalog.py) decides what is current: a history run inside a current
    folder, a backend the entry is not current for and a gate entry's rows are history only."""
    pytest.importorskip("qlabench.store.catalog")
    root = _tree(tmp_path, {
        "study/new.parquet": [make_row(run_id="new", backend=b, fla_version="0.6.0") for b in ("fla", "flash_qla")],
        "study/old.parquet": [make_row(run_id="old", backend="fla", fla_version="0.5.1")],
        "gate/x.parquet": [make_row(run_id="g", backend="fla", fla_version="0.6.0")],
    })
    (root / "catalog.toml").write_text(CATALOG)
    ev = read_site_rows(root)
    assert [(f.name, f.status) for f in ev.folders] == [("study", "current"), ("study/old.parquet", "history"),
                                                         ("gate", "current")]
    cur = ev.current()
    assert list(zip(cur["run_id"], cur["backend"])) == [("new", "fla")]
    assert ev.current_folders == ["study"]
    site = build_site(root, tmp_path / "site", serving=serving_section)
    old = (site.out / "folder-study-old.parquet.html").read_text()
    assert 'href="folder-study.html"' in old and "the study on the old stack" in old


def test_the_serving_page_shows_the_winner_per_group_from_the_serving_folder(tmp_path):
    """The README catalog's serving folder is the serving page's evidence; its winners are the serving
    report's (analyze/serving/)."""
    import pandas as pd

    from qlabench.analyze.serving import build_serving
    from qlabench.store.files import write_table
    from serving_rows import fla_ms, fi_ms, serving_row
    import pyarrow as pa
    from qlabench.store.schema import arrow_schema

    rows = [serving_row(b, lay, n, f(n)) for n in (1, 16, 64, 256)
            for b, lay, f in (("fla-recurrent", "kv", fla_ms), ("flashinfer-decode-pt", "vk", fi_ms))]
    root = tmp_path / "results"
    (root / "h200-serving").mkdir(parents=True)
    write_table(root / "h200-serving" / "s.parquet", pa.Table.from_pandas(pd.DataFrame(rows), schema=arrow_schema(),
                                                                           preserve_index=False))
    site = build_site(root, tmp_path / "site", serving=serving_section)
    page = (site.out / "serving.html").read_text()
    expected = build_serving(pd.DataFrame(rows)).ranges["winners"].iloc[0]
    assert expected.startswith("1-16: fla-recurrent [kv]") and expected.replace("; ", "<br>") in page
    assert 'href="serving.html"' in (site.out / "index.html").read_text()
    assert any(p.name.startswith("serving_time_") for p in site.figures)
    # the site imports no serving view: without the section its caller hands in, it has no serving page
    bare = build_site(root, tmp_path / "bare", serving=None)
    assert not (bare.out / "serving.html").exists() and not any(p.name.startswith("serving_") for p in bare.figures)
    assert 'href="serving.html"' not in (bare.out / "index.html").read_text()


def test_the_serving_page_of_two_gpu_models_writes_file_safe_figures(tmp_path):
    """Serving rows of two GPU models draw a figure per model, its stem holding the model as the rows spell it
    ('NVIDIA H100 80GB HBM3'): the page still builds, its figure names made file-safe."""
    import pandas as pd
    import pyarrow as pa

    from qlabench.store.files import write_table
    from qlabench.store.schema import arrow_schema
    from serving_rows import fla_ms, serving_row

    rows = [{**serving_row("fla-recurrent", "kv", n, fla_ms(n)), "device": gpu, "run_id": gpu}
            for n in (1, 16) for gpu in ("NVIDIA H200", "NVIDIA H100 80GB HBM3")]
    root = tmp_path / "results"
    (root / "h200-serving").mkdir(parents=True)
    write_table(root / "h200-serving" / "s.parquet", pa.Table.from_pandas(pd.DataFrame(rows), schema=arrow_schema(),
                                                                           preserve_index=False))
    site = build_site(root, tmp_path / "site", serving=serving_section)
    names = [p.name for p in site.figures if p.name.startswith("serving_time_")]
    assert any("H100" in n for n in names) and all(" " not in n for n in names)


def test_a_tie_and_a_provisional_answer_are_never_counted_as_wins():
    from qlabench.analyze.answer.answer import CaseAnswer
    from qlabench.analyze.answer.question import Case
    from qlabench.analyze.answer.ranking import Entry
    from qlabench.analyze.site.pages import winners
    from qlabench.analyze.site.rankings import Ranking

    def entry(b, ms, noise=0.001):
        return Entry(b, b, None, "ok", time_ms=ms, rel_noise=noise)

    won = CaseAnswer(Case((4096,)), [entry("flashinfer", 0.10), entry("flash_qla", 0.12)], [], [])
    tie = CaseAnswer(Case((8192,)), [entry("flashinfer", 0.100, 0.01), entry("flashinfer-forcecp", 0.1005, 0.01)], [], [])
    prov = CaseAnswer(Case((16384,)), [entry("flash_qla", 0.1)], [], ["flashinfer"])
    q = make_question("qwen3.5-397b", 8, "prefill", "4096")
    text = winners(Ranking("qwen3.5-397b", 8, "prefill", q, [won, tie, prov]))
    assert text.startswith("fastest: flashinfer in 1 (of 3 cases)")
    assert "tied in 1" in text and "provisional in 1" in text and "forcecp" not in text and "flash_qla" not in text
