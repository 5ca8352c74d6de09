"""RunOptions: a sweep's settings in one value, checked when made; narrow_suite: the CLI's narrowing, as a library call;
the timer resolved once per sweep."""

from __future__ import annotations

import pytest

from qlabench.core.errors import ConfigError
from qlabench.core.spec import load_suite
from qlabench.run.options import InProcess, RunOptions, narrow_suite


@pytest.mark.parametrize("kwargs, words", [({"replicates": 0}, "--replicates"), ({"replicates": 10_000_000}, "--replicates"),
                                           ({"resume": True, "replicates": 2}, "--resume"),
                                           ({"max_time_s": -1.0}, "--max-time")])
def test_options_that_cannot_be_honoured_fail_when_made(kwargs, words):
    with pytest.raises(ConfigError, match=words):
        RunOptions(**kwargs)


def test_narrow_suite_does_what_the_run_flags_do(data_dir):
    s = load_suite(str(data_dir / "tiny-cpu.toml"))
    n = narrow_suite(s, backends="naive-chunk", modes=["fwd"], cpu_threads=3, ncu=True)
    assert n.points and {(p.backend, p.mode) for p in n.points} == {("naive-chunk", "fwd")}
    assert n.run.cpu_threads == 3 and n.profile.ncu is True
    assert s.run.cpu_threads == 1 and not s.profile.ncu  # the suite given is left alone
    shards = [narrow_suite(s, shard=f"{i}/2").points for i in range(2)]
    assert sorted(shards[0] + shards[1], key=s.points.index) == list(s.points)
    with pytest.raises(ConfigError, match="no backend 'nope'"):
        narrow_suite(s, backends="nope")
    with pytest.raises(ConfigError, match="--cpu-threads"):
        narrow_suite(s, cpu_threads=100_000)


def test_the_timer_is_resolved_once_per_sweep(tmp_path, data_dir, monkeypatch):
    import qlabench.measure.timing.plan as plan
    from qlabench.run.sweep import run_sweep

    calls = []
    real = plan.resolve_timer
    monkeypatch.setattr(plan, "resolve_timer", lambda *a: calls.append(a) or real(*a))
    s = narrow_suite(load_suite(str(data_dir / "tiny-cpu.toml")), backends="naive-chunk")
    res = run_sweep(s, tmp_path, RunOptions(executor=InProcess()))
    assert len(res.rows) == len(s.points) > 1 and all(r.status == "ok" for r in res.rows)
    assert len(calls) == 1  # not once more per point in the worker


def test_a_module_function_in_backends_adds_its_points_to_the_suites_forward_problems():
    from qlabench.core.backend_decl import unregister

    s = load_suite("quick-cpu")
    try:
        mine = narrow_suite(s, backends="naive-chunk,my_kernels.gdn:fwd")
        fwd = {p.with_(backend="x") for p in s.points if p.mode == "fwd"}
        got = [p for p in mine.points if p.backend == "my_kernels.gdn:fwd"]
        assert {p.with_(backend="x") for p in got} == fwd and len(got) == len(fwd)  # one per problem, fwd only
        assert {p.backend for p in mine.points} == {"naive-chunk", "my_kernels.gdn:fwd"}
    finally:
        unregister("my_kernels.gdn:fwd")
    with pytest.raises(ConfigError, match="has no backend 'not a function'"):
        narrow_suite(s, backends="not a function")
