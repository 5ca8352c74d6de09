"""Cold start: what a library's first calls cost in a fresh process, with its on-disk kernel caches empty
(cold) and with them as the previous process left them (warm). Engines start processes often; a library
whose first call compiles for a minute is a different choice from one that loads a cubin in a second.

Per point of a suite, in order: an empty cache folder of its own, named for the point (Triton, TileLang, Inductor, FlashInfer's
workspace with its CuTe DSL cache, CUDA's PTX cache, and qlabench's per-point tuning store, whose choices a
warm FLA point installs instead of tuning: measure/caches.py, measure/tuning_store.py), then the point
alone in a fresh worker process (cold), then alone in another fresh process on the same folder (warm). The
figure is the row's `compile_s`: the wall time of the point's first calls in that process (the check's call
and the first timed call), JIT compiles, autotuning and cache loads included; the process start and the
library's import are not in it. Rows land under OUT/cold and OUT/warm as any sweep's; the records, one per
point and phase, in OUT/cold-start.json and the table in OUT/cold-start.md (analyze/cold_start.py), both
rewritten after every record: a run stopped part-way (a time budget, an interrupt) keeps every record it made.
`rebuild_cold_start` makes the records again from the rows under OUT/cold and OUT/warm alone (a folder whose
run was stopped before this rewrite existed, or whose JSON was lost).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from qlabench.analyze.cold_start.table import cold_start_markdown
from qlabench.core.errors import QlabenchError
from qlabench.core.names import default_name
from qlabench.core.point import Point
from qlabench.core.spec import Suite
from qlabench.measure.caches import CACHE_VARS, ENV_VAR, use_cache_dir
from qlabench.run.options import RunOptions
from qlabench.run.sweep import run_sweep
from qlabench.store.cold_start_records import RECORDS, write_records, write_text_atomic  # noqa: F401 (its file name, for callers)
from qlabench.store.files import read_rows, result_files
from qlabench.store.keys import key_tuple

PHASES = ("cold", "warm")
CUDA_CACHE = "CUDA_CACHE_PATH"  # the driver's cache of PTX compiled for this GPU
TABLE = "cold-start.md"


def _folder_mib(path: Path) -> float | None:
    """The bytes under `path` in MiB; None where there is no such folder (nothing to say, not zero)."""
    if not path.is_dir():
        return None
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def cache_folder(out: Path, point: Point) -> Path:
    """The kernel cache folder of `point`: named for the point itself (backend, mode and a hash of its key), never
    for its place in the suite, so that a suite narrowed or ordered otherwise finds each point's own folder."""
    digest = hashlib.sha256(repr(key_tuple(point.key())).encode()).hexdigest()[:12]
    return out / "caches" / f"{default_name(point.backend)}-{default_name(point.mode)}-{digest}"


def _record(point: Point, phase: str, row, cache_mib: float | None) -> dict:
    return {"backend": point.backend, "mode": point.mode, "point": point.label(), "phase": phase,
            "first_calls_s": row.compile_s, "status": row.status, "reason": row.reason,
            "cache_mib": cache_mib, "device": row.device, "run_id": row.run_id}


def write_outputs(out: Path, records: list[dict]) -> None:
    """OUT/cold-start.json and OUT/cold-start.md from `records` (each written whole or not at all)."""
    write_records(out, records)
    write_text_atomic(out / TABLE, cold_start_markdown(records))


def run_cold_start(suite: Suite, out: str | os.PathLike, options: RunOptions | None = None,
                   on_record: Callable[[dict], None] | None = None) -> list[dict]:
    """The cold and warm first calls of every point of `suite` (see the module doc); `on_record` sees each
    record as it is made. The caller's cache settings are restored at the end."""
    out = Path(out)
    opts = options or RunOptions()
    saved = {k: os.environ.get(k) for k in (ENV_VAR, CUDA_CACHE, *CACHE_VARS)}
    records: list[dict] = []
    try:
        for point in suite.points:
            cache = cache_folder(out, point)
            shutil.rmtree(cache, ignore_errors=True)
            for phase in PHASES:
                use_cache_dir(cache)  # every library's cache under it, for this process's workers
                os.environ[CUDA_CACHE] = str(cache / "cuda")
                res = run_sweep(dataclasses.replace(suite, points=(point,)), out / phase,
                                dataclasses.replace(opts, run_id=None, resume=False))
                (row,) = res.rows
                rec = _record(point, phase, row, _folder_mib(cache))
                records.append(rec)
                write_outputs(out, records)  # now, not at the end: a stopped run keeps its records
                if on_record:
                    on_record(rec)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return records


def rebuild_cold_start(suite: Suite, out: str | os.PathLike) -> list[dict]:
    """The records of `out` made again from its rows under cold/ and warm/, for `suite` (in any order; narrowed
    to at least the points measured), and OUT/cold-start.json and .md rewritten.

    A point's cache size is its own folder's size now (`cache_folder`: named for the point), which is what its
    last phase left: it goes on that phase's record and the earlier phase's is None, as is every record whose
    folder is gone, or was named by the point's place in the suite as runs before the folders were named for
    their points did (`point-NNN`: which point it held is not known; the table then says "not recorded"). Where a point and phase has several rows (a run repeated), the newest counts. A row whose
    point is not in `suite` means the suite is not the one that was run: QlabenchError, nothing written."""
    out = Path(out)
    index = {key_tuple(p.key()): i for i, p in enumerate(suite.points)}
    found: dict[tuple[int, str], tuple[Point, object]] = {}
    for phase in PHASES:
        if not (out / phase).is_dir():
            continue
        for f in result_files([out / phase]):
            for row in read_rows(f):
                point = Point.from_row(row)
                i = index.get(key_tuple(point.key()))
                if i is None:
                    raise QlabenchError(f"{f}: {point.label()} is not a point of suite {suite.name!r} as narrowed; "
                                        "give the suite, --backends and --modes the run had")
                old = found.get((i, phase))
                if old is None or str(row.run_id) > str(old[1].run_id):  # run ids begin with their UTC time
                    found[(i, phase)] = (point, row)
    if not found:
        raise QlabenchError(f"no cold-start rows under {out / 'cold'} or {out / 'warm'} to rebuild records from")
    records = []
    for i in sorted({i for i, _ in found}):
        phases = [ph for ph in PHASES if (i, ph) in found]
        for ph in phases:
            point, row = found[(i, ph)]
            mib = _folder_mib(cache_folder(out, point)) if ph == phases[-1] else None
            records.append(_record(point, ph, row, mib))
    write_outputs(out, records)
    return records
