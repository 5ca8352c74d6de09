"""The docs' page-table block (qlabench_publish/blocks/page_table.py): one table of a committed page, some of
its columns, cell for cell as the page has them."""

from __future__ import annotations

import pytest

from qlabench.core.errors import ConfigError
from qlabench.store.catalog import Catalog

PAGE = """# A study

| not | a table |
no alignment row above: a line of prose between pipes

```
| a | fenced |
|---|---|
| 1 | 2 |
```

| point | a | b \\| c | d |
|---|---:|---|---:|
| x | 0.7227 [2] (0.911) | 1.5 | 2 |
| y | 0.2340 | - | 3 |

text

| second | table |
|---|---|
| 9 | 8 |
"""


def _ctx(tmp_path):
    from qlabench_publish.blocks.context import BlockContext

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "page.md").write_text(PAGE, encoding="utf-8")
    return BlockContext(catalog=Catalog(root=tmp_path / "results", entries=()))


def test_the_tables_of_a_page_skip_fenced_code_and_pipe_lines_without_an_alignment_row():
    from qlabench_publish.blocks.page_table import tables

    found = tables(PAGE)
    assert [t[0] for t in found] == ["| point | a | b \\| c | d |", "| second | table |"]
    assert len(found[0]) == 4


def test_columns_are_picked_in_the_order_asked_with_cells_as_the_page_has_them(tmp_path):
    from qlabench_publish.blocks.page_table import page_table_block

    ctx = _ctx(tmp_path)
    assert page_table_block(ctx, "results/page.md", table="1", columns="1,3,2").splitlines() == [
        "| point | b \\| c | a |", "|---|---|---:|", "| x | 1.5 | 0.7227 [2] (0.911) |", "| y | - | 0.2340 |"]
    assert page_table_block(ctx, "results/page.md", table="2") == "| second | table |\n|---|---|\n| 9 | 8 |"


@pytest.mark.parametrize("kwargs, message", [
    (dict(file="../outside.md"), "outside the checkout"),
    (dict(file="results/none.md"), "does not exist"),
    (dict(file="results/page.md", table="3"), "table 3 is not one of 1..2"),
    (dict(file="results/page.md", table="1,2"), "table must be one number"),
    (dict(file="results/page.md", columns="0"), "column 0 is not one of 1..4"),
    (dict(file="results/page.md", columns="a,b"), "column must be 1-based numbers"),
])
def test_what_cannot_be_quoted_is_an_error_naming_it(tmp_path, kwargs, message):
    from qlabench_publish.blocks.page_table import page_table_block

    with pytest.raises(ConfigError, match=message):
        page_table_block(_ctx(tmp_path), **kwargs)


def test_a_row_with_more_or_fewer_cells_than_its_header_is_an_error(tmp_path):
    from qlabench_publish.blocks.page_table import page_table_block

    ctx = _ctx(tmp_path)
    (tmp_path / "results" / "ragged.md").write_text("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 3 has 3 cells, its header 2"):
        page_table_block(ctx, "results/ragged.md")
