"""The decimal numbers of a line of prose, and whether a source holds one at the decimals it shows (pure).

A quoted number is a decimal (`0.237`, `4.36e-3`, `15.54%`) that is no version, no exponent and no part of a
name: not `0.7.2`, `py3.10`, `qwen3.5`, `qwen3.5-0.8b`, `0.6.x`, `12.8+`, `Python >= 3.10`, `K^-0.5`, nor a
number right after the name of a software package (`torch 2.13`, `vLLM 0.33`, `FlashInfer 0.7`: SOFTWARE;
a version shows at most two decimals and no unit, so `FLA 1.127 ms` is a time). Integers are never checked.

Each quoted number carries its unit when the prose gives one: `ms` (a time), `x` (a ratio), `%`, or another
unit (`s`, `us`, `TB/s`, ...). A list or range shares its unit: in `0.719-0.724 ms`, `0.991, 1.009 and 1.048
ms` and `0.395 ms against 0.326` every number is in ms; a range shares its exponent (`5.4-6.4e-4`). A number
written with a sign (`+1.1%`), or a `%` followed by faster, slower, more or less, is a change.

A source (a file, a block's text, the times of some rows) holds a quoted number when it holds a value that
rounds to it at the decimals shown: `0.2371` holds `0.237` and `2.4e-7` holds `2.4e-7`, but `0.24` does not
hold `0.237` (the source must carry at least the decimals the prose shows). A `%` number is also held as a
fraction (`0.005` holds `0.5%`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np

from qlabench.core.engine_switches import ENGINES
from qlabench.core.libraries import LIBRARIES

# Names after which a decimal is a version (case-insensitive): the libraries rows record, the engines, and
# the tools the docs name with a version.
SOFTWARE = tuple(sorted({n.lower() for lib in LIBRARIES for n in (lib.name, lib.dist) if n}
                        | {e.name.lower() for e in ENGINES.values()}
                        | {"flashqla", "flashinfer", "python", "pip", "pytorch", "cuda", "cutlass",
                           "nvidia-cutlass-dsl", "nvcc", "compute capability"}, key=len, reverse=True))
_NAMES = "|".join(map(re.escape, SOFTWARE))
_VERSION_BEFORE = re.compile(r"(?:^|[^\w-])(?:" + _NAMES + r")(?:\s*(?:[<>=~!]=|[<>])\s*|\s+)$"
                             r"|(?:[<>=~!]=|[<>])\s*$", re.IGNORECASE)
_VERSION_AFTER = re.compile(r"\+|\.x\b| or (?:later|newer|earlier|older)\b")
# A decimal, perhaps in e-notation; not inside a word, a path or a dotted version.
NUMBER = re.compile(r"(?<![\w./^])(?<![A-Za-z_^]-)(\d+\.\d+(?:[eE][-+]?\d+)?)(?![\w.]*\d)"
                    r"(?=$|[^A-Za-z]|(?:ms|s|us|x)(?![A-Za-z]))")  # '0.8b' is a name, '1.5x' and '2.1s' are not
_SIGN = re.compile(r"(?:^|[^\w.])([-+\u2212])$")
UNIT = re.compile(r"\s?(ms|x|\u00d7|%|s|us|\u00b5s|ns|min|GiB|MiB|GB|MB|KiB|TB/s|GB/s|MHz|GHz|W|kFLOP|"
                  r"TFLOP/s|waves)(?![\w/])")
_SEPARATOR = r"\s*(?:,|/|->|\u2192|-|\u2013|to|and|or|against|vs\.?|versus)\s*"
_CHANGE_WORD = re.compile(r"%\*?\s+\**(?:faster|slower|apart|higher|lower|less|more)\b")
_RANGE = re.compile(r"^\s*(?:-|\u2013|to)\s*$")
_SHARES_NEXT = re.compile(rf"^{_SEPARATOR}$")  # '0.991, ' before '1.009 ms': the next number's unit
_GROUPED = re.compile(rf"^(?:\s?(?:ms|x|\u00d7|%|s|us|\u00b5s))?{_SEPARATOR}$")  # '4.1 s to 2.0 s'
_SHARES_LAST = re.compile(rf"^\s?(ms|x|\u00d7|%){_SEPARATOR}$")  # '0.395 ms against ' before '0.326'
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_COMMENT = re.compile(r"<!--.*?-->")
# Any number of a source text, signed where a minus sign stands before it (not a range's dash after a digit).
_ANY_NUMBER = re.compile(r"(?<![\w.])(?<![A-Za-z_]-)([-\u2212]?)(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d])")


@dataclass(frozen=True)
class Quoted:
    """A decimal number the prose states."""
    text: str  # as shown, with its sign: '0.237', '+1.1', '4.36e-3'
    value: float
    decimals: int  # places it shows: '0.237' -> 3, '4.36e-3' -> 5
    unit: str  # 'ms', 'x', '%', another unit ('s', 'us', ...), or '' where the prose gives none
    signed: bool  # written with + or -: a change

    @property
    def scientific(self) -> bool:
        """Written in e-notation ('4.36e-3'): how the docs write an error."""
        return "e" in self.text.lower()

    @property
    def shown(self) -> str:
        unit = "" if self.unit == "error" else self.unit
        return self.text + (unit if unit in ("", "x", "%") else f" {unit}")


def plain(line: str) -> str:
    """A line without its code spans and HTML comments: what its prose states."""
    return _COMMENT.sub("", _CODE_SPAN.sub("", line))


def _decimals(mantissa: str, exponent: int) -> int:
    frac = mantissa.split(".", 1)[1] if "." in mantissa else ""
    return len(frac) - exponent


def _parse(token: str) -> tuple[float, int]:
    mantissa, _, exp = token.lower().partition("e")
    return float(token), _decimals(mantissa, int(exp) if exp else 0)


def is_version(text: str, start: int, end: int) -> bool:
    """Whether the decimal at text[start:end] is a version: at most two decimals, no exponent, no unit, and
    after a package's name or a comparison, or followed by '+', '.x' or 'or later'."""
    token = text[start:end]
    if "e" in token.lower() or len(token.split(".", 1)[1]) > 2 or (UNIT.match(text, end) and text[end:end + 1] != "+"):
        return False
    return bool(_VERSION_BEFORE.search(text[:start]) or _VERSION_AFTER.match(text, end))


