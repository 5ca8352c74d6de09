"""`docs render` rewrites stale blocks from the data; `docs check` names them and writes nothing; the blocks
read the catalog's current evidence."""

from __future__ import annotations

import pytest

from qlabench_publish.blocks import BlockContext, check_files, render_files
from qlabench_publish.blocks.markers import BlockError
from qlabench_publish.cli.blocks_registry import BLOCKS
from qlabench.store.catalog import load_catalog
from qlabench.store.files import read_rows, write_rows

ROW = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
           num_seqs=1, timer="graph", rel_noise=0.003, fla_version="0.6.0", flash_qla_version="0.1.3",
           flashinfer_version="0.7.2.post1")


@pytest.fixture
def ctx(tmp_path, make_row):
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    rows = []
    for backend, ms, split in (("flashinfer", 0.125, True), ("flashinfer-nocp", 0.052, False), ("fla", 0.137, None),
                               ("flash_qla", 0.062, None)):
        extra = {"extra_json": f'{{"flashinfer_cp": {str(split).lower()}}}'} if split is not None else {}
        rows.append(make_row(**ROW, backend=backend, seqlens=(1024,) * 8, total_tokens=8192, median_ms=ms,
                             samples_ms=(ms,) * 3, run_id="R1", timestamp="2026-12-01T00:00:00+00:00", **extra))
    write_rows(res / "run" / "R1.parquet", rows)
    (res / "catalog.toml").write_text('format = 1\n[[entry]]\npath = "run"\nkind = "kernel-timings"\n'
                                      'status = "current"\ndate = 2026-12-01\nquestion = "the answer"\nstack = {}\n')
    return BlockContext(load_catalog(res))


def _current(res) -> None:
    """A catalog naming res/run the current kernel timings."""
    (res / "catalog.toml").write_text('format = 1\n[[entry]]\npath = "run"\nkind = "kernel-timings"\n'
                                      'status = "current"\ndate = 2026-12-01\nquestion = "q"\nstack = {}\n')


def _rendered(tmp_path, res, marker: str) -> str:
    """res/run made the current evidence, and a doc holding one block of `marker` rendered on it: the doc's text."""
    _current(res)
    doc = _doc(tmp_path, "rendered.md", marker)
    render_files([doc], BlockContext(load_catalog(res)), BLOCKS)
    return doc.read_text()


def _doc(tmp_path, name: str, marker: str) -> object:
    p = tmp_path / name
    p.write_text(f"intro\n<!-- qlabench:block {marker} -->\nstale\n<!-- /qlabench:block -->\nend\n")
    return p


def test_check_names_a_stale_block_and_render_fixes_it(tmp_path, ctx):
    doc = _doc(tmp_path, "a.md", "advise model=qwen3.5-397b tp=8 seqlens=8x1024")
    (stale,) = check_files([doc], ctx, BLOCKS)
    assert (stale.block, stale.line) == ("advise", 2) and doc.read_text().count("stale") == 1  # nothing written
    assert render_files([doc], ctx, BLOCKS) == [doc]
    text = doc.read_text()
    assert "| 8x1024 | `flashinfer-nocp` | 0.052 | 2.63x |" in text  # 0.137 / 0.052
    assert f"{0.125 / 0.052:.2f}x slower than flashinfer-nocp" in text and "`R1`" in text
    assert check_files([doc], ctx, BLOCKS) == [] and render_files([doc], ctx, BLOCKS) == []


def test_the_flashinfer_and_catalog_blocks_come_from_the_rows_and_the_catalog(tmp_path, ctx):
    doc = _doc(tmp_path, "b.md", "flashinfer-cp")
    render_files([doc], ctx, BLOCKS)
    assert "| 2/8 | `R1` | 0.125 / **0.052** CP |" in doc.read_text()
    assert f"slower than `use_cp=False` on 1 points, {0.125 / 0.052:.2f}-{0.125 / 0.052:.2f}x" in doc.read_text()
    doc = _doc(tmp_path, "c.md", "results-catalog")
    render_files([doc], ctx, BLOCKS)
    assert "| `run/` | (all) | current | 2026-12-01 | the answer | - | - |" in doc.read_text()


