"""The catalog of committed results: for each folder (or run file) under `results/`, what question it
answers, its library stack, its date, and whether it is the current answer or history.

`results/catalog.toml` is one file, read here and validated on load; every view that reads committed
evidence by default (`advise`, `show`, `report`, the study page, the docs blocks, a site) asks this module
which paths are current instead of naming folders of its own. A new run becomes the answer by adding
its entry (status "current") and marking the entries it replaces "history" with `superseded_by`.

Format (`results/catalog.toml`):

    format = 1

    [[entry]]
    path = "h200-flashinfer/flashinfer-cp"   # relative to results/: a folder, or one run file in a folder
    kind = "kernel-timings"                  # one of KINDS: what sort of evidence the rows are
    status = "current"                       # "current" or "history"
    date = 2026-12-01                        # the day of its newest row
    question = "..."                         # the question its rows answer, in a sentence
    stack = { flashinfer = "0.7.2.post1", fla = "0.6.0", ... }   # library -> version its rows recorded
    doc = "docs/FLASHINFER.md"               # optional: where the findings are written up
    superseded_by = "h200-current"           # history: the entry that answers its question now
    backends = ["fla-intracp"]               # optional: current only for these backends' rows

A file belongs to the entry with the longest path containing it, so a folder can be one entry and a run
inside it another (h200-study holds the current stack and the FlashInfer 0.6.13 run that newer rows
replaced). A stack value is a list where an entry deliberately holds several versions (an A/B); an entry
of kind "kernel-timings" holds one version per library, so a ranking read from it never mixes stacks.

API (pure Python; no pandas, cheap to import):

    load_catalog(root=None) -> Catalog      # root: the results folder; default results_root()
    results_root(start=None) -> Path        # ./results if it has a catalog, else the checkout's
    Catalog.entries, .get(path), .owner(file) -> Entry | None
    Catalog.current(kind=None), .history(kind=None) -> list[Entry]
    Catalog.current_paths(kinds) -> list[Path]   # the plain input a row loader takes
    Catalog.successor(entry) -> Entry            # follows superseded_by to a current entry
    Entry.path, .kind, .status, .date, .question, .stack, .doc, .superseded_by, .backends, .is_current,
    Entry.keeps(backend) -> bool                 # is this backend's row current evidence here
"""

from __future__ import annotations

import datetime as dt
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from qlabench.core.errors import ConfigError
from qlabench.core.libraries import LIBRARIES as LIBRARY_TABLE

CATALOG_NAME = "catalog.toml"
FORMAT = 1
STATUSES = ("current", "history")
# What sort of evidence an entry's rows are; views pick entries by kind (advise ranks kernel-timings only:
# a gate study's rows are deliberate slowdowns, a selfbench's are the harness timing itself).
KINDS = {
    "kernel-timings": "one checked kernel call per point, timed: what advise, show and the study rank",
    "stack-comparison": "two library versions measured against each other (an A/B)",
    "call-comparison": "two calls of one library measured in one run for their ratio (FlashInfer's prefill into a "
                       "state pool against its plain prefill); never ranked: the ratio within the run is the figure",
    "numerics": "errors against the float64 reference at full size",
    "serving": "decode and multi-token-verify steps against a state pool",
    "layer": "a whole Qwen3.5 GDN layer around each core",
    "context-parallel": "points split over several GPUs",
    "gate": "the regression gate's own evidence: A/A, power, re-runs (some rows are deliberate slowdowns)",
    "harness": "qlabench measuring itself: timer precision, cost, scaling, builds",
    "profile": "points under a profiler (Nsight Compute)",
    "cold-start": "first calls in a fresh process, kernel caches empty and warm (`qlabench cold-start`: "
                  "cold-start.json beside the rows); advise's first-call column reads it",
}
# Kinds whose rows time something else than a point's steady call: never "newer evidence" of a point's time
# (a cold-start row samples for 50 ms right after the first calls that compiled the kernels).
NOT_STEADY_KINDS = ("cold-start",)
# the packages of core/libraries.py, by their version column's stem: torch, triton, ..., flashinfer
LIBRARIES = tuple(lib.column.removesuffix("_version") for lib in LIBRARY_TABLE if lib.dist)
_KEYS = {"path", "kind", "status", "date", "question", "stack", "doc", "superseded_by", "backends"}
_REQUIRED = ("path", "kind", "status", "date", "question", "stack")


