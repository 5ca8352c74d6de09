"""Suite files: expansion into points, include/exclude rules, and errors that name the file and key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from qlabench.core.errors import SpecError
from qlabench.core.spec import CheckSpec, TimingSpec, list_suites, load_suite, parse_suite, resolve_suite_path

MINIMAL_SWEEP = """
[sweep]
backends = ["naive-chunk"]
seqlen = [64]
heads = [{ h_qk = 2, h_v = 4 }]
"""


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load(tmp_path: Path, text: str):
    return load_suite(str(write(tmp_path, text)))


def spec_error(tmp_path: Path, text: str) -> SpecError:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_suite(str(path))
    err = info.value
    assert err.path == str(path)
    assert str(path) in str(err) and err.key in str(err)
    return err


# -- expansion --------------------------------------------------------------------------------------


def test_cartesian_product_count(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = ["naive-recurrent", "naive-chunk"]
        modes = ["fwd", "fwd_bwd"]
        batch = [1, 2]
        seqlen = [64, 128, 256]
        varlen = [[10, 20], [5, 5, 5]]
        heads = [{ h_qk = 2, h_v = 2 }, { h_qk = 2, h_v = 8 }]
        dtype = ["float32", "bfloat16"]
        gate = ["flashqla", "strong"]
    """)
    layouts = 2 * 3 + 2  # dense (batch x seqlen) + varlen
    assert len(s.points) == 2 * 2 * layouts * 2 * 2 * 2
    assert len(set(s.points)) == len(s.points)


def test_defaults(tmp_path):
    s = load(tmp_path, MINIMAL_SWEEP)
    (p,) = s.points
    assert (p.mode, p.batch, p.K, p.V, p.dtype, p.gate, p.seed, p.initial_state) == (
        "fwd", 1, 128, 128, "bfloat16", "flashqla", 0, True)
    assert s.name == "s"  # the file stem when no name is given
    assert s.device == "auto" and s.baseline is None
    assert s.timing == TimingSpec() and s.check == CheckSpec()


def test_dense_and_varlen_layouts(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        batch = [3]
        seqlen = [32]
        varlen = [[7, 100, 1], [64]]
        heads = [{ h_qk = 1, h_v = 1 }]
    """)
    dense = [p for p in s.points if p.layout == "dense"]
    varlen = [p for p in s.points if p.layout == "varlen"]
    assert [(p.batch, p.seqlens) for p in dense] == [(3, (32, 32, 32))]
    assert sorted((p.batch, p.seqlens) for p in varlen) == [(1, (7, 100, 1)), (1, (64,))]


def test_single_varlen_layout_may_be_a_flat_list(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        varlen = [10, 30]
        heads = [{ h_qk = 1, h_v = 1 }]
    """)
    assert [p.seqlens for p in s.points] == [(10, 30)]


def test_scalars_are_one_element_axes(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = "naive-chunk"
        seqlen = 64
        heads = [{ h_qk = 1, h_v = 1 }]
        K = 16
        dtype = "float32"
        initial_state = false
    """)
    (p,) = s.points
    assert (p.backend, p.seqlens, p.K, p.dtype, p.initial_state) == ("naive-chunk", (64,), 16, "float32", False)


def test_model_catalogue_and_tp(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ model = "qwen3.5-27b", tp = [1, 2, 4, 8] }, { model = "0.8B" }, { h_qk = 4, h_v = 8 }]
    """)
    got = [(p.model, p.tp, p.h_qk, p.h_v) for p in s.points]
    assert got == [
        ("qwen3.5-27b", 1, 16, 48), ("qwen3.5-27b", 2, 8, 24), ("qwen3.5-27b", 4, 4, 12), ("qwen3.5-27b", 8, 2, 6),
        ("qwen3.5-0.8b", 1, 16, 16),  # alias resolved to the canonical name; tp defaults to 1
        (None, None, 4, 8),
    ]


