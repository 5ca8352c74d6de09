"""Commands stay thin: each CLI module maps flags onto library calls, so none grows past 150 lines, and the
options several commands share are declared once."""

from __future__ import annotations

import re
from pathlib import Path

import qlabench.cli

CLI = Path(qlabench.cli.__file__).parent
MAX_LINES = 150


def test_no_cli_module_is_over_150_lines():
    long = {p.name: n for p in CLI.glob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, long


def test_shared_options_are_declared_once():
    for flag in ("--device", "--cache-dir", "--replicates", "--backends", "--modes", "--cpu-threads", "--timer"):
        where = [p.name for p in CLI.glob("*.py") if re.search(rf'"{flag}"', p.read_text())]
        # the hidden internal commands (_warm-group, _ncu-child) and profile's GPU default keep their own --device
        allowed = {"options.py", "profile.py", "warmup.py"} if flag == "--device" else {"options.py"}
        assert set(where) <= allowed, (flag, where)