class CatalogError(ConfigError):
    """results/catalog.toml is malformed or contradicts itself: names the entry and the key."""


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the results folder, '/'-separated, no trailing slash
    kind: str
    status: str
    date: dt.date
    question: str
    stack: tuple[tuple[str, tuple[str, ...]], ...]  # (library, versions) in LIBRARIES order
    doc: str | None = None
    superseded_by: str | None = None
    backends: tuple[str, ...] | None = None  # None: every backend's rows

    @property
    def is_current(self) -> bool:
        return self.status == "current"

    @property
    def versions(self) -> dict[str, tuple[str, ...]]:
        return dict(self.stack)

    def keeps(self, backend: str) -> bool:
        """Whether `backend`'s rows under this entry are current evidence."""
        return self.is_current and (self.backends is None or backend in self.backends)

    @property
    def stack_label(self) -> str:
        return ", ".join(f"{lib.replace('_', '-')} {'/'.join(v)}" for lib, v in self.stack)


@dataclass(frozen=True)
class Catalog:
    root: Path  # the results folder the paths are relative to
    entries: tuple[Entry, ...]

    def get(self, path: str) -> Entry:
        want = _norm(path)
        for e in self.entries:
            if e.path == want:
                return e
        raise CatalogError(f"{self.root / CATALOG_NAME}: no entry for {path!r}")

    def owner(self, file: str | os.PathLike) -> Entry | None:
        """The entry a file or folder under the results folder belongs to (the longest containing path)."""
        p = Path(file)
        rel = _relative(p if p.is_absolute() else Path.cwd() / p, self.root)
        if rel is None:
            return None
        best = None
        for e in self.entries:
            if rel == e.path or rel.startswith(e.path + "/"):
                if best is None or len(e.path) > len(best.path):
                    best = e
        return best

    def current(self, kind: str | None = None) -> list[Entry]:
        return [e for e in self.entries if e.is_current and (kind is None or e.kind == kind)]

    def history(self, kind: str | None = None) -> list[Entry]:
        return [e for e in self.entries if not e.is_current and (kind is None or e.kind == kind)]

    def current_paths(self, kinds: tuple[str, ...] = ("kernel-timings",)) -> list[Path]:
        """The current entries' paths of these kinds: the plain list of paths a row loader takes (rows of
        backends an entry excludes, `Entry.backends`, are to be dropped with `owner(file).keeps(backend)`)."""
        return [self.root / e.path for e in self.entries if e.is_current and e.kind in kinds]

    def successor(self, entry: Entry) -> Entry:
        """The current entry that answers a history entry's question now (itself when current)."""
        seen = set()
        while not entry.is_current and entry.superseded_by:
            if entry.path in seen:
                raise CatalogError(f"{self.root / CATALOG_NAME}: superseded_by loops at {entry.path!r}")
            seen.add(entry.path)
            entry = self.get(entry.superseded_by)
        return entry


def results_root(start: str | os.PathLike | None = None) -> Path:
    """The results folder: `<start or cwd>/results` when it holds a catalog, else this checkout's."""
    for base in (Path(start) if start else Path.cwd(), Path(__file__).resolve().parents[2]):
        if (base / "results" / CATALOG_NAME).is_file():
            return base / "results"
    raise CatalogError(f"no results/{CATALOG_NAME} here or in the qlabench checkout: pass result files or folders")


def load_catalog(root: str | os.PathLike | None = None) -> Catalog:
    """Read and validate `<root>/catalog.toml` (root: the results folder; default `results_root()`)."""
    root = Path(root) if root is not None else results_root()
    file = root / CATALOG_NAME
    try:
        data = tomllib.loads(file.read_text())
    except FileNotFoundError:
        raise CatalogError(f"{file}: no catalog here") from None
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CatalogError(f"{file}: cannot read it: {e}") from None
    if data.get("format") != FORMAT:
        raise CatalogError(f"{file}: format = {data.get('format')!r}, this qlabench reads format {FORMAT}")
    extra = set(data) - {"format", "entry"}
    if extra:
        raise CatalogError(f"{file}: unknown top-level key(s) {', '.join(sorted(extra))}")
    raw = data.get("entry", [])
    if not isinstance(raw, list) or not raw:
        raise CatalogError(f"{file}: no [[entry]] tables")
    entries = tuple(_entry(file, i, t) for i, t in enumerate(raw))
    _check_links(file, entries)
    return Catalog(root, entries)


