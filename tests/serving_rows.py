"""Synthetic serving rows (modes decode and mtp) for the serving page's tests, with the serving columns of
core/result.py (state_dtype, state_layout, pool, bytes_*, hbm_peak_*, hbm_frac).

Scenarios, qwen3.5-397b TP8 (h2/8), K = V = 128, peaks 4.0 TB/s read and write:
- decode, fp32 state, batch 1..256: fla-recurrent [kv] 0.010 + 0.001 B ms, flashinfer-decode-pt [vk]
  0.020 + 0.0006 B ms (they cross at B = 25: FLA wins 1-16, FlashInfer 64-256); fla-recurrent [vk] skipped
  everywhere; batch-1 rows say their states stayed in L2; an older, slower fla-recurrent [kv] batch-1 row.
- mtp T=2, fp32 state, batch 1 and 64: flashinfer-mtp [vk] wins at 1; at 64 it is incorrect above the limit
  (hbm_frac 1.3), so fla-recurrent [kv] wins there. At batch 1 a bf16-state fla row (its own group).
- one prefill row (mode fwd), which the page ignores.
"""

from __future__ import annotations

import json

import pandas as pd

from qlabench.core.result import ResultRow

HV, K, V = 8, 128, 128
PEAK = 4.0


def state_bytes(batch: int, T: int, state_dtype: str) -> tuple[int, int]:
    """(read, written) at the minimum: the batch's states once each way, plus q, k, v in and o out (bf16)."""
    s = batch * HV * K * V * (4 if state_dtype == "float32" else 2)
    qkv = batch * T * (2 * 2 * K + HV * V) * 2
    return s + qkv, s + batch * T * HV * V * 2


def serving_row(backend: str, layout: str | None, batch: int, ms: float | None, *, T: int = 1,
                state_dtype: str = "float32", status: str = "ok", reason: str | None = None, frac=None,
                l2=None, timestamp: str = "2026-01-02T00:00:00+00:00", device: str = "NVIDIA H200",
                rel_noise: float = 0.004, **changes) -> dict:
    base = dict(run_id="run-s", suite="serving", timestamp=timestamp, host="h", device=device, backend=backend,
                mode="decode" if T == 1 else "mtp", model="qwen3.5-397b", tp=8, layout="dense", batch=batch,
                seqlens=(T,) * batch, num_seqs=batch, total_tokens=T * batch, h_qk=2, h_v=HV, K=K, V=V,
                dtype="bfloat16", gate="fla", seed=0, initial_state=True, status=status, reason=reason,
                timer="graph", samples_ms=(ms,) if ms else (), n_samples=1 if ms else None, median_ms=ms,
                rel_noise=rel_noise if ms else None,
                extra_json=json.dumps({"l2_resident": l2}) if l2 is not None else None)
    if status == "ok":  # an ok row records the check it passed (the evidence layer believes no unchecked row)
        base.update(oracle=f"naive-recurrent float32 @{T * batch} tokens", check_tokens=T * batch, err_o=0.002)
    row = ResultRow(**{k: v for k, v in base.items() if k in ResultRow.__dataclass_fields__}).as_dict()
    read, written = state_bytes(batch, T, state_dtype)
    if frac is None and ms:
        frac = (read / (PEAK * 1e12) + written / (PEAK * 1e12)) / (ms * 1e-3)
    row.update(state_dtype=state_dtype, state_layout=layout, pool=2 * batch, beta_regime=None, bytes_read=read,
               bytes_written=written, bytes_moved=read + written, hbm_peak_read_tbs=PEAK, hbm_peak_write_tbs=PEAK,
               hbm_frac=frac)
    row.update(changes)
    return row


def fla_ms(b: int) -> float:
    return 0.010 + 0.001 * b


def fi_ms(b: int) -> float:
    return 0.020 + 0.0006 * b


DECODE_BATCHES = (1, 4, 16, 64, 256)


def rows() -> pd.DataFrame:
    out = []
    for b in DECODE_BATCHES:
        l2 = True if b == 1 else False
        out.append(serving_row("fla-recurrent", "kv", b, fla_ms(b), l2=l2))
        out.append(serving_row("flashinfer-decode-pt", "vk", b, fi_ms(b), l2=l2))
        out.append(serving_row("fla-recurrent", "vk", b, None, status="skipped",
                               reason="fla-recurrent keeps states as [HV, K, V]; pool layout vk unsupported"))
    out.append(serving_row("fla-recurrent", "kv", 1, 0.5, timestamp="2025-12-01T00:00:00+00:00"))
    out.append(serving_row("flashinfer-mtp", "vk", 1, 0.015, T=2))
    out.append(serving_row("fla-recurrent", "kv", 1, 0.020, T=2))
    out.append(serving_row("flashinfer-mtp", "vk", 64, 0.010, T=2, status="incorrect", frac=1.3,
                           reason="hbm_frac 1.30 > 1: faster than the measured HBM peaks allow"))
    out.append(serving_row("fla-recurrent", "kv", 64, 0.090, T=2))
    out.append(serving_row("fla-recurrent", "kv", 1, 0.011, T=2, state_dtype="bfloat16"))
    prefill = serving_row("fla", None, 1, 1.0, state_dtype=None, mode="fwd", seqlens=(4096,), total_tokens=4096)
    prefill.update(state_dtype=None, pool=None, hbm_frac=None, bytes_moved=None)
    out.append(prefill)
    return pd.DataFrame(out)


AGAINST_GROUP = "qwen3.5-397b TP8 (h2/8) · T=1 · state float32"
AGAINST_BASE = "flashinfer-decode-pt"


def against_dicts() -> list[dict]:
    """Rows of one baseline and the engines' variants for the against-the-baseline table and its docs block: the
    engine's kernel at 1.5x at batch 1 (in L2), 0.9x and 1.1x from HBM; sglang's rows partly of another run."""
    out = []
    for b, l2 in ((1, True), (64, False), (256, False)):
        out.append(serving_row(AGAINST_BASE, "vk", b, fi_ms(b), l2=l2, err_pool=0.0))
        out.append(serving_row("vllm-decode", "vk", b, fi_ms(b) * {1: 1.5, 64: 0.9, 256: 1.1}[b], l2=l2,
                               err_pool=0.0))
    # a row of another run at a batch the baseline's run also measured: counted, never divided
    out.append(serving_row("sglang-decode", "vk", 64, fi_ms(64), run_id="other", err_pool=0.0))
    out.append(serving_row("sglang-decode", "vk", 256, fi_ms(256) * 2, l2=False, err_pool=0.0))
    return out
