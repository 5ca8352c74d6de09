"""The starter notebook's comparison with the published table shows the numbers `qlabench show` prints
for the same rows: forward rows of one run, nothing averaged."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from qlabench.cli import app

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "explore_results.ipynb"
MARK = "AGAINST_PUBLISHED_JSON "


def test_the_published_comparison_matches_show_for_the_same_run(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # One cell more, in memory only: the last cell's frame and run, as JSON.
    nb.cells.append(nbformat.v4.new_code_cell(
        f'import json; print("{MARK}" + json.dumps({{"run": str(run), '
        f'"rows": against_published.to_dict("records")}}, default=str))'))
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    got = json.loads(text.split(MARK, 1)[1])
    run, rows = got["run"], pd.DataFrame(got["rows"])

    files = [f for f in (ROOT / "results" / "h200").glob("*.parquet") if run in f.name]
    assert len(files) == 1, f"no single file of run {run}"
    result = CliRunner().invoke(app, ["show", str(files[0]), "--mode", "fwd", "--format", "csv"])
    assert result.exit_code == 0, result.output
    shown = pd.read_csv(io.StringIO(result.output)).set_index(["heads", "sequences"])

    assert len(rows) == len(shown)
    for r in rows.to_dict("records"):
        s = shown.loc[(r["heads"], r["sequences"])]
        for backend in ("flash_qla", "fla"):
            assert r[backend] == pytest.approx(float(s[backend]), rel=1e-9), (r["heads"], r["sequences"], backend)
