"""The serving engines' own GDN decode and verify kernels: vLLM 0.33's and SGLang 0.5's FLA-derived Triton
kernels, which index the state pool inside the kernel and update it in place (docs/SERVING.md, "The
engines' own kernels").

Upstream fla-core has no slot-indexed pool, so `fla-recurrent` gathers and scatters around its kernel; these
backends time what the engines run instead:
- `vllm-decode`: `fused_recurrent_gated_delta_rule_packed_decode` (vLLM's decode path with
  VLLM_ENABLE_FLA_PACKED_RECURRENT_DECODE, on by default): q, k, v packed in one `mixed_qkv` row per
  sequence, the raw gates, `ssm_state_indices` [B]. Slot 0 is vLLM's NULL_BLOCK_ID (the kernel skips it),
  so the engine's pool has one unused slot in front (`lead_slots`).
- `vllm-mtp`: `fused_sigmoid_gating_delta_rule_update`, the call vLLM's verify makes: `ssm_state_indices`
  [B, T] gives every draft token a slot of its own (the engine keeps them to roll back to the accepted
  token), `num_accepted_tokens` says which column holds the state to start from. Here the start state
  and the last token's state are the sequence's pool slot (column T - 1, num_accepted_tokens = T), the
  first T - 1 tokens' states go to scratch slots after the pool: T state writes per sequence, as in vLLM.
- `sglang-decode`: SGLang's `fused_recurrent_gated_delta_rule_packed_decode` (its Triton decode kernel,
  `gdn_triton.py`), the same interface.
- `sglang-mtp`: SGLang's `fused_recurrent_gated_delta_rule_update` with `disable_state_update=False`: the
  T tokens advance the state and the last one is written back in place. SGLang's own verify (ReplaySSM:
  `disable_state_update=True` and a ring of raw inputs folded in at commit) is a different call.
All take states as [pool, HV, V, K] ("vk"), fp32 or bf16. The raw gates (g = -exp(A_log) softplus(a +
dt_bias), beta = sigmoid(b)) are inverted once outside the timed call, as for FlashInfer
(flashinfer_decode.raw_gates); q and k are passed normalised (`use_qk_l2norm_in_kernel=False`).

Where the kernels come from: the engine's installed package, or a site folder made by
scripts/engine-kernels-site.sh from the engines' wheels (only the kernel files, byte for byte, and shims for
the engine modules they import: importing them from a whole engine package imports the engine), named by
QLABENCH_ENGINE_KERNELS or found on the path. `available()` says which, or exactly why neither imports;
every row records the source in its details (`engine`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import torch

from qlabench.backends._gpu import needs_cuda
from qlabench.backends.base import Backend
from qlabench.backends.decode import ServingSteps
from qlabench.backends.flashinfer_decode import KernelArgs, kernel_args
from qlabench.core.backend_needs import ENGINE_SITE_ENV, ENGINE_SITE_HINT
from qlabench.core.point import Point
from qlabench.measure.inputs import GDNInputs

SITE_ENV = ENGINE_SITE_ENV
MANIFEST = "qlabench-engine-kernels.json"
# Per engine: the kernel modules and the functions the backends call in them.
MODULES = {
    "vllm": {"vllm.third_party.flash_linear_attention.ops.fused_recurrent":
             ("fused_recurrent_gated_delta_rule_packed_decode",),
             "vllm.third_party.flash_linear_attention.ops.fused_sigmoid_gating":
             ("fused_sigmoid_gating_delta_rule_update",)},
    "sglang": {"sglang.kernels.ops.attention.fla.fused_recurrent":
               ("fused_recurrent_gated_delta_rule_packed_decode", "fused_recurrent_gated_delta_rule_update")},
}
SITE_HINT = ENGINE_SITE_HINT
# FLA's own recurrent kernel (and vLLM's copy of it) and FlashQLA must not run inside these calls.
FORBID = ("tilelang_", "fused_recurrent_gated_delta_rule_fwd_kernel")
CUDA_GRID_YZ = 65535


def _file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def kernel_source(engine: str, module: ModuleType) -> tuple[dict, str]:
    """Where `module` came from, and why it must not be used ("" when it may): a kernel site's manifest entry
    (its kernel files must be the ones the manifest names, byte for byte), or the installed package's version."""
    depth = module.__name__.count(".") + 1
    root = Path(module.__file__).resolve().parents[depth - 1]
    manifest = root / MANIFEST
    if manifest.is_file():
        entry = json.loads(manifest.read_text()).get(engine)
        if not entry:
            return {}, f"{manifest} has no {engine} entry: rebuild the site with the {engine} wheel"
        rel = module.__name__.replace(".", "/") + ".py"
        want = entry.get("kernel_files", {}).get(rel)
        if want is None or want != _file_sha256(str(root / rel)):
            return {}, f"{root / rel} is not the file {manifest.name} names (edited, or another wheel's)"
        return {"engine": engine, "version": entry.get("version"), "from": "kernel site", "site": str(root),
                "wheel": entry.get("wheel"), "shims": entry.get("shims", [])}, ""
    try:
        version = metadata.version(engine)
    except metadata.PackageNotFoundError:
        version = None
    return {"engine": engine, "version": version, "from": "installed package", "path": str(root)}, ""


