"""The large-batch page (`qlabench report --large-batch`): packed batches of many sequences, every prefill
backend's time per head configuration and layout, FlashQLA's kernels beside its total and a fully fused
kernel's (FlashInfer's unsplit call), and the answer to "does FlashQLA's split cost it at large batch?" at
equal tokens. Pure pandas and matplotlib; reads the store through the evidence layer.

Computing (`build_large_batch`, `large_batch_from_paths` -> `LargeBatch`) is apart from rendering (`figures.py`,
`write_large_batch_page`: the markdown page and its PNGs).
"""

from qlabench.analyze.large_batch.study import LargeBatch, build_large_batch, large_batch_from_paths

__all__ = ["LargeBatch", "build_large_batch", "large_batch_from_paths", "write_large_batch_page"]


def write_large_batch_page(study, out_dir, command=None):
    """Write the page (large-batch.md) and its PNGs into out_dir; returns PageFiles(page, figures)."""
    from qlabench.analyze.large_batch.page import write_large_batch_page as _write

    return _write(study, out_dir, command)
