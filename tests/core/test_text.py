"""core/text.py: control characters made visible, and the one markdown escape."""

from __future__ import annotations

import pytest

from qlabench.core.text import md_code, md_text, one_line, visible


def test_control_and_format_characters_are_shown_as_escapes_and_the_rest_kept():
    assert visible("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert visible("rtl\u202eevil") == "rtl\\u202eevil"  # a bidirectional override reorders a line
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"  # layout, kept
    assert visible("h200 étude ✓ 漢字") == "h200 étude ✓ 漢字"  # printable text unchanged
    assert one_line("a\nb\tc\x1b") == "a b c\\x1b"
    assert visible(visible("\x1b")) == visible("\x1b")  # applied twice, the same


@pytest.mark.parametrize("text,shown", [
    ("a|b", "a\\|b"), ("<script>x</script>", "&lt;script>x&lt;/script>"), ("<!--", "&lt;!--"),
    ("[x](javascript:alert(1))", "[x\\](javascript:alert(1))"), ("[kv]", "[kv]"), ("[a]: u", "[a\\]: u"),
    ("`code`", "\\`code\\`"), ("a\\|b", "a\\\\\\|b"),
    ("R&D", "R&amp;D"), ("two\nlines", "two lines"), ("flash_qla", "flash_qla"), ("\x1b[2J", "\\\\x1b[2J"),
])
def test_md_text_writes_a_text_as_literal_markdown_on_one_line(text, shown):
    assert md_text(text) == shown


def test_md_code_is_a_code_span_unless_a_backtick_or_bar_would_break_it():
    assert md_code("run-1") == "`run-1`" and md_code("<!--") == "`<!--`"
    assert md_code("a`b") == "a\\`b" and md_code("a|b") == "a\\|b" and md_code("\x1b") == "`\\x1b`"
