"""A kernel package that is not part of qlabench, installed next to it (examples/gdn-plugin): its two backends
are listed, a CPU sweep runs them (the correct one `ok`, the 5%-off one `incorrect`), the rows record the
package's name and version, `show` and `advise` rank the correct one, and `compare` fails when the head's kernel
goes wrong. Nothing of qlabench is edited for it.

`.ci/run` installs the package (`pip install -e examples/gdn-plugin`) and sets QLABENCH_PLUGIN_INSTALLED=1:
the test then uses the installed distribution. Elsewhere it installs the same package the way pip would be
seen by importlib.metadata: a dist-info with its entry points on sys.path (tests/plugin_fixture.py).
"""

from __future__ import annotations

import io
import json
import os
from importlib import metadata

import pandas as pd
import pytest
from plugin_fixture import EXAMPLE, dist_info, on_path, suite_beside_naive_chunk
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.versions import versions_of
from qlabench.store.files import read_results

DIST = "qlabench-gdn-example"
ENTRY_POINTS = {"gdn-example": "gdn_example.kernel:chunk_gated_delta_rule",
                "gdn-example-off": "gdn_example.kernel:chunk_gated_delta_rule_off"}
SUITE = suite_beside_naive_chunk("plugin-cpu", "the example plugin's two kernels beside the naive chunked form", ["gdn-example", "gdn-example-off"], max_samples=5)


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _installed() -> bool:
    try:
        return metadata.distribution(DIST) is not None
    except metadata.PackageNotFoundError:
        return False


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The example package, installed (CI) or as its dist-info beside its source (elsewhere)."""
    if os.environ.get("QLABENCH_PLUGIN_INSTALLED"):
        assert _installed(), f"QLABENCH_PLUGIN_INSTALLED is set but {DIST} is not installed"
        return
    if _installed():
        return
    on_path(monkeypatch, dist_info(tmp_path / "site", DIST, "0.1.0", ENTRY_POINTS, source=EXAMPLE), EXAMPLE)


def test_a_package_outside_qlabench_adds_two_backends_that_run_rank_and_gate(plugin, tmp_path, monkeypatch):
    listed = CliRunner().invoke(app, ["backends"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    for name in ENTRY_POINTS:
        assert name in listed.output
    assert f"plugin: {DIST} 0.1.0" in listed.output

    suite = tmp_path / "plugin-cpu.toml"
    suite.write_text(SUITE)
    r = cli("run", "sweep", "--suite", suite, "--out", tmp_path / "base")
    assert r.exit_code == 0, r.output
    rows = read_results([tmp_path / "base" / "plugin-cpu"])
    status = dict(zip(rows["backend"], rows["status"]))
    assert status == {"naive-chunk": "ok", "gdn-example": "ok", "gdn-example-off": "incorrect"}
    mine = rows[rows["backend"].str.startswith("gdn-example")]
    assert set(mine["backend_dist"]) == {DIST} and set(mine["backend_version"]) == {"0.1.0"}
    # installed from this checkout: its commit is recorded (the example lives in qlabench's own repository)
    assert mine["backend_git_sha"].notna().all()
    # one version record: the package's version and its checkout's commit, beside torch's
    (sha,) = set(mine["backend_git_sha"])
    for rec in map(versions_of, mine.to_dict("records")):
        assert rec[DIST] == "0.1.0" and rec[f"{DIST} commit"].startswith(sha) and "torch" in rec, rec

    shown = cli("show", tmp_path / "base" / "plugin-cpu", "--format", "csv")
    assert shown.exit_code == 0, shown.output
    table = pd.read_csv(io.StringIO(shown.output))
    assert float(table["gdn-example"].iloc[0]) > 0 and table["gdn-example-off"].iloc[0] == "incorrect"

    adv = cli("advise", tmp_path / "base" / "plugin-cpu", "--model", "qwen3.5-0.8b", "--tp", "8", "--seqlens", "64",
              "--gate", "published", "--current", "gdn-example", "--format", "json")
    assert adv.exit_code == 0, adv.output
    (case,) = json.loads(adv.output)["cases"]
    by = {e["backend"]: e for e in case["entries"]}
    assert by["gdn-example"]["status"] == "ok" and by["gdn-example"]["time_ms"] > 0
    assert by["gdn-example"]["version"] == "0.1.0"  # the package's, never "not recorded"
    assert by["gdn-example-off"]["status"] == "incorrect" and by["gdn-example-off"]["time_ms"] is None
    # ranked among the timed, never the wrong one (provisional: the library candidates have no row on this CPU)
    assert (case["recommended"] or case["provisional"]) in ("gdn-example", "naive-chunk")

    # The head's kernel goes wrong: version 0.1.1 of the package, whose `gdn-example` is the 5%-off function.
    head_site = dist_info(tmp_path / "head-site", DIST, "0.1.1",
                          {**ENTRY_POINTS, "gdn-example": ENTRY_POINTS["gdn-example-off"]}, source=EXAMPLE)
    on_path(monkeypatch, head_site, EXAMPLE)
    r = cli("run", "sweep", "--suite", suite, "--out", tmp_path / "head", "--backends", "gdn-example")
    assert r.exit_code == 0, r.output
    head = read_results([tmp_path / "head" / "plugin-cpu"])
    assert list(head["status"]) == ["incorrect"] and list(head["backend_version"]) == ["0.1.1"]
    cmp = cli("compare", tmp_path / "base" / "plugin-cpu", tmp_path / "head" / "plugin-cpu", "--format", "json")
    assert cmp.exit_code == 1, cmp.output
    doc = json.loads(cmp.output)
    (pair,) = [p for p in doc["pairs"] if p["backend"] == "gdn-example"]
    assert (pair["base_status"], pair["head_status"], pair["fails"]) == ("ok", "incorrect", True)
    assert {"field": "gdn-example version", "base": ["0.1.0"], "head": ["0.1.1"], "blocking": False} in doc["env_diff"]
