"""FlashQLA's random sequence splits (core/splits.py) against torch, and the suite syntax that uses them."""

from __future__ import annotations

import random

import pytest
import torch

from qlabench.core.errors import SpecError
from qlabench.core.spec import parse_suite
from qlabench.core.splits import MT19937, randperm_prefix, random_split

# FlashQLA's backward table (bench_gated_delta_rule.py, BWD_SEQLEN_CONFIGS): generate_rand_seqlens(n, T, seed=42),
# computed once with torch and pinned here, so a change in either the port or torch shows up.
PUBLISHED = {
    (8192, 1): (8192,),
    (8192, 2): (7053, 1139),
    (8192, 4): (5809, 1244, 406, 733),
    (8192, 8): (161, 1928, 3157, 563, 1244, 229, 177, 733),
    (32768, 1): (32768,),
    (32768, 2): (7212, 25556),
    (32768, 4): (7212, 7072, 13725, 4759),
    (32768, 8): (3274, 1029, 2909, 5061, 2011, 3793, 9932, 4759),
}


def generate_rand_seqlens(batch_size, num_tokens, seed=42):
    """FlashQLA's function, verbatim but for formatting (benchmark/bench_gated_delta_rule.py at 6e5d2ea)."""
    if batch_size <= 1:
        return [num_tokens]
    gen = torch.Generator().manual_seed(seed)
    bars = torch.sort(torch.randperm(num_tokens - 1, dtype=torch.int32, generator=gen)[: batch_size - 1]).values + 1
    cu_seqlens = torch.nn.functional.pad(bars, (1, 1))
    cu_seqlens[-1] = num_tokens
    seqlens = cu_seqlens[1:] - cu_seqlens[:-1]
    return seqlens.tolist()


@pytest.mark.parametrize("tokens,n", sorted(PUBLISHED))
def test_published_splits(tokens, n):
    assert tuple(generate_rand_seqlens(n, tokens, seed=42)) == PUBLISHED[tokens, n]  # torch, today
    assert random_split(tokens, n, 42) == PUBLISHED[tokens, n]  # the pure-Python port


def test_mt19937_matches_the_reference_sequence():
    # MT19937 init_genrand(5489), first outputs (the reference implementation's / C++ std::mt19937's).
    g = MT19937(5489)
    assert [g() for _ in range(3)] == [3499211612, 581869302, 3890346734]
    g = MT19937(5489)
    for _ in range(9999):
        g()
    assert g() == 4123659995  # the C++ standard's required 10000th output


def test_randperm_prefix_matches_torch_on_random_cases():
    rng = random.Random(1234)
    for _ in range(150):
        n = rng.choice([1, 2, 3, 17, 640, 8191, 32767, rng.randint(1, 300000)])
        k = rng.randint(0, min(n, 24))
        seed = rng.choice([0, 1, 42, rng.randint(0, 2**32 - 1), rng.randint(2**32, 2**63 - 1)])
        want = torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:k].tolist()
        assert randperm_prefix(n, k, seed) == want, (n, k, seed)


def test_full_permutation_matches_torch():
    for n, seed in ((1, 0), (2, 3), (10, 42), (1000, 7)):
        assert randperm_prefix(n, n, seed) == torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()


def test_random_split_matches_generate_rand_seqlens_on_random_cases():
    rng = random.Random(99)
    for _ in range(100):
        tokens = rng.randint(1, 200000)
        n = rng.randint(1, min(tokens, 16))
        seed = rng.randint(0, 10**6)
        got = random_split(tokens, n, seed)
        assert got == tuple(generate_rand_seqlens(n, tokens, seed)), (tokens, n, seed)
        assert sum(got) == tokens and len(got) == n and min(got) >= 1


@pytest.mark.parametrize("tokens,n", [(4, 5), (0, 1), (10, 0)])
def test_impossible_splits(tokens, n):
    with pytest.raises(ValueError, match="cannot split"):
        random_split(tokens, n)


# -- the suite syntax ----------------------------------------------------------------------------------


def suite(split, **sweep):
    data = {"backends": ["naive-chunk"], "heads": [{"h_qk": 2, "h_v": 4}], "split": split, **sweep}
    return parse_suite({"name": "s", "sweep": data}, "s.toml")


def test_split_expands_to_the_published_layouts_tokens_outer():
    s = suite([{"tokens": [8192, 32768], "n": [1, 2, 4, 8], "seed": 42}])
    assert [p.seqlens for p in s.points] == [PUBLISHED[t, n] for t in (8192, 32768) for n in (1, 2, 4, 8)]
    assert {(p.layout, p.batch) for p in s.points} == {("varlen", 1)}


def test_split_defaults_to_seed_42_and_takes_scalars():
    assert suite({"tokens": 8192, "n": 4}).points[0].seqlens == PUBLISHED[8192, 4]
    assert suite([{"tokens": 100, "n": 3, "seed": 7}]).points[0].seqlens == random_split(100, 3, 7)


def test_split_adds_to_seqlen_and_varlen_layouts():
    s = suite([{"tokens": 64, "n": 2}], seqlen=[32], varlen=[[10, 20]])
    assert [(p.layout, p.seqlens) for p in s.points] == [("dense", (32,)), ("varlen", (10, 20)),
                                                         ("varlen", random_split(64, 2))]


def test_split_one_sequence_is_a_packed_layout():
    (p,) = suite([{"tokens": 8192, "n": 1}]).points
    assert (p.layout, p.batch, p.seqlens) == ("varlen", 1, (8192,))


@pytest.mark.parametrize("split,key,match", [
    ([{"tokens": 10}], "sweep.split[0].n", "missing"),
    ([{"n": 2}], "sweep.split[0].tokens", "missing"),
    ([{"tokens": 10, "n": 2, "sede": 1}], "sweep.split[0].sede", "unknown key"),
    ([{"tokens": 10, "n": 20}], "sweep.split[0].n", "cannot split 10 tokens into 20"),
    ([{"tokens": [10, "x"], "n": 2}], "sweep.split[0].tokens", "positive integer"),
    ([{"tokens": 10, "n": 0}], "sweep.split[0].n", "positive integer"),
    ([{"tokens": 10, "n": 2, "seed": -1}], "sweep.split[0].seed", "non-negative"),
    ([{"tokens": 10, "n": True}], "sweep.split[0].n", "positive integer"),
    ([3], "sweep.split[0]", "must be a table"),
])
def test_split_errors_name_the_key(split, key, match):
    with pytest.raises(SpecError, match=match) as e:
        suite(split)
    assert e.value.key == key
