"""The eager launch probe's CPU side (measure/timing/launch.py); its CUDA bursts are tests/gpu/test_launch_gpu.py."""

from __future__ import annotations

from qlabench.measure.timing import launch


def test_a_cpu_rows_eager_and_host_time_are_its_wall_samples():
    m = launch.from_wall([2.0, 1.0, 3.0])
    assert (m.eager_ms, m.host_ms, m.how, m.rounds) == (2.0, 2.0, "wall", 3)
    assert m.details() == {"calls_per_burst": 1, "bursts": 3, "timer": "wall"}


def test_a_burst_holds_enough_calls_to_last_about_five_milliseconds_and_never_fewer_than_four():
    ticks = iter([0.0, 0.0001, 0.0, 0.001, 0.0, 0.01])  # a 0.1 ms call, a 1 ms one, then a 10 ms one

    def clock():
        return next(ticks)

    assert launch._calls_per_burst(lambda: None, lambda: None, clock) == launch.MAX_CALLS
    assert launch._calls_per_burst(lambda: None, lambda: None, clock) == 5
    assert launch._calls_per_burst(lambda: None, lambda: None, clock) == launch.MIN_CALLS


def test_a_burst_is_primed_one_call_is_launched_before_its_start_mark():
    # the start event must fire behind a call already queued, not on an idle device (the module's doc)
    log = []
    ticks = iter([1.0, 1.5])
    launched = launch.primed_burst(lambda: log.append("call"), 3, lambda: log.append("start"),
                                   lambda: log.append("end"), lambda: next(ticks))
    assert log == ["call", "start", "call", "call", "call", "end"]
    assert launched == 0.5  # the thread's time over the timed calls only


def test_an_events_measurement_says_its_bursts_were_primed_so_views_can_tell_it_from_the_old_probe():
    from qlabench.core.launch import unprimed_eager

    m = launch.LaunchMeasurement(1.0, 0.01, 0.9, 4, 15, "events")
    assert m.details() == {"calls_per_burst": 4, "bursts": 15, "timer": "events", "primed": True}
    assert not unprimed_eager(m.details())
    assert launch.MIN_CALLS == 4  # core/launch.py's PRIMED_MIN_CALLS: fewer a burst is the unprimed probe's
