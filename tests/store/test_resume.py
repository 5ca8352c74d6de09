"""Resume and time budgets: skip what is recorded ok, survive kill -9, continue after --max-time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from part_rows import row as _row

from qlabench.run.options import InProcess, RunOptions
from qlabench.backends import REGISTRY
from qlabench.store.keys import workload_keys
from qlabench.core.point import Point
from qlabench.store.keys import key_of
from qlabench.store.resume import done_keys, remaining
from qlabench.run.sweep import run_sweep
from qlabench.core.spec import load_suite, parse_suite
from qlabench.store.files import latest_per_point, read_results, write_rows

# Slow ok points (V=26 sleeps per call) so a kill lands mid-sweep, then an exception and a NaN point,
# so non-ok rows are part of the comparison too.
KILL_SUITE = """
name = "killme"
device = "cpu"
[sweep]
backends = ["fault"]
modes = ["fwd"]
seqlen = [8, 10, 12, 14, 16, 18]
heads = [{ h_qk = 1, h_v = 1 }]
K = 8
V = 26
dtype = "float32"
[[include]]
V = [17, 18]
seqlen = [8]
[timing]
timer = "wall"
warmup = 0
min_samples = 2
max_samples = 2
max_time_s = 0.1
target_rel_noise = 0.5
[check]
oracle_max_tokens = 32
[run]
point_timeout_s = 30
compile_timeout_s = 30
"""


def _key_status(df) -> set[tuple[str, str]]:
    df = latest_per_point(df)
    return set(zip(workload_keys(df, with_backend=True), df["status"]))


def _sweep_cmd(suite: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(suite), "--out", str(out), *extra]


def _orphans_of(pid: int) -> list[str]:
    """Live worker processes whose command line names `pid` as their parent sweep."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            cmd = (d / "cmdline").read_bytes().decode(errors="replace")
            state = next((ln for ln in (d / "status").read_text().splitlines() if ln.startswith("State:")), "")
        except OSError:
            continue
        if "worker_main(" in cmd and f", {pid})" in cmd and "Z" not in state.split(":")[1][:3]:
            found.append(d.name)
    return found


def test_kill_9_mid_sweep_then_resume_equals_an_uninterrupted_run(tmp_path):
    suite_file = tmp_path / "killme.toml"
    suite_file.write_text(KILL_SUITE)
    suite = load_suite(str(suite_file))
    out = tmp_path / "results"
    env = {**os.environ, "COLUMNS": "200"}

    proc = subprocess.Popen(_sweep_cmd(suite_file, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    parts = []
    while len(parts) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        parts = list(out.glob("killme/*/part-*.parquet"))
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    # What the killed sweep left: readable part files, no compacted file, no worker left running.
    left = read_results([out])
    assert 2 <= len(left) < len(suite.points)
    assert not list(out.glob("killme/*.parquet"))
    time.sleep(0.5)
    assert _orphans_of(proc.pid) == []

    resumed = subprocess.run(_sweep_cmd(suite_file, out, "--resume"), capture_output=True, text=True, env=env,
                             check=False)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    ok_before = int((left["status"] == "ok").sum())
    assert f"{ok_before} points already recorded ok" in resumed.stdout

    reference = run_sweep(suite, tmp_path / "reference", RunOptions(executor=InProcess(REGISTRY)))  # uninterrupted, in-process
    final = read_results([out])
    assert _key_status(final) == _key_status(read_results([reference.path]))
    # Nothing recorded ok was measured twice.
    ok = final[final["status"] == "ok"]
    assert not workload_keys(ok, with_backend=True).duplicated().any()


def _suite(seqlens=(8, 12), vs=(16,)):
    return parse_suite({
        "name": "resume", "device": "cpu",
        "sweep": {"backends": ["fault"], "modes": ["fwd"], "seqlen": list(seqlens), "heads": [{"h_qk": 1, "h_v": 1}],
                  "K": 8, "V": list(vs), "dtype": "float32"},
        "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2, "max_time_s": 0.05,
                   "target_rel_noise": 0.5},
        "check": {"oracle_max_tokens": 32},
    }, "<resume>")


def test_resume_reruns_only_what_is_not_ok(tmp_path):
    s = _suite(vs=(16, 17))  # V=17 raises: error rows are measured again, ok rows are not
    first = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY)))
    assert sorted(r.status for r in first.rows) == ["error", "error", "ok", "ok"]
    second = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY), resume=True))
    assert second.resumed == 2
    assert sorted((r.V, r.status) for r in second.rows) == [(17, "error"), (17, "error")]
    third = run_sweep(_suite(seqlens=(8, 12, 16), vs=(16,)), tmp_path, RunOptions(executor=InProcess(REGISTRY), resume=True))
    assert third.resumed == 2 and [r.total_tokens for r in third.rows] == [16]


def test_max_time_stops_before_new_points_and_resume_continues(tmp_path):
    s = _suite()
    stopped = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY), max_time_s=0))
    assert stopped.rows == [] and stopped.path is None and stopped.not_run == 2 and not stopped.complete
    done = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY), resume=True))
    assert done.complete and done.resumed == 0 and len(done.rows) == 2