def quoted_numbers(line: str, column_unit: str = "", following: str = "") -> list[Quoted]:
    """The decimals `line` (already plain: no code, no comments) states, each with its unit; `column_unit`: the
    unit of a table cell's column, for a number the cell gives none; `following`: the next line of its
    paragraph ('... 6.9-7.7%' then '*faster* here': a change)."""
    found = [m for m in NUMBER.finditer(line) if not is_version(line, m.start(1), m.end(1))]
    units = []
    for i, m in enumerate(found):
        u = UNIT.match(line, m.end(1))
        units.append(u.group(1).replace("\u00d7", "x").replace("\u00b5s", "us") if u else "")
    for i in range(len(found) - 2, -1, -1):  # a list or range ends in its unit: '0.719-0.724 ms'
        if not units[i] and units[i + 1] and _SHARES_NEXT.match(line[found[i].end(1):found[i + 1].start(1)]):
            units[i] = units[i + 1]
    for i in range(1, len(found)):  # '0.395 ms against 0.326'
        if not units[i] and units[i - 1] and _SHARES_LAST.match(line[found[i - 1].end(1):found[i].start(1)]):
            units[i] = units[i - 1]
    tokens = [m.group(1) for m in found]
    for i in range(len(found) - 2, -1, -1):  # a range shares its exponent: '5.4-6.4e-4' is 5.4e-4 to 6.4e-4
        e = re.search(r"[eE][-+]?\d+$", tokens[i + 1])
        if e and "e" not in tokens[i].lower() and _RANGE.match(line[found[i].end(1):found[i + 1].start(1)]):
            tokens[i] += e.group()
    out = []
    for i, (m, unit, token) in enumerate(zip(found, units, tokens)):
        sign = _SIGN.search(line[:m.start(1)])
        if unit == "%" and not sign:  # '6.9-7.7% faster': a change, as a signed one is
            end = next((found[j].end(1) for j in range(i, len(found)) if j == len(found) - 1
                        or not _SHARES_NEXT.match(line[found[j].end(1):found[j + 1].start(1)])), m.end(1))
            if _CHANGE_WORD.match(line + " " + following, end):
                sign = True
        value, decimals = _parse(token)
        negative = bool(sign) and sign is not True and sign.group(1) != "+"
        written = "-" if negative else "+" if sign and sign is not True else ""  # 'N% faster' shows no sign
        out.append(Quoted(written + token, -value if negative else value, decimals, unit or column_unit, bool(sign)))
    return out


def trailing_group(line: str) -> int:
    """How many decimals end `line` as one range or list ('at most 1.05-1.45x' -> 2): what a mark after them
    speaks of."""
    found = [m for m in NUMBER.finditer(line) if not is_version(line, m.start(1), m.end(1))]
    k = min(len(found), 1)
    while k < len(found) and _GROUPED.match(line[found[-k - 1].end(1):found[-k].start(1)]):
        k += 1
    return k


class Numbers:
    """Numbers a source holds, each with the decimals it carries (`decimals` None: stored floats, exact)."""

    def __init__(self, values=(), decimals=None):
        values = np.asarray(values, dtype=float)
        keep = np.isfinite(values)
        order = np.argsort(values[keep], kind="stable")
        self._values = values[keep][order]
        self._decimals = None if decimals is None else np.asarray(decimals, dtype=int)[keep][order]

    def __len__(self) -> int:
        return len(self._values)

    def holds_value(self, value: float, decimals: int) -> bool:
        """Whether a value of the source rounds to `value` at `decimals` places (a tie rounds either way)."""
        half = 0.5 * 10.0 ** -decimals
        slack = 1e-9 * max(abs(value), 10.0 ** -decimals)
        lo = int(np.searchsorted(self._values, value - half - slack, "left"))
        hi = int(np.searchsorted(self._values, value + half + slack, "right"))
        if self._decimals is None:
            return hi > lo
        return bool((self._decimals[lo:hi] >= decimals).any())

    def holds(self, q: Quoted) -> bool:
        return self.holds_value(q.value, q.decimals) or (q.unit == "%" and self.holds_value(q.value / 100,
                                                                                              q.decimals + 2))


def text_numbers(text: str) -> Numbers:
    """Every number of a text (a log, a csv, a report, a block's body) with the decimals it shows."""
    values, decimals = [], []
    for m in _ANY_NUMBER.finditer(text):
        try:
            value, places = _parse(m.group(2))
        except (ValueError, InvalidOperation, OverflowError):
            continue
        values.append(-value if m.group(1) else value)
        decimals.append(places)
    return Numbers(values, decimals)
