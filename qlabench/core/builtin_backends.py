"""The built-in backends' declarations (core/backend_decl.py), one each, in the order every view shows them.

Adding a built-in backend is its implementation module in qlabench/backends/ and one declaration here; the
registry, `qlabench backends`, advise, the site, the study and the docs' blocks all read it from here.
"""

from __future__ import annotations

from qlabench.core import backend_needs as needs, kernel_event
from qlabench.core.decl_types import BackendDecl
from qlabench.core.engine_switches import ENGINES
from qlabench.core.pool_access import GATHER_SCATTER, IN_KERNEL, REFERENCE

_B = "qlabench.backends."
_ALL_MODES = frozenset({"fwd", "bwd", "fwd_bwd", "bwd_train", "decode", "mtp"})
_FWD = frozenset({"fwd"})
_PREFILL, _TRAIN = frozenset({"prefill"}), frozenset({"prefill", "train"})
_TESTING = frozenset({"testing"})
_EAGER = {"compiles": False}  # plain PyTorch: nothing to warm ahead of a sweep
_CUDA = frozenset({"cuda"})
_HALF = frozenset({"bfloat16", "float16"})
# What each library's backends run on and need (core/backend_needs.py); FlashInfer's prefill also builds its
# kernels on first use (backends/flashinfer_build.py).
_ON_FLASH_QLA = {"dtypes": _HALF, "devices": _CUDA, "needs": needs.FLASH_QLA}
_ON_FLA = {"dtypes": frozenset({"float32", "bfloat16", "float16"}), "devices": _CUDA, "needs": needs.FLA}
_ON_FI_PREFILL = {"dtypes": _HALF, "devices": _CUDA, "needs": needs.FLASHINFER,
                  "first_use": _B + "flashinfer_build:first_use_note"}
# its decode kernels read bf16 (fp16 inputs are cast inside the call); its training route takes bf16
_ON_FI_BF16 = {"dtypes": frozenset({"bfloat16"}), "devices": _CUDA, "needs": needs.FLASHINFER}
_ON_VLLM = {"dtypes": frozenset({"bfloat16"}), "devices": _CUDA, "needs": needs.VLLM}  # the engines' activations
_ON_SGLANG = {"dtypes": frozenset({"bfloat16"}), "devices": _CUDA, "needs": needs.SGLANG}
_INTER_CP = ("inter", "dual")  # qlabench's own inter-card CP protocol (backends/cp/)

_FLASH_QLA = ("flash_qla.chunk_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=h0, "
              "output_final_state=True, cu_seqlens=cu_seqlens, ")
_FLA = ("fla.ops.gated_delta_rule.chunk_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=h0, "
        "output_final_state=True, cu_seqlens=cu_seqlens)")
_FLA_ENV = " with FLA_FLASH_QLA=0 FLA_INTRACARD_CP=0 in the environment"
# g goes in as alpha = exp(g); on 0.7, max_seqlen and backend as an engine passes them (version_args).
_FLASHINFER = ("flashinfer.gdn_prefill.chunk_gated_delta_rule(q, k, v, g=exp(g), beta=beta, scale=scale, "
               "initial_state=h0.transpose(-1, -2), output_final_state=True, cu_seqlens=cu_seqlens, "
               "max_seqlen=max_seqlen, backend=\"flashinfer\"")
# vLLM's own call (backends/flashinfer_vllm.py): output preallocated, int32 cu_seqlens, g exponentiated upstream,
# use_cp="auto", no max_seqlen, no scale.
_VLLM = ENGINES["vllm"]
_VLLM_FI = ("flashinfer.gdn_prefill.chunk_gated_delta_rule(q=q, k=k, v=v, g=exp(g), beta=beta, initial_state="
            "h0.transpose(-1, -2), output_final_state=True, cu_seqlens=cu_seqlens_int32, output=out, "
            "state_checkpoints=None, checkpoint_cu_starts=None, checkpoint_every_n_tokens=0, use_cp=\"auto\", "
            f"backend=\"flashinfer\")  # as vLLM {_VLLM.version} calls it (fi_chunk_gated_delta_rule): no max_seqlen, "
            "no scale, out a preallocated [T, HV, V] buffer")
