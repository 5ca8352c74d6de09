"""qlabench/suites/flashqla-study.toml measures exactly FlashQLA's published table (the CSV shipped in the package)."""

from __future__ import annotations

import csv
import hashlib
import io
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from qlabench.core.spec import load_suite
from qlabench.core.splits import random_split

FWD_BACKENDS = {"flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "fla", "fla-intracp", "flashinfer", "flashinfer-nocp",
                "flashinfer-forcecp"}
BWD_BACKENDS = {"flash_qla", "fla"}
GATE_BACKENDS = {"flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "fla"}
TRAIN_BACKENDS = {"flash_qla", "flash_qla-nocp", "fla"}
TRAIN_HEADS = {(2, 8), (4, 16), (8, 32), (16, 64), (16, 48)}  # 397B/122B TP8..TP1, 27B TP1
REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
REPO_CSV = REPO / "qlabench" / "analyze" / "data" / "flashqla_h200_published.csv"


def published_text() -> str:
    return resources.files("qlabench.analyze.data").joinpath("flashqla_h200_published.csv").read_text()


def published() -> list[dict]:
    return list(csv.DictReader(io.StringIO(published_text())))


@pytest.fixture(scope="module")
def suite():
    return load_suite("flashqla-study")


def _published_layouts() -> set:
    return {tuple(int(s) for s in r["seqlens"].split("+")) for r in published() if r["mode"] == "fwd"}


def training(suite) -> list:
    """The training part: forward and backward at the model head configurations on the random splits."""
    layouts = _published_layouts()
    return [p for p in suite.points if p.model is not None and (p.h_qk, p.h_v) in TRAIN_HEADS
            and p.gate_zero_frac is None and p.gate_scale is None and p.backend in TRAIN_BACKENDS
            and (p.mode != "fwd" or p.seqlens not in layouts)]


def parts(suite):
    """The published table's three parts (forward, backward, gate sweep), without the training part."""
    train = set(training(suite))
    fwd = [p for p in suite.points if p.mode == "fwd" and p.gate_zero_frac is None and p.gate_scale is None
           and p not in train]
    bwd = [p for p in suite.points if p.mode in ("bwd", "bwd_train") and p not in train]
    gate = [p for p in suite.points if p.gate_zero_frac is not None or p.gate_scale is not None]
    return fwd, bwd, gate


def test_the_csv_ships_in_the_package_unchanged():
    rows = published()
    assert len(rows) == 203
    assert Counter(r["mode"] for r in rows) == {"fwd": 171, "bwd": 32}
    assert list(rows[0]) == ["mode", "model_config", "seqlens", "num_seqs", "total_tokens", "h_qk", "h_v",
                             "flash_qla_ms", "flashinfer_ms", "fla_ms"]
    readme = resources.files("qlabench.analyze.data").joinpath("README.md").read_text()
    assert readme.count("6e5d2ea")
    # the file in the repository is the one the package ships, and it is the table whose digest the
    # data README records from the source (FlashQLA at 6e5d2ea): values unchanged
    assert published_text() == REPO_CSV.read_text()
    assert f"sha256 `{hashlib.sha256(REPO_CSV.read_bytes()).hexdigest()}`" in readme


def test_pyproject_ships_the_data():
    text = (REPO / "pyproject.toml").read_text()
    assert '"qlabench.analyze.data" = ["*.csv", "*.json", "*.md"]' in text  # the tables and their provenance


def test_point_counts_per_part(suite):
    fwd, bwd, gate = parts(suite)
    assert len(suite.points) == 2066
    assert (len(fwd), len(bwd), len(gate), len(training(suite))) == (1368, 128, 120, 450)
    assert len(set(suite.points)) == len(suite.points)


def test_training_part_measures_forward_and_backward_on_the_same_sequences(suite):
    train = training(suite)
    # every training layout has all four modes on every backend with a backward, at every model head config
    by_problem = Counter((p.backend, p.h_qk, p.h_v, p.seqlens) for p in suite.points
                         if p in set(train) or (p.mode == "fwd" and p.model is not None
                                                and (p.h_qk, p.h_v) in TRAIN_HEADS and p.backend in TRAIN_BACKENDS
                                                and len(p.seqlens) == 1 and p.seqlens[0] in (8192, 32768)
                                                and p.gate_zero_frac is None and p.gate_scale is None))
    assert set(by_problem.values()) == {4}  # fwd, bwd, bwd_train, fwd_bwd (one training step)
    assert {(h, v) for _, h, v, _ in by_problem} == TRAIN_HEADS
    for p in train:
        assert p.seqlens == random_split(p.total_tokens, p.num_seqs, 42)
        assert (p.layout, p.batch, p.gate) == ("varlen", 1, "flashqla")


def test_forward_points_are_the_published_rows_on_every_forward_backend(suite):
    fwd, _, _ = parts(suite)
    want = {(int(r["h_qk"]), int(r["h_v"]), tuple(int(s) for s in r["seqlens"].split("+")))
            for r in published() if r["mode"] == "fwd"}
    assert len(want) == 171
    got = Counter((p.h_qk, p.h_v, p.seqlens) for p in fwd)
    assert set(got) == want and set(got.values()) == {len(FWD_BACKENDS)}
    assert {p.backend for p in fwd} == FWD_BACKENDS


def test_backward_points_are_the_published_rows_in_both_variants(suite):
    _, bwd, _ = parts(suite)
    want = {(int(r["h_qk"]), int(r["h_v"]), int(r["total_tokens"]), int(r["num_seqs"]))
            for r in published() if r["mode"] == "bwd"}
    assert len(want) == 32
    got = Counter((p.h_qk, p.h_v, p.total_tokens, p.num_seqs) for p in bwd)
    assert set(got) == want and set(got.values()) == {4}  # 2 backends x 2 variants
    assert Counter((p.backend, p.mode) for p in bwd) == {(b, m): 32 for b in BWD_BACKENDS
                                                         for m in ("bwd", "bwd_train")}
    for p in bwd:  # the published random split (seed 42); tests/core/test_splits.py checks it against torch
        assert p.seqlens == random_split(p.total_tokens, p.num_seqs, 42)


def test_every_published_point_follows_the_published_method(suite):
    fwd, bwd, gate = parts(suite)
    for p in fwd + bwd + gate:
        assert (p.layout, p.batch) == ("varlen", 1), p.label()  # packed with cu_seqlens, single sequences too
        assert (p.K, p.V, p.dtype, p.initial_state, p.gate) == (128, 128, "bfloat16", True, "flashqla")
        assert p.cp_world_size is None and p.seed == 0
    for p in fwd + bwd:
        assert p.gate_params_effective() == {"gate_zero_frac": 0.25, "gate_scale": 16.0}


def test_model_configs_match_the_table(suite):
    fwd, _, _ = parts(suite)
    label = {"qwen3.5-397b": "397B/122B", "qwen3.5-35b": "35B/9B/4B", "qwen3.5-27b": "27B", "qwen3.5-2b": "2B/0.8B"}
    got = {(p.h_qk, p.h_v): (f"{label[p.model]} TP{p.tp}" if p.model in label else "Sym h32") for p in fwd}
    want = {(int(r["h_qk"]), int(r["h_v"])): r["model_config"] for r in published() if r["mode"] == "fwd"}
    assert got == want


def test_gate_sweep(suite):
    _, _, gate = parts(suite)
    assert {p.backend for p in gate} == GATE_BACKENDS and {p.mode for p in gate} == {"fwd"}
    assert {(p.h_qk, p.h_v) for p in gate} == {(2, 8), (8, 32)}
    assert {p.seqlens for p in gate} == {(8192,), (16384,), (32768,)}
    eff = {(e["gate_zero_frac"], e["gate_scale"]) for e in (p.gate_params_effective() for p in gate)}
    assert eff == {(z, s) for z in (0.0, 0.25, 0.5) for s in (16.0, 64.0)} - {(0.25, 16.0)}
    # its published-default corner is the forward part's points (no duplicate point)
    fwd, _, _ = parts(suite)
    corner = {(p.backend, p.h_qk, p.h_v, p.seqlens) for p in fwd if p.seqlens in {(8192,), (16384,), (32768,)}
              and (p.h_qk, p.h_v) in {(2, 8), (8, 32)} and p.backend in GATE_BACKENDS}
    assert len(corner) == 24


def test_timing_is_the_published_kind_and_cheap(suite):
    t = suite.timing
    assert t.timer == "graph" and t.l2_flush
    assert t.max_time_s <= 0.5 and t.min_samples >= 10
    assert suite.check.enabled and suite.check.full_size  # every row checked at its own size (ranked only then)
    assert suite.device == "cuda" and suite.baseline == "fla"


def test_fla_intracp_runs_the_forward_part_only(suite):
    fwd, bwd, gate = parts(suite)
    mine = [p for p in suite.points if p.backend == "fla-intracp"]
    assert len(mine) == 171 and set(mine) <= set(fwd)
    assert not any(p.backend == "fla-intracp" for p in bwd + gate)
    # every such point is one it runs (varlen forward): none becomes a skipped row
    from qlabench.backends import REGISTRY

    assert all(REGISTRY["fla-intracp"].supports(p, "cuda") == (True, "") for p in mine)
