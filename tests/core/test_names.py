"""Names that become path components: the safe-name rule and the slug of any text."""

from __future__ import annotations

import pytest

from qlabench.core.names import MAX_NAME_LEN, name_problem, slug


@pytest.mark.parametrize("text", ["h200-study", "qwen3.5-397b-tp8-prefill", "h200-study/flashqla-study/r.parquet"])
def test_a_plain_name_keeps_its_slug(text):
    assert slug(text) == text.replace("/", "-")


@pytest.mark.parametrize("text", ["h200 étude", "b\"><img src=x onerror=alert(1)>", "Qwen3.5-397B ", ".", "..", "",
                                  "x" * 300, "é"])
def test_any_text_slugs_to_a_safe_name(text):
    assert name_problem(slug(text)) is None and len(slug(text)) <= MAX_NAME_LEN


def test_two_names_that_differ_only_in_what_the_slug_drops_stay_apart():
    assert slug("h200 study") != slug("h200-study") != slug("h200_study")
    assert slug("a b") != slug("a  b") and slug("a b") == slug("a b")
