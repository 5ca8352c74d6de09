"""The local executor: one pinned worker slot per visible GPU; one plain slot on CPU or one GPU."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from qlabench.run.options import RunOptions
from qlabench.measure import env as envmod
from qlabench.core.errors import QlabenchError
from qlabench.run.executors.local import local_slots, visible_gpus
from qlabench.store.keys import key_of
from qlabench.run.sweep import run_sweep
from qlabench.core.spec import load_suite
from qlabench.run.pool import Slot, WorkerPool

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny-cpu.toml"


@pytest.fixture
def four_gpus(monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_one_pinned_slot_per_visible_gpu(four_gpus):
    slots = local_slots("cuda")
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in slots] == ["0", "1", "2", "3"]
    assert {s.device for s in slots} == {"cuda:0"}  # each worker sees only its own GPU
    assert len({s.name for s in slots}) == 4
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in local_slots("cuda", gpus=2)] == ["0", "1"]


def test_visible_devices_are_respected(four_gpus, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5, 2")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert visible_gpus() == ["5", "2"]
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in local_slots("cuda")] == ["5", "2"]


def test_one_gpu_cpu_or_an_explicit_device_is_one_unpinned_slot(four_gpus, monkeypatch):
    assert local_slots("cpu") == [Slot("cpu")]
    assert local_slots("cuda:2") == [Slot("cuda:2")]
    assert local_slots("cuda", gpus=1) == [Slot("cuda")]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert local_slots("cuda") == [Slot("cuda")]
    with pytest.raises(QlabenchError, match="1 GPU"):
        local_slots("cuda", gpus=2)


def test_rows_name_the_physical_gpu_of_a_pinned_worker(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert envmod.physical_index(0) == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-8c1b2f9e")
    assert envmod.physical_index(0) == 0
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert envmod.physical_index(1) == 1


def test_groups_spread_over_several_slots_give_the_same_rows(tmp_path):
    suite = load_suite(str(TINY))
    one = run_sweep(suite, tmp_path / "one")
    two = run_sweep(suite, tmp_path / "two",
                    RunOptions(executor=lambda job, device, env: WorkerPool(job, [Slot(device, name="a"),
                                                                                  Slot(device, name="b")])))
    assert one.workers_started == 1 and two.workers_started == 2  # two compile groups, one per slot
    assert {(key_of(r), r.status) for r in two.rows} == {(key_of(r), r.status) for r in one.rows}
    assert len(two.rows) == len(suite.points)
