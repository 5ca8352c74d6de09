"""The engines' own decode/verify backends (backends/engine_decode.py) on CPU.

The Triton kernels cannot run here, so each backend's call goes to a PyTorch stand-in with the engine
kernel's contract as its source states it (vLLM 0.33 / SGLang 0.5): slot 0 skipped by vLLM (NULL_BLOCK_ID),
vLLM's verify reading the state at column num_accepted_tokens - 1 of a [B, T] index tensor and writing every
token's state to its own column, the packed row layout [q | k | v], the raw gates. Through the row pipeline
the check must then pass: o and the final states against the oracle, every other pool slot bit for bit.
The real kernels run in tests/gpu/test_serving_gpu.py. Where the kernels come from (a site folder made by
scripts/engine-kernels-site.sh, or why they do not import) is tested with fake wheels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from qlabench.backends import REGISTRY
from qlabench.backends import engine_decode as ed
from qlabench.core.spec import parse_suite
from qlabench.run.options import InProcess, RunOptions
from qlabench.run.sweep import run_sweep

REPO = Path(__file__).resolve().parents[2]


def _gates(A_log, a, dt_bias, b):
    x = a.float() + dt_bias.float()
    return -A_log.float().exp() * F.softplus(x, beta=1.0, threshold=20.0), b.float().sigmoid()


def _token(h, q, k, v, g, beta, scale):
    """One token of the engines' kernels: h [HV, V, K] fp32, q k [HV, K] (per value head), v [HV, V]."""
    h = h * g.exp()[:, None, None]
    u = (v - (h @ k[..., None]).squeeze(-1)) * beta[:, None]
    h = h + u[:, :, None] * k[:, None, :]
    return h, (h @ (q * scale)[..., None]).squeeze(-1)


