"""Blocks between markers: found with their arguments, replaced in place, malformed markers named."""

from __future__ import annotations

import pytest

from qlabench.analyze.blocks.markers import BlockError, find_blocks, replace_blocks

TEXT = """# Page
before
<!-- qlabench:block advise model=m tp=8 seqlens=1,2x3 -->
old body
<!-- /qlabench:block -->
middle
<!-- qlabench:block results-catalog -->
<!-- /qlabench:block -->
after"""


def test_blocks_are_found_with_their_arguments():
    a, b = find_blocks(TEXT)
    assert (a.name, a.args, a.body, a.start, a.end) == ("advise", (("model", "m"), ("tp", "8"), ("seqlens", "1,2x3")),
                                                        "old body", 2, 4)
    assert (b.name, b.args, b.body) == ("results-catalog", (), "")


def test_replacing_rewrites_only_the_bodies():
    new = replace_blocks(TEXT, lambda b: f"\n{b.name} says {dict(b.args).get('tp', '-')}\n\n")
    assert new.split("\n") == ["# Page", "before", "<!-- qlabench:block advise model=m tp=8 seqlens=1,2x3 -->",
                               "advise says 8", "<!-- /qlabench:block -->", "middle",
                               "<!-- qlabench:block results-catalog -->", "results-catalog says -",
                               "<!-- /qlabench:block -->", "after"]
    assert replace_blocks(new, lambda b: f"{b.name} says {dict(b.args).get('tp', '-')}") == new  # idempotent


@pytest.mark.parametrize("text, says", [
    ("<!-- qlabench:block a -->\nx", "block 'a' is never closed"),
    ("x\n<!-- /qlabench:block -->", "p.md:2: a closing block marker without an opening one"),
    ("<!-- qlabench:block a -->\n<!-- qlabench:block b -->\n<!-- /qlabench:block -->", "opens inside block 'a'"),
])
def test_malformed_markers_are_errors_naming_the_line(text, says):
    with pytest.raises(BlockError, match=says):
        find_blocks(text, "p.md")
