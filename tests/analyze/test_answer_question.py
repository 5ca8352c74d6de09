"""Parsing an advise question: cases, gate regimes, and the errors a mistyped question gets."""

from __future__ import annotations

import pytest

from qlabench.analyze.answer.question import NO_ZERO_HEADS, PUBLISHED, Case, make_question, parse_cases, parse_gate
from qlabench.core.errors import ConfigError


def test_cases_single_packed_and_mixed():
    assert parse_cases("32768, 4x8192,8192+24576") == (Case((32768,)), Case((8192,) * 4), Case((8192, 24576)))
    assert Case((8192,) * 4).label == "4x8192" and Case((8192, 24576)).label == "8192+24576"


@pytest.mark.parametrize("bad", ["", "x", "0", "4x", "-3", "1e5", "3x0"])
def test_bad_cases_are_config_errors(bad):
    with pytest.raises(ConfigError):
        parse_cases(bad)


def test_gate_regimes(tmp_path):
    assert parse_gate("published") is PUBLISHED and parse_gate(None) is PUBLISHED
    assert parse_gate("none") is NO_ZERO_HEADS and NO_ZERO_HEADS.zero_frac == 0
    assert parse_gate("zero=0.25,scale=16") is PUBLISHED  # the same values are the same regime
    g = parse_gate("zero=0.5,scale=64")
    assert (g.zero_frac, g.scale) == (0.5, 64)
    f = tmp_path / "mygate.toml"
    f.write_text("gate_zero_frac = 0.0\ngate_scale = 64\n")
    assert (parse_gate(str(f)).zero_frac, parse_gate(str(f)).scale) == (0.0, 64.0)
    for bad in ("zero=2", "scale=0", "zero=nan", "foo=1", "nosuchfile"):
        with pytest.raises(ConfigError):
            parse_gate(bad)


def test_question_heads_from_the_catalogue_and_its_errors():
    q = make_question("397b", 8, "prefill", "32768")
    assert q.model == "qwen3.5-397b" and q.heads == (2, 8) and q.head_dim == 128
    for args in (("nope", 1, "prefill", "1"), ("397b", 3, "prefill", "1"), ("397b", 8, "serve", "1"),
                 ("397b", 8, "decode", "1")):
        with pytest.raises(ConfigError):
            make_question(*args)


@pytest.mark.parametrize("content", ["[0.25, 16]", "0.5", '"x"', "null"])
def test_a_gate_file_that_holds_no_object_is_a_clear_error(tmp_path, content):
    f = tmp_path / "g.json"
    f.write_text(content)
    with pytest.raises(ConfigError, match="must hold an object with gate_zero_frac and gate_scale"):
        parse_gate(str(f))


def test_a_boolean_in_a_gate_file_is_no_number(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text("gate_zero_frac = true\n")
    with pytest.raises(ConfigError, match="not true/false"):
        parse_gate(str(f))


@pytest.mark.parametrize("text", ["zero=0.1,zero=0.5", "zero=0.5,scale=8,scale=16"])
def test_a_gate_key_given_twice_is_refused_never_the_last_one_taken(text):
    with pytest.raises(ConfigError, match="is given twice"):
        parse_gate(text)


def test_a_json_gate_file_with_a_key_given_twice_is_refused(tmp_path):
    f = tmp_path / "g.json"
    f.write_text('{"gate_zero_frac": 0.1, "gate_scale": 16, "gate_zero_frac": 0.5}')
    with pytest.raises(ConfigError, match="'gate_zero_frac' is given twice"):
        parse_gate(str(f))
