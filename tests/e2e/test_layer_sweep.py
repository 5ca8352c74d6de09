"""The layer benchmark end to end on CPU: `run sweep` of the layer fixture, then `show`'s Amdahl lines."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import read_results


def test_a_layer_sweep_checks_times_and_records_the_cores_share(tmp_path, data_dir):
    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(data_dir / "layer-cpu.toml"), "--out", str(out),
                                 "--no-isolate"])
    assert r.exit_code == 0, r.output
    df = read_results([out])
    assert len(df) == 6  # 2 cores x (dense + packed prefill + a decode step)
    assert set(df["status"]) == {"ok"}, df[["backend", "status", "reason"]].to_string()
    assert (df["oracle"].str.startswith("layer:naive-recurrent float32")).all()
    # Every row checked at its own size: beyond the oracle's 32 tokens against the layer around naive-chunk (which
    # is itself checked against the layer's recurrence on the whole problem), within them by the oracle itself.
    assert df["checked_at_size"].all()
    rec = df[df["backend"] == "layer:naive-recurrent"]
    long = rec[rec["total_tokens"] > 32]
    assert len(rec) == 3 and len(long) == 2 and long["oracle"].str.contains("layer:naive-chunk float32 @48").all()
    for extra in df["extra_json"]:
        layer = json.loads(extra)["layer"]
        assert 0 < layer["core_share"] <= 1 and layer["core_share_from"] == "timer"
    assert {tuple(s) for s in df["seqlens"]} == {(48,), (20, 28), (1, 1)}  # (1, 1): decode, batch 2

    shown = CliRunner().invoke(app, ["show", str(out)])
    assert shown.exit_code == 0, shown.output
    lines = [ln for ln in shown.output.splitlines() if "of the layer" in ln]
    assert len(lines) == 6 and all("2x core ->" in ln and "x layer" in ln for ln in lines)
