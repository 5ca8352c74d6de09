"""The repository names no path of the machine it was built on: not in a tracked file, not in the
metadata of a committed result file. Such a path records a user's worktree or home and points nowhere
on the reader's machine (a suite is recorded relative to the repository, store/files.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
# Home and work folders of a build machine. (/tmp/ is left to text: docs use it for example --out
# folders; in metadata every absolute path is refused below.)
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:" + "|".join(("work", "root", "home", "Users")) + r")/")


def tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / p for p in out.decode().split("\0") if p]


def test_no_tracked_text_file_names_a_build_machine_path():
    hits = []
    for f in tracked():
        if f == Path(__file__).resolve() or not f.is_file():
            continue
        data = f.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary: the parquet files are checked through their metadata below
        for n, line in enumerate(data.decode(errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{f.relative_to(REPO)}:{n}: {line.strip()[:120]}")
    assert not hits, "\n".join(hits)


def test_no_committed_result_file_records_an_absolute_path():
    import pyarrow.parquet as pq

    hits = []
    for f in tracked():
        if f.suffix != ".parquet":
            continue
        for k, v in (pq.read_schema(f).metadata or {}).items():
            if not k.startswith(b"qlabench."):
                continue
            for item in v.decode(errors="replace").split(","):
                if item.startswith("/") or MACHINE_PATH.search(item):
                    hits.append(f"{f.relative_to(REPO)}: {k.decode()} = {item[:120]}")
    assert not hits, "\n".join(hits)
