"""Markdown tables of a frame: what every page and docs block writes its tables with."""

from __future__ import annotations

import pandas as pd

from qlabench.core.text import md_text


def _fmt(v, fmt: str | None) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if fmt and isinstance(v, (int, float)) and not isinstance(v, bool):
        return format(v, fmt)
    if isinstance(v, float):
        return f"{v:.4g}"
    return md_text(v)


def md_table(df: pd.DataFrame, formats: dict[str, str] | None = None, columns: list[str] | None = None) -> str:
    """A markdown table; numbers right-aligned, NaN shown as '-', every text cell literal (core/text.py: md_text)."""
    formats = formats or {}
    cols = [c for c in (columns or list(df.columns)) if c in df.columns]
    if df.empty or not cols:
        return "_(none)_\n"
    numeric = {c: pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in cols}
    lines = ["| " + " | ".join(md_text(c) for c in cols) + " |",
             "|" + "|".join("---:" if numeric[c] else "---" for c in cols) + "|"]
    for rec in df[cols].to_dict("records"):
        lines.append("| " + " | ".join(_fmt(rec[c], formats.get(c)) for c in cols) + " |")
    return "\n".join(lines) + "\n"
