"""Starting the W ranks of one distributed launch on this machine, with nothing listening beyond loopback.

`python -m qlabench.run.distributed.spawn --nproc W --store FILE -- ARGS...` starts W processes of
`python -m qlabench.run.distributed.worker ARGS...` with RANK, LOCAL_RANK, WORLD_SIZE set, as torchrun
would, but without torchrun's rendezvous: torchrun's agent opens a TCPStore that listens on every
interface (`*:PORT`, unauthenticated) whatever `--rdzv-endpoint`/`--master-addr` say. Here the ranks
meet through a `FileStore` (QLABENCH_DIST_INIT=file://FILE, in the launch's private temp folder), and
gloo and NCCL are told to use the loopback interface (GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME = lo),
so their sockets bind to 127.0.0.1. A distributed launch never spans machines (docs/ROBUSTNESS.md).

Like torchrun, when one rank fails the others are killed and the launch exits with code 1 after a
line `rank R exited with code C` (the launcher quotes it); every rank dies with this process
(PR_SET_PDEATHSIG), and this process dies with the sweep.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import subprocess
import sys
import time

from qlabench.run.reaper import die_with_parent

WORKER_MODULE = "qlabench.run.distributed.worker"
INIT_ENV = "QLABENCH_DIST_INIT"  # read by rank.py: the init_method of init_process_group
LOOPBACK_ENV = {"MASTER_ADDR": "127.0.0.1", "GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo"}


def spawn_command(world_size: int, store_path: str, worker_args: list[str]) -> list[str]:
    return [sys.executable, "-m", "qlabench.run.distributed.spawn", "--nproc", str(world_size),
            "--store", store_path, "--", *worker_args]


def rank_env(base: dict, rank: int, world_size: int, store_path: str) -> dict:
    return {**base, **LOOPBACK_ENV, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world_size),
            "LOCAL_WORLD_SIZE": str(world_size), "GROUP_RANK": "0", INIT_ENV: f"file://{store_path}"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qlabench.run.distributed.spawn")
    ap.add_argument("--nproc", type=int, required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("worker_args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    rest = args.worker_args[1:] if args.worker_args[:1] == ["--"] else args.worker_args
    die_with_parent()
    procs = [subprocess.Popen([sys.executable, "-m", WORKER_MODULE, *rest],
                              preexec_fn=functools.partial(die_with_parent, os.getpid()),
                              env=rank_env(dict(os.environ), r, args.nproc, args.store)) for r in range(args.nproc)]

    def stop(*_):
        for p in procs:
            if p.poll() is None:
                p.kill()
        sys.exit(1)

    signal.signal(signal.SIGTERM, stop)
    while True:
        codes = [p.poll() for p in procs]
        failed = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
        if failed:
            r, c = failed[0]
            print(f"rank {r} exited with code {c}", file=sys.stderr, flush=True)
            stop()
        if all(c == 0 for c in codes):
            return 0
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
