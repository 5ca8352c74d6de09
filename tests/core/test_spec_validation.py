"""Suite validation: bad suites fail at parse time with exit 2 (never an OverflowError, a
traceback, or a silent no-op)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.cli import app
from qlabench.core.errors import SpecError
from qlabench.core.spec import load_suite, parse_suite

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny-cpu.toml"
BASE = {
    "name": "v", "device": "cpu",
    "sweep": {"backends": ["naive-recurrent"], "modes": ["fwd"], "seqlen": [8, 16],
              "heads": [{"h_qk": 1, "h_v": 1}], "K": 8, "V": 8, "dtype": "float32"},
}


@pytest.mark.parametrize("value", [float("inf"), 1e7, float("nan"), 0, -1])
@pytest.mark.parametrize("key", ["point_timeout_s", "compile_timeout_s"])
def test_run_limits_out_of_range_fail_at_parse(key, value):
    with pytest.raises(SpecError, match=f"run.{key}"):
        parse_suite({**BASE, "run": {key: value}}, "v.toml")


def test_an_infinite_point_timeout_is_exit_2_through_the_cli(tmp_path):
    f = tmp_path / "inf.toml"
    f.write_text(TINY.read_text() + "\n[run]\npoint_timeout_s = inf\n")
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(f), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "run.point_timeout_s" in r.output and "finite" in r.output


@pytest.mark.parametrize("table,key,value", [
    ("timing", "min_samples", -3), ("timing", "max_samples", 0), ("timing", "warmup", -5),
    ("timing", "max_time_s", -1), ("timing", "target_rel_noise", -1), ("check", "oracle_max_tokens", 0),
    ("timing", "max_samples", 2),  # below the default min_samples of 5
])
def test_negative_and_zero_settings_are_refused(table, key, value):
    with pytest.raises(SpecError, match=f"{table}.{key}"):
        parse_suite({**BASE, table: {key: value}}, "v.toml")


@pytest.mark.parametrize("rule", [{"seqlen": "16"}, {"backend": 3}, {"initial_state": "no"},
                                  {"seqlens": "8"}, {"batch": [1, "2"]}])
def test_exclude_values_of_the_wrong_type_are_refused(rule):
    with pytest.raises(SpecError, match="exclude\\[0\\]"):
        parse_suite({**BASE, "exclude": [rule]}, "v.toml")


def test_exclude_values_of_the_right_type_still_work():
    s = parse_suite({**BASE, "exclude": [{"seqlen": 16}, {"seqlens": [99]}]}, "v.toml")
    assert [p.seqlens for p in s.points] == [(8,)]


@pytest.mark.parametrize("device", ["cuda:abc", "cuda:", "gpu0", "cuda:0x"])
def test_a_malformed_device_is_refused(device):
    with pytest.raises(SpecError, match="device"):
        parse_suite({**BASE, "device": device}, "v.toml")


def test_a_non_utf8_suite_file_is_a_spec_error(tmp_path):
    f = tmp_path / "latin.toml"
    f.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(SpecError, match="UTF-8"):
        load_suite(str(f))
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(f), "--dry-run"])
    assert r.exit_code == 2 and "UTF-8" in r.output


def test_an_unknown_backend_fails_dry_run(tmp_path):
    f = tmp_path / "typo.toml"
    f.write_text(TINY.read_text().replace('"naive-chunk"', '"naive-chunkk"'))
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(f), "--dry-run"])
    assert r.exit_code == 2 and "unknown backend 'naive-chunkk'" in r.output


def test_a_million_point_suite_is_refused_before_it_is_expanded():
    import time

    big = {**BASE, "sweep": {**BASE["sweep"], "seqlen": list(range(1, 1001)), "seed": list(range(1000))}}
    t0 = time.perf_counter()
    with pytest.raises(SpecError, match="1000000 more points.*--max-points"):
        parse_suite(big, "v.toml")
    assert time.perf_counter() - t0 < 2.0
    assert len(parse_suite({**BASE, "sweep": {**BASE["sweep"], "seed": list(range(30))}}, "v.toml",
                           max_points=60).points) == 60


def test_a_huge_batch_is_refused_at_parse():
    with pytest.raises(SpecError, match="batch"):
        parse_suite({**BASE, "sweep": {**BASE["sweep"], "batch": [100_000_000]}}, "v.toml")


def test_points_larger_than_the_device_memory_are_refused_before_any_worker(tmp_path):
    from qlabench.core.errors import ConfigError
    from qlabench.run.sweep import device_memory_bytes, run_sweep

    ram = device_memory_bytes("cpu")
    tokens = ram // (8 * 4 * 4) + 1  # float32 q, k, v, ... of one head of dim 8: more bytes than RAM
    s = parse_suite({**BASE, "sweep": {**BASE["sweep"], "seqlen": [16, tokens]}}, "v.toml")
    with pytest.raises(ConfigError, match="--allow-oversized"):
        run_sweep(s, tmp_path, RunOptions(executor=InProcess()))
    assert not (tmp_path / "v").exists()


def test_a_state_pool_larger_than_the_device_memory_is_refused_before_any_worker(tmp_path):
    """A serving point's tensors are small; its pool (held twice) is what fills the memory."""
    from qlabench.core.errors import ConfigError
    from qlabench.run.options import InProcess, RunOptions
    from qlabench.run.sweep import device_memory_bytes, run_sweep

    per_slot = 1 * 128 * 128 * 4
    factor = device_memory_bytes("cpu") // (2 * 2 * per_slot) + 1  # pool = factor x batch 2 slots, held twice
    s = parse_suite({**BASE, "sweep": {**BASE["sweep"], "backends": ["naive-step"], "modes": ["decode"],
                                       "batch": [2], "seqlen": [1], "K": 128, "V": 128, "pool_factor": [factor]}},
                    "v.toml")
    with pytest.raises(ConfigError, match="--allow-oversized"):
        run_sweep(s, tmp_path, RunOptions(executor=InProcess()))
    assert not (tmp_path / "v").exists()


