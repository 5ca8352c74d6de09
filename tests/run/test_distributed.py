"""Distributed (context-parallel) points: the data model, the suite axis, the launcher's safety and skips,
and, end to end on CPU, torchrun + gloo with the plain-PyTorch CP backend (tests/data/cp-cpu.toml)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from qlabench.core.spec import TimingSpec
from qlabench.measure.timing import TimerPlan
from qlabench.run.options import RunOptions
from qlabench.core.errors import SpecError
from qlabench.core.point import Point
from qlabench.core.spec import load_suite, parse_suite

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


def _p(**kw):
    base = dict(backend="flash_qla", mode="fwd", layout="dense", batch=1, seqlens=(1024,), h_qk=2, h_v=4)
    base.update(kw)
    return Point(**base)


# -- data model ---------------------------------------------------------------------------------------

def test_point_cp_fields_validate_and_key():
    p = _p(cp_world_size=2, cp_mode="inter")
    assert p.distributed and p.cp_label == "cp2 inter" and "[cp2 inter]" in p.label()
    assert p.workload_key() != _p().workload_key()  # a CP point is its own workload
    assert p.compile_group != _p().compile_group
    assert not _p().distributed and _p().cp_problem() is None
    for bad in (dict(cp_world_size=2), dict(cp_mode="inter"), dict(cp_world_size=1, cp_mode="inter"),
                dict(cp_world_size=2, cp_mode="ring"), dict(cp_world_size=True, cp_mode="inter")):
        with pytest.raises(ValueError):
            _p(**bad)


def test_cp_problem_batch_and_divisibility():
    assert _p(cp_world_size=2, cp_mode="inter", seqlens=(1023,)).cp_problem().startswith("context parallelism needs total")
    assert "batch 1" in _p(cp_world_size=2, cp_mode="inter", batch=2, seqlens=(64, 64)).cp_problem()
    assert _p(cp_world_size=2, cp_mode="dual", layout="varlen", seqlens=(100, 28)).cp_problem() is None


def test_result_row_cp_columns_and_old_files(tmp_path, make_row):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from qlabench.store.schema import COLUMNS, METADATA_KEY
    from qlabench.store.files import read_results, write_rows

    for c in ("cp_world_size", "cp_mode", "cp_rank_ms", "cp_rank_fwd_ms", "cp_rank_bwd_ms", "cp_intra"):
        assert c in COLUMNS
    row = make_row(cp_world_size=2, cp_mode="inter", cp_rank_ms=[1.0, 1.2], cp_rank_fwd_ms=[0.5, 0.6])
    assert row.cp_rank_ms == (1.0, 1.2)
    write_rows(tmp_path / "new" / "r.parquet", [row])
    # A file written before the CP columns existed: the same row without them.
    t = pa.Table.from_pylist([{k: v for k, v in make_row().as_dict().items() if not k.startswith("cp_")}])
    t = t.replace_schema_metadata({METADATA_KEY: b"1"})
    (tmp_path / "old").mkdir()
    pq.write_table(t, tmp_path / "old" / "r.parquet")
    df = read_results([tmp_path / "new", tmp_path / "old"])
    assert len(df) == 2
    new, old = df.iloc[0], df.iloc[1]
    assert int(new["cp_world_size"]) == 2 and new["cp_mode"] == "inter" and list(new["cp_rank_ms"]) == [1.0, 1.2]
    import pandas as pd

    assert pd.isna(old["cp_mode"]) and pd.isna(old["cp_world_size"]) and pd.isna(old["cp_intra"])
    assert len(old["cp_rank_ms"]) == 0 if old["cp_rank_ms"] is not None else True


def test_summary_shows_a_distributed_column_by_its_cp_label(make_row):
    # the column header "fla [cp2 fla-cp]" must not be read as rich markup (it once printed as "fla")
    import io

    import pandas as pd
    from rich.console import Console

    from qlabench.analyze.kit.speedups import speedup_table
    from qlabench.cli.views import speedup_rich_table

    rows = [make_row(backend="fla", median_ms=2.0), make_row(backend="fla", cp_world_size=2, cp_mode="fla-cp",
                                                             median_ms=4.0)]
    table = speedup_table(pd.DataFrame([r.as_dict() for r in rows]), "fla")
    buf = io.StringIO()
    Console(file=buf, width=200).print(speedup_rich_table(table, "fla"))
    assert "fla [cp2 fla-cp]" in buf.getvalue() and "4.000" in buf.getvalue() and "(0.50x)" in buf.getvalue()


def test_layout_slices_and_owners():
    from qlabench.backends.cp.layout import local_cu_seqlens, local_sequences, owners, rank_slice

    assert rank_slice(256, 2, 1) == (128, 256)
    r0, r1 = local_sequences((40, 150, 66), 2, 0), local_sequences((40, 150, 66), 2, 1)
    assert [(x.seq, x.start, x.end, x.starts_here, x.ends_here) for x in r0] == [
        (0, 0, 40, True, True), (1, 40, 128, True, False)]
    assert [(x.seq, x.start, x.end, x.starts_here, x.ends_here) for x in r1] == [
        (1, 0, 62, False, True), (2, 62, 128, True, True)]
    assert local_cu_seqlens((40, 150, 66), 2, 1) == [0, 62, 128]
    # a sequence exactly on the boundary is not split
    assert [x.seq for x in local_sequences((128, 128), 2, 1)] == [1]
    first, last = owners((40, 150, 66), 2)
    assert first == {0: (0, 0), 1: (0, 1), 2: (1, 1)} and last == {0: (0, 0), 1: (1, 0), 2: (1, 1)}
    # one sequence over four ranks: only the first starts it, only the last ends it
    pieces = [local_sequences((400,), 4, r)[0] for r in range(4)]
    assert [(x.starts_here, x.ends_here) for x in pieces] == [(True, False), (False, False), (False, False), (False, True)]
    with pytest.raises(ValueError):
        rank_slice(255, 2, 0)


# -- CP backends: the one registry ------------------------------------------------------------------------

def test_cp_backends_are_registry_backends():
    from qlabench.backends import REGISTRY, cp_backend_names, get_backend
    from qlabench.core.point import CP_MODES

    assert cp_backend_names() == ["naive-chunk", "flash_qla", "fla"]
    for name in cp_backend_names():
        b = get_backend(name)
        assert b.cp_modes and set(b.cp_modes) <= set(CP_MODES)
        assert b.cp_reference in REGISTRY  # rank 0's single-device check
        ok, why = b.cp_available()
        assert isinstance(ok, bool) and (ok or why)
    assert {n: get_backend(n).cp_modes for n in cp_backend_names()} == {
        "naive-chunk": ("inter", "dual"), "flash_qla": ("inter", "dual"), "fla": ("fla-cp",)}
    # the intra-card and dispatch variants are single-device only
    for name in ("flash_qla-nocp", "flash_qla-forcecp", "fla-dispatch-on", "naive-recurrent"):
        assert get_backend(name).cp_modes == ()


def test_cp_supports_gives_reasons():
    from qlabench.backends import get_backend

    naive, fqla, fla = (get_backend(n) for n in ("naive-chunk", "flash_qla", "fla"))
    p = _p(backend="naive-chunk", cp_world_size=2, cp_mode="inter", K=32, V=32, dtype="float32")
    assert naive.supports(p, "cpu") == (True, "")
    assert naive.supports(p.with_(cp_mode="dual", mode="fwd_bwd"), "cuda:1") == (True, "")
    assert naive.supports(p.with_(mode="bwd"), "cpu") == (False, "CP points time fwd, fwd_bwd; not bwd")
    ok, why = naive.supports(p.with_(cp_mode="fla-cp"), "cpu")
    assert not ok and why == "naive-chunk has no CP mode 'fla-cp' (has: inter, dual)"
    ok, why = naive.supports(p.with_(seqlens=(1023,)), "cpu")
    assert not ok and "divisible by the world size" in why
    # the same point on one device is asked the single-device question
    assert naive.supports(p.with_(cp_world_size=None, cp_mode=None, mode="bwd"), "cpu") == (True, "")
    q = _p(cp_world_size=2, cp_mode="dual", K=128, V=128, dtype="bfloat16")
    assert fqla.supports(q, "cuda") == (True, "")
    assert fqla.supports(q, "cpu") == (False, "flash_qla CP does not run on cpu (runs on: cuda)")
    assert fqla.supports(q.with_(dtype="float32"), "cuda") == (False, "flash_qla CP does not support float32")
    assert "K = V = 128" in fqla.supports(q.with_(K=64), "cuda")[1]
    f = _p(backend="fla", cp_world_size=2, cp_mode="fla-cp", K=128, V=128, dtype="bfloat16")
    ok, why = fla.supports(f, "cuda")
    assert not ok and why.startswith("FLA's CP takes no initial state")
    assert fla.supports(f.with_(initial_state=False), "cuda") == (True, "")
    assert "K <= 256" in fla.supports(f.with_(initial_state=False, K=512), "cuda")[1]
    ok, why = get_backend("naive-recurrent").supports(p.with_(backend="naive-recurrent"), "cpu")
    assert not ok and why == "naive-recurrent has no context-parallel mode"


# -- the suite axis -------------------------------------------------------------------------------------

def _suite(**sweep):
    base = {"backends": ["flash_qla"], "seqlen": [1024], "heads": [{"h_qk": 2, "h_v": 4}]}
    base.update(sweep)
    return parse_suite({"name": "t", "sweep": base})


def test_cp_axis_expands_points():
    s = _suite(cp=[{"world_size": 2, "mode": "inter"}, {"world_size": 2, "mode": "dual"}, {}])
    assert [(p.cp_world_size, p.cp_mode) for p in s.points] == [(2, "inter"), (2, "dual"), (None, None)]
    assert all(p.cp_world_size is None for p in _suite().points)  # default: one device
    one = _suite(cp={"world_size": 4, "mode": "fla-cp"})  # a single table is a one-element axis
    assert [(p.cp_world_size, p.cp_mode) for p in one.points] == [(4, "fla-cp")]


@pytest.mark.parametrize("cp, key", [
    ([{"world_size": 1, "mode": "inter"}], "sweep.cp[0].world_size"),
    ([{"world_size": "2", "mode": "inter"}], "sweep.cp[0].world_size"),
    ([{"world_size": 2, "mode": "ring"}], "sweep.cp[0].mode"),
    ([{"world_size": 2}], "sweep.cp[0].mode"),
    ([{"world_size": 2, "mode": "inter", "ranks": 2}], "sweep.cp[0].ranks"),
    (["inter"], "sweep.cp[0]"),
])
def test_cp_axis_errors(cp, key):
    with pytest.raises(SpecError) as e:
        _suite(cp=cp)
    assert e.value.key == key


def test_cp_exclude_and_bundled_suite():
    s = parse_suite({"name": "t", "sweep": {"backends": ["flash_qla"], "seqlen": [1024], "heads": [{"h_qk": 2, "h_v": 4}],
                                            "cp": [{"world_size": 2, "mode": "inter"}, {"world_size": 2, "mode": "dual"}]},
                     "exclude": [{"cp_mode": "dual"}]})
    assert [p.cp_mode for p in s.points] == ["inter"]
    gpu = load_suite("h200x2-cp")
    cps = [p for p in gpu.points if p.distributed]
    assert {(p.cp_world_size, p.cp_mode) for p in cps} == {(2, "inter"), (2, "dual"), (2, "fla-cp")}
    assert {p.total_tokens for p in gpu.points} == {1048576, 131072}
    assert all(p.cp_problem() is None for p in cps)
    assert {p.backend for p in gpu.points if not p.distributed} == {"flash_qla", "flash_qla-nocp", "fla"}


def test_segments_keep_suite_order():
    from qlabench.run.sweep import order_points, segments

    s = load_suite("h200x2-cp")
    segs = segments(order_points(s.points), s.points)
    assert [d for d, _ in segs] == [True, False, True, False, True, False]
    assert sum(len(x) for _, x in segs) == len(s.points)


# -- the launcher: environment safety, skips ----------------------------------------------------------

def test_safe_env_is_forced_everywhere(monkeypatch, tmp_path):
    from qlabench.run.distributed import SAFE_ENV
    from qlabench.run.distributed.launch import launch_env, torchrun_command
    from qlabench.run.distributed.safety import missing

    assert SAFE_ENV == {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
    hostile = {"NCCL_NVLS_ENABLE": "1", "PATH": "/bin"}
    env = launch_env("cuda", ["3", "5", "7"], 2, base=hostile)
    assert missing(env) == [] and env["CUDA_VISIBLE_DEVICES"] == "3,5" and env["PATH"] == "/bin"
    cmd = torchrun_command(2, "j", "e", "s")
    assert cmd[1:3] == ["-m", "qlabench.run.distributed.spawn"]  # not torchrun: its store listens on *:PORT
    assert cmd[cmd.index("--nproc") + 1] == "2" and cmd[-6:] == ["--job", "j", "--events", "e", "--stop", "s"]
    # single-device workers get it too
    import qlabench.run.pool as w
    from qlabench.run import supervised

    seen = {}

    class FakePopen:
        def __init__(self, cmd, env=None, **kw):
            seen.update(env)
            raise OSError("not started in this test")

    monkeypatch.setattr(supervised.subprocess, "Popen", FakePopen)
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    job = w.WorkerJob(suite=(s := load_suite(str(DATA / "tiny-cpu.toml"))), run_id="r",
                      timer=TimerPlan.resolve("wall", "cpu", s.timing), check=False)
    with pytest.raises(OSError):
        w._Worker(job, w.Slot("cpu"), str(tmp_path))
    assert missing(seen) == []


class _Sink:
    def __init__(self):
        self.seen, self.rows = [], []

    def started(self, p):
        self.seen.append(p)

    def done(self, p, row):
        self.rows.append(row)


def test_too_few_gpus_is_skipped_without_a_launch(monkeypatch):
    from qlabench.run import supervised
    from qlabench.run.distributed import launch
    from qlabench.run.job import WorkerJob

    suite = load_suite("h200x2-cp")
    pts = [p for p in suite.points if p.distributed][:3] + [
        _p(cp_world_size=2, cp_mode="inter", seqlens=(1023,))]
    job = WorkerJob(suite=suite, run_id="r", timer=TimerPlan.resolve("events", "cuda", suite.timing), check=True)

    def no_launch(*a, **k):
        raise AssertionError("nothing may be started")

    monkeypatch.setattr(supervised.subprocess, "Popen", no_launch)
    rec = _Sink()
    launch.CPLauncher(job, "cuda", {"host": "h", "device": "NVIDIA H200"}, gpu_ids=["0"]).run([pts], rec, lambda: False)
    assert [r.status for r in rec.rows] == ["skipped"] * 4 and len(rec.seen) == 4
    assert "needs 2 GPUs" in rec.rows[0].reason and "1 visible" in rec.rows[0].reason
    assert "divisible" in rec.rows[3].reason
    assert rec.rows[0].cp_world_size == 2 and rec.rows[0].cp_mode == "inter"


# -- end to end on CPU: torchrun, gloo, 2 ranks ----------------------------------------------------------

@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    from qlabench import read_results
    from qlabench.run.sweep import run_sweep

    out = tmp_path_factory.mktemp("cp")
    res = run_sweep(load_suite(str(DATA / "cp-cpu.toml")), out)
    return res, read_results([res.path])


def test_cpu_distributed_sweep_end_to_end(cpu_run):
    res, df = cpu_run
    assert len(df) == 9 and set(df["status"]) == {"ok"}, df[["status", "reason"]]
    cp = df[df["cp_world_size"].notna()]
    assert len(cp) == 8 and set(cp["cp_mode"]) == {"inter", "dual"}
    for _, r in cp.iterrows():
        assert r["oracle"].startswith("naive-chunk float32") and r["err_o"] < 1e-5 and r["err_ht"] < 1e-5
        assert len(r["cp_rank_ms"]) == 2 and len(r["cp_rank_fwd_ms"]) == 2
        # end to end: per iteration the slowest rank, so its median is at least each rank's fastest sample
        assert r["median_ms"] > 0 and r["n_samples"] == len(r["samples_ms"]) >= 3
        extra = json.loads(r["extra_json"])["cp"]
        assert len(extra["rank_total_ms"]) == 2
        for i, e2e in enumerate(r["samples_ms"]):
            assert e2e == max(extra["rank_total_ms"][0][i], extra["rank_total_ms"][1][i])
        assert all(v in ("0", "1") for v in extra["safe_env"].values()) and extra["safe_env"]["NCCL_NVLS_ENABLE"] == "0"
        if r["mode"] == "fwd_bwd":
            assert len(r["cp_rank_bwd_ms"]) == 2 and r["err_dq"] < 1e-5 and r["err_dh0"] < 1e-5
            assert r["err_dg"] < 1e-4 and r["err_dbeta"] < 1e-4
        else:
            assert len(r["cp_rank_bwd_ms"]) == 0
        assert (r["cp_intra"] is True) if r["cp_mode"] == "dual" else r["cp_intra"] is None
        assert r["timer"] == "wall" and r["first_call_s"] > 0
        # filled by the same PointRow as a single-device row: what ended sampling, the threads measured with
        assert r["stopped_by"] in ("max_samples", "max_time") and r["below_min_samples"] is False
        assert r["cpu_threads"] == 1  # the suite's run.cpu_threads, pinned on every rank
    # compile_s once per compile group (inter, dual) within the launch
    assert cp["compile_s"].notna().sum() == 2
    single = df[df["cp_world_size"].isna()]
    assert len(single) == 1 and single.iloc[0]["cp_mode"] in (None,) or single.iloc[0]["cp_mode"] != single.iloc[0]["cp_mode"]


def test_cpu_resume_skips_distributed_rows(cpu_run, tmp_path):
    from qlabench.run.sweep import run_sweep

    res, _ = cpu_run
    out = res.path.parent.parent
    again = run_sweep(load_suite(str(DATA / "cp-cpu.toml")), out, RunOptions(resume=True))
    assert again.resumed == 9 and again.rows == []


def _one_point_suite():
    s = load_suite(str(DATA / "cp-cpu.toml"))
    pts = [p for p in s.points if p.distributed and p.layout == "varlen" and p.cp_mode == "inter"]
    return dataclasses.replace(s, points=tuple(pts))  # fwd and fwd_bwd


def test_cpu_broken_exchange_is_incorrect(tmp_path, monkeypatch):
    from qlabench.run.sweep import run_sweep

    monkeypatch.setenv("QLABENCH_CP_FAULT", "no-exchange")
    res = run_sweep(_one_point_suite(), tmp_path)
    assert [r.status for r in res.rows] == ["incorrect", "incorrect"]
    assert all("CP vs naive-chunk: o rel err" in r.reason for r in res.rows)
    assert all(r.median_ms is None for r in res.rows)


def _count_launches(monkeypatch) -> list[int]:
    """Records the number of points of each torchrun launch (CPLauncher._start), in order."""
    from qlabench.run.distributed import launch

    launches = []
    real = launch.CPLauncher._start

    def counting(self, ws, pts):
        launches.append(len(pts))
        return real(self, ws, pts)

    monkeypatch.setattr(launch.CPLauncher, "_start", counting)
    return launches


def test_cpu_rank_error_then_fresh_launch(tmp_path, monkeypatch):
    from qlabench.run.sweep import run_sweep

    launches = _count_launches(monkeypatch)
    monkeypatch.setenv("QLABENCH_CP_FAULT", "setup-error")
    res = run_sweep(_one_point_suite(), tmp_path)
    assert [r.status for r in res.rows] == ["error", "error"]
    assert all(r.reason == "rank 1: RuntimeError: injected CP fault on rank 1 (QLABENCH_CP_FAULT=setup-error)"
               for r in res.rows)
    assert launches == [2, 1]  # the ranks stop after an error row; a fresh launch takes the rest


def test_cpu_dead_rank_is_an_error_row(tmp_path, monkeypatch):
    from qlabench.run.sweep import run_sweep

    monkeypatch.setenv("QLABENCH_CP_FAULT", "crash")
    s = _one_point_suite()
    res = run_sweep(dataclasses.replace(s, points=s.points[:1]), tmp_path)
    assert [r.status for r in res.rows] == ["error"]
    assert res.rows[0].reason.startswith("distributed ranks exited with code")
    assert "injected crash" in res.rows[0].reason


def test_time_budget_stops_before_launch(tmp_path):
    from qlabench.run.sweep import run_sweep

    res = run_sweep(load_suite(str(DATA / "cp-cpu.toml")), tmp_path, RunOptions(max_time_s=0))
    assert res.rows == [] and res.not_run == 9


@pytest.mark.parametrize("fault", ["forward-error", "late-error"])
def test_cpu_rank_error_inside_collectives_ends_the_launch(tmp_path, monkeypatch, fault):
    """Rank 1 raises in its forward (the first call, or the warm-up) while rank 0 is in the state exchange:
    rank 1 must not try to agree (its collectives would pair with rank 0's exchange): it exits, torchrun
    ends rank 0, the point is an `error` row with rank 1's message and a fresh launch takes the next."""
    import time

    from qlabench.run.sweep import run_sweep

    launches = _count_launches(monkeypatch)
    monkeypatch.setenv("QLABENCH_CP_FAULT", fault)
    t0 = time.monotonic()
    res = run_sweep(_one_point_suite(), tmp_path)
    assert time.monotonic() - t0 < 120  # no collective timeout waited out
    assert [r.status for r in res.rows] == ["error", "error"], [r.reason for r in res.rows]
    for r in res.rows:
        assert r.reason.startswith("distributed ranks exited with code"), r.reason
        assert f"QLABENCH_CP_FAULT={fault}" in r.reason and "[rank1]" in r.reason
    assert launches == [2, 1]


# -- the sweep's timer on distributed rows (launch.with_timer_note) -------------------------------------

def _rank0_row(make_row, timer="events", extra=None):
    return make_row(timer=timer, cp_world_size=2, cp_mode="inter", extra_json=json.dumps(extra) if extra else None
                    ).as_dict()


@pytest.mark.parametrize("requested, device_type, used", [("events", "cuda", "events"), ("wall", "cpu", "wall"),
                                                          ("auto", "cpu", "wall")])
def test_a_row_timed_as_asked_is_left_alone(make_row, requested, device_type, used):
    from qlabench.run.distributed.launch import with_timer_note

    row = _rank0_row(make_row, used)
    assert with_timer_note(row, TimerPlan.resolve(requested, device_type, TimingSpec())) is row


@pytest.mark.parametrize("requested, words", [("graph", "timer 'graph' not used"),
                                              ("auto", "timer 'auto' (graph here) not used")])
def test_a_row_not_timed_as_asked_says_why(make_row, requested, words):
    from qlabench.core.result import ResultRow
    from qlabench.run.distributed.launch import with_timer_note

    plan = TimerPlan.resolve(requested, "cuda", TimingSpec())
    row = ResultRow(**with_timer_note(_rank0_row(make_row, "events", {"cp": {"world_size": 2}}), plan))
    assert row.status == "ok" and row.reason is None and row.timer == "events"  # the timer actually used
    extra = json.loads(row.extra_json)
    assert extra["cp"] == {"world_size": 2}  # the worker's details are kept
    assert extra["timer_requested"] == requested
    assert words in extra["timer_note"] and "events per iteration" in extra["timer_note"]


def test_an_untimed_row_gets_no_note(make_row):
    from qlabench.run.distributed.launch import with_timer_note

    row = make_row(status="error", reason="boom", timer=None).as_dict()
    assert with_timer_note(row, TimerPlan.resolve("graph", "cuda", TimingSpec())) is row


def test_the_launcher_notes_the_timer_on_the_rows_it_receives(make_row):
    from qlabench.run.distributed import launch
    from qlabench.run.job import WorkerJob

    suite = load_suite("h200x2-cp")
    p = next(p for p in suite.points if p.distributed)
    job = WorkerJob(suite=suite, run_id="r", timer=TimerPlan.resolve("graph", "cuda", suite.timing), check=True)
    launcher = launch.CPLauncher(job, "cuda", {"host": "h"}, gpu_ids=["0", "1"])
    la = launch._Launch(points=[p], proc=None, dir="", events_path="", stop_path="", log_path="")
    sink = _Sink()
    launcher._handle(la, {"event": "row", "index": 0, "row": _rank0_row(make_row)}, sink, set())
    (row,) = sink.rows
    assert json.loads(row.extra_json)["timer_requested"] == "graph"


def test_the_lead_in_fills_the_regimes_time_with_whole_iterations():
    from qlabench.run.distributed.timing import lead_in_calls

    assert lead_in_calls(0.0, 2.0) == 0  # a burst: sampling starts after the warm-up
    assert lead_in_calls(200.0, 3.0) == 67 and lead_in_calls(200.0, 500.0) == 1


def test_cpu_distributed_rows_record_the_runs_timing_regime_and_resume_finds_them(tmp_path):
    """The ranks take the run's timer plan as run_point does: its regime is on the rows, so a sustained run
    resumed finds them instead of measuring them again."""
    from qlabench import read_results
    from qlabench.run.sweep import run_sweep

    s = _one_point_suite()
    s = dataclasses.replace(s, timing=dataclasses.replace(s.timing, regime="sustained", sustained_ms=5.0))
    res = run_sweep(s, tmp_path)
    df = read_results([res.path])
    assert set(df["status"]) == {"ok"} and set(df["timing_regime"]) == {"sustained"}
    again = run_sweep(s, tmp_path, RunOptions(resume=True))
    assert again.resumed == len(df) and again.rows == []
