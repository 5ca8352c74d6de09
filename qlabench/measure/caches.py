"""Where compiled kernels are cached: TileLang, Triton, Inductor, FlashInfer and the CuTe DSL all pointed at one
qlabench folder.

FlashQLA's TileLang JIT costs 30-100 s per new head configuration and FLA's Triton compile+autotune
30-40 s; pointing every library at one persistent folder lets a second sweep (a new process) reuse them.
Must run before the libraries are imported, since some read their cache location at import. qlabench's own
per-point autotune choices live beside them, in <root>/autotune (measure/tuning_store.py).
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "qlabench"
ENV_VAR = "QLABENCH_CACHE_DIR"  # set by `--cache-dir`; read here so worker processes inherit it

_VARS = {
    "TILELANG_CACHE_DIR": "tilelang",
    "TRITON_CACHE_DIR": "triton",
    "TORCHINDUCTOR_CACHE_DIR": "inductor",
    "FLASHINFER_WORKSPACE_BASE": "flashinfer",  # its JIT modules land in <this>/.cache/flashinfer/<version>/<arch>
    # FlashInfer 0.7's CuTe DSL kernels (nvidia-cutlass-dsl): left alone they go to $TMPDIR/<user>/cutlass_python_cache,
    # outside the folder a user carries to another host or empties for a cold start
    "CUTE_DSL_CACHE_DIR": "cute-dsl",
}


CACHE_VARS = tuple(_VARS)


def cache_root() -> Path:
    """The cache root this process uses: $QLABENCH_CACHE_DIR, else the default."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_CACHE_DIR)


def configure(cache_dir: str | os.PathLike | None = None, override: bool = False) -> dict[str, str]:
    """Point the libraries' caches under `cache_dir` ($QLABENCH_CACHE_DIR, else ~/.cache/qlabench).

    With override=False a cache variable the user already set is left alone.
    """
    root = Path(cache_dir) if cache_dir else cache_root()
    chosen = {}
    for var, sub in _VARS.items():
        if override or var not in os.environ:
            path = root / sub
            path.mkdir(parents=True, exist_ok=True)
            os.environ[var] = str(path)
        chosen[var] = os.environ[var]
    # FLA persists its autotune results in Triton's cache when asked.
    os.environ.setdefault("FLA_CACHE_RESULTS", "1")
    return chosen


def check_cache_folder(cache_dir: str | os.PathLike | None = None, override: bool = False) -> Path:
    """The cache root, made and known writable; a ConfigError (one line) if it cannot be.

    A sweep calls it before any worker starts: every worker writes its compiled kernels there, so an
    unusable folder (a read-only HOME, a file in the way) would otherwise make every row an error.
    Only the folders qlabench chooses are checked (with override=False a library variable the user set is
    theirs, as in `configure`)."""
    import tempfile

    from qlabench.core.errors import ConfigError

    root = Path(cache_dir).expanduser() if cache_dir else cache_root()
    for var, sub in _VARS.items():
        if not override and var in os.environ and os.environ[var] != str(root / sub):
            continue
        path = root / sub
        try:
            path.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=path).close()
        except OSError as e:
            raise ConfigError(f"kernel cache folder {path}: {e.strerror or e}; point --cache-dir or ${ENV_VAR} "
                             "at a writable folder") from None
    return root


def use_cache_dir(cache_dir: str | os.PathLike | None) -> None:
    """Make `cache_dir` this process's and its workers' cache root (they inherit the environment);
    CacheError if it cannot hold the caches."""
    if cache_dir:
        root = Path(os.path.abspath(Path(cache_dir).expanduser()))  # no resolve(): a symlink loop is a clear error below
        check_cache_folder(root, override=True)
        os.environ[ENV_VAR] = str(root)
        configure(override=True)
