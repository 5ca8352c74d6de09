"""A docs page as `docs check` reads its prose (pure: no files, no data): the decimals each line states, the
generated blocks' text, and the sections that say what backs their numbers.

    <!-- qlabench:dated run=RUN_ID[,RUN_ID|,results/PATH] file=PATH[,PATH] -->
    ... what those runs measured, or what those committed files say ...
    <!-- /qlabench:dated -->

    <!-- qlabench:unchecked why="what these numbers are and why no file or run holds them" -->
    ... settings, constants of other libraries, figures of outside sources ...
    <!-- /qlabench:unchecked -->

A dated section names at least one run (`run=`: a run id, or a committed results file or folder) or file
(`file=`: a committed log, csv, json, md or txt); an unchecked section gives a non-empty reason. A marker is
alone on its line, at its first column or indented with spaces (inside a list item, indented to the item's
text, it keeps the list one list); sections do not nest; a marker inside a code fence or a code span
is example text. A line that reads like a marker but is not one, a section never closed, a closing marker
without its opening one, or a second section opened inside the first: each is a Drift naming its line, never
skipped in silence.

Prose is what lies outside the generated blocks, code fences, indented code blocks (after a blank line, not
inside a list), HTML comments and code spans. A table's column whose header names `ms` gives its numbers that
unit, one whose header says `ratio` or `speedup` the unit `x`, and one whose header says `error` holds errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from qlabench_publish.blocks.markers import _content, fenced_lines, find_blocks, split_lines
from qlabench_publish.blocks.prose_numbers import Quoted, plain, quoted_numbers, trailing_group
from qlabench.core.result import row_fields

DATED_OPEN = re.compile(r" *<!-- qlabench:dated((?: (?:run|file)=[^ ]+)+) -->\s*")
UNCHECKED_OPEN = re.compile(r' *<!-- qlabench:unchecked why="([^"]*)" -->\s*')
CLOSE = re.compile(r" *<!-- /qlabench:(dated|unchecked) -->\s*")
INLINE = re.compile(r'<!-- qlabench:unchecked why="([^"]*)" -->')
_MARK = 0xE000  # an inline mark stands in the line as one private-use character, MARK + its number
LOOKS_LIKE = re.compile(r"<!--\s*/?\s*qlabench:(dated|unchecked)", re.IGNORECASE)
DATED_SYNTAX = "<!-- qlabench:dated run=RUN_ID[,...] file=PATH[,...] --> (either key, or both, each once)"
UNCHECKED_SYNTAX = '<!-- qlabench:unchecked why="the reason" -->'
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")
_MS_HEADER = re.compile(r"\bms\b")
# A column headed as a ratio ('pool / plain' is left untyped: 'fla / flash_qla' lists columns in one, and
# '1 x 32768' is a layout).
_RATIO_HEADER = re.compile(r"ratio|speedup|\u00f7", re.IGNORECASE)
_ERROR_HEADER = re.compile(r"\berror\b", re.IGNORECASE)
ERROR_UNIT = "error"  # a column headed as an error: its numbers may be the rows' err_ values
# The result columns that hold numbers: a paragraph naming one in a code span (`sm_coverage`), or a table
# column headed by one, may quote its values.
NUMERIC_COLUMNS = frozenset(n for n, kind, _ in row_fields() if "float64" in kind)
_SPAN_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
# A number in a unit may be a value of the result columns whose name carries that unit (units in the name):
# unit -> ((column suffix, factor from the column's value to the unit), ...).
_UNIT_SUFFIXES = {"ms": (("_ms", 1), ("_us", 0.001)), "s": (("_s", 1),), "us": (("_us", 1),),
                  "TB/s": (("_tbs", 1),), "MiB": (("_mib", 1),), "MHz": (("_mhz", 1),),
                  "%": (("_pct", 1), ("_frac", 100))}
# A number in e-notation with no unit ('4.36e-3') is how the docs write an error: it may be an err_ column's.
ERROR_COLUMNS = tuple(sorted(c for c in NUMERIC_COLUMNS if c.startswith("err_")))
UNIT_COLUMNS = {u: tuple((c, f) for suffix, f in pairs for c in sorted(NUMERIC_COLUMNS) if c.endswith(suffix))
                for u, pairs in _UNIT_SUFFIXES.items()}


@dataclass(frozen=True)
class Drift:
    file: str
    line: int
    what: str

    @property
    def text(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


@dataclass(frozen=True)
class Section:
    kind: str  # 'dated' or 'unchecked'
    start: int  # line index of its opening marker
    end: int  # line index of its closing marker
    runs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    why: str = ""

    def holds(self, index: int) -> bool:
        return self.start < index < self.end


@dataclass(frozen=True)
class NumberLine:
    index: int  # line index (0-based)
    numbers: tuple[Quoted, ...]
    columns: frozenset[str] = frozenset()  # the result columns its paragraph or table column names
    exempt: tuple[tuple[int, str], ...] = ()  # (index in numbers, why): marked unchecked inline


@dataclass
class Page:
    path: str
    lines: list[NumberLine] = field(default_factory=list)  # the prose lines that state a decimal
    sections: list[Section] = field(default_factory=list)
    blocks_text: str = ""  # what the page's generated blocks print
    problems: list[Drift] = field(default_factory=list)

    def section_of(self, index: int) -> Section | None:
        return next((s for s in self.sections if s.holds(index)), None)


def _strip_marks(text: str) -> str:
    return re.sub("[\ue000-\uefff]", "", text)


def _numbers(text: str, unit: str, whys: list[str], where: str, line: int,
             problems: list[Drift], following: str = "") -> tuple[list[Quoted], list[tuple[int, str]]]:
    """The decimals of a line or cell (comments removed, inline marks standing as one character each), and
    which of them an inline mark right after them exempts."""
    numbers = quoted_numbers(plain(_strip_marks(text)), unit, plain(_strip_marks(following)))
    exempt = []
    for m in re.finditer("[\ue000-\uefff]", text):
        before = plain(_strip_marks(text[:m.start()]))
        n = len(quoted_numbers(before))
        if n == 0:
            problems.append(Drift(where, line, "an inline unchecked mark follows no decimal number on its line"))
        else:  # the number right before the mark, with the range or list it ends
            exempt += [(k, whys[ord(m.group()) - _MARK]) for k in range(n - trailing_group(before), n)]
    return numbers, exempt


def _dated_args(text: str, where: str, line: int) -> tuple[dict[str, tuple[str, ...]], list[Drift]]:
    args, problems = {}, []
    for part in text.split():
        key, _, value = part.partition("=")
        if key in args:
            problems.append(Drift(where, line, f"the dated marker gives {key}= twice: {DATED_SYNTAX}"))
        items = tuple(v for v in value.split(",") if v)
        if not items:
            problems.append(Drift(where, line, f"the dated marker's {key}= names nothing: {DATED_SYNTAX}"))
        args[key] = args.get(key, ()) + items
    return args, problems


def _indented_code(lines: list[str], skip: set[int]) -> set[int]:
    """Indented code blocks: lines indented 4+ spaces after a blank line whose paragraph before is no list."""
    out, in_code, last_text = set(), False, ""
    for i, line in enumerate(lines):
        if i in skip:
            in_code, last_text = False, ""
            continue
        indented = line.startswith(("    ", "\t"))
        if not line.strip():
            if in_code:
                out.add(i)
            continue
        if in_code and indented:
            out.add(i)
            continue
        prev_blank = i > 0 and not lines[i - 1].strip()
        in_list = last_text.startswith((" ", "\t")) or _LIST_ITEM.match(last_text)
        if indented and (prev_blank or i == 0) and not in_list:
            in_code = True
            out.add(i)
            continue
        in_code, last_text = False, line
    return out


def _named_columns(text: str) -> set[str]:
    return {n for n in _SPAN_NAME.findall(text) if n in NUMERIC_COLUMNS}


def _header_columns(cells: list[str]) -> set[str]:
    """The result columns a table's header names, plainly or in code ('fla sm_coverage')."""
    return {w for c in cells for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", c) if w in NUMERIC_COLUMNS}


def _column_unit(cell: str) -> str:
    cell = plain(cell)
    return ("ms" if _MS_HEADER.search(cell) else "x" if _RATIO_HEADER.search(cell) else
            ERROR_UNIT if _ERROR_HEADER.search(cell) else "")


def _column_units(header: str) -> list[str]:
    return [_column_unit(c) for c in table_cells(header)]


def table_cells(line: str) -> list[str]:
    """A markdown table line's cells, stripped; a cell's own pipe is written \\| (core/text.py: md_text)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _uncomment(lines: list[str], skip: set[int]) -> list[str]:
    """The lines with their HTML comments removed, a comment over several lines included."""
    out, open_comment = [], False
    for i, line in enumerate(lines):
        if i in skip:
            out.append("")
            continue
        text = ""
        while line:
            if open_comment:
                end = line.find("-->")
                if end < 0:
                    line = ""
                    break
                line, open_comment = line[end + 3:], False
            else:
                start = line.find("<!--")
                if start < 0:
                    text, line = text + line, ""
                    break
                text, line, open_comment = text + line[:start], line[start + 4:], True
        out.append(text)
    return out


def _despan(lines: list[str], skip: set[int]) -> list[str]:
    """The lines without code spans, a span over two or more lines of one paragraph included."""
    out, ticks = [], None  # the backtick run of an open span
    for i, line in enumerate(lines):
        if i in skip or not line.strip():
            out.append("" if i in skip else line)
            ticks = None
            continue
        text, rest = "", line
        while rest:
            if ticks is not None:
                end = rest.find(ticks)
                if end < 0:
                    rest = ""
                    break
                rest, ticks = rest[end + len(ticks):], None
            else:
                m = re.search(r"`+", rest)
                if m is None:
                    text, rest = text + rest, ""
                    break
                text, ticks, rest = text + rest[:m.start()], m.group(), rest[m.end():]
        out.append(text)
    return out


def read_page(where: str, text: str) -> Page:
    """The page's prose numbers, sections and blocks' text; malformed markers are the page's problems (a
    malformed block marker raises BlockError, as `docs check` reports it for the blocks)."""
    lines = [_content(x) for x in split_lines(text)]
    blocks = find_blocks(text, where)
    in_block = {i for b in blocks for i in range(b.start, b.end + 1)}
    fenced = fenced_lines(lines)
    page = Page(where, blocks_text="\n".join(b.body for b in blocks))
    open_at, open_kind, pending, whys = None, None, {}, []
    for i, line in enumerate(lines):
        if i in in_block or i in fenced:
            continue
        if m := DATED_OPEN.fullmatch(line):
            kind, args, problems = "dated", *_dated_args(m.group(1), where, i + 1)
            page.problems += problems
        elif m := UNCHECKED_OPEN.fullmatch(line):
            kind, args = "unchecked", {"why": m.group(1).strip()}
            if not args["why"]:
                page.problems.append(Drift(where, i + 1, f"an unchecked section gives no reason: {UNCHECKED_SYNTAX}"))
        elif m := CLOSE.fullmatch(line):
            if open_at is None:
                page.problems.append(Drift(where, i + 1, f"a closing {m.group(1)} marker without an opening one"))
            elif m.group(1) != open_kind:
                page.problems.append(Drift(where, i + 1, f"a closing {m.group(1)} marker inside the {open_kind} "
                                                         f"section opened at line {open_at + 1}"))
            else:
                page.sections.append(Section(open_kind, open_at, i, pending.get("run", ()), pending.get("file", ()),
                                             pending.get("why", "")))
                open_at = None
            continue
        else:
            def mark(m):
                if not m.group(1).strip():
                    page.problems.append(Drift(where, i + 1, f"an inline unchecked mark gives no reason: "
                                                             f"{UNCHECKED_SYNTAX}"))
                whys.append(m.group(1).strip())
                return chr(_MARK + len(whys) - 1)
            line = lines[i] = INLINE.sub(mark, line)
            if LOOKS_LIKE.search(re.sub(r"`+[^`]*`+", "", line)):
                page.problems.append(Drift(where, i + 1, "this line reads like a dated or unchecked marker but is "
                                                         f"not one: {DATED_SYNTAX}, or {UNCHECKED_SYNTAX}, alone on "
                                                         f"its line from its first column: {line.strip()[:80]!r}"))
            continue
        if open_at is not None:
            page.problems.append(Drift(where, i + 1, f"a {kind} section opens inside the {open_kind} section "
                                                     f"opened at line {open_at + 1} (sections do not nest)"))
            continue
        open_at, open_kind, pending = i, kind, args
    if open_at is not None:
        page.problems.append(Drift(where, open_at + 1, f"the {open_kind} section opened here is never closed "
                                                       f"(<!-- /qlabench:{open_kind} -->)"))
    skip = in_block | fenced
    skip |= _indented_code(lines, skip)
    prose = _despan(_uncomment(lines, skip), skip)
    units, named, paragraph = None, set(), []

    def flush():
        page.lines.extend(NumberLine(j, q, frozenset(named), x) for j, q, x in paragraph)
        paragraph.clear()

    for i, line in enumerate(prose):
        if i in skip or not line.strip() or (_LIST_ITEM.match(line) and not line.lstrip().startswith("|")):
            flush()
            named = set()
        if i in skip or not line.strip():
            units = None
            continue
        exempt = []
        if line.lstrip().startswith("|"):
            cells = table_cells(line)
            if units is None:  # a table's header row: its own paragraph
                flush()
                # the names from the line as written: a column named in code (`eager_ms`) is gone from `line`
                named = _header_columns([_strip_marks(c) for c in table_cells(lines[i])])
                units = _column_units(_strip_marks(line))
                cell_units = [""] * len(cells)
            elif all(set(_strip_marks(c)) <= set("-: ") for c in cells):
                continue
            else:
                cell_units = [units[j] if j < len(units) else "" for j in range(len(cells))]
            numbers = []
            for c, u in zip(cells, cell_units):
                got, marks = _numbers(c, u, whys, where, i + 1, page.problems)
                exempt += [(len(numbers) + k, why) for k, why in marks]
                numbers += got
        else:
            if units is not None:  # the line after a table starts a paragraph
                flush()
                named = set()
            units = None
            named |= _named_columns(lines[i])
            following = prose[i + 1] if i + 1 < len(prose) and i + 1 not in skip else ""
            numbers, exempt = _numbers(line, "", whys, where, i + 1, page.problems, following)
        if numbers:
            paragraph.append((i, tuple(numbers), tuple(exempt)))
    flush()
    return page
