"""The sweep orchestration: progress reporting, executors, grouping, the [run] table and the CLI options."""

from __future__ import annotations

import pytest
from fault_suites import fault_suite
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.backends import REGISTRY
from qlabench.cli import app
from qlabench.core.errors import ConfigError, SpecError, TimerError
from qlabench.core.point import Point
from qlabench.run.sweep import group_points, run_sweep
from qlabench.core.spec import parse_suite


class RecordingProgress:
    def __init__(self):
        self.total = None
        self.started = []
        self.done = []

    def start(self, total):
        self.total = total

    def point_started(self, point):
        self.started.append(point)

    def point_done(self, row):
        self.done.append(row)


def test_progress_sees_every_point_once_in_compile_group_order(tmp_path):
    s = parse_suite(fault_suite([16, 18], seqlens=(8, 12)), "<p>")
    prog = RecordingProgress()
    res = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY)), progress=prog)
    assert prog.total == 4 and len(prog.started) == 4 and prog.done == res.rows
    assert [p.V for p in prog.started] == [16, 16, 18, 18]
    assert [r.status for r in res.rows] == ["ok", "ok", "incorrect", "incorrect"]  # NaN outputs, in-process too


def test_process_faults_do_not_fire_in_process(tmp_path):
    s = parse_suite(fault_suite([20]), "<p>")  # segfault: would kill the test process if it fired here
    (row,) = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY))).rows
    assert row.status == "error" and "only fires inside an isolated worker" in row.reason


def test_group_points_keeps_each_compile_group_together():
    s = parse_suite(fault_suite([16, 17], seqlens=(8, 12, 16)), "<p>")
    groups = group_points(list(reversed(s.points)))
    assert [len(g) for g in groups] == [3, 3]
    assert all(len({p.compile_group for p in g}) == 1 for g in groups)


@pytest.mark.parametrize("run, key", [({"point_timeout_s": 0}, "run.point_timeout_s"),
                                      ({"compile_timeout_s": -1.0}, "run.compile_timeout_s"),
                                      ({"point_timeout": 5}, "run.point_timeout"),
                                      ({"point_timeout_s": "5"}, "run.point_timeout_s")])
def test_run_table_is_validated(run, key):
    with pytest.raises(SpecError) as e:
        parse_suite(fault_suite([16], **run), "<p>")
    assert e.value.key == key


def test_cli_max_time_and_resume(tmp_path):
    suite = tmp_path / "cli.toml"
    suite.write_text('name = "cli"\ndevice = "cpu"\n[sweep]\nbackends = ["fault"]\nmodes = ["fwd"]\nseqlen = [8]\n'
                     'heads = [{ h_qk = 1, h_v = 1 }]\nK = 8\nV = 16\ndtype = "float32"\n'
                     '[timing]\ntimer = "wall"\nwarmup = 0\nmin_samples = 2\nmax_samples = 2\n')
    base = ["run", "sweep", "--suite", str(suite), "--out", str(tmp_path / "r"), "--no-isolate"]
    r = CliRunner().invoke(app, base + ["--max-time", "0"])
    assert r.exit_code == 0, r.output
    assert "1 points not run" in r.output and "no points run" in r.output
    r = CliRunner().invoke(app, base + ["--resume"])
    assert r.exit_code == 0 and "1 rows (1 ok)" in r.output, r.output
    r = CliRunner().invoke(app, base + ["--resume"])
    assert "1 points already recorded ok" in r.output and "no points run" in r.output


def test_cli_malformed_suite_exits_2_before_any_work(tmp_path):
    suite = tmp_path / "bad.toml"
    suite.write_text('name = "bad"\n[sweep]\nbackends = ["fault"]\nseqlen = [8]\nheads = [{ h_qk = 1, h_v = 1 }]\n'
                     '[run]\npoint_timeout_s = 0\n')
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(suite), "--out", str(tmp_path / "r")])
    assert r.exit_code == 2 and "run.point_timeout_s" in r.output
    assert not (tmp_path / "r").exists()


