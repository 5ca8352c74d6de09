"""How to get a qlabench backend's kernel inside vLLM and SGLang, at the versions the engine-kernel suite pins.

A recommendation names a library call; a serving engine runs its own calls, chosen by its flags, its
environment and an automatic rule per GPU. This table holds, per engine version and per qlabench backend:
the switch that selects that kernel (or why none can), whether it is the engine's default and under what
condition, how the engine's call differs from the one qlabench times, and the engine source line it was
read from. `analyze/answer/engines.py` renders it beside advise's answer; docs/ENGINES.md prints it.

Read from the released wheels (their sha256 in ENGINES): vLLM 0.34.0 (it pins flashinfer-python 0.7.3) and
SGLang 0.5.23, the newest SGLang release on the package index when vLLM 0.34 was read (it pins flashinfer 0.7.2).
FlashInfer's own defaults are read from flashinfer-python 0.7.4. Paths are inside the wheel; line numbers are of
those files. Re-read them when a pin moves.
"""

from __future__ import annotations

from dataclasses import dataclass

# Phases of a serving step, as advise's workloads name them (prefill; decode: T = 1; mtp: T >= 2 verify).
PHASES = ("prefill", "decode", "mtp")


@dataclass(frozen=True)
class Engine:
    name: str  # as users write it
    version: str
    wheel: str  # the file read
    sha256: str
    commit: str | None  # the git commit the wheel names (`__commit_id__`), where it names one


@dataclass(frozen=True)
class Switch:
    """One way an engine selects a GDN kernel for a phase, and the qlabench backend that times that kernel."""
    engine: str  # key of ENGINES
    phase: str  # one of PHASES
    backend: str | None  # the registered qlabench backend; None: the engine's kernel has no qlabench backend
    kernel: str  # the engine's call, in its words
    select: str  # the flags / environment that select it
    default_sm: tuple[int, ...]  # SM majors on which it is the engine's default (when `default_when` holds)
    default_when: str  # the condition of that default ('' where it is never the default)
    differs: str  # how the engine's call differs from the one the backend times ('' where it is that call)
    source: str  # 'path:line' in the engine's wheel


ENGINES: dict[str, Engine] = {
    "vllm": Engine("vLLM", "0.34.0", "vllm-0.34.0-cp38-abi3-manylinux_2_28_x86_64.whl",
                   "79ca4b3cd74aec08c4bf476bdf0cb15735b605ae5368526a2faae1e30f044ca2", "62d4bc3c7"),
    "sglang": Engine("SGLang", "0.5.23", "sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl",
                     "00b3cd5b265ac76c64185fbb6b95424f324ddd9f428d0306b77bc9db9d859937", None),
}

_QWEN_GDN = "vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py"
_SGL_GDN = "sglang/srt/layers/attention/linear/gdn_backend.py"
_SGL_FI = "sglang/srt/layers/attention/linear/kernels/gdn_flashinfer.py"
_SGL_TRITON = "sglang/srt/layers/attention/linear/kernels/gdn_triton.py"
_FI_AUTO = ("FlashInfer's `backend=\"auto\"` runs the kernels `\"flashinfer\"` does on SM90 (flashinfer 0.7.4: "
            "gdn_prefill.py:1724-1750; on SM100 it may pick cuDNN for raw-gate calls)")