_FLA_AUTOTUNES = ("fla.",)  # FLA's chunk kernels are @triton.autotune'd on keys without the length
_FI_MARK = kernel_event.FLASHINFER_CP_MARK

BUILTINS: tuple[BackendDecl, ...] = (
    BackendDecl("naive-recurrent", "naive recurrence (torch)", _B + "naive:NaiveRecurrent",
                "token-by-token fp32 recurrence in PyTorch; the correctness oracle (also of decode/mtp steps)",
                modes=_ALL_MODES, layer_core=True, roles=frozenset({"oracle"}),
                pool_access=(REFERENCE, "the oracle: the fp32 recurrence from the batch's states, no pool step"), **_EAGER),
    BackendDecl("naive-chunk", "naive chunked (torch)", _B + "naive:NaiveChunk",
                "chunked (WY / UT-transform) form in plain PyTorch, chunk 64; backward by autograd",
                layer_core=True, roles=frozenset({"reference"}), **_EAGER, cp_modes=_INTER_CP),
    BackendDecl("naive-step", "naive serving step (torch)", _B + "naive:NaiveStep",
                "decode/mtp step in PyTorch: gather the batch's states from the pool, fp32 recurrence, scatter",
                modes=frozenset({"decode", "mtp"}), roles=frozenset({"reference"}),
                pool_access=(GATHER_SCATTER, "the PyTorch reference step"), **_EAGER),
    # The oracle of calls whose inputs differ from the drawn ones (their `oracle`): the gate computed outside from
    # the raw gates a fused-gate call is handed; no final state for a call that returns none.
    BackendDecl("naive-recurrent-gate-outside", "naive recurrence, gate from raw inputs (torch)",
                _B + "naive:NaiveRecurrentGateOutside",
                "the oracle with g = -exp(A_log) * softplus(a + dt_bias) computed outside from the raw gates a "
                "fused-gate call is handed (measure/inputs.raw_gates); checks flashinfer-gate", modes=_FWD, **_EAGER),
    BackendDecl("naive-recurrent-no-state", "naive recurrence, no final state (torch)",
                _B + "naive:NaiveRecurrentNoState",
                "the oracle of a call that returns no final state: o and the gradients of <o, do> alone (dht zero); "
                "checks flashinfer-train", modes=frozenset({"fwd", "fwd_bwd"}), **_EAGER),
    # auto_cp splits a call only when its sequences x value heads leave SMs idle: the check's short problem
    # may run unsplit where the timed call splits.
    BackendDecl("flash_qla", "FlashQLA, auto intra-card CP", _B + "flash_qla:FlashQLA",
                "FlashQLA TileLang kernels, automatic intra-card CP (auto_cp=True)", library="flash-qla",
                call=_FLASH_QLA + "auto_cp=True)", size_dependent_path=True, cp_setting="auto",
                cp_mark=kernel_event.FLASHQLA_CP_MARK, layer_core=True, roles=_TRAIN,
                cp_modes=_INTER_CP, **_ON_FLASH_QLA),
    BackendDecl("flash_qla-nocp", "FlashQLA, intra-card CP off", _B + "flash_qla:FlashQLANoCP",
                "FlashQLA with intra-card CP off (auto_cp=False)", library="flash-qla",
                call=_FLASH_QLA + "auto_cp=False)", cp_setting="nocp",  # never splits, at any size
                cp_mark=kernel_event.FLASHQLA_CP_MARK, layer_core=True, roles=_TRAIN, **_ON_FLASH_QLA),
    BackendDecl("flash_qla-forcecp", "FlashQLA, intra-card CP forced", _B + "flash_qla:FlashQLAForceCP",
                "FlashQLA with intra-card CP forced on (force_intra_cp=True)", library="flash-qla",
                call=_FLASH_QLA + "auto_cp=True, force_intra_cp=True)", size_dependent_path=True,
                cp_setting="forcecp", cp_mark=kernel_event.FLASHQLA_CP_MARK, layer_core=True, roles=_PREFILL,
                **_ON_FLASH_QLA),
    BackendDecl("fla", "FLA (Triton)", _B + "fla:FLAChunk",
                "FLA Triton chunk_gated_delta_rule, dispatch to FlashQLA/TileLang off", library="fla",
                call=_FLA + _FLA_ENV, autotune_modules=_FLA_AUTOTUNES, layer_core=True, roles=_TRAIN,
                cp_modes=("fla-cp",), **_ON_FLA),
    # FLA splits only a sequence at least three sub-sequence lengths long: never the check's short problem.
    BackendDecl("fla-intracp", "FLA, its own intra-card CP", _B + "fla:FLAIntraCP",
                "FLA chunk_gated_delta_rule with its own intra-card CP (FLA_INTRACARD_CP=1, inference mode), "
                "varlen forward only; timed with events", library="fla", modes=_FWD,
                call=_FLA + " under torch.inference_mode(), with FLA_FLASH_QLA=0 FLA_INTRACARD_CP=1 in the "
                "environment", autotune_modules=_FLA_AUTOTUNES, size_dependent_path=True,
                cp_mark=kernel_event.FLA_CP_MARK, roles=_PREFILL, **_ON_FLA),
    BackendDecl("fla-recurrent", "FLA fused recurrent", _B + "fla:FLARecurrent",
                "FLA Triton fused_recurrent_gated_delta_rule: forward, and decode/mtp steps (gather, kernel, "
                "scatter)", library="fla", modes=frozenset({"fwd", "decode", "mtp"}),
                autotune_modules=_FLA_AUTOTUNES, layer_core=True, roles=frozenset({"decode", "mtp"}),
                pool_access=(GATHER_SCATTER, "upstream fla-core has no slot-indexed pool, so qlabench gathers and "
                             "scatters around its kernel; vLLM and SGLang run their own FLA-derived kernels that "
                             "index the pool (vllm-*, sglang-*): these rows are not FLA as an engine runs it"),
                **_ON_FLA),
    # the same call as `fla`'s, with FLA's default dispatch: a provenance test, never advised as a call
    BackendDecl("fla-dispatch-on", "FLA, default dispatch (test)", _B + "fla:FLADispatchOn",
                "FLA with its default dispatch (routes to FlashQLA on SM90): for provenance tests", library="fla",
                call=_FLA + _FLA_ENV, autotune_modules=_FLA_AUTOTUNES, roles=_TESTING, **_ON_FLA),
    # 0.7.x decides per call whether to split it, by the sequences' lengths: the check's short problem may run
    # unsplit where the timed call splits.
    BackendDecl("flashinfer", "FlashInfer, its own CP decision (auto)", _B + "flashinfer:FlashInfer",
                "FlashInfer GDN prefill (0.6.13: CUTLASS; 0.7.2: CuTe DSL), forward only; g as linear alpha, "
                "state [N,HV,V,K]", library="flashinfer", modes=_FWD,
                call=_FLASHINFER + ")  # use_cp left to FlashInfer (auto)", size_dependent_path=True,
                cp_setting="auto", cp_mark=_FI_MARK, layer_core=True, roles=_PREFILL, **_ON_FI_PREFILL),
    BackendDecl("flashinfer-nocp", "FlashInfer, CP off (use_cp=False)", _B + "flashinfer:FlashInferNoCP",
                "FlashInfer >= 0.7 GDN prefill with its intra-call CP off (use_cp=False): the unsplit kernel",
                library="flashinfer", modes=_FWD, call=_FLASHINFER + ", use_cp=False)",  # never splits
                cp_setting="nocp", cp_mark=_FI_MARK, roles=_PREFILL, **_ON_FI_PREFILL),
    # Forced, the split is decided by the argument, not the size; still traced per call, so a check on a problem
    # the CP refuses (FlashInfer raises then) or runs otherwise is never taken for the timed one.
    BackendDecl("flashinfer-forcecp", "FlashInfer, CP forced", _B + "flashinfer:FlashInferForceCP",
                "FlashInfer >= 0.7 GDN prefill with its intra-call CP forced (use_cp=True, max_seqlen passed): "
                "split at every size it accepts", library="flashinfer", modes=_FWD,
                call=_FLASHINFER + ", use_cp=True)", size_dependent_path=True, cp_setting="forcecp",
                cp_mark=_FI_MARK, roles=_PREFILL, **_ON_FI_PREFILL),
    # prefill into a state pool through slot indices (0.7.2), in place; splits by size as `flashinfer` does
    BackendDecl("flashinfer-pool", "FlashInfer prefill into a state pool", _B + "flashinfer_pool:FlashInferPool",
                "FlashInfer 0.7.2 GDN prefill into a fp32 state pool [P,HV,V,K] through state_indices, in place "
                "(an engine's chunked prefill); use_cp left to FlashInfer", library="flashinfer", modes=_FWD,
                call="flashinfer.gdn_prefill.chunk_gated_delta_rule(q, k, v, g=exp(g), beta=beta, scale=scale, "
                "initial_state=pool, output_state=pool, state_indices=slots, output_final_state=True, "
                "cu_seqlens=cu_seqlens, max_seqlen=max_seqlen, backend=\"flashinfer\")  # pool [P, HV, V, K] "
                "fp32, updated in place; use_cp left to FlashInfer (auto)", size_dependent_path=True,
                cp_mark=_FI_MARK, **_ON_FI_PREFILL),
    # vLLM's call of the same kernels as `flashinfer`: a row of what vLLM gets, not a candidate of its own (it makes
    # `flashinfer`'s choice with vLLM's arguments; engine_switches names it beside vLLM's prefill switch).
    BackendDecl("vllm-flashinfer-prefill", f"FlashInfer prefill as vLLM {_VLLM.version} calls it",
                _B + "flashinfer_vllm:VLLMFlashInferPrefill",
                f"FlashInfer >= 0.7 GDN prefill called exactly as vLLM {_VLLM.version} calls it: output preallocated, "
                "int32 cu_seqlens, g exponentiated upstream, use_cp=\"auto\", no max_seqlen, no scale",
                library="flashinfer", modes=_FWD, call=_VLLM_FI, size_dependent_path=True, cp_mark=_FI_MARK,
                **_ON_FI_PREFILL),
    # the gate computed inside the call from raw inputs (0.7.4); on SM90 it is materialised before the same kernels
    BackendDecl("flashinfer-gate", "FlashInfer, gate from raw inputs (use_gate_in_kernel)",
                _B + "flashinfer_gate:FlashInferFusedGate",
                "FlashInfer 0.7.4 GDN prefill with use_gate_in_kernel=True, A_log, dt_bias: g = -exp(A_log) * "
                "softplus(a + dt_bias) computed inside the call; checked against the gate computed outside",
                library="flashinfer", modes=_FWD,
                call=_FLASHINFER.replace("g=exp(g)", "g=a") + ", use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias)"
                "  # g = -exp(A_log) * softplus(a + dt_bias) inside the call; use_cp left to FlashInfer (auto)",
                size_dependent_path=True, cp_mark=_FI_MARK, **_ON_FI_PREFILL),
    # FlashInfer's deterministic KCP training route on one rank; runs where is_gdn_train_supported says (0.7.4:
    # SM100/SM103/SM107), a skipped row with that reason elsewhere.
    BackendDecl("flashinfer-train", "FlashInfer training route (gdn_train, one GPU)",
                _B + "flashinfer_train:FlashInferTrain",
                "FlashInfer 0.7.4 gdn_train (deterministic KCP packed GDN training, one rank): forward, backward "
                "with and without the saved set, autograd step; no initial or final state; events-timed",
                library="flashinfer",
                call="flashinfer.gdn_train.chunk_gdn_kcp(q, k, v, g, beta, ctx, scale=scale)  # ctx = "
                "build_kcp_context(kcp_partition(cu_seqlens_cpu, 1), None, 0, device); q, k, v [1, T, H, 128] bf16, "
                "g log-space fp32, no initial state", roles=frozenset({"train"}), **_ON_FI_BF16),
    BackendDecl("flashinfer-decode", "FlashInfer decode (dense state)", _B + "flashinfer_decode:FlashInferDecode",
                "FlashInfer 0.7.2 gated_delta_rule_decode (CuTe DSL), T=1, fp32 state [B,HV,K,V]: no pool "
                "argument, so gather + kernel + scatter", library="flashinfer", modes=frozenset({"decode"}),
                roles=frozenset({"decode"}),
                pool_access=(GATHER_SCATTER, "gated_delta_rule_decode takes the batch's states as one dense tensor"),
                **_ON_FI_BF16),
    BackendDecl("flashinfer-decode-pt", "FlashInfer decode, pretransposed pool",
                _B + "flashinfer_decode:FlashInferDecodePretranspose",
                "FlashInfer 0.7.2 gated_delta_rule_decode_pretranspose (CuTe DSL): pool [P,HV,V,K] + slot "
                "indices, in place; fp32 state T=1 (T>1 via its mtp), bf16 state T>=1", library="flashinfer",
                modes=frozenset({"decode", "mtp"}), roles=frozenset({"decode", "mtp"}),
                pool_access=(IN_KERNEL, "gated_delta_rule_decode_pretranspose: pool + initial_state_indices"),
                **_ON_FI_BF16),
    BackendDecl("flashinfer-mtp", "FlashInfer MTP", _B + "flashinfer_decode:FlashInferMTP",
                "FlashInfer 0.7.2 gated_delta_rule_mtp (CuTe DSL), T>=2: fp32 pool [P,HV,V,K] + slot indices, "
                "in place", library="flashinfer", modes=frozenset({"mtp"}), roles=frozenset({"mtp"}),
                pool_access=(IN_KERNEL, "gated_delta_rule_mtp: pool + slot indices"), **_ON_FI_BF16),
    BackendDecl("vllm-decode", "vLLM packed decode", _B + "engine_decode:VLLMDecode",
                "vLLM 0.33 fused_recurrent_gated_delta_rule_packed_decode (Triton, FLA-derived): pool [P,HV,V,K] "
                "+ ssm_state_indices, in place, T=1; slot 0 reserved (NULL_BLOCK_ID)", modes=frozenset({"decode"}),
                roles=frozenset({"decode"}), engine="vllm",
                pool_access=(IN_KERNEL, "vLLM's packed decode: pool + ssm_state_indices (slot 0 reserved)"),
                **_ON_VLLM),
    BackendDecl("vllm-mtp", "vLLM verify", _B + "engine_decode:VLLMVerify",
                "vLLM 0.33 fused_sigmoid_gating_delta_rule_update (its verify): ssm_state_indices [B,T], a slot "
                "per draft token, num_accepted_tokens; T state writes per sequence", modes=frozenset({"mtp"}),
                roles=frozenset({"mtp"}), engine="vllm",
                pool_access=(IN_KERNEL, "vLLM's verify: a slot per draft token, T states written per sequence"),
                **_ON_VLLM),
    BackendDecl("sglang-decode", "SGLang packed decode", _B + "engine_decode:SGLangDecode",
                "SGLang 0.5 fused_recurrent_gated_delta_rule_packed_decode (Triton, FLA-derived): pool "
                "[P,HV,V,K] + ssm_state_indices, in place, T=1", modes=frozenset({"decode"}),
                roles=frozenset({"decode"}), engine="sglang",
                pool_access=(IN_KERNEL, "SGLang's packed decode: pool + ssm_state_indices"), **_ON_SGLANG),
    BackendDecl("sglang-mtp", "SGLang MTP update", _B + "engine_decode:SGLangVerify",
                "SGLang 0.5 fused_recurrent_gated_delta_rule_update (Triton, FLA-derived): pool [P,HV,V,K] + "
                "indices, T tokens, the last state written in place (disable_state_update=False)",
                modes=frozenset({"mtp"}), roles=frozenset({"mtp"}), engine="sglang",
                pool_access=(IN_KERNEL, "SGLang's update kernel, last state written in place"), **_ON_SGLANG),
    BackendDecl("fault", "fault injection (test)", _B + "fault:FaultBackend",
                "test backend: fault chosen by V (see qlabench/backends/fault.py); otherwise the fp32 recurrence",
                roles=_TESTING, **_EAGER, devices=frozenset({"cpu"})),
    BackendDecl("synthetic", "synthetic slowdown (test)", _B + "synthetic:Synthetic",
                "naive-chunk math plus an injected slowdown ($QLABENCH_SYNTHETIC_SLOWDOWN); for gate power studies",
                roles=_TESTING, **_EAGER),
)
