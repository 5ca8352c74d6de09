"""Names that become path components: a suite's name is a folder under `--out` and a file under a
baselines root, so it must be a plain, safe slug.

A safe name has letters, digits, `-`, `_` and `.` only, is not made of dots alone (`.`, `..`), and is
at most `MAX_NAME_LEN` characters (a file name of the run id plus `.parquet` must still fit).
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME_LEN = 100
_SAFE = re.compile(r"[A-Za-z0-9._-]+")


def name_problem(name: object) -> str | None:
    """Why `name` cannot be used as a path component, or None when it can."""
    if not isinstance(name, str):
        return f"must be a string, got {type(name).__name__}"
    if not name:
        return "must not be empty"
    if len(name) > MAX_NAME_LEN:
        return f"is {len(name)} characters long; at most {MAX_NAME_LEN}"
    if not _SAFE.fullmatch(name):
        return f"{name!r} may contain only letters, digits, '-', '_' and '.'"
    if set(name) == {"."}:
        return f"{name!r} is not a name"
    return None


def default_name(stem: str) -> str:
    """A safe name made from a file's stem, for a suite that does not set one ('my suite' -> 'my-suite')."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-")[:MAX_NAME_LEN]
    return slug if not name_problem(slug) else "suite"


def slug(text: str) -> str:
    """A safe name for any text, for a file named after something shown as it is ('h200 étude/a' ->
    'h200-tude-a-1f3a9c'): runs of other characters become '-', '/' included; where more than a '/' changed,
    a short digest of the text keeps two names that differ only there apart."""
    text = str(text)
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    if out != text.replace("/", "-") or not out:
        out = f"{out[:MAX_NAME_LEN - 7]}-{hashlib.sha1(text.encode()).hexdigest()[:6]}".lstrip("-")
    return out[:MAX_NAME_LEN]