def packed_decode(null_slot: bool):
    def fn(mixed, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices, use_qk_l2norm_in_kernel=False):
        _, HV, V, K = initial_state.shape
        H = (mixed.shape[1] - HV * V) // (2 * K)
        g, beta = _gates(A_log, a, dt_bias, b)
        for n in range(mixed.shape[0]):
            idx = int(ssm_state_indices[n])
            if idx < 0 or (null_slot and idx == 0):
                out[n] = 0
                continue
            row = mixed[n].float()
            q = row[: H * K].view(H, K).repeat_interleave(HV // H, 0)
            k = row[H * K: 2 * H * K].view(H, K).repeat_interleave(HV // H, 0)
            h, o = _token(initial_state[idx].float(), q, k, row[2 * H * K:].view(HV, V), g[n], beta[n], scale)
            out[n, 0] = o.to(out.dtype)
            initial_state[idx] = h.to(initial_state.dtype)
        return out, initial_state
    return fn


def vllm_verify(A_log, a, b, dt_bias, q, k, v, scale, initial_state, inplace_final_state, ssm_state_indices,
                num_accepted_tokens, use_qk_l2norm_in_kernel=False):
    B, T, H, _ = q.shape
    HV = v.shape[2]
    g, beta = _gates(A_log, a, dt_bias, b)
    o = torch.empty(v.shape, dtype=q.dtype)
    for n in range(B):
        start = int(ssm_state_indices[n, int(num_accepted_tokens[n]) - 1])
        if start <= 0:
            continue
        h = initial_state[start].float()
        for t in range(T):
            h, ot = _token(h, q[n, t].float().repeat_interleave(HV // H, 0), k[n, t].float().repeat_interleave(
                HV // H, 0), v[n, t].float(), g[n, t], beta[n, t], scale)
            o[n, t] = ot.to(o.dtype)
            if int(ssm_state_indices[n, t]) > 0:
                initial_state[int(ssm_state_indices[n, t])] = h.to(initial_state.dtype)
    return o, initial_state


def sglang_update(q, k, v, g, beta, scale, initial_state_source, initial_state_indices, use_qk_l2norm_in_kernel,
                  disable_state_update):
    B, T, H, _ = q.shape
    HV = v.shape[2]
    o = torch.empty(v.shape, dtype=q.dtype)
    for n in range(B):
        idx = int(initial_state_indices[n])
        h = initial_state_source[idx].float() if idx >= 0 else torch.zeros(initial_state_source.shape[1:])
        for t in range(T):
            h, ot = _token(h, q[n, t].float().repeat_interleave(HV // H, 0), k[n, t].float().repeat_interleave(
                HV // H, 0), v[n, t].float(), g[n, t].float(), beta[n, t].float(), scale)
            o[n, t] = ot.to(o.dtype)
        if not disable_state_update and idx >= 0:
            initial_state_source[idx] = h.to(initial_state_source.dtype)
    return o


def emulated(cls, fn, name):
    return type(f"Emu{cls.__name__}", (cls,), {"name": name, "devices": frozenset({"cpu"}),
                                               "available": lambda self: (True, ""), "_fn": lambda self: fn,
                                               "point_details": lambda self, *a: {}})()


EMULATED = {b.name: b for b in (emulated(ed.VLLMDecode, packed_decode(True), "emu-vllm-decode"),
                                emulated(ed.SGLangDecode, packed_decode(False), "emu-sglang-decode"),
                                emulated(ed.VLLMVerify, vllm_verify, "emu-vllm-mtp"),
                                emulated(ed.SGLangVerify, sglang_update, "emu-sglang-mtp"))}


def run(tmp_path, backends, modes, seqlen):
    s = parse_suite({"name": "engines", "device": "cpu", "sweep": {
        "backends": backends, "modes": modes, "batch": [1, 3], "seqlen": [seqlen], "heads": [{"h_qk": 1, "h_v": 2}],
        "K": 8, "V": 8, "dtype": "bfloat16", "gate": "fla", "state_dtype": ["float32", "bfloat16"],
        "state_layout": ["vk"], "pool_factor": 2},
        "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}})
    return run_sweep(s, tmp_path, RunOptions(executor=InProcess({**REGISTRY, **EMULATED}))).rows


@pytest.mark.parametrize("backend", ["emu-vllm-decode", "emu-sglang-decode"])
def test_the_packed_decode_call_passes_the_check_with_every_other_slot_untouched(tmp_path, backend):
    out = run(tmp_path, [backend], ["decode"], 1)
    assert len(out) == 4 and all(r.status == "ok" for r in out), [r.reason for r in out]
    assert all(r.err_pool == 0.0 for r in out)


@pytest.mark.parametrize("backend", ["emu-vllm-mtp", "emu-sglang-mtp"])
def test_the_verify_call_passes_the_check_with_every_other_slot_untouched(tmp_path, backend):
    out = run(tmp_path, [backend], ["mtp"], 3)
    assert len(out) == 4 and all(r.status == "ok" for r in out), [r.reason for r in out]
    assert all(r.err_pool == 0.0 for r in out)


def test_vllm_never_gets_slot_zero_and_its_draft_tokens_get_slots_of_their_own():
    b = REGISTRY["vllm-mtp"]
    slots = torch.tensor([0, 5, 2], dtype=torch.int32)
    idx = b.kernel_slots(slots, scratch_start=1 + 6, tokens=3)
    assert idx.dtype == torch.int32 and idx[:, 2].tolist() == [1, 6, 3]  # the pool's slots, past slot 0
    assert sorted(idx[:, :2].flatten().tolist()) == list(range(7, 13))  # 2 draft slots each, after the pool
    assert b.scratch_slots(3, 3) == 6 and b.lead_slots == 1
    assert REGISTRY["vllm-decode"].kernel_slots(slots, 7, 1).tolist() == [1, 6, 3]
    assert REGISTRY["sglang-decode"].kernel_slots(slots, 6, 1).tolist() == [0, 5, 2]  # SGLang: slot 0 is a slot


def test_the_engine_backends_are_registered_for_the_vk_pool():
    for name, mode in (("vllm-decode", "decode"), ("vllm-mtp", "mtp"), ("sglang-decode", "decode"),
                       ("sglang-mtp", "mtp")):
        b = REGISTRY[name]
        assert b.modes == frozenset({mode}) and b.state_layouts == ("vk",) and b.expect_kernels
        assert "fused_recurrent_gated_delta_rule_fwd_kernel" in b.forbid_kernels  # not FLA's own kernel


# -- where the kernels come from ---------------------------------------------------------------------------

FAKE_KERNEL = "def {}(*args, **kwargs):\n    raise RuntimeError('a fake kernel')\n"


def fake_wheel(tmp_path: Path, engine: str, version: str, functions: dict[str, list[str]]) -> Path:
    """A wheel holding the files the site script copies, kernel modules defining `functions`."""
    wheel = tmp_path / f"{engine}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        files = {"vllm": ["vllm/third_party/flash_linear_attention/ops/" + f for f in
                          ("fused_recurrent.py", "fused_sigmoid_gating.py", "op.py", "utils.py")]
                 + ["vllm/third_party/flash_linear_attention/LICENSE"],
                 "sglang": ["sglang/kernels/ops/attention/fla/" + f for f in ("fused_recurrent.py", "op.py", "utils.py")]}
        for f in files[engine]:
            mod = f.removesuffix(".py").replace("/", ".")
            z.writestr(f, "".join(FAKE_KERNEL.format(fn) for fn in functions.get(mod, [])))
    return wheel


def build_site(tmp_path: Path, *wheels: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(REPO / "scripts" / "engine-kernels-site.sh"), "--out", str(tmp_path / "site"),
                           *map(str, wheels)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHON": sys.executable})


@pytest.fixture
def fresh_imports(monkeypatch):
    """A clean slate for import_engine: no cached answer, no engine module left from another test."""
    ed.import_engine.cache_clear()
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield monkeypatch
    for name in set(sys.modules) - before:
        if name.split(".")[0] in ("vllm", "sglang"):
            del sys.modules[name]
    ed.import_engine.cache_clear()


def test_without_the_engine_or_a_site_the_reason_says_what_to_do(fresh_imports):
    fresh_imports.delenv(ed.SITE_ENV, raising=False)
    if any(__import__("importlib.util").util.find_spec(e) for e in ("vllm", "sglang")):
        pytest.skip("an engine is installed here")
    ok, why = REGISTRY["vllm-decode"].available()
    assert not ok and "vllm is not installed" in why and ed.SITE_ENV in why and "engine-kernels-site.sh" in why


def test_a_site_provides_the_kernels_and_every_row_names_it(tmp_path, fresh_imports):
    vllm = fake_wheel(tmp_path, "vllm", "0.33.0", {
        "vllm.third_party.flash_linear_attention.ops.fused_recurrent": ["fused_recurrent_gated_delta_rule_packed_decode"],
        "vllm.third_party.flash_linear_attention.ops.fused_sigmoid_gating": ["fused_sigmoid_gating_delta_rule_update"]})
    sgl = fake_wheel(tmp_path, "sglang", "0.5.23", {"sglang.kernels.ops.attention.fla.fused_recurrent": [
        "fused_recurrent_gated_delta_rule_packed_decode", "fused_recurrent_gated_delta_rule_update"]})
    r = build_site(tmp_path, vllm, sgl)
    assert r.returncode == 0, r.stderr
    site = tmp_path / "site"
    manifest = json.loads((site / ed.MANIFEST).read_text())
    assert manifest["vllm"]["version"] == "0.33.0" and manifest["sglang"]["version"] == "0.5.23"
    assert "vllm/platforms/__init__.py" in manifest["vllm"]["shims"]
    assert "sglang/srt/utils/common.py" in manifest["sglang"]["shims"]
    fresh_imports.setenv(ed.SITE_ENV, str(site))
    for engine in ("vllm", "sglang"):
        mods, source, why = ed.import_engine(engine)
        assert why == "" and mods, why
        assert source["from"] == "kernel site" and source["site"] == str(site)
        assert source["version"] == manifest[engine]["version"]
    # no distribution is installed: the rows' version record takes the engine's version from the site's manifest
    assert REGISTRY["vllm-decode"].found_versions() == {"vllm": "0.33.0"}
    assert REGISTRY["sglang-mtp"].found_versions() == {"sglang": "0.5.23"}
    ok, why = REGISTRY["sglang-mtp"].available()  # imports; on a machine without CUDA that is the reason left
    assert ok or why == "needs a CUDA GPU (none visible)"


def test_a_site_whose_kernel_file_was_changed_is_refused(tmp_path, fresh_imports):
    sgl = fake_wheel(tmp_path, "sglang", "0.5.23", {"sglang.kernels.ops.attention.fla.fused_recurrent": [
        "fused_recurrent_gated_delta_rule_packed_decode", "fused_recurrent_gated_delta_rule_update"]})
    assert build_site(tmp_path, sgl).returncode == 0
    kernel = tmp_path / "site" / "sglang/kernels/ops/attention/fla/fused_recurrent.py"
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    fresh_imports.setenv(ed.SITE_ENV, str(tmp_path / "site"))
    mods, _, why = ed.import_engine("sglang")
    assert mods is None and "is not the file" in why


def test_a_kernel_module_without_the_call_says_which_function_is_missing(tmp_path, fresh_imports):
    sgl = fake_wheel(tmp_path, "sglang", "0.4.0", {"sglang.kernels.ops.attention.fla.fused_recurrent": [
        "fused_recurrent_gated_delta_rule_update"]})
    assert build_site(tmp_path, sgl).returncode == 0
    fresh_imports.setenv(ed.SITE_ENV, str(tmp_path / "site"))
    ok, why = REGISTRY["sglang-decode"].available()
    assert not ok and "has no fused_recurrent_gated_delta_rule_packed_decode" in why


def test_the_site_script_refuses_a_wheel_without_the_kernel_files(tmp_path):
    wheel = tmp_path / "vllm-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("vllm/__init__.py", "")
    r = build_site(tmp_path, wheel)
    assert r.returncode != 0 and "has no vllm/third_party/flash_linear_attention/ops/fused_recurrent.py" in r.stderr


def test_a_step_whose_grid_axis_cuda_cannot_launch_is_refused_with_the_reason():
    from qlabench.core.point import Point

    def point(backend, mode, batch, h_v):
        T = 1 if mode == "decode" else 2
        return Point(backend=backend, mode=mode, layout="dense", batch=batch, seqlens=(T,) * batch, h_qk=16,
                     h_v=h_v, K=128, V=128, dtype="bfloat16", gate="fla", state_dtype="float32", state_layout="vk",
                     pool=2 * batch)

    ok, why = REGISTRY["sglang-decode"].check_point(point("sglang-decode", "decode", 1024, 64), "cuda")
    assert not ok and "65536 programs on one grid axis" in why
    assert REGISTRY["sglang-decode"].check_point(point("sglang-decode", "decode", 1023, 64), "cuda")[0]
    assert REGISTRY["vllm-decode"].check_point(point("vllm-decode", "decode", 1024, 64), "cuda")[0]  # splits it
    assert not REGISTRY["vllm-mtp"].check_point(point("vllm-mtp", "mtp", 1024, 64), "cuda")[0]


def test_a_library_the_kernels_need_is_named_as_missing_not_the_engine(tmp_path, fresh_imports):
    sgl = fake_wheel(tmp_path, "sglang", "0.5.23", {})
    assert build_site(tmp_path, sgl).returncode == 0
    kernel = tmp_path / "site" / "sglang/kernels/ops/attention/fla/fused_recurrent.py"
    kernel.write_text("import not_a_real_triton\n")
    fresh_imports.setenv(ed.SITE_ENV, str(tmp_path / "site"))
    ok, why = REGISTRY["sglang-mtp"].available()
    assert not ok and why.endswith("it needs not_a_real_triton, which is not installed")