def test_dry_run_of_a_large_suite_shows_the_count_and_a_bound_on_time(tmp_path):
    f = tmp_path / "large.toml"
    f.write_text(TINY.read_text().replace("seqlen = [16, 32]", "seqlen = [16, 32]\nseed = " +
                                          str(list(range(200)))))
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(f), "--dry-run"])
    assert r.exit_code == 0 and "... and 2200 more" in r.output and "2400 points" in r.output
    assert "up to" in r.output
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(f), "--dry-run", "--max-points", "100"])
    assert r.exit_code == 2 and "--max-points" in r.output


SERVING = {
    "name": "s", "device": "cpu",
    "sweep": {"backends": ["naive-step"], "modes": ["decode"], "batch": [2], "seqlen": [1],
              "heads": [{"h_qk": 1, "h_v": 2}], "K": 8, "V": 8, "dtype": "float32", "pool_factor": [1, 2],
              "state_layout": ["kv", "vk"], "state_dtype": ["float32", "bfloat16"]},
}


@pytest.mark.parametrize("rule, key", [
    ({"pool": "2"}, "pool"), ({"pool": True}, "pool"), ({"pool": 2.0}, "pool"), ({"state_layout": 1}, "state_layout"),
    ({"state_layout": "xy"}, "state_layout"), ({"state_dtype": ["float32", 16]}, "state_dtype"),
    ({"state_dtype": "float16"}, "state_dtype"), ({"beta_regime": "medium"}, "beta_regime"),
    ({"mode": "decodee"}, "mode"), ({"dtype": "fp32"}, "dtype"),
])
def test_exclude_serving_values_follow_the_sweeps_typed_rules(rule, key):
    """A value no point can have would exclude nothing: refused naming the file and key, as [sweep] does."""
    with pytest.raises(SpecError) as e:
        parse_suite({**SERVING, "exclude": [rule]}, "s.toml")
    assert e.value.path == "s.toml" and e.value.key == f"exclude[0].{key}" and "exclude nothing" in e.value.message


def test_exclude_serving_values_of_the_right_type_exclude():
    s = parse_suite({**SERVING, "exclude": [{"pool": 2, "state_layout": "vk"}, {"state_dtype": "bfloat16"}]}, "s.toml")
    assert sorted((p.pool, p.state_layout, p.state_dtype) for p in s.points) == [
        (2, "kv", "float32"), (4, "kv", "float32"), (4, "vk", "float32")]


def test_exclude_applies_before_combinations_are_judged():
    """decode is T = 1 and mtp T = 2..16: a sweep of both modes over both lengths is valid once [[exclude]]
    drops the two impossible combinations."""
    sweep = {**SERVING["sweep"], "modes": ["decode", "mtp"], "seqlen": [1, 4], "pool_factor": [2],
             "state_layout": ["kv"], "state_dtype": ["float32"]}
    s = parse_suite({**SERVING, "sweep": sweep,
                     "exclude": [{"mode": "decode", "seqlen": 4}, {"mode": "mtp", "seqlen": 1}]}, "s.toml")
    assert sorted((p.mode, p.seqlens[0]) for p in s.points) == [("decode", 1), ("mtp", 4)]


def test_an_invalid_serving_combination_names_the_file_and_key():
    sweep = {**SERVING["sweep"], "modes": ["decode", "mtp"], "seqlen": [1, 4]}
    with pytest.raises(SpecError) as e:
        parse_suite({**SERVING, "sweep": sweep, "exclude": [{"mode": "mtp", "seqlen": 1}]}, "s.toml")
    assert e.value.path == "s.toml" and e.value.key == "sweep.seqlen"
    assert "decode is one token per sequence" in e.value.message and "[[exclude]]" in e.value.message
    inc = {**SERVING, "include": [{"modes": ["decode"], "seqlen": [1], "initial_state": False}]}
    with pytest.raises(SpecError) as e:
        parse_suite(inc, "s.toml")
    assert e.value.key == "include[0].initial_state"
