"""Blocks between markers: found with their arguments, replaced in place, malformed markers named."""

from __future__ import annotations

import pytest

from qlabench_publish.blocks.markers import BlockError, find_blocks, replace_blocks

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


FENCED = """# Page
An example of a block, as the docs show it:

```markdown
<!-- qlabench:block advise model=m tp=8 seqlens=1 -->
the example's own text
<!-- /qlabench:block -->
```

~~~~
<!-- qlabench:block results-catalog -->
~~~ (not the end: shorter than the fence)
<!-- /qlabench:block -->
~~~~
<!-- qlabench:block results-catalog -->
old
<!-- /qlabench:block -->
"""


def test_markers_inside_a_fenced_code_block_are_example_text_left_as_they_are():
    (b,) = find_blocks(FENCED)
    assert (b.name, b.body) == ("results-catalog", "old")
    new = replace_blocks(FENCED, lambda b: "new")
    assert new == FENCED.replace("old\n", "new\n")
    assert "the example's own text" in new and "~~~ (not the end" in new


def test_a_crlf_file_keeps_its_line_endings_byte_for_byte():
    text = "a\r\n<!-- qlabench:block x -->\r\nold\r\nold 2\r\n<!-- /qlabench:block -->\r\nb\rc\nd"
    new = replace_blocks(text, lambda b: "one\ntwo\nthree")
    assert new == "a\r\n<!-- qlabench:block x -->\r\none\r\ntwo\r\nthree\r\n<!-- /qlabench:block -->\r\nb\rc\nd"
    assert replace_blocks(new, lambda b: "one\ntwo\nthree") == new


@pytest.mark.parametrize("line", [
    "  <!-- qlabench:block a -->", "    <!-- qlabench:block a -->", "\t<!-- /qlabench:block -->",
    "<!--qlabench:block a-->", "<!-- qlabench:block a  tp=1 -->", "see <!-- qlabench:block a --> here",
    "<!-- QLABENCH:block a -->", "> <!-- qlabench:block a -->",
])
def test_a_line_that_looks_like_a_marker_but_is_not_one_is_an_error_never_skipped(line):
    with pytest.raises(BlockError, match=r"p\.md:2: this line looks like a block marker but is not one"):
        find_blocks(f"x\n{line}\ny\n", "p.md")


def test_a_marker_quoted_in_an_inline_code_span_is_prose():
    assert find_blocks("write `<!-- qlabench:block NAME -->` above the block\n") == []


def test_a_code_fence_left_open_before_a_marker_is_an_error():
    with pytest.raises(BlockError, match=r"p\.md:2: the code fence opened here is never closed"):
        find_blocks("x\n```\ncode\n<!-- qlabench:block a -->\n<!-- /qlabench:block -->\n", "p.md")
    assert find_blocks("x\n```\ncode, no marker after it\n") == []  # an open fence at the end hides nothing


@pytest.mark.parametrize("rendered", [
    "row\n<!-- /qlabench:block -->\n<!-- qlabench:block results-catalog -->\nrow",
    "row\r<!-- qlabench:block a -->", "  <!-- /qlabench:block -->",
])
def test_a_rendered_body_that_would_open_or_close_a_block_is_refused(rendered):
    text = "<!-- qlabench:block a -->\n<!-- /qlabench:block -->\n"
    with pytest.raises(BlockError, match=r"p\.md:1: block 'a' rendered a line that reads as a block marker"):
        replace_blocks(text, lambda b: rendered, "p.md")


def test_a_parameter_given_twice_is_an_error_naming_the_line():
    with pytest.raises(BlockError, match=r"p\.md:2: parameter 'tp' is given twice"):
        find_blocks("x\n<!-- qlabench:block advise tp=8 model=m tp=4 -->\n<!-- /qlabench:block -->\n", "p.md")
