#!/usr/bin/env python3
"""FLA intra-card CP (FLA_INTRACARD_CP=1) gives a wrong `o` to packed sequences after the first split one.

Standalone: torch and fla only. Runs `fla.ops.gated_delta_rule.chunk_gated_delta_rule` on packed batches
(`cu_seqlens`, under `torch.inference_mode()`, the only place FLA's intra-card CP engages) three ways:

  cp0    FLA_INTRACARD_CP=0 (FLA's plain varlen path, a second reference)
  cp1    FLA_INTRACARD_CP=1 as shipped
  fix    FLA_INTRACARD_CP=1 with the one-line change proposed in README.md, applied in this process only

and compares each sequence's output o and final state against a float64 evaluation of the same recurrence.
It also prints what FLA's own planner decided (which sequences it split) and the rule this report states:
every split sequence after the first one in the batch is predicted wrong.

    python repro.py              # the three cases below; exit 1 when cp1 fails any sequence
    python repro.py --self-test  # CPU only, no fla: the float64 reference against a per-token loop
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

os.environ.setdefault("FLA_FLASH_QLA", "0")  # else fla routes the whole op to FlashQLA when it is installed

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

H_QK, H_V, K, V = 2, 8, 128, 128
TOL = 2e-2  # relative L2 error in bf16; a correct call measures a few 1e-3 against float64
CHUNK = 64


def random_cuts(total: int, n: int, seed: int) -> list[int]:
    """Sequence lengths from n - 1 random cut points (FlashQLA's benchmark draws varlen layouts this way)."""
    cuts = sorted((torch.randperm(total - 1, generator=torch.Generator().manual_seed(seed))[: n - 1] + 1).tolist())
    edges = [0, *cuts, total]
    return [b - a for a, b in zip(edges, edges[1:])]


CASES = {
    "4 x 32768": [32768] * 4,
    "8 random cuts of 131072 (seed 42)": random_cuts(131072, 8, 42),
    "1 x 131072 (control)": [131072],
}


def make_inputs(lens: list[int], device, seed: int = 0):
    """bf16 q, k (l2-normalised), v; float32 log-decay g with a quarter of the value heads at g = 0; beta."""
    gen = torch.Generator(device=device).manual_seed(seed)
    T = sum(lens)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, device=device)

    q = F.normalize(randn(1, T, H_QK, K), dim=-1).to(torch.bfloat16)
    k = F.normalize(randn(1, T, H_QK, K), dim=-1).to(torch.bfloat16)
    v = randn(1, T, H_V, V).to(torch.bfloat16)
    g = F.logsigmoid(randn(1, T, H_V)) / 16
    g[..., : H_V // 4] = 0.0  # heads without decay carry state furthest
    beta = torch.sigmoid(randn(1, T, H_V))
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.long, device=device)
    return q, k, v, g, beta, cu


# ---------------------------------------------------------------------------------------------------------
# float64 reference (chunked WY form; --self-test checks it against the per-token recurrence)
# ---------------------------------------------------------------------------------------------------------

