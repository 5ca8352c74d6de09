"""`qlabench ab`: measure two variants alternately, A B A B ... for K rounds, in one job on one machine.

This is how `asv continuous` compares two commits, and the trustworthy way to compare across library
versions, compiles and hosts: both sides share the machine, the hour and the drift, so the between-run
noise is measured on the spot and the per-round differences cancel what moves slowly. Every round of
a variant is its own sweep in fresh worker processes (so each compiles afresh); the rows of round r
carry `replicate = r`, and the comparison is paired by round (stats.run_stats, paired=True).

A variant is one of:
  - `current` (or `.`): this Python environment, unchanged;
  - a directory: a Python environment put in front of PYTHONPATH in the workers: a site folder (e.g.
    `pip install --target DIR flash-qla==0.1.2`) or a venv (its site-packages is used), with the folders
    its .pth files name (Python reads those only for site directories);
  - anything else: a git ref of `repo` (default: the current directory), checked out into a temporary
    worktree that is put on PYTHONPATH (its `subdir`, if given), and removed afterwards.
A variant's PYTHONPATH reaches the workers only (they are fresh interpreters); the driver is unchanged.
A variant with a path also gets its own kernel caches (a `variants/<name>` folder under the cache root):
two TileLang or Triton versions must not read each other's compiled kernels. Before round 0 each
variant's compile groups are warmed in parallel (`warmup_jobs`), so round 0 is not one long serial
compile; warm-up is untimed, and every round still runs in fresh worker processes.
A worker's `python -c` puts its working directory first on sys.path, so a variant's workers start in an
empty temporary directory: a checkout of qlabench in the current directory cannot shadow the variant.
A ref of qlabench itself imports qlabench from its own tree only, and records its own commit
(ab_isolation.py); it runs its own worker code, which must speak the driver's protocol.
Temporary folders are named with the pid (`qlabench-ab-<pid>-*`): those of an `ab` killed with -9, and
their git worktrees, are removed by the next git-ref variant.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.analyze.compare.comparison import Comparison, compare_frames
from qlabench.analyze.compare.verdict import DEFAULT_FAIL_ON, CompareOptions
from qlabench.core.errors import ConfigError
from qlabench.core.spec import Suite
from qlabench.run.tempdirs import private_temp_dir
from qlabench.store.files import read_results
from qlabench.workflows.ab_isolation import CWD_PREFIX, TEMP_PREFIX, isolate_tree
from qlabench.run.options import RunOptions

CURRENT = "current"
MAX_ROUNDS = 100  # each round is two sweeps in fresh workers
MAX_WARMUP_JOBS = 256  # compile processes at once


@dataclass(frozen=True)
class Variant:
    label: str
    pythonpath: tuple[str, ...] = ()  # put in front of PYTHONPATH in the workers; () = this environment
    env: tuple[tuple[str, str], ...] = ()  # more variables for its workers (a qlabench ref: isolation, sha)

    @property
    def cache_name(self) -> str | None:
        """Its kernel-cache folder name (None: `current`, which keeps the caches it has)."""
        if not self.pythonpath:
            return None
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(self.label).name or self.label).strip("-")[:40] or "variant"
        return f"{slug}-{hashlib.sha1(os.pathsep.join(self.pythonpath).encode()).hexdigest()[:8]}"


@dataclass
class ABResult:
    comparison: Comparison  # B (head) against A (base), paired by round
    a: Variant
    b: Variant
    rounds: int
    run_paths: list[Path]  # every sweep, in the order run (A0, B0, A1, B1, ...)
    a_path: Path | None = None  # A's rows of every round, one file (run_id "ab-a", replicate = round)
    b_path: Path | None = None
    wall_s: float = 0.0
    warmup: dict[str, tuple] = dataclasses.field(default_factory=dict)  # label: (groups, failed, s, why)


def _site_packages(venv: Path) -> list[str]:
    found = sorted(str(p) for p in venv.glob("lib/python*/site-packages")) + \
        sorted(str(p) for p in venv.glob("Lib/site-packages"))
    if not found:
        raise ConfigError(f"{venv}: a venv (pyvenv.cfg) without lib/python*/site-packages")
    return found


_SITE_DIRS = ("import json, site, sys; before = list(sys.path); site.addsitedir(sys.argv[1]); "
              "print(json.dumps([p for p in sys.path if p not in before]))")


def with_pth_dirs(dirs: list[str]) -> list[str]:
    """`dirs` with the folders their `.pth` files add to sys.path, each after its site folder.

    Python reads a folder's .pth files only for site directories, never for a PYTHONPATH entry, so a site
    folder made with `pip install --target` loses what its packages put there: nvidia-cutlass-dsl (which
    FlashInfer 0.7's kernels import) finds its `cutlass` package only through its .pth, an `import` line
    (4.8: `import sys, os, nvidia_cutlass_dsl; sys.path.insert(...)`). So each folder is made a site
    directory in a throwaway interpreter (`-S`: no other site folder), exactly as Python would for an
    installed environment, and the folders that added are read back (a failing .pth line is skipped, as
    Python skips it there)."""
    out: list[str] = []
    for d in dirs:
        out.append(d)
        r = subprocess.run([sys.executable, "-S", "-c", _SITE_DIRS, d], capture_output=True, text=True)
        if r.returncode != 0:
            tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConfigError(f"{d}: its .pth files fail when read as a site folder: {tail}")
        for extra in json.loads(r.stdout.strip().splitlines()[-1]):
            if extra != d and Path(extra).is_dir() and extra not in out:
                out.append(extra)
    return out


@contextlib.contextmanager
def variant(spec: str, repo: str | os.PathLike = ".", subdir: str = "") -> Iterator[Variant]:
    """Resolve a variant spec (see the module doc); a git ref's worktree lives while the context does."""
    if spec in (CURRENT, "."):
        yield Variant(CURRENT)
        return
    path = Path(spec)
    if path.is_dir():
        path = path.resolve()
        pp = _site_packages(path) if (path / "pyvenv.cfg").exists() else [str(path)]
        yield Variant(spec, tuple(with_pth_dirs(pp)))
        return
    repo = Path(repo)
    check = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        raise ConfigError(f"variant {spec!r} is neither 'current', a directory, nor a git ref of {repo}")
    commit = check.stdout.strip()
    # Named with our pid: the folders (and worktrees) of an `ab` killed with -9 are removed here, and git
    # forgets their worktrees once the folders are gone.
    tmp = Path(private_temp_dir(TEMP_PREFIX))
    subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)
    tree = tmp / "tree"
    try:
        add = subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(tree), commit],
                             capture_output=True, text=True)
        if add.returncode != 0:
            raise ConfigError(f"git worktree add {spec}: {add.stderr.strip()}")
        root = tree / subdir if subdir else tree
        v = Variant(spec, (str(root),))
        if (root / "qlabench" / "__init__.py").is_file():  # a ref of qlabench itself: only its own tree
            v = Variant(spec, *isolate_tree(spec, root, commit, tmp / "isolate"))
        yield v
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)


