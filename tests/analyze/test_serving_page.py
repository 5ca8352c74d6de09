"""The serving page and `qlabench report --serving` on synthetic decode/mtp rows (tests/serving_rows.py)."""

from __future__ import annotations

from typer.testing import CliRunner

import serving_rows as sr
from qlabench.analyze.serving import build_serving, write_serving
from qlabench.analyze.serving.figures import serving_figures
from qlabench.cli import app


def test_the_page_has_its_tables_and_figures_beside_it(tmp_path):
    s = build_serving(sr.rows())
    files = write_serving(s, tmp_path, command="qlabench report --serving results/x")
    page = files.page.read_text()
    assert files.page == tmp_path / "serving.md"
    names = sorted(p.name for p in files.figures)
    # decode T=1 fp32, mtp T=2 fp32 and bf16: a time figure and a %-of-limit figure each
    assert names == sorted(f"serving_{k}_{m}_T{t}_{d}.png" for k in ("time", "hbm")
                           for m, t, d in (("decode", 1, "float32"), ("mtp", 2, "float32"), ("mtp", 2, "bfloat16")))
    assert all(f"]({n})" in page for n in names) and all((tmp_path / n).stat().st_size > 0 for n in names)
    assert "1-16: fla-recurrent [kv]; 64-256: flashinfer-decode-pt [vk]" in page
    assert "`qlabench report --serving results/x`" in page
    assert "pool layout vk unsupported" in page  # the skipped rows' reason
    assert "| over 100% |" in page and "hbm_frac 1.30 > 1" in page
    assert "read 4.00 TB/s" in page


def test_a_figure_the_new_page_does_not_draw_is_removed_and_other_files_stay(tmp_path):
    write_serving(build_serving(sr.rows()), tmp_path)
    assert (tmp_path / "serving_time_mtp_T2_bfloat16.png").exists()
    (tmp_path / "notes.png").write_bytes(b"mine")
    files = write_serving(build_serving(sr.rows().query("state_dtype != 'bfloat16'")), tmp_path)
    assert not (tmp_path / "serving_time_mtp_T2_bfloat16.png").exists()
    assert sorted(tmp_path.glob("serving_*.png")) == sorted(files.figures)
    assert (tmp_path / "notes.png").read_bytes() == b"mine"  # not a figure of the page: left alone


def test_without_measured_peaks_no_fraction_figure_is_drawn(tmp_path):
    s = build_serving(sr.rows().assign(hbm_frac=None, hbm_peak_read_tbs=None, hbm_peak_write_tbs=None))
    stems = [stem for stem, _ in serving_figures(s)]
    assert stems and all(st.startswith("serving_time_") for st in stems)


def test_a_hostile_row_value_cannot_place_a_figure_outside_the_folder(tmp_path):
    out = tmp_path / "a" / "b"
    files = write_serving(build_serving(sr.rows().assign(state_dtype="../../../escaped")), out)
    assert files.figures and all(p.parent == out and p.exists() for p in files.figures)
    assert sorted(tmp_path.rglob("*.png")) == sorted(files.figures)


def test_report_serving_writes_the_page_and_prints_the_winners(tmp_path, monkeypatch):
    import qlabench.analyze.evidence.tree as tree

    monkeypatch.setattr(tree, "read_results", lambda paths, columns=None, source=False: sr.rows())
    out = tmp_path / "page"
    r = CliRunner().invoke(app, ["report", "--serving", str(tmp_path / "results"), "--out", str(out)],
                           terminal_width=200)
    assert r.exit_code == 0, r.output
    assert (out / "serving.md").exists() and len(list(out.glob("*.png"))) == 6
    assert "64-256:" in r.output and "flashinfer-decode-pt" in r.output and "│  38.8 │" in r.output
    assert "1 above 100% of the bandwidth limit" in r.output


def test_report_serving_refuses_study_options_and_results_without_serving_rows(tmp_path, make_row):
    from qlabench.store.files import write_rows

    r = CliRunner().invoke(app, ["report", "--serving", str(tmp_path), "--layer", str(tmp_path)])
    assert r.exit_code == 2 and "belong to the study page" in r.output
    write_rows(tmp_path / "res" / "run.parquet", [make_row()])
    r = CliRunner().invoke(app, ["report", "--serving", str(tmp_path / "res"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no serving rows" in r.output


def test_an_l2_resident_row_shows_no_share_of_hbm_anywhere(tmp_path):
    """Decode at batch 1 keeps its states in L2 (the run said so): its time says nothing of HBM, so no view
    prints a percentage for it; the page, its tables and `report --serving` say L2-resident instead."""
    from qlabench.analyze.serving.frame import hbm_text
    from qlabench.cli.views import serving_rich_table

    s = build_serving(sr.rows())
    one = s.rows[(s.rows["mode"] == "decode") & (s.rows["batch"] == 1) & s.rows["usable"]]
    assert len(one) == 2 and one["l2_resident"].eq(True).all() and one["pct_hbm"].isna().all()
    assert one["hbm_frac"].notna().all()  # the row keeps its number; no view shows it as a share of HBM
    w = s.winners.set_index(["mode", "batch"]).loc[("decode", 1)]
    assert hbm_text(w["pct_hbm"], w["l2_resident"]) == "L2-resident"
    page = write_serving(s, tmp_path).page.read_text()
    pcts = (100 * one["hbm_frac"]).tolist()
    lines = [ln for ln in page.splitlines() if ln.startswith("| qwen3.5-397b TP8 (h2/8) · T=1 · state float32 | 1 |")
             and "| fla-recurrent [vk] | skipped |" not in ln]
    assert len(lines) == 2  # the winners table and the table of every variant
    assert all("L2-resident" in ln for ln in lines)
    assert not any(f"{p:.0f}%" in ln or f"| {p:.1f} |" in ln for ln in lines for p in pcts)
    # every bit of the console table: a group whose largest winning batch was L2-resident says so
    ranges = s.ranges.assign(l2_at_largest=True)
    from rich.console import Console

    con = Console(width=250, record=True)
    con.print(serving_rich_table(ranges))
    assert con.export_text().count("L2-resident") == len(ranges)


def test_the_page_says_the_fla_rows_are_a_gather_and_scatter_around_a_kernel_without_a_pool(tmp_path):
    page = write_serving(build_serving(sr.rows()), tmp_path).page.read_text()
    (fla,) = [ln for ln in page.splitlines() if ln.startswith("| fla-recurrent |")]
    assert "gather + kernel + scatter" in fla and "not FLA as an engine runs it" in fla
    (fi,) = [ln for ln in page.splitlines() if ln.startswith("| flashinfer-decode-pt |")]
    assert "slot indices in the kernel" in fi
