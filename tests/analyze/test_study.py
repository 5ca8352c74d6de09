"""The FlashQLA study (qlabench/analyze/study): matching ours to the published table, the within-10%
count, explanations, auto-CP regret, the page and its PNGs, and `qlabench report`.

The rows come from tests/study_rows.py: published times scaled by known factors.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import study_rows
from study_rows import FQ_CP, FQ_NOCP, published_ms, row
from qlabench.analyze.study import build_study, load_published, study_from_paths, write_report
from qlabench.analyze.study.explain import explain_value
from qlabench.analyze.study.published import published_path
from qlabench.cli import app
from qlabench.core.errors import ConfigError, QlabenchError
from qlabench.core.point import FLASHQLA_GATE_SCALE

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ROOT = Path(__file__).resolve().parents[2]


def frame(pairs) -> pd.DataFrame:
    df = pd.DataFrame([r.as_dict() for r, _ in pairs])
    for axis in ("gate_zero_frac", "gate_scale"):
        df[axis] = pd.Series([g[axis] for _, g in pairs], dtype="float64")
    return df


@pytest.fixture(scope="module")
def study():
    return build_study(study_rows.study_frame())


def value(study, pub_id: int, backend: str) -> dict:
    c = study.comparison
    sub = c[(c["pub_id"] == pub_id) & (c["backend"] == backend)]
    assert len(sub) == 1
    return sub.iloc[0].to_dict()


# -- the published table ------------------------------------------------------------------------------
def test_the_packaged_table_is_the_reference_one():
    pub = load_published()
    assert len(pub) == 203
    assert (pub["mode"] == "fwd").sum() == 171 and (pub["mode"] == "bwd").sum() == 32
    assert pub.loc[pub["mode"] == "bwd", "by_totals"].all() and not pub.loc[pub["mode"] == "fwd", "by_totals"].any()
    assert pub["flashinfer_ms"].notna().sum() == 171
    reference = ROOT.parent / "shared" / "reference" / "flashqla_h200_published.csv"
    if reference.is_file():
        assert published_path().read_bytes() == reference.read_bytes()


def test_a_missing_or_malformed_table_is_a_clear_error(tmp_path):
    with pytest.raises(QlabenchError, match="no such published table"):
        load_published(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("mode,h_qk\nfwd,2\n")
    with pytest.raises(QlabenchError, match="missing columns"):
        load_published(bad)


# -- matching ------------------------------------------------------------------------------------------
def test_forward_rows_match_on_their_lengths_and_the_newest_stack_is_ours(study):
    v = value(study, 0, "flash_qla")  # h2/8 32768: 0.1.3 at 1.23x, 0.1.2 at 1.01x
    assert v["stack"].startswith("flash-qla 0.1.3")
    assert v["ours_ms"] == pytest.approx(published_ms("fwd", 2, 8, "flash_qla_ms", (32768,)) * 1.23)
    assert v["ratio"] == pytest.approx(1.23) and not v["within"]
    assert value(study, 7, "flash_qla")["sequences"] == "2x16384"
    assert study.primary["flash_qla"].startswith("flash-qla 0.1.3") and study.primary["fla"].startswith("fla 0.6.0")
    # Every published value has one comparison row, measured or not.
    assert len(study.comparison) == 171 * 3 + 32 * 2
    assert value(study, 1, "flash_qla")["explanation"] == "not measured"


def test_backward_rows_match_on_heads_total_and_count(study):
    pub = study.published
    pid = int(pub[(pub["mode"] == "bwd") & (pub["h_qk"] == 2) & (pub["total_tokens"] == 8192)
                  & (pub["num_seqs"] == 2)]["pub_id"].iloc[0])
    v = value(study, pid, "flash_qla")
    assert v["our_sequences"] == "3000+5192" and v["ratio"] == pytest.approx(1.3)
    assert value(study, pid, "fla")["ratio"] == pytest.approx(0.95)
    assert "flashinfer" not in set(study.comparison.loc[study.comparison["pub_id"] == pid, "backend"])
    bwd = study.published_wide("bwd")
    assert len(bwd) == 32 and "flashinfer ms" not in bwd.columns


def test_a_packed_varlen_row_beats_a_dense_one_of_the_same_lengths():
    fq = published_ms("fwd", 2, 8, "flash_qla_ms", (8192,))
    pairs = [row("flash_qla", "fwd", (8192,), 2, 8, fq * 2, layout="dense", kernels=FQ_NOCP,
                 timestamp="2026-12-02T00:00:00+00:00"),
             row("flash_qla", "fwd", (8192,), 2, 8, fq, kernels=FQ_NOCP)]
    s = build_study(frame(pairs))
    v = value(s, 2, "flash_qla")
    assert v["layout"] == "varlen" and v["ratio"] == pytest.approx(1.0)
    s = build_study(frame(pairs[:1]))  # dense only: matched, and the layout named as a difference
    v = value(s, 2, "flash_qla")
    assert v["layout"] == "dense" and "dense layout" in v["explanation"]


# -- counts and explanations ---------------------------------------------------------------------------
def test_within_ten_percent_counts(study):
    s = study.summary
    assert s.per_backend == {"flash_qla": (4, 203), "fla": (5, 203), "flashinfer": (4, 171)}
    assert s.n_rows == 203 and s.n_rows_within == 1  # only the bwd h2/4 8192/1 row meets every column
    assert s.line.startswith("1 of 203 rows within 10% of the published value")
    assert s.n_outside == 577 - 13 and (s.n_verified, s.n_unverified) == (3, 3)
    assert "3 with a cause a recorded comparison supports, 3 unverified" in s.line
    wider = build_study(study_rows.study_frame(), tolerance=0.25).summary
    assert wider.per_backend["flash_qla"] == (6, 203)  # the two 1.23x values join


def test_explanations_name_the_version_and_whether_intra_cp_launched(study):
    e = value(study, 0, "flash_qla")  # 0.1.2 re-run within 10%, CP on
    assert e["explanation"] == "slower: flash-qla 0.1.3 (published 0.1.2; 0.1.2 re-run within 10%)"
    assert "intra-CP warm-up kernel launched" in e["factors"] and "nocp 0.960 ms" in e["factors"]
    assert "not shown to matter: intra-CP on" in e["factors"]  # CP on in both versions: a condition
    e = value(study, 7, "flash_qla")  # no re-run on 0.1.2
    assert e["explanation"] == "slower: unverified: flash-qla 0.1.3 (published 0.1.2; no 0.1.2 run) · intra-CP on"
    assert "dominant kernel tilelang_fused_chunk_gdr_fwd_kernel_kernel (72%)" in e["factors"]
    assert value(study, 57, "fla")["explanation"] == "slower: fla 0.6.0 (published 0.5.1; 0.5.1 re-run within 10%)"


def test_an_explanation_says_when_intra_cp_did_not_launch():
    fq = published_ms("fwd", 16, 64, "flash_qla_ms", (32768,))
    pairs = [row("flash_qla", "fwd", (32768,), 16, 64, fq * 1.3, kernels=FQ_NOCP, sm_coverage=0.3),
             row("flash_qla-nocp", "fwd", (32768,), 16, 64, fq * 1.3, kernels=FQ_NOCP),
             row("flash_qla-forcecp", "fwd", (32768,), 16, 64, fq * 1.02, kernels=FQ_CP)]
    s = build_study(frame(pairs))
    e = value(s, 57, "flash_qla")
    assert e["explanation"] == "slower: forcecp within 10%"
    assert "no intra-CP warm-up kernel" in e["factors"] and "SM coverage 30%" in e["factors"]
    assert "intra-CP off; low SM coverage" in e["factors"]
    # Kernels not recorded: CP is unknown, and the label does not guess.
    s = build_study(frame([row("flash_qla", "fwd", (32768,), 16, 64, fq * 1.3)]))
    e = value(s, 57, "flash_qla")
    assert "intra-CP" not in e["explanation"] and "intra-CP unknown" in e["factors"]


def test_a_version_that_does_not_explain_the_gap_is_not_named():
    v = {"status": "ok", "backend": "flash_qla", "library": "flash_qla", "lib_version": "0.1.3",
         "stack": "flash-qla 0.1.3", "ours_ms": 1.3, "published_ms": 1.0, "ratio": 1.3, "cp_launched": True,
         "gate_label": "flashqla", "timer": "graph"}
    other = {"lib_version": "0.1.2", "stack": "flash-qla 0.1.2", "ours_ms": 1.25, "ratio": 1.25}
    e = explain_value(v, 0.10, others=[other])
    assert e.label == "slower: unverified: intra-CP on"
    assert any("not the version alone" in f for f in e.factors)
    e = explain_value({**v, "timer": "events"}, 0.10)
    assert "timer events (published: CUDA graph)" in e.label


def test_non_ok_rows_carry_status_and_reason_and_never_a_number(study):
    v = value(study, 2, "flashinfer")  # skipped
    assert v["status"] == "skipped" and pd.isna(v["ours_ms"]) and pd.isna(v["ratio"]) and not v["within"]
    assert v["explanation"].startswith("skipped: flashinfer unavailable")
    assert "gdn_prefill_sm90 not built (JIT takes ~12 min)" in v["factors"]
    assert value(study, 57, "flashinfer")["explanation"] == "incorrect: o rel err # > #"
    assert value(study, 38, "fla")["explanation"].startswith("error: timed out")
    fwd = study.published_wide("fwd").set_index("sequences")
    h28 = study.published_wide("fwd")
    r = h28[(h28["heads"] == "h2/8") & (h28["sequences"] == "8192")].iloc[0]
    assert r["flashinfer ms"] == "skipped" and pd.isna(r["flashinfer ratio"]) and pd.isna(r["speedup vs flashinfer"])
    assert len(fwd) == 171
    sp = study.speedups
    pt = sp[(sp["match_key"] == "fwd|2/8|8192") & (sp["baseline"] == "flashinfer")].iloc[0]
    assert pd.isna(pt["speedup"]) and pt["published_speedup"] == pytest.approx(0.417 / 0.119)


def test_explanation_groups(study):
    g = study.by_explanation()
    assert g.iloc[0]["explanation"] == "not measured"
    assert g.iloc[-1]["explanation"] == "within 10%" and g.iloc[-1]["values"] == 13
    assert g["values"].sum() == len(study.comparison)


# -- regret, gates, versions -----------------------------------------------------------------------------
def test_regret_is_auto_over_the_better_fixed_choice(study):
    r = study.regret
    lost = r.iloc[0]
    assert lost["heads"] == "h8/32" and lost["best"] == "nocp" and lost["auto_cp"] is True
    assert lost["regret"] == pytest.approx(1.41 / 1.31)
    h16 = r[r["heads"] == "h16/64"].iloc[0]
    assert h16["regret"] == pytest.approx(1.0) and h16["auto_cp"] is False and h16["best"] == "nocp"
    assert set(r["library"]) == {"flash-qla"}
    # A point without every pinned variant (the gate-scale sweep has no forcecp) takes the one it has and says
    # so: its regret is a lower bound.
    full = r[r["unmeasured"].isna()]
    assert set(full["gate_scale_eff"]) == {FLASHQLA_GATE_SCALE} and (full["regret"] >= 1.0 - 1e-12).all()
    partial = r[r["unmeasured"].notna()]
    assert not partial.empty and set(partial["gate_scale_eff"]) >= {4.0, 64.0}
    assert partial["forcecp_ms"].isna().all() and (partial["best"] == "nocp").all()
    assert (partial["unmeasured"] == "forcecp not measured: a lower bound").all()


def test_regret_ignores_rows_that_are_not_ok():
    fq = published_ms("fwd", 2, 8, "flash_qla_ms", (32768,))
    pairs = [row("flash_qla", "fwd", (32768,), 2, 8, fq, kernels=FQ_CP),
             row("flash_qla-nocp", "fwd", (32768,), 2, 8, status="error", reason="crashed"),
             row("flash_qla-forcecp", "fwd", (32768,), 2, 8, fq, kernels=FQ_CP)]
    (r,) = build_study(frame(pairs)).regret.to_dict("records")
    assert r["best"] == "forcecp" and r["nocp_ms"] is None and r["unmeasured"].startswith("nocp not measured")
    pairs[2] = row("flash_qla-forcecp", "fwd", (32768,), 2, 8, status="error", reason="crashed")
    assert build_study(frame(pairs)).regret.empty  # no pinned setting ok: no ratio


def test_gate_sweeps(study):
    z = study.gate_zero_frac
    assert set(z.loc[z["backend"] == "flash_qla", "value"]) == {0.0, 0.25, 0.5}
    assert set(z["backend"]) == {"flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "fla"}
    s = study.gate_scale
    assert set(s.loc[s["backend"] == "flash_qla", "value"]) == {4.0, FLASHQLA_GATE_SCALE, 64.0}


def test_two_stacks_are_compared_point_by_point(study):
    fq = study.stacks["flash_qla"]
    assert len(fq) == 2 and fq["explains"].all()
    assert list(fq.columns[4:6]) == ["flash-qla 0.1.3 + tilelang 0.1.15 ms", "flash-qla 0.1.2 + tilelang 0.1.9 ms"]
    assert study.stacks["fla"]["explains"].tolist() == [True]
    v = study.versions
    assert {"0.1.3", "0.1.2"} <= set(v["flash-qla"]) and "NVIDIA H200 (published)" in set(v["device"])


def test_modes_without_a_published_counterpart_are_kept_generically():
    pairs = [row("flash_qla", "bwd_train", (8192,), 2, 8, 0.5, kernels=FQ_CP),
             row("fla", "bwd_train", (8192,), 2, 8, 1.0)]
    s = build_study(frame(pairs))
    assert s.comparison["status"].isna().all()
    t = s.unpublished_modes()["bwd_train"]
    assert t.iloc[0]["speedup vs fla"] == pytest.approx(2.0)
    assert set(s.speedups.loc[s.speedups["mode"] == "bwd_train", "speedup"]) == {2.0}


# -- the page --------------------------------------------------------------------------------------------
def test_the_page_and_its_pngs_are_written(study, tmp_path):
    files = write_report(study, tmp_path / "report")
    text = files.page.read_text()
    assert files.page.name == "report.md" and study.summary.line in text
    for heading in ("## Speedup curves", "## Ours against published", "### Values grouped by explanation",
                    "## Backward", "## Gate values", "## Auto-CP regret", "## Library versions",
                    "## The same points on two library stacks"):
        assert heading in text
    names = {p.name for p in files.figures}
    assert names == {"speedup_fwd.png", "speedup_bwd.png", "speedup_fwd_bwd.png", "published_vs_ours.png", "heads_coverage.png",
                     "gate_gate_zero_frac.png", "gate_gate_scale.png", "cp_regret.png"}
    for p in files.figures:
        assert p.read_bytes()[:8] == PNG_MAGIC and f"]({p.name})" in text
    # A skipped row shows as its status in the tables, never as a time.
    assert "| skipped |" in text or "| skipped" in text
    assert "timed out after 600 s" in text


def test_a_page_without_gate_sweeps_or_variants_says_so(tmp_path):
    fq = published_ms("fwd", 2, 8, "flash_qla_ms", (32768,))
    s = build_study(frame([row("flash_qla", "fwd", (32768,), 2, 8, fq, kernels=FQ_CP)]))
    files = write_report(s, tmp_path)
    text = files.page.read_text()
    assert "No gate sweep in these results" in text and "No point has `flash_qla` and one of" in text
    assert not any(p.name.startswith(("gate_", "cp_regret")) for p in files.figures)


# -- the committed fixture, the CLI, the layering -------------------------------------------------------------
def test_the_committed_fixture_is_the_scenario():
    """tests/data/study/ is the notebook's fallback: regenerate it with `python tests/study_rows.py`."""
    from qlabench.store.files import read_results

    got = read_results([study_rows.FIXTURE])
    want = study_rows.study_frame()
    key = ["backend", "mode", "run_id", "timestamp", "h_qk", "h_v", "status"]
    g = got.assign(seq=got["seqlens"].map(tuple))[key + ["seq", "median_ms"]]
    w = want.assign(seq=want["seqlens"].map(tuple))[key + ["seq", "median_ms"]]
    sort = key + ["seq", "median_ms"]
    pd.testing.assert_frame_equal(g.sort_values(sort).reset_index(drop=True).astype(object),
                                  w.sort_values(sort).reset_index(drop=True).astype(object))


