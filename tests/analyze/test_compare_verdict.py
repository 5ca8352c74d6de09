"""CompareOptions: every numeric option is a bounded, finite number (one-line error, exit 2)."""

from __future__ import annotations

import pytest

from qlabench.analyze.compare import CompareOptions
from qlabench.core.errors import QlabenchError

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("field,value", [
    ("noise_factor", INF), ("noise_factor", 1e300), ("noise_factor", NAN), ("noise_factor", 0.0),
    ("noise_factor", 11.0), ("threshold", NAN), ("threshold", INF), ("alpha", NAN), ("host_floor", NAN),
    ("host_floor", INF), ("min_samples", 10**9), ("min_samples", 1),
])
def test_out_of_range_options_are_refused(field, value):
    flag = "--" + field.replace("_", "-")
    with pytest.raises(QlabenchError, match=f"^{flag} must"):
        CompareOptions(**{field: value})


def test_options_in_range_are_kept():
    opt = CompareOptions(noise_factor=10.0, threshold=0.5, min_samples=2, host_floor=0.0)
    assert (opt.noise_factor, opt.threshold, opt.min_samples) == (10.0, 0.5, 2)
