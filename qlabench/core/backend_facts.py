"""What each registered backend declares about its library, in one table that needs no torch: the call a
user makes to get what the backend times, the modules of its library that autotune, and whether its code
path depends on the problem's size.

The backends read their own entry by name (`Backend.call_signature`, `autotune_modules` and
`size_dependent_path` in backends/base.py), and `advise`, `site` and the docs' blocks read the table
directly (`view_facts`): a view that only needs these facts answers without importing torch or any GPU
library (the registry imports torch). `tests/backends/test_registry.py` checks that the table and the
registry name the same backends.
"""

from __future__ import annotations

from dataclasses import dataclass

from qlabench.core.layer_shapes import LAYER_CORES, layer_backend_name


@dataclass(frozen=True)
class BackendFacts:
    # The library call a user makes to get what this backend times, with the arguments that select it
    # (and any switch outside the call): `advise` tells the user to make it. "" for qlabench's own kernels.
    call_signature: str = ""
    # Module prefixes of a library whose Triton kernels autotune (FLA's): such a backend's choice of
    # configs depends on the first shape its process met unless each point re-tunes (`[run] autotune`,
    # measure/probes/autotune.retune). Empty: nothing of it autotunes.
    autotune_modules: tuple[str, ...] = ()
    # Whether the code path a call takes depends on the problem's size, as an intra-card CP that splits
    # only long sequences does. The reduced-size check may then have run another path than the timed call;
    # run_point traces the check's kernels too and, when `call_path` differs, checks the timed call's
    # outputs at full size (run/point.py, check_timed_path).
    size_dependent_path: bool = False
    # A backend that exists to test qlabench itself (a fault injector, a calibrated sleep, a deliberate
    # mis-dispatch; `Backend.testing`): its rows test the harness, so no view recommends it.
    testing: bool = False


_FLASH_QLA = ("flash_qla.chunk_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=h0, "
              "output_final_state=True, cu_seqlens=cu_seqlens, ")
_FLA = ("fla.ops.gated_delta_rule.chunk_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=h0, "
        "output_final_state=True, cu_seqlens=cu_seqlens)")
# g goes in as alpha = exp(g); on 0.7, max_seqlen and backend as an engine passes them (version_args).
_FLASHINFER = ("flashinfer.gdn_prefill.chunk_gated_delta_rule(q, k, v, g=exp(g), beta=beta, scale=scale, "
               "initial_state=h0.transpose(-1, -2), output_final_state=True, cu_seqlens=cu_seqlens, "
               "max_seqlen=max_seqlen, backend=\"flashinfer\"")
# FLA's chunk kernels are @triton.autotune'd on keys without the length.
_FLA_AUTOTUNES = ("fla.",)

_OWN = BackendFacts()  # qlabench's own kernels and the serving steps: nothing to declare
_TESTING = BackendFacts(testing=True)  # the test-only backends

# Every registered backend but the layer ones, in the registry's order (backends/registry.py).
_CORE_FACTS: dict[str, BackendFacts] = {
    "naive-recurrent": _OWN,
    "naive-chunk": _OWN,
    "naive-step": _OWN,
    # auto_cp splits a call only when its sequences x value heads leave SMs idle: the check's short problem
    # may run unsplit where the timed call splits.
    "flash_qla": BackendFacts(_FLASH_QLA + "auto_cp=True)", size_dependent_path=True),
    "flash_qla-nocp": BackendFacts(_FLASH_QLA + "auto_cp=False)"),  # never splits, at any size
    "flash_qla-forcecp": BackendFacts(_FLASH_QLA + "auto_cp=True, force_intra_cp=True)", size_dependent_path=True),
    "fla": BackendFacts(_FLA + " with FLA_FLASH_QLA=0 FLA_INTRACARD_CP=0 in the environment",
                        autotune_modules=_FLA_AUTOTUNES),
    # FLA splits only a sequence at least three sub-sequence lengths long: never the check's short problem.
    "fla-intracp": BackendFacts(_FLA + " under torch.inference_mode(), with FLA_FLASH_QLA=0 FLA_INTRACARD_CP=1 in "
                                "the environment", autotune_modules=_FLA_AUTOTUNES, size_dependent_path=True),
    "fla-recurrent": BackendFacts(autotune_modules=_FLA_AUTOTUNES),
    # the same call as `fla`'s, with FLA's default dispatch: a provenance test, never advised as a call
    "fla-dispatch-on": BackendFacts(_FLA + " with FLA_FLASH_QLA=0 FLA_INTRACARD_CP=0 in the environment",
                                    autotune_modules=_FLA_AUTOTUNES, testing=True),
    # 0.7.x decides per call whether to split it, by the sequences' lengths: the check's short problem may
    # run unsplit where the timed call splits.
    "flashinfer": BackendFacts(_FLASHINFER + ")  # use_cp left to FlashInfer (auto)", size_dependent_path=True),
    "flashinfer-nocp": BackendFacts(_FLASHINFER + ", use_cp=False)"),  # never splits, at any size
    # Forced, the split is decided by the argument, not the size; still traced per call, so a check on a
    # problem the CP refuses (FlashInfer raises then) or runs otherwise is never taken for the timed one.
    "flashinfer-forcecp": BackendFacts(_FLASHINFER + ", use_cp=True)", size_dependent_path=True),
    # prefill into a state pool through slot indices (0.7.2), in place; splits by size as `flashinfer` does
    "flashinfer-pool": BackendFacts("flashinfer.gdn_prefill.chunk_gated_delta_rule(q, k, v, g=exp(g), beta=beta, "
                                    "scale=scale, initial_state=pool, output_state=pool, state_indices=slots, "
                                    "output_final_state=True, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen, "
                                    "backend=\"flashinfer\")  # pool [P, HV, V, K] fp32, updated in place; use_cp "
                                    "left to FlashInfer (auto)", size_dependent_path=True),
    "flashinfer-decode": _OWN,
    "flashinfer-decode-pt": _OWN,
    "flashinfer-mtp": _OWN,
    "vllm-decode": _OWN,
    "vllm-mtp": _OWN,
    "sglang-decode": _OWN,
    "sglang-mtp": _OWN,
    "fault": _TESTING,
    "synthetic": _TESTING,
}

# `layer:<core>` (backends/layer/): the layer autotunes where its core does; it is no library call of its own,
# and the layer around a size-dependent core is checked as the layer (its own path is not traced apart).
FACTS: dict[str, BackendFacts] = {
    **_CORE_FACTS,
    **{layer_backend_name(c): BackendFacts(autotune_modules=_CORE_FACTS[c].autotune_modules) for c in LAYER_CORES},
}


def facts_of(name: str) -> BackendFacts:
    """A backend's declared facts; a backend the table does not name (a test's stand-in) declares none."""
    return FACTS.get(name, _OWN)


def is_testing(name: str) -> bool:
    """Whether `name` is a test-only backend (its rows time the harness; never recommended)."""
    return facts_of(name).testing


def view_facts() -> dict:
    """What `advise`, `site` and the docs' blocks are told of the registered backends: {backend: its library
    call} (every registered name, "" where it declares none), the backends that autotune and those whose path
    depends on the size (the keyword arguments of `analyze.advise.advise`)."""
    return dict(calls={name: f.call_signature for name, f in FACTS.items()},
                autotuning=frozenset(name for name, f in FACTS.items() if f.autotune_modules),
                size_dependent=frozenset(name for name, f in FACTS.items() if f.size_dependent_path))
