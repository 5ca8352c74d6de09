"""Check FlashInfer 0.7.4's new backends on a GPU: each one's error against its oracle and its time, one table.

    python3 scripts/flashinfer074_check.py                 # h 2/8 (397B TP8), 1 x 8192, bf16
    python3 scripts/flashinfer074_check.py --seqlens 8x1024 --heads 4/16

Every row is a qlabench point measured by `run_point` (checked against its oracle on a reduced problem, then timed
with the CUDA-graph timer; `flashinfer-train` is timed with events): the error is the largest relative L2 error of
the compared tensors, the time the median. `flashinfer` runs beside them as the call they differ from. A backend
that cannot run says why (a skipped row's reason), as the sweep would. Nothing is written.
"""

from __future__ import annotations

import argparse

BACKENDS = ("flashinfer", "flashinfer-gate", "vllm-flashinfer-prefill", "flashinfer-train")
ERRORS = ("err_o", "err_ht", "err_dq", "err_dk", "err_dv", "err_dg", "err_dbeta")


def _seqlens(text: str) -> tuple[int, ...]:
    n, _, t = text.partition("x")
    return (int(t),) * int(n) if t else tuple(int(s) for s in text.split("+"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", default="2/8", help="h_qk/h_v (default 2/8: Qwen3.5-397B at TP8)")
    ap.add_argument("--seqlens", default="1x8192", help="NxT or a+b+... (default 1x8192)")
    ap.add_argument("--check-tokens", type=int, default=512, help="tokens of the reduced oracle check")
    args = ap.parse_args()

    import torch

    from qlabench.backends import REGISTRY
    from qlabench.core.point import Point
    from qlabench.core.spec import CheckSpec, Suite, TimingSpec
    from qlabench.measure import env
    from qlabench.measure.env import dist_version
    from qlabench.measure.timing import TimerPlan
    from qlabench.run.point import MeasureContext, run_point

    h_qk, h_v = (int(x) for x in args.heads.split("/"))
    seqlens = _seqlens(args.seqlens)
    timing = TimingSpec(timer="graph", warmup=3, min_samples=10, max_samples=200, max_time_s=2.0, target_rel_noise=0.02)
    suite = Suite(name="flashinfer074-check", path="<script>", points=(), timing=timing,
                  check=CheckSpec(oracle_max_tokens=args.check_tokens, full_size=False))
    ctx = MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="flashinfer074-check",
                         timer=TimerPlan.resolve("graph", "cuda", suite.timing), registry=REGISTRY, check=True)
    print(f"{torch.cuda.get_device_name()} (SM{''.join(map(str, torch.cuda.get_device_capability()))}), "
          f"flashinfer-python {dist_version('flashinfer-python')}, torch {torch.__version__}; "
          f"h {h_qk}/{h_v}, {args.seqlens}, bf16, gate flashqla")
    print(f"| backend | mode | status | max rel err | vs | median ms | note |\n|---|---|---|---:|---|---:|---|")
    for name in BACKENDS:
        modes = ("fwd", "fwd_bwd", "bwd_train") if name == "flashinfer-train" else ("fwd",)
        for mode in modes:
            p = Point(backend=name, mode=mode, layout="varlen", batch=1, seqlens=seqlens, h_qk=h_qk, h_v=h_v,
                      dtype="bfloat16", gate="flashqla", initial_state=name != "flashinfer-train")
            row = run_point(p, ctx)
            errs = [getattr(row, e) for e in ERRORS if getattr(row, e) is not None]
            err = f"{max(errs):.2e}" if errs else "-"
            ms = f"{row.median_ms:.3f}" if row.median_ms is not None else "-"
            ref = (row.oracle or "-").split(" @")[0]
            note = (row.reason or "").replace("|", "/")[:160] if row.status != "ok" else ""
            print(f"| {name} | {mode} | {row.status} | {err} | {ref} | {ms} | {note} |", flush=True)


if __name__ == "__main__":
    main()
