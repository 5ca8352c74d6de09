"""Random splits of a token budget into sequences, exactly as FlashQLA's benchmark draws them. No torch.

FlashQLA's backward table (benchmark/bench_gated_delta_rule.py, `generate_rand_seqlens`) splits a total
of T tokens into n sequences at the cut points

    sorted(torch.randperm(T - 1, generator=torch.Generator().manual_seed(seed))[:n - 1] + 1)

(n = 1 is the whole total, drawing nothing). `random_split` reproduces that result without torch, so
suite files can say `split = [{ tokens = [8192, 32768], n = [1, 2, 4, 8], seed = 42 }]` in the pure-Python
layer. It is an exact port, not a look-alike:

- torch's CPU generator is a 32-bit Mersenne Twister (MT19937) seeded with `init_genrand(seed & 0xffffffff)`
  (at::mt19937), and `random()` returns its next tempered 32-bit output;
- torch's CPU randperm for n < 2**32 / 20 is a forward Fisher-Yates shuffle of 0..n-1 that swaps
  position i with i + random() % (n - i) (aten/src/ATen/native/TensorFactories.cpp, `randperm_cpu`,
  "for small n, preserve old behavior"). The first k positions are final after k steps, so the
  prefix [:n - 1] needs only n - 1 draws.

tests/core/test_splits.py checks it against torch.randperm for the published splits and many random
(T, n, seed), and pins the published layouts as literals.
"""

from __future__ import annotations

from qlabench.core.errors import PointError

_N = 624
_M = 397
# torch's CPU randperm takes another code path (64-bit draws) from this size on.
MAX_PERMUTATION = (2**32 - 1) // 20


class MT19937:
    """The 32-bit Mersenne Twister as torch's CPU generator runs it."""

    def __init__(self, seed: int):
        s = [0] * _N
        s[0] = seed & 0xFFFFFFFF
        for j in range(1, _N):
            s[j] = (1812433253 * (s[j - 1] ^ (s[j - 1] >> 30)) + j) & 0xFFFFFFFF
        self._s = s
        self._i = _N

    def _twist(self) -> None:
        s = self._s
        for k in range(_N):
            y = (s[k] & 0x80000000) | (s[(k + 1) % _N] & 0x7FFFFFFF)
            v = s[(k + _M) % _N] ^ (y >> 1)
            if y & 1:
                v ^= 0x9908B0DF
            s[k] = v
        self._i = 0

    def __call__(self) -> int:
        if self._i >= _N:
            self._twist()
        y = self._s[self._i]
        self._i += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y


def randperm_prefix(n: int, k: int, seed: int) -> list[int]:
    """`torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:k].tolist()`, without torch."""
    if not 0 <= k <= n:
        raise PointError(f"prefix of {k} out of a permutation of {n}")
    if n >= MAX_PERMUTATION:
        raise PointError(f"permutations of {n} >= {MAX_PERMUTATION} elements take another path in torch")
    gen = MT19937(seed)
    swapped: dict[int, int] = {}  # the permutation, stored sparsely: position -> value where moved
    out = []
    for i in range(min(k, n - 1)):  # torch stops at n - 2: the last position is then fixed
        z = i + gen() % (n - i)
        a, b = swapped.get(i, i), swapped.get(z, z)
        swapped[i], swapped[z] = b, a
        out.append(b)
    if k == n and n:
        out.append(swapped.get(n - 1, n - 1))
    return out


def random_split(tokens: int, n: int, seed: int = 42) -> tuple[int, ...]:
    """FlashQLA's `generate_rand_seqlens(n, tokens, seed)`: `tokens` split into `n` sequences (n - 1 random cuts)."""
    if n < 1 or tokens < n:
        raise PointError(f"cannot split {tokens} tokens into {n} non-empty sequences")
    if n == 1:
        return (tokens,)
    cuts = sorted(c + 1 for c in randperm_prefix(tokens - 1, n - 1, seed))
    bounds = [0, *cuts, tokens]
    return tuple(b - a for a, b in zip(bounds, bounds[1:]))
