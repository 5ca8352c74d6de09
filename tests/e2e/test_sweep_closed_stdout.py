"""A closed stdout (`qlabench run sweep ... | head -1`) cannot stop a measurement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from qlabench.store.files import read_results

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny-cpu.toml"


def test_a_sweep_piped_into_head_finishes_and_keeps_every_row(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(TINY), "--out",
                             str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()  # what `head -1` reads, then it exits
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    assert first
    assert proc.returncode == 0, err.decode()
    assert b"stdout was closed" in err
    files = list((tmp_path / "tiny-cpu").glob("*.parquet"))
    assert len(files) == 1 and len(read_results(files)) == 12  # compacted, nothing lost