def test_cli_report_writes_the_page(tmp_path):
    out = tmp_path / "rep"
    r = CliRunner().invoke(app, ["report", str(study_rows.FIXTURE.parent), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "of 203 rows within 10%" in r.stdout and (out / "report.md").is_file()
    assert any(out.glob("*.png"))


def test_cli_report_of_a_missing_path_exits_2_with_one_line(tmp_path):
    r = CliRunner().invoke(app, ["report", str(tmp_path / "nope"), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 2
    assert "no such file or folder" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "rep").exists()
    r = CliRunner().invoke(app, ["report", str(study_rows.FIXTURE.parent), "--published", str(tmp_path / "x.csv"),
                                 "--out", str(tmp_path / "rep")])
    assert r.exit_code == 2 and "no such published table" in r.stderr


def test_study_from_paths_reads_files_and_folders():
    s = study_from_paths([study_rows.FIXTURE])
    assert s.sources == (str(study_rows.FIXTURE),) and s.summary.per_backend["flash_qla"] == (4, 203)


def test_report_gpu_holds_the_study_to_one_gpu_model(tmp_path):
    """An H100 run beside the H200 evidence: the H200's table is compared with the H200's rows, by default too (the
    H100's left out and named: its newer row of a point must not stand in for the H200's); `--gpu H100` compares
    the H100's rows with it, as a cross-GPU table; a model with no row is one message; --gpu is the study page's
    only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(study_rows.FIXTURE).slice(0, 5)  # its schema metadata kept: a results file
    for name, value in (("device", "NVIDIA H100 80GB HBM3"), ("run_id", "h100-run")):
        t = t.set_column(t.schema.get_field_index(name), name, pa.array([value] * 5, t.schema.field(name).type))
    pq.write_table(t, tmp_path / "h100.parquet")
    both = study_from_paths([study_rows.FIXTURE, tmp_path / "h100.parquet"])
    held = study_from_paths([study_rows.FIXTURE, tmp_path / "h100.parquet"], gpu="H200")
    other = study_from_paths([study_rows.FIXTURE, tmp_path / "h100.parquet"], gpu="H100")
    assert "h100-run" not in set(both.rows["run_id"]) and "h100-run" not in set(held.rows["run_id"])
    assert any("5 rows of NVIDIA H100 80GB HBM3 left out" in line for line in both.apart)
    assert len(both.rows) == len(held.rows) == len(study_from_paths([study_rows.FIXTURE]).rows)
    assert set(other.rows["run_id"]) == {"h100-run"} and "cross-GPU table" in other.summary.cross_gpu
    with pytest.raises(ConfigError, match="--gpu GB200: no row of that GPU model"):
        study_from_paths([study_rows.FIXTURE], gpu="GB200")
    r = CliRunner().invoke(app, ["report", "--serving", str(tmp_path), "--gpu", "H200", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--gpu belongs to the study page" in r.stderr


def test_the_study_imports_neither_torch_nor_a_backend():
    code = ("import sys, qlabench.analyze.study.page, qlabench.cli.report; "
            "bad = [m for m in sys.modules if m == 'torch' or m.startswith(('qlabench.backends', 'qlabench.run', "
            "'qlabench.measure'))]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def test_results_with_no_ok_row_still_give_a_page_and_no_number(tmp_path):
    pairs = [row("flash_qla", "fwd", (32768,), 2, 8, status="skipped", reason="no GPU")]
    s = build_study(frame(pairs))
    assert s.summary.per_backend["flash_qla"] == (0, 203) and value(s, 0, "flash_qla")["explanation"] == \
        "skipped: no GPU"
    files = write_report(s, tmp_path)
    assert files.figures == () and "skipped: no GPU" in files.page.read_text()
    assert s.speedups["speedup"].isna().all() and s.regret.empty


@pytest.mark.parametrize("tolerance", ["inf", "1e308", "1.5"])
def test_report_refuses_a_tolerance_out_of_range_before_reading(tmp_path, tolerance):
    r = CliRunner().invoke(app, ["report", str(tmp_path / "nope"), "--out", str(tmp_path / "rep"),
                                 "--tolerance", tolerance])
    assert r.exit_code == 2 and "--tolerance must be" in r.output, r.output


@pytest.mark.parametrize("tolerance", [float("inf"), 1e308, float("nan"), -0.1])
def test_a_study_refuses_a_tolerance_out_of_range(tolerance):
    with pytest.raises(QlabenchError, match="--tolerance must be"):
        build_study(pd.DataFrame(), tolerance=tolerance)


def test_every_forward_row_names_the_runs_its_speedups_divide():
    from study_rows import published_ms, row

    fq = published_ms("fwd", 2, 8, "flash_qla_ms", (32768,))
    fla = published_ms("fwd", 2, 8, "fla_ms", (32768,))
    one = [row("flash_qla", "fwd", (32768,), 2, 8, fq, run_id="A"), row("fla", "fwd", (32768,), 2, 8, fla, run_id="A")]
    mixed = [row("flash_qla", "fwd", (32768,), 2, 8, fq, run_id="A"), row("fla", "fwd", (32768,), 2, 8, fla, run_id="B")]
    for rows, want in ((one, "A"), (mixed, "A, B")):
        wide = build_study(pd.DataFrame([r.as_dict() for r, _ in rows])).published_wide("fwd")
        r = wide[(wide["heads"] == "h2/8") & (wide["sequences"] == "32768")].iloc[0]
        assert r["runs"] == want and r["speedup vs fla"] == pytest.approx(fla / fq)


def test_without_paths_the_study_reads_the_current_evidence_and_lists_the_history(tmp_path, monkeypatch):
    from qlabench.store.files import write_rows

    fq = published_ms("fwd", 2, 8, "flash_qla_ms", (32768,))
    res = tmp_path / "results"
    (res / "now").mkdir(parents=True)
    write_rows(res / "now" / "a.parquet", [row("flash_qla", "fwd", (32768,), 2, 8, fq, run_id="now")[0]])
    write_rows(res / "now" / "old.parquet", [row("flash_qla", "fwd", (32768,), 2, 8, fq * 3, run_id="old",
                                                 timestamp="2026-12-02T00:00:00+00:00")[0]])
    entry = '[[entry]]\npath = "{}"\nkind = "kernel-timings"\nstatus = "{}"\ndate = 2026-12-01\nquestion = "{}"\nstack = {{}}\n'
    (res / "catalog.toml").write_text("format = 1\n" + entry.format("now", "current", "today") +
                                      entry.format("now/old.parquet", "history", "yesterday") + 'superseded_by = "now"\n')
    monkeypatch.chdir(tmp_path)
    s = study_from_paths((), command="qlabench report --out x")
    assert s.sources == ("results/now",) and set(s.rows["run_id"]) == {"now"}
    assert len(s.history) == 1 and s.history[0].startswith("`results/now/old.parquet`") and "yesterday" in s.history[0]
    page = write_report(s, tmp_path / "page").page.read_text()
    assert "Made by `qlabench report --out x`" in page and "`results/now/old.parquet`" in page


def _overlapping_ticks(fig) -> list[str]:
    """Visible tick labels of one axis of one panel that overlap each other."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # the study's figures are bare Figures, drawn only when saved
    canvas.draw()
    r = canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            boxes = [(t.get_text(), t.get_window_extent(r)) for t in axis.get_ticklabels(which="both")
                     if t.get_visible() and t.get_text()]
            bad += [f"{ax.get_title()}: {a!r} over {b!r}" for i, (a, ba) in enumerate(boxes)
                    for b, bb in boxes[i + 1:] if ba.overlaps(bb)]
    return bad


def test_published_vs_ours_tick_labels_do_not_overlap():
    """The committed backward panel printed every minor tick's label (3x10^-1 4x10^-1 ... run together)."""
    from qlabench.analyze.study.figures import published_figure

    s = study_from_paths([Path(__file__).resolve().parents[2] / "results" / "h200-study"])
    (stem, fig), = published_figure(s)
    assert stem == "published_vs_ours"
    assert _overlapping_ticks(fig) == []


def test_the_study_reads_the_sustained_regime_and_says_how_many_rows_are_in_it():
    """A point's sustained row supersedes a newer burst row of the same stack; the page's regime line counts
    the rows in each regime and names the backends timed in bursts."""
    from qlabench.analyze.study.page import regime_line

    s = (32768,)
    pairs = [row("flash_qla", "fwd", s, 2, 8, 0.39, timing_regime="sustained", run_id="s",
                 timestamp="2026-12-01T10:00:00+00:00"),
             row("flash_qla", "fwd", s, 2, 8, 0.37, timing_regime="burst", run_id="b",
                 timestamp="2026-12-02T10:00:00+00:00"),
             row("fla", "fwd", s, 2, 8, 0.92, run_id="b", timestamp="2026-12-02T10:00:00+00:00")]
    st = build_study(frame(pairs))
    fq = st.rows[st.rows["backend"] == "flash_qla"]
    assert fq["median_ms"].tolist() == [0.39]
    line = regime_line(st.rows)
    assert line.startswith("Timing regime: 1 of 2 timed rows in the sustained regime") and "(fla 1)" in line
    only = build_study(frame(pairs[:1]))
    assert regime_line(only.rows).endswith("which supersedes a point's rows in another regime.")


def test_rows_held_to_an_sm_budget_never_stand_for_a_published_whole_gpu_point(study):
    """A row of a green context of 32 SMs measured another problem than the published table's: the study
    compares the whole-GPU rows only (a budget row once counted as a FlashInfer row 'not ok')."""
    rows = study_rows.study_frame()
    held = rows.assign(sm_budget=32, median_ms=rows["median_ms"] * 5, run_id="held",
                       timestamp="2099-01-01T00:00:00+00:00")  # newer, slower, and at 32 SMs
    both = build_study(pd.concat([rows.assign(sm_budget=None), held], ignore_index=True))
    assert both.summary == study.summary
    assert len(both.rows) == len(study.rows) and both.rows["sm_budget"].isna().all()


def test_the_study_reads_a_run_s_replicates_as_one_row_at_their_median(tmp_path):
    """A study run with --replicates: the page's time for a point is the median of its replicates (as advise ranks
    it), never whichever replicate was written last."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    one = pq.read_table(study_rows.FIXTURE).slice(0, 1)  # its schema metadata kept: a results file
    df = one.to_pandas()
    point = df.iloc[0]
    reps = pd.concat([df] * 3, ignore_index=True)
    times = [point["median_ms"] * f for f in (1.0, 1.1, 1.3)]  # the newest (1.3x) is not the median (1.1x)
    reps["replicate"] = [0, 1, 2]
    reps["median_ms"] = times
    reps["samples_ms"] = [[t] * 3 for t in times]
    reps["timestamp"] = [(pd.Timestamp(point["timestamp"]) + pd.Timedelta(seconds=k)).isoformat() for k in range(3)]
    pq.write_table(pa.Table.from_pandas(reps, schema=one.schema, preserve_index=False), tmp_path / "replicated.parquet")
    rows = study_from_paths([tmp_path / "replicated.parquet"]).rows
    (got,) = rows[rows["backend"] == point["backend"]]["median_ms"]
    assert got == pytest.approx(times[1])