@contextlib.contextmanager
def worker_pythonpath(v: Variant) -> Iterator[None]:
    """PYTHONPATH and kernel caches for the workers started inside (they inherit os.environ and the working
    directory, an empty one for a variant with a path); all restored afterwards."""
    from qlabench.measure import caches

    keys = ("PYTHONPATH", caches.ENV_VAR, *caches.CACHE_VARS, *(k for k, _ in v.env))
    saved, cwd = {k: os.environ.get(k) for k in keys}, os.getcwd()
    empty = private_temp_dir(CWD_PREFIX) if v.pythonpath else None
    if v.pythonpath:
        os.environ.update(dict(v.env))
        old = saved["PYTHONPATH"]
        os.environ["PYTHONPATH"] = os.pathsep.join([*v.pythonpath, *([old] if old else [])])
        caches.use_cache_dir(caches.cache_root() / "variants" / v.cache_name)
        os.chdir(empty)
    try:
        yield
    finally:
        os.chdir(cwd)
        if empty is not None:
            shutil.rmtree(empty, ignore_errors=True)
        for k, val in saved.items():
            if val is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = val


def warm_variant(suite: Suite, v: Variant, jobs: int, device: str | None) -> tuple[int, int, float, str]:
    """Warm a variant's compile groups in parallel processes with its PYTHONPATH and caches:
    (groups, failed groups, wall seconds, why the first failed group failed: the last line of its output)."""
    from qlabench.run.warmup import warm_suite

    t0 = time.perf_counter()
    with worker_pythonpath(v):
        res = warm_suite(str(Path(suite.path).resolve()), suite.points, jobs, device)
    failed = [r for r in res if r.returncode]
    why = next((ln.strip() for r in failed for ln in reversed(r.log_tail.splitlines()) if ln.strip()), "")
    if failed and not why:
        why = f"exit code {failed[0].returncode}, no output"
    return len(res), len(failed), time.perf_counter() - t0, why


def _stamp(paths: list[Path], label: str) -> pd.DataFrame:
    """One variant's rounds as one run: run_id `ab-<label>`, replicate = round."""
    frames = []
    for r, p in enumerate(paths):
        df = read_results([p])
        frames.append(df.assign(run_id=f"ab-{label}", replicate=r))
    return pd.concat(frames, ignore_index=True)


