"""`qlabench site`'s output: every value that reaches HTML escaped, names slugged for files and shown as they
are, the output folder never inside the results and never holding an earlier build's stale pages."""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import browser
from qlabench.analyze.serving.section import serving_section
from qlabench.analyze.site.build import build_site
from qlabench.analyze.site.folders import Folder
from qlabench.analyze.site.pages import folder_page
from qlabench.cli import app
from qlabench.core.errors import ConfigError
from qlabench.store.files import write_rows

PAYLOAD = "b\"><img src=x onerror=document.title='pwned'>"


class Tags(HTMLParser):
    """Every start tag and its attributes, as a browser would parse them."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def no_markup_from_data(text: str) -> None:
    """No tag or attribute the site does not write: no event handler, no <img> but the site's figures."""
    for tag, attrs in Tags(text).tags:
        assert not any(a.startswith("on") for a in attrs), (tag, attrs)
        assert tag != "img" or attrs.get("src", "").startswith("img/"), (tag, attrs)
        assert tag not in ("script", "iframe", "object", "embed"), tag


def point(make_row, **kw):
    return make_row(**{**dict(device="NVIDIA H200", timer="graph", dtype="bfloat16", model="qwen3.5-397b", tp=8,
                              h_qk=2, h_v=8, K=128, V=128, layout="varlen", seqlens=(4096,), total_tokens=4096,
                              gate="flashqla", fla_version="0.6.0", backend="fla", median_ms=1.0), **kw})


def test_a_catalog_value_in_an_attribute_is_escaped():
    # superseded_by went into an href as it was (the catalog now refuses it too; the page never trusts it)
    f = Folder("a", "q", None, "kernel-timings", "history", "2026-12-01", "fla 0.6.0", superseded_by=PAYLOAD,
               backends=(PAYLOAD,))
    html = folder_page(f, pd.DataFrame({"folder": [], "file": []}), [])
    no_markup_from_data(html)
    assert "&quot;&gt;&lt;img src=x" in html  # shown as it is, as text


def _tree(root: Path, make_row) -> None:
    write_rows(root / "h200 étude" / "a.parquet", [point(make_row)])
    write_rows(root / PAYLOAD.replace("/", "") / "b.parquet", [point(make_row, run_id="r2")])
    # without a catalog the study's folder is the current one (site/folders.py: README_CURRENT)
    write_rows(root / "h200-study" / "c.parquet", [point(make_row, run_id="r3", model="Qwen3.5-397B "),
                                                   point(make_row, run_id="r3", backend="flash_qla", median_ms=0.5,
                                                         model="Qwen3.5-397B ")])


def test_odd_names_are_slugged_for_files_shown_as_they_are_and_run_no_script(tmp_path, make_row):
    # a folder with a space and an accent, one named like markup, a model label spelled with capitals and a
    # trailing space (lookup accepts it)
    root = tmp_path / "results"
    _tree(root, make_row)
    out = tmp_path / "site"
    site = build_site(root, out, serving=serving_section)  # was: refused as a whole, 38 files written and no index.html
    assert site.index.is_file()
    index = site.index.read_text(encoding="utf-8")
    no_markup_from_data(index)
    assert ">h200 étude</a>" in index and "&lt;img src=x" in index
    names = sorted(p.name for p in out.iterdir())
    assert any(n.startswith("rank-Qwen3.5-397B-") for n in names), names  # the label's own ranking, slugged
    assert all(" " not in n and '"' not in n and "<" not in n and "é" not in n for n in names), names
    for page in out.glob("*.html"):
        no_markup_from_data(page.read_text(encoding="utf-8"))
    for tag, attrs in Tags(index).tags:  # every link leads to a page that exists
        if tag == "a":
            assert (out / attrs["href"]).is_file(), attrs["href"]
    if browser.chromium() is not None or os.environ.get("QLABENCH_REQUIRE_BROWSER"):
        for page in sorted(out.glob("*.html")):
            got = browser.load(page.as_uri(), {"title": "document.title"})
            assert got.values["title"] != "pwned", page


def test_a_rebuild_leaves_no_page_of_the_earlier_build_and_keeps_other_files(tmp_path, make_row):
    root = tmp_path / "results"
    write_rows(root / "old-folder" / "a.parquet", [point(make_row)])
    write_rows(root / "kept" / "a.parquet", [point(make_row, run_id="r2")])
    out = tmp_path / "site"
    build_site(root, out, serving=serving_section)
    assert (out / "folder-old-folder.html").is_file()
    (out / "notes.txt").write_text("mine")  # not the site's: never touched
    (root / "old-folder" / "a.parquet").unlink()
    (root / "old-folder").rmdir()
    build_site(root, out, serving=serving_section)
    assert not (out / "folder-old-folder.html").exists()  # was: still published, unlinked
    assert (out / "folder-kept.html").is_file() and (out / "notes.txt").read_text() == "mine"
    assert not any(p.name.startswith(".site.building-") for p in tmp_path.iterdir())


@pytest.mark.parametrize("inside", ["results", "results/site", "results/kept/site"])
def test_an_out_inside_the_results_is_refused(tmp_path, make_row, inside):
    root = tmp_path / "results"
    write_rows(root / "kept" / "a.parquet", [point(make_row)])
    with pytest.raises(ConfigError, match="inside the results folder"):
        build_site(root, tmp_path / inside, serving=serving_section)
    assert not (root / "site").exists() and not (root / "img").exists()  # was: img/ became a results folder
    r = CliRunner().invoke(app, ["site", str(root), "--out", str(tmp_path / inside)])
    assert r.exit_code == 2 and "inside the results folder" in r.output


@pytest.mark.parametrize("path", ["/", "."])
def test_a_catalog_entry_of_the_whole_tree_is_one_error_not_a_crash(tmp_path, make_row, path):
    root = tmp_path / "results"
    write_rows(root / "kept" / "a.parquet", [point(make_row)])
    (root / "catalog.toml").write_text(f'format = 1\n[[entry]]\npath = "{path}"\nkind = "kernel-timings"\n'
                                       'status = "current"\ndate = 2026-12-01\nquestion = "q"\nstack = {}\n')
    r = CliRunner().invoke(app, ["site", str(root), "--out", str(tmp_path / "site")])
    assert r.exit_code == 2 and "the results folder itself" in r.output and "Traceback" not in r.output
    assert not isinstance(r.exception, IndexError)  # was: IndexError in site/folders.py
