"""Sharding: split a suite's points into N deterministic, cost-balanced shares for batch schedulers.

A SLURM array task or a Kubernetes indexed-job pod runs `qlabench run sweep --shard I/N` and gets
share I (0-based) of N; `qlabench merge` puts the shard outputs back together. Every shard computes
the same partition from the suite alone (no coordination, no shared state): the split depends on
the set of points, not on their order in the file, nor on the host.

The rule. A point's estimated cost is its FLOP count (flops.flops: mode-aware, grows with tokens,
value heads and K*V). Points stay with their compile group, so each shard compiles a head
configuration once, except that a group costing more than a fair share (total / N) is cut into
ceil(cost / share) pieces, so that a few big groups cannot leave most shards idle. The pieces are
then dealt largest first to the shard with the least cost so far (ties to the lowest index): the
longest-processing-time rule, within one piece of the fair share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import QlabenchError
from ..flops import flops
from ..point import Point


@dataclass(frozen=True)
class Shard:
    """Share `index` (0-based) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise QlabenchError(f"shard {self.index}/{self.count}: need 0 <= I < N (I is 0-based)")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """'I/N' -> Shard(I, N), e.g. '--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT'."""
    i, sep, n = text.partition("/")
    try:
        if not sep:
            raise ValueError
        return Shard(int(i), int(n))
    except ValueError:
        raise QlabenchError(f"--shard {text!r}: expected I/N with whole numbers, e.g. 0/4") from None


def point_cost(p: Point) -> float:
    """Estimated cost of measuring `p`: its FLOPs (relative costs are all that sharding needs)."""
    return flops(p)


def _order_key(p: Point) -> str:
    return repr(p.key())  # total and deterministic over mixed None/int/str/tuple axes


def _deal(items: list[tuple[float, str, list[Point]]], n: int) -> list[list[list[Point]]]:
    """Longest-processing-time rule: largest item first, to the least-loaded bin (lowest index on ties)."""
    loads = [0.0] * n
    bins: list[list[list[Point]]] = [[] for _ in range(n)]
    for cost, _, pts in sorted(items, key=lambda it: (-it[0], it[1])):
        i = min(range(n), key=lambda b: (loads[b], b))
        loads[i] += cost
        bins[i].append(pts)
    return bins


def _pieces(points: Sequence[Point], count: int) -> list[tuple[float, str, list[Point]]]:
    """Compile groups as (cost, order key, points); a group above the fair share cut into pieces."""
    groups: dict[tuple, list[Point]] = {}
    for p in sorted(points, key=_order_key):
        groups.setdefault(p.compile_group, []).append(p)
    total = sum(point_cost(p) for p in points)
    share = total / count if count else total
    out = []
    for pts in groups.values():
        cost = sum(point_cost(p) for p in pts)
        k = min(len(pts), max(1, math.ceil(cost / share - 1e-9))) if share > 0 else 1
        for sub in _deal([(point_cost(p), _order_key(p), [p]) for p in pts], k):
            piece = [p for one in sub for p in one]
            out.append((sum(point_cost(p) for p in piece), _order_key(min(piece, key=_order_key)), piece))
    return out


def partition(points: Sequence[Point], count: int) -> list[list[Point]]:
    """All N shares of `points`, each in the points' given order; together complete and disjoint."""
    if count < 1:
        raise QlabenchError(f"cannot split points into {count} shards")
    position = {p: i for i, p in enumerate(points)}
    shares = _deal(_pieces(points, count), count)
    return [sorted((p for piece in share for p in piece), key=position.__getitem__) for share in shares]


def shard_points(points: Sequence[Point], shard: Shard) -> list[Point]:
    """The points of share `shard.index` of `shard.count` (see the module doc for the rule)."""
    return partition(points, shard.count)[shard.index]


def shard_cost(points: Sequence[Point]) -> float:
    return sum(point_cost(p) for p in points)