def run_ab(suite: Suite, a: Variant, b: Variant, out_root: str | os.PathLike, rounds: int = 5,
           options: CompareOptions | None = None, *, fail_on=DEFAULT_FAIL_ON, progress=None,
           warmup_jobs: int = 0, on_warm=None, run: RunOptions | None = None,
           accept_inconclusive: bool = False) -> ABResult:
    """Measure `suite` with A, then B, `rounds` times, each in fresh workers; compare B with A by round.

    run: how each round measures (device, timer, ...; never in-process). With warmup_jobs > 0 both
    variants' kernels are compiled first (`on_warm(label, (groups, failed, s, why))`). accept_inconclusive: points
    too noisy for the threshold pass (exit 0) instead of exiting 3."""
    from qlabench.run.plan import plan_sweep
    from qlabench.run.sweep import run_sweep
    from qlabench.store.files import write_rows
    from qlabench.core.result import ResultRow

    if not 2 <= rounds <= MAX_ROUNDS:
        raise ConfigError(f"--rounds must be between 2 (the run-to-run noise needs two) and {MAX_ROUNDS}, got {rounds}")
    if not 0 <= warmup_jobs <= MAX_WARMUP_JOBS:
        raise ConfigError(f"--jobs must be between 1 and {MAX_WARMUP_JOBS}, got {warmup_jobs}")
    run = run or RunOptions()
    if run.in_process:
        raise ConfigError("an A/B runs every round in fresh worker processes; it cannot run in-process")
    plan = plan_sweep(suite, run, names=False)  # every round runs this plan; the variants' workers know their backends
    t0 = time.perf_counter()
    out_root = Path(out_root).resolve()  # the variants' workers run in another directory
    warmed = {}
    if warmup_jobs > 0:
        for v in (a, b):
            warmed[v.label] = warm_variant(suite, v, warmup_jobs, run.device)
            if on_warm:
                on_warm(v.label, warmed[v.label])
    paths: dict[str, list[Path]] = {"a": [], "b": []}
    order: list[Path] = []
    for r in range(rounds):
        for side, v in (("a", a), ("b", b)):
            with worker_pythonpath(v):
                res = run_sweep(plan, out_root / side, progress=progress)
            if res.path is None:
                raise ConfigError(f"A/B round {r}, variant {v.label!r}: the run measured no points")
            paths[side].append(Path(res.path))
            order.append(Path(res.path))
    fa, fb = _stamp(paths["a"], "a"), _stamp(paths["b"], "b")
    a_path, b_path = out_root / "a.parquet", out_root / "b.parquet"
    for df, p in ((fa, a_path), (fb, b_path)):
        write_rows(p, [ResultRow(**r) for r in _records(df)], metadata={"ab_rounds": str(rounds)})
    c = compare_frames(fa, fb, options, fail_on=fail_on, allow_env_mismatch=True, paired=True,
                       base_label=f"A = {a.label}", head_label=f"B = {b.label}", accept_inconclusive=accept_inconclusive)
    note = (f"A/B: {rounds} rounds A B A B ..., each variant's round in fresh worker processes; "
            "verdicts paired by round")
    c = dataclasses.replace(c, notes=c.notes + (note,))
    return ABResult(c, a, b, rounds, order, a_path, b_path, time.perf_counter() - t0, warmed)


def _records(df: pd.DataFrame) -> list[dict]:
    import pyarrow as pa

    from qlabench.store.schema import COLUMNS, arrow_schema

    return pa.Table.from_pandas(df[list(COLUMNS)], schema=arrow_schema(), preserve_index=False).to_pylist()


def warmup_line(label: str, warmed: tuple) -> str:
    """What a variant's warm-up did, for the log: a failed group says why (its process's last line); the rounds
    measure every point anyway, compiling what warm-up did not."""
    groups, failed, wall, why = warmed
    line = f"warm-up {label}: {groups} compile groups in {wall:.0f} s"
    if failed:
        line += (f", {failed} did not warm up ({why}); untimed: the rounds still measure every point, compiling what "
                 "warm-up did not")
    return line


def dirty_tree_note(spec: str, repo: str | os.PathLike = ".") -> str | None:
    """A git-ref variant measures the ref's commit, never the uncommitted changes of the working tree: said when the
    tree has some (`ab HEAD current` is how to measure them against HEAD)."""
    if spec in (CURRENT, ".") or Path(spec).is_dir():
        return None
    r = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                       text=True)
    if r.returncode != 0 or not r.stdout.strip():
        return None
    n = len(r.stdout.strip().splitlines())
    return (f"variant {spec!r} is the commit {spec} names: the {n} uncommitted change(s) of {repo} are not measured "
            "in it (`current` measures the working tree as it is)")
