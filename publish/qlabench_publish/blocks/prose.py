"""Prose that cannot drift: every decimal number a docs page states outside its generated blocks is checked.

On every page `docs check` reads (README.md, docs/*.md, results/README.md), each decimal of its prose (outside
generated blocks, code fences and spans, HTML comments; versions and names are no numbers: prose_numbers.py)
must be one of:

(a) a number a generated block of the same page prints (the prose repeats the rows; when they change and the
    block re-renders, the sentence no longer matches);
(b) inside a dated section citing runs (`<!-- qlabench:dated run=RUN_ID|results/PATH,... -->`), one the
    runs' rows hold at the decimals shown: a time in ms is a row's median, its fastest or slowest sample or a
    decile of its samples; a ratio (`1.82x`, a table column headed `ratio` or `speedup`) or a signed
    change (`+1.1%`) is that of the medians of two rows of one problem shape; a number with no unit may be
    either; a number in another unit (s, TB/s, MiB, ...) is a value of the rows' columns named with that unit
    (`compile_s`, `hbm_peak_read_tbs`), a number with no unit may also be an error (`err_o`), and a number
    of a column the section names in a code span (`sm_coverage`) a value of that column. Each cited run must be in the
    results (prose_sources.py);
(c) inside a dated section citing committed files (`file=docs/h200/logs/x.log,results/.../report.md`), a
    number one of the files writes, at the decimals shown or with more that round to it (a `%` may be
    written there as a fraction); every decimal of the section, whatever its unit. A section may cite runs
    and files: a number is then checked against both. In a dated section a ratio or a signed change may also
    be the ratio of two other numbers of its line or table row (a speedup beside the two times it divides),
    within the rounding of the numbers shown;
(d) inside `<!-- qlabench:unchecked why="..." -->`, a section that says why nothing can check its numbers
    (settings, other libraries' constants, outside figures), or right after a mark of the same form written
    inline after the number (a derived figure in a checked paragraph: it exempts that number, with the range
    or list it ends); `docs check` counts and lists those lines per page with their reasons, so no one takes
    them for checked ones.

Anything else is a Drift naming the file and line, and `docs check` fails. The markers' rules: prose_page.py.

A check against runs and files is only as sharp as what they hold: a section citing a folder of 3,000 rows holds
some median, sample decile or ratio near almost any time, and passes a wrong number as readily as the right one.
So every number checked under (b) or (c) is tried again with its last digit one up and one down; where both pass
too, the check cannot tell it from its neighbours, and `docs check` counts those per page ("blurred"): a number
there is consistent with its sources, not held to one row. Citing the one run a number comes from, or putting
it in a block, sharpens it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from qlabench_publish.blocks.files import doc_files, read_doc
from qlabench_publish.blocks.prose_numbers import Numbers, Quoted, text_numbers
from qlabench_publish.blocks.prose_page import (ERROR_COLUMNS, ERROR_UNIT, UNIT_COLUMNS, Drift, Page, Section,
                                                read_page)
from qlabench_publish.blocks.prose_sources import Sources, load_sources

__all__ = ["Drift", "ProseReport", "Unchecked", "check_prose", "unchecked_lines"]


@dataclass(frozen=True)
class Unchecked:
    file: str
    why: str
    lines: tuple[int, ...]  # the numeric lines it covers (1-based)
    inline: bool = False  # marked after a number, not a section

    @property
    def text(self) -> str:
        span = f"line {self.lines[0]}" if len(self.lines) == 1 else "lines " + ", ".join(map(str, self.lines))
        return f'"{self.why}" ({span}{", inline" if self.inline else ""})'


@dataclass
class ProseReport:
    drift: list[Drift] = field(default_factory=list)
    unchecked: list[Unchecked] = field(default_factory=list)
    numeric_lines: dict[str, dict[str, int]] = field(default_factory=dict)  # page -> {'block'|'dated'|...: n}
    # (page, the line of a dated section's opening marker) -> [numbers checked against its runs and files, of them
    # those whose neighbours pass too, the rows its runs hold]
    blurred_sections: dict[tuple[str, int], list[int]] = field(default_factory=dict)

    @property
    def blurred(self) -> dict[str, list[int]]:
        """page -> [numbers checked against runs and files, of them blurred]."""
        out: dict[str, list[int]] = {}
        for (page, _), (checked, blurred, _) in self.blurred_sections.items():
            total = out.setdefault(page, [0, 0])
            total[0] += checked
            total[1] += blurred
        return out

    def unchecked_by_page(self) -> dict[str, list[Unchecked]]:
        out: dict[str, list[Unchecked]] = {}
        for u in self.unchecked:
            out.setdefault(u.file, []).append(u)
        return out


def _runs_say(q: Quoted, runs: tuple[str, ...]) -> str:
    names = ", ".join(runs)
    if q.unit == "ms":
        return f"no time of run(s) {names} (a row's median, fastest or slowest sample, or a decile)"
    if q.unit == "x":
        return f"no ratio of the medians of two rows of one problem in run(s) {names}"
    if q.unit == "%" and q.signed:
        return f"no change between the medians of two rows of one problem in run(s) {names}"
    if q.unit == ERROR_UNIT:
        return f"no error (err_ column) of run(s) {names}"
    if not q.unit:
        return f"no time of run(s) {names} nor a ratio of two of their medians (nor a value of a result column " \
               "the section names in a code span)"
    if q.unit in UNIT_COLUMNS:
        return f"no value of run(s) {names} in a {q.unit} column (nor of a column the paragraph names)"
    return f"a number in {q.unit}, which the rows of run(s) {names} are not checked for (cite the file it is from)"


def _in_columns(q: Quoted, rows, columns) -> bool:
    """Whether a (column, factor) of `columns` holds `q`: its value times the factor, at q's decimals."""
    for c, f in columns:
        col = rows.columns.get(c)
        if col is not None and col.holds_value(q.value / f, q.decimals + round(math.log10(f))):
            return True
    return False


