"""The docs' script block (qlabench_publish/blocks/script.py): what a script of the checkout's scripts/ prints
today, run from the checkout's root with its arguments; a script that fails or prints nothing is an error."""

from __future__ import annotations

import pytest

from qlabench.core.errors import ConfigError
from qlabench.store.catalog import Catalog


def _ctx(tmp_path, scripts: dict[str, str]):
    from qlabench_publish.blocks.context import BlockContext

    (tmp_path / "results").mkdir()
    (tmp_path / "scripts").mkdir()
    for name, text in scripts.items():
        (tmp_path / "scripts" / name).write_text(text, encoding="utf-8")
    return BlockContext(catalog=Catalog(root=tmp_path / "results", entries=()))


ECHO = """import os, sys
from pathlib import Path
print("| arg | value |")
print("|---|---|")
for i, a in enumerate(sys.argv[1:]):
    print(f"| {i} | {a} |")
print(f"cwd has results/: {Path('results').is_dir()}; GPUs: {os.environ.get('CUDA_VISIBLE_DEVICES')!r}")
print()
"""


def test_the_body_is_what_the_script_prints_from_the_checkouts_root_with_its_arguments(tmp_path):
    from qlabench_publish.blocks.script import script_block

    out = script_block(_ctx(tmp_path, {"echo.py": ECHO}), "echo.py", args="results/a.parquet,--mode,fwd")
    assert out.splitlines() == ["| arg | value |", "|---|---|", "| 0 | results/a.parquet |", "| 1 | --mode |",
                                "| 2 | fwd |", "cwd has results/: True; GPUs: ''"]  # trailing blank line dropped


@pytest.mark.parametrize("name, scripts, message", [
    ("../results/x.py", {}, "name must be a Python file of"),
    ("notes.txt", {"notes.txt": "x"}, "name must be a Python file of"),
    ("none.py", {}, "does not exist"),
    ("fails.py", {"fails.py": "import sys\nprint('half a table')\nsys.exit('no such run: r1')"},
     "exited with 1: no such run: r1"),
    ("silent.py", {"silent.py": "pass\n"}, "printed nothing"),
])
def test_a_script_that_cannot_give_the_body_is_an_error_naming_it(tmp_path, name, scripts, message):
    from qlabench_publish.blocks.script import script_block

    with pytest.raises(ConfigError, match=message):
        script_block(_ctx(tmp_path, scripts), name)
