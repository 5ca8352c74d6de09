"""Comparing two result sets for CI regression gating: matching, statistics, verdicts, rendering.

Public API: `compare_frames` / `compare_paths` compute a `Comparison`; `render` turns it into text.
Only `gate.py` (run a suite, then compare) imports torch; the rest runs on a machine with no GPU.
"""

from qlabench.analyze.compare.comparison import Comparison, PairResult, compare_frames, compare_paths
from qlabench.analyze.compare.envguard import EnvField, EnvMismatchError
from qlabench.analyze.compare.stats import PairStats, pair_stats
from qlabench.analyze.compare.verdict import DEFAULT_FAIL_ON, CompareOptions, Failure, Verdict, parse_fail_on

__all__ = [
    "DEFAULT_FAIL_ON",
    "CompareOptions",
    "Comparison",
    "EnvField",
    "EnvMismatchError",
    "Failure",
    "PairResult",
    "PairStats",
    "Verdict",
    "compare_frames",
    "compare_paths",
    "pair_stats",
    "parse_fail_on",
]
