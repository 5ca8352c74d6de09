"""Nsight Compute on demand: profile one point's call in a child process and read back per-kernel metrics.

The parent runs `ncu --clock-control none --profile-from-start off ... python -m qlabench _ncu-child`;
the child builds the point's inputs, warms the call up once (JIT and autotuning stay out of the
report), then brackets exactly one call with cudaProfilerStart/Stop. ncu replays each kernel to
collect the metrics, so its kernel durations are not timings of record: they are only used to weight
`sm_active_pct` = 100 * sum(sm__cycles_active.avg) / sum(sm__cycles_elapsed.avg) over the call's kernels.

`--clock-control none` leaves the GPU clocks as found (ncu locks them to base by default). Without
`ncu` on PATH every entry point returns (None, reason) and nothing raises.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from qlabench.core.errors import MeasureError, PointError
from qlabench.core.point import Point

NCU_METRICS = (
    "sm__cycles_active.avg",
    "sm__cycles_elapsed.avg",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__waves_per_multiprocessor",
    "launch__grid_size",
    "gpu__time_duration.sum",
)
CHILD_COMMAND = "_ncu-child"

# ncu prints durations in auto-scaled units unless --print-units base; accept both, store nanoseconds.
_TIME_TO_NS = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
               "second": 1e9, "s": 1e9}


@dataclass(frozen=True)
class NcuKernel:
    """One profiled launch: its ncu ID, name, launch shape and metric values (time metrics in ns)."""

    id: int
    name: str
    grid: str | None = None
    block: str | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)

    def get(self, metric: str) -> float | None:
        return self.metrics.get(metric)


@dataclass(frozen=True)
class NcuProfile:
    kernels: tuple[NcuKernel, ...]
    sm_active_pct: float | None
    command: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"sm_active_pct": self.sm_active_pct, "command": list(self.command),
                "kernels": [asdict(k) for k in self.kernels]}


# -- finding ncu and building its command ----------------------------------------------------------
def find_ncu(ncu: str | None = None) -> tuple[str | None, str | None]:
    """(path to ncu, None), or (None, why not)."""
    name = ncu or os.environ.get("QLABENCH_NCU") or "ncu"
    path = shutil.which(name)
    if path is None:
        return None, f"Nsight Compute not found: no {name!r} on PATH (set QLABENCH_NCU to its path)"
    return path, None


def ncu_command(child: list[str], ncu: str = "ncu", metrics: tuple[str, ...] = NCU_METRICS,
                log_file: str | None = None) -> list[str]:
    """The ncu command line that profiles the cudaProfilerStart/Stop region of `child`."""
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--target-processes", "all",
           "--metrics", ",".join(metrics), "--csv", "--print-units", "base"]
    if log_file:
        cmd += ["--log-file", log_file]  # keeps the CSV apart from the child's own stdout
    return cmd + list(child)


def point_to_json(point: Point) -> str:
    return json.dumps(asdict(point), sort_keys=True)


def point_from_json(text: str) -> Point:
    """The point `point_to_json` wrote; PointError for text that is not one."""
    try:
        return Point(**json.loads(text))
    except PointError:
        raise
    except (ValueError, TypeError) as e:  # not JSON, not an object, or unknown / missing fields
        raise PointError(f"bad --point-json: {e}") from None


def child_command(point: Point, device: str = "cuda") -> list[str]:
    """`python -m qlabench _ncu-child --point-json ... --device ...` for this interpreter."""
    return [sys.executable, "-m", "qlabench", CHILD_COMMAND, "--point-json", point_to_json(point),
            "--device", device]


# -- parsing ncu's CSV -----------------------------------------------------------------------------
def _number(text: str | None, unit: str | None = None) -> float | None:
    if text is None:
        return None
    t = text.strip().replace(",", "")  # ncu groups thousands: "1,234,567"
    if not t or t.lower() in ("n/a", "nan", "-"):
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    if unit and unit.strip() in _TIME_TO_NS:
        v *= _TIME_TO_NS[unit.strip()]
    return v


def _csv_rows(text: str) -> list[list[str]]:
    """CSV rows from the header line on: ncu's own `==PROF==` lines and any program output come first."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"ID",'):
            return list(csv.reader(io.StringIO("\n".join(lines[i:]))))
    return []


