"""Installing a plugin for a test without pip: a `.dist-info` folder with entry points in a temporary folder put
on sys.path (for this process) and on PYTHONPATH (for the sweep's worker processes); importlib.metadata finds a
distribution there as it finds an installed one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from qlabench.core.backend_decl import ENTRY_POINT_GROUP

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gdn-plugin"


def dist_info(root: Path, dist: str, version: str, entry_points: dict[str, str], source: Path | None = None) -> Path:
    """`root`, holding a distribution `dist` `version` with these `qlabench.backends` entry points (and, with
    `source`, a PEP 610 direct_url.json naming the folder it was installed from)."""
    d = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (d / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    if source is not None:
        (d / "direct_url.json").write_text(json.dumps({"url": source.resolve().as_uri(), "dir_info": {}}))
    return root


def on_path(monkeypatch, *folders: Path) -> None:
    """Put `folders` first on this process's sys.path and on the workers' PYTHONPATH."""
    for f in reversed(folders):
        monkeypatch.syspath_prepend(str(f))
    rest = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([*map(str, folders), *([rest] if rest else [])]))
    sys.modules.pop("gdn_example", None)
    sys.modules.pop("gdn_example.kernel", None)


def suite_beside_naive_chunk(name: str, description: str, backends: list[str], max_samples: int = 3) -> str:
    """A tiny CPU suite (one 64-token forward point of Qwen3.5-0.8B at TP8) of `backends` beside naive-chunk, its
    baseline: what a user's first sweep of a kernel of their own looks like."""
    listed = ", ".join(f'"{b}"' for b in ["naive-chunk", *backends])
    return f"""
name = "{name}"
description = "{description}"
device = "cpu"
baseline = "naive-chunk"

[sweep]
backends = [{listed}]
modes = ["fwd"]
batch = [1]
seqlen = [64]
heads = [{{ model = "qwen3.5-0.8b", tp = 8 }}]
K = [128]
V = [128]
dtype = ["bfloat16"]
gate = ["flashqla"]

[timing]
timer = "wall"
warmup = 1
min_samples = 3
max_samples = {max_samples}
max_time_s = 0.5
"""
