"""`merge --into`: the existence check and the write hold the target's lock, so of two merges into one
new file the second is refused instead of silently replacing the first's rows."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from qlabench.core.errors import StoreError
from qlabench.store.files import read_results, write_rows
from qlabench.store.merge import merge_results, write_merged

# Both children pass a barrier, then write slowly: without a lock both see no file and both write.
_CHILD = textwrap.dedent("""
    import sys, time, pathlib
    import qlabench.store.merge as m
    from qlabench.core.errors import StoreError
    real_write = m.write_rows
    def write_rows(*a, **k):
        time.sleep(1.0)
        return real_write(*a, **k)
    m.write_rows = write_rows
    ready, other, results, into = map(pathlib.Path, sys.argv[1:5])
    report = m.merge_results([results])
    ready.touch()
    deadline = time.time() + 60
    while not other.exists() and time.time() < deadline:
        time.sleep(0.01)
    try:
        m.write_merged(report, into)
    except StoreError as e:
        print(e)
        sys.exit(2)
""")


def test_two_merges_into_one_file_at_once_refuse_the_second(make_row, tmp_path):
    inputs = {}
    for name, seeds in (("a", [1, 2]), ("b", [3, 4])):
        inputs[name] = write_rows(tmp_path / f"{name}.parquet", [make_row(run_id=name, seed=s) for s in seeds])
    into = tmp_path / "merged.parquet"
    procs = {me: subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path / f"{me}.ready"),
                                   str(tmp_path / f"{other}.ready"), str(inputs[me]), str(into)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for me, other in (("a", "b"), ("b", "a"))}
    codes = {}
    for me, p in procs.items():
        out, err = p.communicate(timeout=120)
        codes[me] = p.returncode
        assert p.returncode in (0, 2), err.decode()
    assert sorted(codes.values()) == [0, 2]  # one wrote, the other was told the file now exists
    winner = next(me for me, c in codes.items() if c == 0)
    assert set(read_results([into])["run_id"]) == {winner}


def test_write_merged_refuses_an_existing_file_unless_forced(make_row, tmp_path):
    src = write_rows(tmp_path / "a.parquet", [make_row(seed=0)])
    into = write_rows(tmp_path / "into.parquet", [make_row(run_id="old", seed=9)])
    report = merge_results([src])
    with pytest.raises(StoreError, match="exists"):
        write_merged(report, into)
    assert list(read_results([into])["run_id"]) == ["old"]
    write_merged(report, into, force=True)
    assert list(read_results([into])["run_id"]) == ["run-1"]
