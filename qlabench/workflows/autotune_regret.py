"""What sweep order costs an autotuning library: each point timed under the configs every other shape picked.

An autotuner that keys its choice on the heads but not on the sequence length (FLA's Triton kernels) keeps,
for the life of a process, whatever the first shape of those heads tuned. An engine that tuned on another
shape, or a benchmark worker that ran another point first, then times a point with configs that were never
benchmarked on it. For each head configuration of a suite this workflow tunes the library on every shape in
turn (one tuning per shape, in a clean state: `measure/probes/autotune.retune`), keeps each shape's choices,
and times every shape under every set of choices (`install`). The regret of shape B tuned on A is
time(B | A's configs) / time(B | its own configs): 1.0 on the diagonal, above 1 where the order costs.

One process, one device: the tunings and all timings of a head configuration share its compiled kernels and
clocks. The table's file format (`autotune-regret.csv` and `.md`) is store/autotune_regret.py's.
"""

from __future__ import annotations

from collections.abc import Callable

from qlabench.core.errors import ConfigError
from qlabench.core.point import Point
from qlabench.core.spec import Suite
from qlabench.store.autotune_regret import RegretCell, read_regret, regret_markdown, regret_summary, write_regret

__all__ = ["measure_regret", "regret_points", "RegretCell", "read_regret", "regret_markdown", "regret_summary",
           "write_regret"]


def shape_label(p: Point) -> str:
    """'1x32768', '4x8192' or '28672+4096': the layout of a point's sequences."""
    lens = p.seqlens
    if len(set(lens)) == 1:
        return f"{len(lens)}x{lens[0]}"
    return "+".join(str(n) for n in lens)


def head_label(p: Point) -> str:
    return f"{p.h_qk}/{p.h_v}"


def regret_points(suite: Suite, backend: str, mode: str = "fwd") -> dict[str, list[Point]]:
    """The suite's points of `backend` and `mode`, grouped by head configuration (heads, dims, dtype)."""
    groups: dict[str, list[Point]] = {}
    for p in suite.points:
        if p.backend == backend and p.mode == mode and not p.distributed:
            key = f"{head_label(p)} K{p.K} V{p.V} {p.dtype}"
            groups.setdefault(key, []).append(p)
    if not groups:
        raise ConfigError(f"suite {suite.name!r} has no {mode} point of backend {backend!r} to tune")
    return groups


def measure_regret(suite: Suite, backend_name: str, device: str, mode: str = "fwd",
                   on_step: Callable[[str], None] | None = None, registry=None,
                   on_group: Callable[[list[RegretCell]], None] | None = None) -> list[RegretCell]:
    """Tune `backend_name` on every shape of each head configuration and time every shape under every
    shape's configs (see the module docstring). Raises ConfigError when the backend cannot run here.
    `registry`: where the backend is looked up (default: qlabench's); `on_group` is handed every cell so
    far after each head configuration (to write them as they come: a long run keeps what it measured)."""
    import torch

    from qlabench.backends import REGISTRY
    from qlabench.measure import caches
    from qlabench.measure.inputs import make_inputs
    from qlabench.measure.probes.autotune import autotune_choices, install, retune, tuned_choices
    from qlabench.measure.timing import TimerPlan, summarize

    caches.configure()
    backend = (registry if registry is not None else REGISTRY).get(backend_name)
    if backend is None:
        raise ConfigError(f"unknown backend {backend_name!r}")
    ok, why = backend.available()
    if not ok:
        raise ConfigError(f"{backend_name} cannot run here: {why}")
    if not backend.autotune_modules:
        raise ConfigError(f"{backend_name} does not autotune: its times cannot depend on what ran first")
    mods = backend.autotune_modules
    plan = TimerPlan.resolve("auto", device, suite.timing)
    plan, _ = plan.for_backend(backend.name, backend.graph_capturable)
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    cells: list[RegretCell] = []
    for group, points in regret_points(suite, backend_name, mode).items():
        fns = {}
        for p in points:
            ok, why = backend.supports(p, device)
            if not ok:
                raise ConfigError(f"{backend_name} does not support {shape_label(p)} at {group}: {why}")
            fns[shape_label(p)] = backend.prepare_point(p, make_inputs(p, device))
        choices, own_configs = {}, {}
        for label, fn in fns.items():  # one clean tuning per shape
            fn()  # imports and compiles before the reset, so the reset finds every autotuner
            retune(mods)
            fn()
            sync()
            choices[label] = tuned_choices(mods)
            own_configs[label] = autotune_choices(fn)
            if on_step:
                on_step(f"{group}: tuned on {label}")
        for timed, fn in fns.items():
            times, differ = {}, {}
            for tuned_on in fns:
                install(choices[tuned_on], mods)
                fn()  # a kernel whose key this shape alone reaches tunes here, outside the timing
                sync()
                differ[tuned_on] = autotune_choices(fn) != own_configs[timed]
                times[tuned_on] = summarize(plan.make(device).measure(fn).samples_ms).median
            own = times[timed]
            for tuned_on, t in times.items():
                cells.append(RegretCell(heads=group, tuned_on=tuned_on, timed=timed, median_ms=round(t, 5),
                                        own_ms=round(own, 5), regret=round(t / own, 4), backend=backend_name,
                                        configs_differ=differ[tuned_on]))
            if on_step:
                on_step(f"{group}: timed {timed} under {len(fns)} tunings")
        del fns
        if torch.device(device).type == "cuda":
            torch.cuda.empty_cache()
        if on_group:
            on_group(list(cells))
    return cells


