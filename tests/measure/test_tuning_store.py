"""The per-point tuning store (measure/tuning_store.py) and the choices it keeps (measure/probes/autotune.py:
saved_choices, install_saved), on CPU with the stand-in autotuner: a tuned point keeps its choices, a new
process installs them without benchmarking, another point, version or GPU model misses, a corrupt or stale
entry falls back to tuning with a note, and writers at once leave a whole file."""

from __future__ import annotations

import json
import multiprocessing
import sys

import pytest
import standin_autotuner

from qlabench.core.point import Point
from qlabench.measure import tuning_store as ts
from qlabench.measure.probes.autotune import install_saved, retune, saved_choices

MODS = ("tslib.",)
ENV = {"device": "NVIDIA H200", "fla_version": "0.6.0", "triton_version": "3.6.0", "torch_version": "2.11.0"}


def _point(n=512, backend="fla", **kw):
    return Point(backend=backend, mode="fwd", layout="dense", batch=1, seqlens=(n,), h_qk=2, h_v=8, K=128,
                 V=128, dtype="bfloat16", **kw)


def _key(p=None, env=ENV):
    return ts.point_key(p or _point(), env, "cpu")


def _fresh(monkeypatch):
    """A new process's library: a stand-in autotuner that has tuned nothing yet."""
    return standin_autotuner.install(monkeypatch, "tslib.ops").kernel


def _first_call(tuner, key, root, length=512, mode="point-cached"):
    with ts.point_tuning(MODS, mode, lambda: key, root=root) as details:
        got = tuner.run(8, length)
    return details, got


def test_a_tuned_point_keeps_its_choices_and_a_new_process_installs_them_without_benchmarking(monkeypatch, tmp_path):
    tuner = _fresh(monkeypatch)
    details, got = _first_call(tuner, _key(), tmp_path)
    assert (got, tuner.tunings, details["autotune_tuned_for"]) == (512, 1, "point")
    assert details["autotune_store"]["saved"] == 1
    stored = json.loads((tmp_path / "autotune" / f"{_key().id}.json").read_text())
    assert stored["entries"][0]["kernel"] == "tslib.ops.stand_in_kernel"
    assert stored["entries"][0]["choices"] == [{"key": 8, "config": {"kwargs": {"BLOCK": 512}, "num_ctas": 1,
                                                                     "num_stages": 3, "num_warps": 8,
                                                                     "pre_hook": None}}]

    tuner = _fresh(monkeypatch)
    tuner.run(8, 64)  # what the worker ran before: reset, then replaced by the stored choice
    details, got = _first_call(tuner, _key(), tmp_path)
    assert (got, tuner.tunings) == (512, 1)  # the one tuning is the earlier shape's: none for the point
    assert details["autotune_tuned_for"] == "point-cached"
    assert details["autotune_store"] == {"id": _key().id, "saved_at": stored["saved_at"], "installed": 1}
    assert tuner.cache_results is False  # no other shape's choice read back from the library's disk cache


@pytest.mark.parametrize("other", [
    _key(_point(n=1024)),  # another shape
    _key(_point(seed=1)),  # any axis of the identity, not a hand-picked list
    _key(env={**ENV, "fla_version": "0.6.1"}),  # another library version
    _key(env={**ENV, "triton_version": "3.7.0"}),
    _key(env={**ENV, "device": "NVIDIA H100 80GB HBM3"}),  # another GPU model
])
def test_another_point_version_or_gpu_model_does_not_reuse_them(monkeypatch, tmp_path, other):
    _first_call(_fresh(monkeypatch), _key(), tmp_path)
    assert other.id != _key().id
    tuner = _fresh(monkeypatch)
    details, _ = _first_call(tuner, other, tmp_path, length=1024)
    assert (tuner.tunings, details["autotune_tuned_for"]) == (1, "point")
    assert "notes" not in details["autotune_store"]  # a point never tuned before: a plain miss


def test_the_key_names_the_backends_stack_and_the_gpus_capability():
    key = _key()
    assert key.versions == {"fla_version": "0.6.0", "triton_version": "3.6.0"}
    assert key.gpu == "NVIDIA H200" and key.capability is None  # on CPU
    assert key.point["seqlens"] == (512,) and key.point["backend"] == "fla"
    layer = ts.point_key(_point(backend="layer:fla"), ENV, "cpu")  # no library of its own: every version
    assert {"fla_version", "triton_version", "torch_version"} <= set(layer.versions)


@pytest.mark.parametrize("spoil", ["{not json", json.dumps({"format": 99, "entries": []}), "[]"])
def test_a_corrupt_entry_falls_back_to_tuning_with_a_note_and_is_replaced(monkeypatch, tmp_path, spoil):
    _first_call(_fresh(monkeypatch), _key(), tmp_path)
    path = tmp_path / "autotune" / f"{_key().id}.json"
    path.write_text(spoil)
    tuner = _fresh(monkeypatch)
    details, got = _first_call(tuner, _key(), tmp_path)
    assert (got, tuner.tunings, details["autotune_tuned_for"]) == (512, 1, "point")
    assert _key().id in details["autotune_store"]["notes"][0]
    assert json.loads(path.read_text())["entries"]  # tuned again and stored whole


