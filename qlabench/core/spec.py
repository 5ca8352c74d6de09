"""Suite files: declarative TOML sweeps, validated and expanded into points. Pure Python, no torch.

A suite names its axes under [sweep]; their cartesian product gives the points. [[include]] tables
are extra sweeps (any axis not named is taken from [sweep]); [[exclude]] tables drop every point
that matches all of their keys. See qlabench/suites/README.md for the format.
"""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from qlabench.core.regimes import REGIMES
from qlabench.core import identity, models
from qlabench.core.errors import PointError, SpecError
from qlabench.core.names import default_name, name_problem
from qlabench.core.package_data import SUITES_DIR
from qlabench.core.point import SERVING_MODES, Point, gva_error
from qlabench.core.spec_limits import DEVICE_RE, MAX_BATCH, MAX_POINTS, table_problems
from qlabench.core.spec_tables import AXES as _AXES, AXIS_DEFAULTS as _AXIS_DEFAULTS, MATCH_KEYS as _MATCH_KEYS
from qlabench.core.spec_tables import (SERVING_DEFAULTS, budget_values, cp_entries, exclude_value_problem,
                                      is_of as _is, matches_exclude, split_entries)

DEFAULT_SUITE = "quick-cpu"
TIMERS = ("auto", "wall", "events", "graph")
@dataclass(frozen=True)
class TimingSpec:
    """How to sample a point. Counts are calls; times are seconds of sampling per point."""

    timer: str = "auto"  # auto: graph on CUDA, wall on CPU
    warmup: int = 3
    min_samples: int = 5
    max_samples: int = 200
    min_time_s: float = 0.0
    max_time_s: float = 10.0
    target_rel_noise: float = 0.005
    l2_flush: bool = True
    calls_per_sample: int = 0  # calls timed together per sample; 0: the timer's choice (graph: ~2 ms of calls)
    # Time each point again at 1 and at sensitivity_calls calls per sample; the row records the medians and
    # whether they differ by more than the noise (core/timing_sensitivity.py). Costs two more samplings.
    sensitivity: bool = False
    sensitivity_calls: int = 64
    regime: str = "burst"  # one of REGIMES
    sustained_ms: float = 200.0  # `sustained`: ms of back-to-back timed calls before the first sample


@dataclass(frozen=True)
class CheckSpec:
    """Correctness checking before timing."""

    enabled: bool = True
    oracle_max_tokens: int = 512  # the fp32 recurrence runs on at most this many tokens
    full_size: bool = True  # at the point's own size too (naive-chunk fp32); False: such rows are never ranked
    # What the errors are measured against: "oracle" (the fp32 recurrence on the reduced problem, before
    # timing) or "fp64-full" (the float64 chunked form at the point's real size, after its first call).
    reference: str = "oracle"


REFERENCES = ("oracle", "fp64-full")


@dataclass(frozen=True)
class RunSpec:
    """How a sweep guards itself (see docs/ROBUSTNESS.md). Seconds of wall time per worker call."""

    point_timeout_s: float = 600.0  # a point that opens no new compile group
    compile_timeout_s: float = 1800.0  # the first point of a compile group on a worker: JIT + check + timing
    cpu_threads: int = 1  # torch intra-op threads of a CPU worker (0: torch's default, one per core)
    # Which shape an autotuning library (FLA's Triton kernels) tunes for: "point-cached", each point for itself,
    # its choices kept in the cache folder's tuning store and installed, not re-tuned, when the same point
    # runs again on the same stack and GPU model (a later run, a resume); "point", each point for itself in
    # every run, the store left alone; "process", the library's own behaviour, the first shape of a head
    # configuration in the process decides for the rest (what an engine that tuned on another shape gets:
    # order-dependent). spec_limits.AUTOTUNE_MODES.
    autotune: str = "point-cached"


@dataclass(frozen=True)
class ProfileSpec:
    """Optional profiling of every ok GPU row (Kineto kernel capture always runs on CUDA)."""

    ncu: bool = False  # Nsight Compute per point, for sm_active_pct (slow: one extra process per point)
    ncu_timeout_s: float = 900.0


