"""Sharding: split a suite's points into N deterministic, cost-balanced shares for batch schedulers.

A SLURM array task or a Kubernetes indexed-job pod runs `qlabench run sweep --shard I/N` and gets
share I (0-based) of N; `qlabench merge` puts the shard outputs back together. Every shard computes
the same partition from the suite alone (no coordination, no shared state): the split depends on
the set of points, not on their order in the file, nor on the host.

The rule. A point's estimated cost is its roofline time, in bytes: its compulsory bytes or its FLOPs over
RIDGE_FLOPS_PER_BYTE, whichever is larger (core/flops.py for prefill modes, mode-aware, growing with tokens,
value heads and K*V; core/bytes_model.py for a serving step, which does almost no FLOPs and whose cost is
its states' bytes). The points are laid end to end on a line of length = total cost, compile group
after compile group (groups and the points in them in a fixed order), and the line is cut into N
equal lengths; a point belongs to the share its midpoint falls in. So every share is within one
point's cost of total / N, and each of the N - 1 cuts splits at most one compile group: at most N - 1
extra compilations in all, however the suite is shaped. (Compile time itself is not in the estimate.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qlabench.core import bytes_model
from qlabench.core.errors import ConfigError
from qlabench.core.flops import bytes_moved, flops
from qlabench.core.point import Point

# A batch array or indexed job of more tasks is no real scheduler's (Kubernetes indexed Jobs stop at 10^5);
# the bound keeps a typo such as 0/1000000000 a one-line error instead of a walk over a billion shares.
MAX_SHARDS = 100_000
# FLOPs per byte where the roofline turns (matmul peak over memory bandwidth): the committed H200 rows of
# results/h200-serving measured peak_tflops 782 and peak_gbps 4242 (medians), about 184. Only the ratio of
# two points' costs matters, and only in a suite that mixes compute-bound and memory-bound points.
RIDGE_FLOPS_PER_BYTE = 184.0


@dataclass(frozen=True)
class Shard:
    """Share `index` (0-based) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ConfigError(f"shard {self.index}/{self.count}: need 0 <= I < N (I is 0-based)")
        if self.count > MAX_SHARDS:
            raise ConfigError(f"shard {self.index}/{self.count}: N must be at most {MAX_SHARDS} (the shares of a "
                              "batch array or indexed job)")

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
    """Estimated cost of measuring `p`, in bytes: its roofline time (see the module doc); relative costs are
    all that sharding needs. Positive for every point, so no point lands in a share for free."""
    if p.is_serving:
        step = bytes_model.step_bytes(p)
        return max(float(step.moved), bytes_model.recurrent_flops(p) / RIDGE_FLOPS_PER_BYTE)
    return max(bytes_moved(p), flops(p) / RIDGE_FLOPS_PER_BYTE)


def _order_key(p: Point) -> str:
    return repr(p.key())  # total and deterministic over mixed None/int/str/tuple axes


def _owners(points: Sequence[Point], count: int) -> dict[Point, int]:
    """The share of each point (see the module doc for the rule): one entry per point, whatever `count`."""
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
    return owner


def partition(points: Sequence[Point], count: int) -> list[list[Point]]:
    """All N shares of `points`, each in the points' given order; together complete and disjoint."""
    owner = _owners(points, count)
    shares: list[list[Point]] = [[] for _ in range(count)]
    for p in points:
        shares[owner[p]].append(p)
    return shares


def shard_points(points: Sequence[Point], shard: Shard) -> list[Point]:
    """The points of share `shard.index` of `shard.count` (see the module doc for the rule), in their given
    order; computed without the other shares."""
    owner = _owners(points, shard.count)
    return [p for p in points if owner[p] == shard.index]
