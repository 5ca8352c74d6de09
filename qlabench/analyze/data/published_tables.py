"""The published tables qlabench ships: FlashQLA's benchmark tables, one per GPU it publishes, each with where
it comes from (`flashqla_published.json`, written with the CSVs by `scripts/flashqla_published.py`).

    table = published_table("GB200")   # by GPU name, as a user types it (core/gpu_names.py)
    table.gpu, table.stack_text, table.source
    rows = read_published_csv(table.file)

Every table was made by the same FlashQLA benchmark script (README.md here: the method), on its own GPU and
stack; the stack is the header's library line, and flash-qla's version is its setup.py at the file's commit.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.core.errors import ConfigError, QlabenchError
from qlabench.core.gpu_names import names_gpu, same_gpu, short_gpu_name
from qlabench.core.libraries import BY_NAME, package_name

MANIFEST = "flashqla_published.json"
DEFAULT_GPU = "NVIDIA H200"  # the table `qlabench report` compares with when none is named
# How a table's stack is listed: each compared library's own version, then the compilers and torch under them.
STACK_ORDER = ("flash_qla_version", "tilelang_version", "fla_version", "flashinfer_version", "torch_version")
# FlashQLA's script names its timer by tilelang's do_bench backend; qlabench's timer of the same method.
TIMERS = {"cudagraph": "graph"}
CSV_COLUMNS = ("mode", "model_config", "seqlens", "num_seqs", "total_tokens", "h_qk", "h_v", "flash_qla_ms",
               "flashinfer_ms", "fla_ms")


@dataclass(frozen=True)
class PublishedTable:
    """One shipped table and its provenance (a table given as a file of unknown origin has `gpu` None)."""

    name: str  # as printed: 'GB200', 'RTX 5090'
    gpu: str | None  # the GPU line of the source's header: 'NVIDIA GB200'
    csv: str  # the CSV's file name in this package, or the path it was given as
    repository: str = ""  # 'QwenLM/FlashQLA'
    path: str = ""  # the source file in it
    commit: str = ""  # the last commit that changed the source file
    header: tuple[str, ...] = ()  # the source's header lines, verbatim
    stack: tuple[tuple[str, str], ...] = ()  # (version column, version), STACK_ORDER
    timer: str | None = None  # qlabench's name of the timer it used ('graph')
    modes: tuple[str, ...] = ()  # 'fwd', and 'bwd' where it has backward rows

    @property
    def file(self) -> Path:
        if self.gpu is None:
            return Path(self.csv)
        return Path(str(importlib.resources.files("qlabench.analyze") / "data" / self.csv))

    @property
    def versions(self) -> dict[str, str]:
        """version column -> version: {'flash_qla_version': '0.1.2', ...} (empty: not known)."""
        return dict(self.stack)

    @property
    def stack_text(self) -> str:
        """'flash-qla 0.1.2, tilelang 0.1.9, fla 0.5.1, flashinfer 0.6.13, torch 2.9.1+cu128'."""
        return ", ".join(f"{package_name(c)} {v}" for c, v in self.stack) or "a stack it does not record"

    @property
    def source(self) -> str:
        """"QwenLM/FlashQLA `benchmark/benchmark_results_H200.txt` (commit 6e5d2ea)"."""
        if self.gpu is None:
            return f"`{self.csv}` (given as a file: its GPU and stack are not known)"
        return f"{self.repository} `{self.path}` (commit {self.commit[:7]})"

    def measured_on(self, device: str) -> bool:
        """Whether `device` (a row's GPU model) is the GPU this table was measured on (False: not known)."""
        return self.gpu is not None and same_gpu(device, self.gpu)


def _from_record(rec: dict) -> PublishedTable:
    libs = {f"{BY_NAME[k].column}": v for k, v in rec["libraries"].items() if k in BY_NAME}
    libs["flash_qla_version"] = rec["flash_qla_version"]
    stack = tuple((c, libs[c]) for c in STACK_ORDER if c in libs)
    backend = rec["config"].get("Backend")
    return PublishedTable(name=short_gpu_name(rec["gpu"]), gpu=rec["gpu"], csv=rec["csv"],
                          repository=rec["repository"], path=rec["path"], commit=rec["commit"],
                          header=tuple(rec["header"]), stack=stack, timer=TIMERS.get(backend, backend),
                          modes=tuple(rec["modes"]))


@functools.cache
def published_tables() -> tuple[PublishedTable, ...]:
    """Every shipped table, in the manifest's order."""
    text = (importlib.resources.files("qlabench.analyze") / "data" / MANIFEST).read_text()
    return tuple(_from_record(rec) for rec in json.loads(text)["tables"])


def _named(name: str) -> list[PublishedTable]:
    """The tables `name` names: the one it names exactly where there is one, else every one it names."""
    found = [t for t in published_tables() if names_gpu(name, t.gpu)]
    exact = [t for t in found if same_gpu(name, t.gpu)]
    return exact if len(exact) == 1 else found


def published_table(name: str | None = None) -> PublishedTable:
    """The shipped table of the GPU `name` names ('GB200', 'RTX 5090', 'pro6000'; None: the H200's);
    ConfigError naming the tables there are when it names none, or several."""
    if name is None:
        return next(t for t in published_tables() if same_gpu(t.gpu, DEFAULT_GPU))
    found = _named(name)
    if len(found) == 1:
        return found[0]
    if not found:
        names = ", ".join(t.name for t in published_tables())
        raise ConfigError(f"FlashQLA publishes no table for {name!r} (qlabench ships: {names}); or give a CSV file")
    raise ConfigError(f"{name!r} names several published tables ({', '.join(t.name for t in found)}): say which")


def table_of_gpu(gpu: str) -> PublishedTable | None:
    """The shipped table measured on the GPU model `gpu` names, or None where FlashQLA publishes none."""
    found = _named(gpu)
    return found[0] if len(found) == 1 else None


def table_of_file(path: str | os.PathLike) -> PublishedTable:
    """The table a CSV file holds: a shipped one where its bytes are that one's, else one of unknown origin."""
    data = Path(path).read_bytes() if Path(path).is_file() else None
    digest = hashlib.sha256(data).hexdigest() if data is not None else None
    for t in published_tables():
        if digest is not None and hashlib.sha256(t.file.read_bytes()).hexdigest() == digest:
            return t
    return PublishedTable(name=Path(path).name, gpu=None, csv=str(path))


def read_published_csv(path: str | os.PathLike) -> pd.DataFrame:
    """A published table's CSV as it is (CSV_COLUMNS); QlabenchError when it is missing or another table."""
    path = Path(path)
    if not path.is_file():
        raise QlabenchError(f"{path}: no such published table")
    try:
        pub = pd.read_csv(path, dtype={"seqlens": str, "model_config": str, "mode": str})
    except (OSError, ValueError, pd.errors.ParserError) as e:
        raise QlabenchError(f"{path}: cannot read the published table: {e}") from None
    missing = [c for c in CSV_COLUMNS if c not in pub.columns]
    if missing:
        raise QlabenchError(f"{path}: not a published table: missing columns {', '.join(missing)}")
    pub = pub.reset_index(drop=True)
    pub["seqlens"] = pub["seqlens"].fillna("").astype(str).str.strip()
    return pub
