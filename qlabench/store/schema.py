"""The parquet schema of result files, derived from `ResultRow`, and its version history.

Version history (bump SCHEMA_VERSION and add an upgrade step when a column changes meaning or goes):
  1: first version (walking skeleton): run, versions, point, outcome, timing columns.

Adding a nullable column does not need a new version: older files simply read it as null.
Added that way (still version 1): cp_world_size, cp_mode, cp_rank_ms, cp_rank_fwd_ms, cp_rank_bwd_ms,
cp_intra (distributed context-parallel points; null / empty in older files and single-device rows).
"""

from __future__ import annotations

import pyarrow as pa

from qlabench.core.errors import SchemaError
from qlabench.core.result import row_fields

SCHEMA_VERSION = 1
METADATA_KEY = b"qlabench.schema_version"

_KINDS = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "list<int64>": pa.list_(pa.int64()),
    "list<float64>": pa.list_(pa.float64()),
    "list<string>": pa.list_(pa.string()),
}


def arrow_schema(extra_metadata: dict[str, str] | None = None) -> pa.Schema:
    """The arrow schema of a result file, with the schema version in its metadata."""
    meta = {METADATA_KEY: str(SCHEMA_VERSION).encode()}
    for k, v in (extra_metadata or {}).items():
        meta[f"qlabench.{k}".encode()] = v.encode()
    return pa.schema(
        [pa.field(name, _KINDS[kind], nullable=True, metadata={b"doc": doc.encode()})
         for name, kind, doc in row_fields()],
        metadata=meta,
    )


COLUMNS = tuple(name for name, _, _ in row_fields())


def upgrade(table: pa.Table, source: str) -> pa.Table:
    """Bring a table read from disk to the current schema, or raise SchemaError saying why not."""
    meta = table.schema.metadata or {}
    raw = meta.get(METADATA_KEY)
    if raw is None:
        raise SchemaError(f"{source}: not a qlabench results file (no {METADATA_KEY.decode()} metadata)")
    version = int(raw)
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"{source}: schema version {version} is newer than this qlabench understands "
            f"({SCHEMA_VERSION}); upgrade qlabench"
        )
    # Version 1 is current; future upgrade steps go here, oldest first.
    target = arrow_schema()
    cols = []
    for f in target:
        if f.name in table.column_names:
            cols.append(table.column(f.name).cast(f.type))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=target)
