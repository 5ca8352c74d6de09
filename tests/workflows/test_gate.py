"""End to end on CPU: the synthetic backend's slowdown knob, `qlabench gate`, and baselines."""

from __future__ import annotations

import time

import pytest
import torch
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.backends import synthetic
from qlabench.backends.synthetic import SLOWDOWN_ENV, Synthetic
from qlabench.store.baselines import baseline_path, save_baseline, slugify
from qlabench.cli import app
from qlabench.analyze.compare import Verdict, compare_paths
from qlabench.analyze.compare.verdict import noise_floor
from qlabench.workflows.gate import run_gate
from qlabench.core.errors import BackendError
from qlabench.measure.inputs import make_inputs
from qlabench.backends.reference import chunk_gated_delta_rule
from qlabench.core.point import Point
from qlabench.run.sweep import run_sweep
from qlabench.core.spec import parse_suite
from qlabench.store.files import read_results

SUITE = {
    "name": "gate-tiny", "device": "cpu",
    "sweep": {"backends": ["synthetic"], "modes": ["fwd"], "seqlen": [64, 128], "heads": [{"h_qk": 1, "h_v": 1}],
              "K": 32, "V": 32, "dtype": "float32"},
    "timing": {"timer": "wall", "warmup": 2, "min_samples": 25, "max_samples": 25, "max_time_s": 5.0},
    "check": {"oracle_max_tokens": 64},
}


@pytest.fixture
def suite():
    return parse_suite(SUITE, "gate-tiny.toml")


def test_synthetic_outputs_are_the_chunk_math_and_slowdown_scales_call_time(monkeypatch):
    p = Point(backend="synthetic", mode="fwd", layout="dense", batch=1, seqlens=(256,), h_qk=2, h_v=2, K=64, V=64,
              dtype="float32")
    inp = make_inputs(p, "cpu")
    monkeypatch.setenv(SLOWDOWN_ENV, "1.5")
    fn = Synthetic().prepare("fwd", inp)
    ref = chunk_gated_delta_rule(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0)
    torch.testing.assert_close(fn()["o"], ref[0])

    # The extra busy time is half of each call's own time (timing the real spin on a shared CPU
    # would test the neighbours, so the spin's request is recorded instead, then really spun).
    asked = []
    real_spin = synthetic._spin
    monkeypatch.setattr(synthetic, "_spin", lambda s: (asked.append(s), real_spin(s)))
    t = time.perf_counter()
    fn()
    total = time.perf_counter() - t
    assert len(asked) == 1 and asked[0] > 0
    call = total - asked[0]
    assert asked[0] == pytest.approx(0.5 * call, rel=0.25)

    monkeypatch.setenv(SLOWDOWN_ENV, "1")
    asked.clear()
    Synthetic().prepare("fwd", inp)()
    assert asked == []  # factor 1: the plain call, nothing added


def test_slowdown_knob_rejects_nonsense(monkeypatch):
    p = Point(backend="synthetic", mode="fwd", layout="dense", batch=1, seqlens=(16,), h_qk=1, h_v=1, K=16, V=16,
              dtype="float32")
    monkeypatch.setenv(SLOWDOWN_ENV, "0.9")
    with pytest.raises(BackendError):
        Synthetic().prepare("fwd", make_inputs(p, "cpu"))


QUIET_FLOOR = 1.0  # a noise floor of +100% (run-to-run SD 23%) still leaves a 10x change far beyond it