def test_the_flashinfer_cp_block_takes_each_head_configuration_from_its_newest_run_of_the_suite(tmp_path, ctx,
                                                                                                 make_row):
    """Runs that measured different head configurations each give their rows (the table then covers every head
    configuration), a row never mixes two runs, and a run of another suite (a newer one) is left out."""
    res = ctx.catalog.root
    def pair(run, suite, h, auto, nocp, stamp):
        return [make_row(**{**ROW, "h_qk": h[0], "h_v": h[1]}, backend=b, seqlens=(1024,) * 8, total_tokens=8192,
                         median_ms=ms, samples_ms=(ms,) * 3, run_id=run, suite=suite, timestamp=stamp,
                         extra_json='{"flashinfer_cp": true}')
                for b, ms in (("flashinfer", auto), ("flashinfer-nocp", nocp))]
    write_rows(res / "run" / "R2.parquet", pair("R2", "study", (4, 16), 0.30, 0.20, "2026-12-02T00:00:00+00:00"))
    write_rows(res / "run" / "R3.parquet", pair("R3", "large", (4, 16), 0.90, 0.10, "2026-12-03T00:00:00+00:00")
               + pair("R3", "large", (2, 8), 0.90, 0.10, "2026-12-03T00:00:00+00:00"))
    write_rows(res / "run" / "R1b.parquet", pair("R1b", "study", (2, 8), 0.125, 0.052, "2026-12-01T00:00:00+00:00"))
    fresh = BlockContext(load_catalog(res))
    doc = _doc(tmp_path, "f.md", "flashinfer-cp suite=study")
    render_files([doc], fresh, BLOCKS)
    text = doc.read_text()
    assert "| 2/8 | `R1b` | 0.125 / **0.052** CP |" in text and "| 4/16 | `R2` | 0.300 / **0.200** CP |" in text
    assert "R3" not in text and "0.900" not in text
    assert "at 2 head configurations (2/8, 4/16) of suite `study`" in text


def test_the_flashinfer_cp_block_keeps_to_the_gpu_it_is_given(tmp_path, ctx, make_row):
    """A head configuration measured on an H100 alone sits in no table of the H200's: with `gpu=` the block reads
    that GPU model's runs and names it; without, it names both models."""
    res = ctx.catalog.root
    rows = [make_row(**{**ROW, "h_qk": 4, "h_v": 16}, backend=b, seqlens=(1024,) * 8, total_tokens=8192,
                     median_ms=ms, run_id="R100", device="NVIDIA H100 80GB HBM3",
                     timestamp="2026-12-02T00:00:00+00:00", extra_json='{"flashinfer_cp": true}')
            for b, ms in (("flashinfer", 0.3), ("flashinfer-nocp", 0.2))]
    write_rows(res / "run" / "R100.parquet", rows)
    write_rows(res / "run" / "R1.parquet", [r.__class__(**{**r.__dict__, "device": "NVIDIA H200"})
                                            for r in read_rows(res / "run" / "R1.parquet")])
    fresh = BlockContext(load_catalog(res))
    both = _doc(tmp_path, "both.md", "flashinfer-cp")
    render_files([both], fresh, BLOCKS)
    text = both.read_text()
    assert "| 4/16 | `R100` |" in text and " on NVIDIA H100 80GB HBM3 and NVIDIA H200, each" in text, text
    held = _doc(tmp_path, "held.md", "flashinfer-cp gpu=H200")
    render_files([held], fresh, BLOCKS)
    text = held.read_text()
    assert "| 2/8 | `R1` | 0.125 / **0.052** CP |" in text and "R100" not in text and "4/16" not in text, text
    assert "(2/8) on NVIDIA H200, each from one run" in text


def test_an_unknown_block_or_argument_is_an_error(tmp_path, ctx):
    with pytest.raises(BlockError, match="unknown block 'nope'"):
        check_files([_doc(tmp_path, "d.md", "nope")], ctx, BLOCKS)
    with pytest.raises(BlockError, match="block 'results-catalog'"):
        check_files([_doc(tmp_path, "e.md", "results-catalog colour=red")], ctx, BLOCKS)


