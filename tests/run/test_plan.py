"""One plan from a suite to the points (run/plan.py): every check a suite or its options can fail is made by
`plan_sweep`, once, before any work, and every command that runs a suite executes that plan."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.errors import BackendError, ConfigError, DeviceError
from qlabench.core.spec import load_suite
from qlabench.run.options import InProcess, RunOptions
from qlabench.run.plan import Selection, Warmup, plan_sweep


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def typo_suite(tmp_path, data_dir):
    """tiny-cpu with a misspelt backend."""
    text = (data_dir / "tiny-cpu.toml").read_text().replace('"naive-chunk"]', '"naive-chunkk"]', 1)
    assert "naive-chunkk" in text
    path = tmp_path / "typo.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("command", [["run", "sweep"], ["gate", "--baseline", "{out}/none.parquet"], ["cold-start"],
                                     ["warmup", "--jobs", "1"]])
def test_every_command_refuses_an_unknown_backend_before_any_work(command, typo_suite, tmp_path):
    out = tmp_path / "out"
    args = [a.format(out=out) for a in command]
    r = invoke(*args, "--suite", typo_suite, *([] if command[0] == "warmup" else ["--out", out]))
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ") and "unknown backend 'naive-chunkk'" in r.stderr
    assert not any(p.is_file() for p in tmp_path.rglob("*") if p.suffix in (".parquet", ".json", ".md"))


def test_a_plan_narrows_checks_and_resolves_once(data_dir):
    s = load_suite(str(data_dir / "tiny-cpu.toml"))
    plan = plan_sweep(s, RunOptions(device="cpu"), Selection(backends="naive-chunk", modes="fwd", cpu_threads=2))
    assert {(p.backend, p.mode) for p in plan.suite.points} == {("naive-chunk", "fwd")}
    assert plan.suite.run.cpu_threads == 2 and plan.device == "cpu" and plan.timer is not None
    dry = plan_sweep(s, RunOptions(device="cuda"), on_device=False)  # a dry run prices a GPU suite anywhere
    assert dry.device is None and dry.suite.points == s.points
    with pytest.raises(DeviceError):
        plan_sweep(s, RunOptions(device="cuda:7"))
    with pytest.raises(ConfigError, match="over the limit of 3"):
        plan_sweep(s, RunOptions(device="cpu", max_points=3))
    with pytest.raises(ConfigError, match="no backend 'nope'"):
        plan_sweep(s, selection=Selection(backends="nope"), on_device=False)


def test_an_in_process_run_checks_names_against_its_own_registry(data_dir):
    from qlabench.backends import REGISTRY

    s = load_suite(str(data_dir / "tiny-cpu.toml"))
    mine = {"naive-recurrent": REGISTRY["naive-recurrent"]}
    with pytest.raises(BackendError, match="unknown backend 'naive-chunk' \\(known: naive-recurrent;"):
        plan_sweep(s, RunOptions(executor=InProcess(mine)), on_device=False)


def test_replicates_of_a_point_cached_autotune_tune_every_point_again(data_dir):
    s = load_suite(str(data_dir / "tiny-cpu.toml"))
    assert s.run.autotune == "point-cached"
    assert plan_sweep(s, RunOptions(device="cpu", replicates=2)).suite.run.autotune == "point"
    assert plan_sweep(s, RunOptions(device="cpu")).suite.run.autotune == "point-cached"


def test_run_sweep_makes_each_check_once(tmp_path, data_dir, monkeypatch):
    """`run sweep` checked the size twice and resolved its device in two places; the plan checks each once."""
    import qlabench.run.plan as planmod
    from qlabench.measure.timing import TimerPlan

    calls = {"size": 0, "timer": 0, "names": 0}
    size, resolve, names = RunOptions.check_size, TimerPlan.resolve, planmod.check_backend_names

    def counted(key, fn):
        def wrapper(*a, **k):
            calls[key] += 1
            return fn(*a, **k)
        return wrapper

    monkeypatch.setattr(RunOptions, "check_size", counted("size", size))
    monkeypatch.setattr(TimerPlan, "resolve", staticmethod(counted("timer", resolve)))
    monkeypatch.setattr(planmod, "check_backend_names", counted("names", names))
    r = invoke("run", "sweep", "--suite", data_dir / "tiny-cpu.toml", "--out", tmp_path / "out", "--backends",
               "naive-chunk", "--modes", "fwd", "--device", "cpu")
    assert r.exit_code == 0, r.output
    assert calls == {"size": 1, "timer": 1, "names": 1}


def test_a_plan_carries_its_options_into_run_sweep(tmp_path, data_dir):
    from qlabench.run.sweep import run_sweep

    s = load_suite(str(data_dir / "tiny-cpu.toml"))
    plan = plan_sweep(s, RunOptions(device="cpu", executor=InProcess()), Selection(backends="naive-chunk", modes="fwd"))
    res = run_sweep(plan, tmp_path)
    assert {(r.backend, r.mode) for r in res.rows} == {("naive-chunk", "fwd")}
    with pytest.raises(TypeError, match="the plan holds its options"):
        run_sweep(plan, tmp_path, dataclasses.replace(plan.options))


def test_a_sweep_reads_its_suite_once(tmp_path, data_dir, monkeypatch):
    """The plan loads the suite and its warm-up takes its points by index from what was read: nothing reads the
    file again (the warm-up's plan read it a second time, and the sweep's command a first)."""
    import qlabench.core.spec as spec

    reads = []
    parse = spec.parse_suite
    monkeypatch.setattr(spec, "parse_suite",
                        lambda data, path="<suite>", **k: reads.append(path) or parse(data, path, **k))
    r = invoke("run", "sweep", "--suite", data_dir / "tiny-cpu.toml", "--out", tmp_path / "out", "--backends",
               "naive-chunk", "--modes", "fwd", "--device", "cpu", "--warmup")
    assert r.exit_code == 0, r.output
    assert len(reads) == 1


def test_a_plan_holds_its_warm_up_and_sampling_bound(data_dir):
    path = str(data_dir / "tiny-cpu.toml")
    plan = plan_sweep(path, RunOptions(device="cpu"), Selection(backends="naive-chunk"), warmup=Warmup(want=False))
    assert plan.source == load_suite(path).points and set(plan.suite.points) < set(plan.source)
    assert plan.warmup.jobs == 0 and plan.warmup.why == "--no-warmup"
    t = plan.suite.timing
    assert plan.estimate.sampling_s == (t.max_time_s + plan.estimate.lead_in_s + t.min_time_s) * len(plan.suite.points)
    assert plan_sweep(path, RunOptions(device="cpu")).warmup.jobs == 0  # none asked: none planned


def test_a_dry_runs_plan_is_never_run(tmp_path, data_dir):
    from qlabench.run.sweep import run_plan

    dry = plan_sweep(str(data_dir / "tiny-cpu.toml"), RunOptions(device="cpu"), on_device=False)
    with pytest.raises(TypeError, match="a plan made without its device"):
        run_plan(dry, tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("flags, message", [
    (["--backends", "nope"], "no backend 'nope'"),
    (["--shard", "3/2"], "need 0 <= I < N"),
    (["--autotune", "sometimes"], "--autotune must be one of"),
    (["--max-points", "2"], "over the limit of 2"),
    (["--device", "cuda:7"], "CUDA is not available"),
    (["--timer", "nope"], "nope"),
])
def test_each_check_of_the_suite_and_its_options_fails_in_the_plan_before_any_work(flags, message, tmp_path,
                                                                                     data_dir, monkeypatch):
    import qlabench.run.sweep as sweeps

    monkeypatch.setattr(sweeps, "run_plan", lambda *a, **k: pytest.fail("the sweep started"))
    r = invoke("run", "sweep", "--suite", data_dir / "tiny-cpu.toml", "--out", tmp_path / "out", *flags)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ") and message in " ".join(r.stderr.split()), r.stderr
    assert not (tmp_path / "out").exists()