def _held(q: Quoted, rows, files: list[Numbers], columns: frozenset[str]) -> bool:
    if any(f.holds(q) for f in files):
        return True
    if rows is None:
        return False
    named = [(c, 1) for c in columns] + ([(c, 100) for c in columns] if q.unit == "%" else [])
    errors = [(c, 1) for c in ERROR_COLUMNS] if q.unit in ("", ERROR_UNIT) else []
    if _in_columns(q, rows, [*named, *UNIT_COLUMNS.get(q.unit, ()), *errors]):
        return True
    if q.unit in ("ms", "") and rows.times.holds(q):
        return True
    if q.unit in ("x", "") and rows.ratios.holds(q):
        return True
    return q.unit == "%" and q.signed and rows.ratios.holds_value(1 + q.value / 100, q.decimals + 2)


def _bounds(q: Quoted) -> tuple[float, float]:
    half = 0.5 * 10.0 ** -q.decimals
    return q.value - half, q.value + half


def _ratio_of_line(q: Quoted, others: list[Quoted]) -> bool:
    """Whether `q` (a ratio, or a signed % change) is the ratio of two other numbers of its line or table
    row, by interval arithmetic over the decimals each shows: 'FlashQLA 0.395 ms vs FLA 1.127 ms, 2.85x',
    '0.327 -> 0.394 ms (+20.5%)'. Those two numbers are checked on their own."""
    if q.unit not in ("x", "", ERROR_UNIT) and not (q.unit == "%" and q.signed):
        return False
    lo, hi = _bounds(q)
    if q.unit == "%":
        lo, hi = 1 + lo / 100, 1 + hi / 100
    for a in others:
        for b in others:
            if a is b or a.value <= 0 or b.value <= 0:
                continue
            (a_lo, a_hi), (b_lo, b_hi) = _bounds(a), _bounds(b)
            if b_lo > 0 and a_lo / b_hi <= hi * (1 + 1e-12) and a_hi / b_lo >= lo * (1 - 1e-12):
                return True
    return False


def _passes(q: Quoted, rows, files: list[Numbers], columns: frozenset[str], others: list[Quoted]) -> bool:
    return _held(q, rows, files, columns) or _ratio_of_line(q, others)


def _neighbours(q: Quoted) -> list[Quoted]:
    """`q` with its last shown digit one up and one down (none below zero)."""
    step = 10.0 ** -q.decimals
    return [dataclasses.replace(q, value=v) for v in (q.value - step, q.value + step) if v > 0]


def _cite_problems(page: Page, s: Section, sources: Sources) -> list[Drift]:
    out = [Drift(page.path, s.start + 1, f"the dated section cites run {r}, {sources.missing_runs[r]}")
           for r in s.runs if r in sources.missing_runs]
    out += [Drift(page.path, s.start + 1, f"the dated section cites file {f}, {sources.missing_files[f]}")
            for f in s.files if f in sources.missing_files]
    return out