def test_done_keys_need_same_suite_fingerprint_and_ok(tmp_path):
    p = Point(backend="b", mode="fwd", layout="dense", batch=1, seqlens=(1,), h_qk=1, h_v=1, K=8, V=8,
              dtype="float32")
    write_rows(tmp_path / "s" / "r1.parquet", [_row("r1", 0)])  # suite s, fingerprint f, ok, seqlens (1,)
    assert done_keys(tmp_path, "s", "f") == {key_of(p)}
    assert done_keys(tmp_path, "s", "other-env") == set()
    assert done_keys(tmp_path, "t", "f") == set()
    write_rows(tmp_path / "s" / "r2.parquet", [_row("r2", 1, status="error")])
    assert remaining([p, p.with_(seqlens=(2,))], done_keys(tmp_path, "s", "f")) == [p.with_(seqlens=(2,))]


def test_point_keys_survive_parquet_nulls_next_to_ints(tmp_path):
    # tp is null for explicit heads and an int for model heads; pandas reads such a column as floats.
    rows = [_row("r", 0), _row("r", 1)]
    rows[1] = type(rows[1])(**{**rows[1].as_dict(), "model": "m", "tp": 2})
    write_rows(tmp_path / "s" / "r.parquet", rows)
    p = Point(backend="b", mode="fwd", layout="dense", batch=1, seqlens=(2,), h_qk=1, h_v=1, K=8, V=8,
              dtype="float32", model="m", tp=2)
    assert key_of(p) in done_keys(tmp_path, "s", "f")


def test_a_checked_resume_needs_the_same_reference(tmp_path):
    """Rows checked against the fp32 oracle on a reduced problem are not done for a float64 full-size sweep,
    and the other way round; a distributed row (checked against one device under either) counts for both."""
    import dataclasses

    labels = ["naive-recurrent float32 @256 tokens", "fp64-full float64 @3 tokens",
              "flash_qla-nocp bfloat16 @4 tokens (one device, no CP)", None]
    rows = [dataclasses.replace(_row("r", i), oracle=label) for i, label in enumerate(labels)]
    write_rows(tmp_path / "s" / "r.parquet", rows)

    keys = {n: key_of(Point(backend="b", mode="fwd", layout="dense", batch=1, seqlens=(n,), h_qk=1, h_v=1, K=8,
                               V=8, dtype="float32")) for n in (1, 2, 3, 4)}
    assert done_keys(tmp_path, "s", "f", checked=True, reference="oracle") == {keys[1], keys[3]}
    assert done_keys(tmp_path, "s", "f", checked=True, reference="fp64-full") == {keys[2], keys[3]}
    assert done_keys(tmp_path, "s", "f", checked=True) == {keys[1], keys[2], keys[3]}  # row 4: unchecked
    assert done_keys(tmp_path, "s", "f") == set(keys.values())  # an unchecked resume takes any row


def test_resume_of_an_fp64_sweep_remeasures_what_the_oracle_checked(tmp_path):
    """End to end: a sweep checked against the reduced oracle, then the same suite resumed with
    `reference = "fp64-full"` measures every point again; a second fp64 resume finds them all done."""
    base = {"name": "refs", "device": "cpu",
            "sweep": {"backends": ["naive-chunk"], "modes": ["fwd"], "seqlen": [8, 16],
                      "heads": [{"h_qk": 1, "h_v": 2}], "K": 8, "V": 8, "dtype": "float32"},
            "timing": {"timer": "wall", "warmup": 0, "min_samples": 1, "max_samples": 1}}
    opts = RunOptions(executor=InProcess(REGISTRY), resume=True)
    first = run_sweep(parse_suite(base), tmp_path, opts)
    assert len(first.rows) == 2 and all(r.oracle.startswith("naive-recurrent") for r in first.rows)
    fp64 = parse_suite({**base, "check": {"reference": "fp64-full"}})
    again = run_sweep(fp64, tmp_path, opts)
    assert again.resumed == 0 and len(again.rows) == 2
    assert all(r.oracle.startswith("fp64-full") for r in again.rows)
    assert run_sweep(fp64, tmp_path, opts).resumed == 2
    assert run_sweep(parse_suite(base), tmp_path, opts).resumed == 2  # the oracle rows are still there


def test_a_resume_counts_only_rows_timed_in_its_regime(tmp_path):
    """`[timing] regime`: a burst row (or one from before the regime was recorded) is no answer for a sustained
    sweep; end to end, the sustained resume measures every point again and records its regime."""
    base = {"name": "regimes", "device": "cpu",
            "sweep": {"backends": ["naive-chunk"], "modes": ["fwd"], "seqlen": [8, 16],
                      "heads": [{"h_qk": 1, "h_v": 2}], "K": 8, "V": 8, "dtype": "float32"},
            "timing": {"timer": "wall", "warmup": 0, "min_samples": 1, "max_samples": 1}}
    opts = RunOptions(executor=InProcess(REGISTRY), resume=True)
    first = run_sweep(parse_suite(base), tmp_path, opts)
    assert [r.timing_regime for r in first.rows] == ["burst", "burst"]
    sustained = parse_suite({**base, "timing": {**base["timing"], "regime": "sustained", "sustained_ms": 5}})
    again = run_sweep(sustained, tmp_path, opts)
    assert again.resumed == 0 and [r.timing_regime for r in again.rows] == ["sustained", "sustained"]
    assert run_sweep(sustained, tmp_path, opts).resumed == 2
    assert run_sweep(parse_suite(base), tmp_path, opts).resumed == 2  # the burst rows are still there

    import dataclasses

    old = tmp_path / "old"  # a row written before the column existed reads null: a burst
    write_rows(old / "s" / "r.parquet", [dataclasses.replace(_row("r", 0), timing_regime=None)])
    assert len(done_keys(old, "s", "f", regime="burst")) == 1
    assert done_keys(old, "s", "f", regime="sustained") == set()
