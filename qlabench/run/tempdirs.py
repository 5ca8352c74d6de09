"""Private temp folders of a sweep (worker logs, distributed launches), named after the sweep's pid so
that those of a sweep killed with -9, which cannot clean up after itself, are removed by the next one."""

from __future__ import annotations

import os
import shutil
import tempfile


def private_temp_dir(prefix: str) -> str:
    """A fresh temp folder `<prefix><pid>-XXXX`, after removing those of earlier sweeps that died without
    cleaning up (kill -9): a folder whose pid is no longer running is stale."""
    root = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(prefix)] if os.path.isdir("/proc/self") else []
    except OSError:
        names = []
    for n in names:
        pid = n[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(os.path.join(root, n), ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")