def test_a_catalog_question_holding_a_newline_and_markers_injects_no_block(tmp_path, ctx):
    question = "what it answers\n<!-- /qlabench:block -->\n<!-- qlabench:block results-catalog -->\nand <b>more</b>"
    (ctx.catalog.root / "catalog.toml").write_text(
        'format = 1\n[[entry]]\npath = "run"\nkind = "kernel-timings"\nstatus = "current"\ndate = 2026-12-01\n'
        f'question = """{question}"""\nstack = {{}}\n')
    fresh = BlockContext(load_catalog(ctx.catalog.root))
    doc = _doc(tmp_path, "c.md", "results-catalog")
    assert render_files([doc], fresh, BLOCKS) == [doc]
    once = doc.read_bytes()
    # a second render changes nothing
    assert render_files([doc], fresh, BLOCKS) == [] and check_files([doc], fresh, BLOCKS) == []
    assert doc.read_bytes() == once
    assert [line for line in once.decode().split("\n") if "<!--" in line.split("|")[0]] == [
        "<!-- qlabench:block results-catalog -->", "<!-- /qlabench:block -->"]  # one block, as before
    assert "| what it answers &lt;!-- /qlabench:block --> &lt;!-- qlabench:block results-catalog --> and &lt;b>more" \
        in once.decode()


def test_a_crlf_doc_is_rendered_as_crlf_and_the_rest_kept_byte_for_byte(tmp_path, ctx):
    doc = tmp_path / "w.md"
    doc.write_bytes(b"intro \xc3\xa9\r\n<!-- qlabench:block results-catalog -->\r\nstale\r\n"
                    b"<!-- /qlabench:block -->\r\nend\r\n")
    assert render_files([doc], ctx, BLOCKS) == [doc]
    data = doc.read_bytes()
    assert data.startswith(b"intro \xc3\xa9\r\n<!-- qlabench:block results-catalog -->\r\n| folder |")
    assert data.endswith(b"|\r\n<!-- /qlabench:block -->\r\nend\r\n") and b"\n" not in data.replace(b"\r\n", b"")
    assert check_files([doc], ctx, BLOCKS) == [] and render_files([doc], ctx, BLOCKS) == []


def test_check_and_render_agree_on_a_file_render_would_change(tmp_path, ctx):
    doc = _doc(tmp_path, "a.md", "results-catalog")
    render_files([doc], ctx, BLOCKS)
    doc.write_text(doc.read_text().replace("| the answer |", "| the answer, edited |"))
    (stale,) = check_files([doc], ctx, BLOCKS)
    assert (stale.file, stale.block, stale.line) == (str(doc), "results-catalog", 2)


@pytest.mark.parametrize("make, says", [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: p.write_bytes(b"caf\xe9\n"), "not UTF-8 text"),
])
def test_a_missing_file_a_folder_or_a_non_utf8_file_is_an_error_naming_it(tmp_path, ctx, make, says):
    p = tmp_path / "doc.md"
    make(p)
    for run in (check_files, render_files):
        with pytest.raises(BlockError, match=f"{p}: {says}"):
            run([p], ctx, BLOCKS)


@pytest.mark.parametrize("marker, says", [
    ("advise model=qwen3.5-397b tp=eight seqlens=8x1024", r"block 'advise': parameter tp=eight: must be an integer"),
    ("advise model=qwen3.5-397b tp=0 seqlens=8x1024", r"block 'advise': parameter tp=0: must be at least 1"),
    ("advise model=qwen3.5-397b tp=8 seqlens=8y1024", r"block 'advise': parameter seqlens item '8y1024': expected N"),
    ("advise model=qwen3.5-397b seqlens=8x1024", r"block 'advise': parameter 'tp' missing"),
    ("advise model=qwen3.5-397b tp=8 seqlens=8x1024 workload=decode",
     r"block 'advise': parameter workload=decode: must be prefill or train"),
    ("library-vs heads=2/x backends=fla", r"block 'library-vs': parameter heads=2/x: must be H_QK/H_V"),
    ("library-vs heads=8 backends=fla", r"block 'library-vs': parameter heads=8: must be H_QK/H_V"),
    ("auto-cp-regret library=flashinfer above=much", r"block 'auto-cp-regret': above must be a number"),
])
def test_a_bad_parameter_is_an_error_naming_the_file_line_and_parameter_never_a_flag(tmp_path, ctx, marker, says):
    doc = _doc(tmp_path, "p.md", marker)
    with pytest.raises(BlockError, match=f"{doc}:2: {says}") as e:
        check_files([doc], ctx, BLOCKS)
    assert "--" not in str(e.value)