@lru_cache(maxsize=None)
def import_engine(engine: str) -> tuple[dict[str, ModuleType] | None, dict, str]:
    """(the engine's kernel modules by name, where they came from, why they cannot be used: "" when they can)."""
    site = os.environ.get(SITE_ENV)
    if site:
        if not (Path(site) / MANIFEST).is_file():
            return None, {}, f"{SITE_ENV}={site} is not a kernel site (no {MANIFEST}): {SITE_HINT}"
        if site not in sys.path:
            sys.path.insert(0, site)
    mods, source = {}, {}
    for name, functions in MODULES[engine].items():
        if importlib.util.find_spec(engine) is None:
            return None, {}, f"{engine} is not installed and no kernel site provides it: {SITE_HINT}"
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and e.name.split(".")[0] != engine:  # a library the kernels need (triton), not the engine
                return None, {}, f"import {name} failed: it needs {e.name}, which is not installed"
            return None, {}, (f"import {name} failed: {e}"[:300]
                              + f" (importing an engine's kernel module imports the engine's packages: {SITE_HINT})")
        except Exception as e:  # the engine's own imports: its platform layer and server dependencies
            return None, {}, (f"import {name} failed: {type(e).__name__}: {e}"[:300]
                              + f" (importing an engine's kernel module imports the engine's packages: {SITE_HINT})")
        missing = [f for f in functions if not hasattr(mod, f)]
        if missing:
            return None, {}, f"{name} has no {', '.join(missing)} (this backend follows vllm 0.33 / sglang 0.5)"
        source, why = kernel_source(engine, mod)
        if why:
            return None, {}, why
        mods[name] = mod
    return mods, source, ""


class _EngineServing(ServingSteps, Backend):
    engine: ClassVar[str]
    module: ClassVar[str]
    api: ClassVar[str]
    state_layouts = ("vk",)
    state_dtypes = ("float32", "bfloat16")
    forbid_kernels = FORBID
    # The kernel's grid has B x HV programs on its y or z axis, which CUDA caps at 65535 (vLLM's packed decode
    # splits the axis beyond that; the others launch as they are and fail).
    batch_heads_on_one_axis: ClassVar[bool] = True

    def available(self) -> tuple[bool, str]:
        mods, _, why = import_engine(self.engine)
        if mods is None:
            return False, why
        why = needs_cuda()
        return not why, why or ""

    def found_versions(self) -> dict[str, str]:
        """The engine's version as its kernels' source names it: the installed package's, or the wheel a kernel
        site was built from (no installed distribution says that one)."""
        mods, source, _ = import_engine(self.engine)
        return {self.engine: source["version"]} if mods is not None and source.get("version") else {}

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.K > 256:  # one block holds the whole key dimension (NK = 1 in every wrapper)
            return False, f"{self.name}: the kernel holds K in one block (K <= 256, got {point.K})"
        if self.batch_heads_on_one_axis and point.batch * point.h_v > CUDA_GRID_YZ:
            return False, (f"{self.engine}'s {self.api} launches batch x value heads = {point.batch * point.h_v} "
                           f"programs on one grid axis, above CUDA's {CUDA_GRID_YZ} for grid y and z: the engine's "
                           "kernel cannot run this step")
        return super().check_point(point, device)

    def _fn(self):
        mods, _, why = import_engine(self.engine)
        if mods is None:
            raise RuntimeError(f"{self.engine} kernels unavailable: {why}")
        return getattr(mods[self.module], self.api)

    def point_details(self, fn, kernels, kernel_dur_us, median_ms, time_ms) -> dict:
        details = super().point_details(fn, kernels, kernel_dur_us, median_ms, time_ms)
        details["engine"] = import_engine(self.engine)[1]
        return details


