"""How far apart repeated eager timings of one training step land, apart from qlabench and inside it, interleaved.

`scripts/eager_gap_probe.py` reads each method once per stage; where a call's eager time is host-bound, one
reading per method is not enough to say whether two methods disagree or the call itself moves. Here, in one
process, for each library and case: first the host synchronisations of one step (torch's sync debug mode counts
the calls that block the launching thread on the device), then ROUNDS rounds, each timing the step with the
standalone probe's loop (`autograd_step_probe.eager_ms`, 20 steps a burst) and with qlabench's `measure_launch`,
one after the other. It prints per method the 10th/50th/90th percentile over rounds and a Mann-Whitney U test of
the two methods' rounds: p well above 0.01 means the methods read the same distribution.

    python3 scripts/eager_spread_probe.py --heads 2/8 --seqlens 32768,8192 --rounds 25 [--out FILE.csv]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("FLA_FLASH_QLA", "0")

from qlabench.measure import caches  # noqa: E402

caches.configure()  # the kernels a sweep compiled in this cache are the ones loaded here

import numpy as np  # noqa: E402
import torch  # noqa: E402
from scipy.stats import mannwhitneyu  # noqa: E402

import autograd_step_probe as probe  # noqa: E402

from qlabench.measure.timing.launch import measure_launch  # noqa: E402


def host_syncs(fn) -> int:
    """How many operations of one call block the host on the device (torch's sync debug mode, 'warn')."""
    fn()
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    return sum("synchroniz" in str(w.message) for w in caught)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", default="2/8")
    ap.add_argument("--seqlens", default="32768,8192")
    ap.add_argument("--libs", default="flash_qla,fla")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    h_qk, h_v = (int(x) for x in a.heads.split("/"))
    rows, summary = [], []
    for case in a.seqlens.split(","):
        inputs = probe.make_inputs(h_qk, h_v, probe.parse_case(case))
        for lib in a.libs.split(","):
            fn = probe.step_fn(lib, inputs)
            syncs = host_syncs(fn)
            standalone, launch = [], []
            for r in range(a.rounds):
                s, _ = probe.eager_ms(fn, bursts=3)
                q = measure_launch(fn)
                standalone.append(s)
                launch.append(q.eager_ms)
                rows.append({"heads": a.heads, "case": case, "library": lib, "round": r, "standalone_ms": round(s, 4),
                             "qlabench_launch_ms": round(q.eager_ms, 4), "qlabench_host_ms": round(q.host_ms, 4),
                             "host_syncs_per_step": syncs, "gpu": torch.cuda.get_device_name(0)})
            p = mannwhitneyu(standalone, launch).pvalue
            pct = {name: np.percentile(v, [10, 50, 90]) for name, v in (("standalone", standalone), ("qlabench", launch))}
            summary.append(f"{case:>6} {lib:<9} syncs/step {syncs:>2}  standalone p10/50/90 "
                           f"{'/'.join(f'{x:.3f}' for x in pct['standalone'])}  qlabench "
                           f"{'/'.join(f'{x:.3f}' for x in pct['qlabench'])}  Mann-Whitney p {p:.3g}")
            print(summary[-1], flush=True)
    probe.write_rows(rows, a.out)
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
