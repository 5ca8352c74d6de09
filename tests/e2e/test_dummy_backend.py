"""A backend declared from this test file alone (its module and entry point written into a temporary folder)
reaches every command with no edit to qlabench: `backends`, `run sweep`, `show`, `advise`, `report`, the site and
the docs' advise block, as the dummy-axis test does for axes."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from plugin_fixture import dist_info, on_path, suite_beside_naive_chunk
from typer.testing import CliRunner

from qlabench.cli import app

MODULE = '''
from qlabench.backends.naive import NaiveChunk
from qlabench.core.backend_decl import BackendDecl


class DummyGDN(NaiveChunk):
    """The naive chunked form under another name: a correct kernel of its own."""


DECL = BackendDecl("dummy-gdn", "Dummy GDN, declared by a test", "dummy_gdn:DummyGDN",
                   description="a dummy backend declared by tests/e2e/test_dummy_backend.py",
                   modes=frozenset({"fwd"}), roles=frozenset({"prefill"}), call="dummy_gdn.run(q, k, v, g, beta)")
'''
SUITE = suite_beside_naive_chunk("dummy-cpu", "a dummy backend beside the naive chunked form", ["dummy-gdn"], max_samples=3)


@pytest.fixture(autouse=True)
def _forget_the_dummy():
    """The dummy's declaration, registered in this process when its plugin resolves, leaves with the test: the
    candidates, the view order and the calls of every later test are the built-ins' again."""
    yield
    from qlabench.core.backend_decl import unregister

    unregister("dummy-gdn")


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _declared_and_swept(tmp_path, monkeypatch):
    """Declare the dummy from this file alone, list it and sweep it; the results folder."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "dummy_gdn.py").write_text(MODULE)
    on_path(monkeypatch, dist_info(tmp_path / "site", "dummy-gdn-dist", "1.0", {"dummy-gdn": "dummy_gdn:DECL"}), code)

    listed = cli("backends")
    assert listed.exit_code == 0 and "dummy-gdn" in listed.output and "a dummy backend declared by" in listed.output

    (tmp_path / "dummy-cpu.toml").write_text(SUITE)
    r = cli("run", "sweep", "--suite", tmp_path / "dummy-cpu.toml", "--out", tmp_path / "r")
    assert r.exit_code == 0, r.output
    return tmp_path / "r" / "dummy-cpu"


def test_a_backend_declared_by_a_test_alone_reaches_every_command(tmp_path, monkeypatch):
    results = _declared_and_swept(tmp_path, monkeypatch)
    shown = cli("show", results, "--format", "csv")
    assert shown.exit_code == 0, shown.output
    assert float(pd.read_csv(io.StringIO(shown.output))["dummy-gdn"].iloc[0]) > 0

    adv = cli("advise", results, "--model", "qwen3.5-0.8b", "--tp", "8", "--seqlens", "64", "--current",
              "naive-chunk", "--format", "json")
    assert adv.exit_code == 0, adv.output
    (case,) = json.loads(adv.output)["cases"]
    (mine,) = [e for e in case["entries"] if e["backend"] == "dummy-gdn"]
    assert mine["status"] == "ok" and mine["time_ms"] > 0 and mine["setting"] == "Dummy GDN, declared by a test"

    rep = cli("report", results, "--out", tmp_path / "report")
    assert rep.exit_code == 0, rep.output
    assert "dummy-gdn" in (tmp_path / "report" / "report.md").read_text()


def test_the_site_and_the_docs_block_rank_a_backend_declared_by_a_test_alone(tmp_path, monkeypatch):
    import torch

    results = _declared_and_swept(tmp_path, monkeypatch)
    (results.parent / "catalog.toml").write_text(  # the site ranks the catalog's current kernel timings
        f'format = 1\n\n[[entry]]\npath = "dummy-cpu"\nkind = "kernel-timings"\nstatus = "current"\n'
        f'date = 2026-12-02\nquestion = "a dummy backend"\nstack = {{ torch = "{torch.__version__}" }}\n')
    site = cli("site", results.parent, "--out", tmp_path / "site")
    assert site.exit_code == 0, site.output
    pages = {p.name: p.read_text() for p in (tmp_path / "site").rglob("*.html")}
    assert "dummy-gdn" in pages["folder-dummy-cpu.html"]
    ranking = [t for n, t in pages.items() if n not in ("index.html", "folder-dummy-cpu.html")]
    assert any("dummy-gdn" in t for t in ranking), sorted(pages)

    # the docs' advise block, on the same catalog's current evidence
    from qlabench_publish.blocks.advise import advise_block
    from qlabench_publish.blocks.context import BlockContext
    from qlabench.store.catalog import load_catalog

    block = advise_block(BlockContext(load_catalog(results.parent)), "qwen3.5-0.8b", "8", "64", current="naive-chunk")
    assert "dummy-gdn" in block, block
