"""The notebooks run headless from a clone on CPU: every cell executes without an error.

flashqla_study.ipynb falls back to the committed CPU fixture (tests/data/study/) when its results folder is
absent; explore_results.ipynb reads results/h200/ and the published table shipped with qlabench.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


@pytest.mark.parametrize("name", ["flashqla_study", "explore_results"])
def test_notebook_runs(name, monkeypatch):
    # The kernel is a child process: it must import this checkout's qlabench.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    if name == "flashqla_study":
        images = [o for o in outputs if "image/png" in o.get("data", {})]
        assert images, "the study notebook drew no figure"
        text = "".join(str(o.get("data", {}).get("text/markdown", "")) for o in outputs)
        assert "of 203 rows within 10%" in text
