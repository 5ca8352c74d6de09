"""Cold start: what a library's first calls cost in a fresh process, with its on-disk kernel caches empty
(cold) and with them as the previous process left them (warm). Engines start processes often; a library
whose first call compiles for a minute is a different choice from one that loads a cubin in a second.

Per point of a suite, in order: an empty cache folder of its own (Triton, TileLang, Inductor, FlashInfer's
workspace with its CuTe DSL cache, and CUDA's PTX cache, all under it: measure/caches.py), then the point
alone in a fresh worker process (cold), then alone in another fresh process on the same folder (warm). The
figure is the row's `compile_s`: the wall time of the point's first calls in that process (the check's call
and the first timed call), JIT compiles, autotuning and cache loads included; the process start and the
library's import are not in it. Rows land under OUT/cold and OUT/warm as any sweep's; the records, one per
point and phase, in OUT/cold-start.json (analyze/cold_start.py renders them).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from qlabench.core.spec import Suite
from qlabench.measure.caches import CACHE_VARS, ENV_VAR, use_cache_dir
from qlabench.run.options import RunOptions
from qlabench.run.sweep import run_sweep
from qlabench.store.cold_start_records import RECORDS

PHASES = ("cold", "warm")
CUDA_CACHE = "CUDA_CACHE_PATH"  # the driver's cache of PTX compiled for this GPU


def _folder_mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20 if path.exists() else 0.0


def run_cold_start(suite: Suite, out: str | os.PathLike, options: RunOptions | None = None,
                   on_record: Callable[[dict], None] | None = None) -> list[dict]:
    """The cold and warm first calls of every point of `suite` (see the module doc); `on_record` sees each
    record as it is made. The caller's cache settings are restored at the end."""
    out = Path(out)
    opts = options or RunOptions()
    saved = {k: os.environ.get(k) for k in (ENV_VAR, CUDA_CACHE, *CACHE_VARS)}
    records: list[dict] = []
    try:
        for i, point in enumerate(suite.points):
            cache = out / "caches" / f"point-{i:03d}"
            shutil.rmtree(cache, ignore_errors=True)
            for phase in PHASES:
                use_cache_dir(cache)  # every library's cache under it, for this process's workers
                os.environ[CUDA_CACHE] = str(cache / "cuda")
                res = run_sweep(dataclasses.replace(suite, points=(point,)), out / phase,
                                dataclasses.replace(opts, run_id=None, resume=False))
                (row,) = res.rows
                rec = {"backend": point.backend, "mode": point.mode, "point": point.label(), "phase": phase,
                       "first_calls_s": row.compile_s, "status": row.status, "reason": row.reason,
                       "cache_mib": round(_folder_mib(cache), 1), "device": row.device,
                       "run_id": row.run_id}
                records.append(rec)
                if on_record:
                    on_record(rec)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out.mkdir(parents=True, exist_ok=True)
    (out / RECORDS).write_text(json.dumps(records, indent=1))
    return records