def parse_ncu_csv(text: str) -> list[NcuKernel]:
    """Kernels of an `ncu --csv` report, in ID order.

    Reads both layouts: the details page (default; one line per metric, with "Metric Name",
    "Metric Unit", "Metric Value" columns) and `--page raw` (one line per kernel, one column per
    metric, and a second line of units).
    """
    rows = _csv_rows(text)
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    for needed in ("ID", "Kernel Name"):
        if needed not in col:
            raise MeasureError(f"ncu CSV has no {needed!r} column")

    def cell(r, name):
        i = col.get(name)
        return r[i] if i is not None and i < len(r) else None

    kernels: dict[int, dict] = {}

    def entry(r) -> dict | None:
        kid = _number(cell(r, "ID"))
        if kid is None:
            return None
        return kernels.setdefault(int(kid), {"id": int(kid), "name": cell(r, "Kernel Name"),
                                             "grid": cell(r, "Grid Size"), "block": cell(r, "Block Size"),
                                             "metrics": {}})

    if "Metric Name" in col:
        for r in body:
            k = entry(r)
            if k is not None:
                k["metrics"][cell(r, "Metric Name")] = _number(cell(r, "Metric Value"), cell(r, "Metric Unit"))
    else:
        metric_cols = [n for n in header if "__" in n]  # ncu metric names are <unit>__<counter>...
        units: dict[str, str] = {}
        for r in body:
            if not (cell(r, "ID") or "").strip():  # the units line
                units = {n: cell(r, n) or "" for n in metric_cols}
                continue
            k = entry(r)
            if k is not None:
                for n in metric_cols:
                    k["metrics"][n] = _number(cell(r, n), units.get(n))
    return [NcuKernel(**kernels[i]) for i in sorted(kernels)]


def sm_active_pct(kernels: list[NcuKernel] | tuple[NcuKernel, ...]) -> float | None:
    """100 * sum(sm__cycles_active.avg) / sum(sm__cycles_elapsed.avg) over kernels that report both."""
    active = elapsed = 0.0
    for k in kernels:
        a, e = k.get("sm__cycles_active.avg"), k.get("sm__cycles_elapsed.avg")
        if a is None or e is None:
            continue
        active += a
        elapsed += e
    return 100.0 * active / elapsed if elapsed > 0 else None


def per_kernel_rows(kernels) -> list[dict]:
    """Flat rows for display or a DataFrame: id, name, grid, block and the metrics, plus sm_active_pct."""
    out = []
    for k in kernels:
        a, e = k.get("sm__cycles_active.avg"), k.get("sm__cycles_elapsed.avg")
        row = {"id": k.id, "name": k.name, "grid": k.grid, "block": k.block}
        row.update(k.metrics)
        row["sm_active_pct"] = 100.0 * a / e if a is not None and e else None
        out.append(row)
    return out


# -- running it ----------------------------------------------------------------------------------
def profile_point(point: Point, device: str = "cuda", ncu: str | None = None, timeout_s: float = 1800,
                  env: dict[str, str] | None = None) -> tuple[NcuProfile | None, str | None]:
    """Profile one call of `point` under ncu in a child process: (profile, None) or (None, why not).

    `env` adds to the child's environment (a backend's dispatch switches must be set before its
    library is imported, hence in the child's environment, not by the parent).
    """
    path, why = find_ncu(ncu)
    if path is None:
        return None, why
    with tempfile.TemporaryDirectory(prefix="qlabench-ncu-") as d:
        log = os.path.join(d, "ncu.csv")
        cmd = ncu_command(child_command(point, device), ncu=path, log_file=log)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False,
                                  env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired:
            return None, f"ncu timed out after {timeout_s:.0f}s"
        except OSError as e:
            return None, f"ncu could not start: {e}"
        text = Path(log).read_text() if os.path.exists(log) else proc.stdout
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-3:]
        return None, f"ncu exited with {proc.returncode}: {' | '.join(tail)}"
    try:
        kernels = parse_ncu_csv(text)
    except ValueError as e:
        return None, f"cannot read ncu output: {e}"
    if not kernels:
        return None, "ncu profiled no kernel (was the region between cudaProfilerStart/Stop empty?)"
    return NcuProfile(kernels=tuple(kernels), sm_active_pct=sm_active_pct(kernels), command=tuple(cmd)), None
