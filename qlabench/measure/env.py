"""The environment a run happened in: host, device, library versions, git sha.

Versions are read from package metadata, so nothing heavy is imported just to learn them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import socket
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from qlabench import __version__
from qlabench.core.engine_switches import ENGINES
from qlabench.core.libraries import LIBRARIES
from qlabench.core.versions import ENGINE_KEY

_DISTS = {lib.column: lib.dist for lib in LIBRARIES if lib.dist}  # version column -> its distribution
# Fields whose change can move timings; their hash is the env fingerprint used by resume and compare.
FINGERPRINT_FIELDS = ("device", "torch_version", "triton_version", "tilelang_version", "fla_version",
                      "flash_qla_version", "cuda_version", "driver_version", "qlabench_version")


def dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def git_sha() -> str | None:
    """The commit of this copy of qlabench (git_sha_of); for a copy that is neither a checkout nor names its
    commit ($QLABENCH_GIT_SHA), the digest of its sources (source_digest), so two rows made by different code
    are still told apart."""
    root = Path(__file__).resolve().parents[2]
    return git_sha_of(root) or source_digest(root / "qlabench")


@functools.lru_cache(maxsize=4)
def source_digest(package: Path) -> str:
    """'src:1a2b3c4d5e6f7a8b': a digest of every .py file under `package` (paths and contents, in order). Not a
    commit: it says which code made a row where no commit was recorded, and equal digests mean equal code."""
    h = hashlib.sha256()
    for f in sorted(package.rglob("*.py")):
        h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return "src:" + h.hexdigest()[:16]


def git_sha_of(root: Path) -> str | None:
    """The commit of the checkout at `root`, or, for a copy that is not a checkout, $QLABENCH_GIT_SHA.

    git is asked only about a repository whose top level is `root` itself: a copy shipped to a GPU host
    (a `git archive` snapshot, possibly unpacked inside some other checkout) must not record that other
    checkout's commit; it names its own commit in $QLABENCH_GIT_SHA (scripts/h200.sh reads GIT_SHA).
    """
    explicit = os.environ.get("QLABENCH_GIT_SHA") or None
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True,
                             timeout=5)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != Path(root).resolve():
            return explicit
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
        if sha.returncode != 0:
            return explicit
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5)
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return explicit


def checkout_of(path: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout a module file at `path` was imported from; (None, None) when it is
    in none, or in an installed copy (site-packages: a venv inside some other checkout is not that code)."""
    path = Path(path).resolve()
    if any(part in ("site-packages", "dist-packages") for part in path.parts):
        return None, None
    where = path if path.is_dir() else path.parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5)
        if sha.returncode != 0:
            return None, None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where,
                               capture_output=True, text=True, timeout=5)
        return sha.stdout.strip(), bool(dirty.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, None


def source_of(dist: str | None, module_file: str | None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout a backend's code came from: the local folder its distribution was
    installed from (PEP 610 direct_url.json: `pip install [-e] DIR`, `pip install --target T DIR`), else, for
    code no distribution installed, the checkout its module file is in; (None, None) for a copy installed from
    an index or a wheel."""
    if dist:
        try:
            raw = metadata.distribution(dist).read_text("direct_url.json")
        except metadata.PackageNotFoundError:
            raw = None
        url = (json.loads(raw).get("url") or "") if raw else ""
        if url.startswith("file://"):
            from urllib.parse import unquote, urlparse

            folder = Path(unquote(urlparse(url).path))
            return checkout_of(folder) if folder.is_dir() else (None, None)
        return None, None
    return checkout_of(Path(module_file)) if module_file else (None, None)


def dist_of_module(module: str) -> tuple[str | None, str | None]:
    """(distribution, version) that provides the top-level package of `module`; (None, None) for a module on
    sys.path that no installed distribution provides."""
    top = module.split(".")[0]
    dists = metadata.packages_distributions().get(top) or []
    if not dists:
        return None, None
    return dists[0], dist_version(dists[0])


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def driver_version() -> str | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            v = pynvml.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else v
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # NVML missing or no driver: the field is simply null
        return None


def device_model(device: str) -> str:
    """The device's model as a row's `device` column records it: 'NVIDIA H200', or the CPU's model name."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev.index if dev.index is not None else torch.cuda.current_device())
    return cpu_name()


def local_gpu() -> str | None:
    """The GPU model a CUDA process here would run on first (CUDA_VISIBLE_DEVICES' first entry, else device 0),
    read through NVML without importing torch ('NVIDIA H200'); None where no GPU or driver answers."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    first = visible.split(",")[0].strip() if visible is not None else "0"
    if not first or first.startswith("-"):  # '' or '-1': this process is shown no GPU
        return None
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            handle = (pynvml.nvmlDeviceGetHandleByIndex(int(first)) if first.isdigit()
                      else pynvml.nvmlDeviceGetHandleByUUID(first))
            name = pynvml.nvmlDeviceGetName(handle)
            return name.decode() if isinstance(name, bytes) else str(name)
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # NVML missing, no driver, no such device: no local GPU to speak of
        return None


def capture(device: str) -> dict:
    """Environment fields of a result row, for runs on `device` ('cpu', 'cuda', 'cuda:N')."""
    import torch

    dev = torch.device(device)
    env = {
        "host": socket.gethostname(),
        "host_cpu": cpu_name(),  # launch cost is the host's as much as the kernel's (core/launch.py)
        "qlabench_version": __version__,
        "git_sha": git_sha(),
        "python_version": platform.python_version(),
        "cuda_version": torch.version.cuda,
        "driver_version": None,
        "device_index": None,
        "gpu_uuid": None,
    }
    env.update({k: dist_version(d) for k, d in _DISTS.items()})
    # the engines whose own kernels engine backends call, where installed (a kernel site is no installed
    # distribution: its backends report its version themselves, Backend.found_versions); no column of their own
    env[ENGINE_KEY] = {e: v for e in ENGINES if (v := dist_version(e))}
    if dev.type == "cuda":
        idx = dev.index if dev.index is not None else torch.cuda.current_device()
        env["device"] = device_model(device)
        env["device_index"] = physical_index(idx)
        env["gpu_uuid"] = gpu_uuid(idx)
        env["driver_version"] = driver_version()
    else:
        env["device"] = cpu_name()
    env["env_fingerprint"] = fingerprint(env)
    return env


def gpu_uuid(idx: int) -> str | None:
    """The UUID of device `idx` of this process as nvidia-smi prints it ('GPU-1a2b3c4d-...'): what tells two
    cards (or two hosts) of one model apart. None where torch cannot say (an older torch, a ROCm build)."""
    import torch

    try:
        raw = str(torch.cuda.get_device_properties(idx).uuid)
    except (AttributeError, RuntimeError, AssertionError):
        return None
    return raw if raw.startswith("GPU-") else f"GPU-{raw}"


def physical_index(idx: int) -> int:
    """The index nvidia-smi shows for device `idx` of this process: a worker pinned with
    CUDA_VISIBLE_DEVICES=3 sees its GPU as 0, but its rows must say 3 (with UUID ids it stays `idx`)."""
    ids = [s.strip() for s in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if s.strip()]
    if idx < len(ids) and ids[idx].isdigit():
        return int(ids[idx])
    return idx


# Counted only where installed, so that the fingerprints of environments without it stay what they were.
OPTIONAL_FINGERPRINT_FIELDS = ("flashinfer_version",)


def fingerprint(env: dict) -> str:
    fields = {k: env.get(k) for k in FINGERPRINT_FIELDS}
    fields.update({k: env[k] for k in OPTIONAL_FINGERPRINT_FIELDS if env.get(k) is not None})
    blob = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
