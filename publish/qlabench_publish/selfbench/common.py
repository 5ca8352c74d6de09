"""What every selfbench part shares: its error, timing profiles and overrides, the timers it compares,
point labels and the host's load."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from qlabench.core.errors import QlabenchError
from qlabench.core.spec import Suite, TimingSpec, timing_problems

FLASHQLA_WARMUP_MS, FLASHQLA_REP_MS, FLASHQLA_REPLAYS = 10.0, 100.0, 10

# Timing profiles: overrides of the suite's TimingSpec. "flashqla" models tilelang's cudagraph
# do_bench as FlashQLA calls it: its 10 replays of a ~rep-ms graph sample for ~1 s whatever the
# noise, so the sampling time is fixed (min_time_s == max_time_s makes the noise target moot) and
# the sample count is left to time. Its warmup is time-based (10 ms); ours counts calls, so the
# suite's warmup count is kept.
TIMING_PROFILES: dict[str, dict] = {
    "suite": {},
    "flashqla": {"min_time_s": FLASHQLA_REPLAYS * FLASHQLA_REP_MS / 1e3,
                 "max_time_s": FLASHQLA_REPLAYS * FLASHQLA_REP_MS / 1e3,
                 "min_samples": 1, "max_samples": 1_000_000},
}


class SelfbenchError(QlabenchError):
    """A selfbench request that cannot be carried out (bad override, unknown profile, ...)."""


# -- timing overrides -------------------------------------------------------------------------

def parse_timing_overrides(items: Sequence[str]) -> dict:
    """["min_time_s=0.1", "l2_flush=false"] -> typed TimingSpec overrides."""
    defaults = TimingSpec()
    out: dict = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not hasattr(defaults, key):
            known = ", ".join(f.name for f in dataclasses.fields(TimingSpec))
            raise SelfbenchError(f"--timing {item!r}: expected KEY=VALUE with KEY one of {known}")
        want = type(getattr(defaults, key))
        try:
            if want is bool:
                if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(raw)
                out[key] = raw.lower() in ("true", "1", "yes")
            else:
                out[key] = want(raw)
        except ValueError:
            raise SelfbenchError(f"--timing {item!r}: {raw!r} is not a {want.__name__}") from None
    return out


def with_timing(suite: Suite, profile: str = "suite", overrides: dict | None = None) -> Suite:
    """The suite with a timing profile and then explicit overrides applied to its TimingSpec, validated as a
    suite's [timing] is (an override is no way around the suite's rules)."""
    if profile not in TIMING_PROFILES:
        raise SelfbenchError(f"unknown timing profile {profile!r} (known: {', '.join(TIMING_PROFILES)})")
    changes = {**TIMING_PROFILES[profile], **(overrides or {})}
    if not changes:
        return suite
    timing = dataclasses.replace(suite.timing, **changes)
    for key, problem in timing_problems(timing):
        given = " ".join(f"--timing {k}={v}" for k, v in (overrides or {}).items())
        raise SelfbenchError(f"{given or 'timing profile ' + profile} (on {suite.path}'s [timing]"
                             f"{', timing profile ' + profile if profile != 'suite' and given else ''}): "
                             f"{key}: {problem}")
    return dataclasses.replace(suite, timing=timing)


def default_timers(device: str) -> tuple[str, ...]:
    """Issue 4 compares the graph and events timers on CUDA; a CPU has only the wall clock."""
    return ("graph", "events") if device.startswith("cuda") else ("wall",)


def point_label(row) -> str:
    from qlabench.analyze.kit.labels import heads_label, layout_label

    return f"{row['backend']} {row['mode']} {heads_label(row)} {layout_label(row)}"


def load_average() -> str | None:
    """The host's 1/5/15-minute load: a busy shared host explains a wide spread."""
    try:
        import os

        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return None
