"""The numerics page (analyze/numerics.py, numerics_page.py): error against T and gate regime, the worst
cases, and every point outside tolerance, from synthetic rows checked against fp64-full."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from qlabench.analyze.numerics import table as nm
from qlabench.analyze.numerics.page import is_numerics, write_numerics
from qlabench.cli import app
from qlabench.store.files import write_rows

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def rows(make_row, over: bool = False):
    """Backends a and b, bf16, at T = 1024 / 4096 / 16384 (published gate) and three gate regimes at 4096;
    with `over`, b's dg at 16384 is 2x its tolerance (an incorrect row)."""
    out = []
    for b, scale in (("a", 1.0), ("b", 1.5)):
        for T in (1024, 4096, 16384):
            bad = over and b == "b" and T == 16384
            out.append(make_row(backend=b, mode="bwd_train", dtype="bfloat16", seqlens=(T,), total_tokens=T,
                                oracle=f"fp64-full float64 @{T} tokens", check_tokens=T,
                                status="incorrect" if bad else "ok", median_ms=None if bad else 1.0,
                                err_o=0.001 * scale * T / 1024, err_ht=0.002 * scale, err_dg=0.07 if bad else 0.005))
        for z in (0.0, 1.0):
            out.append(make_row(backend=b, mode="bwd_train", dtype="bfloat16", seqlens=(4096,), total_tokens=4096,
                                gate_zero_frac=z, oracle="fp64-full float64 @4096 tokens", check_tokens=4096,
                                err_o=0.002 * scale, err_ht=0.003 * scale * (1 + z), err_dg=0.004))
    out.append(make_row(backend="c", status="skipped", reason="unsupported: K = 16", dtype="bfloat16"))
    return out


def frame(rs) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rs])


def test_the_tables_read_errors_against_the_tolerance(make_row):
    errs = nm.long_errors(frame(rows(make_row)))
    t = nm.error_vs_t(errs).set_index(["tensor", "backend"])
    assert list(t.columns[1:]) == ["T=1k", "T=4k", "T=16k"]
    assert t.loc[("o", "b"), "T=16k"] == pytest.approx(0.024)  # 0.001 * 1.5 * 16
    g = nm.error_vs_gate(errs)
    assert int(g["T"].iloc[0]) == 4096 and {"flashqla", "flashqla(zero=0)", "flashqla(zero=1)"} <= set(g.columns)
    worst = nm.worst_per_tensor(errs).set_index("tensor")
    assert worst.loc["o", "backend"] == "b" and worst.loc["o", "margin"] == pytest.approx(0.02 / 0.024)
    over = nm.over_tolerance(errs)
    assert list(over["tensor"]) == ["o"] and over["total_tokens"].tolist() == [16384]  # b's o at 16k: 1.2x
    assert "1 point(s) outside tolerance" in nm.verdict(errs)


def test_the_page_lists_every_point_outside_tolerance(tmp_path, make_row):
    files = write_numerics(frame(rows(make_row, over=True)), tmp_path, ["results/x"])
    text = files.page.read_text()
    assert "## Error against T" in text and "## Error against the gate regime" in text and "## Worst cases" in text
    section = text.split("## Outside tolerance")[1]
    assert "| b | bwd_train |" in section and "dg" in section and "incorrect" in section
    assert "unsupported: K = 16" in text  # the refused point, with its reason
    assert files.figures and all(f.read_bytes().startswith(PNG_MAGIC) for f in files.figures)
    assert {f.stem for f in files.figures} == {"error_vs_T_bwd_train", "error_vs_gate_bwd_train"}


def test_with_nothing_outside_tolerance_the_page_says_none_and_the_smallest_margin(tmp_path, make_row):
    rs = [r for r in rows(make_row) if not (r.backend == "b" and r.total_tokens == 16384)]
    text = write_numerics(frame(rs), tmp_path).page.read_text()
    assert "None. No point is outside tolerance. The smallest margin is" in text