def test_backends_of_one_head_config_run_next_to_each_other():
    def pt(backend, h_qk, h_v, T):
        return Point(backend=backend, mode="fwd", layout="dense", batch=1, seqlens=(T,), h_qk=h_qk, h_v=h_v,
                     K=16, V=16, dtype="float32")

    # Suite order is backend-major, as a [sweep] over backends x heads expands.
    points = [pt(b, hq, hv, T) for b in ("naive-chunk", "naive-recurrent") for hq, hv in ((1, 2), (2, 4))
              for T in (8, 16)]
    groups = group_points(points)
    assert [(g[0].backend, g[0].h_v) for g in groups] == [
        ("naive-chunk", 2), ("naive-recurrent", 2), ("naive-chunk", 4), ("naive-recurrent", 4)]
    assert [p.seqlens for p in groups[0]] == [(8,), (16,)]  # within a group, suite order


# -- the timer is resolved and checked once, in run_sweep, before any worker starts ---------------------

def _no_executor(*a, **k):
    raise AssertionError("no executor may be built for a sweep with a bad timer")


@pytest.mark.parametrize("timer, words", [("bogus", "unknown timer 'bogus'"), ("graph", "needs a CUDA device"),
                                          ("events", "needs a CUDA device")])
def test_a_bad_timer_fails_the_sweep_before_any_worker(tmp_path, timer, words):
    s = parse_suite(fault_suite([16]), "<p>")  # device cpu
    with pytest.raises(TimerError, match=words):
        run_sweep(s, tmp_path / "out", RunOptions(executor=_no_executor, timer=timer))
    assert not (tmp_path / "out").exists()


def test_a_suite_timer_that_needs_cuda_fails_on_cpu(tmp_path):
    data = fault_suite([16])
    data["timing"]["timer"] = "graph"
    s = parse_suite(data, "<p>")
    with pytest.raises(TimerError, match="timer 'graph' needs a CUDA device"):
        run_sweep(s, tmp_path / "out", RunOptions(executor=_no_executor, device="cpu"))
    # in-process too: the same single check, not an error row per point
    with pytest.raises(TimerError):
        run_sweep(s, tmp_path / "out", RunOptions(executor=InProcess(REGISTRY), device="cpu"))
    assert not (tmp_path / "out").exists()


def test_cli_device_cpu_with_the_graph_timer_is_one_message(tmp_path, data_dir):
    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"), "--out", str(out),
                                 "--device", "cpu", "--timer", "graph"])
    assert r.exit_code == 2
    assert r.stderr == "error: timer 'graph' needs a CUDA device, not 'cpu' (use wall, or auto)\n"
    assert not out.exists()


def test_no_isolate_with_a_gpu_count_is_one_message(tmp_path, data_dir):
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"), "--out",
                                 str(tmp_path / "r"), "--no-isolate", "--gpus", "2"])
    assert r.exit_code == 2
    assert r.stderr.startswith("error: --no-isolate measures in this process") and "Traceback" not in r.stderr


def test_the_library_users_text_progress_shows_control_characters_too(make_row):
    from qlabench.run.sweep import TextProgress

    import io

    buf = io.StringIO()
    p = TextProgress(buf)
    p.start(1)
    p.point_done(make_row(status="error", reason="RuntimeError: \x1b[2J\x1b]0;t\x07\nsecond line"))
    out = buf.getvalue()
    assert "\x1b" not in out and "\x07" not in out and out.count("\n") == 1
    assert r"RuntimeError: \x1b[2J\x1b]0;t\x07 second line" in out


def test_the_text_progress_names_each_case_as_a_suite_does(make_row):
    # 32768 tokens in one sequence and four packed sequences of 8192 are two cases: the line tells them apart
    from qlabench.run.sweep import TextProgress

    import io

    buf = io.StringIO()
    p = TextProgress(buf)
    p.start(2)
    p.point_done(make_row(layout="dense", batch=1, seqlens=(32768,)))
    p.point_done(make_row(layout="varlen", batch=1, seqlens=(8192,) * 4))
    first, second = buf.getvalue().splitlines()
    assert " 1x32768: " in first and " 4x8192 packed: " in second