def test_include_adds_sweeps_that_inherit_the_main_axes(tmp_path):
    s = load(tmp_path, MINIMAL_SWEEP + """
        [[include]]
        seqlen = [4096]
        dtype = "float32"
    """)
    assert sorted((p.seqlens, p.dtype) for p in s.points) == [((64,), "bfloat16"), ((4096,), "float32")]
    assert all(p.backend == "naive-chunk" and (p.h_qk, p.h_v) == (2, 4) for p in s.points)


def test_include_without_main_sweep(tmp_path):
    s = load(tmp_path, """
        [[include]]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ h_qk = 1, h_v = 1 }]
    """)
    assert len(s.points) == 1


def test_duplicates_are_dropped_keeping_first_order(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = ["naive-chunk", "naive-chunk"]
        seqlen = [64, 128, 64]
        heads = [{ h_qk = 2, h_v = 4 }, { model = "sym-h32", tp = 8 }]
        [[include]]
        seqlen = [128]
    """)
    # sym-h32 at TP8 is h4/4, distinct from h2/4; duplicates in axes and in include vanish.
    assert [(p.seqlens[0], p.h_qk, p.h_v) for p in s.points] == [(64, 2, 4), (64, 4, 4), (128, 2, 4), (128, 4, 4)]


def test_exclude_drops_points_matching_every_key(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = ["naive-recurrent", "naive-chunk"]
        modes = ["fwd", "fwd_bwd"]
        seqlen = [64, 1024]
        varlen = [[100, 924]]
        heads = [{ h_qk = 1, h_v = 1 }]
        [[exclude]]
        backend = "naive-recurrent"
        seqlen = 1024
        [[exclude]]
        mode = "fwd_bwd"
        total_tokens = [1024]
        backend = ["naive-chunk"]
    """)
    keys = {(p.backend, p.mode, p.layout, p.total_tokens) for p in s.points}
    assert ("naive-recurrent", "fwd", "dense", 1024) not in keys
    assert ("naive-recurrent", "fwd", "varlen", 1024) in keys  # `seqlen` matches dense T only
    assert ("naive-chunk", "fwd_bwd", "dense", 1024) not in keys
    assert ("naive-chunk", "fwd_bwd", "varlen", 1024) not in keys
    assert ("naive-chunk", "fwd", "dense", 1024) in keys
    assert len(s.points) == 2 * 2 * 3 - 2 - 2


def test_exclude_by_model_alias_and_exact_seqlens(tmp_path):
    s = load(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        varlen = [[10, 20], [30]]
        heads = [{ model = "27b", tp = [1, 2] }, { h_qk = 1, h_v = 1 }]
        [[exclude]]
        model = "27B"
        tp = 2
        [[exclude]]
        seqlens = [10, 20]
        h_qk = 1
    """)
    got = {(p.model, p.tp, p.seqlens) for p in s.points}
    assert got == {("qwen3.5-27b", 1, (10, 20)), ("qwen3.5-27b", 1, (30,)), (None, None, (30,))}


def test_top_level_fields_and_tables(tmp_path):
    s = load(tmp_path, """
        name = "custom"
        description = "d"
        device = "cuda:1"
        baseline = "naive-chunk"
        [timing]
        timer = "events"
        warmup = 7
        min_time_s = 1
        [check]
        enabled = false
        oracle_max_tokens = 64
    """ + MINIMAL_SWEEP)
    assert (s.name, s.description, s.device, s.baseline) == ("custom", "d", "cuda:1", "naive-chunk")
    assert s.timing.timer == "events" and s.timing.warmup == 7
    assert s.timing.min_time_s == 1.0 and isinstance(s.timing.min_time_s, float)  # integers allowed for floats
    assert s.check == CheckSpec(enabled=False, oracle_max_tokens=64)


def test_bundled_suites_are_valid():
    paths = list_suites()
    assert any(p.stem == "quick-cpu" for p in paths)
    for path in paths:
        assert load_suite(str(path)).points


def test_suite_by_name_and_by_path(data_dir):
    assert load_suite("quick-cpu").name == "quick-cpu"
    assert load_suite(str(data_dir / "tiny-cpu.toml")).name == "tiny-cpu"
    assert resolve_suite_path("tiny-cpu", suites_dir=data_dir) == data_dir / "tiny-cpu.toml"


def test_parse_suite_without_a_file():
    s = parse_suite({"sweep": {"backends": ["naive-chunk"], "seqlen": [8], "heads": [{"h_qk": 1, "h_v": 1}]}})
    assert len(s.points) == 1


# -- errors: each names the file and the key --------------------------------------------------------


def test_unknown_top_level_key(tmp_path):
    err = spec_error(tmp_path, 'nmae = "typo"\n' + MINIMAL_SWEEP)
    assert err.key == "nmae"
    assert "unknown key" in err.message


def test_unknown_sweep_axis(data_dir):
    path = data_dir / "bad-unknown-axis.toml"
    with pytest.raises(SpecError) as info:
        load_suite(str(path))
    assert (info.value.path, info.value.key) == (str(path), "sweep.seqlens")
    assert "unknown axis" in info.value.message


def test_unknown_key_in_heads(tmp_path):
    err = spec_error(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ h_qk = 2, h_v = 4 }, { h_qk = 2, hv = 4 }]
    """)
    assert err.key == "sweep.heads[1].hv"


