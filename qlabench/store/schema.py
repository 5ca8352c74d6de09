"""The parquet schema of result files, derived from `ResultRow`, and its version history.

Version history (bump SCHEMA_VERSION and add an upgrade step when a column changes meaning or goes):
  1: first version (walking skeleton): run, versions, point, outcome, timing columns.
     Added later as nullable columns (still version 1): cp_world_size, cp_mode, cp_rank_ms,
     cp_rank_fwd_ms, cp_rank_bwd_ms, cp_intra (distributed context-parallel points; null / empty in
     older files and single-device rows).
  2: gate parameters as workload axes, and the backward split into two modes.
     - New columns gate_zero_frac, gate_scale (float64, null = the gate profile's default). Version 1
       rows read them as null, which is what they measured (the flashqla profile's 25% / 16), so they
       keep their point keys.
     - Mode `bwd` of the library backends now times the backward as FlashQLA's published table does
       (nothing but the forward's outputs handed over); what version 1 called `bwd` for them (the
       forward's CP context and cache handed over, as autograd does in training) is mode `bwd_train`.
       The upgrade renames those rows' mode, so old measurements pair with the mode they measured.
       For every other backend `bwd` kept its meaning.
  3: how a row's sampling ended, and the CPU threads it ran with (issue 16).
     - New columns stopped_by (noise_target, max_samples or max_time), below_min_samples (max_time_s
       ended sampling before min_samples) and cpu_threads (torch intra-op threads; CPU workers pin it).
     - The upgrade fills stopped_by = noise_target where a version-2 row met its noise target; the
       rest stay null (an older file did not record which cap ended sampling, nor the thread count).
  4: replicates (the run, not the sample, is the unit of replication; docs/GATING.md).
     - New column `replicate` (int64): which of a run's K fresh-process replicates of a point a row is.
       Upgrade step `_v3_to_v4_replicate`: older rows get null, i.e. one replicate per run, which is
       what they were. (Its own version, so that a reader knows a file may hold several rows per point
       and run, and must not take "the newest row" as the point's whole measurement.)
  5: typed columns for what used to travel as JSON text, and each Triton kernel's autotune choice.
     - New column `phases_s` (map<string, float64>): each phase's wall seconds, which version 4 kept
       as `extra_json["phases_s"]`. Upgrade step `_v4_to_v5_phases` moves them out of `extra_json` into
       the column (rows without them read null), so a reader finds them in one place whatever the version.
     - New column `autotune` (list of struct kernel, num_warps, num_stages, num_ctas, kwargs
       map<string, string>): the config each autotuned Triton kernel ran with in one call. Older rows
       read it empty: the choice was not recorded.
  6: whether a point's time depends on the calls one sample holds (issue 36; `[timing] sensitivity`).
     - New columns `calls_sensitivity_ms` (map<string, float64>: calls per sample -> median ms per call)
       and `calls_sensitive` (bool). Upgrade step `_v5_to_v6_sensitivity`: older rows read null, i.e.
       not measured (never "not sensitive": nobody asked).
  7: the time users pay (issue 51; core/launch.py) and whether a row was checked at its own size.
     - New columns `device_ms`, `eager_ms`, `eager_rel_noise`, `host_ms`, `launch_bound`, `host_cpu` and
       `checked_at_size`. Upgrade step `_v6_to_v7_times`: an older graph-timed row's median is its
       device_ms, an events- or wall-timed row's its eager_ms (those timers launch each call eagerly);
       host_ms, eager_rel_noise and launch_bound stay null (not measured). checked_at_size is read off
       what the row says it was checked against: true where the oracle's problem, or a full-size
       reference (`oracle` "... @<total_tokens> tokens"), covered the point's own tokens.
  8: one version record per row (issue 54; core/versions.py).
     - New column `versions` (map<string, string>): the version of every library the backend's call used, its
       own first (FlashQLA, TileLang, FLA, Triton, FlashInfer, an engine's, a plugin's distribution and
       commit, torch). Upgrade step `_v7_to_v8_versions` derives it from what an older row recorded: its
       libraries' version columns, qlabench's version for its own kernels, a plugin's backend_dist,
       backend_version and backend_git_sha, an engine backend's kernel source in its details (extra_json
       `engine`). Older engine backends' rows recorded qlabench as their backend_dist and its version as
       their backend_version; the step gives them their engine's name and version (null where their
       details name none).

Every file is written with the full current schema. Other tools reading a folder of files of different
versions see the union of their columns only when asked to (results/README.md shows pyarrow, polars
and DuckDB); `read_results` upgrades every file on read.

Adding a nullable column does not need a new version: older files simply read it as null.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pyarrow as pa
import pyarrow.compute as pc

from qlabench.core import backend_decl, versions
from qlabench.core.errors import SchemaError
from qlabench.core.identity import required_axes
from qlabench.core.result import checked_at_size_of, row_fields

SCHEMA_VERSION = 8
METADATA_KEY = b"qlabench.schema_version"

_KINDS = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "list<int64>": pa.list_(pa.int64()),
    "list<float64>": pa.list_(pa.float64()),
    "list<string>": pa.list_(pa.string()),
    "map<string,float64>": pa.map_(pa.string(), pa.float64()),
    "map<string,string>": pa.map_(pa.string(), pa.string()),
    "list<autotune>": pa.list_(pa.struct([("kernel", pa.string()), ("num_warps", pa.int64()),
                                          ("num_stages", pa.int64()), ("num_ctas", pa.int64()),
                                          ("kwargs", pa.map_(pa.string(), pa.string()))])),
}


def arrow_schema(extra_metadata: dict[str, str] | None = None) -> pa.Schema:
    """The arrow schema of a result file, with the schema version in its metadata."""
    meta = {METADATA_KEY: str(SCHEMA_VERSION).encode()}
    for k, v in (extra_metadata or {}).items():
        meta[f"qlabench.{k}".encode()] = v.encode()
    return _fields(None).with_metadata(meta)


@lru_cache(maxsize=64)
def _fields(columns: frozenset[str] | None) -> pa.Schema:
    """The current schema's fields (those in `columns`, when given), built once: `upgrade` runs per file read,
    and a view reads a whole results tree (a pa.Schema is immutable, so one is shared)."""
    return pa.schema([pa.field(name, _KINDS[kind], nullable=True, metadata={b"doc": doc.encode()})
                      for name, kind, doc in row_fields() if columns is None or name in columns])


COLUMNS = tuple(name for name, _, _ in row_fields())


def upgrade(table: pa.Table, source: str, columns: set[str] | None = None) -> pa.Table:
    """Bring a table read from disk to the current schema, or raise SchemaError saying why not.
    `columns`: only those of the current schema (a projected read: store/files.py read_table)."""
    meta = table.schema.metadata or {}
    raw = meta.get(METADATA_KEY)
    if raw is None:
        raise SchemaError(f"{source}: not a qlabench results file (no {METADATA_KEY.decode()} metadata)")
    try:
        version = int(raw)
    except ValueError:  # a file is refused by name, never with int()'s own message
        raise SchemaError(f"{source}: its {METADATA_KEY.decode()} is {raw.decode(errors='replace')!r}, not a whole "
                          "number: not a results file qlabench wrote (or one edited since)") from None
    if version < 1:
        raise SchemaError(f"{source}: schema version {version} is none qlabench ever wrote (1 to {SCHEMA_VERSION})")
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"{source}: schema version {version} is newer than this qlabench understands "
            f"({SCHEMA_VERSION}); upgrade qlabench"
        )
    for step_from, step in _UPGRADES:
        if version <= step_from:
            table = step(table)
    target = _target(None if columns is None else frozenset(columns))
    # by name and type, read off the schemas once (a view upgrades every file of a results tree)
    present = dict(zip(table.column_names, zip(table.columns, table.schema.types)))
    cols = []
    for name, kind in zip(target.names, target.types):
        found = present.get(name)
        if found is None:
            cols.append(pa.nulls(table.num_rows, kind))
        else:
            col, have = found
            if have == kind:  # a cast of equal types still copies
                cols.append(col)
                continue
            try:
                cols.append(col.cast(kind))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise SchemaError(f"{source}: column {name!r} holds {have}, which is not {kind}: {e}") from None
    return pa.Table.from_arrays(cols, schema=target)


@lru_cache(maxsize=64)
def _target(columns: frozenset[str] | None) -> pa.Schema:
    """The schema `upgrade` brings a table to (its `columns` only, when given), with the version metadata."""
    return arrow_schema() if columns is None else _fields(columns).with_metadata(arrow_schema().metadata)


# Backends whose `bwd` mode changed meaning in version 2 (their version-1 `bwd` is now `bwd_train`).
V1_TRAIN_BWD_BACKENDS = ("flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "fla", "fla-dispatch-on")


def _v1_to_v2(table: pa.Table) -> pa.Table:
    """Version 1 -> 2: the library backends' `bwd` rows measured what is now `bwd_train`.

    (The new gate columns need no step: a missing column reads as null, the profile's default.)
    """
    if "mode" not in table.column_names or "backend" not in table.column_names or table.num_rows == 0:
        return table
    mode = table.column("mode").cast(pa.string())
    renamed = pc.and_(pc.equal(mode, "bwd"), pc.is_in(table.column("backend").cast(pa.string()),
                                                      value_set=pa.array(V1_TRAIN_BWD_BACKENDS)))
    new_mode = pc.if_else(pc.fill_null(renamed, False), pa.scalar("bwd_train"), mode)
    return table.set_column(table.column_names.index("mode"), pa.field("mode", pa.string()), new_mode)


def _v2_to_v3(table: pa.Table) -> pa.Table:
    """Version 2 -> 3: a row that met its noise target was stopped by it; other stop reasons are unknown."""
    if "noise_target_met" not in table.column_names or "stopped_by" in table.column_names:
        return table
    met = pc.fill_null(table.column("noise_target_met").cast(pa.bool_()), False)
    stopped = pc.if_else(met, pa.scalar("noise_target"), pa.scalar(None, pa.string()))
    return table.append_column(pa.field("stopped_by", pa.string()), stopped)


def _v3_to_v4_replicate(table: pa.Table) -> pa.Table:
    """Version 3 -> 4: the `replicate` column; every older row is the single replicate of its run (null)."""
    if "replicate" in table.column_names:
        return table
    return table.append_column(pa.field("replicate", pa.int64()), pa.nulls(table.num_rows, pa.int64()))


def _v4_to_v5_phases(table: pa.Table) -> pa.Table:
    """Version 4 -> 5: `extra_json["phases_s"]` becomes the typed `phases_s` column (and leaves extra_json)."""
    if "extra_json" not in table.column_names or "phases_s" in table.column_names:
        return table
    phases, extras = [], []
    for text in table.column("extra_json").cast(pa.string()).to_pylist():
        extra = json.loads(text) if text else None
        found = extra.pop("phases_s", None) if isinstance(extra, dict) else None
        phases.append(found)
        extras.append(text if found is None else json.dumps(extra, sort_keys=True))
    table = table.set_column(table.column_names.index("extra_json"), pa.field("extra_json", pa.string()),
                             pa.array(extras, pa.string()))
    return table.append_column(pa.field("phases_s", _KINDS["map<string,float64>"]),
                               pa.array(phases, _KINDS["map<string,float64>"]))


def _v5_to_v6_sensitivity(table: pa.Table) -> pa.Table:
    """Version 5 -> 6: no older row measured its calls-per-sample sensitivity: both columns null."""
    for name, kind in (("calls_sensitivity_ms", "map<string,float64>"), ("calls_sensitive", "bool")):
        if name not in table.column_names:
            table = table.append_column(pa.field(name, _KINDS[kind]), pa.nulls(table.num_rows, _KINDS[kind]))
    return table


def _v6_to_v7_times(table: pa.Table) -> pa.Table:
    """Version 6 -> 7: the timer's median is the device time (graph) or the eager time (events, wall); whether a
    row was checked at its size is read off its `oracle` text and `check_tokens`."""
    n = table.num_rows
    names = table.column_names
    timer = table.column("timer").cast(pa.string()) if "timer" in names else pa.nulls(n, pa.string())
    median = table.column("median_ms").cast(pa.float64()) if "median_ms" in names else pa.nulls(n, pa.float64())
    none = pa.scalar(None, pa.float64())
    added = {
        "device_ms": pc.if_else(pc.fill_null(pc.equal(timer, "graph"), False), median, none),
        "eager_ms": pc.if_else(pc.fill_null(pc.is_in(timer, value_set=pa.array(["events", "wall"])), False),
                               median, none),
    }
    oracle = table.column("oracle").to_pylist() if "oracle" in names else [None] * n
    tokens = table.column("total_tokens").to_pylist() if "total_tokens" in names else [None] * n
    checked = table.column("check_tokens").to_pylist() if "check_tokens" in names else [None] * n
    added["checked_at_size"] = pa.array([checked_at_size_of(o, t, c) for o, t, c in zip(oracle, tokens, checked)],
                                        pa.bool_())
    for name, values in added.items():
        if name not in names:
            table = table.append_column(pa.field(name, values.type), values)
    return table


# What `_v7_to_v8_versions` reads: a projected read that asks for `versions` reads these too (store/files.py).
VERSION_INPUTS = versions.INPUTS


def _v7_to_v8_versions(table: pa.Table) -> pa.Table:
    """Version 7 -> 8: each row's version record derived from its version columns (core/versions.py: derived),
    and an engine backend's backend_dist and backend_version made its engine's (they named qlabench)."""
    if "versions" in table.column_names or "backend" not in table.column_names:
        return table
    if not any(c in table.column_names for c in VERSION_INPUTS if c != "backend"):
        return table  # a projected read that asked for none of it
    names = [c for c in VERSION_INPUTS if c in table.column_names]
    cols = {c: table.column(c).to_pylist() for c in names}
    n = table.num_rows
    engines = {b: getattr(backend_decl.find(str(b)), "engine", None) for b in set(cols["backend"])}
    details = cols.pop("extra_json", [None] * n)  # read only for an engine's rows: their kernels' source
    dist, version = list(cols.get("backend_dist", [None] * n)), list(cols.get("backend_version", [None] * n))
    records, seen = [], {}
    for i, vals in enumerate(zip(*cols.values())):
        engine = engines[vals[0]]
        key = (vals, details[i] if engine else None)  # a file's rows share a few stacks: derive each once
        if key not in seen:
            seen[key] = versions.derived({**dict(zip(cols, vals)), "extra_json": key[1]})
        records.append(seen[key])
        if engine:
            dist[i], version[i] = engine, seen[key].get(engine)
    for name, values in (("backend_dist", dist), ("backend_version", version)):
        arr = pa.array(values, pa.string())
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), pa.field(name, pa.string()), arr)
        else:
            table = table.append_column(pa.field(name, pa.string()), arr)
    kind = _KINDS["map<string,string>"]
    return table.append_column(pa.field("versions", kind), pa.array([list(r.items()) for r in records], kind))


# (version the step upgrades from, step), oldest first: a version-v file runs every step with from >= v.
_UPGRADES = ((1, _v1_to_v2), (2, _v2_to_v3), (3, _v3_to_v4_replicate), (4, _v4_to_v5_phases),
             (5, _v5_to_v6_sensitivity), (6, _v6_to_v7_times), (7, _v7_to_v8_versions))


# Columns every row must have a value in: the point key columns that are not nullable, and the status.
REQUIRED = required_axes() + ("status",)


def check_rows(table: pa.Table, source: str) -> pa.Table:
    """SchemaError (a clean exit 2) for a table whose rows cannot be keyed or judged: a required column
    missing or null, or a status that is not one of ok, incorrect, skipped, error."""
    from qlabench.core.result import Status

    for name in REQUIRED:
        col = table.column(name)
        if col.null_count:
            what = "has no column" if col.null_count == table.num_rows else f"has {col.null_count} null value(s) in"
            raise SchemaError(f"{source}: {what} {name!r}, which every result row needs")
    known = {s.value for s in Status}
    bad = sorted(set(table.column("status").to_pylist()) - known)
    if bad:
        raise SchemaError(f"{source}: unknown status {bad[0]!r} (known: {', '.join(sorted(known))})")
    return table
