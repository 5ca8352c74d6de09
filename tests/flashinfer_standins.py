"""Stand-ins for FlashInfer's GDN prefill with the semantics its releases document (no checks of their own: like
the kernels, they compute whatever they are handed), so the row pipeline can run the FlashInfer backends on CPU."""

from __future__ import annotations

import torch

from qlabench.backends.reference import recurrent_gated_delta_rule


def flashinfer_semantics(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                         cu_seqlens=None, **kw):
    """What FlashInfer's GDN prefill computes: decay = g (linear alpha), state [N, HV, V, K], token-major."""
    h0 = None if initial_state is None else initial_state.transpose(-1, -2)  # to the reference's [.., K, V]
    o, ht = recurrent_gated_delta_rule(q[None].float(), k[None].float(), v[None].float(), g.log()[None],
                                       beta[None], scale=scale, initial_state=h0, cu_seqlens=cu_seqlens)
    state = ht.transpose(-1, -2).contiguous()
    o = o[0].to(q.dtype)
    return (o, state) if output_final_state else o


def materialize(g, A_log, dt_bias):
    """FlashInfer 0.7.4, gdn_kernels/gates.py: materialize_gates with use_gate_in_kernel (alpha, linear)."""
    log_alpha = -torch.exp(A_log.float()) * torch.nn.functional.softplus(g.float() + dt_bias.float())
    return torch.exp(log_alpha)


def fi074(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False, cu_seqlens=None,
          use_qk_l2norm_in_kernel=False, output=None, output_state=None, state_checkpoints=None,
          checkpoint_cu_starts=None, checkpoint_every_n_tokens=0, use_cp="auto", state_indices=None, _cp_chunk_len=None,
          backend="auto", max_seqlen=None, *, gate_domain="linear", use_gate_in_kernel=False, A_log=None,
          dt_bias=None, beta_is_logit=False, cu_seqlens_cpu=None, output_state_indices=None,
          checkpoint_state_indices=None, prefix_lens=None):
    """0.7.4's chunk_gated_delta_rule (its full signature), as far as qlabench calls it: the gate materialised from
    raw inputs with use_gate_in_kernel, the output written into `output` when given, scale None -> K ** -0.5."""
    if use_gate_in_kernel:
        g = materialize(g, A_log, dt_bias)
    elif gate_domain == "log":
        g = g.exp()
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    res = flashinfer_semantics(q, k, v, g, beta, scale, initial_state, output_final_state, cu_seqlens)
    o = res[0] if output_final_state else res
    if output is not None:
        output.copy_(o)
        o = output
    return (o, res[1]) if output_final_state else o


def fi072(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False, cu_seqlens=None,
          use_qk_l2norm_in_kernel=False, output=None, output_state=None, state_checkpoints=None,
          checkpoint_cu_starts=None, checkpoint_every_n_tokens=0, use_cp="auto", state_indices=None, _cp_chunk_len=None,
          backend="auto", max_seqlen=None):
    """0.7.2.post1's signature (no raw-gate arguments), the same semantics."""
    return fi074(q, k, v, g, beta, scale, initial_state, output_final_state, cu_seqlens, output=output)