def test_what_a_view_derives_from_the_context_is_built_once_per_context(ctx):
    """A view's blocks share what it builds on the current evidence (the study's Study): one build per render."""
    calls = []

    def build(c):
        calls.append(c)
        return len(c.rows)

    assert ctx.derived(build) == ctx.derived(build) == 4 and calls == [ctx]
    assert BlockContext(ctx.catalog).derived(build) == 4 and len(calls) == 2  # a new render builds again


def test_a_train_block_ranks_one_training_step_and_never_adds_a_forward_to_a_backward(tmp_path, make_row):
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    rows = []
    # a training step is one fwd_bwd call: flash_qla's 1.0 ms beats fla's 2.0 ms; the fwd and bwd_train rows (whose
    # sum would say 0.4 ms for fla) are never added up, and FlashInfer (forward only) is not ranked
    for backend, mode, ms in (("flash_qla", "fwd_bwd", 1.0), ("fla", "fwd_bwd", 2.0), ("fla", "fwd", 0.1),
                              ("fla", "bwd_train", 0.3), ("flashinfer", "fwd", 0.1)):
        rows.append(make_row(**ROW, backend=backend, mode=mode, seqlens=(8192,), total_tokens=8192, median_ms=ms,
                             samples_ms=(ms,) * 3, run_id="T1", timestamp="2026-12-01T00:00:00+00:00"))
    write_rows(res / "run" / "T1.parquet", rows)
    _current(res)
    doc = _doc(tmp_path, "t.md", "advise model=qwen3.5-397b tp=8 seqlens=8192 workload=train")
    assert render_files([doc], BlockContext(load_catalog(res)), BLOCKS) == [doc]
    text = doc.read_text()
    assert "a training step (forward + backward)" in text and "--workload train`" in text
    assert "| 8192 | `flash_qla` | 1.000 | 2.00x | fla (2.000) |" in text, text
    assert "flashinfer" not in text.split("Runs:")[0]


def test_the_runs_legend_names_each_runs_card_and_says_when_they_differ(tmp_path, make_row):
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    specs = (("fla", 0.137, "R1", "GPU-aaaaaaaa-1111"), ("flash_qla", 0.062, "R2", "GPU-bbbbbbbb-2222"))
    rows = [make_row(**ROW, backend=b, seqlens=(1024,) * 8, total_tokens=8192, median_ms=ms, samples_ms=(ms,) * 3,
                     run_id=run, gpu_uuid=card, timestamp="2026-12-01T00:00:00+00:00") for b, ms, run, card in specs]
    for r in rows:
        write_rows(res / "run" / f"{r.run_id}.parquet", [r])
    text = _rendered(tmp_path, res, "advise model=qwen3.5-397b tp=8 seqlens=8x1024")
    assert "A = `R1` (`results/run`) on GPU-aaaaaaaa; B = `R2` (`results/run`) on GPU-bbbbbbbb." in text, text
    assert "These runs ran on more than one card" in text