def reference_fp64(q, k, v, g, beta, scale: float, C: int = CHUNK):
    """One sequence, no initial state: q, k [T, H, K], v [T, H, V], g, beta [T, H] -> o [T, H, V], S [H, K, V].

    S_t = exp(g_t) S_{t-1} + k_t beta_t (v_t - exp(g_t) S_{t-1}^T k_t)^T,   o_t = scale * S_t^T q_t,
    evaluated chunk by chunk in float64: inside a chunk a unit-lower-triangular solve, across chunks
    S_{c+1} = M_c S_c + B_c."""
    f = torch.float64
    T, H = v.shape[:2]
    q, k, v, g, beta = (x.to(f) for x in (q, k, v, g, beta))
    n = -(-T // C)
    pad = n * C - T
    # padded tokens have beta = 0 and g = 0: they leave the state unchanged
    q, k, v = (F.pad(x, [0, 0, 0, 0, 0, pad]) for x in (q, k, v))
    g, beta = (F.pad(x, [0, 0, 0, pad]) for x in (g, beta))
    q, k, v = (x.reshape(n, C, H, -1).permute(2, 0, 1, 3) for x in (q, k, v))  # [H, n, C, *]
    g, beta = (x.reshape(n, C, H).permute(2, 0, 1) for x in (g, beta))  # [H, n, C]
    G = g.cumsum(-1)
    idx = torch.arange(C, device=q.device)
    strict = idx[:, None] > idx[None, :]
    decay = (G[..., :, None] - G[..., None, :]).masked_fill(~strict, float("-inf")).exp()
    A = beta[..., None] * (k @ k.transpose(-1, -2)) * decay
    eye_c = torch.eye(C, dtype=f, device=q.device)
    rhs = torch.cat([beta[..., None] * v, (beta * G.exp())[..., None] * k], dim=-1)
    sol = torch.linalg.solve_triangular(eye_c + A, rhs, upper=False, unitriangular=True)
    Wv, Wk = sol[..., : v.shape[-1]], sol[..., v.shape[-1]:]
    tail = F.pad(g[..., 1:].flip(-1).cumsum(-1).flip(-1), [0, 1])  # G_C - G_j, summed without cancellation
    kd_t = (tail.exp()[..., None] * k).transpose(-1, -2)  # [H, n, K, C]
    M = G[..., -1].exp()[..., None, None] * torch.eye(k.shape[-1], dtype=f, device=q.device) - kd_t @ Wk
    Bc = kd_t @ Wv
    S = q.new_zeros(H, k.shape[-1], v.shape[-1])
    starts = []
    for c in range(n):
        starts.append(S)
        S = Bc[:, c] + M[:, c] @ S
    S0 = torch.stack(starts, dim=1)  # [H, n, K, V]
    U = Wv - Wk @ S0
    QK = (q @ k.transpose(-1, -2)) * (decay + eye_c)
    o = scale * ((G.exp()[..., None] * q) @ S0 + QK @ U)
    return o.permute(1, 2, 0, 3).reshape(n * C, H, -1)[:T], S


def reference_loop(q, k, v, g, beta, scale: float):
    """The same recurrence token by token (slow; for --self-test)."""
    f = torch.float64
    q, k, v, g, beta = (x.to(f) for x in (q, k, v, g, beta))
    T, H = v.shape[:2]
    S = q.new_zeros(H, k.shape[-1], v.shape[-1])
    out = []
    for t in range(T):
        S = S * g[t].exp()[:, None, None]
        u = beta[t][:, None] * (v[t] - torch.einsum("hk,hkv->hv", k[t], S))
        S = S + k[t][:, :, None] * u[:, None, :]
        out.append(scale * torch.einsum("hk,hkv->hv", q[t], S))
    return torch.stack(out), S


def self_test() -> int:
    torch.manual_seed(0)
    T, H = 150, 3
    q, k = (F.normalize(torch.randn(T, H, 16), dim=-1) for _ in range(2))
    v, g, beta = torch.randn(T, H, 8), F.logsigmoid(torch.randn(T, H)) / 4, torch.rand(T, H)
    g[:, 0] = 0.0
    o_c, s_c = reference_fp64(q, k, v, g, beta, 0.25, C=16)
    o_l, s_l = reference_loop(q, k, v, g, beta, 0.25)
    err = max(((o_c - o_l).norm() / o_l.norm()).item(), ((s_c - s_l).norm() / s_l.norm()).item())
    print(f"self-test: chunked float64 vs per-token loop, relative error {err:.1e}")
    # the fix's index map on the two failing layouts: 4 x 32768 (4 sub-sequences each, 19 pairs) and the
    # random cuts (7 + 4 sub-sequences, 12 pairs); the pairs left out join two split sequences
    keep_ok = (kept_summaries([4, 4, 4, 4]) == [0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 18]
               and kept_summaries([7, 4]) == [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
               and kept_summaries([8]) == list(range(8)))
    print(f"self-test: the fix keeps the summaries of real sub-sequences: {keep_ok}")
    return 0 if err < 1e-10 and keep_ok else 1


# ---------------------------------------------------------------------------------------------------------
# FLA: its planner, the shipped path and the proposed fix
# ---------------------------------------------------------------------------------------------------------

def fla_plan(lens: list[int], sms: int | None = None) -> tuple[int, list[int], list[int], list[int]]:
    """What FLA's intra-card planner does with these lengths on this GPU (or one with `sms` SMs), through FLA's
    own host functions: (sub-sequence length, sub-sequences per sequence (1: unsplit), pre-scan cu_seqlens,
    the sub-sequences' boundaries)."""
    from fla.ops.common import intracard_cp as icp
    from fla.ops.common.backends.intracard import MAX_SUBSEQS

    if sms is None:
        from fla.utils import get_multiprocessor_count
        sms = get_multiprocessor_count()
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.long)
    sub_len = icp.compute_subseq_len(seq_len=max(lens), num_sms=sms, num_heads=H_V, chunk_size=CHUNK)
    if all(n < 2 * sub_len for n in lens):
        return sub_len, [1] * len(lens), [], []
    bounds, info, _ = icp.prepare_subseq_cu_seqlens(cu, sub_len, CHUNK, MAX_SUBSEQS)
    if not info:
        return sub_len, [1] * len(lens), [], []
    per_seq = [1] * len(lens)
    for i, n in zip(info.split_seq_ids, info.num_subseqs):
        per_seq[i] = n
    flat = icp._precompute_intracard_indices(info, bounds, len(lens))[0]
    return sub_len, per_seq, flat, bounds


def print_plan(sms: int) -> int:
    """No GPU needed: for each case, the token ranges the pre-scan summarises for each split sequence's
    merge (pre-scan program i_n reads cu_seqlens[i_n] .. cu_seqlens[i_n + 1] of the flattened list) against
    the sub-sequences it should describe."""
    print(f"FLA's intra-card plan with {sms} SMs, h_v {H_V}: the merge of split sequence j composes summaries "
          "merge_seq_offsets[j] .. [j + 1]")
    for name, lens in CASES.items():
        sub_len, per_seq, flat, bounds = fla_plan(lens, sms)
        print(f"\n{name}: sub-sequence length {sub_len}, pre-scan cu_seqlens {flat}")
        first, starts = 0, [0, *torch.tensor(lens).cumsum(0).tolist()]
        for i, n in enumerate(per_seq):
            if n == 1:
                continue
            used = [(flat[k], flat[k + 1]) for k in range(first, first + n)]
            b0 = bounds.index(starts[i])  # this sequence's sub-sequences, as FLA's planner cut them
            want = [(bounds[b0 + s], bounds[b0 + s + 1]) for s in range(n)]
            verdict = "right" if used == want else "WRONG"
            print(f"  sequence {i + 1} ({lens[i]} tokens, {n} sub-sequences): {verdict}; used {used[:3]}..., "
                  f"wanted {want[:3]}...")
            first += n
    return 0


def kept_summaries(num_subseqs: list[int]) -> list[int]:
    """The pre-scan programs (pairs of the concatenated boundary list) that summarise real sub-sequences, in
    the order the merge reads them: split sequence j's boundaries start at index sum_{i<j} (n_i + 1)."""
    keep, start = [], 0
    for n in num_subseqs:
        keep += range(start, start + n)
        start += n + 1
    return keep


@contextlib.contextmanager
def fix_installed():
    """The change README.md proposes, applied to this process while the block runs: the pre-scan summarises
    every consecutive pair of the flattened boundaries (the pairs that join two split sequences included),
    and only the summaries of real sub-sequences are kept, in the order the merge kernel reads them."""
    from fla.ops.common import intracard_cp as icp

    counts_by_flat: dict[tuple[int, ...], list[int]] = {}
    precompute, pre_scan = icp._precompute_intracard_indices, icp.intracard_pre_scan

    def precompute_recording(split_info, cu_seqlens_subseq_values, num_seqs):
        out = precompute(split_info, cu_seqlens_subseq_values, num_seqs)
        counts_by_flat[tuple(out[0])] = list(split_info.num_subseqs)
        return out

    def pre_scan_fixed(k, w, u, g, gk, cu_seqlens, num_subseqs, chunk_size=CHUNK, **kw):
        keep = kept_summaries(counts_by_flat[tuple(cu_seqlens.tolist())])
        assert len(keep) == num_subseqs
        hm = pre_scan(k, w, u, g, gk, cu_seqlens, len(cu_seqlens) - 1, chunk_size, **kw)
        return hm[torch.tensor(keep, device=hm.device)]

    # FLA caches the split plan per cu_seqlens tensor: drop it so the plan is rebuilt through the wrapper
    icp._intracard_cache.clear()
    icp._precompute_intracard_indices, icp.intracard_pre_scan = precompute_recording, pre_scan_fixed
    try:
        yield
    finally:
        icp._precompute_intracard_indices, icp.intracard_pre_scan = precompute, pre_scan
        icp._intracard_cache.clear()


def run_fla(inputs, intracard: bool):
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule

    q, k, v, g, beta, cu = inputs
    os.environ["FLA_INTRACARD_CP"] = "1" if intracard else "0"  # FLA reads it at every call
    with torch.inference_mode():
        o, ht = chunk_gated_delta_rule(q, k, v, g, beta, scale=K**-0.5, initial_state=None,
                                       output_final_state=True, cu_seqlens=cu)
    torch.cuda.synchronize()
    return o, ht


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def run_case(name: str, lens: list[int], device) -> list[dict]:
    inputs = make_inputs(lens, device)
    q, k, v, g, beta, cu = inputs
    sub_len, per_seq, flat, _ = fla_plan(lens)
    print(f"\n{name}: lengths {lens}")
    print(f"  FLA plan: sub-sequence length {sub_len}; sub-sequences per sequence {per_seq}")
    if flat:
        print(f"  pre-scan cu_seqlens ({len(flat) - 1} pairs for {sum(n for n in per_seq if n > 1)} summaries): {flat}")
    outs = {"cp0": run_fla(inputs, False), "cp1": run_fla(inputs, True)}
    with fix_installed():
        outs["fix"] = run_fla(inputs, True)
    rows, split_seen = [], 0
    qe, ke = (x.repeat_interleave(H_V // H_QK, dim=2) for x in (q, k))  # value head i reads qk head i // 4
    for i, (a, b) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist())):
        o_ref, s_ref = reference_fp64(qe[0, a:b], ke[0, a:b], v[0, a:b], g[0, a:b], beta[0, a:b], K**-0.5)
        row = {"case": name, "seq": i + 1, "len": b - a, "subseqs": per_seq[i],
               "predicted": "wrong" if per_seq[i] > 1 and split_seen else "ok"}
        split_seen += per_seq[i] > 1
        for tag, (o, ht) in outs.items():
            row[f"o_{tag}"] = rel(o[0, a:b], o_ref)
            row[f"s_{tag}"] = rel(ht[i], s_ref)
        rows.append(row)
        del o_ref, s_ref
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--self-test", action="store_true", help="CPU: check the float64 reference, then stop")
    ap.add_argument("--plan", type=int, metavar="SMS", help="no GPU: print FLA's split plan for a GPU with SMS SMs "
                    "(132: H200) and which split sequences get the wrong summaries, then stop")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.plan:
        return print_plan(args.plan)
    if not torch.cuda.is_available():
        print("needs a CUDA GPU (FLA's Triton kernels); --self-test runs on CPU")
        return 2
    import fla
    import triton

    dev = torch.device("cuda")
    print(f"torch {torch.__version__}, triton {triton.__version__}, fla {fla.__version__}, "
          f"{torch.cuda.get_device_name(dev)} ({torch.cuda.get_device_properties(dev).multi_processor_count} SMs)")
    print(f"h_qk {H_QK}, h_v {H_V}, K {K}, V {V}, bf16 q/k/v, float32 g/beta, no initial state; tolerance {TOL}")
    rows = [r for name, lens in CASES.items() for r in run_case(name, lens, dev)]

    def fails(r, tag):
        return r[f"o_{tag}"] > TOL or r[f"s_{tag}"] > TOL

    print("\nrelative L2 error against float64 (o / final state); cp0 = FLA_INTRACARD_CP=0, cp1 = =1, "
          "fix = =1 with README's change")
    head = f"{'case':<34} {'seq':>3} {'len':>6} {'split':>5} {'predicted':>9}  {'o cp0':>8} {'o cp1':>8} " \
           f"{'o fix':>8}  {'S cp0':>8} {'S cp1':>8} {'S fix':>8}  cp1"
    print(head)
    for r in rows:
        print(f"{r['case'][:34]:<34} {r['seq']:>3} {r['len']:>6} {r['subseqs']:>5} {r['predicted']:>9}  "
              f"{r['o_cp0']:8.1e} {r['o_cp1']:8.1e} {r['o_fix']:8.1e}  {r['s_cp0']:8.1e} {r['s_cp1']:8.1e} "
              f"{r['s_fix']:8.1e}  {'FAIL' if fails(r, 'cp1') else 'ok'}")
    bad = [r for r in rows if fails(r, "cp1")]
    rule = all((r["predicted"] == "wrong") == fails(r, "cp1") for r in rows)
    print(f"\ncp1 fails {len(bad)} of {len(rows)} sequences; the rule (split sequences after the first split "
          f"one) {'matches' if rule else 'does NOT match'}; cp0 fails {sum(fails(r, 'cp0') for r in rows)}, "
          f"fix fails {sum(fails(r, 'fix') for r in rows)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
