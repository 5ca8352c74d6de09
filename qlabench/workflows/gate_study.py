"""The statistics study behind docs/GATING.md: how often the gate cries wolf, and how often it catches a wolf.

    A/A    run a suite twice, gate the second run against the first: every `slower` is a false alarm.
    power  run it again with the synthetic backend slowed by a known factor (QLABENCH_SYNTHETIC_SLOWDOWN):
           the fraction of points judged `slower` is the detection rate at that size.

Every arm is gated against the same baseline run, exactly as `qlabench gate` does it: the baseline and
every arm measured with `replicates` fresh-process replicates, and each first-pass `slower` confirmed
by an interleaved A/B of the base code and the head code. The base code of this study is a site
folder whose sitecustomize.py sets the slowdown back to 1 (made here, in a temporary folder), so the
A/B re-measures both sides as a real `--base-ref` would. Both the first-pass and the confirmed
figures are reported, and the points judged `inconclusive`. Run it with `qlabench compare-study`
(defaults: qlabench/suites/gate-study-cpu.toml, +3%, +5%, +10%).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import platform
import socket
import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from qlabench.backends.synthetic import SLOWDOWN_ENV
from qlabench.core.errors import ConfigError
from qlabench.core.spec import Suite
from qlabench.run.options import RunOptions
from qlabench.analyze.compare.comparison import Comparison
from qlabench.workflows.gate import check_gate_options, run_gate
from qlabench.analyze.compare.verdict import CompareOptions, Failure, Verdict


@dataclass(frozen=True)
class Arm:
    """One gated run of the study."""

    name: str  # "A/A" or "+5%"
    slowdown: float  # injected factor (1.0 for A/A)
    timed: int  # points with a time on both sides
    first_pass_slower: int  # judged slower before the confirmation A/B
    regressions: int  # still slower after it: what fails the gate
    inconclusive: int  # points whose run-to-run noise floor is above the threshold
    counts: dict[str, int]
    geomean_ratio: float | None
    wall_s: float

    @property
    def rate(self) -> float:
        return self.regressions / self.timed if self.timed else float("nan")

    @property
    def first_pass_rate(self) -> float:
        return self.first_pass_slower / self.timed if self.timed else float("nan")


@dataclass(frozen=True)
class StudyResult:
    suite: str
    points: int
    options: CompareOptions
    confirm: int
    replicates: int
    arms: list[Arm]
    host: str
    device: str
    date: str
    wall_s: float


def parse_slowdowns(text: str) -> list[float]:
    """'1.03,1.05,1.10' -> the injected slowdown factors."""
    try:
        factors = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--slowdowns must be numbers like 1.05, got {text!r}") from None
    if bad := [f for f in factors if not 1 <= f <= 100]:  # inf or nan would spin forever
        raise ConfigError(f"--slowdowns must be factors between 1 and 100, got {bad[0]}")
    return factors


@contextmanager
def slowdown(factor: float):
    old = os.environ.get(SLOWDOWN_ENV)
    os.environ[SLOWDOWN_ENV] = repr(factor)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(SLOWDOWN_ENV, None)
        else:
            os.environ[SLOWDOWN_ENV] = old


def _arm(name: str, factor: float, c: Comparison, dismissed: int, wall_s: float) -> Arm:
    regressions = sum(1 for p in c.pairs if p.failure is Failure.REGRESSION and p.verdict is Verdict.SLOWER)
    return Arm(name=name, slowdown=factor, timed=len(c.timed), first_pass_slower=regressions + dismissed,
               regressions=regressions, inconclusive=c.counts.get(Verdict.INCONCLUSIVE.value, 0), counts=c.counts,
               geomean_ratio=c.geomean_ratio, wall_s=wall_s)


def base_code_folder(root: Path) -> Path:
    """The study's `--base-ref`: a site folder whose sitecustomize undoes any injected slowdown."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "sitecustomize.py").write_text(f"import os\nos.environ[{SLOWDOWN_ENV!r}] = '1.0'\n")
    return root


def run_study(suite: Suite, out_root: str | os.PathLike, slowdowns: Sequence[float] = (1.03, 1.05, 1.10),
              options: CompareOptions | None = None, confirm: int = 1, progress=None, replicates: int = 3,
              run: RunOptions | None = None) -> StudyResult:
    """The gate's A/A false-alarm rate and its detection rate of each injected slowdown; `run` says how
    every sweep measures (its replicates are `replicates`). Every option is checked before anything runs."""
    from qlabench.run.sweep import run_sweep

    check_gate_options(confirm, replicates)
    run = dataclasses.replace(run or RunOptions(), replicates=replicates)

    t0 = time.perf_counter()
    out_root = Path(out_root)
    base_code = base_code_folder(out_root / "base-code")
    with slowdown(1.0):
        base = run_sweep(suite, out_root / "base", run, progress=progress)
    arms = []
    for name, factor in [("A/A", 1.0)] + [(f"+{f - 1:.0%}", f) for f in slowdowns]:
        t = time.perf_counter()
        with slowdown(factor):
            g = run_gate(suite, [base.path], out_root / name.replace("/", "").replace("%", "pct"), options,
                         confirm=confirm, progress=progress, replicates=replicates, base_ref=str(base_code),
                         run=run)
        arms.append(_arm(name, factor, g.comparison, g.dismissed, time.perf_counter() - t))
    return StudyResult(suite=suite.name, points=len(suite.points), options=options or CompareOptions(),
                       confirm=confirm, replicates=replicates, arms=arms, host=socket.gethostname(),
                       device=base.rows[0].device,
                       date=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                       wall_s=time.perf_counter() - t0)


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def markdown(r: StudyResult) -> str:
    o = r.options
    lines = [
        f"Suite `{r.suite}` ({r.points} points) on {r.device} (host {r.host}, {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {_load()}), {r.date}; {o.method} method, {r.replicates} replicates "
        f"a side, threshold {o.threshold:.0%}, alpha {o.alpha:g}, noise factor {o.noise_factor:g}, "
        f"confirm {r.confirm}; {r.wall_s:.0f} s in all.",
        "",
        "| arm | injected | timed points | slower, first pass | regressions after confirmation | rate | "
        "inconclusive | geo-mean change | verdicts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for a in r.arms:
        verdicts = ", ".join(f"{n} {v}" for v, n in a.counts.items() if n)
        geo = f"{a.geomean_ratio - 1:+.1%}" if a.geomean_ratio else "-"
        lines.append(f"| {a.name} | x{a.slowdown:.2f} | {a.timed} | {a.first_pass_slower} "
                     f"({a.first_pass_rate:.1%}) | {a.regressions} | {a.rate:.1%} | {a.inconclusive} | {geo} | "
                     f"{verdicts} |")
    return "\n".join(lines) + "\n"
