"""Sharding: shares are complete, disjoint, deterministic, cost-balanced, and split few compile groups."""

from __future__ import annotations

import random

import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.errors import QlabenchError
from qlabench.run.executors.shard import Shard, parse_shard, partition, point_cost, shard_points
from qlabench.core.spec import list_suites, load_suite

SUITES = [p.stem for p in list_suites()]
COUNTS = (1, 2, 3, 4, 7, 16)


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("n", COUNTS)
def test_shares_are_complete_disjoint_and_balanced(suite, n):
    points = load_suite(suite).points
    shares = partition(points, n)
    assert len(shares) == n
    flat = [p for s in shares for p in s]
    assert len(flat) == len(points) and set(flat) == set(points)  # every point once
    share = sum(point_cost(p) for p in points) / n
    biggest = max(point_cost(p) for p in points)
    for s in shares:  # a point belongs to the share its cost midpoint falls in
        assert sum(point_cost(p) for p in s) <= share + biggest
    groups = {p.compile_group for p in points}
    extra_compiles = sum(len({p.compile_group for p in s}) for s in shares) - len(groups)
    assert extra_compiles <= n - 1  # each cut splits at most one compile group


@pytest.mark.parametrize("suite", SUITES)
def test_partition_depends_on_the_points_not_their_order(suite):
    points = list(load_suite(suite).points)
    shuffled = points[:]
    random.Random(0).shuffle(shuffled)
    a = [set(s) for s in partition(points, 5)]
    b = [set(s) for s in partition(shuffled, 5)]
    assert a == b
    assert shard_points(shuffled, Shard(2, 5)) == [p for p in shuffled if p in a[2]]  # keeps the given order


def test_parse_shard():
    assert parse_shard("3/8") == Shard(3, 8)
    for bad in ("8/8", "-1/4", "1", "a/b", "1/0"):
        with pytest.raises(QlabenchError):
            parse_shard(bad)


def test_cli_dry_run_shards_add_up_to_the_suite():
    runner = CliRunner()
    total = len(load_suite("quick-cpu").points)
    counted = 0
    for i in range(3):
        res = runner.invoke(app, ["run", "sweep", "--suite", "quick-cpu", "--shard", f"{i}/3", "--dry-run"])
        assert res.exit_code == 0, res.output
        counted += int(res.output.strip().splitlines()[-1].split()[0])
    assert counted == total
    res = runner.invoke(app, ["run", "sweep", "--suite", "quick-cpu", "--shard", "3/3", "--dry-run"])
    assert res.exit_code == 2 and "0-based" in res.output
