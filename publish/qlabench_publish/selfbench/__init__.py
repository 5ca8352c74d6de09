"""Benchmarks of the harness itself (issue 4): precision, cost and agreement of its timers.

- Precision (precision.py): the same suite run N times (runs.py), each run a fresh `run_sweep` whose
  points execute in a new worker interpreter (qlabench/run/pool.py), so nothing (CUDA context,
  allocator state, warm caches in memory) carries from one run to the next; the spread of a point's
  medians across runs is the precision. Correctness checking stays on (it is what a real sweep does,
  and it never runs inside the timed region); a suite can make it cheaper with a small
  `check.oracle_max_tokens` and `full_size = false`.
- Cost (cost.py): seconds per point with compile excluded, at the suite's timing settings against a
  timing profile that models FlashQLA's own benchmark (tilelang `do_bench(warmup=10, rep=100,
  backend="cudagraph")`: one graph of ~rep ms of calls replayed 10 times, i.e. ~1 s of sampling).
- Agreement (agreement.py, CUDA only): per point in one process, qlabench's GraphTimer median against
  `triton.testing.do_bench_cudagraph(..., return_mode="median")` (and, where tilelang is importable,
  FlashQLA's exact call, whose wall time is the direct cost of FlashQLA's settings).

Runs live under OUT/runs/<profile>-<timer>-r<i>/ with a run.json written when a run completes, so
an interrupted selfbench (a time limit, a lost connection) continues where it stopped.
Computing (this package) and rendering (report.py: `render_*`, markdown) are separate from the CLI;
session.py is one `python -m qlabench_publish selfbench` call (`run_selfbench`), which the command maps its flags onto.
"""

from qlabench_publish.selfbench.agreement import AGREEMENT_TOL, agreement_unavailable, run_agreement
from qlabench_publish.selfbench.common import (
    FLASHQLA_REP_MS,
    FLASHQLA_REPLAYS,
    FLASHQLA_WARMUP_MS,
    TIMING_PROFILES,
    SelfbenchError,
    default_timers,
    load_average,
    parse_timing_overrides,
    point_label,
    with_timing,
)
from qlabench_publish.selfbench.cost import cost_table, phase_cost_table, point_cost_table, run_cost_table
from qlabench_publish.selfbench.precision import (
    GOAL_SPREAD,
    STRETCH_SPREAD,
    precision_table,
    spread_of_medians,
    verdict,
)
from qlabench_publish.selfbench.report import (
    markdown_table,
    measured_where,
    pct,
    render_agreement,
    render_cost,
    render_precision,
    render_report,
)
from qlabench_publish.selfbench.runs import (
    RUN_FILE,
    RunInfo,
    _phases,
    all_completed_runs,
    completed_run,
    medians_frame,
    run_dir,
    run_repeats,
)

__all__ = [
    "AGREEMENT_TOL", "FLASHQLA_REP_MS", "FLASHQLA_REPLAYS", "FLASHQLA_WARMUP_MS", "GOAL_SPREAD", "RUN_FILE",
    "STRETCH_SPREAD", "TIMING_PROFILES", "RunInfo", "SelfbenchError", "agreement_unavailable", "all_completed_runs",
    "completed_run", "cost_table", "default_timers", "load_average", "markdown_table", "measured_where",
    "medians_frame", "parse_timing_overrides", "pct", "phase_cost_table", "point_cost_table", "point_label",
    "precision_table", "render_agreement", "render_cost", "render_precision", "render_report", "run_agreement",
    "run_cost_table", "run_dir", "run_repeats", "spread_of_medians", "verdict", "with_timing",
]
