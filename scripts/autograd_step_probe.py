"""A training step timed apart from qlabench: the check that qlabench's `fwd_bwd` eager time is what a step costs.

One forward and backward (or, with --mode fwd, the forward alone) through each library's own autograd (`flash_qla.chunk_gated_delta_rule` with its
auto CP, FLA's `chunk_gated_delta_rule` with its dispatch to FlashQLA off), on inputs made here as FlashQLA's
benchmark makes them (bf16 q/k/v, fp32 g = logsigmoid(randn)/16 with a quarter of the value heads at g = 0,
beta = sigmoid(randn), an fp32 initial state, every layout packed as batch 1 with int32 cu_seqlens), launched
eagerly and back to back as a training loop launches it: CUDA events around bursts of steps, the median over
bursts, per step. None of qlabench's code runs here.

    python3 scripts/autograd_step_probe.py --heads 2/8 --seqlens 32768,8x1024 [--out FILE.csv]

Compare with `qlabench show RESULTS --mode fwd_bwd` (the eager column) on the same host. The libraries compile into
their own default caches here; after a `qlabench warmup`, point them at qlabench's to compile nothing again:

    TILELANG_CACHE_DIR=~/.cache/qlabench/tilelang TRITON_CACHE_DIR=~/.cache/qlabench/triton FLA_CACHE_RESULTS=1 \
        python3 scripts/autograd_step_probe.py ...
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys

os.environ.setdefault("FLA_FLASH_QLA", "0")  # FLA's own Triton kernels, not its dispatch to FlashQLA


import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def parse_case(text: str) -> list[int]:
    if "x" in text:
        n, t = text.split("x")
        return [int(t)] * int(n)
    return [int(text)]


def make_inputs(h_qk: int, h_v: int, seqlens: list[int], d: int = 128, seed: int = 0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    T = sum(seqlens)
    q = torch.randn(1, T, h_qk, d, device="cuda", generator=g, dtype=torch.bfloat16)
    k = F.normalize(torch.randn(1, T, h_qk, d, device="cuda", generator=g), dim=-1).to(torch.bfloat16)
    v = torch.randn(1, T, h_v, d, device="cuda", generator=g, dtype=torch.bfloat16)
    gate = F.logsigmoid(torch.randn(1, T, h_v, device="cuda", generator=g)) / 16
    zero = h_v - -(-3 * h_v // 4)  # h_v - ceil(0.75 h_v) heads without decay
    if zero:
        gate[..., :zero] = 0
    beta = torch.sigmoid(torch.randn(1, T, h_v, device="cuda", generator=g))
    h0 = torch.randn(len(seqlens), h_v, d, d, device="cuda", generator=g) * 0.1
    cu = torch.tensor([0] + list(torch.tensor(seqlens).cumsum(0).tolist()), device="cuda", dtype=torch.int32)
    do = torch.randn_like(v)
    dht = torch.randn_like(h0)
    return q, k, v, gate, beta, h0, cu, do, dht


def step_fn(lib: str, inputs):
    q, k, v, gate, beta, h0, cu, do, dht = inputs
    leaves = [t.detach().requires_grad_(True) for t in (q, k, v, gate, beta, h0)]
    scale = q.shape[-1] ** -0.5
    if lib == "flash_qla":
        import flash_qla

        def fwd():
            return flash_qla.chunk_gated_delta_rule(*leaves[:5], scale=scale, initial_state=leaves[5],
                                                    output_final_state=True, cu_seqlens=cu)
    else:
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule

        def fwd():
            return chunk_gated_delta_rule(*leaves[:5], scale=scale, initial_state=leaves[5], output_final_state=True,
                                          cu_seqlens=cu)

    def step():
        o, ht = fwd()
        return torch.autograd.grad((o, ht), leaves, (do, dht))

    def forward_only():
        with torch.no_grad():
            return fwd()

    return forward_only if FORWARD_ONLY else step


FORWARD_ONLY = False  # --mode fwd: the forward alone, under no_grad (an engine's prefill)


def eager_ms(step, calls: int = 20, bursts: int = 15, primed: bool = False) -> tuple[float, float]:
    """(median ms per step over bursts of `calls` steps launched back to back, relative IQR); `primed`: one step
    launched before each burst's start event, so the burst does not start on an idle device."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    per = []
    for _ in range(bursts):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        if primed:
            step()
        a.record()
        for _ in range(calls):
            step()
        b.record()
        torch.cuda.synchronize()
        per.append(a.elapsed_time(b) / calls)
    q = statistics.quantiles(per, n=4)
    med = statistics.median(per)
    return med, (q[2] - q[0]) / med


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", default="2/8")
    ap.add_argument("--seqlens", default="32768,8x1024")
    ap.add_argument("--libs", default="flash_qla,fla")
    ap.add_argument("--mode", choices=("fwd_bwd", "fwd"), default="fwd_bwd")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    global FORWARD_ONLY
    FORWARD_ONLY = a.mode == "fwd"
    h_qk, h_v = (int(x) for x in a.heads.split("/"))
    rows = []
    for case in a.seqlens.split(","):
        inputs = make_inputs(h_qk, h_v, parse_case(case))
        for lib in a.libs.split(","):
            ms, noise = eager_ms(step_fn(lib, inputs))
            rows.append({"heads": a.heads, "case": case, "library": lib, "mode": a.mode, "eager_ms": round(ms, 4),
                         "rel_iqr": round(noise, 4), "gpu": torch.cuda.get_device_name(0)})
    write_rows(rows, a.out)
    return 0


def write_rows(rows: list[dict], out: str | None) -> None:
    """The rows as CSV on stdout, and into `out` when given."""
    targets = [sys.stdout] + ([open(out, "w", newline="")] if out else [])
    for f in targets:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
        if f is not sys.stdout:
            f.close()


if __name__ == "__main__":
    sys.exit(main())