SWITCHES: tuple[Switch, ...] = (
    # --- vLLM 0.34.0: prefill. `--gdn-prefill-backend` (arg_utils.py:1979-1985), unset = "auto", resolved per GPU
    # by _resolve_gdn_prefill_backend (qwen_gdn_linear_attn.py:187-348).
    Switch("vllm", "prefill", "flashinfer", "fi_chunk_gated_delta_rule -> flashinfer.gdn_prefill.chunk_gated_delta_rule",
           "--gdn-prefill-backend flashinfer", (9, 10, 12),
           "the flag is unset (SM90: always; SM10x/SM12x: when the model's K = 128 and the CUDA runtime is 13 or "
           "later, else Triton)",
           "passes use_cp=\"auto\", backend=\"flashinfer\", a preallocated output (a slice of the layer's output), "
           "int32 cu_seqlens and g already exponentiated upstream (fused_post_conv_prep), but no max_seqlen (FlashInfer "
           "then bounds its CP grid by all the tokens) and no scale; states gathered from the pool as fp32 and "
           "scattered back; vllm-flashinfer-prefill times exactly this call",
           f"{_QWEN_GDN}:317-348, 392-451, 2117-2158"),
    Switch("vllm", "prefill", "fla", "vllm.third_party.flash_linear_attention.ops.chunk_gated_delta_rule (Triton)",
           "--gdn-prefill-backend triton", (),
           "the flag is unset on a GPU the FlashInfer rule refuses (not SM90/SM10x/SM12x, or K != 128 on Blackwell)",
           "vLLM's own copy of FLA's chunk kernel (vllm/third_party/flash_linear_attention), not upstream FLA",
           f"{_QWEN_GDN}:521-550"),
    Switch("vllm", "prefill", None, "the in-tree CuTe DSL GDN prefill", "--gdn-prefill-backend cutedsl", (),
           "", "SM10x/SM11x with K = 128 and CUDA 13 only (opt-in); qlabench has no backend for it",
           f"{_QWEN_GDN}:317-347, 552-595"),
    Switch("vllm", "prefill", None, "the HIP GDN prefill (_rocm_C.rdna35_gdn_chunked)", "--gdn-prefill-backend hip",
           (), "", "ROCm RDNA3.5 only (gfx1150-gfx1153; the automatic choice on gfx1151), K = V = 128; qlabench has "
           "no backend for it", f"{_QWEN_GDN}:168-186, 272-306, 629-681"),
    # --- vLLM 0.34.0: decode (T = 1) and verify (T >= 2). No FlashInfer GDN decode anywhere in vllm/.
    Switch("vllm", "decode", "vllm-decode",
           "fused_recurrent_gated_delta_rule_packed_decode (Triton, FLA-derived)",
           "VLLM_ENABLE_FLA_PACKED_RECURRENT_DECODE=1", (8, 9, 10, 12),
           "the variable is unset (1) and a batch holds decodes only (no prefill, no speculative tokens)", "",
           f"{_QWEN_GDN}:861-863, 1796-1809, 2259-2309"),
    Switch("vllm", "decode", None, "fused_sigmoid_gating_delta_rule_update at T = 1 (Triton)",
           "VLLM_ENABLE_FLA_PACKED_RECURRENT_DECODE=0, or a batch mixing prefill and decode", (), "",
           "qlabench times this call at T >= 2 only (vllm-mtp)", f"{_QWEN_GDN}:1995-2015, 2083-2102"),
    Switch("vllm", "mtp", None, "torch.ops._C.fused_gdn_decode_post_conv_mtp (CUDA, conv + recurrence + gated norm)",
           "VLLM_GDN_DECODE_KERNEL=cuda", (8, 9, 10, 12),
           "the variable is unset (cuda) with a speculative config, a bf16 model with K = V = 128, bf16 conv cache, "
           "fp32 or bf16 states, value/key heads 1, 2, 3, 4 or 8, T <= 9, no plain decodes in the batch, and the op "
           "built", "qlabench has no backend for it", f"{_QWEN_GDN}:125, 868-889, 941-963, 2425-2440"),
    Switch("vllm", "mtp", "vllm-mtp", "fused_sigmoid_gating_delta_rule_update (Triton, FLA-derived)",
           "VLLM_GDN_DECODE_KERNEL=triton", (),
           "the variable is unset where the fused CUDA kernel's conditions fail",
           "", f"{_QWEN_GDN}:868-889, 1970-1990"),
    # --- SGLang 0.5.23: prefill. --linear-attn-prefill-backend, else the automatic FlashInfer rule, else
    # --linear-attn-backend (default triton): utils.py:81-94, arg_groups/fields/exec_.py:542-568.
    Switch("sglang", "prefill", "flashinfer", "FlashInferGDNKernel.extend -> flashinfer.gdn_prefill.chunk_gated_delta_rule",
           "--linear-attn-prefill-backend flashinfer", (9, 10),
           "no prefill backend given and --linear-attn-backend triton (the default), no deterministic inference, "
           "a fixed --chunked-prefill-size of at most 32768 (SM90) / 8192 (SM10x, CUDA 13 or later), K = V = 128, "
           "and a state pool of fp32 (SM90) / bf16 (SM10x) (--mamba-ssm-dtype, else the model's config)",
           "passes neither use_cp (FlashInfer's default \"auto\") nor max_seqlen nor backend (" + _FI_AUTO + "); "
           "states gathered from the pool and written back with index_copy_",
           f"{_SGL_GDN}:191-236; {_SGL_FI}:535-589"),
    Switch("sglang", "prefill", "fla", "sglang.kernels.ops.attention.fla.chunk.chunk_gated_delta_rule (Triton)",
           "--linear-attn-prefill-backend triton", (),
           "where the FlashInfer rule does not hold (--linear-attn-backend triton is the default)",
           "SGLang's own FLA-derived chunk kernel, reading and writing the pool through initial_state_indices, "
           "not upstream FLA", f"{_SGL_TRITON}:169-215"),
    Switch("sglang", "prefill", None, "the CuTe DSL GDN prefill", "--linear-attn-prefill-backend cutedsl", (), "",
           "SM10x only (elsewhere it falls back to Triton); qlabench has no backend for it", f"{_SGL_GDN}:306-326"),
    # --- SGLang 0.5.23: decode and verify. Decode: --linear-attn-decode-backend, else --linear-attn-backend;
    # verify: --linear-attn-verify-backend, else flashinfer when decode is flashinfer, else triton (utils.py:96-99).
    Switch("sglang", "decode", "sglang-decode", "fused_recurrent_gated_delta_rule_packed_decode (Triton, FLA-derived)",
           "--linear-attn-decode-backend triton", (8, 9, 10, 12),
           "no decode backend given (--linear-attn-backend triton), except on SM10x with --mamba-ssm-dtype bfloat16",
           "", f"{_SGL_TRITON}:121-132; {_SGL_GDN}:866-867"),
    Switch("sglang", "decode", "flashinfer-decode-pt", "flashinfer.gdn_decode.gated_delta_rule_decode_pretranspose",
           "--linear-attn-decode-backend flashinfer", (10,),
           "no decode backend given and --mamba-ssm-dtype bfloat16 on SM10x",
           "on SM10x the pool and slot indices, as qlabench times it; on SM90 SGLang gathers the batch's states, "
           "calls it without a pool and scatters them back", f"{_SGL_FI}:441-475; "
           "sglang/srt/arg_groups/attention_hook.py:289-307"),
    Switch("sglang", "mtp", "sglang-mtp", "fused_sigmoid_gating_delta_rule_update(disable_state_update=True) (Triton)",
           "--linear-attn-verify-backend triton", (8, 9, 10, 12), "the decode backend is not flashinfer",
           "SGLang's verify keeps the states untouched and writes each draft token's state to a scratch buffer; "
           "qlabench's sglang-mtp times fused_recurrent_gated_delta_rule_update writing the last state in place",
           f"{_SGL_TRITON}:217-257"),
    Switch("sglang", "mtp", "flashinfer-mtp", "flashinfer.gdn_decode.gated_delta_rule_mtp(disable_state_update=True)",
           "--linear-attn-verify-backend flashinfer (or --linear-attn-decode-backend flashinfer)", (10,),
           "the decode backend is flashinfer (the SM10x bf16-state default); SM90 and SM10x only",
           "SGLang keeps the states untouched and writes the draft tokens' states to a buffer; qlabench's "
           "flashinfer-mtp writes the last state in place (fp32 pool)", f"{_SGL_FI}:701-715; "
           "sglang/srt/layers/attention/linear/utils.py:96-99"),
)

