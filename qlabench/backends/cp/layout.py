"""How a batch-1 token stream is cut over CP ranks: contiguous equal slices. Pure Python, no torch.

Rank r of W holds tokens [r * P, (r + 1) * P) with P = total / W (FlashQLA's and FLA's contiguous
layout). A sequence that crosses a slice boundary continues on the next rank: its local piece there
does not start the sequence (its initial state comes from the previous rank), and its piece before the
boundary does not end it (its final state is not the sequence's). `local_sequences` gives, per rank,
the pieces in order, exactly as FlashQLA's `_calc_inter_cp_seqs` computes its local cu_seqlens.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocalSeq:
    seq: int  # index of the global sequence
    start: int  # local token offsets of this piece on the rank
    end: int
    starts_here: bool  # the global sequence begins on this rank (its h0 is used here)
    ends_here: bool  # the global sequence ends on this rank (its final state is this piece's)


def rank_slice(total_tokens: int, world_size: int, rank: int) -> tuple[int, int]:
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} of world size {world_size}")
    if total_tokens % world_size:
        raise ValueError(f"{total_tokens} tokens do not split evenly over {world_size} ranks")
    part = total_tokens // world_size
    return rank * part, (rank + 1) * part


def local_sequences(seqlens: tuple[int, ...] | list[int], world_size: int, rank: int) -> list[LocalSeq]:
    """The pieces of the global sequences that rank `rank` holds, in token order."""
    lo, hi = rank_slice(sum(seqlens), world_size, rank)
    out = []
    s = 0
    for n, length in enumerate(seqlens):
        e = s + length
        a, b = max(s, lo), min(e, hi)
        if a < b:
            out.append(LocalSeq(seq=n, start=a - lo, end=b - lo, starts_here=s >= lo, ends_here=e <= hi))
        s = e
    return out


def local_cu_seqlens(seqlens, world_size: int, rank: int) -> list[int]:
    pieces = local_sequences(seqlens, world_size, rank)
    return [0] + [p.end for p in pieces]


def owners(seqlens, world_size: int) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """For each global sequence: (rank, local index) holding its start, and holding its end."""
    first: dict[int, tuple[int, int]] = {}
    last: dict[int, tuple[int, int]] = {}
    for r in range(world_size):
        for j, piece in enumerate(local_sequences(seqlens, world_size, r)):
            if piece.starts_here:
                first[piece.seq] = (r, j)
            if piece.ends_here:
                last[piece.seq] = (r, j)
    return first, last