def test_unknown_key_in_timing(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "[timing]\nwarmups = 3\n")
    assert err.key == "timing.warmups"


def test_unknown_key_in_check(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "[check]\noracle = 'x'\n")
    assert err.key == "check.oracle"


def test_unknown_key_in_exclude(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "[[exclude]]\nbackend = 'naive-chunk'\nsequence = 64\n")
    assert err.key == "exclude[0].sequence"


def test_unknown_key_in_include(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "[[include]]\nseqlen = [8]\nbogus = 1\n")
    assert err.key == "include[0].bogus"


@pytest.mark.parametrize("value, type_name", [('"2"', "str"), ("true", "bool"), ("1.5", "float")])
def test_batch_of_the_wrong_type(tmp_path, value, type_name):
    err = spec_error(tmp_path, MINIMAL_SWEEP + f"batch = {value}\n")
    assert err.key == "sweep.batch[0]"
    assert "must be an integer" in err.message
    assert type_name in err.message


def test_wrong_type_in_a_list_names_the_element(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "K = [64, \"128\"]\n")
    assert err.key == "sweep.K[1]"


def test_wrong_type_in_timing(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "[timing]\nwarmup = \"3\"\n")
    assert err.key == "timing.warmup"


def test_wrong_type_top_level(tmp_path):
    err = spec_error(tmp_path, "name = 3\n" + MINIMAL_SWEEP)
    assert err.key == "name"


@pytest.mark.parametrize("axis, value", [("dtype", '"int4"'), ("gate", '"weak"'), ("modes", '["bwd", "sideways"]')])
def test_values_outside_the_allowed_set(tmp_path, axis, value):
    err = spec_error(tmp_path, MINIMAL_SWEEP + f"{axis} = {value}\n")
    assert err.key.startswith(f"sweep.{axis}[")
    assert "is not one of" in err.message


def test_non_positive_sizes(tmp_path):
    assert spec_error(tmp_path, MINIMAL_SWEEP + "V = 0\n").key == "sweep.V[0]"
    # seed 0 is fine; only negative seeds are rejected
    assert len(load(tmp_path, MINIMAL_SWEEP + "seed = [0, 1]\n").points) == 2
    assert spec_error(tmp_path, MINIMAL_SWEEP + "seed = -1\n").key == "sweep.seed[0]"


def test_h_v_not_a_multiple_of_h_qk(tmp_path):
    err = spec_error(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ h_qk = 4, h_v = 6 }]
    """)
    assert err.key == "sweep.heads[0].h_v"
    assert "not a multiple" in err.message


def test_tp_that_does_not_divide_the_heads(tmp_path):
    err = spec_error(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ model = "qwen3.5-27b", tp = [2, 32] }]
    """)
    assert err.key == "sweep.heads[0].tp"
    assert "tp=32" in err.message