def test_gate_passes_a_run_against_itself_and_catches_a_tenfold_slowdown(suite, tmp_path, monkeypatch):
    base = run_sweep(suite, tmp_path / "base", RunOptions(replicates=3))  # replicates: fresh worker processes
    assert all(r.ok for r in base.rows) and sorted(r.replicate for r in base.rows) == [0, 0, 1, 1, 2, 2]
    # A/A on identical samples is deterministic. (A live A/A re-run is a statement about the machine's
    # noise, not about the code: that belongs to the studies in docs/GATING.md, not to a unit test.)
    same = compare_paths([base.path], [base.path])
    # Identical replicates: ratio exactly 1; the verdict is same, or inconclusive / ambiguous where the
    # replicates are too noisy, but never a change.
    assert same.exit_code == (3 if same.inconclusive else 0)
    assert {p.verdict for p in same.pairs} <= {Verdict.SAME, Verdict.AMBIGUOUS, Verdict.INCONCLUSIVE}
    assert all(p.stats.ratio == pytest.approx(1.0) and p.stats.runs_base == 3 for p in same.pairs)
    monkeypatch.setenv(SLOWDOWN_ENV, "10.0")
    slow = run_gate(suite, [base.path], tmp_path / "slow", confirm=1, replicates=3)
    verdicts = [p.verdict for p in slow.comparison.pairs]
    # Never same, faster or ambiguous; `inconclusive` only where the run-to-run noise puts the floor above 10x.
    assert set(verdicts) <= {Verdict.SLOWER, Verdict.INCONCLUSIVE}, [p.reason for p in slow.comparison.pairs]
    assert slow.comparison.exit_code == (1 if Verdict.SLOWER in verdicts else 3)  # inconclusive is no pass
    # On a machine quiet enough (the base run's own noise and the gate's both under the floor above), a
    # point not caught is a failure of the gate, not of the machine; a noisier machine skips, saying why.
    opt = slow.comparison.options
    base_floor = {q.key: noise_floor(q.stats, opt) for q in same.pairs}
    floors = {p.key: max(noise_floor(p.stats, opt), base_floor[p.key]) for p in slow.comparison.pairs}
    quiet = [p for p in slow.comparison.pairs if floors.get(p.key, float("inf")) <= QUIET_FLOOR]
    if not quiet:
        pytest.skip("this machine is too noisy to demand a catch: noise floors "
                    + ", ".join(f"{f:+.0%}" for f in floors.values()) + f" (a catch is required at <= {QUIET_FLOOR:+.0%})")
    assert all(p.verdict is Verdict.SLOWER for p in quiet), [(p.verdict, p.reason) for p in quiet]
    # without the base code nothing is re-measured (the head alone proves nothing)
    assert len(slow.run_paths) == 1 and any("not re-measured" in n for n in slow.comparison.notes)


def test_gate_confirms_by_re_measuring_base_and_head_interleaved(suite, tmp_path, monkeypatch):
    # The base code is a Python environment whose sitecustomize undoes the head's slowdown.
    base_env = tmp_path / "base-env"
    base_env.mkdir()
    (base_env / "sitecustomize.py").write_text(f"import os\nos.environ[{SLOWDOWN_ENV!r}] = '1.0'\n")
    # One torch thread per worker: with several, workers on a loaded 2-core box were 40x apart (docs/GATING.md).
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    base = run_sweep(suite, tmp_path / "base", RunOptions(replicates=3))
    # Rounds: every point once, then every point again, each round in a fresh worker process.
    assert [r.replicate for r in base.rows] == [0, 0, 1, 1, 2, 2] and base.workers_started == 3
    monkeypatch.setenv(SLOWDOWN_ENV, "5.0")
    g = run_gate(suite, [base.path], tmp_path / "head", confirm=1, replicates=3, base_ref=str(base_env))
    slower = [p for p in g.comparison.pairs if p.verdict is Verdict.SLOWER]
    suspects = set(g.reruns)
    assert g.confirmed == len(slower) and g.confirmed + g.dismissed == len(suspects)
    assert all("reproduced in an interleaved A/B" in p.reason for p in slower)
    if suspects:  # the head run, then 3 rounds of A (base code) and B (head code)
        assert len(g.run_paths) == 1 + 2 * 3 and any("interleaved A/B" in n for n in g.comparison.notes)
    # The A/B measures base and head alternately: it may find a 5x slowdown too noisy to call on a loaded box
    # (`inconclusive`), never the same or faster.
    for key, runs in g.reruns.items():
        assert all(r is not None and r.verdict not in (Verdict.SAME, Verdict.FASTER) for r in runs), key
    # A 5x slowdown must be caught, first pass and A/B alike, wherever the box is quiet enough to demand it
    # (noise floors under +100%, as in the test above); where the first pass or the A/B is noisier, the point
    # is inconclusive or ambiguous, which is the gate being honest, and the test says so.
    opt = g.comparison.options
    noisy = [noise_floor(p.stats, opt) for p in g.comparison.pairs if noise_floor(p.stats, opt) > QUIET_FLOOR]
    noisy += [noise_floor(r.stats, opt) for runs in g.reruns.values() for r in runs
              if r.verdict is not Verdict.SLOWER and noise_floor(r.stats, opt) > QUIET_FLOOR]
    if not slower and noisy:
        pytest.skip("this machine is too noisy to demand a catch: noise floors "
                    + ", ".join(f"{f:+.0%}" for f in noisy) + f" (a catch is required at <= {QUIET_FLOOR:+.0%})")
    assert slower, [(p.verdict, p.reason) for p in g.comparison.pairs]


