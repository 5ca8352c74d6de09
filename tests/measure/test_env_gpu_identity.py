"""Which GPU a row was measured on (env.gpu_uuid, capture): two GPUs of one model must be told apart."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from qlabench.core.result import ENV_FIELDS, ResultRow
from qlabench.measure import env


def test_a_cpu_run_records_no_gpu_identity():
    fields = env.capture("cpu")
    assert "gpu_uuid" in fields and fields["gpu_uuid"] is None


def test_the_uuid_is_read_from_the_device_and_written_as_nvidia_smi_prints_it(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda idx: SimpleNamespace(uuid="8c0e7b1a-aaaa-bbbb-cccc-0123456789ab"))
    assert env.gpu_uuid(0) == "GPU-8c0e7b1a-aaaa-bbbb-cccc-0123456789ab"
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda idx: SimpleNamespace(uuid="GPU-1234"))
    assert env.gpu_uuid(0) == "GPU-1234"
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda idx: SimpleNamespace())
    assert env.gpu_uuid(0) is None  # a torch without the field: null, never a made-up identity


def test_every_row_carries_the_gpu_identity_column():
    assert "gpu_uuid" in ENV_FIELDS
    assert "gpu_uuid" in ResultRow.__dataclass_fields__
