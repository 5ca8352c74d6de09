"""advise's printed answer (cli/answer_print.py, cli/answers.py) from synthetic rows: the answer first (a tie set
where the fastest are within their noise), a table where it fits, stacked where it does not, every column from one
list; the call's switches (analyze/answer/calls.py short_call) and the engines' flags (engines.py engine_flags)."""

from __future__ import annotations

from typer.testing import CliRunner

from qlabench.analyze.answer.calls import short_call
from qlabench.analyze.answer.engines import engine_flags
from qlabench.cli.app import app
from qlabench.store.files import write_rows

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", device="NVIDIA H200",
         flash_qla_version="0.1.3", fla_version="0.6.0", flashinfer_version="0.7.2.post1", timing_regime="sustained")


def _advise(tmp_path, make_row, width: int, specs) -> list[str]:
    rows = [make_row(**{**H, "backend": b, "run_id": "r1", "timestamp": "2026-01-01T00:00:00+00:00",
                        "median_ms": ms, "samples_ms": (ms,) * 3, "rel_noise": noise}) for b, ms, noise in specs]
    f = write_rows(tmp_path / "r.parquet", rows)
    r = CliRunner().invoke(app, ["advise", str(f), "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768"],
                           env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.output
    return r.output.splitlines()


ALL = [("flash_qla", 0.300, 0.01), ("flash_qla-nocp", 0.302, 0.01), ("flash_qla-forcecp", 0.5, 0.001),
       ("fla", 0.9, 0.001), ("fla-intracp", 3.0, 0.001), ("flashinfer", 0.6, 0.001), ("flashinfer-nocp", 0.7, 0.001),
       ("flashinfer-forcecp", 0.65, 0.001)]


def test_a_tie_is_named_first_with_every_backend_in_it(tmp_path, make_row):
    lines = _advise(tmp_path, make_row, 200, ALL)
    assert lines[1] == "32768 on NVIDIA H200: tie: flash_qla, flash_qla-nocp, 0.300-0.302 ms graph, 3.00x vs fla " \
                       "(within the measured spread)", lines[:3]
    assert lines[2] == "  call: flash_qla.chunk_gated_delta_rule(..., auto_cp=True)"
    assert lines[3:5] == ["  vLLM: no switch selects it", "  SGLang: no switch selects it"]


def test_the_ranking_is_a_table_where_it_fits_and_blocks_where_it_does_not(tmp_path, make_row):
    wide = _advise(tmp_path, make_row, 200, ALL)
    header = next(ln for ln in wide if ln.startswith("backend "))
    # rows that recorded only a device time: the eager and host columns have nothing to say and are left out
    assert header.split() == ["backend", "ms", "speedup", "device", "ms", "noise", "extra", "MiB", "check", "version",
                              "run"]
    assert any(ln.split()[:3] == ["flashinfer-forcecp", "0.650", "1.38x"] for ln in wide)
    narrow = _advise(tmp_path, make_row, 60, ALL)
    assert not any(ln.startswith("backend ") for ln in narrow)
    assert max(len(ln) for ln in narrow if str(tmp_path) not in ln) <= 60  # a path, one word, keeps its line
    assert any(ln.split()[:5] == ["5.", "flashinfer-forcecp", "0.650", "ms", "1.38x"] for ln in narrow), narrow
    at = next(i for i, ln in enumerate(narrow) if ln.split()[1:2] == ["flashinfer-forcecp"])
    # its other columns as 'header value' pairs under it, broken between pairs only
    assert narrow[at + 1:at + 4] == ["      device ms 0.650 · noise 0.1%",
                                     "      check ok 1e-06 oracle@full · version 0.7.2.post1", "      run A"]


def test_a_call_is_shortened_to_its_switches_and_an_engine_to_its_flag():
    assert short_call("flashinfer-forcecp") == "flashinfer.gdn_prefill.chunk_gated_delta_rule(..., use_cp=True)"
    assert short_call("fla").startswith("fla.ops.gated_delta_rule.chunk_gated_delta_rule(...) with FLA_FLASH_QLA=0")
    assert short_call("naive-chunk") is None
    assert engine_flags("flashinfer", "prefill", "NVIDIA H200") == [
        "vLLM: --gdn-prefill-backend flashinfer (its default on SM90)",
        "SGLang: --linear-attn-prefill-backend flashinfer (its default on SM90)"]
    assert engine_flags("fla", "prefill", "NVIDIA H200")[0] == "vLLM: --gdn-prefill-backend triton"
    assert engine_flags(None, "prefill", None) == []


def test_a_plugins_row_shows_its_packages_version_not_not_recorded(tmp_path, make_row):
    from qlabench.core import backend_decl
    from qlabench.core.decl_types import BackendDecl, Provider

    d = BackendDecl("my-gdn", "my kernel", "my_gdn.kernel:fn", roles=frozenset({"prefill"}),
                    provider=Provider("my-gdn-kernels", "1.2.0"))
    backend_decl.register(d)
    try:
        # as a plugin's rows were written before the version record: backend_dist and backend_version only
        plugin = make_row(**{**H, "backend": "my-gdn", "run_id": "r1", "timestamp": "2026-01-01T00:00:00+00:00",
                             "median_ms": 0.2, "samples_ms": (0.2,) * 3, "rel_noise": 0.01,
                             "backend_dist": "my-gdn-kernels", "backend_version": "1.2.0"})
        rows = [plugin] + [make_row(**{**H, "backend": b, "run_id": "r1", "timestamp": "2026-01-01T00:00:00+00:00",
                                       "median_ms": ms, "samples_ms": (ms,) * 3, "rel_noise": n}) for b, ms, n in ALL]
        f = write_rows(tmp_path / "r.parquet", rows)
        r = CliRunner().invoke(app, ["advise", str(f), "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768",
                                     "--current", "my-gdn"], env={"COLUMNS": "200"})
    finally:
        backend_decl.unregister(d.name)
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.split()[:1] == ["my-gdn"])
    assert "1.2.0" in line.split() and "not recorded" not in line, line
