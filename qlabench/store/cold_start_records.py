"""The cold-start records file: `qlabench cold-start` (workflows/cold_start.py) writes one record per point and
phase into OUT/cold-start.json, rewritten after every record so that a run stopped part-way keeps what it
measured; the cold-start table (analyze/cold_start.py) and advise's first-call column
(analyze/answer/first_call.py) read it here.

A record: backend, mode, point (its label), phase ("cold": every kernel cache empty; "warm": the caches the
cold process left), first_calls_s (None unless ok), status, reason, cache_mib (None where the cache folder
was not there to measure), device, run_id.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from qlabench.core.errors import QlabenchError

RECORDS = "cold-start.json"


def read_records(path: str | Path) -> list[dict]:
    """The records of a cold-start folder (or of its JSON file); QlabenchError when there are none."""
    path = Path(path)
    f = path / RECORDS if path.is_dir() else path
    try:
        recs = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        raise QlabenchError(f"no cold-start records in {path}: {e}") from None
    if not isinstance(recs, list) or not recs:
        raise QlabenchError(f"no cold-start records in {path}")
    return recs


def write_text_atomic(path: Path, text: str) -> None:
    """`path` holds either its old text or `text`, never half of it: a run stopped while writing loses nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_records(folder: str | Path, records: list[dict]) -> Path:
    """Write `records` to FOLDER/cold-start.json (atomically) and return its path."""
    f = Path(folder) / RECORDS
    write_text_atomic(f, json.dumps(records, indent=1))
    return f
