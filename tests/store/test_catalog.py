"""results/catalog.toml's reader: validation on load with the entry and key named, and the queries views use."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from qlabench.store.catalog import CatalogError, load_catalog, results_root

ENTRY = """
[[entry]]
path = "{path}"
kind = "{kind}"
status = "{status}"
date = 2026-12-01
question = "q"
stack = {stack}
{extra}
"""


def _write(root: Path, *entries: str, head: str = "format = 1\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "catalog.toml").write_text(head + "".join(entries))
    return root


def entry(path="a", kind="kernel-timings", status="current", stack='{ fla = "0.6.0" }', extra="") -> str:
    return ENTRY.format(path=path, kind=kind, status=status, stack=stack, extra=extra)


def test_an_entry_reads_with_its_fields(tmp_path):
    cat = load_catalog(_write(tmp_path, entry("a/", extra='doc = "docs/X.md"')))
    (e,) = cat.entries
    assert (e.path, e.kind, e.status, e.date, e.doc) == ("a", "kernel-timings", "current", dt.date(2026, 12, 1), "docs/X.md")
    assert e.versions == {"fla": ("0.6.0",)} and e.stack_label == "fla 0.6.0"


@pytest.mark.parametrize("bad, says", [
    (entry(kind="speed"), "kind: 'speed' is not one of"),
    (entry(status="old"), "status: 'old' is not one of"),
    (entry(stack='{ flashqla = "1" }'), "unknown library flashqla"),
    (entry(stack='{ fla = ["0.5.1", "0.6.0"] }'), "one version per library"),
    (entry(status="history"), "superseded_by: a history entry names"),
    (entry(extra='superseded_by = "a"'), "a current entry is superseded only"),
    (entry(extra='colour = "red"'), "colour: unknown key"),
    (entry(path="../x"), "inside the results folder"),
    (entry(path="/"), "it is the results folder itself"),  # was: every folder current
    (entry(path="."), "it is the results folder itself"),
    (entry(path="a/./b"), "no empty, '.' or '..' step"),
    (entry(path='b\\"><img src=x onerror=alert(1)>'), "none of < >"),
    (entry(status="history", extra='superseded_by = "b\\"><img src=x onerror=alert(1)>"'),
     "superseded_by: 'b\"><img src=x onerror=alert(1)>' must name an entry's path"),
    (ENTRY.format(path="a", kind="gate", status="current", stack="{}", extra="").replace("date = 2026-12-01\n", ""),
     "date: missing"),
    (entry().replace("date = 2026-12-01", 'date = "yesterday"'), "date: 'yesterday' must be a TOML date"),
    (entry(status="history", extra='superseded_by = "nowhere"'), "superseded_by 'nowhere' is no entry"),
])
def test_a_malformed_entry_is_refused_naming_the_key(tmp_path, bad, says):
    with pytest.raises(CatalogError) as err:
        load_catalog(_write(tmp_path, bad))
    assert says in str(err.value) and "entry" in str(err.value)


def test_format_duplicates_and_loops_are_refused(tmp_path):
    with pytest.raises(CatalogError, match="format = 2"):
        load_catalog(_write(tmp_path, entry(), head="format = 2\n"))
    with pytest.raises(CatalogError, match="more than one entry"):
        load_catalog(_write(tmp_path, entry("a"), entry("a/")))
    loop = (entry("a", status="history", extra='superseded_by = "b"'),
            entry("b", status="history", extra='superseded_by = "a"'))
    with pytest.raises(CatalogError, match="loops"):
        load_catalog(_write(tmp_path, *loop))
    with pytest.raises(CatalogError, match="no catalog"):
        load_catalog(tmp_path / "none")


def test_a_file_belongs_to_the_longest_entry_holding_it(tmp_path):
    cat = load_catalog(_write(tmp_path, entry("s"), entry("s/run2.parquet", status="history",
                                                           extra='superseded_by = "s"'), entry("t", kind="gate")))
    assert cat.owner(tmp_path / "s" / "run1.parquet").path == "s"
    assert cat.owner(tmp_path / "s" / "run2.parquet").path == "s/run2.parquet"
    assert cat.owner(tmp_path / "u" / "x.parquet") is None
    assert [e.path for e in cat.current()] == ["s", "t"]
    assert [e.path for e in cat.history()] == ["s/run2.parquet"]
    assert cat.current_paths() == [tmp_path / "s"]
    assert cat.current_paths(("gate",)) == [tmp_path / "t"]
    assert cat.successor(cat.get("s/run2.parquet")).path == "s"


def test_an_entry_current_for_some_backends_keeps_only_theirs(tmp_path):
    cat = load_catalog(_write(tmp_path, entry("i", extra='backends = ["fla-intracp"]')))
    e = cat.get("i")
    assert e.keeps("fla-intracp") and not e.keeps("fla")


def test_the_results_root_is_found_from_the_working_directory_or_the_checkout(tmp_path, monkeypatch):
    _write(tmp_path / "results", entry())
    assert results_root(tmp_path) == tmp_path / "results"
    monkeypatch.chdir(tmp_path)
    assert results_root() == tmp_path / "results"
    monkeypatch.chdir(tmp_path / "results")  # no results/ below here: the checkout's own
    assert (results_root() / "catalog.toml").is_file()


def test_a_call_comparison_entry_is_current_evidence_no_ranking_reads(tmp_path):
    # two calls timed in one run for their ratio (FlashInfer's pool prefill against its plain one): its rows are
    # not kernel timings a ranking may take as the library's figure
    cat = load_catalog(_write(tmp_path, entry("timings"), entry("pool", kind="call-comparison")))
    assert cat.get("pool").is_current and [e.path for e in cat.current("call-comparison")] == ["pool"]
    assert cat.current_paths() == [tmp_path / "timings"]


def test_an_entry_that_links_out_of_the_results_folder_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    root = _write(tmp_path / "results", entry("a"))
    (root / "a").symlink_to(outside, target_is_directory=True)
    with pytest.raises(CatalogError, match="entry 'a': path leads out of the results folder"):
        load_catalog(root)


def test_a_file_linked_in_from_outside_is_no_evidence_of_the_folder(tmp_path, make_row):
    from qlabench.analyze.evidence.current import current_evidence
    from qlabench.core.errors import StoreError
    from qlabench.store.files import write_rows

    root = _write(tmp_path / "results", entry("a"))
    write_rows(root / "a" / "run.parquet", [make_row()])
    write_rows(tmp_path / "elsewhere" / "x.parquet", [make_row(run_id="x")])
    (root / "a" / "linked.parquet").symlink_to(tmp_path / "elsewhere" / "x.parquet")
    with pytest.raises(StoreError, match="linked.parquet: a link to .*elsewhere/x.parquet, outside .*results/a"):
        current_evidence(load_catalog(root))