def test_the_answer_runs_block_counts_each_answers_runs_and_cards(tmp_path, make_row):
    """One model's answer from one run, another's from two runs (one of which recorded no card): the block says
    which answers cite one run, and counts a run without a recorded card apart."""
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    tp4 = dict(ROW, h_qk=4, h_v=16, tp=4)
    specs = ((ROW, "fla", 0.137, "R1", "GPU-aaaaaaaa-1111"), (ROW, "flash_qla", 0.062, "R1", "GPU-aaaaaaaa-1111"),
             (tp4, "fla", 0.2, "R2", "GPU-aaaaaaaa-1111"), (tp4, "flash_qla", 0.1, "R3", None))
    for at, b, ms, run, card in specs:
        write_rows(res / "run" / f"{run}-{b}-{at['tp']}.parquet",
                   [make_row(**at, backend=b, seqlens=(1024,) * 8, total_tokens=8192, median_ms=ms,
                             samples_ms=(ms,) * 3, run_id=run, gpu_uuid=card, timestamp="2026-12-01T00:00:00+00:00")])
    text = _rendered(tmp_path, res, "answer-runs models=qwen3.5-397b:8+4 seqlens=8x1024")
    assert "1 of 2 answers (prefill, cases 8x1024) cite one run" in text, text
    assert "| qwen3.5-397b TP8 | 2/8 | 1 | 1 | yes |" in text
    assert "| qwen3.5-397b TP4 | 4/16 | 2 | 1 (+ 1 run without one recorded) | no |" in text
    assert "the others sum or rank times of several runs" in text
    # every answer from one run: nothing is said of "the others"
    alone = _rendered(tmp_path, res, "answer-runs models=qwen3.5-397b:8 seqlens=8x1024")
    assert "1 of 1 answers (prefill, cases 8x1024) cite one run:" in alone and "the others" not in alone
    bad = _doc(tmp_path, "b.md", "answer-runs models=qwen3.5-397b seqlens=8x1024")
    with pytest.raises(BlockError, match="each entry is MODEL:TP"):
        check_files([bad], BlockContext(load_catalog(res)), BLOCKS)


def test_the_answer_runs_block_tells_cases_of_several_runs_from_cases_of_one_run_each(tmp_path, make_row):
    """Two cases each ranked on its own run's times (8x1024 from R1, 1x8192 from R2): the answer cites two runs but
    compares none, and the block says so instead of calling it a sum or ranking of several runs."""
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    for run, seqlens in (("R1", (1024,) * 8), ("R2", (8192,))):
        for b, ms in (("fla", 0.2), ("flash_qla", 0.1)):
            write_rows(res / "run" / f"{run}-{b}.parquet",
                       [make_row(**dict(ROW, num_seqs=len(seqlens)), backend=b, seqlens=seqlens, total_tokens=8192,
                                 median_ms=ms, samples_ms=(ms,) * 3, run_id=run, gpu_uuid="GPU-aaaaaaaa-1111",
                                 timestamp="2026-12-01T00:00:00+00:00")])
    text = _rendered(tmp_path, res, "answer-runs models=qwen3.5-397b:8 seqlens=8x1024,8192")
    assert "0 of 1 answers (prefill, cases 8x1024,8192) cite one run; the others rank each case on one run's times, " \
           "their cases from different runs:" in text, text
    assert "| qwen3.5-397b TP8 | 2/8 | 2 | 1 | no |" in text
    assert "sum or rank" not in text


def test_the_library_vs_and_answer_runs_blocks_keep_to_the_gpu_they_are_given(tmp_path, make_row):
    """One run on each of two GPU models, the H100's newer: without `gpu=` the comparison reads the newest run of
    either; with it, that GPU model's run, named in the block's text."""
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    for run, gpu, ts, fq in (("R200", "NVIDIA H200", "2026-12-01T00:00:00+00:00", 0.062),
                             ("R100", "NVIDIA H100 80GB HBM3", "2026-12-02T00:00:00+00:00", 0.090)):
        write_rows(res / "run" / f"{run}.parquet",
                   [make_row(**ROW, backend=b, seqlens=(1024,) * 8, total_tokens=8192, median_ms=ms,
                             samples_ms=(ms,) * 3, run_id=run, device=gpu, timestamp=ts)
                    for b, ms in (("fla", 0.137), ("flash_qla", fq))])
    vs = _rendered(tmp_path, res, "library-vs heads=2/8 backends=flash_qla,fla gpu=H200")
    assert "one run (`R200`" in vs and "on NVIDIA H200, median ms" in vs and "0.062" in vs and "0.090" not in vs
    runs = _rendered(tmp_path, res, "answer-runs models=qwen3.5-397b:8 seqlens=8x1024 gpu=H100")
    assert "1 of 1 answers (prefill, cases 8x1024) on H100 cite one run:" in runs, runs


