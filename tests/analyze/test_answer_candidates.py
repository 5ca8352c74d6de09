"""Plugins never rewrite old answers: a backend is a candidate of an answer where the question names it or where
the evidence holds rows of it (core/backend_decl.py `candidates`, analyze/answer/answer.py `measured_in`).

Issue 51: installing any plugin turned every committed H200 answer into "no winner: <plugin> not measured here".
Here the example package (examples/gdn-plugin) is installed as pip would leave it (tests/plugin_fixture.py) beside
the committed evidence (results/catalog.toml's current entries).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_fixture import EXAMPLE, dist_info, on_path

from qlabench.analyze.answer import answer_question, make_question
from qlabench.core.backend_decl import candidates
from qlabench.store.files import write_rows

REPO = Path(__file__).resolve().parents[2]
PLUGIN = "gdn-example"


def _install(tmp_path, monkeypatch) -> None:
    site = dist_info(tmp_path / "site", "qlabench-gdn-example", "0.1.0",
                     {PLUGIN: "gdn_example.kernel:chunk_gated_delta_rule"}, source=EXAMPLE)
    on_path(monkeypatch, site, EXAMPLE)
    assert PLUGIN in candidates("prefill")  # installed: a declared prefill backend


def _verdicts(ans) -> list[tuple]:
    return [(c.case.label, c.device, c.best.backend if c.best else None, tuple(c.missing),
             tuple(e.backend for e in c.entries)) for c in ans.cases]


def test_installing_a_plugin_changes_no_answer_drawn_from_the_committed_evidence(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the catalog's current evidence, as `qlabench advise` reads it with no results given
    q = make_question("qwen3.5-397b", 8, "prefill", "32768,4x8192", None, "fla")
    before = answer_question(q)
    assert before.from_catalog and any(c.best is not None for c in before.cases)
    _install(tmp_path, monkeypatch)
    after = answer_question(q)
    assert _verdicts(after) == _verdicts(before)  # was: "no winner: gdn-example not measured here" in every case
    assert after.as_dict()["cases"] == before.as_dict()["cases"]
    # the question that names the plugin (as the user's current choice) makes it a candidate, unmeasured here
    named = answer_question(make_question("qwen3.5-397b", 8, "prefill", "32768", None, PLUGIN))
    assert all(PLUGIN in c.missing and c.best is None for c in named.cases)


def test_a_plugin_with_rows_in_the_evidence_is_a_candidate_where_it_has_none(tmp_path, monkeypatch, make_row):
    _install(tmp_path, monkeypatch)
    common = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen",
                  batch=1, num_seqs=1, timer="graph", run_id="r1", timestamp="2026-01-01T00:00:00+00:00",
                  device="NVIDIA H200")
    rs = [make_row(**common, backend="fla", seqlens=(32768,), total_tokens=32768, median_ms=0.9),
          make_row(**common, backend=PLUGIN, seqlens=(8192,), total_tokens=8192, median_ms=0.2)]
    write_rows(tmp_path / "r.parquet", rs)
    ans = answer_question(make_question("qwen3.5-397b", 8, "prefill", "32768", None, "fla"), [tmp_path / "r.parquet"])
    assert ans.cases[0].missing == [PLUGIN] and ans.cases[0].best is None
    # its rows on another GPU model do not make it a candidate of this one's answer
    write_rows(tmp_path / "r.parquet", rs[:1] + [make_row(**{**common, "device": "NVIDIA H100 80GB HBM3"},
                                                          backend=PLUGIN, seqlens=(8192,), total_tokens=8192,
                                                          median_ms=0.2)])
    ans = answer_question(make_question("qwen3.5-397b", 8, "prefill", "32768", None, "fla"), [tmp_path / "r.parquet"])
    h200 = next(c for c in ans.cases if c.device == "NVIDIA H200")
    assert PLUGIN not in h200.missing and h200.best is not None and h200.best.backend == "fla"


@pytest.mark.parametrize("measured, named, want", [(None, (), True), (set(), (), False), ({PLUGIN}, (), True),
                                                   (set(), (PLUGIN,), True)])
def test_candidates_are_the_declared_backends_the_evidence_measured_or_the_question_names(
        tmp_path, monkeypatch, measured, named, want):
    _install(tmp_path, monkeypatch)
    assert (PLUGIN in candidates("prefill", measured=measured, named=named)) is want