# Backends a phase's answer may name that no switch of an engine selects, and why (per engine).
_NO_FLASHQLA = "neither vLLM nor SGLang ships or calls FlashQLA: no flag or variable selects it"
NOT_SELECTABLE: dict[str, dict[str, str]] = {
    "vllm": {
        "flash_qla": _NO_FLASHQLA, "flash_qla-nocp": _NO_FLASHQLA, "flash_qla-forcecp": _NO_FLASHQLA,
        "flashinfer-nocp": "vLLM always passes use_cp=\"auto\" (qwen_gdn_linear_attn.py:405, 442): no switch "
                           "turns FlashInfer's CP off",
        "flashinfer-forcecp": "vLLM always passes use_cp=\"auto\": no switch forces FlashInfer's CP",
        "flashinfer-pool": "vLLM gathers the states and passes no state_indices: the pool call is not selectable",
        "fla-intracp": "vLLM's copy of FLA has no intra-card CP switch",
        "flashinfer-gate": "vLLM computes the gate itself (fused_post_conv_prep) and passes g exponentiated: it never "
                           "passes use_gate_in_kernel",
        "flashinfer-decode-pt": "vLLM 0.34 calls no FlashInfer GDN decode kernel",
        "flashinfer-decode": "vLLM 0.34 calls no FlashInfer GDN decode kernel",
        "flashinfer-mtp": "vLLM 0.34 calls no FlashInfer GDN verify kernel",
        "fla-recurrent": "vLLM runs its own FLA-derived recurrent kernels (vllm-decode, vllm-mtp), not upstream FLA's",
        "sglang-decode": "SGLang's kernel", "sglang-mtp": "SGLang's kernel",
    },
    "sglang": {
        "flash_qla": _NO_FLASHQLA, "flash_qla-nocp": _NO_FLASHQLA, "flash_qla-forcecp": _NO_FLASHQLA,
        "flashinfer-nocp": "SGLang passes no use_cp (FlashInfer's default, \"auto\"): no switch turns its CP off",
        "flashinfer-forcecp": "SGLang passes no use_cp: no switch forces FlashInfer's CP",
        "flashinfer-pool": "SGLang gathers the states and passes no state_indices: the pool call is not selectable",
        "flashinfer-gate": "SGLang 0.5.23 computes the gate itself and passes no use_gate_in_kernel (FlashInfer 0.7.4 "
                           "added it; SGLang pins 0.7.2)",
        "fla-intracp": "SGLang's copy of FLA has no intra-card CP switch",
        "flashinfer-decode": "SGLang calls FlashInfer's pretranspose decode ([V, K] states), not gated_delta_rule_decode",
        "fla-recurrent": "SGLang runs its own FLA-derived recurrent kernels (sglang-decode), not upstream FLA's",
        "vllm-decode": "vLLM's kernel", "vllm-mtp": "vLLM's kernel",
    },
}

