"""How each serving backend's step reaches the state pool: a fact of the library behind it, said beside its
rows wherever they are shown (the serving page). Pure Python.

A kernel that takes slot indices reads and writes the batch's states in the pool itself; a library without a
pool argument makes its caller gather the batch's states into a dense tensor and scatter them back, which is
traffic and time an engine using that library pays, but not the kernel's. Upstream FLA is such a library,
while vLLM and SGLang run their own FLA-derived kernels that index the pool: the FLA rows are not FLA as an
engine runs it.
"""

from __future__ import annotations

IN_KERNEL = "slot indices in the kernel"
GATHER_SCATTER = "gather + kernel + scatter"
REFERENCE = "reference"

# backend -> (how the step reaches the pool, what that means for reading its rows)
POOL_ACCESS: dict[str, tuple[str, str]] = {
    "fla-recurrent": (GATHER_SCATTER, "upstream fla-core has no slot-indexed pool, so qlabench gathers and scatters "
                      "around its kernel; vLLM and SGLang run their own FLA-derived kernels that index the pool "
                      "(vllm-*, sglang-*): these rows are not FLA as an engine runs it"),
    "flashinfer-decode": (GATHER_SCATTER, "gated_delta_rule_decode takes the batch's states as one dense tensor"),
    "naive-step": (GATHER_SCATTER, "the PyTorch reference step"),
    "naive-recurrent": (REFERENCE, "the oracle: the fp32 recurrence from the batch's states, no pool step"),
    "flashinfer-decode-pt": (IN_KERNEL, "gated_delta_rule_decode_pretranspose: pool + initial_state_indices"),
    "flashinfer-mtp": (IN_KERNEL, "gated_delta_rule_mtp: pool + slot indices"),
    "vllm-decode": (IN_KERNEL, "vLLM's packed decode: pool + ssm_state_indices (slot 0 reserved)"),
    "vllm-mtp": (IN_KERNEL, "vLLM's verify: a slot per draft token, T states written per sequence"),
    "sglang-decode": (IN_KERNEL, "SGLang's packed decode: pool + ssm_state_indices"),
    "sglang-mtp": (IN_KERNEL, "SGLang's update kernel, last state written in place"),
}
