"""Files shipped inside the package and read at run time (the bundled suites), found through
`importlib.resources`: a wheel installed anywhere has them where a checkout does, never through the source tree.

The published table's data sits with the view that reads it (`qlabench/analyze/data/`, `analyze/study/published.py`).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path


def package_folder(name: str) -> Path:
    """The folder `qlabench/<name>` of the installed package, as a file-system path: suites are read by path, in
    this process and in the workers it starts (`_warm-group --suite PATH`), so a zipped package would not do."""
    return Path(str(importlib.resources.files("qlabench") / name))


# The suites `--suite NAME` names (qlabench/suites/NAME.toml). A user's own suite is given as a path and wins.
SUITES_DIR = package_folder("suites")
