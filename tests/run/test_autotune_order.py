"""A point of an autotuning backend is timed with configs tuned for it, whatever the worker ran before
(`[run] autotune = "point"`, run/point.py tune_for_point); "process" keeps the library's own behaviour, and
the row says which it was. On CPU, with a stand-in Triton autotuner keyed without the length."""

from __future__ import annotations

import json

import pytest
import standin_autotuner

from qlabench.backends import REGISTRY
from qlabench.backends.naive import NaiveChunk
from qlabench.core.point import Point
from qlabench.core.spec import CheckSpec, RunSpec, Suite, TimingSpec, load_suite
from qlabench.core.errors import SpecError
from qlabench.measure import env as envmod
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, run_point


class TunesOnFirstShape(NaiveChunk):
    """naive-chunk's outputs; each call runs the stand-in autotuner and records the length it was tuned on."""
    name = "tunes-on-first-shape"
    autotune_modules = ("standin_lib.",)

    def __init__(self, tuner):
        self.tuner, self.seen = tuner, []

    def prepare_point(self, point, inp):
        fn = super().prepare_point(point.with_(backend="naive-chunk"), inp)
        length = inp.q.shape[1]  # the check's reduced problem, or the point's own

        def call():
            self.seen.append((length, self.tuner.run(point.h_v, length)))
            return fn()

        return call


@pytest.fixture
def backend(monkeypatch):
    return TunesOnFirstShape(standin_autotuner.install(monkeypatch, "standin_lib.ops").kernel)


