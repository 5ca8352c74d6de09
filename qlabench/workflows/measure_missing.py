"""`advise --measure`: measure exactly the rows an answer is missing on this GPU, then answer from them.

`plan_measure` decides, before anything runs, what is missing on this host's GPU model (rows of another GPU answer
nothing about this one: `analyze.advise.missing_on`), writes the suite `advise --suite-out` would write into the
results folder beside the run it will hold (`OUT/<suite>/<run id>.toml`), prices its points from the evidence as
`run sweep --dry-run` does (analyze/evidence/costs.py) and plans the warm-up (workflows/warm_sweep.py). The command
line then runs `warm_then_sweep` and answers again with the new run's rows beside the evidence (`advise(...,
also=[run])`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from qlabench.analyze.advise import Advice, missing_on
from qlabench.analyze.advise.suite import missing_suite, suite_name
from qlabench.analyze.answer import Case, Question
from qlabench.analyze.evidence.costs import DeviceCost, point_costs, point_prices
from qlabench.analyze.evidence.current import rows_or_current
from qlabench.core.errors import ConfigError, DeviceError
from qlabench.run.options import RunOptions
from qlabench.run.plan import SweepPlan, Warmup, plan_sweep, resolve_device
from qlabench.run.sweep import new_run_id


@dataclass
class MeasurePlan:
    """What `advise --measure` will measure here: nothing (`sweep` None: every candidate has its rows on `model`),
    or the suite written at `suite_path`, as `sweep` plans it (with its warm-up); `cost`: its points priced from the
    evidence of one GPU model (`cost.device`: this one where it has rows, else the one with most of them)."""

    device: str  # as a sweep takes it: cuda, cuda:1, cpu
    model: str  # as rows record it: 'NVIDIA H200'
    missing: dict[Case, list[str]] = field(default_factory=dict)
    sweep: SweepPlan | None = None
    suite_path: Path | None = None
    cost: DeviceCost | None = None
    prices: dict = field(default_factory=dict)  # each point's priced seconds on `cost.device` (None: not priced)

    @property
    def points(self) -> int:
        return len(self.sweep.suite.points) if self.sweep else 0


def _here(device: str | None) -> str:
    """The device to measure on: `device`, else CUDA; a host without one is told how to go on."""
    try:
        return resolve_device(device or "cuda")
    except DeviceError:
        if device:
            raise
        raise DeviceError("advise --measure measures on a CUDA GPU, and there is none here: run it on the GPU, or "
                          "pass --device cpu to measure on this CPU") from None


def plan_measure(q: Question, ans: Advice, results: Iterable = (), out: str | Path = "results",
                 device: str | None = None, warmup: bool | None = None, warmup_jobs: int | None = None,
                 cores: int | None = None) -> MeasurePlan:
    """The plan for measuring what `ans` (the answer to `q` from `results`) is missing on this host's device.

    With no CUDA and no `device` named, a question the evidence already answers in full needs nothing measured
    (the plan says so); one that misses rows is a DeviceError (no GPU to measure them on)."""
    from qlabench.measure.env import device_model

    if device is None and not ans.to_measure_by_case():
        try:
            resolve_device("cuda")
        except DeviceError:  # nothing to measure, and nothing to measure it on: say so, not an error
            return MeasurePlan("none", "any GPU the evidence holds")
    where = _here(device)
    plan = MeasurePlan(where, device_model(where))
    plan.missing = missing_on(ans, plan.model)
    if not plan.missing:
        return plan
    run_id = new_run_id()
    folder = Path(out) / suite_name(q)
    plan.suite_path = folder / f"{run_id}.toml"  # beside the run it makes: what was asked stays with the rows
    try:
        folder.mkdir(parents=True, exist_ok=True)
        plan.suite_path.write_text(missing_suite(q, plan.missing))
    except OSError as e:
        raise ConfigError(f"--out {out}: cannot write the suite {plan.suite_path}: {e.strerror or e}") from None
    # the suite times with CUDA graphs, as the study does; a CPU has only the wall clock
    options = RunOptions(device=where, timer=None if where.startswith("cuda") else "auto", run_id=run_id)
    plan.sweep = plan_sweep(str(plan.suite_path), options, warmup=Warmup(warmup, warmup_jobs, cores))
    points = plan.sweep.suite.points
    rows, _, _ = rows_or_current(list(results))
    priced = point_costs(points, rows)
    plan.cost = next((d for d in priced if d.device == plan.model), priced[0] if priced else None)
    if plan.cost is not None:
        plan.prices = dict(zip(points, point_prices(points, rows, plan.cost.device)))
    return plan
