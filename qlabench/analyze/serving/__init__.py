"""The serving page: decode and multi-token verify rows (modes decode, mtp) per backend variant against
batch: time, achieved TB/s and share of the measured HBM bandwidth limit, the winner per point, where the
winner changes, and every row that is not ok or above the limit. Pure pandas and matplotlib; reads the store.

Computing (`build_serving`, `serving_from_paths` -> `Serving`) is apart from rendering (`figures.py`,
`write_serving`: the markdown page and its PNGs). The docs' `serving-against` block quoting it is
this repository's publishing (publish/qlabench_publish/blocks/serving.py).
"""

from qlabench.analyze.serving.serving import Serving, build_serving, serving_from_paths

__all__ = ["Serving", "build_serving", "serving_from_paths", "write_serving"]


def write_serving(serving, out_dir, command=None):
    """Write the serving page (serving.md) and its PNGs into out_dir; returns PageFiles(page, figures)."""
    from qlabench.analyze.serving.page import write_serving as _write

    return _write(serving, out_dir, command)
