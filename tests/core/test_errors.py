"""Project errors (qlabench/core/errors.py): what the library raises for problems a user can cause."""

from __future__ import annotations

import ast
from pathlib import Path

import pyarrow as pa
import pytest

from qlabench.core import errors
from qlabench.core.errors import (
    ConfigError,
    DeviceError,
    MeasureError,
    PointError,
    QlabenchError,
    RowError,
    SchemaError,
    StoreError,
    TimerError,
)

PACKAGE = Path(errors.__file__).resolve().parents[1]


def test_every_error_is_a_qlabench_error_and_the_former_value_errors_stay_value_errors():
    for cls in (ConfigError, DeviceError, MeasureError, PointError, RowError, SchemaError, TimerError):
        assert issubclass(cls, QlabenchError) and issubclass(cls, ValueError), cls
    assert issubclass(DeviceError, ConfigError) and issubclass(TimerError, ConfigError)
    assert issubclass(SchemaError, StoreError)


def test_an_invalid_point_is_a_point_error():
    from qlabench.core.point import Point

    with pytest.raises(PointError, match="invalid point"):
        Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=3, h_v=8, K=16, V=16)


def test_a_tp_that_does_not_divide_the_heads_is_a_point_error():
    from qlabench.core import models

    with pytest.raises(PointError, match="does not divide"):
        models.lookup("27b").at_tp(3)


@pytest.mark.parametrize("changes, words", [({"status": "maybe"}, "unknown status"),
                                            ({"median_ms": float("nan")}, "finite median_ms"),
                                            ({"reason": "why"}, "no reason")])
def test_a_self_contradicting_row_is_a_row_error(make_row, changes, words):
    with pytest.raises(RowError, match=words):
        make_row(**changes)


def test_measurements_that_cannot_be_summarised_are_measure_errors():
    from qlabench.measure.timing import summarize

    with pytest.raises(MeasureError, match="no samples"):
        summarize([])


def test_a_file_that_is_not_a_results_file_is_a_store_error(tmp_path):
    import pyarrow.parquet as pq

    from qlabench.store.files import read_table
    from qlabench.store.schema import upgrade

    table = pa.table({"x": [1]})
    with pytest.raises(SchemaError, match="not a qlabench results file"):
        upgrade(table, "t.parquet")
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(StoreError, match="not a qlabench results file"):
        read_table(tmp_path / "t.parquet")


def test_cuda_asked_for_without_cuda_is_a_device_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    from qlabench.run.sweep import resolve_device

    with pytest.raises(DeviceError, match="CUDA is not available"):
        resolve_device("cuda:1")


@pytest.mark.parametrize("text, words", [("3/3", "0-based"), ("1-3", "whole numbers"), ("a/b", "whole numbers")])
def test_a_bad_shard_is_a_config_error(text, words):
    from qlabench.run.executors import parse_shard

    with pytest.raises(ConfigError, match=words):
        parse_shard(text)


def test_bad_point_json_is_a_point_error():
    from qlabench.measure.probes.ncu import point_from_json

    for text in ("not json", "[1, 2]", '{"backend": "x"}'):
        with pytest.raises(PointError, match="bad --point-json"):
            point_from_json(text)


def _raises_of(path: Path, name: str) -> list[int]:
    tree = ast.parse(path.read_text(), str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == name:
                lines.append(node.lineno)
    return lines


# Not ours to change here: the backends and the stop rule's own check of its metric name.
_ALLOWED = ("backends/", "measure/timing/stopping.py")


def test_the_library_raises_no_bare_value_error():
    found = [f"{p.relative_to(PACKAGE)}:{line}" for p in sorted(PACKAGE.rglob("*.py"))
             if not str(p.relative_to(PACKAGE)).startswith(_ALLOWED) for line in _raises_of(p, "ValueError")]
    assert found == [], "raise a QlabenchError subclass (qlabench/core/errors.py) instead: " + ", ".join(found)


def test_the_cli_catches_no_value_error():
    """The one boundary (cli/app.py) handles QlabenchError; a ValueError reaching the CLI is a bug."""
    found = []
    for p in sorted((PACKAGE / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ExceptHandler) and node.type is not None and "ValueError" in ast.dump(node.type):
                found.append(f"{p.name}:{node.lineno}")
    assert found == []
