#!/usr/bin/env bash
# Build a small site folder holding only the serving engines' GDN decode kernels (vLLM, SGLang), for a GPU host
# with no package index: qlabench's `vllm-decode`, `vllm-mtp`, `sglang-decode` and `sglang-mtp` backends import
# them from it (docs/SERVING.md, "The engines' own kernels").
#
#   pip download --no-deps vllm==0.33.0 -d WHEELS        # on a machine that reaches the index (~340 MB)
#   pip download --no-deps 'sglang>=0.5,<0.6' -d WHEELS  # (~40 MB)
#   scripts/engine-kernels-site.sh --out SITE WHEELS/vllm-*.whl WHEELS/sglang-*.whl
#   tar cJf engine-kernels.tar.xz -C SITE .               # carry this (well under 1 MB)
#
# On the GPU host: unpack it and `export QLABENCH_ENGINE_KERNELS=/path/to/site` (or put the folder on PYTHONPATH).
#
# Why a site and not the engine: the kernel files are self-contained Triton, but each engine's package makes
# importing them import the engine. vLLM's fused_recurrent.py imports `vllm.platforms` (the platform layer:
# vllm.envs, plugins, the CUDA platform module) and `vllm.triton_utils` (which imports vllm.envs, vllm.logger
# and vllm.platforms); `import vllm` itself runs vllm.env_override. SGLang's fla/utils.py imports
# `sglang.srt.utils.common` for one constant, and that module imports the server stack (orjson, psutil,
# pybase64, requests, PIL, starlette, sglang.srt.platforms, ...); `import sglang` imports its frontend and
# transformers patches. So the site holds the engines' kernel files byte for byte (their sha256 in the
# manifest) and replaces only those package modules with shims that answer the same questions:
#   vllm/platforms/__init__.py    `current_platform`: is_cuda, is_cuda_alike, is_device_capability_family,
#                                 from torch (what vLLM's CUDA platform answers on an NVIDIA GPU)
#   vllm/triton_utils/__init__.py triton, tl, tldevice: the plain Triton modules vLLM re-exports
#   sglang/srt/utils/common.py    torch_release, defined as SGLang defines it
#   every package __init__.py     empty (the engines' run their frontends, registries and plugins)
# The manifest (qlabench-engine-kernels.json) names the wheel, its sha256, each kernel file's sha256 and
# the shims; qlabench records it in every row these backends write.
set -euo pipefail

usage() { echo "usage: $0 --out SITE WHEEL..." >&2; exit 2; }
SITE_DIR=""
WHEELS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) SITE_DIR="${2:-}"; shift 2 ;;
    -h|--help) usage ;;
    *) WHEELS+=("$1"); shift ;;
  esac
done
[ -n "$SITE_DIR" ] && [ ${#WHEELS[@]} -gt 0 ] || usage
PY="${PYTHON:-python3}"

"$PY" - "$SITE_DIR" "${WHEELS[@]}" <<'PYEOF'
import hashlib, json, os, re, sys, zipfile

out, wheels = sys.argv[1], sys.argv[2:]

# Per engine: the kernel files copied as they are, and the shims written in their packages' place.
VLLM_OPS = "vllm/third_party/flash_linear_attention/ops/"
SGL_FLA = "sglang/kernels/ops/attention/fla/"
ENGINES = {
    "vllm": {
        "kernels": [VLLM_OPS + f for f in ("fused_recurrent.py", "fused_sigmoid_gating.py", "op.py", "utils.py")]
        + ["vllm/third_party/flash_linear_attention/LICENSE"],
        "shims": {
            "vllm/__init__.py": "",
            "vllm/third_party/__init__.py": "",
            "vllm/third_party/flash_linear_attention/__init__.py": "",
            VLLM_OPS + "__init__.py": "",
            "vllm/triton_utils/__init__.py": (
                '"""qlabench shim: the plain Triton modules vLLM\'s triton_utils re-exports when Triton is installed."""\n'
                "import triton\n"
                "import triton.language as tl\n"
                "import triton.language.extra.libdevice as tldevice\n"
            ),
            "vllm/platforms/__init__.py": (
                '"""qlabench shim: the questions vLLM\'s kernel files ask its platform layer, answered from torch."""\n'
                "import torch\n\n\n"
                "class _TorchPlatform:\n"
                "    @staticmethod\n"
                "    def is_cuda() -> bool:\n"
                "        return torch.cuda.is_available() and torch.version.cuda is not None\n\n"
                "    @staticmethod\n"
                "    def is_cuda_alike() -> bool:\n"
                "        return torch.cuda.is_available()\n\n"
                "    @staticmethod\n"
                "    def is_device_capability_family(capability: int, device_id: int = 0) -> bool:\n"
                "        # vLLM: the device's major.minor as major * 10 + minor, compared by major\n"
                "        if not torch.cuda.is_available():\n"
                "            return False\n"
                "        major, minor = torch.cuda.get_device_capability(device_id or 0)\n"
                "        return (major * 10 + minor) // 10 == capability // 10\n\n\n"
                "current_platform = _TorchPlatform()\n"
            ),
        },
    },
    "sglang": {
        "kernels": [SGL_FLA + f for f in ("fused_recurrent.py", "op.py", "utils.py")],
        "shims": {
            "sglang/__init__.py": "",
            "sglang/kernels/__init__.py": "",
            "sglang/kernels/ops/__init__.py": "",
            "sglang/kernels/ops/attention/__init__.py": "",
            SGL_FLA + "__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/utils/__init__.py": "",
            "sglang/srt/utils/common.py": (
                '"""qlabench shim: the one name SGLang\'s fla/utils.py imports from sglang.srt.utils.common."""\n'
                "import torch\n"
                "from packaging import version as pkg_version\n\n"
                "torch_release = pkg_version.parse(torch.__version__).release\n"
            ),
        },
    },
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


manifest_path = os.path.join(out, "qlabench-engine-kernels.json")
manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
for wheel in wheels:
    m = re.match(r"([A-Za-z0-9_]+)-([^-]+)-", os.path.basename(wheel))
    if not m or m.group(1).lower() not in ENGINES:
        sys.exit(f"{wheel}: not a wheel of {' or '.join(ENGINES)}")
    engine, version = m.group(1).lower(), m.group(2)
    spec = ENGINES[engine]
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        missing = [f for f in spec["kernels"] if f not in names]
        if missing:
            sys.exit(f"{wheel}: has no {', '.join(missing)} (this script knows vllm 0.33 and sglang 0.5's layout)")
        files = {}
        for f in spec["kernels"]:
            data = z.read(f)
            dest = os.path.join(out, f)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as fh:
                fh.write(data)
            files[f] = sha256(data)
    for f, text in spec["shims"].items():
        dest = os.path.join(out, f)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w") as fh:
            fh.write(text)
    with open(wheel, "rb") as fh:
        wheel_sha = sha256(fh.read())
    manifest[engine] = {"version": version, "wheel": os.path.basename(wheel), "wheel_sha256": wheel_sha,
                        "kernel_files": files, "shims": sorted(spec["shims"])}
    print(f"{engine} {version}: {len(files)} kernel files, {len(spec['shims'])} shims")
os.makedirs(out, exist_ok=True)
with open(manifest_path, "w") as fh:
    json.dump(manifest, fh, indent=1, sort_keys=True)
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
print(f"site: {out} ({size / 1024:.0f} KiB)")
PYEOF
