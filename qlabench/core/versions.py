"""A row's one version record: the version of every library its backend's call used, as one map (the row's
`versions` column), and the name in it of the backend's own library (whose version is `backend_version`).

Which libraries a call uses is its declaration's (core/backend_decl.py): its library and the compiler under it
(core/libraries.py: `stack`), the engine whose kernels an engine backend calls, a plugin's distribution, and
torch, which every call runs on. A version is recorded where it was read (an installed distribution, an engine's
kernel site), never guessed: a library that was not there has no entry. A plugin imported from a git checkout
also records that checkout's commit, under `<name> commit`.

Every view reads versions through `versions_of`, `own_version` and `stack_text` here; files written before the
column have it derived from their per-library columns on read (store/schema.py: `derive_versions`).
"""

from __future__ import annotations

from qlabench.core import backend_decl
from qlabench.core.libraries import BY_COLUMN, BY_NAME, version_columns

COMMIT = " commit"  # a key's suffix for a checkout's commit: 'my-gdn commit'
OWN_CODE = "qlabench"  # the backend's own code is qlabench's (its naive and reference kernels)
ENGINE_KEY = "engine_versions"  # env: {engine distribution: version} of the engines installed (measure/env.py)
# The columns a record is derived from where a row has none (`derived`): a file before schema 8, a row made in memory.
INPUTS = ("backend", "backend_dist", "backend_version", "backend_git_sha", "backend_git_dirty", "qlabench_version",
          "extra_json", *version_columns())
# What a view hands `versions_of`, `own_version` and `stack_text`: the record and what it falls back on.
READ = ("versions", *INPUTS)


def _text(v) -> str | None:
    """A recorded value as text; None for a missing one (None, NaN as pandas reads a null, '')."""
    if v is None or (isinstance(v, float) and v != v) or v == "":
        return None
    return str(v)


def _decl(backend: str):
    """The declaration whose code a row of `backend` runs: a layer runs its core's."""
    d = backend_decl.find(backend)
    core = backend_decl.core_backend_name(backend)
    if core and (d is None or not (d.library or d.engine)):
        d = backend_decl.find(core) or d
    return d


def own_name(backend: str) -> str | None:
    """The name in the record of the backend's own library: 'flash-qla', 'vllm', a plugin's distribution (or,
    for one no distribution provides, its module's package), 'qlabench' for qlabench's own kernels; None for a
    name nothing declares."""
    d = _decl(backend)
    if d is None:
        return None
    if d.library:
        return d.library
    if d.engine:
        return d.engine
    if d.plugin:
        pv = d.provider
        return (pv.dist if pv is not None and pv.dist else None) or d.impl.split(":")[0].split(".")[0]
    return OWN_CODE


def call_libraries(backend: str) -> tuple[str, ...]:
    """The names of the libraries a call of `backend` uses, its own first, torch last."""
    d = _decl(backend)
    own = own_name(backend)
    if d is None or own is None:
        return ()
    names = [own]
    if d.library and d.library in BY_NAME:
        names += [BY_COLUMN[c].name for c in BY_NAME[d.library].stack if c in BY_COLUMN]
    if d.engine:
        names.append("triton")  # the engines' GDN kernels are Triton (backends/engine_decode.py)
    names.append("torch")
    return tuple(dict.fromkeys(names))


def record(backend: str, env: dict, found: dict | None = None) -> dict[str, str]:
    """The version record of a row of `backend` measured in `env` (measure/env.py: capture): each library of its
    call whose version was read, from `found` (what the backend read at the call itself: an engine's kernel
    site) before `env`; a plugin's distribution version and checkout commit from its provider."""
    d = _decl(backend)
    found = {k: v for k, v in (found or {}).items() if v}
    engines = env.get(ENGINE_KEY) or {}
    out: dict[str, str] = {}
    for name in call_libraries(backend):
        lib = BY_NAME.get(name)
        if name in found:
            v = found[name]
        elif lib is not None:
            v = env.get(lib.column)
        elif d is not None and name == d.engine:
            v = engines.get(name)
        elif name == OWN_CODE:
            v = env.get("qlabench_version")
        elif d is not None and d.plugin and d.provider is not None:
            v = d.provider.version
        else:
            v = None
        if v:
            out[name] = str(v)
    pv = d.provider if d is not None and d.plugin else None
    if pv is not None and pv.git_sha:
        out[own_name(backend) + COMMIT] = pv.git_sha + ("+dirty" if pv.git_dirty else "")
    return out