@dataclass(frozen=True)
class Suite:
    name: str
    path: str
    points: tuple[Point, ...]
    description: str = ""
    device: str = "auto"
    baseline: str | None = None
    timing: TimingSpec = field(default_factory=TimingSpec)
    check: CheckSpec = field(default_factory=CheckSpec)
    run: RunSpec = field(default_factory=RunSpec)
    profile: ProfileSpec = field(default_factory=ProfileSpec)


_TOP_KEYS = {"name", "description", "device", "baseline", "sweep", "include", "exclude", "timing", "check", "run",
             "profile"}


def _type_name(t: tuple[type, ...]) -> str:
    return {str: "a string", int: "an integer", bool: "a boolean", float: "a number", list: "a list",
            dict: "a table"}[t[0]]


def is_suite_path(name_or_path: str) -> bool:  # a folder in it, or a .toml file: never a suite's name
    return Path(name_or_path).suffix == ".toml" or "/" in name_or_path

def resolve_suite_path(name_or_path: str, suites_dir: Path | None = None) -> Path:
    """`NAME` -> the bundled suites/NAME.toml (package data), even beside a file NAME; a path, or no suite, a file."""
    p, candidate = Path(name_or_path), (suites_dir or SUITES_DIR) / f"{name_or_path}.toml"
    if is_suite_path(name_or_path) or (p.exists() and not candidate.is_file()):
        if not p.is_file():
            raise SpecError(str(p), "suite", "no such suite file")
        return p
    if not candidate.is_file():
        known = ", ".join(sorted(f.stem for f in candidate.parent.glob("*.toml"))) or "none"
        raise SpecError(str(candidate), "suite", f"unknown suite {name_or_path!r} (known: {known})")
    return candidate


def list_suites(suites_dir: Path | None = None) -> list[Path]:
    return sorted((suites_dir or SUITES_DIR).glob("*.toml"))


