"""Plain-PyTorch implementations of the gated delta rule: the oracle and the chunked baseline."""

from qlabench.backends.reference.naive_chunk import chunk_gated_delta_rule
from qlabench.backends.reference.naive_recurrent import recurrent_gated_delta_rule

__all__ = ["chunk_gated_delta_rule", "recurrent_gated_delta_rule"]
