"""The per-point tuning store: the Triton autotune choices a point's first call made, kept in the cache folder.

Tuning each point for itself (`[run] autotune`) costs FLA about 4 s of first calls a point on the H200:
every autotuned kernel benchmarks its configs for the point's shape. The choices depend on that shape, the
library and compiler that offer the configs, and the GPU that timed them, so they are kept per point in
`<cache-dir>/autotune/<id>.json`, keyed by the point's identity (core/identity.py: every axis, the backend's
included), the versions of the backend's stack (its library and Triton) and the GPU's model and compute
capability. A later run, or a `--resume`, of the same point on the same stack and GPU model installs them
instead of re-tuning (`[run] autotune = "point-cached"`); any other point, version or GPU misses and tunes.

A file is written whole (temp file + rename): workers writing at once leave one complete file, never a
mixed one. A file that cannot be read, or that was made for another key, is a miss with a note, never an
error of the point: tuning for the point is always the fallback.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from qlabench.core import identity
from qlabench.core.backend_decl import stack_columns
from qlabench.core.libraries import version_columns
from qlabench.core.point import Point
from qlabench.measure.caches import cache_root
from qlabench.measure.probes.autotune import install_saved, loaded_autotuners, retune, saved_choices

STORE_FOLDER = "autotune"  # under the cache root, beside the libraries' compile caches (measure/caches.py)
FORMAT = 1  # of a stored file; a file of another format is a miss


@dataclass(frozen=True)
class TuningKey:
    """What a point's tuned choices depend on. `point`: its identity's key columns."""

    point: dict
    versions: dict  # version column -> version, for the backend's stack
    gpu: str | None  # the device's model name ('NVIDIA H200'): GPUs of one model share choices
    capability: str | None  # '9.0'

    def as_json(self) -> dict:
        return json.loads(json.dumps(asdict(self), sort_keys=True, default=str))  # tuples read back as lists

    @property
    def id(self) -> str:
        return hashlib.sha256(json.dumps(self.as_json(), sort_keys=True).encode()).hexdigest()[:24]


def point_key(p: Point, env: dict, device: str) -> TuningKey:
    """The key of `p` measured in environment `env` (measure/env.capture) on `device`.

    A backend of a declared library keys on its stack's versions (FLA: fla_version, triton_version); one of
    none (a layer around FLA's core) on every version that moves timings, Triton's always among them."""
    columns = stack_columns(p.backend) or version_columns(moves_timings_only=True)
    versions = {c: env.get(c) for c in dict.fromkeys((*columns, "triton_version"))}
    return TuningKey(point=identity.columns(p), versions=versions, gpu=env.get("device"),
                     capability=_capability(device))


def _capability(device: str) -> str | None:
    import torch

    dev = torch.device(device)
    if dev.type != "cuda":
        return None
    major, minor = torch.cuda.get_device_capability(dev)
    return f"{major}.{minor}"


@dataclass(frozen=True)
class StoredTuning:
    id: str
    saved_at: str  # UTC, ISO 8601
    entries: list  # measure/probes/autotune.saved_choices's entries


def store_folder(root: str | os.PathLike | None = None) -> Path:
    """Where the tunings are kept: <cache root>/autotune."""
    return Path(root or cache_root()) / STORE_FOLDER


def load(key: TuningKey, root: str | os.PathLike | None = None) -> tuple[StoredTuning | None, str]:
    """The stored tuning of `key`, or None and why not ("" when there is none: a point not tuned before)."""
    path = store_folder(root) / f"{key.id}.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError) as e:
        return None, f"stored tuning {key.id} unreadable ({type(e).__name__})"
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
        return None, f"stored tuning {key.id} is not of format {FORMAT}"
    if data.get("key") != key.as_json():
        return None, f"stored tuning {key.id} was made for another point or stack"
    return StoredTuning(key.id, str(data.get("saved_at")), data["entries"]), ""


def save(key: TuningKey, entries: list, root: str | os.PathLike | None = None) -> StoredTuning:
    """Keep `entries` as the tuning of `key`, replacing any before; OSError if the folder cannot hold it."""
    folder = store_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    stored = StoredTuning(key.id, datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), entries)
    text = json.dumps({"format": FORMAT, "saved_at": stored.saved_at, "key": key.as_json(), "entries": entries},
                      indent=1, sort_keys=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{key.id}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, folder / f"{key.id}.json")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return stored


@contextmanager
def tuned_from_store(key: TuningKey, prefixes: tuple[str, ...], reuse: bool = True,
                     root: str | os.PathLike | None = None) -> Iterator[dict]:
    """Around a point's first call, with its autotuners reset (probes/autotune.retune): with `reuse`, install
    the stored choices of `key` before it; after it, keep what it tuned as `key`'s. Yields the row's details,
    filled on exit:

    `autotune_tuned_for`: "point-cached" when choices were installed and the call tuned nothing (every choice
    it used came from the store), else "point"; `autotune_store`: the stored tuning's `id` and `saved_at`,
    `installed` (choices put in), `saved` (choices kept after tuning), and `notes` on what did not fit (an
    unreadable or stale entry, a kernel whose stored choice it no longer offers: that kernel tuned instead)."""
    stored, why = load(key, root) if reuse else (None, "")
    installed, notes = install_saved(stored.entries, prefixes) if stored else (0, [])
    notes = ([why] if why else []) + notes
    details = {"autotune_tuned_for": "point"}
    before = {id(t): set(t.cache) for t in loaded_autotuners(prefixes)}
    yield details
    tuned = sum(len(set(t.cache) - before.get(id(t), set())) for t in loaded_autotuners(prefixes))
    info: dict = {"id": key.id}
    if stored and installed and not tuned:
        details["autotune_tuned_for"] = "point-cached"
        info.update(saved_at=stored.saved_at, installed=installed)
    elif tuned:
        entries, left_out = saved_choices(prefixes)
        notes += left_out
        try:
            info.update(saved_at=save(key, entries, root).saved_at, installed=installed,
                        saved=sum(len(e["choices"]) for e in entries))
        except OSError as e:  # a store that cannot be written costs the next run a tuning, not this row
            notes.append(f"not stored: {e.strerror or e}")
    if notes:
        info["notes"] = notes
    details["autotune_store"] = info


@contextmanager
def point_tuning(prefixes: tuple[str, ...], mode: str, key: Callable[[], TuningKey],
                 root: str | os.PathLike | None = None) -> Iterator[dict]:
    """Around a point's first call, for a backend whose library autotunes in the modules under `prefixes`
    (none: nothing is done or said), as `[run] autotune` = `mode` asks (core/spec_limits.AUTOTUNE_MODES):

    "point-cached": forget every choice (probes/autotune.retune), install the point's stored ones, and keep
    what the call still tuned (`tuned_from_store`); "point": forget every choice, so that the call tunes for
    the point, and keep its tunings in place of the stored ones (a re-tune that later runs reuse);
    "process": the library's own choices, the store left alone. Yields the row's details, set before the
    call (`autotuners_reset`, `autotune_tuned_for`) and completed after it; `key` is called only for a store."""
    details: dict = {}
    if prefixes and mode != "process":
        details["autotuners_reset"] = retune(prefixes)
    if prefixes:
        details["autotune_tuned_for"] = "point" if mode == "point-cached" else mode
    if not prefixes or mode == "process":
        yield details
        return
    with tuned_from_store(key(), prefixes, reuse=mode == "point-cached", root=root) as tuned:
        yield details
    details.update(tuned)
