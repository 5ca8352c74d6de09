"""One rank of a distributed (context-parallel) sweep: `torchrun ... -m qlabench.run.distributed.worker`.

Started by launch.py with a job file (the suite, the run and the points, pickled), an events file that
rank 0 appends JSON lines to ({"event": "ready" | "start" | "row", ...}) and a stop file whose
existence tells the ranks to start no further point. Every rank runs every point (point.py: inputs and
the rank's slice, the CP context, the first call, correctness on rank 0, timing). Any exception on any
rank is agreed on at the next checkpoint, so all ranks record the same `error` row and then stop (the
launcher starts fresh processes for the rest). A rank that hangs in a collective is the launcher's to
kill (its time limits).

Nothing here imports torch at module level: the NVLink-multicast switches (safety.py) must be in the
environment before torch and NCCL are loaded, so the rest of the worker is imported in `main`.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys

from qlabench.run.distributed.safety import apply_to_this_process


def emit(path: str, event: str, **payload) -> None:
    """Append one event line for the launcher, on disk before the next line is written."""
    with open(path, "a") as f:
        f.write(json.dumps({"event": event, **payload}) + "\n")
        f.flush()
        os.fsync(f.fileno())


def main(argv: list[str] | None = None) -> int:
    apply_to_this_process()  # before torch (and NCCL) are imported
    ap = argparse.ArgumentParser(prog="qlabench.run.distributed.worker")
    ap.add_argument("--job", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--stop", required=True)
    args = ap.parse_args(argv)
    from qlabench.run.reaper import die_with_parent

    die_with_parent(os.getppid())  # die with the spawner, whatever kills it
    import faulthandler

    faulthandler.enable()
    with open(args.job, "rb") as f:
        job = pickle.load(f)

    from qlabench.measure import caches as cache

    cache.configure()  # before any backend imports its library
    from qlabench.core.point import Point
    from qlabench.measure import env as envmod
    from qlabench.run.distributed.point import run_cp_point
    from qlabench.run.distributed.rank import Rank

    rk = Rank(job.job, job.device_type)
    rk.env = envmod.capture(rk.device) if rk.rank == 0 else {}
    if rk.rank == 0:
        emit(args.events, "ready", env=rk.env)
    for i, pd in enumerate(job.points):
        stop = rk.from_rank0(os.path.exists(args.stop) if rk.rank == 0 else None)
        if stop:
            break
        p = Point(**pd)
        if rk.rank == 0:
            emit(args.events, "start", index=i)
        row = run_cp_point(p, rk)
        if rk.rank == 0:
            emit(args.events, "row", index=i, row=row)
        sys.stdout.flush()
        status = rk.from_rank0(row["status"] if rk.rank == 0 else None)
        if status == "error":  # a CUDA error may have poisoned this process: the launcher starts fresh ones
            break
    rk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