def _run(backend, mode, lengths, full_size=True):
    pts = [Point(backend=backend.name, mode="fwd", layout="dense", batch=1, seqlens=(n,), h_qk=2, h_v=4, K=16,
                 V=16, dtype="float32") for n in lengths]
    timing = TimingSpec(timer="wall", warmup=0, min_samples=2, max_samples=2, max_time_s=0.5)
    suite = Suite(name="t", path="<t>", points=tuple(pts), timing=timing, check=CheckSpec(oracle_max_tokens=64, full_size=full_size), run=RunSpec(autotune=mode))
    registry = dict(REGISTRY, **{backend.name: backend})
    ctx = MeasureContext(suite=suite, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", timing), registry=registry, check=True)
    return [run_point(p, ctx) for p in pts]


def test_the_long_point_is_tuned_for_itself_after_a_short_one(backend):
    rows = _run(backend, "point", [128, 512])
    assert [r.status for r in rows] == ["ok", "ok"]
    timed_long = [tuned for n, tuned in backend.seen if n == 512]
    assert len(timed_long) >= 3 and set(timed_long) == {512}  # first call and samples: tuned for 512 tokens
    assert rows[1].extra_json and '"autotune_tuned_for": "point"' in rows[1].extra_json


def test_process_mode_keeps_the_first_shapes_choice_and_says_so(backend):
    rows = _run(backend, "process", [128, 512])
    timed_long = {tuned for n, tuned in backend.seen if n == 512}
    # tuned on the first call the process made: the first point's own (checked at its size, so no reduced check
    # tunes before it)
    assert timed_long == {128}
    assert '"autotune_tuned_for": "process"' in rows[1].extra_json


def test_a_backend_that_does_not_autotune_says_nothing_about_it():
    rows = _run(REGISTRY["naive-chunk"], "point", [128])
    assert "autotune_tuned_for" not in (rows[0].extra_json or "")


def test_an_unknown_autotune_mode_is_refused_with_the_key(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('name = "s"\n[sweep]\nbackends = ["naive-chunk"]\nmodes = ["fwd"]\nbatch = [1]\nseqlen = [64]\n'
                 'heads = [{ h_qk = 1, h_v = 1 }]\nK = 16\nV = 16\n[run]\nautotune = "first"\n')
    with pytest.raises(SpecError, match="run.autotune"):
        load_suite(str(f))


def test_a_second_run_of_a_point_installs_its_stored_tuning_and_says_where_it_came_from(monkeypatch, tmp_path):
    monkeypatch.setenv("QLABENCH_CACHE_DIR", str(tmp_path))
    first = TunesOnFirstShape(standin_autotuner.install(monkeypatch, "standin_lib.ops").kernel)
    row = _run(first, "point-cached", [512])[0]
    assert json.loads(row.extra_json)["autotune_tuned_for"] == "point"
    assert first.tuner.tunings == 1  # the point's own shape: its check is at that size, after the first call
    again = TunesOnFirstShape(standin_autotuner.install(monkeypatch, "standin_lib.ops").kernel)  # a new process
    row = _run(again, "point-cached", [512])[0]
    details = json.loads(row.extra_json)
    assert row.status == "ok" and details["autotune_tuned_for"] == "point-cached"
    assert details["autotune_store"]["installed"] == 1 and details["autotune_store"]["saved_at"]
    assert again.tuner.tunings == 0  # the point's configs were installed
    assert {tuned for n, tuned in again.seen if n == 512} == {512}
    other = TunesOnFirstShape(standin_autotuner.install(monkeypatch, "standin_lib.ops").kernel)
    assert json.loads(_run(other, "point-cached", [256])[0].extra_json)["autotune_tuned_for"] == "point"


def test_the_default_keeps_tunings_in_the_store():
    assert RunSpec().autotune == "point-cached"


def test_replicates_each_pay_their_own_tuning(tmp_path, backend):
    """With replicates, `point-cached` re-tunes every point (as `point`): replicates that installed one stored
    tuning would hide the tuner's share of the run-to-run variance. Replicates run in worker processes only
    (in one process they are no independent runs), so the test reads the mode the workers are handed."""
    from qlabench.run.options import RunOptions
    from qlabench.run.sweep import run_sweep

    handed: list[str] = []

    class Recording:  # an executor that measures nothing: what matters is the job every worker would get
        def __init__(self, job, device, env):
            handed.append(job.suite.run.autotune)

        def run(self, groups, sink, should_stop):
            pass

        def close(self):
            pass

    p = Point(backend=backend.name, mode="fwd", layout="dense", batch=1, seqlens=(512,), h_qk=2, h_v=4, K=16, V=16,
              dtype="float32")
    timing = TimingSpec(timer="wall", warmup=0, min_samples=2, max_samples=2, max_time_s=0.5)
    suite = Suite(name="t", path="<t>", points=(p,), timing=timing, check=CheckSpec(oracle_max_tokens=64))
    assert suite.run.autotune == "point-cached"
    run_sweep(suite, tmp_path / "two", RunOptions(executor=Recording, replicates=2), progress=False)
    assert handed and set(handed) == {"point"}  # every replicate's workers tune for the point
    handed.clear()
    run_sweep(suite, tmp_path / "one", RunOptions(executor=Recording, replicates=1), progress=False)
    assert handed and set(handed) == {"point-cached"}



class KeyedByShortness(standin_autotuner.Autotuner):
    """Keyed by heads and by whether the call is a short one, as a kernel whose key holds a size-dependent block:
    the check's reduced problem (64 tokens here) and the timed point then meet different keys."""

    def run(self, heads, length):
        key = (heads, length <= 64)
        if key not in self.cache:
            self.tunings += 1
            self.cache[key] = max((c for c in self.configs if c.kwargs["BLOCK"] <= length),
                                  key=lambda c: c.kwargs["BLOCK"])
        return self.cache[key].kwargs["BLOCK"]


def test_a_point_checked_at_its_size_tunes_no_shape_of_its_check(monkeypatch, tmp_path):
    """With the check at the timed size (the default), no reduced problem is compiled or tuned: one tuning per
    point, where a reduced check would add its own short key (KeyedByShortness)."""
    monkeypatch.setenv("QLABENCH_CACHE_DIR", str(tmp_path))
    lib = standin_autotuner.install(monkeypatch, "standin_lib.ops")
    lib.kernel = KeyedByShortness(module="standin_lib.ops")
    backend = TunesOnFirstShape(lib.kernel)
    rows = _run(backend, "point", [512, 1024])
    assert [r.status for r in rows] == ["ok", "ok"] and all(r.checked_at_size for r in rows)
    assert lib.kernel.tunings == 2 and not [n for n, _ in backend.seen if n <= 64]
    assert all(r.oracle == f"naive-chunk float32 @{n} tokens" for r, n in zip(rows, (512, 1024)))


@pytest.mark.parametrize("mode", ["point", "point-cached"])
def test_a_check_reuses_what_an_earlier_check_of_the_worker_tuned_and_the_timed_call_still_tunes_for_itself(
        monkeypatch, tmp_path, mode):
    monkeypatch.setenv("QLABENCH_CACHE_DIR", str(tmp_path))
    lib = standin_autotuner.install(monkeypatch, "standin_lib.ops")
    lib.kernel = KeyedByShortness(module="standin_lib.ops")
    backend = TunesOnFirstShape(lib.kernel)
    rows = _run(backend, mode, [512, 1024, 2048], full_size=False)
    assert [r.status for r in rows] == ["ok"] * 3
    # the first check tunes the short key; every timed call forgets it (retune) and tunes its own; the later
    # checks get the short key's choice back instead of tuning it again: 1 + 3 tunings, not 3 + 3
    assert backend.tuner.tunings == 4
    assert [json.loads(r.extra_json).get("check_autotune") for r in rows] == [
        {"installed": 0, "tuned": 1}, {"installed": 1, "tuned": 0}, {"installed": 1, "tuned": 0}]
    for n in (512, 1024, 2048):  # every timed call ran with configs tuned for its own point
        assert {tuned for length, tuned in backend.seen if length == n} == {n}
    assert {tuned for length, tuned in backend.seen if length <= 64} == {64}


def test_in_process_mode_the_check_leaves_the_librarys_choices_alone(monkeypatch):
    lib = standin_autotuner.install(monkeypatch, "standin_lib.ops")
    lib.kernel = KeyedByShortness(module="standin_lib.ops")
    backend = TunesOnFirstShape(lib.kernel)
    rows = _run(backend, "process", [512, 1024], full_size=False)
    assert backend.tuner.tunings == 2  # the library's own process-wide choices: one per key
    assert all("check_autotune" not in (r.extra_json or "") for r in rows)


class PreparedWithATunedForward(TunesOnFirstShape):
    """As FLA's backward: its preparation runs the library's forward (a second autotuner, keyed like FLA's by heads
    alone), and the call runs the backward's kernel, keyed by heads alone too."""
    name = "prepared-with-a-tuned-forward"

    def __init__(self, tuner, forward):
        super().__init__(tuner)
        self.fwd_tuner, self.prepared = forward, []

    def prepare_point(self, point, inp):
        self.prepared.append((inp.q.shape[1], self.fwd_tuner.run(point.h_v, inp.q.shape[1])))
        return super().prepare_point(point, inp)


def test_a_check_runs_with_its_own_choices_in_the_preparation_and_in_place_of_the_last_timed_calls(
        monkeypatch, tmp_path):
    monkeypatch.setenv("QLABENCH_CACHE_DIR", str(tmp_path))
    lib = standin_autotuner.install(monkeypatch, "standin_lib.ops")
    lib.forward = standin_autotuner.Autotuner(name="forward_kernel", module="standin_lib.ops")
    backend = PreparedWithATunedForward(lib.kernel, lib.forward)
    rows = _run(backend, "point", [512, 1024, 2048], full_size=False)
    assert [r.status for r in rows] == ["ok"] * 3, [r.reason for r in rows]
    # the forward is tuned once, by the first check's preparation; the timed preparations and later checks reuse it
    assert lib.forward.tunings == 1
    assert {tuned for _, tuned in backend.prepared} == {64}
    # the backward's kernel: the first check, then each timed call for its own point; no later check tunes it
    # again, and none runs with the choice the last timed call left under the same key (512 or 1024)
    assert lib.kernel.tunings == 4
    assert {tuned for length, tuned in backend.seen if length <= 64} == {64}
    for n in (512, 1024, 2048):
        assert {tuned for length, tuned in backend.seen if length == n} == {n}
    assert [json.loads(r.extra_json).get("check_autotune") for r in rows] == [
        {"installed": 0, "tuned": 2}, {"installed": 2, "tuned": 0}, {"installed": 2, "tuned": 0}]
