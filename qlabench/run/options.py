"""How a sweep runs, in one value: `RunOptions`, and the narrowing of a suite to the part a caller wants.

`run_sweep(suite, out, options, progress)` takes its settings from one `RunOptions`, as the command line
maps its flags onto it (asv's commands map theirs onto one library call). Where the points run is one
field, `executor`: worker subprocesses by default (isolation and time limits), a factory for another
executor (several GPUs, Ray: executors.executor_factory), or `InProcess(registry)`, this process with
any registry object (no isolation, no time limits; tests pass their own backends). The options are
checked when they are made, before anything runs.

`narrow_suite` is what `run sweep --backends/--modes/--shard/--cpu-threads/--ncu` do to a suite, for
library callers too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from qlabench.core.errors import ConfigError
from qlabench.core.spec import Suite
from qlabench.core.spec_limits import MAX_POINTS, bound_problem


@dataclass(frozen=True)
class InProcess:
    """Measure the points in this process, one after another: no isolation, no time limits.

    registry: the backends by name (None: the package's registry); any object, since nothing is pickled.
    """

    registry: Mapping | None = None


# Replicates are what the gate's statistics take as independent runs; in one process the later ones inherit
# the first one's warm caches, allocator and clocks (an unchanged kernel read 29-33% faster at p = 0.001).
IN_PROCESS_REPLICATES = ("replicates of an in-process sweep are not independent runs (they share one process's warm "
                         "state), so the gate's statistics cannot use them: measure in worker processes (the default). "
                         "A backend of your own needs no custom registry there: declare it through the "
                         "`qlabench.backends` entry point or name it as `module:function` (docs/PLUGINS.md)")

# Builds the isolated executor of a sweep from its WorkerJob, device and the driver's environment
# (executors.local_executor by default; executors.ray_executor for a Ray cluster).
ExecutorFactory = Callable[..., object]


@dataclass(frozen=True)
class RunOptions:
    """Everything about a sweep that is not the suite: a command's flags, as one value.

    device: cpu, cuda or cuda:N; None takes the suite's (auto: cuda when available).
    timer: None takes the suite's [timing].timer; resolved once, when the sweep starts.
    check: None takes the suite's [check].enabled.
    executor: where points run (see the module doc): None, an ExecutorFactory, or InProcess(...).
    resume: skip points already recorded ok for this suite, environment and CPU thread count.
    max_time_s: start no new point after this many seconds; a later resume continues.
    replicates: measure every point this many times, in rounds (all points, then all again), each round
        in fresh worker processes; rows carry `replicate` = the round (null with 1). The run, not the
        sample, is what the gate's statistics treat as independent (docs/GATING.md).
    max_points: the most measurements (points x replicates) a sweep takes.
    allow_oversized: run points whose tensors alone exceed the device's memory.
    run_id: None makes a new one.
    """

    device: str | None = None
    timer: str | None = None
    check: bool | None = None
    executor: ExecutorFactory | InProcess | None = None
    resume: bool = False
    max_time_s: float | None = None
    replicates: int = 1
    max_points: int = MAX_POINTS
    allow_oversized: bool = False
    run_id: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) or self.replicates < 1:
            raise ConfigError(f"--replicates must be an integer of at least 1, got {self.replicates!r}")
        if self.max_points < 1:
            raise ConfigError(f"--max-points must be at least 1, got {self.max_points}")
        if self.replicates > self.max_points:
            raise ConfigError(f"--replicates {self.replicates}: over the limit of {self.max_points} measurements "
                              "(pass --max-points N to allow more)")
        if self.max_time_s is not None and not self.max_time_s >= 0:
            raise ConfigError(f"--max-time must be >= 0 seconds, got {self.max_time_s}")
        if self.in_process and self.replicates > 1:
            raise ConfigError(IN_PROCESS_REPLICATES)
        if self.resume and self.replicates > 1:
            raise ConfigError("--resume cannot continue a run with --replicates (its rounds would be incomplete)")

    @property
    def in_process(self) -> bool:
        return isinstance(self.executor, InProcess)

    def check_size(self, suite: Suite) -> None:
        """ConfigError when the suite's points times the replicates exceed `max_points`."""
        n = len(suite.points) * self.replicates
        if n > self.max_points:
            raise ConfigError(f"{len(suite.points)} points x {self.replicates} replicates = {n} measurements, over "
                              f"the limit of {self.max_points} (pass --max-points N to allow more)")


def narrow_suite(suite: Suite, *, backends: Sequence[str] | str | None = None, modes: Sequence[str] | str | None = None,
                 shard: str | None = None, cpu_threads: int | None = None, ncu: bool = False,
                 autotune: str | None = None, heads: Sequence[str] | str | None = None,
                 seqlens: str | None = None) -> Suite:
    """`suite` cut to some backends, modes, head configurations ('h_qk/h_v') and calls' sequences ('32768,4x8192',
    as `advise --seqlens` names them), then to one shard ('I/N'), with
    its CPU thread count, Nsight Compute profiling or autotune mode set; what `run sweep`'s flags of those names
    do. A name the suite does not have, a bad shard, an out-of-range thread count or an unknown autotune mode is
    a ConfigError."""
    from qlabench.core.select import parse_heads, parse_layouts, parse_names, selected_indices
    from qlabench.core.spec_limits import AUTOTUNE_MODES

    if autotune is not None:
        if autotune not in AUTOTUNE_MODES:
            raise ConfigError(f"--autotune must be one of {', '.join(AUTOTUNE_MODES)}, got {autotune!r}")
        suite = dataclasses.replace(suite, run=dataclasses.replace(suite.run, autotune=autotune))
    if ncu:
        suite = dataclasses.replace(suite, profile=dataclasses.replace(suite.profile, ncu=True))
    if cpu_threads is not None:
        if problem := bound_problem("run.cpu_threads", cpu_threads):
            raise ConfigError(f"--cpu-threads {problem}")
        suite = dataclasses.replace(suite, run=dataclasses.replace(suite.run, cpu_threads=cpu_threads))
    names = [parse_names(v, flag) if isinstance(v, str) or v is None else tuple(v)
             for v, flag in ((backends, "--backends"), (modes, "--modes"))]
    suite, names[0] = _with_functions(suite, names[0])
    head_names = parse_heads(heads if isinstance(heads, str) or heads is None else ",".join(heads))
    layouts = parse_layouts(seqlens)
    if any(names) or head_names or layouts:
        keep = selected_indices(suite.points, names[0], names[1], where=str(suite.path), heads=head_names,
                                seqlens=layouts)
        suite = dataclasses.replace(suite, points=tuple(suite.points[i] for i in keep))
    if shard is not None:  # '--shard=' is an error (parse_shard), never every point
        from qlabench.run.executors.shard import parse_shard, shard_points

        suite = dataclasses.replace(suite, points=tuple(shard_points(suite.points, parse_shard(shard))))
    return suite


def _with_functions(suite: Suite, backends: tuple[str, ...]) -> tuple[Suite, tuple[str, ...]]:
    """`--backends pkg.mod:function` for a function the suite does not name: the suite gets that backend's
    points, one per problem of the suite's points in a mode the function runs (forward: docs/PLUGINS.md)."""
    from qlabench.core.backend_decl import decl_of, is_callable_name

    have = {p.backend for p in suite.points}
    new = [b for b in backends if is_callable_name(b) and b not in have]
    if not new:
        return suite, backends
    added: dict = {}
    for name in new:
        modes = decl_of(name).modes
        for p in suite.points:
            if p.mode in modes and not p.distributed and not p.is_serving:
                q = p.with_(backend=name)
                added.setdefault(q, None)
    if not added:
        raise ConfigError(f"{suite.path}: no point of a mode {new[0]!r} runs ({', '.join(sorted(decl_of(new[0]).modes))})")
    return dataclasses.replace(suite, points=(*suite.points, *added)), backends


__all__ = ["IN_PROCESS_REPLICATES", "ExecutorFactory", "InProcess", "RunOptions", "narrow_suite"]
