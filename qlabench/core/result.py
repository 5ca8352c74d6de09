"""One result row per (point, backend, mode), and its status. Pure Python, no torch.

Every field is a column of the parquet schema (see `schema.py`, which derives the arrow types from
the `kind` in each field's metadata). A row is validated on construction so that an impossible record
(an `ok` row with no time, a failed row with no reason) can never be written.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field, fields

from qlabench.core import backend_decl, identity, versions
from qlabench.core.errors import RowError


class Status(str, enum.Enum):
    OK = "ok"
    INCORRECT = "incorrect"  # ran, but disagreed with the oracle: never a valid time
    SKIPPED = "skipped"  # not run: backend unavailable or point unsupported
    ERROR = "error"  # crashed, timed out, or failed a provenance check


# How a skipped row says its backend could not run here at all (not installed, failed to import): such a row
# measured nothing, unlike one skipped because the backend does not run that point.
UNAVAILABLE = "backend unavailable"


# How a skipped row says its backend does not run on this GPU at all, whatever the point (its library's own check of
# the device said no): `device_unsupported_why` writes it, `off_device` reads it back, so a row at one point answers
# for every point of that GPU model (FlashInfer's training route on SM90).
_OFF_DEVICE = re.compile(r"^(?:unsupported: )?not supported on (\S+) by (\S+) (\(version unknown\)|\S+): ")


def device_unsupported_why(arch: str, library: str, version: str | None, check: str) -> str:
    """The reason of a backend that does not run on this device: `arch` (e.g. "SM90"), the library and version
    whose check said so, and the check (e.g. "is_gdn_train_supported('cuda') returned False")."""
    return f"not supported on {arch} by {library} {version or '(version unknown)'}: {check}"


def off_device(status, reason) -> bool:
    """Whether a row was skipped because its backend does not run on that GPU at any point (device_unsupported_why)."""
    return status == Status.SKIPPED.value and bool(_OFF_DEVICE.match(str(reason or "")))


def unavailable(status, reason) -> bool:
    """Whether a row was skipped because its backend could not run on that host at all: no measurement of a
    point the backend runs (a view counts its backend as unmeasured there, never as 'does not run here')."""
    return status == Status.SKIPPED.value and str(reason or "").startswith(UNAVAILABLE)


def col(kind: str, doc: str, default=None):
    return field(default=default, metadata={"kind": kind, "doc": doc})


# Names of the tensors compared against the oracle; each gets an `err_<name>` column.
CHECKED_TENSORS = ("o", "ht", "dq", "dk", "dv", "dg", "dbeta", "dh0", "pool")


@dataclass(frozen=True)
class ResultRow:
    # -- run ---------------------------------------------------------------------------------
    run_id: str = col("string", "Unique id of the sweep run that produced the row")
    suite: str = col("string", "Suite name")
    replicate: int | None = col("int64", "Replicate of the point within its run (0..K-1 with `--replicates K`, each in "
                                         "fresh worker processes, in rounds over the points); null: one replicate")
    timestamp: str = col("string", "UTC ISO-8601 time the row was measured")
    host: str = col("string", "Host name")
    device: str = col("string", "Device name, e.g. 'NVIDIA H200' or the CPU model")
    device_index: int | None = col("int64", "CUDA device index, null on CPU")
    gpu_uuid: str | None = col("string", "The physical GPU's UUID ('GPU-1a2b...'): two cards, or two hosts, of one "
                                         "model told apart; null on CPU and in rows made before it was recorded")
    env_fingerprint: str | None = col("string", "Hash of the environment fields that affect timings")
    # -- versions ----------------------------------------------------------------------------
    qlabench_version: str | None = col("string", "qlabench version")
    git_sha: str | None = col("string", "qlabench git commit, '+dirty' if modified; 'src:<digest>' of its sources for a "
                                        "copy that names no commit (measure/env.py: source_digest)")
    python_version: str | None = col("string", "Python version")
    torch_version: str | None = col("string", "torch version")
    triton_version: str | None = col("string", "triton version, if installed")
    tilelang_version: str | None = col("string", "tilelang version, if installed")
    fla_version: str | None = col("string", "fla-core version, if installed")
    flash_qla_version: str | None = col("string", "flash-qla version, if installed")
    flashinfer_version: str | None = col("string", "flashinfer-python version, if installed (null in rows "
                                                   "written before the column existed)")
    cuda_version: str | None = col("string", "CUDA runtime version torch was built with")
    driver_version: str | None = col("string", "NVIDIA driver version (NVML)")
    # -- the backend's own code (core/backend_decl.py: its library, engine, or a plugin's provider) ------------
    versions: dict | None = col("map<string,string>", "The version of every library the backend's call used, one "
                                "map (core/versions.py): its own library first ('flash-qla'), the compiler under it "
                                "('tilelang'), an engine's ('vllm'), a plugin's distribution and its checkout's "
                                "commit ('<dist> commit'), torch; only what was read, never a guess (derived from "
                                "the version columns in rows before schema 8)")
    backend_dist: str | None = col("string", "Distribution that provided the backend's code: its library's "
                                   "('flash-qla'), its engine's ('vllm'), a plugin's, or 'qlabench' for its own "
                                   "kernels")
    backend_version: str | None = col("string", "That distribution's version (its entry in `versions`)")
    backend_git_sha: str | None = col("string", "Commit of the git checkout a plugin was imported from (qlabench's "
                                      "own for its kernels); null for an installed copy")
    backend_git_dirty: bool | None = col("bool", "Whether that checkout had uncommitted changes")
    # -- point -------------------------------------------------------------------------------
    backend: str = col("string", "Backend name")
    mode: str = col("string", "fwd, bwd (backward kernels alone, as FlashQLA's table), bwd_train (backward alone as "
                              "autograd runs it in training) or fwd_bwd")
    model: str | None = col("string", "Model from the catalogue, if the heads came from one")
    tp: int | None = col("int64", "Tensor-parallel degree the heads were divided by")
    layout: str = col("string", "dense (B equal sequences) or varlen (packed into batch 1 with cu_seqlens)")
    batch: int = col("int64", "Batch size of the tensors (1 for varlen)")
    seqlens: tuple = col("list<int64>", "Sequence lengths")
    num_seqs: int = col("int64", "Number of sequences")
    total_tokens: int = col("int64", "Sum of the sequence lengths")
    h_qk: int = col("int64", "Query/key heads")
    h_v: int = col("int64", "Value heads (GVA when larger than h_qk)")
    K: int = col("int64", "Query/key head dim")
    V: int = col("int64", "Value head dim")
    dtype: str = col("string", "dtype of q, k, v (g and beta are float32)")
    gate: str = col("string", "Gate profile: flashqla, fla or strong")
    gate_zero_frac: float | None = col("float64", "flashqla gate: fraction of value heads with g = 0 (null: the "
                                                  "profile's 0.25)")
    gate_scale: float | None = col("float64", "flashqla gate: g = logsigmoid(randn) / gate_scale (null: the profile's 16)")
    seed: int = col("int64", "Input seed")
    initial_state: bool = col("bool", "Whether an initial state h0 was passed")
    cp_world_size: int | None = col("int64", "Ranks of inter-card context parallelism (null: one device)")
    cp_mode: str | None = col("string", "Context parallel mode: inter, dual (inter+intra) or fla-cp (null: none)")
    state_dtype: str | None = col("string", "Serving (decode/mtp): dtype of the state pool, float32 or bfloat16 "
                                            "(null: a prefill point)")
    state_layout: str | None = col("string", "Serving: per-slot state layout, kv ([HV, K, V]) or vk ([HV, V, K])")
    pool: int | None = col("int64", "Serving: state slots in the pool the batch's states are addressed in")
    beta_regime: str | None = col("string", "beta inputs: null sigmoid(randn), low (near 0) or high (near 1)")
    sm_budget: int | None = col("int64", "SMs the point was held to (a CUDA green context; docs/SM-BUDGET.md); null: "
                                         "the whole GPU")
    # -- outcome -----------------------------------------------------------------------------
    status: str = col("string", "ok, incorrect, skipped or error")
    reason: str | None = col("string", "Why the row is not ok (null when ok)")
    oracle: str | None = col("string", "What the outputs were checked against, e.g. 'naive-recurrent fp32 @512 tokens'")
    check_tokens: int | None = col("int64", "Total tokens of the correctness check")
    err_o: float | None = col("float64", "Relative L2 error of the output o")
    err_ht: float | None = col("float64", "Relative L2 error of the final state")
    err_dq: float | None = col("float64", "Relative L2 error of dq")
    err_dk: float | None = col("float64", "Relative L2 error of dk")
    err_dv: float | None = col("float64", "Relative L2 error of dv")
    err_dg: float | None = col("float64", "Relative L2 error of dg")
    err_dbeta: float | None = col("float64", "Relative L2 error of dbeta")
    err_dh0: float | None = col("float64", "Relative L2 error of dh0")
    err_pool: float | None = col("float64", "Serving: relative L2 change of the pool's slots outside the batch "
                                           "(must be 0: a kernel that writes another sequence's state fails)")
    # -- timing ------------------------------------------------------------------------------
    timer: str | None = col("string", "How samples were taken: wall, events or graph")
    timing_regime: str | None = col("string", "What the device did before the samples (core/regimes.py): "
                                    "burst (sampled right after the warm-up) or sustained (after "
                                    "`sustained_ms` of back-to-back timed calls); null: not recorded, i.e. "
                                    "before the column existed, when every row was a burst")
    samples_ms: tuple = col("list<float64>", "Every timed sample, milliseconds per call", default=())
    n_samples: int | None = col("int64", "Number of samples")
    median_ms: float | None = col("float64", "Median per-call time")
    mean_ms: float | None = col("float64", "Mean per-call time")
    stdev_ms: float | None = col("float64", "Sample standard deviation")
    min_ms: float | None = col("float64", "Fastest sample")
    p20_ms: float | None = col("float64", "20th percentile")
    p80_ms: float | None = col("float64", "80th percentile")
    iqr_ms: float | None = col("float64", "Interquartile range")
    rel_noise: float | None = col("float64", "Relative spread of the samples (IQR / median)")
    noise_target_met: bool | None = col("bool", "Whether sampling stopped because the noise target was met")
    stopped_by: str | None = col("string", "What ended sampling: noise_target, max_samples or max_time (null: "
                                           "before schema 3)")
    below_min_samples: bool | None = col("bool", "max_time_s ended sampling before min_samples were taken")
    cpu_threads: int | None = col("int64", "torch intra-op threads of the measuring process (pinned on CPU: the "
                                           "suite's run.cpu_threads)")
    first_call_s: float | None = col("float64", "Wall time of the first call of this point (includes any JIT)")
    sampling_s: float | None = col("float64", "Wall time spent taking the samples (warm-up and graph capture included)")
    compile_s: float | None = col("float64", "First-call time of the point that opened its compile group")
    phases_s: dict | None = col("map<string,float64>", "Wall seconds of each phase of the point (check, inputs, "
                                "first_call, kernel_capture, state_and_peaks, ...; sampling is `sampling_s`); "
                                "null: not recorded")
    # -- the time users pay (core/launch.py): the device's time, the eager launch's, the host's ---------
    device_ms: float | None = col("float64", "Median ms per call replayed in a CUDA graph (the launch gaps gone): the "
                                  "device's time; null where the call was not graph-captured (CPU, or a call that "
                                  "cannot be captured)")
    eager_ms: float | None = col("float64", "Median ms per call launched back to back from Python (CUDA events around "
                                 "a burst of eager calls; on CPU the wall timer's own time): what a caller that "
                                 "launches each call pays")
    eager_rel_noise: float | None = col("float64", "Relative spread (IQR / median) of the eager bursts")
    host_ms: float | None = col("float64", "Wall ms per call of the launching thread in those bursts, before the "
                                "device is waited for: near eager_ms, the host sets the pace")
    launch_bound: bool | None = col("bool", "Whether eager_ms exceeds device_ms beyond noise (core/launch.py); null "
                                    "where either is missing")
    host_cpu: str | None = col("string", "The measuring host's CPU model (launch cost is the host's as much as the "
                               "kernel's)")
    checked_at_size: bool | None = col("bool", "Whether the outputs of a call at the point's own size were compared "
                                       "with a reference (the oracle on the whole problem, the fp32 chunked form, "
                                       "or float64); false: checked on a reduced problem only (never ranked)")
    calls_sensitivity_ms: dict | None = col("map<string,float64>", "`[timing] sensitivity`: median ms per call at "
                                            "each calls-per-sample count timed, the row's own count included "
                                            "(core/timing_sensitivity.py); null: not measured")
    calls_sensitive: bool | None = col("bool", "Whether those medians differ by more than the samplings' noise "
                                       "(the time depends on how many calls a sample holds); null: not measured")
    # -- context parallelism (distributed points; see docs/CONTEXT-PARALLEL.md) -----------------
    cp_rank_ms: tuple = col("list<float64>", "CP: each rank's own median per-iteration time (fwd, or fwd+bwd)",
                            default=())
    cp_rank_fwd_ms: tuple = col("list<float64>", "CP: each rank's median forward time", default=())
    cp_rank_bwd_ms: tuple = col("list<float64>", "CP: each rank's median backward time (fwd_bwd only)", default=())
    cp_intra: bool | None = col("bool", "CP dual: whether the intra-card split triggered on every rank")
    # -- filled by the GPU profiling work (null otherwise) -----------------------------------
    kernels: tuple = col("list<string>", "CUDA kernel names launched by one call (torch.profiler)", default=())
    kernel_dur_us: tuple = col("list<float64>", "Duration of each kernel in `kernels`, microseconds", default=())
    kernel_grid: tuple = col("list<string>", "Grid 'x,y,z' of each kernel in `kernels`", default=())
    kernel_block: tuple = col("list<string>", "Block 'x,y,z' of each kernel in `kernels`", default=())
    kernel_blocks_per_sm: tuple = col("list<float64>", "Kineto 'blocks per SM' of each kernel", default=())
    autotune: tuple = col("list<autotune>", "The config each Triton autotuned kernel ran with in one call: kernel, "
                          "num_warps, num_stages, num_ctas and the config's kwargs (block sizes), as text "
                          "(measure/probes/autotune.py; empty: no autotuned kernel ran, or not recorded)", default=())
    num_sms: int | None = col("int64", "SM count of the device")
    sm_granted: int | None = col("int64", "SMs the green context of `sm_budget` was granted (the device's count for a "
                                          "budget of the whole device); null: no budget")
    extra_mem_mib: float | None = col("float64", "Device memory a steady call takes beyond its inputs and outputs: "
                                      "torch's allocated peak during the call minus what was allocated before it, minus "
                                      "its new outputs (core/device_memory.py); null on CPU")
    outside_mem_mib: float | None = col("float64", "Device memory the first call took outside torch's allocator: the "
                                        "drop of the free memory minus the growth of torch's reserved memory (a "
                                        "library's own allocator, workspaces); null on CPU")
    sm_coverage: float | None = col("float64", "Time-weighted fraction of SMs given blocks, see docs/METRICS.md")
    sm_coverage_waves: float | None = col("float64", "Wave-aware sm_coverage (tail waves count), see docs/METRICS.md")
    sm_active_pct: float | None = col("float64", "Nsight Compute: sum cycles_active / sum cycles_elapsed, percent")
    tflops: float | None = col("float64", "Achieved TFLOP/s from the FLOP model (qlabench/core/flops.py)")
    gbps: float | None = col("float64", "Achieved GB/s from the byte model (qlabench/core/flops.py)")
    peak_tflops: float | None = col("float64", "Measured bf16 matmul TFLOP/s of the device (once per worker)")
    peak_gbps: float | None = col("float64", "Measured device-copy GB/s of the device (once per worker)")
    frac_peak_flops: float | None = col("float64", "tflops / peak_tflops")
    frac_peak_bw: float | None = col("float64", "gbps / peak_gbps")
    # -- serving: the memory-bound limit (core/bytes_model.py, docs/SERVING.md) ---------------
    bytes_read: int | None = col("int64", "Serving: bytes one step must read at least (states, q, k, v, g, beta, slots)")
    bytes_written: int | None = col("int64", "Serving: bytes one step must write at least (states, o)")
    bytes_moved: int | None = col("int64", "Serving: bytes_read + bytes_written")
    hbm_peak_read_tbs: float | None = col("float64", "Measured HBM read peak of the device, TB/s (a reduction over "
                                                     "1 GiB; once per worker)")
    hbm_peak_write_tbs: float | None = col("float64", "Measured HBM write peak of the device, TB/s (a fill of 1 GiB)")
    hbm_frac: float | None = col("float64", "Serving: fraction of the bandwidth limit reached: (bytes_read / read "
                                            "peak + bytes_written / write peak) / median time; above 1 the row "
                                            "fails its check")
    # -- GPU state (NVML), read before and after sampling; never changed ---------------------
    sm_clock_mhz_before: float | None = col("float64", "SM clock before sampling")
    sm_clock_mhz_after: float | None = col("float64", "SM clock after sampling")
    mem_clock_mhz_before: float | None = col("float64", "Memory clock before sampling")
    mem_clock_mhz_after: float | None = col("float64", "Memory clock after sampling")
    temperature_c_before: float | None = col("float64", "GPU temperature before sampling")
    temperature_c_after: float | None = col("float64", "GPU temperature after sampling")
    power_w_before: float | None = col("float64", "Board power before sampling")
    power_w_after: float | None = col("float64", "Board power after sampling")
    throttle_reasons_after: tuple = col("list<string>", "NVML clock event reasons active after sampling", default=())
    clock_drop: bool | None = col("bool", "Clocks dropped or a slowdown reason appeared during sampling")
    clock_drop_reason: str | None = col("string", "What dropped, when clock_drop")
    extra_json: str | None = col("string", "Backend- or timer-specific details, JSON")

    def __post_init__(self) -> None:
        try:
            status = Status(self.status)
        except ValueError:
            raise RowError(f"unknown status {self.status!r}") from None
        object.__setattr__(self, "status", status.value)
        object.__setattr__(self, "seqlens", tuple(self.seqlens))
        object.__setattr__(self, "samples_ms", tuple(float(x) for x in self.samples_ms))
        for name in ("kernels", "kernel_dur_us", "kernel_grid", "kernel_block", "kernel_blocks_per_sm",
                     "throttle_reasons_after", "cp_rank_ms", "cp_rank_fwd_ms", "cp_rank_bwd_ms"):
            object.__setattr__(self, name, tuple(getattr(self, name) or ()))
        object.__setattr__(self, "autotune", tuple(autotune_choice(c) for c in self.autotune or ()))
        if self.versions is not None:
            object.__setattr__(self, "versions", {str(k): str(v) for k, v in _pairs(self.versions) if v is not None})
        for name in ("phases_s", "calls_sensitivity_ms"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, {str(k): float(v) for k, v in _pairs(getattr(self, name))})
        self._derive_times()
        if status is Status.OK:
            if self.median_ms is None or not math.isfinite(self.median_ms) or self.median_ms <= 0:
                raise RowError(f"an ok row needs a positive, finite median_ms (got {self.median_ms!r})")
            if self.reason:
                raise RowError(f"an ok row carries no reason, but this one has {self.reason!r}: is it ok or not?")
        elif not self.reason:
            raise RowError(f"a {status.value} row needs a reason")

    def _derive_times(self) -> None:
        """What a row's timer and checks already say, where the row did not say it itself (a row made before the
        columns, a distributed point, a test's row): a graph timer's median is the device time, an events or wall
        timer's the eager time (both launch each call eagerly), and the check's tokens say whether it covered the
        point's size. A value given is never replaced."""
        if self.median_ms is not None:
            if self.device_ms is None and self.timer == "graph":
                object.__setattr__(self, "device_ms", self.median_ms)
            if self.eager_ms is None and self.timer in ("events", "wall"):
                object.__setattr__(self, "eager_ms", self.median_ms)
        if self.checked_at_size is None:
            object.__setattr__(self, "checked_at_size",
                               checked_at_size_of(self.oracle, self.total_tokens, self.check_tokens))

    @property
    def ok(self) -> bool:
        return self.status == Status.OK.value

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def checked_at_size_of(oracle: str | None, total_tokens: int | None, check_tokens: int | None) -> bool | None:
    """Whether a row's checks covered its own size, from what it recorded: the oracle's tokens, or a reference
    named at the point's tokens ('naive-chunk float32 @32768 tokens'); None for a row that was never checked."""
    if total_tokens is None or (not oracle and check_tokens is None):
        return None
    if check_tokens is not None and check_tokens >= total_tokens:
        return True
    return f"@{total_tokens} tokens" in str(oracle or "")


