"""Model catalogue: the Qwen3.5 GDN head counts and how TP divides them."""

from __future__ import annotations

import pytest

from qlabench.core import models

# (alias, h_qk, h_v) as in FlashQLA's benchmark table.
EXPECTED = [
    ("397b", 16, 64), ("122b", 16, 64),
    ("35b", 16, 32), ("9b", 16, 32), ("4b", 16, 32),
    ("27b", 16, 48),
    ("2b", 16, 16), ("0.8b", 16, 16),
]


@pytest.mark.parametrize("alias, h_qk, h_v", EXPECTED)
def test_head_counts(alias, h_qk, h_v):
    m = models.lookup(alias)
    assert (m.h_qk, m.h_v) == (h_qk, h_v)
    assert m.head_dim == 128
    assert m.name == f"qwen3.5-{alias}"


def test_lookup_is_case_insensitive_and_accepts_canonical_names():
    assert models.lookup("Qwen3.5-27B") is models.lookup("27b")
    assert models.lookup(" qwen3.5-27b ") is models.lookup("27b")


def test_unknown_model_lists_the_known_ones():
    with pytest.raises(KeyError, match="qwen3.5-397b"):
        models.lookup("qwen4-1t")


@pytest.mark.parametrize("alias, h_qk, h_v", EXPECTED)
@pytest.mark.parametrize("tp", [1, 2, 3, 4, 8, 16, 32])
def test_tp_divides_both_or_is_rejected(alias, h_qk, h_v, tp):
    m = models.lookup(alias)
    if h_qk % tp == 0 and h_v % tp == 0:
        assert m.at_tp(tp) == (h_qk // tp, h_v // tp)
    else:
        with pytest.raises(ValueError, match=f"tp={tp} does not divide"):
            m.at_tp(tp)


def test_tp_examples():
    assert models.lookup("27b").at_tp(8) == (2, 6)
    assert models.lookup("397b").at_tp(16) == (1, 4)
    with pytest.raises(ValueError):
        models.lookup("27b").at_tp(3)  # divides 48 but not 16
    with pytest.raises(ValueError):
        models.lookup("2b").at_tp(0)


def test_tp_degrees_are_the_divisors_of_both_head_counts():
    assert models.lookup("27b").tp_degrees() == (1, 2, 4, 8, 16)  # 16/48: 3 divides 48 but not 16
    assert models.lookup("sym32").tp_degrees() == (1, 2, 4, 8, 16, 32)
    assert models.lookup("397b").heads_by_tp() == {1: (16, 64), 2: (8, 32), 4: (4, 16), 8: (2, 8), 16: (1, 4)}
    for m in models.CATALOGUE:  # every degree listed is one at_tp accepts, and no other is
        for tp in range(1, 65):
            if tp in m.tp_degrees():
                m.at_tp(tp)
            else:
                with pytest.raises(ValueError):
                    m.at_tp(tp)


def test_an_unknown_model_points_to_the_listing():
    with pytest.raises(KeyError, match="qlabench models"):
        models.lookup("qwen9")
