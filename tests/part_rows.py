"""Small valid result rows numbered by `seq` (seqlens seq + 1, a time of 1 + seq ms), for the store's tests."""

from __future__ import annotations

from qlabench.core.result import ResultRow


def row(run_id: str, seq: int, status: str = "ok") -> ResultRow:
    extra = {"median_ms": 1.0 + seq} if status == "ok" else {"reason": "boom"}
    return ResultRow(run_id=run_id, suite="s", timestamp=f"2026-01-01T00:00:{seq:02d}+00:00", host="h", device="cpu",
                     device_index=None, env_fingerprint="f", backend="b", mode="fwd", layout="dense", batch=1,
                     seqlens=(seq + 1,), num_seqs=1, total_tokens=seq + 1, h_qk=1, h_v=1, K=8, V=8, dtype="float32",
                     gate="flashqla", seed=0, initial_state=True, status=status, **extra)