def test_report_on_a_numerics_folder_writes_the_numerics_page(tmp_path, make_row, monkeypatch):
    write_rows(tmp_path / "num" / "run.parquet", rows(make_row))
    assert is_numerics(frame(rows(make_row)))
    assert not is_numerics(frame([make_row(oracle="naive-recurrent float32 @64 tokens")]))
    r = CliRunner().invoke(app, ["report", str(tmp_path / "num"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "numerics.md").is_file() and not (tmp_path / "out" / "report.md").exists()
    # With no results, the study page reads the current evidence of the catalog (here, a small one), and
    # --numerics writes its page beside it.
    write_rows(tmp_path / "results" / "now" / "run.parquet", [make_row(oracle="naive-recurrent float32 @64 tokens")])
    (tmp_path / "results" / "catalog.toml").write_text(
        'format = 1\n[[entry]]\npath = "now"\nkind = "kernel-timings"\nstatus = "current"\ndate = 2026-12-01\n'
        'question = "q"\nstack = {}\n')
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["report", "--numerics", str(tmp_path / "num"), "--out", str(tmp_path / "o2")])
    assert r.exit_code == 0 and (tmp_path / "o2" / "numerics.md").is_file()
    r = CliRunner().invoke(app, ["report", "--out", str(tmp_path / "o3")])
    assert r.exit_code == 0, r.output
    assert "Results: `results/now`" in (tmp_path / "o3" / "report.md").read_text()


def _inside_and_clear(fig) -> list[str]:
    """What is wrong with a figure's legend: outside the figure (clipped), or over a panel or its labels."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    figbox = fig.bbox
    problems = []
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        if box.x0 < figbox.x0 - 1 or box.x1 > figbox.x1 + 1 or box.y0 < figbox.y0 - 1 or box.y1 > figbox.y1 + 1:
            problems.append(f"legend {box} outside the figure {figbox}")
        for ax in fig.axes:
            if ax.get_visible() and box.overlaps(ax.get_tightbbox(renderer)):
                problems.append(f"legend over the panel {ax.get_title()!r}")
    return problems


def test_error_vs_t_legend_is_inside_the_figure_and_clear_of_the_panels(make_row):
    """The committed error_vs_T_fwd.png cut its legend at both sides and laid it over the x labels."""
    from qlabench.analyze.numerics.page import error_vs_t_figures

    backends = ("fla", "fla-intracp", "flash_qla", "flash_qla-forcecp", "flash_qla-nocp", "flashinfer", "naive-chunk")
    rs = []
    for b in backends:
        for T in (1024, 8192, 32768):
            rs.append(make_row(backend=b, mode="fwd", dtype="bfloat16", seqlens=(T,), total_tokens=T,
                               oracle=f"fp64-full float64 @{T} tokens", check_tokens=T, err_o=0.004, err_ht=0.003))
        rs.append(make_row(backend=b, mode="fwd", dtype="bfloat16", layout="varlen", seqlens=(16384, 16384),
                           num_seqs=2, total_tokens=32768, oracle="fp64-full float64 @32768 tokens",
                           check_tokens=32768, err_o=0.005, err_ht=0.003))
    (stem, fig), = error_vs_t_figures(nm.long_errors(frame(rs)))
    assert stem == "error_vs_T_fwd"
    assert _inside_and_clear(fig) == []


def test_a_serving_row_is_judged_by_its_state_dtype_as_its_run_judged_it(make_row):
    # float32 inputs, a bfloat16 state pool: the run held ht to bfloat16's tolerance (the less precise), and
    # 1.66e-3 is inside it; against float32's 1e-4 it would be a false failure.
    r = make_row(backend="fla-recurrent", mode="decode", dtype="float32", state_dtype="bfloat16", state_layout="kv",
                 pool=8, layout="dense", batch=4, seqlens=(1,) * 4, num_seqs=4, total_tokens=4, gate="fla",
                 oracle="naive-recurrent float32 @4 tokens", check_tokens=4, err_o=1e-3, err_ht=1.66e-3, err_pool=0.0)
    errs = nm.long_errors(frame([r]))
    assert nm.over_tolerance(errs).empty
    assert nm.verdict(errs).startswith("No point is outside tolerance")
    # A prefill row of float32 keeps float32's tolerance (state_dtype is a serving axis only).
    p = make_row(dtype="float32", oracle="naive-recurrent float32 @64 tokens", check_tokens=64, err_ht=1.66e-3)
    assert len(nm.over_tolerance(nm.long_errors(frame([p])))) == 1
