"""Prose that cannot drift: the numbers a page of today's answer states outside its generated blocks.

On the pages of today's answer (PROSE_PAGES), in their `## Today's answer` section (to the next `## `
heading), every decimal number outside a generated block, a code span and a code fence must be
- a number a generated block of the same page prints: the prose repeats what the rows give, so when the rows
  change and the block re-renders, the sentence no longer matches and `docs check` names it; or
- inside a dated section that names the runs it describes,

      <!-- qlabench:dated run=RUN_ID[,RUN_ID] -->
      ... what those runs measured ...
      <!-- /qlabench:dated -->

  where each run must be in the results, and each `N ms` (and each number of a table column whose header
  says `ms`) must be, at the decimals shown, a time one of their rows holds: its median, one of its samples
  (the fastest, say) or a decile of them. A dated section on any page is checked the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from qlabench.analyze.blocks.markers import find_blocks

PROSE_PAGES = ("README.md", "docs/FLASHINFER.md", "docs/FLASHQLA-STUDY.md")
ANSWER_HEADING = "## Today's answer"
DATED_OPEN = re.compile(r"^<!-- qlabench:dated run=([A-Za-z0-9_.@,-]+) -->\s*$")
DATED_CLOSE = re.compile(r"^<!-- /qlabench:dated -->\s*$")
# A decimal number that is no version ('0.7.2', 'py3.10') and no part of a name.
NUMBER = re.compile(r"(?<![\w.\-/])(\d+\.\d+)(?![\w.]*\d)")
MS = re.compile(r"(?<![\w.\-/])(\d+\.\d+) ?ms\b")


@dataclass(frozen=True)
class Drift:
    file: str
    line: int
    what: str

    @property
    def text(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


def _plain(line: str) -> str:
    """A line without its code spans and HTML comments: what prose states."""
    return re.sub(r"<!--.*?-->", "", re.sub(r"`[^`]*`", "", line))


def _dated(lines: list[str], where: str) -> tuple[list[tuple[int, int, tuple[str, ...]]], list[Drift]]:
    """(start, end, runs) of each dated section; a marker left open or closed twice is a Drift."""
    out, problems, open_at = [], [], None
    for i, line in enumerate(lines):
        if m := DATED_OPEN.match(line):
            if open_at is not None:
                problems.append(Drift(where, i + 1, "a dated section opens inside another"))
            open_at, runs = i, tuple(r for r in m.group(1).split(",") if r)
        elif DATED_CLOSE.match(line):
            if open_at is None:
                problems.append(Drift(where, i + 1, "a closing dated marker without an opening one"))
                continue
            out.append((open_at, i, runs))
            open_at = None
    if open_at is not None:
        problems.append(Drift(where, open_at + 1, "a dated section is never closed (<!-- /qlabench:dated -->)"))
    return out, problems


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _quoted_ms(lines: list[str], start: int, end: int) -> list[tuple[int, str]]:
    """(line index, number) of every time the lines quote in ms: 'N ms' in a sentence, and every number in a
    table column whose header names ms ('plain ms', 'ms')."""
    out, ms_columns = [], None
    for i in range(start, end):
        line = lines[i]
        if line.lstrip().startswith("|"):
            cells = _cells(line)
            if ms_columns is None:  # a table's header row
                ms_columns = [j for j, c in enumerate(cells) if re.search(r"\bms\b", c)]
                continue
            if all(set(c) <= set("-: ") for c in cells):
                continue
            out += [(i, n) for j in ms_columns if j < len(cells) for n in NUMBER.findall(_plain(cells[j]))]
            continue
        ms_columns = None
        out += [(i, n) for n in MS.findall(_plain(line))]
    return out


def _answer_lines(lines: list[str]) -> range:
    start = next((i for i, line in enumerate(lines) if line.strip() == ANSWER_HEADING), None)
    if start is None:
        return range(0)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return range(start + 1, end)


def prose_drift(path: Path, text: str, medians: dict[str, set[float]], checked: bool) -> list[Drift]:
    """The numbers of `text` that nothing ties to the rows. `medians`: run id -> the medians of its rows;
    `checked`: whether the page's answer section is held to the rule (a PROSE_PAGES page)."""
    where = str(path)
    lines = text.split("\n")
    blocks = find_blocks(text, where)
    in_block = {i for b in blocks for i in range(b.start, b.end + 1)}
    block_numbers = {n for b in blocks for n in NUMBER.findall(b.body)}
    sections, drift = _dated(lines, where)
    dated = {i: runs for s, e, runs in sections for i in range(s, e + 1)}
    for s, e, runs in sections:
        unknown = [r for r in runs if r not in medians]
        if unknown:
            drift.append(Drift(where, s + 1, f"the dated section cites run(s) {', '.join(unknown)}, which no results "
                                             "file holds"))
            continue
        known = set().union(*(medians[r] for r in runs))
        for i, n in _quoted_ms(lines, s + 1, e):
            d = len(n.split(".")[1])
            if not any(abs(round(m, d) - float(n)) < 0.5 * 10 ** -d for m in known):
                drift.append(Drift(where, i + 1, f"{n} ms is no time of run(s) {', '.join(runs)} (a row's median, "
                                                 "sample or decile)"))
    if not checked:
        return drift
    fence = False
    for i in _answer_lines(lines):
        if lines[i].lstrip().startswith("```"):
            fence = not fence
            continue
        if fence or i in in_block or i in dated:
            continue
        loose = [n for n in NUMBER.findall(_plain(lines[i])) if n not in block_numbers]
        if loose:
            drift.append(Drift(where, i + 1, f"{', '.join(loose)} stated in today's answer outside a generated block "
                                             "and no block prints it (a block, or a dated section naming its run)"))
    return drift


def check_prose(root: Path, files: Iterable[Path], medians: dict[str, set[float]]) -> list[Drift]:
    """Every file's drift (PROSE_PAGES held to the answer rule; every file's dated sections checked)."""
    pages = {(root / p).resolve() for p in PROSE_PAGES}
    out = []
    for f in files:
        out += prose_drift(f, f.read_text(), medians, f.resolve() in pages)
    return out


def run_medians(results: Path) -> dict[str, set[float]]:
    """Run id -> the times its rows hold (each row's median, samples and deciles of the samples), over every
    results file under `results` (three columns read)."""
    import numpy as np

    from qlabench.analyze.evidence import read_evidence

    rows = read_evidence([results], columns=("run_id", "median_ms", "samples_ms"), all_runs=True).rows
    out: dict[str, set[float]] = {}
    samples = rows["samples_ms"] if "samples_ms" in rows else [None] * len(rows)
    for run, m, xs in zip(rows["run_id"], rows["median_ms"], samples):
        got = out.setdefault(str(run).split("@", 1)[0], set())
        if m is not None and m == m:
            got.add(float(m))
        if xs is not None and len(xs):
            arr = np.asarray(xs, dtype=float)
            got.update(map(float, arr))
            got.update(map(float, np.percentile(arr, range(10, 100, 10))))
    return out