def test_an_entry_made_for_another_key_is_not_trusted(monkeypatch, tmp_path):
    _first_call(_fresh(monkeypatch), _key(), tmp_path)
    path = tmp_path / "autotune" / f"{_key().id}.json"
    data = json.loads(path.read_text())
    data["key"]["versions"]["fla_version"] = "0.5.0"
    path.write_text(json.dumps(data))
    details, _ = _first_call(_fresh(monkeypatch), _key(), tmp_path)
    assert details["autotune_tuned_for"] == "point"
    assert "another point or stack" in details["autotune_store"]["notes"][0]


@pytest.mark.parametrize("change, says", [
    (lambda t: setattr(t, "configs", t.configs[:5]), "none of the configs it offers"),  # 512 no longer offered
    (lambda t: setattr(t, "keys", ["heads", "K"]), "keys changed"),
    (lambda t: setattr(t.base_fn, "__qualname__", "renamed"), "no loaded autotuner"),
])
def test_a_stale_entry_falls_back_to_tuning_with_a_note(monkeypatch, tmp_path, change, says):
    _first_call(_fresh(monkeypatch), _key(), tmp_path)
    tuner = _fresh(monkeypatch)
    change(tuner)
    details, _ = _first_call(tuner, _key(), tmp_path)
    assert (tuner.tunings, details["autotune_tuned_for"]) == (1, "point")
    assert any(says in n for n in details["autotune_store"]["notes"])


def test_installing_needs_the_librarys_own_config_and_leaves_the_tuner_alone_when_any_choice_is_stale(monkeypatch):
    tuner = _fresh(monkeypatch)
    tuner.run(8, 512)
    tuner.run(16, 256)
    entries, notes = saved_choices(MODS)
    assert notes == [] and len(entries[0]["choices"]) == 2
    retune(MODS)
    entries[0]["choices"][1]["config"]["num_warps"] = 2  # a config the tuner never offered
    installed, notes = install_saved(entries, MODS)
    assert installed == 0 and tuner.cache == {} and "none of the configs" in notes[0]
    installed, notes = install_saved([{**entries[0], "choices": None}], MODS)  # malformed
    assert installed == 0 and "malformed" in notes[0]


def test_point_mode_tunes_every_time_and_its_tuning_replaces_the_stored_one(monkeypatch, tmp_path):
    _first_call(_fresh(monkeypatch), _key(), tmp_path)
    path = tmp_path / "autotune" / f"{_key().id}.json"
    path.write_text(path.read_text().replace('"BLOCK": 512', '"BLOCK": 256'))  # a tuning since found wanting
    tuner = _fresh(monkeypatch)
    details, got = _first_call(tuner, _key(), tmp_path, mode="point")
    assert (got, tuner.tunings, details["autotune_tuned_for"]) == (512, 1, "point")
    assert details["autotune_store"]["installed"] == 0 and details["autotune_store"]["saved"] == 1
    tuner = _fresh(monkeypatch)
    details, got = _first_call(tuner, _key(), tmp_path)
    assert (got, tuner.tunings, details["autotune_tuned_for"]) == (512, 0, "point-cached")  # the re-tune's


def test_process_mode_keeps_the_librarys_choice_and_leaves_the_store_alone(monkeypatch, tmp_path):
    tuner = _fresh(monkeypatch)
    tuner.run(8, 64)
    details, got = _first_call(tuner, _key(), tmp_path, mode="process")
    assert details == {"autotune_tuned_for": "process"} and got == 64
    assert not (tmp_path / "autotune").exists()


def _write_many(root, writer: int) -> None:
    key = _key()
    entries = [{"kernel": f"k{writer}", "choices": [{"key": i, "config": {"value": writer}} for i in range(200)]}]
    for _ in range(40):
        ts.save(key, entries, root)


@pytest.mark.skipif(sys.platform != "linux", reason="forks the writers")
def test_writers_at_once_leave_one_whole_file(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_many, args=(tmp_path, w)) for w in range(4)]
    for p in procs:
        p.start()
    reads = []
    while any(p.is_alive() for p in procs):
        stored, why = ts.load(_key(), tmp_path)
        assert why == ""  # never a half-written file
        reads.append(stored)
    for p in procs:
        p.join()
        assert p.exitcode == 0
    stored, why = ts.load(_key(), tmp_path)
    assert why == "" and stored.entries[0]["kernel"] in {f"k{w}" for w in range(4)}
    assert len({c["config"]["value"] for c in stored.entries[0]["choices"]}) == 1  # one writer's, not a mix
    assert list((tmp_path / "autotune").iterdir()) == [tmp_path / "autotune" / f"{_key().id}.json"]  # no temp left