def load_suite(name_or_path: str, suites_dir: Path | None = None, max_points: int | None = MAX_POINTS) -> Suite:
    path = resolve_suite_path(name_or_path, suites_dir)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise SpecError(str(path), "toml", f"not UTF-8 text: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(path), "toml", f"not valid TOML: {e}") from None
    return parse_suite(data, str(path), max_points=max_points)


def timing_problems(timing: TimingSpec) -> list[tuple[str, str]]:
    """(key, problem) for everything wrong with a [timing] table, however it was made (a suite, `--timing`)."""
    named = [("timing.timer", f"must be one of {TIMERS}, got {timing.timer!r}")] if timing.timer not in TIMERS else []
    if timing.regime not in REGIMES:
        named.append(("timing.regime", f"must be one of {REGIMES}, got {timing.regime!r}"))
    return named + table_problems("timing", timing)


def parse_suite(data: dict, path: str = "<suite>", max_points: int | None = MAX_POINTS) -> Suite:
    unknown = set(data) - _TOP_KEYS
    if unknown:
        k = sorted(unknown)[0]
        raise SpecError(path, k, f"unknown key (allowed: {', '.join(sorted(_TOP_KEYS))})")
    name = _scalar(data, "name", str, path, default_name(Path(path).stem))
    if problem := name_problem(name):  # the name is a folder under --out: a safe slug only
        raise SpecError(path, "name", problem)
    description = _scalar(data, "description", str, path, "")
    device = _scalar(data, "device", str, path, "auto")
    if not DEVICE_RE.fullmatch(device):
        raise SpecError(path, "device", f"must be auto, cpu or cuda[:N], got {device!r}")
    baseline = _scalar(data, "baseline", str, path, None)
    timing = _dataclass_table(data.get("timing", {}), TimingSpec, "timing", path)
    check = _dataclass_table(data.get("check", {}), CheckSpec, "check", path)
    if check.reference not in REFERENCES:
        raise SpecError(path, "check.reference", f"must be one of {REFERENCES}, got {check.reference!r}")
    # the fp32 full-size check is the default; asked for beside the float64 reference it is a contradiction
    if check.reference == "fp64-full" and (data.get("check") or {}).get("full_size") is True:
        raise SpecError(path, "check.full_size", "the fp64-full reference already checks at full size (in "
                        "float64); drop full_size, which compares with naive-chunk in float32")
    run = _dataclass_table(data.get("run", {}), RunSpec, "run", path)
    profile = _dataclass_table(data.get("profile", {}), ProfileSpec, "profile", path)
    for key, problem in timing_problems(timing) + [kp for t, o in (("check", check), ("run", run),
                                                                   ("profile", profile)) for kp in table_problems(t, o)]:
        raise SpecError(path, key, problem)

    sweep = data.get("sweep", {})
    if not isinstance(sweep, dict):
        raise SpecError(path, "sweep", "must be a table")
    includes = _table_list(data, "include", path)
    excludes = _table_list(data, "exclude", path)

    for i, rule in enumerate(excludes):
        for k in rule:
            if k not in _MATCH_KEYS:
                raise SpecError(path, f"exclude[{i}].{k}", f"unknown key (allowed: {', '.join(sorted(_MATCH_KEYS))})")
            if problem := exclude_value_problem(k, rule[k]):
                raise SpecError(path, f"exclude[{i}].{k}", problem)
            if k == "model":
                for m in rule[k] if isinstance(rule[k], list) else [rule[k]]:
                    if not isinstance(m, str):
                        raise SpecError(path, f"exclude[{i}].model", f"must be a string, got {type(m).__name__}")
                    try:
                        models.lookup(m)
                    except KeyError as e:
                        raise SpecError(path, f"exclude[{i}].model", e.args[0]) from None

    # [[exclude]] applies to the combinations before each becomes a point: a combination no point can be
    # (decode at seqlen 4 in a sweep of decode and mtp over seqlen 1 and 4) may be excluded, not only refused.
    points: list[Point] = []
    seen: set[Point] = set()
    sweeps = [("sweep", sweep)] if sweep else []
    sweeps += [(f"include[{i}]", {**sweep, **inc}) for i, inc in enumerate(includes)]
    for where, axes in sweeps:
        for fields in _expand(axes, where, path, None if max_points is None else max_points - len(points)):
            if any(matches_exclude(fields, rule) for rule in excludes):
                continue
            p = _point(fields, where, path)
            if p not in seen:
                seen.add(p)
                points.append(p)
    if not points:
        raise SpecError(path, "sweep", "the sweep is empty: it expands to no points")
    return Suite(name=name, path=path, points=tuple(points), description=description, device=device,
                 baseline=baseline, timing=timing, check=check, run=run, profile=profile)


def _scalar(data: dict, key: str, typ: type, path: str, default):
    if key not in data:
        return default
    v = data[key]
    if not _is(v, (typ,)):
        raise SpecError(path, key, f"must be {_type_name((typ,))}, got {type(v).__name__}")
    return v


def _dataclass_table(table: Any, cls, where: str, path: str):
    if not isinstance(table, dict):
        raise SpecError(path, where, "must be a table")
    defaults = cls()
    kwargs = {}
    for k, v in table.items():
        if not hasattr(defaults, k):
            raise SpecError(path, f"{where}.{k}", "unknown key")
        want = type(getattr(defaults, k))
        if not _is(v, (want,)):
            raise SpecError(path, f"{where}.{k}", f"must be {_type_name((want,))}, got {type(v).__name__}")
        kwargs[k] = want(v)
    return cls(**kwargs)


def _table_list(data: dict, key: str, path: str) -> list[dict]:
    v = data.get(key, [])
    if not isinstance(v, list) or not all(isinstance(t, dict) for t in v):
        raise SpecError(path, key, "must be an array of tables ([[%s]])" % key)
    return v


def _axis(axes: dict, name: str, where: str, path: str) -> list:
    types, allowed = _AXES[name]
    if name not in axes:
        if name in _AXIS_DEFAULTS:
            return list(_AXIS_DEFAULTS[name])
        raise SpecError(path, f"{where}.{name}", "missing required axis")
    raw = axes[name]
    if name == "varlen":
        # A list of layouts; a single layout may be written as a flat list of lengths.
        values = [raw] if isinstance(raw, list) and raw and not isinstance(raw[0], list) else raw
        if not isinstance(values, list):
            values = [values]
    else:
        values = raw if isinstance(raw, list) else [raw]
    for i, v in enumerate(values):
        if not _is(v, types):
            raise SpecError(path, f"{where}.{name}[{i}]", f"must be {_type_name(types)}, got {type(v).__name__}")
        if allowed is not None and v not in allowed:
            raise SpecError(path, f"{where}.{name}[{i}]", f"{v!r} is not one of {', '.join(map(str, allowed))}")
        if name == "gate_zero_frac" and not 0 <= v <= 1:
            raise SpecError(path, f"{where}.{name}[{i}]", f"must be a fraction in [0, 1], got {v}")
        if name == "batch" and v > MAX_BATCH:
            raise SpecError(path, f"{where}.{name}[{i}]", f"batch {v} is over {MAX_BATCH}")
        if name == "gate_scale" and not 0 < v < float("inf"):
            raise SpecError(path, f"{where}.{name}[{i}]", f"must be a positive number, got {v}")
        if isinstance(v, int) and not isinstance(v, bool) and name not in ("gate_zero_frac", "gate_scale") \
                and v < (0 if name == "seed" else 1):
            raise SpecError(path, f"{where}.{name}[{i}]", f"must be positive, got {v}")
    if name in ("gate_zero_frac", "gate_scale"):
        values = [float(v) for v in values]
    return values


def _heads(entries: list[dict], where: str, path: str) -> list[tuple[int, int, str | None, int | None]]:
    out = []
    for i, h in enumerate(entries):
        key = f"{where}.heads[{i}]"
        extra = set(h) - {"h_qk", "h_v", "model", "tp"}
        if extra:
            raise SpecError(path, f"{key}.{sorted(extra)[0]}", "unknown key (allowed: h_qk, h_v, model, tp)")
        if "model" in h:
            if "h_qk" in h or "h_v" in h:
                raise SpecError(path, key, "give either model (+ tp) or h_qk and h_v, not both")
            if not isinstance(h["model"], str):
                raise SpecError(path, f"{key}.model", "must be a string")
            try:
                m = models.lookup(h["model"])
            except KeyError as e:
                raise SpecError(path, f"{key}.model", e.args[0]) from None
            tps = h.get("tp", 1)
            tps = tps if isinstance(tps, list) else [tps]
            for tp in tps:
                if not _is(tp, (int,)):
                    raise SpecError(path, f"{key}.tp", f"must be an integer, got {type(tp).__name__}")
                try:
                    h_qk, h_v = m.at_tp(tp)
                except ValueError as e:
                    raise SpecError(path, f"{key}.tp", str(e)) from None
                out.append((h_qk, h_v, m.name, tp))
        else:
            if "tp" in h:
                raise SpecError(path, f"{key}.tp", "tp needs a model; with explicit heads give the per-GPU counts")
            for k in ("h_qk", "h_v"):
                if k not in h:
                    raise SpecError(path, f"{key}.{k}", "missing (give h_qk and h_v, or model and tp)")
                if not _is(h[k], (int,)) or h[k] < 1:
                    raise SpecError(path, f"{key}.{k}", f"must be a positive integer, got {h[k]!r}")
            if gva := gva_error(h["h_qk"], h["h_v"]):
                raise SpecError(path, f"{key}.h_v", gva)
            out.append((h["h_qk"], h["h_v"], None, None))
    return out


def _expand(axes: dict, where: str, path: str, limit: int | None = None) -> list[dict]:
    """The field values of every combination of a sweep's axes (Point's keyword arguments), not yet judged."""
    unknown = set(axes) - set(_AXES)
    if unknown:
        k = sorted(unknown)[0]
        raise SpecError(path, f"{where}.{k}", f"unknown axis (allowed: {', '.join(_AXES)})")
    ax = {name: _axis(axes, name, where, path) for name in _AXES}
    for i, lens in enumerate(ax["varlen"]):
        if not lens or not all(_is(x, (int,)) and x >= 1 for x in lens):
            raise SpecError(path, f"{where}.varlen[{i}]", "must be a non-empty list of positive lengths")
    heads = _heads(ax["heads"], where, path)
    cps = cp_entries(ax["cp"], where, path)
    layouts = [("dense", b, (t,) * b) for b in ax["batch"] for t in ax["seqlen"]]
    layouts += [("varlen", 1, tuple(lens)) for lens in ax["varlen"]]
    layouts += [("varlen", 1, lens) for lens in split_entries(ax["split"], where, path)]
    if not layouts:
        raise SpecError(path, f"{where}.seqlen", "no sequences: give seqlen (dense), varlen and/or split layouts")
    gate_params = [(z, s) for z in ax["gate_zero_frac"] for s in ax["gate_scale"]]
    for name in ("gate_zero_frac", "gate_scale"):
        others = [g for g in ax["gate"] if g != "flashqla"]
        if ax[name] != [None] and others:
            raise SpecError(path, f"{where}.{name}", f"applies to the flashqla gate profile only, and this sweep also "
                            f"has gate = {others[0]!r} (put that profile in its own [[include]])")
    for name in SERVING_DEFAULTS:
        if ax[name] != [None] and not set(ax["modes"]) & set(SERVING_MODES):
            raise SpecError(path, f"{where}.{name}", f"applies to serving modes ({', '.join(SERVING_MODES)}) only, "
                            f"and this sweep has modes {ax['modes']}")
    if any(not _is(f, (int,)) or f < 1 for f in ax["pool_factor"] if f is not None):
        raise SpecError(path, f"{where}.pool_factor", "must be a positive integer (pool slots = factor x batch)")
    serving = [tuple(SERVING_DEFAULTS[k] if v is None else v for k, v in zip(SERVING_DEFAULTS, c))
               for c in itertools.product(*(ax[k] for k in SERVING_DEFAULTS))]
    per_mode = {m: serving if m in SERVING_MODES else [(None, None, None)] for m in ax["modes"]}
    betas = [None if b == "sigmoid" else b for b in ax["beta_regime"]]
    budgets = budget_values(ax["sm_budget"], where, path)
    n = math.prod(len(x) for x in (ax["backends"], layouts, heads, ax["K"], ax["V"], ax["dtype"],
                                   ax["gate"], gate_params, ax["seed"], ax["initial_state"], cps, betas, budgets)) \
        * sum(len(v) for v in per_mode.values())
    if limit is not None and n > limit:  # counted before expanding: 10^6 points take seconds and GBs
        raise SpecError(path, where, f"expands to {n} more points, over the limit of {MAX_POINTS} in all (pass "
                        "--max-points N to run sweep to allow more)")
    pts = []
    modes = [(m, st) for m in ax["modes"] for st in per_mode[m]]
    for backend, (mode, (sdt, slay, pf)), (layout, b, lens), (h_qk, h_v, model, tp), K, V, dtype, gate, (zf, gs), \
            seed, h0, (ws, cpm), beta, budget in itertools.product(
                ax["backends"], modes, layouts, heads, ax["K"], ax["V"], ax["dtype"], ax["gate"], gate_params,
                ax["seed"], ax["initial_state"], cps, betas, budgets):
        pts.append(dict(backend=backend, mode=mode, layout=layout, batch=b, seqlens=tuple(lens), h_qk=h_qk, h_v=h_v,
                        K=K, V=V, dtype=dtype, gate=gate, gate_zero_frac=zf, gate_scale=gs, seed=seed,
                        initial_state=h0, model=model, tp=tp, cp_world_size=ws, cp_mode=cpm, state_dtype=sdt,
                        state_layout=slay, pool=None if pf is None else pf * b, beta_regime=beta, sm_budget=budget))
    return pts


# The suite axis that sets a Point field, where their names differ (an invalid combination names its axis).
_FIELD_AXIS = {"backend": "backends", "mode": "modes", "pool": "pool_factor", "h_qk": "heads", "h_v": "heads",
               "cp_world_size": "cp", "cp_mode": "cp", "model": "heads", "tp": "heads"}


def _point(fields: dict, where: str, path: str) -> Point:
    """The point of one combination; a combination no point can be is a SpecError naming the axis."""
    try:
        return Point(**fields)
    except PointError as e:
        field, problem = e.problems[0] if e.problems else ("", str(e))
        if field in ("seqlens", "layout", "batch"):
            axis = "seqlen" if fields["layout"] == "dense" else "varlen"
        else:
            axis = _FIELD_AXIS.get(field, field)
        what = f"{fields['mode']} at {identity.layout_label(fields['layout'], fields['batch'], fields['seqlens'])}"
        raise SpecError(path, f"{where}.{axis}" if axis else where,
                        f"{problem} (the combination {what}); change the axis, or drop the combination with an "
                        "[[exclude]] table") from None
