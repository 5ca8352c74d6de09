"""Sharding: shares are complete, disjoint, deterministic, cost-balanced, and split few compile groups."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tracemalloc

import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.errors import QlabenchError
from qlabench.run.executors.shard import MAX_SHARDS, Shard, parse_shard, partition, point_cost, shard_points
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
    assert all(point_cost(p) > 0 for p in points)  # a point of no cost would land wherever, unbalanced
    share = sum(point_cost(p) for p in points) / n
    biggest = max(point_cost(p) for p in points)
    for s in shares:  # a point belongs to the share its cost midpoint falls in
        assert share - biggest <= sum(point_cost(p) for p in s) <= share + biggest
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
    assert parse_shard(f"0/{MAX_SHARDS}") == Shard(0, MAX_SHARDS)
    for bad in ("8/8", "-1/4", "1", "a/b", "1/0", f"0/{MAX_SHARDS + 1}", "0/1000000000"):
        with pytest.raises(QlabenchError):
            parse_shard(bad)


def test_a_huge_shard_count_is_refused_at_parse_without_allocating(tmp_path):
    """--shard 0/1000000000 once built a list per shard (~24 GB): under a 2 GiB address-space limit above
    what the interpreter holds, it is a one-line exit 2 before the suite is read."""
    code = ("import resource, sys; from qlabench.cli import app; from qlabench.core.spec import load_suite; "
            "load_suite('quick-cpu'); "
            "lim = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize() + (2 << 30); "
            "resource.setrlimit(resource.RLIMIT_AS, (lim, lim)); "
            "sys.argv = ['qlabench', 'run', 'sweep', '--suite', 'quick-cpu', '--shard', '0/1000000000', '--dry-run']; "
            "app()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr[-500:])
    assert f"at most {MAX_SHARDS}" in r.stderr and "Traceback" not in r.stderr


def test_a_share_of_many_is_computed_without_a_list_per_share():
    points = load_suite("quick-cpu").points
    tracemalloc.start()
    try:
        mine = shard_points(points, Shard(MAX_SHARDS - 1, MAX_SHARDS))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert mine == [] and peak < 1 << 20  # bytes: a list per share would take MAX_SHARDS x 56


@pytest.mark.parametrize("suite", ["serving", "serving-cpu"])
def test_serving_suites_split_into_balanced_shares(suite):
    """Serving points do no chunked FLOPs: their cost is their step's bytes, so every share gets points."""
    points = load_suite(suite).points
    for n in (2, 3):
        shares = partition(points, n)
        assert sorted(map(repr, (p for s in shares for p in s))) == sorted(map(repr, points))  # each point once
        assert all(s for s in shares)
        assert max(map(len, shares)) <= 2 * min(map(len, shares))


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


def test_cli_shards_of_the_serving_suite_add_up_and_none_is_empty():
    runner = CliRunner()
    counts = []
    for i in range(2):
        res = runner.invoke(app, ["run", "sweep", "--suite", "serving-cpu", "--shard", f"{i}/2", "--dry-run"])
        assert res.exit_code == 0, res.output
        # the count, wherever the console wraps the line (it names the suite's path, long in a deep checkout)
        counts.append(int(re.search(r"(\d+) points in suite", " ".join(res.output.split())).group(1)))
    assert sum(counts) == len(load_suite("serving-cpu").points) and min(counts) > 0