def test_the_advise_block_names_the_gpu_of_its_answer_and_keeps_to_the_gpu_it_is_given(tmp_path, make_row):
    """Rows of two GPU models answer one case apart: the block says which model its table is, and `gpu=` holds it
    to one (a page about the H200's evidence never shows an H100's answer because that one has more rows)."""
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    specs = (("fla", 0.137, "R1", "NVIDIA H200"), ("flash_qla", 0.062, "R1", "NVIDIA H200"),
             ("fla", 0.2, "R2", "NVIDIA H100 80GB HBM3"), ("flash_qla", 0.3, "R2", "NVIDIA H100 80GB HBM3"),
             ("flash_qla-nocp", 0.25, "R2", "NVIDIA H100 80GB HBM3"))
    for b, ms, run, device in specs:
        write_rows(res / "run" / f"{run}-{b}.parquet",
                   [make_row(**ROW, backend=b, seqlens=(1024,) * 8, total_tokens=8192, median_ms=ms,
                             samples_ms=(ms,) * 3, run_id=run, device=device, timestamp="2026-12-01T00:00:00+00:00")])
    largest = _rendered(tmp_path, res, "advise model=qwen3.5-397b tp=8 seqlens=8x1024")
    assert "(h 2/8) on NVIDIA H100 80GB HBM3, prefill" in largest, largest
    held = _rendered(tmp_path, res, "advise model=qwen3.5-397b tp=8 seqlens=8x1024 gpu=H200")
    assert "(h 2/8) on NVIDIA H200, prefill" in held and '--gpu "H200"' in held
    assert "| 8x1024 | `flash_qla` | 0.062 | 2.21x | fla (0.137) |" in held, held
    assert "H100" not in held


def test_the_advise_blocks_header_says_how_the_eager_times_stand(tmp_path, make_row):
    """The header's word on eager times follows the cases: a launch-bound call measured in one process is
    "unverified"; measured again in fresh processes (a later run's replicates) it is ranked on its range; with no
    launch-bound call the header says neither."""
    res = tmp_path / "results"
    (res / "run").mkdir(parents=True)
    at = dict(ROW, seqlens=(32768,), total_tokens=32768, eager_rel_noise=0.02)

    def rows(bound: bool, run: str, ts: str, replicate: int = 0):
        return [make_row(**at, backend=b, median_ms=d, device_ms=d, eager_ms=e if bound else d * 1.001,
                         host_ms=e * 0.9, launch_bound=bound, run_id=run, replicate=replicate, timestamp=ts)
                for b, d, e in (("flash_qla", 1.05, 1.3), ("fla", 3.6, 3.62))]

    write_rows(res / "run" / "a.parquet", rows(False, "a", "2026-12-01T00:00:00+00:00"))
    quiet = _rendered(tmp_path, res, "advise model=qwen3.5-397b tp=8 seqlens=32768")
    assert "times of the call launched eagerly; `qlabench advise" in quiet, quiet
    write_rows(res / "run" / "a.parquet", rows(True, "a", "2026-12-01T00:00:00+00:00"))
    one = _rendered(tmp_path, res, "advise model=qwen3.5-397b tp=8 seqlens=32768")
    assert "launched eagerly (unverified: docs/BENCHMARKS.md, 'Three times')" in one, one
    write_rows(res / "run" / "reps.parquet", rows(True, "reps", "2026-12-02T00:00:00+00:00", 1)
               + rows(True, "reps", "2026-12-02T00:00:00+00:00", 2))
    ranged = _rendered(tmp_path, res, "advise model=qwen3.5-397b tp=8 seqlens=32768")
    assert "launched eagerly (launch-bound calls ranked on the range of their times in fresh processes" in ranged
    assert "(unverified: docs/BENCHMARKS.md" not in ranged, ranged
    # the same rows, but the first run's times from the probe before it primed its bursts: unverified again
    unprimed = '{"eager_launch": {"calls_per_burst": 1, "bursts": 15, "timer": "events"}}'
    write_rows(res / "run" / "a.parquet", [r.__class__(**{**r.__dict__, "extra_json": unprimed})
                                           for r in rows(True, "a", "2026-12-03T00:00:00+00:00")])
    stale = _rendered(tmp_path, res, "advise model=qwen3.5-397b tp=8 seqlens=32768")
    assert "launched eagerly (unverified: docs/BENCHMARKS.md, 'Three times')" in stale, stale
    assert "measured before qlabench's probe primed its bursts" in stale
