"""FlashQLA's benchmark output read into a published table: `benchmark/benchmark_results_<GPU>.txt`, as
`benchmark/bench_gated_delta_rule.py` prints it, becomes one CSV row per configuration (README.md here).

The numbers are facts: each time is carried as printed ('0.320ms' -> '0.320'), never through a float; the
speedup columns are left out (they are the times' ratios). A case is printed by its label ('1x32768',
'8192x4', '8k_2seq'), and what a label packs is defined only in the benchmark script of the same commit
(`FWD_SEQLEN_CONFIGS`, `BWD_SEQLEN_CONFIGS`): `script_layouts` reads those lists from the script's text
without running it. `scripts/flashqla_published.py` runs both on FlashQLA's repository and writes the
package's tables and their provenance.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from dataclasses import dataclass

from qlabench.analyze.data.published_tables import CSV_COLUMNS
from qlabench.core.errors import QlabenchError

# Each section's column header, words as printed (the format this reader knows; another is refused).
FORWARD_HEADER = "Model Config Seqlens h_qk h_v flash_qla [fwd] FI [fwd] FLA [fwd] vs FLA vs FI"
BACKWARD_HEADER = "Model Config SeqLen h_qk h_v #seq flash_qla [bwd] FLA [bwd] Speedup"
SECTIONS = {">>> FORWARD BENCHMARKS": ("fwd", FORWARD_HEADER), ">>> BACKWARD BENCHMARKS": ("bwd", BACKWARD_HEADER)}
_TIME = re.compile(r"(\d+\.\d+)ms")
_RATIO = re.compile(r"\d+\.\d+x")
_NOT_MEASURED = "N/A"  # the script's mark for a backend that failed or was skipped on a case
# Lines the script prints about a failed case: the case has no row, the line is not one.
_NOTE_PREFIXES = ("[", "Exception:")


@dataclass(frozen=True)
class Layout:
    """What one case label packs into a call: the lengths (forward), or a random split of `total_tokens`
    into `num_seqs` sequences (backward: `seqlens` empty, as the published table leaves it)."""

    num_seqs: int
    total_tokens: int
    seqlens: tuple[int, ...] = ()


@dataclass(frozen=True)
class BenchText:
    """One results file: its header as printed, what the header says, and the table's rows."""

    header: tuple[str, ...]  # the lines above the first rule, verbatim
    gpu: str  # 'NVIDIA GB200'
    config: dict[str, str]  # {'Warmup': '10', 'Repeats': '100', 'Backend': 'cudagraph'}
    libraries: dict[str, str]  # {'torch': '2.9.1+cu130', 'fla': '0.5.2', ...}, as printed
    rows: tuple[dict[str, str], ...]  # CSV_COLUMNS -> text
    notes: tuple[str, ...] = ()  # the script's lines about failed cases


def script_layouts(script: str) -> dict[str, Layout]:
    """label -> Layout, from the benchmark script's FWD_SEQLEN_CONFIGS and BWD_SEQLEN_CONFIGS (its text)."""
    try:
        tree = ast.parse(script)
    except SyntaxError as e:
        raise QlabenchError(f"the benchmark script does not parse: {e}") from None
    out: dict[str, Layout] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("FWD_SEQLEN_CONFIGS", "BWD_SEQLEN_CONFIGS")):
            continue
        if not isinstance(node.value, ast.List):
            raise QlabenchError(f"{node.targets[0].id}: expected a list of SeqLenConfig(label, seqlens)")
        for item in node.value.elts:
            if not (isinstance(item, ast.Call) and len(item.args) == 2 and isinstance(item.args[0], ast.Constant)):
                raise QlabenchError(f"{node.targets[0].id}: cannot read {ast.unparse(item)}")
            out[str(item.args[0].value)] = _layout(item.args[1])
    if not out:
        raise QlabenchError("the benchmark script defines no FWD_SEQLEN_CONFIGS or BWD_SEQLEN_CONFIGS")
    return out


def _layout(node: ast.expr) -> Layout:
    """[a, b], [n] * k, or generate_rand_seqlens(count, total, seed=...) as a Layout; anything else refused."""
    if isinstance(node, ast.List) and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
        lens = tuple(int(e.value) for e in node.elts)
        return Layout(len(lens), sum(lens), lens)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Constant)
            and type(node.right.value) is int):
        base = _layout(node.left)
        lens = base.seqlens * node.right.value
        return Layout(len(lens), sum(lens), lens)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "generate_rand_seqlens"
            and len(node.args) == 2 and all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args)):
        return Layout(node.args[0].value, node.args[1].value)
    raise QlabenchError(f"cannot read the sequence lengths {ast.unparse(node)}")