def _check_page(page: Page, sources: Sources, report: ProseReport) -> None:
    blocks = text_numbers(page.blocks_text)
    counts = report.numeric_lines.setdefault(page.path, {"block": 0, "dated": 0, "unchecked": 0, "drift": 0})
    report.drift += page.problems
    broken = set()
    for s in page.sections:
        if s.kind == "dated" and (problems := _cite_problems(page, s, sources)):
            report.drift += problems
            broken.add(s)
    held: dict[Section, list[int]] = {s: [] for s in page.sections}
    named_in: dict[Section, frozenset[str]] = {s: frozenset() for s in page.sections}
    for line in page.lines:  # a column named anywhere in a section may be quoted anywhere in it
        if (s := page.section_of(line.index)) is not None:
            named_in[s] |= line.columns
    inline: dict[str, list[int]] = {}
    for line in page.lines:
        s = page.section_of(line.index)
        if s is not None:
            held[s].append(line.index + 1)
        if s is not None and s.kind == "unchecked":
            counts["unchecked"] += 1
            continue
        exempt = dict(line.exempt)
        for why in dict.fromkeys(exempt.values()):
            inline.setdefault(why, []).append(line.index + 1)
        loose = [q for k, q in enumerate(line.numbers) if k not in exempt and not blocks.holds(q)]
        if not loose:
            counts["unchecked" if exempt else "block"] += 1
            continue
        if s is None:
            counts["drift"] += 1
            report.drift += [Drift(page.path, line.index + 1, f"{q.shown} is stated outside the generated blocks and "
                                   "outside any dated or unchecked section, and no block of the page prints it")
                             for q in loose]
            continue
        counts["unchecked" if exempt else "dated"] += 1
        if s in broken:
            continue
        rows = sources.rows(s.runs) if s.runs else None
        files = [sources.files[f] for f in s.files if f in sources.files]
        tally = report.blurred_sections.setdefault((page.path, s.start + 1), [0, 0, rows.rows if rows else 0])
        for q in loose:
            others = [o for o in line.numbers if o is not q]
            if _passes(q, rows, files, named_in[s], others):
                near = _neighbours(q)
                blur = bool(near) and all(_passes(n, rows, files, named_in[s], others) for n in near)
                tally[0] += 1
                tally[1] += blur
            else:
                says = ([_runs_say(q, s.runs)] if s.runs else []) + (
                    [f"in none of the file(s) {', '.join(s.files)} at the decimals shown"] if s.files else [])
                report.drift.append(Drift(page.path, line.index + 1, f"{q.shown} is {'; and '.join(says)}"))
    for s, lines in held.items():
        if s.kind == "unchecked":
            if lines:
                report.unchecked.append(Unchecked(page.path, s.why, tuple(lines)))
            else:
                report.drift.append(Drift(page.path, s.start + 1, "the unchecked section holds no decimal number: "
                                                                  "remove its markers"))
    report.unchecked += [Unchecked(page.path, why, tuple(lines), inline=True) for why, lines in inline.items()]


def _shown(path: Path, root: Path) -> str:
    """A page as messages name it: relative to the checkout when inside it ('docs/FLASHINFER.md')."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def check_prose(root: Path, files: Iterable[Path]) -> ProseReport:
    """Every page's numbers held to the rule (paths in the markers are relative to the checkout `root`)."""
    files = [Path(f) for f in files]
    pages = [read_page(_shown(f, Path(root)), read_doc(f)) for f in files]
    runs = {r for p in pages for s in p.sections for r in s.runs}
    cited = {f for p in pages for s in p.sections for f in s.files}
    named = {c for p in pages for line in p.lines for c in line.columns}
    named |= {c for pairs in UNIT_COLUMNS.values() for c, _ in pairs} | set(ERROR_COLUMNS) if runs else set()
    sources = load_sources(Path(root), runs, cited, set(doc_files(Path(root))) | set(files), named)
    report = ProseReport()
    for page in pages:
        _check_page(page, sources, report)
    return report


def unchecked_lines(report: ProseReport) -> list[str]:
    """What `docs check` prints of the prose: how many numeric lines each rule covers, then every page's
    unchecked lines with their reasons."""
    total = {k: sum(c[k] for c in report.numeric_lines.values()) for k in ("block", "dated", "unchecked")}
    out = [f"numeric prose lines: {total['block']} repeat a block, {total['dated']} are checked against the runs "
           f"and files their dated section cites, {total['unchecked']} are unchecked"]
    for page, items in report.unchecked_by_page().items():
        n = len({line for u in items for line in u.lines})
        out.append(f"  {page}: {n} unchecked: " + "; ".join(u.text for u in items))
    pages = report.blurred
    checked, blurred = (sum(t[i] for t in pages.values()) for i in (0, 1))
    if checked:
        out.append(f"numbers checked against cited runs and files: {checked}; blurred (their last digit one up and "
                   f"one down would pass too, so the check cannot tell them from a neighbour): {blurred} "
                   f"({100 * blurred / checked:.0f}%)")
        for page, (c, b) in pages.items():
            if b:
                # where sharpening pays most: the page's section with the most blurred numbers
                (_, at), (sc, sb, rows) = max(((k, v) for k, v in report.blurred_sections.items() if k[0] == page),
                                              key=lambda kv: (kv[1][1], -kv[0][1]))
                cites = f", its runs holding {rows} rows" if rows else ""
                out.append(f"  {page}: {b} of {c} blurred; most in the dated section at line {at} ({sb} of {sc}"
                           f"{cites})")
    return out
