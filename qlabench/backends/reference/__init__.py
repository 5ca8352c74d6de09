"""Plain-PyTorch implementations of the gated delta rule: the oracle, the chunked baseline and the float64
full-size reference."""

from qlabench.backends.reference.fp64_chunk import chunk_gated_delta_rule_fp64
from qlabench.backends.reference.naive_chunk import chunk_gated_delta_rule
from qlabench.backends.reference.naive_recurrent import recurrent_gated_delta_rule

__all__ = ["chunk_gated_delta_rule", "chunk_gated_delta_rule_fp64", "recurrent_gated_delta_rule"]
