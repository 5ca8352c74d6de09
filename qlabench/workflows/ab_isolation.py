"""A git ref of qlabench itself as an A/B variant: its workers import qlabench from its own tree only.

Putting the ref's checkout first on PYTHONPATH is not enough. An editable install of the current
qlabench (`pip install -e .`) puts a finder on `sys.meta_path` that answers for `qlabench.<child>`
whatever the path says, so a module the old checkout lacks was filled in from today's checkout, and
the rows then carried today's git sha. So the variant's PYTHONPATH starts with a folder holding a
`sitecustomize.py` (run by `site` after every `.pth` file): it drops every meta-path finder that would
find `qlabench` outside the variant's tree, then runs the next `sitecustomize` on the path (the tree's
or the environment's) as if it were first. Path entries need no filter: PYTHONPATH comes before
site-packages and any `.pth` entry, so `qlabench` is found in the tree first, and its submodules come
from its own `__path__` (dropping site-packages for holding an installed qlabench would drop torch).
The workers get the ref's commit as $QLABENCH_GIT_SHA (measure/env.py records it when the checkout
itself cannot say), and before any round the variant must import `qlabench.run.pool`, the workers'
entry point, from its own tree, else a ConfigError says why.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from qlabench.core.errors import ConfigError

TEMP_PREFIX = "qlabench-ab-"  # + pid: the folder of a git-ref variant (its worktree, the isolation shim)
CWD_PREFIX = "qlabench-abcwd-"  # + pid: the empty working directory of a variant's workers
ROOT_VAR = "QLABENCH_VARIANT_ROOT"
SHA_VAR = "QLABENCH_GIT_SHA"

_SITECUSTOMIZE = '''"""Written by `qlabench ab`: this interpreter imports qlabench only from $QLABENCH_VARIANT_ROOT."""
import importlib.machinery
import importlib.util
import os
import sys


def _inside(path, root):
    return os.path.realpath(path).startswith(root + os.sep)


def _isolate():
    root = os.path.realpath(os.environ["QLABENCH_VARIANT_ROOT"])
    here = os.path.dirname(os.path.abspath(__file__))
    for finder in list(sys.meta_path):  # e.g. setuptools' editable finder of the current checkout
        find = getattr(finder, "find_spec", None)
        if finder is importlib.machinery.PathFinder or find is None:
            continue
        try:
            spec = find("qlabench", None)
        except Exception:
            continue
        if spec is not None and not (spec.origin and _inside(spec.origin, root)):
            sys.meta_path.remove(finder)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != here]
    nxt = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if nxt is not None and nxt.loader is not None:  # the next one runs as it would have without us
        nxt.loader.exec_module(importlib.util.module_from_spec(nxt))


_isolate()
'''

_PROBE = "import qlabench, qlabench.run.pool; print(qlabench.__file__)"


def isolate_tree(spec: str, root: Path, commit: str, shim: Path) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(PYTHONPATH entries, environment) for a variant whose qlabench is the checkout at `root`;
    ConfigError when qlabench does not import from that tree alone."""
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    pythonpath = (str(shim), str(root))
    env = ((ROOT_VAR, str(root.resolve())), (SHA_VAR, commit))
    probe_env = {**os.environ, **dict(env), "PYTHONPATH": os.pathsep.join(pythonpath)}
    try:
        probe = subprocess.run([sys.executable, "-c", _PROBE], cwd=shim, env=probe_env, capture_output=True,
                               text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"variant {spec!r}: importing qlabench from {root} did not finish in 300 s") from None
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ConfigError(f"variant {spec!r} ({commit[:12]}): qlabench does not import from its own tree: {last}")
    found = Path(probe.stdout.strip().splitlines()[-1]).resolve()
    if root.resolve() not in found.parents:
        raise ConfigError(f"variant {spec!r} ({commit[:12]}): qlabench came from {found}, not from its tree {root}")
    return pythonpath, env
