"""What one of this repository's scripts prints, as a docs block: a page that shows a script's table shows what
the script prints today on the committed files, not what it printed once.

    <!-- qlabench:block script name=published_compare.py args=results/h200/RUN.parquet,--mode,fwd -->

`name`: a Python script of the checkout's `scripts/` folder; `args`: its arguments, separated by commas (a
marker's values hold no spaces). It runs with this interpreter, from the checkout's root, with qlabench importable
and no GPU asked of it (CUDA_VISIBLE_DEVICES is emptied): a script that needs one is not for a block. Its standard
output, stripped of trailing blank lines, is the body; a script that fails, or prints nothing, is an error that
names it with the end of what it wrote to standard error.
"""

from __future__ import annotations

import os
import subprocess
import sys

from qlabench.core.errors import ConfigError
from qlabench_publish.blocks.context import BlockContext

TIMEOUT_S = 300  # a block's script reads committed files; one that runs longer is measuring, not reporting


def script_block(ctx: BlockContext, name: str, args: str = "") -> str:
    """The standard output of `scripts/<name>` run with `args` (comma-separated) from the checkout's root."""
    root = ctx.catalog.root.parent.resolve()
    folder = root / "scripts"
    path = (folder / name).resolve()
    if path.parent != folder or path.suffix != ".py":
        raise ConfigError(f"script: name must be a Python file of {folder}, got {name!r}")
    if not path.is_file():
        raise ConfigError(f"script: {path} does not exist")
    argv = [a for a in args.split(",") if a] if args else []
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)}
    try:
        done = subprocess.run([sys.executable, str(path), *argv], cwd=root, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"script: scripts/{name} ran past {TIMEOUT_S} s") from None
    tail = done.stderr.strip().splitlines()[-3:]
    if done.returncode != 0:
        raise ConfigError(f"script: scripts/{name} {' '.join(argv)} exited with {done.returncode}: "
                          + (" / ".join(tail) or "no output on standard error"))
    out = done.stdout.rstrip()
    if not out:
        raise ConfigError(f"script: scripts/{name} {' '.join(argv)} printed nothing")
    return out


__all__ = ["script_block"]