def test_unknown_model(tmp_path):
    err = spec_error(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ model = "llama-7b" }]
    """)
    assert err.key == "sweep.heads[0].model"


def test_model_and_explicit_heads_together(tmp_path):
    err = spec_error(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ model = "9b", h_qk = 16 }]
    """)
    assert err.key == "sweep.heads[0]"


def test_tp_without_a_model(tmp_path):
    err = spec_error(tmp_path, """
        [sweep]
        backends = ["naive-chunk"]
        seqlen = [64]
        heads = [{ h_qk = 16, h_v = 32, tp = 2 }]
    """)
    assert err.key == "sweep.heads[0].tp"


def test_missing_required_axis(tmp_path):
    err = spec_error(tmp_path, '[sweep]\nbackends = ["naive-chunk"]\nseqlen = [64]\n')
    assert err.key == "sweep.heads"


def test_no_sequences(tmp_path):
    err = spec_error(tmp_path, '[sweep]\nbackends = ["naive-chunk"]\nheads = [{ h_qk = 1, h_v = 1 }]\n')
    assert err.key == "sweep.seqlen"


def test_bad_varlen_layout(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "varlen = [[10, 0]]\n")
    assert err.key == "sweep.varlen[0]"


def test_everything_excluded_is_an_empty_sweep(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "[[exclude]]\nbackend = 'naive-chunk'\n")
    assert err.key == "sweep"
    assert "empty" in err.message


def test_no_sweep_at_all_is_empty(tmp_path):
    err = spec_error(tmp_path, 'name = "nothing"\n')
    assert "empty" in err.message


def test_bad_device_and_timer(tmp_path):
    assert spec_error(tmp_path, 'device = "tpu"\n' + MINIMAL_SWEEP).key == "device"
    assert spec_error(tmp_path, MINIMAL_SWEEP + '[timing]\ntimer = "sundial"\n').key == "timing.timer"


def test_timing_regime_is_burst_or_sustained_with_a_positive_lead_in(tmp_path):
    assert spec_error(tmp_path, MINIMAL_SWEEP + '[timing]\nregime = "soak"\n').key == "timing.regime"
    assert spec_error(tmp_path, MINIMAL_SWEEP + '[timing]\nsustained_ms = 0\n').key == "timing.sustained_ms"
    path = tmp_path / "ok.toml"
    path.write_text(MINIMAL_SWEEP + '[timing]\nregime = "sustained"\nsustained_ms = 150\n')
    t = load_suite(path).timing
    assert (t.regime, t.sustained_ms) == ("sustained", 150.0)


def test_invalid_toml(tmp_path):
    err = spec_error(tmp_path, "[sweep\n")
    assert err.key == "toml"


def test_unknown_suite_name_lists_known(data_dir):
    with pytest.raises(SpecError, match="tiny-cpu") as info:
        load_suite("no-such-suite", suites_dir=data_dir)
    assert info.value.key == "suite"


def test_missing_suite_file(tmp_path):
    with pytest.raises(SpecError) as info:
        load_suite(str(tmp_path / "absent.toml"))
    assert info.value.key == "suite"


def test_unknown_model_in_exclude(tmp_path):
    err = spec_error(tmp_path, MINIMAL_SWEEP + "[[exclude]]\nmodel = ['27b', 'llama-7b']\n")
    assert err.key == "exclude[0].model"
    assert "llama-7b" in err.message


def test_run_table(tmp_path):
    s = load(tmp_path, MINIMAL_SWEEP + "[run]\npoint_timeout_s = 5\n")
    assert s.run.point_timeout_s == 5.0
    assert spec_error(tmp_path, MINIMAL_SWEEP + "[run]\npoint_timeout = 5\n").key == "run.point_timeout"
    assert spec_error(tmp_path, MINIMAL_SWEEP + "[run]\ncompile_timeout_s = 0\n").key == "run.compile_timeout_s"


# -- qlabench/suites/README.md stays true ----------------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "qlabench" / "suites" / "README.md"


