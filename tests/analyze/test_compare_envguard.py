"""compare's environment guard (analyze/compare/envguard.py) reads a backend's own code from the rows' version
record: an engine's version and a plugin's version and commit are listed per backend where the sides differ."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.compare.envguard import backend_diff


def _side(**rows) -> pd.DataFrame:
    return pd.DataFrame([{"backend": b, **r} for b, r in rows.items()])


def test_an_engines_version_change_is_listed_as_its_backends():
    base = _side(**{"vllm-decode": {"versions": [("vllm", "0.33.0"), ("triton", "3.6.0")], "backend_dist": "vllm"},
                    "fla": {"versions": [("fla", "0.6.0")], "backend_dist": "fla-core"}})
    head = _side(**{"vllm-decode": {"versions": [("vllm", "1.0.0"), ("triton", "3.6.0")], "backend_dist": "vllm"},
                    "fla": {"versions": [("fla", "0.7.0")], "backend_dist": "fla-core"}})
    (f,) = backend_diff(base, head)  # fla's version is the environment's fla_version: not listed twice
    assert (f.name, f.base, f.head, f.blocking) == ("vllm-decode version", ("0.33.0",), ("1.0.0",), True)


def test_a_plugin_this_process_does_not_know_is_read_off_its_rows():
    base = _side(theirs={"backend_dist": "their-dist", "backend_version": "0.1.0", "backend_git_sha": "aaa"})
    head = _side(theirs={"backend_dist": "their-dist", "backend_version": "0.1.1", "backend_git_sha": "bbb",
                         "backend_git_dirty": True})
    got = {f.name: (f.base, f.head, f.blocking) for f in backend_diff(base, head)}
    assert got == {"theirs version": (("0.1.0",), ("0.1.1",), False),
                   "theirs commit": (("aaa",), ("bbb+dirty",), False)}