def derived(row: dict) -> dict[str, str]:
    """The record of a row written before the `versions` column, from what it did record: its libraries' version
    columns, qlabench's version for its own kernels, an engine's version from the kernel source in its details
    (extra_json `engine`), a plugin's backend_dist, backend_version and backend_git_sha. A plugin this process
    does not know is read off those columns alone."""
    backend = str(row.get("backend") or "")
    d = _decl(backend)
    dist, version = _text(row.get("backend_dist")), _text(row.get("backend_version"))
    names = call_libraries(backend)
    plugin = d.plugin if d is not None else bool(dist) and dist != OWN_CODE
    if plugin:  # named as its rows name their distribution, whatever this process has loaded
        names = tuple(dict.fromkeys(n for n in (dist or own_name(backend), "torch") if n))
    out: dict[str, str] = {}
    for name in names:
        lib = BY_NAME.get(name)
        if lib is not None:
            v = _text(row.get(lib.column))
        elif name == OWN_CODE:
            v = _text(row.get("qlabench_version"))
        elif d is not None and name == d.engine:
            v = _text(engine_of(row.get("extra_json")).get("version"))
        else:
            v = version if name == dist else None
        if v:
            out[name] = v
    sha = _text(row.get("backend_git_sha"))
    if plugin and sha and names:
        out[names[0] + COMMIT] = sha + ("+dirty" if _text(row.get("backend_git_dirty")) == "True" else "")
    return out


def engine_of(extra_json) -> dict:
    """The engine kernels' source an engine backend's row records in its details (backends/engine_decode.py:
    `engine`: {'engine', 'version', 'from', ...}); {} where it records none."""
    import json

    try:
        details = json.loads(extra_json) if isinstance(extra_json, str) and extra_json else {}
    except ValueError:
        return {}
    engine = details.get("engine") if isinstance(details, dict) else None
    return engine if isinstance(engine, dict) else {}


def versions_of(row) -> dict[str, str]:
    """A row's record as a dict: its `versions` (a dict as written, the (key, value) pairs arrow reads a map back
    as), or, where it has none (a row made before the column, or in memory), the one `derived` from its other
    columns. `row`: a dict or a pandas row holding `READ`'s columns."""
    v = row.get("versions")
    if v is None or isinstance(v, float):
        return derived(row)
    pairs = v.items() if isinstance(v, dict) else (tuple(kv) for kv in v)
    return {str(k): str(val) for k, val in pairs if val is not None}


def own_key(row) -> str | None:
    """The name in a row's record of its backend's own library (`own_name`); for a plugin, the distribution the
    row itself names (backend_dist), which a process that has not loaded the plugin cannot know."""
    backend = str(row["backend"])
    d = _decl(backend)
    if d is None or d.plugin:
        dist = _text(row.get("backend_dist"))
        if dist:
            return dist
    return own_name(backend)


def own_version(row) -> str | None:
    """The version of the row's backend's own library in its record ('0.1.3' for flash_qla rows); None where it
    was not recorded."""
    own = own_key(row)
    return versions_of(row).get(own) if own else None


def short(key: str, value: str) -> str:
    """'my-gdn commit 1a2b3c4d5e6f' (a commit shortened to 12 characters, '+dirty' kept), else 'fla 0.6.0'."""
    if key.endswith(COMMIT):
        sha, dirty, _ = value.partition("+dirty")
        return f"{key} {sha[:12]}{'+dirty' if dirty else ''}"
    return f"{key} {value}"


def versions_text(versions: dict[str, str], sep: str = ", ") -> str:
    """Every entry of a record, in its order: 'flash-qla 0.1.3, tilelang 0.1.15, torch 2.9.1'."""
    return sep.join(short(k, v) for k, v in versions.items())


def stack_text(row) -> str:
    """'flash-qla 0.1.3 + tilelang 0.1.15': the record's libraries but torch, which every call runs on, and
    qlabench's own code; its own library named '(version not recorded)' where the record lacks it ('sglang
    (version not recorded) + triton 3.6.0'); 'torch X' for a backend that runs nothing else (qlabench's own
    kernels)."""
    v = versions_of(row)
    own = own_key(row)
    parts = [short(k, x) for k, x in v.items() if k not in ("torch", OWN_CODE)]
    if own and own != OWN_CODE and own not in v:
        parts.insert(0, f"{own} (version not recorded)")
    return " + ".join(parts) if parts else f"torch {v.get('torch') or '?'}"


__all__ = ["COMMIT", "ENGINE_KEY", "INPUTS", "OWN_CODE", "READ", "call_libraries", "derived", "engine_of", "own_key", "own_name", "own_version",
           "record", "short", "stack_text", "versions_of", "versions_text"]