def test_readme_example_is_a_valid_suite():
    import re

    from qlabench.core.spec import tomllib

    (block,) = re.findall(r"```toml\n(.*?)```", README.read_text(), re.S)
    s = parse_suite(tomllib.loads(block), "example.toml")
    assert s.name == "example" and s.timing.timer == "graph" and s.check.full_size
    assert not any(p.mode == "fwd_bwd" and p.batch == 4 and p.seqlens[0] == 16384 for p in s.points)


def test_readme_model_table_matches_the_catalogue():
    import re

    from qlabench.core.models import CATALOGUE

    rows = re.findall(r"^\| `([\w.-]+)` +\| `([\w.]+)` *\| (\d+) +\| (\d+) +\|$", README.read_text(), re.M)
    assert rows == [(m.name, m.aliases[0], str(m.h_qk), str(m.h_v)) for m in CATALOGUE]


def test_profile_table_is_parsed_and_validated():
    from qlabench.core.errors import SpecError
    from qlabench.core.spec import parse_suite

    base = {"sweep": {"backends": ["naive-chunk"], "seqlen": [64], "heads": [{"h_qk": 1, "h_v": 1}]}}
    assert parse_suite(base, "s.toml").profile.ncu is False
    assert parse_suite({**base, "profile": {"ncu": True}}, "s.toml").profile.ncu is True
    with pytest.raises(SpecError) as e:
        parse_suite({**base, "profile": {"nsight": True}}, "s.toml")
    assert e.value.key == "profile.nsight"


def test_cpu_threads_suite_key_is_validated():
    base = {"sweep": {"backends": ["naive-chunk"], "seqlen": [16], "K": 16, "V": 16, "heads": [{"h_qk": 1, "h_v": 1}]}}
    assert parse_suite({**base, "run": {"cpu_threads": 0}}).run.cpu_threads == 0
    with pytest.raises(SpecError, match="run.cpu_threads"):
        parse_suite({**base, "run": {"cpu_threads": -1}})
    with pytest.raises(SpecError, match="run.cpu_threads"):
        parse_suite({**base, "run": {"cpu_threads": "one"}})



# -- serving axes --------------------------------------------------------------------------------------


def _serving_suite(**sweep):
    from qlabench.core.spec import parse_suite

    s = {"backends": ["naive-step"], "modes": ["decode"], "batch": [2, 4], "seqlen": [1],
         "heads": [{"h_qk": 1, "h_v": 2}]}
    s.update(sweep)
    return parse_suite({"name": "s", "device": "cpu", "sweep": s})


def test_serving_points_get_an_fp32_kv_pool_twice_the_batch_by_default():
    pts = _serving_suite().points
    assert [(p.state_dtype, p.state_layout, p.pool) for p in pts] == [("float32", "kv", 4), ("float32", "kv", 8)]


def test_serving_axes_expand_for_serving_modes_only():
    pts = _serving_suite(modes=["decode", "fwd"], seqlen=[1], state_dtype=["float32", "bfloat16"],
                         state_layout=["kv", "vk"], pool_factor=[3]).points
    serving = [p for p in pts if p.mode == "decode"]
    prefill = [p for p in pts if p.mode == "fwd"]
    assert len(serving) == 2 * 2 * 2 and len(prefill) == 2
    assert {p.pool for p in serving} == {6, 12}
    assert all(p.state_dtype is None and p.pool is None for p in prefill)


def test_serving_axes_on_a_prefill_sweep_are_refused():
    from qlabench.core.errors import SpecError

    with pytest.raises(SpecError, match="applies to serving modes"):
        _serving_suite(modes=["fwd"], seqlen=[64], state_dtype=["bfloat16"])
    with pytest.raises(SpecError, match="pool_factor"):
        _serving_suite(pool_factor=[0])


def test_beta_regime_sigmoid_is_the_default_and_stored_as_null():
    pts = _serving_suite(beta_regime=["sigmoid", "low"]).points
    assert sorted({str(p.beta_regime) for p in pts}) == ["None", "low"]