def _pairs(mapping) -> list:
    """A map column's value as (key, value) pairs: a dict as written, a list of pairs as arrow reads it back."""
    return list(mapping.items()) if isinstance(mapping, dict) else [tuple(kv) for kv in mapping]


AUTOTUNE_FIELDS = ("kernel", "num_warps", "num_stages", "num_ctas", "kwargs")


def autotune_choice(c) -> dict:
    """One entry of the `autotune` column, normalised: ints for the launch fields, text for the kwargs."""
    c = dict(c)
    ints = {k: (None if c.get(k) is None else int(c[k])) for k in ("num_warps", "num_stages", "num_ctas")}
    kwargs = {str(k): str(v) for k, v in _pairs(c.get("kwargs") or {})}
    return {"kernel": str(c["kernel"]), **ints, "kwargs": kwargs}


# Environment keys (qlabench.measure.env.capture) copied into every row.
ENV_FIELDS = ("host", "host_cpu", "device", "device_index", "gpu_uuid", "env_fingerprint", "qlabench_version", "git_sha",
              "python_version", "torch_version", "triton_version", "tilelang_version", "fla_version",
              "flash_qla_version", "flashinfer_version", "cuda_version", "driver_version")


def backend_provenance(backend: str, env: dict, found: dict | None = None) -> dict:
    """The version record of a row (core/versions.py: `versions`) and its backend_* columns: the backend's own
    library's name and version in that record (a plugin's provider with its checkout, as loaded in this process;
    a library backend's library, an engine backend's engine), qlabench itself for its own kernels. `found`: what
    the backend read at the call itself (an engine's kernel site)."""
    d = backend_decl.find(backend)
    if d is None:
        return {}
    record = versions.record(backend, env, found)
    own = versions.own_name(backend)
    if d.plugin:
        pv = d.provider
        return dict(versions=record, backend_dist=pv.dist, backend_version=pv.version, backend_git_sha=pv.git_sha,
                    backend_git_dirty=pv.git_dirty) if pv is not None else dict(versions=record)
    lib = backend_decl.library_of(backend)
    if lib is None and backend_decl.core_backend_name(backend):  # a layer runs its core's code
        lib = backend_decl.library_of(backend_decl.core_backend_name(backend))
    if lib is not None:
        return dict(versions=record, backend_dist=lib.dist or lib.name, backend_version=record.get(lib.name))
    if own != versions.OWN_CODE:  # an engine's own kernels
        return dict(versions=record, backend_dist=own, backend_version=record.get(own))
    sha = env.get("git_sha")
    return dict(versions=record, backend_dist="qlabench", backend_version=env.get("qlabench_version"),
                backend_git_sha=sha.removesuffix("+dirty") if sha else None,
                backend_git_dirty=sha.endswith("+dirty") if sha else None)


def make_row(point, *, run_id: str, suite: str, env: dict, status: Status, reason: str | None = None,
             found_versions: dict | None = None, **fields) -> ResultRow:
    """The one place a row is assembled from a point, its run and environment, and its outcome. `found_versions`:
    the versions its backend read at the call (Backend.found_versions)."""
    import datetime as dt

    p = point
    return ResultRow(
        run_id=run_id, suite=suite, timestamp=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        **{k: env.get(k) for k in ENV_FIELDS}, **backend_provenance(p.backend, env, found_versions),
        **identity.columns(p), num_seqs=p.num_seqs, total_tokens=p.total_tokens,
        status=Status(status).value, reason=reason, **fields,
    )


def row_fields():
    """(name, kind, doc) for every column, in order."""
    return [(f.name, f.metadata["kind"], f.metadata["doc"]) for f in fields(ResultRow)]