def _entry(file: Path, i: int, t: dict) -> Entry:
    where = f"{file}: entry {i + 1}" + (f" ({t['path']})" if isinstance(t.get("path"), str) else "")

    def bad(key: str, msg: str) -> CatalogError:
        return CatalogError(f"{where}: {key}: {msg}")

    if not isinstance(t, dict):
        raise CatalogError(f"{where}: not a table")
    if unknown := set(t) - _KEYS:
        raise bad(", ".join(sorted(unknown)), f"unknown key (known: {', '.join(sorted(_KEYS))})")
    for k in _REQUIRED:
        if k not in t:
            raise bad(k, "missing")
    for k in ("path", "kind", "status", "question"):
        if not isinstance(t[k], str) or not t[k].strip():
            raise bad(k, "must be a non-empty string")
    path = _norm(t["path"])
    if path.startswith("/") or ".." in path.split("/"):
        raise bad("path", f"{t['path']!r} must be relative to the results folder, inside it")
    if t["kind"] not in KINDS:
        raise bad("kind", f"{t['kind']!r} is not one of {', '.join(KINDS)}")
    if t["status"] not in STATUSES:
        raise bad("status", f"{t['status']!r} is not one of {', '.join(STATUSES)}")
    date = t["date"]
    if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
        raise bad("date", f"{date!r} must be a TOML date, e.g. 2026-12-01")
    stack = _stack(t["stack"], bad)
    if t["kind"] == "kernel-timings" and any(len(v) > 1 for _, v in stack):
        raise bad("stack", "a kernel-timings entry holds one version per library (split it into one entry per run)")
    for k in ("doc", "superseded_by"):
        if k in t and (not isinstance(t[k], str) or not t[k].strip()):
            raise bad(k, "must be a non-empty string")
    backends = t.get("backends")
    if backends is not None:
        if not isinstance(backends, list) or not backends or not all(isinstance(b, str) and b for b in backends):
            raise bad("backends", "must be a non-empty list of backend names")
        if t["status"] != "current":
            raise bad("backends", "only a current entry names the backends it is current for")
        backends = tuple(backends)
    sup = _norm(t["superseded_by"]) if "superseded_by" in t else None
    if t["status"] == "history" and sup is None:
        raise bad("superseded_by", "a history entry names the entry that answers its question now")
    if t["status"] == "current" and sup is not None and backends is None:
        raise bad("superseded_by", "a current entry is superseded only for the backends it leaves out (set backends)")
    return Entry(path, t["kind"], t["status"], date, t["question"].strip(), stack, t.get("doc"), sup, backends)


def _stack(raw, bad) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(raw, dict):
        raise bad("stack", "must be a table of library = version")
    if unknown := set(raw) - set(LIBRARIES):
        raise bad("stack", f"unknown library {', '.join(sorted(unknown))} (known: {', '.join(LIBRARIES)})")
    out = []
    for lib in LIBRARIES:
        if lib not in raw:
            continue
        v = raw[lib]
        versions = (v,) if isinstance(v, str) else tuple(v) if isinstance(v, list) else None
        if not versions or not all(isinstance(x, str) and x for x in versions):
            raise bad("stack", f"{lib} must be a version string or a list of them")
        out.append((lib, versions))
    return tuple(out)


def _check_links(file: Path, entries: tuple[Entry, ...]) -> None:
    paths = [e.path for e in entries]
    dup = sorted({p for p in paths if paths.count(p) > 1})
    if dup:
        raise CatalogError(f"{file}: path {dup[0]!r} has more than one entry")
    by_path = {e.path: e for e in entries}
    for e in entries:
        if e.superseded_by is None:
            continue
        if e.superseded_by not in by_path:
            raise CatalogError(f"{file}: entry {e.path!r}: superseded_by {e.superseded_by!r} is no entry")
        if e.superseded_by == e.path:
            raise CatalogError(f"{file}: entry {e.path!r}: superseded_by names itself")
    cat = Catalog(file.parent, entries)
    for e in entries:
        if cat.successor(e).is_current is False:
            raise CatalogError(f"{file}: entry {e.path!r}: superseded_by leads to no current entry")


def _norm(path: str) -> str:
    return str(path).strip().replace("\\", "/").strip("/")


def _relative(p: Path, root: Path) -> str | None:
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