# SM major of a GPU, from its name as rows record it ('NVIDIA H200'): the engines' automatic rules are per SM.
_SM_BY_NAME = (("GB300", 10), ("GB200", 10), ("B300", 10), ("B200", 10), ("B100", 10), ("GH200", 9), ("H200", 9),
               ("H100", 9), ("H800", 9), ("H20", 9), ("RTX PRO 6000 Blackwell", 12), ("RTX 50", 12),
               ("A100", 8), ("A800", 8), ("A10", 8), ("A30", 8))


def sm_major(device: str | None) -> int | None:
    """The SM major of a GPU named as rows record it; None for a name the table does not hold (a CPU)."""
    if not device:
        return None
    for part, sm in _SM_BY_NAME:
        if part.lower() in device.lower():
            return sm
    return None


def switches(engine: str, phase: str, backend: str | None = None) -> list[Switch]:
    """The engine's switches for a phase, in the table's order; only those running `backend` when given."""
    return [s for s in SWITCHES if s.engine == engine and s.phase == phase
            and (backend is None or s.backend == backend)]


def default_switch(engine: str, phase: str, sm: int | None) -> Switch | None:
    """The switch that is the engine's default for a phase on a GPU of SM major `sm` (the first whose
    condition names that SM); None where the table names none or the SM is unknown."""
    if sm is None:
        return None
    return next((s for s in switches(engine, phase) if sm in s.default_sm), None)