def parse_results(text: str, layouts: dict[str, Layout]) -> BenchText:
    """The results file's header and rows; QlabenchError naming the line where it is not the known format."""
    lines = text.splitlines()
    rule = next((i for i, s in enumerate(lines) if s.strip() and set(s.strip()) == {"="}), None)
    if rule is None:
        raise QlabenchError("not a FlashQLA benchmark result: no '=====' rule under its header")
    header = tuple(lines[:rule])
    fields = {k.strip(): v.strip() for k, sep, v in (s.partition(":") for s in header) if sep and v.strip()}
    if not fields.get("GPU"):
        raise QlabenchError("not a FlashQLA benchmark result: its header names no GPU")
    config = dict(p.strip().partition("=")[::2] for p in fields.get("Config", "").split(",") if "=" in p)
    libraries = _libraries(header)
    rows, notes, mode, i = [], [], None, rule + 1
    while i < len(lines):
        s = lines[i].strip()
        i += 1
        if s in SECTIONS:
            mode, expected = SECTIONS[s]
            if i + 1 >= len(lines) or " ".join(lines[i].split()) != expected or set(lines[i + 1].strip()) != {"-"}:
                raise QlabenchError(f"line {i + 1}: {s} is not followed by its column header {expected!r}")
            i += 2
        elif not s or set(s) == {"="} or s == "Benchmark Finished.":
            continue
        elif s.startswith(_NOTE_PREFIXES):
            notes.append(s)
        elif mode is None:
            raise QlabenchError(f"line {i}: {s!r} is outside any section")
        else:
            rows.append(_row(mode, s, layouts, i))
    if not rows:
        raise QlabenchError("not a FlashQLA benchmark result: no row in a FORWARD or BACKWARD section")
    return BenchText(header, fields["GPU"], config, libraries, tuple(rows), tuple(notes))


def _libraries(header: tuple[str, ...]) -> dict[str, str]:
    """The line under 'Library Versions:' ('torch: 2.9.1+cu128 | fla: 0.5.1 | ...') as a mapping."""
    for i, s in enumerate(header[:-1]):
        if s.strip() == "Library Versions:":
            pairs = (p.partition(":") for p in header[i + 1].split("|"))
            return {k.strip(): v.strip() for k, sep, v in pairs if sep}
    return {}


def _row(mode: str, line: str, layouts: dict[str, Layout], number: int) -> dict[str, str]:
    """One printed row as a CSV row: forward ends in 3 times and 2 ratios, backward in #seq, 2 times, 1 ratio."""
    words = line.split()
    n_times, n_ratios = (3, 2) if mode == "fwd" else (2, 1)
    n_ints = 2 if mode == "fwd" else 3  # h_qk, h_v (and #seq)
    tail = n_ints + n_times + n_ratios
    if len(words) < tail + 2:
        raise QlabenchError(f"line {number}: {line!r} is not a {mode} row")
    ints, times, ratios = (words[-tail:-tail + n_ints], words[-n_times - n_ratios:-n_ratios], words[-n_ratios:])
    label, config = words[-tail - 1], " ".join(words[:-tail - 1])
    if (not all(w.isdigit() for w in ints) or not all(_TIME.fullmatch(w) or w == _NOT_MEASURED for w in times)
            or not all(_RATIO.fullmatch(w) or w == _NOT_MEASURED for w in ratios)):
        raise QlabenchError(f"line {number}: {line!r} is not a {mode} row")
    layout = layouts.get(label)
    if layout is None:
        raise QlabenchError(f"line {number}: the benchmark script defines no case {label!r}")
    if mode == "bwd" and int(ints[2]) != layout.num_seqs:
        raise QlabenchError(f"line {number}: {ints[2]} sequences, but the script's {label!r} has {layout.num_seqs}")
    ms = ["" if w == _NOT_MEASURED else _TIME.fullmatch(w).group(1) for w in times]
    flash_qla, flashinfer, fla = (ms[0], ms[1], ms[2]) if mode == "fwd" else (ms[0], "", ms[1])
    return {"mode": mode, "model_config": config, "seqlens": "+".join(map(str, layout.seqlens)),
            "num_seqs": str(layout.num_seqs), "total_tokens": str(layout.total_tokens), "h_qk": ints[0],
            "h_v": ints[1], "flash_qla_ms": flash_qla, "flashinfer_ms": flashinfer, "fla_ms": fla}


def to_csv(rows) -> str:
    """The rows as the published table's CSV (CSV_COLUMNS, csv's own line ends)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS)
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()
