"""results/catalog.toml and results/ stay in step: every tracked results file belongs to an entry, every entry
holds tracked files and is let through .gitignore, each entry's stack and date are what its rows recorded,
and results/README.md's folder table lists exactly the catalog's folders."""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from qlabench.store.catalog import LIBRARIES, load_catalog

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
RESULTS = REPO / "results"
NOT_EVIDENCE = ("README.md", "catalog.toml")  # results/'s own files
SCHEMA_KEY = b"qlabench.schema_version"


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True)
    except OSError:
        pytest.skip("no git")
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [f.removeprefix("results/") for f in out.stdout.split()]


def _evidence_files() -> list[str]:
    return [f for f in _tracked() if f not in NOT_EVIDENCE and not f.startswith("baselines/")]


def test_every_tracked_results_file_belongs_to_an_entry():
    cat = load_catalog(RESULTS)
    orphans = [f for f in _evidence_files() if cat.owner(RESULTS / f) is None]
    assert not orphans, f"results files no catalog entry holds (add an entry to results/catalog.toml): {orphans[:5]}"


def test_every_entry_holds_tracked_files_that_gitignore_lets_through():
    cat = load_catalog(RESULTS)
    files = _evidence_files()
    for e in cat.entries:
        held = [f for f in files if cat.owner(RESULTS / f) is e]
        assert held, f"catalog entry {e.path} holds no tracked file"
        probe = f"results/{e.path.split('/')[0]}/x/run.parquet"
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", probe], cwd=REPO).returncode
        assert ignored == 1, f"{probe} is ignored by .gitignore: let results/{e.path.split('/')[0]}/ through"


def _recorded() -> dict[str, dict]:
    """Per entry: the library versions and the newest timestamp its result files recorded."""
    cat = load_catalog(RESULTS)
    found: dict[str, dict] = defaultdict(lambda: {"versions": defaultdict(set), "newest": None})
    for f in _evidence_files():
        if not f.endswith(".parquet"):
            continue
        schema = pq.read_schema(RESULTS / f)
        if SCHEMA_KEY not in (schema.metadata or {}):  # a derived table (selfbench medians), not result rows
            continue
        cols = [c for c in (*(f"{lib}_version" for lib in LIBRARIES), "timestamp") if c in schema.names]
        table = pq.read_table(RESULTS / f, columns=cols).to_pydict()
        rec = found[cat.owner(RESULTS / f).path]
        for lib in LIBRARIES:
            rec["versions"][lib].update(v for v in table.get(f"{lib}_version", []) if v is not None)
        newest = max(str(t) for t in table["timestamp"])
        rec["newest"] = max(rec["newest"] or newest, newest)
    return found


def test_each_entry_states_the_stack_and_date_its_rows_recorded():
    cat = load_catalog(RESULTS)
    recorded = _recorded()
    for e in cat.entries:
        rec = recorded.get(e.path)
        if rec is None:
            continue  # no result rows (tables and pages only)
        rows = {lib: tuple(sorted(v)) for lib, v in rec["versions"].items() if v}
        stated = {lib: tuple(sorted(v)) for lib, v in e.stack}
        assert stated == rows, f"{e.path}: catalog says {stated}, its rows recorded {rows}"
        assert str(e.date) == rec["newest"][:10], f"{e.path}: date {e.date}, newest row {rec['newest']}"


def test_the_results_readme_lists_exactly_the_catalogs_folders():
    cat = load_catalog(RESULTS)
    listed = set(re.findall(r"^\| `([\w.-]+)/`", (RESULTS / "README.md").read_text(), re.M))
    assert listed == {e.path.split("/")[0] for e in cat.entries}
