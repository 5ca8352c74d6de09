"""Sharding: split a suite's points into N deterministic, cost-balanced shares for batch schedulers.

A SLURM array task or a Kubernetes indexed-job pod runs `qlabench run sweep --shard I/N` and gets
share I (0-based) of N; `qlabench merge` puts the shard outputs back together. Every shard computes
the same partition from the suite alone (no coordination, no shared state): the split depends on
the set of points, not on their order in the file, nor on the host.

The rule. A point's estimated cost is its FLOP count (flops.flops: mode-aware, grows with tokens,
value heads and K*V). The points are laid end to end on a line of length = total cost, compile group
after compile group (groups and the points in them in a fixed order), and the line is cut into N
equal lengths; a point belongs to the share its midpoint falls in. So every share is within one
point's cost of total / N, and each of the N - 1 cuts splits at most one compile group: at most N - 1
extra compilations in all, however the suite is shaped. (Compile time itself is not in the estimate.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qlabench.core.errors import ConfigError
from qlabench.core.flops import flops
from qlabench.core.point import Point


@dataclass(frozen=True)
class Shard:
    """Share `index` (0-based) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ConfigError(f"shard {self.index}/{self.count}: need 0 <= I < N (I is 0-based)")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """'I/N' -> Shard(I, N), e.g. '--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT'."""
    i, sep, n = text.partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index = count = None
    if not sep or index is None:
        raise ConfigError(f"--shard {text!r}: expected I/N with whole numbers, e.g. 0/4")
    return Shard(index, count)


def point_cost(p: Point) -> float:
    """Estimated cost of measuring `p`: its FLOPs (relative costs are all that sharding needs)."""
    return flops(p)


def _order_key(p: Point) -> str:
    return repr(p.key())  # total and deterministic over mixed None/int/str/tuple axes


def partition(points: Sequence[Point], count: int) -> list[list[Point]]:
    """All N shares of `points`, each in the points' given order; together complete and disjoint."""
    if count < 1:
        raise ConfigError(f"cannot split points into {count} shards")
    groups: dict[tuple, list[Point]] = {}
    for p in sorted(set(points), key=_order_key):
        groups.setdefault(p.compile_group, []).append(p)
    line = [p for key in sorted(groups, key=repr) for p in groups[key]]
    share = sum(point_cost(p) for p in line) / count
    owner: dict[Point, int] = {}
    before = 0.0
    for p in line:
        c = point_cost(p)
        owner[p] = min(count - 1, int((before + c / 2) / share)) if share > 0 else 0
        before += c
    shares: list[list[Point]] = [[] for _ in range(count)]
    for p in points:
        shares[owner[p]].append(p)
    return shares


def shard_points(points: Sequence[Point], shard: Shard) -> list[Point]:
    """The points of share `shard.index` of `shard.count` (see the module doc for the rule)."""
    return partition(points, shard.count)[shard.index]
