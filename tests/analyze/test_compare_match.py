"""Pairing, verdicts, env guard, exit codes and renderings of `qlabench compare`, on stored rows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.analyze.compare import EnvMismatchError, Failure, Verdict, compare_paths
from qlabench.analyze.compare.envguard import major
from qlabench.analyze.compare.render import markdown, to_json
from qlabench.core.result import ResultRow
from qlabench.store.files import write_rows

ENV = dict(run_id="r", suite="s", timestamp="2024-01-01T00:00:00+00:00", host="h", device="NVIDIA H200",
           device_index=0, env_fingerprint="f", torch_version="2.8.0", triton_version="3.4.0", fla_version="0.6.0",
           cuda_version="12.8")


# the check an ok row passed (the evidence layer believes no unchecked row)
CHECKED = dict(oracle="naive-recurrent float32 @64 tokens", check_tokens=64, err_o=0.001)


def row(backend="b", seqlen=128, h_v=2, status="ok", median=1.0, n=30, noise=0.01, seed=0, model=None, tp=None,
        timestamp=None, replicate=None, **env) -> ResultRow:
    rng = np.random.default_rng(seed + 1000 * seqlen + int(median * 1000) + 77 * (replicate or 0))
    run_offset = np.exp(rng.normal(0, 0.005)) if replicate is not None else 1.0  # run-to-run noise
    samples = tuple(median * run_offset * np.exp(rng.normal(0, noise, n))) if status == "ok" else ()
    fields = {**ENV, **env}
    if timestamp:
        fields["timestamp"] = timestamp
    return ResultRow(**fields, backend=backend, mode="fwd", model=model, tp=tp, layout="dense", batch=1,
                     seqlens=(seqlen,), num_seqs=1, total_tokens=seqlen, h_qk=1, h_v=h_v, K=64, V=64,
                     dtype="bfloat16", gate="flashqla", seed=seed, initial_state=True, status=status,
                     reason=None if status == "ok" else f"{status} on purpose",
                     timer="graph" if status == "ok" else None, samples_ms=samples,
                     median_ms=float(np.median(samples)) if samples else None, n_samples=len(samples) or None,
                     replicate=replicate, **CHECKED if status == "ok" else {})


def reps(k=3, **kw) -> list[ResultRow]:
    """One point measured in k replicates (run sweep --replicates k): what timing verdicts need."""
    return [row(replicate=i, **kw) for i in range(k)]


@pytest.fixture
def files(tmp_path):
    def write(name, rows):
        return write_rows(tmp_path / f"{name}.parquet", rows)
    return write


def test_verdict_per_kind_of_change(files):
    base = files("base", [*reps(seqlen=64), *reps(seqlen=128), *reps(seqlen=256), *reps(seqlen=512), *reps(seqlen=1024),
                          *reps(seqlen=2048, status="skipped")])
    head = files("head", [*reps(seqlen=64), *reps(seqlen=128, median=1.2), *reps(seqlen=256, median=0.8),
                          *reps(seqlen=512, status="incorrect"), *reps(seqlen=4096), *reps(seqlen=2048, status="skipped")])
    c = compare_paths([base], [head])
    by_len = {p.label.split()[3]: p for p in c.pairs}
    assert by_len["1x64"].verdict is Verdict.SAME
    assert by_len["1x128"].verdict is Verdict.SLOWER and by_len["1x128"].change == pytest.approx(0.2, abs=0.02)
    assert by_len["1x256"].verdict is Verdict.FASTER
    assert by_len["1x512"].verdict is Verdict.STATUS_CHANGED and by_len["1x512"].failure is Failure.STATUS
    assert by_len["1x1024"].verdict is Verdict.MISSING
    assert by_len["1x4096"].verdict is Verdict.NEW
    assert by_len["1x2048"].verdict is Verdict.NOT_TIMED
    assert c.exit_code == 1
    # a point gone from head fails too: a kernel that vanishes is a failure
    assert {p.failure for p in c.failures} == {Failure.REGRESSION, Failure.STATUS, Failure.MISSING}
    assert c.worst(1)[0].failure in (Failure.REGRESSION, Failure.STATUS, Failure.MISSING)


def test_a_missing_point_fails_by_default_and_a_policy_can_drop_it(files):
    base = files("base", [row(seqlen=64), row(seqlen=128)])
    head = files("head", [row(seqlen=64)])
    assert compare_paths([base], [head]).exit_code == 1
    assert compare_paths([base], [head], fail_on={Failure.REGRESSION, Failure.STATUS}).exit_code == 0


def test_latest_row_per_point_wins_and_int_columns_pair_across_null_patterns(files, tmp_path):
    # Base folder: an old slow run superseded by a newer one. Its tp column has nulls (-> floats in
    # pandas), the head's does not: the rows must still pair.
    files("old", [row(model="Qwen3-Next", tp=2, median=5.0, timestamp="2024-01-01T00:00:00+00:00")])
    files("new", [row(model="Qwen3-Next", tp=2, timestamp="2024-01-02T00:00:00+00:00"), row(seqlen=64)])
    head = write_rows(tmp_path / "head" / "h.parquet", [row(model="Qwen3-Next", tp=2)])
    c = compare_paths([tmp_path / "old.parquet", tmp_path / "new.parquet"], [head])
    verdicts = sorted(p.verdict.value for p in c.pairs)
    assert verdicts == ["missing", "same"]


def test_env_guard_refuses_other_gpu_and_major_version(files):
    base = files("base", [row()])
    other_gpu = files("gpu", [row(device="NVIDIA H100 80GB HBM3")])
    other_fla = files("fla", [row(fla_version="0.7.1")])
    minor_torch = files("torch", [row(torch_version="2.9.1")])
    with pytest.raises(EnvMismatchError, match="device: NVIDIA H200 -> NVIDIA H100"):
        compare_paths([base], [other_gpu])
    with pytest.raises(EnvMismatchError, match="fla_version"):
        compare_paths([base], [other_fla])
    c = compare_paths([base], [other_gpu], allow_env_mismatch=True)
    assert [f.name for f in c.env if f.blocking] == ["device"]
    c = compare_paths([base], [minor_torch])  # 2.8 -> 2.9 is not a major change
    assert [(f.name, f.blocking) for f in c.env] == [("torch_version", False)]


def test_major_version():
    assert major("2.13.0+cpu") == "2" and major("12.8") == "12"
    assert major("0.6.0") == "0.6" and major("0.1.15") == "0.1"


def test_renderings(files):
    base = files("base", [*reps(seqlen=64), *reps(seqlen=128)])
    head = files("head", [*reps(seqlen=64), *reps(seqlen=128, median=1.5)])
    c = compare_paths([base], [head])
    md = markdown(c)
    first = md.splitlines()[0]
    assert "FAIL" in first and "1 slower" in first and "1 same" in first and "geometric-mean" in first
    assert "| **slower** |" in md
    doc = json.loads(to_json(c))
    assert doc["passed"] is False and doc["counts"]["slower"] == 1
    assert doc["pairs"][0]["verdict"] == "slower" and doc["pairs"][0]["ratio"] == pytest.approx(1.5, abs=0.03)


def test_cli_exit_codes(files, tmp_path):
    base = files("base", [*reps(seqlen=64)])
    same = files("same", [*reps(seqlen=64, seed=0)])
    slow = files("slow", [*reps(seqlen=64, median=1.3)])
    gpu = files("gpu", [*reps(seqlen=64, device="NVIDIA A100")])
    r = CliRunner()
    assert r.invoke(app, ["compare", str(base), str(same)]).exit_code == 0
    res = r.invoke(app, ["compare", str(base), str(slow), "--format", "markdown", "-o", str(tmp_path / "c.md")])
    assert res.exit_code == 1 and "slower" in (tmp_path / "c.md").read_text()
    res = r.invoke(app, ["compare", str(base), str(gpu)])
    assert res.exit_code == 2 and "NVIDIA A100" in res.output
    assert r.invoke(app, ["compare", str(base), str(tmp_path / "nope")]).exit_code == 2
    assert r.invoke(app, ["compare", str(base), str(slow), "--fail-on", "status"]).exit_code == 0


def _rows_file(path, make_row, ms, samples):
    from qlabench.store.files import write_rows

    return write_rows(path, [make_row(backend="naive-chunk", median_ms=ms, samples_ms=samples,
                                      n_samples=len(samples))])


def test_compare_names_itself_and_a_pass_says_why(tmp_path, make_row):
    base = _rows_file(tmp_path / "base.parquet", make_row, 1.0, (1.0, 1.0))
    head = _rows_file(tmp_path / "head.parquet", make_row, 1.8, (1.8, 1.8))  # +80%, but 2 samples: ambiguous
    r = CliRunner().invoke(app, ["compare", str(base), str(head), "--format", "markdown"])
    assert r.exit_code == 0, r.output
    assert "qlabench compare: PASS" in r.stdout and "qlabench gate" not in r.stdout
    assert "PASS because all 1 moved points are ambiguous" in r.stdout


def test_fail_on_help_lists_shift():
    r = CliRunner().invoke(app, ["compare", "--help"], env={"COLUMNS": "200"})
    assert "shift" in r.stdout.split("--fail-on", 1)[1].split("--", 1)[0]

