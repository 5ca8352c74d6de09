"""Where an eager time measured inside qlabench parts from the same call launched apart: one process, stage by stage.

`scripts/autograd_step_probe.py` times a call launched from a small process of its own; qlabench's `eager_ms`
(measure/timing/launch.py) times it inside a sweep's worker, after the point's checks, its kernel trace (Kineto)
and its CUDA-graph sampling. When the two disagree, this script finds the step that adds the host time. In one
process, for each call (FlashQLA and FLA, forward or with --mode fwd_bwd a training step, each case), it measures
the call's eager time three ways -- the standalone probe's loop (20 calls a burst), the same loop primed (one call
launched before each burst's start event), and qlabench's `measure_launch` -- at each stage:

  fresh          nothing else has run in the process
  graph          after the call was captured and replayed in a CUDA graph (qlabench's graph timer)
  kineto         after the call was traced once with torch.profiler (qlabench's kernel capture)
  sweep          after an in-process `run_sweep` of the same points (every step a row takes), whose rows'
                 own eager_ms are printed beside

A stage that moves both columns is the process state; a row above its own process's stage is run_point's.

    python3 scripts/eager_gap_probe.py --heads 4/12 --seqlens 32768,4x8192,8x1024 [--mode fwd_bwd] [--out FILE.csv]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("FLA_FLASH_QLA", "0")

from qlabench.measure import caches  # noqa: E402

caches.configure()  # the kernels a sweep compiled in this cache are the ones loaded here (no second JIT)

import autograd_step_probe as probe  # noqa: E402

from qlabench.measure.timing.launch import measure_launch  # noqa: E402

LIB_BACKEND = {"flash_qla": "flash_qla", "fla": "fla"}


def measure(stage: str, calls: dict, rows: list) -> None:
    for (case, lib), fn in calls.items():
        standalone, noise = probe.eager_ms(fn)
        primed, _ = probe.eager_ms(fn, primed=True)
        q = measure_launch(fn)
        rows.append({"stage": stage, "case": case, "library": lib, "standalone_ms": round(standalone, 4),
                     "standalone_rel_iqr": round(noise, 4), "standalone_primed_ms": round(primed, 4),
                     "qlabench_launch_ms": round(q.eager_ms, 4),
                     "qlabench_host_ms": round(q.host_ms, 4), "calls_per_burst": q.calls, "row_eager_ms": None})
        print(rows[-1], flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", default="2/8")
    ap.add_argument("--seqlens", default="32768,4x8192,8x1024")
    ap.add_argument("--libs", default="flash_qla,fla")
    ap.add_argument("--mode", choices=("fwd", "fwd_bwd"), default="fwd")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    probe.FORWARD_ONLY = a.mode == "fwd"
    h_qk, h_v = (int(x) for x in a.heads.split("/"))
    cases, libs = a.seqlens.split(","), a.libs.split(",")
    calls = {}
    for case in cases:
        inputs = probe.make_inputs(h_qk, h_v, probe.parse_case(case))
        for lib in libs:
            calls[(case, lib)] = probe.step_fn(lib, inputs)
    rows: list[dict] = []
    measure("fresh", calls, rows)

    from qlabench.measure.timing.cuda import GraphTimer
    from qlabench.measure.timing.stopping import StopRule

    for fn in calls.values():
        GraphTimer(StopRule(min_samples=10, max_samples=30, min_time_s=0.0, max_time_s=0.3,
                            target_rel_noise=0.005), l2_flush=True).measure(fn)
    measure("graph", calls, rows)

    from qlabench.measure.probes.kineto import capture_call

    for fn in calls.values():
        capture_call(fn)
    measure("kineto", calls, rows)

    from qlabench.core.spec import parse_suite
    from qlabench.run.options import InProcess, RunOptions
    from qlabench.run.sweep import run_sweep

    suite = parse_suite({
        "name": "eager-gap", "device": "cuda",
        "sweep": {"backends": [LIB_BACKEND[x] for x in libs], "modes": [a.mode],
                  "varlen": [probe.parse_case(c) for c in cases], "heads": [{"h_qk": h_qk, "h_v": h_v}],
                  "K": 128, "V": 128, "dtype": "bfloat16", "gate": "flashqla", "initial_state": True},
        "timing": {"timer": "graph", "l2_flush": True, "regime": "sustained", "sustained_ms": 200,
                   "max_time_s": 0.5, "target_rel_noise": 0.005},
    })
    with tempfile.TemporaryDirectory() as d:
        result = run_sweep(suite, d, RunOptions(executor=InProcess()))
    by_key = {}
    for r in (row.as_dict() for row in result.rows):
        case = "x".join(map(str, (len(r["seqlens"]), r["seqlens"][0]))) if len(r["seqlens"]) > 1 else str(r["seqlens"][0])
        by_key[(case, r["backend"])] = r
    measure("sweep", calls, rows)
    for row in rows[-len(calls):]:
        r = by_key.get((row["case"], LIB_BACKEND[row["library"]]))
        if r is not None:
            row["row_eager_ms"] = round(r["eager_ms"], 4) if r.get("eager_ms") else f"{r['status']}: {r.get('reason')}"
    probe.write_rows(rows, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