def test_baseline_save_merges_and_gate_finds_it(suite, tmp_path):
    res = run_sweep(suite, tmp_path / "r", RunOptions(executor=InProcess()))
    root = tmp_path / "baselines"
    path, n, replaced = save_baseline([res.path], "gate-tiny", root)
    assert path == baseline_path(root, res.rows[0].device, "gate-tiny") and (n, replaced) == (2, 0)
    reps = run_sweep(suite, tmp_path / "k", RunOptions(replicates=2))
    _, n, replaced = save_baseline([reps.path], "gate-tiny", tmp_path / "b2")
    assert (n, replaced) == (4, 0)  # every replicate is kept: the noise floor is learned from them
    path2, n, replaced = save_baseline([res.path], "gate-tiny", root)
    assert path2 == path and (n, replaced) == (2, 2)
    assert len(read_results([path])) == 2
    assert slugify("NVIDIA H200") == "nvidia-h200"


def test_gate_cli_against_a_baseline_without_the_suite_is_a_usage_error(tmp_path):
    other = parse_suite({**SUITE, "name": "other", "sweep": {**SUITE["sweep"], "seqlen": [16]}}, "other.toml")
    res = run_sweep(other, tmp_path / "r", RunOptions(executor=InProcess()))
    suite_file = tmp_path / "gate-tiny.toml"
    suite_file.write_text('name = "gate-tiny"\ndevice = "cpu"\n[sweep]\nbackends = ["synthetic"]\nseqlen = [64]\n'
                          'heads = [{ h_qk = 1, h_v = 1 }]\nK = 32\nV = 32\ndtype = "float32"\n')
    r = CliRunner().invoke(app, ["gate", "--suite", str(suite_file), "--baseline", str(res.path),
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no rows for the points" in r.output


def test_gpu_delay_cycles_scale_with_the_injected_fraction_and_the_call_time():
    # 2 ms call, 1.5e6 sleep cycles per ms: +5% is 0.1 ms of sleep = 150000 cycles
    assert synthetic.delay_cycles(0.05, 2.0, 1.5e6) == 150_000
    assert synthetic.delay_cycles(0.10, 2.0, 1.5e6) == 2 * synthetic.delay_cycles(0.05, 2.0, 1.5e6)
    assert synthetic.delay_cycles(0.05, 4.0, 1.5e6) == 2 * synthetic.delay_cycles(0.05, 2.0, 1.5e6)
    assert synthetic.delay_cycles(0.0, 2.0, 1.5e6) == 0


def test_the_gpu_gate_example_never_restores_another_runners_baseline():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "examples" / "gpu-gate.yml").read_text()
    assert "restore-keys" not in text  # a prefix key would hand this runner another runner's baseline
    assert "key: qlabench-baseline-${{ env.SUITE }}-${{ runner.name }}" in text
    assert "--base-ref" in text and "qlabench ab" in text


def test_the_gpu_gate_example_gates_at_the_threshold_the_power_study_supports():
    import re
    from pathlib import Path

    from qlabench.analyze.compare import CompareOptions

    text = (Path(__file__).resolve().parents[2] / "docs" / "examples" / "gpu-gate.yml").read_text()
    commands = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    given = [float(t) for t in re.findall(r"--threshold (\S+)", commands)]
    assert len(given) == 2 and set(given) == {CompareOptions.threshold}  # gate and ab alike, the default


def test_gate_without_a_baseline_says_how_to_make_one(tmp_path, data_dir, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["gate", "--suite", str(data_dir / "tiny-cpu.toml")])
    assert r.exit_code == 2
    assert "no baseline at results/baselines/" in r.stderr and "qlabench baseline save results/tiny-cpu" in r.stderr
    assert not (tmp_path / "results").exists()  # nothing ran


def test_a_gate_against_a_baseline_of_error_rows_is_not_a_pass(suite, tmp_path, monkeypatch):
    import dataclasses

    from qlabench.core.errors import StoreError
    from qlabench.store.files import write_rows

    good = run_sweep(suite, tmp_path / "good", RunOptions(executor=InProcess()))
    root = tmp_path / "baselines"
    path, _, _ = save_baseline([good.path], "gate-tiny", root)
    broken = write_rows(tmp_path / "broken.parquet", [
        dataclasses.replace(r, run_id="broken", timestamp="2999-01-01T00:00:00+00:00", status="error",
                            reason="RuntimeError: boom", median_ms=None, samples_ms=(), n_samples=0)
        for r in good.rows])
    with pytest.raises(StoreError, match="--force"):
        save_baseline([broken], "gate-tiny", root)  # the good baseline stays
    save_baseline([broken], "gate-tiny", root, force=True)
    monkeypatch.setenv(SLOWDOWN_ENV, "10.0")
    res = run_gate(suite, [path], tmp_path / "head", replicates=2)
    assert not res.comparison.timed and res.comparison.exit_code == 2  # was: PASS over 0 timed points


@pytest.mark.parametrize("kw", [{"confirm": 10**9}, {"confirm": -1}, {"replicates": 10**7}, {"replicates": 0}])
def test_gate_bounds_its_numeric_options_before_running(suite, tmp_path, kw):
    from qlabench.core.errors import QlabenchError

    with pytest.raises(QlabenchError, match=f"--{next(iter(kw))} must be between"):
        run_gate(suite, [tmp_path / "never-read.parquet"], tmp_path / "o", run=RunOptions(executor=InProcess()), **kw)


def test_in_process_replicates_are_refused_and_an_in_process_run_is_never_gated(suite, tmp_path):
    """Replicates in one process share its warm state: the gate's statistics once read an unchanged kernel as
    29-33% faster at p = 0.001 from them. They are refused, and so is a gate over an in-process run."""
    from qlabench.core.errors import ConfigError

    with pytest.raises(ConfigError, match="not independent runs"):
        RunOptions(executor=InProcess(), replicates=2)
    with pytest.raises(ConfigError, match="refusing to gate an in-process run"):
        run_gate(suite, [tmp_path / "never-read.parquet"], tmp_path / "o", replicates=2,
                 run=RunOptions(executor=InProcess()))


@pytest.mark.parametrize("column, value", [("err_o", 1e9), ("median_ms", -1.0), ("median_ms", 0.0),
                                           ("median_ms", float("inf"))])
def test_a_gate_fails_a_head_row_the_evidence_layer_does_not_believe(suite, tmp_path, monkeypatch, column, value):
    # The head's rows as an edited or broken run leaves them (samples intact): `show` calls them incorrect or
    # error, and so does the gate, which once passed them.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from qlabench.workflows import gate

    good = run_sweep(suite, tmp_path / "good", RunOptions(executor=InProcess()))
    head = tmp_path / "head.parquet"
    t = pq.read_table(good.path)
    i = t.column_names.index(column)
    t = t.set_column(i, t.schema.field(i), pa.array([value] * t.num_rows, t.schema.field(i).type))
    pq.write_table(t.set_column(0, t.schema.field(0), pa.array(["head"] * t.num_rows, pa.string())), head)
    monkeypatch.setattr(gate, "_run", lambda *a, **k: head)
    # the head's run is the edited file (gate._run above): the options only have to be ones the gate accepts
    res = run_gate(suite, [good.path], tmp_path / "out", confirm=0, replicates=1, run=RunOptions())
    assert res.comparison.exit_code == 1
    assert {p.head_status for p in res.comparison.pairs} == {"incorrect" if column == "err_o" else "error"}
    assert all(p.change is None and ("not believed" in p.reason or "tolerance" in p.reason)
               for p in res.comparison.pairs)


def test_gate_refuses_a_baseline_of_another_suite_before_running(suite, tmp_path):
    import dataclasses

    from qlabench.core.errors import QlabenchError
    from qlabench.store.files import write_rows

    good = run_sweep(suite, tmp_path / "good", RunOptions(executor=InProcess()))
    other = write_rows(tmp_path / "other.parquet", [dataclasses.replace(r, suite="other-suite") for r in good.rows])
    with pytest.raises(QlabenchError, match="of suite other-suite"):
        run_gate(suite, [other], tmp_path / "head", replicates=2)
    assert not (tmp_path / "head").exists()  # refused before anything ran
