"""`--backends` / `--modes` (core/select.py): part of a suite, and a typo is an error naming what exists."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.errors import ConfigError
from qlabench.core.select import parse_names, selected_indices
from qlabench.core.spec import load_suite


def test_names_are_a_comma_list():
    assert parse_names(" fla, flash_qla ,,", "--backends") == ("fla", "flash_qla")
    assert parse_names(None, "--backends") == ()


def test_a_filter_keeps_the_matching_points_in_suite_order():
    s = load_suite("flashqla-study")
    keep = selected_indices(s.points, ("flash_qla", "flashinfer"), ("fwd",))
    assert keep == sorted(keep) and len(keep) > 0
    assert {s.points[i].backend for i in keep} == {"flash_qla", "flashinfer"}
    assert {s.points[i].mode for i in keep} == {"fwd"}
    assert len(selected_indices(s.points)) == len(s.points)
    # every forward flashinfer point is kept: the filter drops nothing it should keep
    assert sum(p.backend == "flashinfer" for p in s.points) == sum(s.points[i].backend == "flashinfer" for i in keep)


@pytest.mark.parametrize("backends,modes,msg", [(("flashqla",), (), r"no backend 'flashqla' \(it has: fla,"),
                                                (("fla",), ("bwdd",), "no mode 'bwdd'"),
                                                (("flashinfer",), ("bwd",), "no point has backend")])
def test_a_filter_that_matches_nothing_says_why(backends, modes, msg):
    with pytest.raises(ConfigError, match=msg):
        selected_indices(load_suite("flashqla-study").points, backends, modes)


def test_run_sweep_dry_run_counts_the_filtered_points():
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--backends", "flashinfer",
                                 "--modes", "fwd", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "171 points in suite 'flashqla-study'" in r.output
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--backends", "flashqla", "--dry-run"])
    assert r.exit_code == 2 and "no backend 'flashqla'" in r.output


def test_heads_are_h_qk_over_h_v_and_a_bad_one_is_an_error():
    from qlabench.core.select import parse_heads

    assert parse_heads(" 2/8, 08 / 32 ,") == ("2/8", "8/32") and parse_heads(None) == ()
    for bad in ("2x8", "2/8/1", "0/8", "a/b", "2/"):
        with pytest.raises(ConfigError, match="h_qk/h_v"):
            parse_heads(bad)


def test_a_heads_filter_keeps_every_part_of_the_suite_at_those_heads():
    s = load_suite("flashqla-study")
    keep = selected_indices(s.points, heads=("2/8",))
    kept = [s.points[i] for i in keep]
    assert {(p.h_qk, p.h_v) for p in kept} == {(2, 8)}
    # forward on every backend, the gate sweep and the training part all stay: 2/8's points, nothing dropped
    assert len(kept) == sum((p.h_qk, p.h_v) == (2, 8) for p in s.points)
    assert {p.mode for p in kept} == {"fwd", "bwd", "bwd_train", "fwd_bwd"}
    assert {p.backend for p in kept} >= {"flash_qla", "fla", "fla-intracp", "flashinfer", "flashinfer-nocp"}
    both = selected_indices(s.points, ("fla",), ("bwd",), heads=("2/8", "8/32"))
    assert {(s.points[i].backend, s.points[i].mode, s.points[i].h_qk) for i in both} == {("fla", "bwd", 2), ("fla", "bwd", 8)}
    with pytest.raises(ConfigError, match=r"no head configuration '3/9' \(it has: 2/4, 2/8,"):
        selected_indices(s.points, heads=("3/9",))
    with pytest.raises(ConfigError, match="no point has backend in .*head configuration in"):
        selected_indices(s.points, ("flashinfer",), ("fwd",), heads=("2/4",))


def test_run_sweep_and_warmup_take_heads():
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--heads", "2/8", "--backends",
                                 "flashinfer", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "19 points in suite 'flashqla-study'" in r.output
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--heads", "2x8", "--dry-run"])
    assert r.exit_code == 2 and "h_qk/h_v" in r.output
    r = CliRunner().invoke(app, ["warmup", "--suite", "flashqla-study", "--heads", "3/9"])
    assert r.exit_code == 2 and "no head configuration '3/9'" in r.output


def test_sequences_are_parsed_as_advise_takes_them():
    from qlabench.core.select import parse_layouts, parse_sequences, sequences_label

    assert parse_sequences("32768") == (32768,) and parse_sequences(" 4X8192 ") == (8192,) * 4
    assert parse_sequences("8192+24576") == (8192, 24576)
    assert parse_layouts("32768, 4x8192,32768,") == ((32768,), (8192,) * 4) and parse_layouts(None) == ()
    for bad in ("4x", "x8192", "1024,", "0x8", "8192+0", "a"):
        with pytest.raises(ConfigError, match="--seqlens item"):
            parse_layouts(bad if bad != "1024," else "1024+")
    assert [sequences_label(s) for s in ((32768,), (8192,) * 4, (28672, 4096))] == ["32768", "4x8192", "28672+4096"]


def test_a_seqlens_filter_keeps_exactly_the_points_of_those_calls():
    s = load_suite("flashqla-study")
    cases = ((32768,), (8192,) * 4, (1024,) * 8)
    keep = selected_indices(s.points, modes=("fwd",), seqlens=cases)
    kept = [s.points[i] for i in keep]
    assert {tuple(p.seqlens) for p in kept} == set(cases)
    assert len(kept) == sum(p.mode == "fwd" and tuple(p.seqlens) in cases for p in s.points)
    # every head configuration and every forward backend of the study keeps its points of those calls
    assert {(p.h_qk, p.h_v) for p in kept} == {(p.h_qk, p.h_v) for p in s.points if p.mode == "fwd"}
    assert {p.backend for p in kept} == {p.backend for p in s.points if p.mode == "fwd"}
    # a training-part split is its own call: 32768 tokens cut in 4 is not 4x8192
    assert not any(p.mode == "bwd" for p in kept)
    with pytest.raises(ConfigError, match=r"no sequences '3x8192' \(it has: "):
        selected_indices(s.points, seqlens=((8192,) * 3,))


def test_run_sweep_and_warmup_take_seqlens():
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--heads", "2/8", "--backends",
                                 "flashinfer", "--seqlens", "32768,4x8192,8x1024", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "3 points in suite 'flashqla-study'" in r.output
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--seqlens", "4x", "--dry-run"])
    assert r.exit_code == 2 and "--seqlens item '4x'" in r.output
    r = CliRunner().invoke(app, ["warmup", "--suite", "flashqla-study", "--seqlens", "3x8192"])
    assert r.exit_code == 2 and "no sequences '3x8192'" in r.output


EMPTY_FILTERS = [("--seqlens", ""), ("--seqlens", ",,"), ("--heads", ""), ("--heads", " , "), ("--backends", ""),
                 ("--modes", ""), ("--modes", ","), ("--shard", "")]


@pytest.mark.parametrize("flag,value", EMPTY_FILTERS)
def test_an_empty_or_all_separator_filter_is_an_error_naming_the_option_never_every_point(flag, value):
    # was: every point of the suite selected (an unset shell variable ran the whole suite)
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "quick-cpu", f"{flag}={value}", "--dry-run"])
    assert r.exit_code == 2, r.output
    assert flag in r.output and "points in suite" not in r.output
    if flag != "--shard":
        assert "names nothing" in r.output


@pytest.mark.parametrize("flag,value", [f for f in EMPTY_FILTERS if f[0] != "--shard"])
def test_warmup_refuses_an_empty_filter_too(flag, value):
    r = CliRunner().invoke(app, ["warmup", "--suite", "quick-cpu", f"{flag}={value}"])
    assert r.exit_code == 2 and flag in r.output and "names nothing" in r.output, r.output


def test_the_library_refuses_an_empty_value_naming_the_flag():
    from qlabench.core.select import parse_heads, parse_layouts

    for fn, flag in ((lambda v: parse_names(v, "--backends"), "--backends"), (parse_heads, "--heads"),
                     (parse_layouts, "--seqlens")):
        for value in ("", ",,", " ,\t"):
            with pytest.raises(ConfigError, match=f"^{flag} .* names nothing"):
                fn(value)