class _PackedDecode(_EngineServing):
    """`fused_recurrent_gated_delta_rule_packed_decode`: one token per sequence, q k v packed per row."""

    max_tokens_per_step = 1
    api = "fused_recurrent_gated_delta_rule_packed_decode"
    expect_kernels = ("fused_recurrent_gated_delta_rule_packed_decode_kernel",)

    def convert(self, inp: GDNInputs) -> tuple[torch.Tensor, KernelArgs]:
        x = kernel_args(inp)
        B = x.q.shape[0]
        mixed = torch.cat([x.q.reshape(B, -1), x.k.reshape(B, -1), x.v.reshape(B, -1)], dim=1).contiguous()
        return mixed, x

    def step(self, args, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        mixed, x = args
        B, _, HV, V = x.v.shape
        out = torch.empty(B, 1, HV, V, dtype=torch.bfloat16, device=mixed.device)  # no kernel: timed for free
        o, _ = self._fn()(mixed, x.a.reshape(B, HV), x.b.reshape(B, HV), x.A_log, x.dt_bias, x.scale, pool, out,
                          slots, use_qk_l2norm_in_kernel=False)
        return o


class VLLMDecode(_PackedDecode):
    engine = "vllm"
    module = "vllm.third_party.flash_linear_attention.ops.fused_recurrent"
    lead_slots = 1
    batch_heads_on_one_axis = False  # it launches (NV, HV, B) when B x HV passes 65535


class SGLangDecode(_PackedDecode):
    engine = "sglang"
    module = "sglang.kernels.ops.attention.fla.fused_recurrent"


class VLLMVerify(_EngineServing):
    engine = "vllm"
    module = "vllm.third_party.flash_linear_attention.ops.fused_sigmoid_gating"
    api = "fused_sigmoid_gating_delta_rule_update"
    expect_kernels = ("fused_sigmoid_gating_delta_rule_update_kernel",)
    lead_slots = 1

    def scratch_slots(self, batch: int, tokens: int) -> int:
        return batch * (tokens - 1)

    def kernel_slots(self, slots: torch.Tensor, scratch_start: int, tokens: int) -> torch.Tensor:
        # column T - 1: the sequence's own slot (start and final state); columns 0..T-2: its draft tokens' slots
        B = slots.numel()
        idx = torch.empty(B, tokens, dtype=torch.int32, device=slots.device)
        idx[:, tokens - 1] = slots.long() + self.lead_slots
        idx[:, : tokens - 1] = scratch_start + torch.arange(B * (tokens - 1), device=slots.device).view(B, -1)
        return idx

    def convert(self, inp: GDNInputs) -> tuple[KernelArgs, torch.Tensor]:
        x = kernel_args(inp)
        B, T = x.q.shape[:2]
        return x, torch.full((B,), T, dtype=torch.int32, device=x.q.device)

    def step(self, args, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        x, accepted = args
        o, _ = self._fn()(A_log=x.A_log, a=x.a, b=x.b, dt_bias=x.dt_bias, q=x.q, k=x.k, v=x.v, scale=x.scale,
                          initial_state=pool, inplace_final_state=True, ssm_state_indices=slots,
                          num_accepted_tokens=accepted, use_qk_l2norm_in_kernel=False)
        return o


class SGLangVerify(_EngineServing):
    engine = "sglang"
    module = "sglang.kernels.ops.attention.fla.fused_recurrent"
    api = "fused_recurrent_gated_delta_rule_update"
    expect_kernels = ("fused_recurrent_gated_delta_rule_update_fwd_kernel",)

    def convert(self, inp: GDNInputs) -> tuple[torch.Tensor, ...]:
        bf = lambda t: t.to(torch.bfloat16).contiguous()  # noqa: E731
        return bf(inp.q), bf(inp.k), bf(inp.v), inp.g.float().contiguous(), inp.beta.float().contiguous(), inp.scale

    def step(self, args, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        q, k, v, g, beta, scale = args
        return self._fn()(q, k, v, g, beta, scale=scale, initial_state_source=pool, initial_state_indices=slots,
                          use_qk_l2norm_in_kernel=False, disable_state_update=False)


def engine_backends() -> tuple[Backend, ...]:
    return VLLMDecode(), VLLMVerify(), SGLangDecode(), SGLangVerify()
