#!/usr/bin/env bash
# What qlabench runs on the H200 hosts (through the device tool), one or more steps per call:
#   mkdir -p /tmp/gpu && tar xJf .gpu/gpu-site.tar.xz -C /tmp/gpu && cd .snap \
#     && export PYTHONPATH=/tmp/gpu/site:$PWD && bash scripts/h200.sh STEP [SUITE]
# (.snap is a copy of the repo made just before the call, so edits during the call cannot race it:
#   rm -rf .snap && mkdir .snap && cp -r qlabench suites tests scripts pyproject.toml .snap/ \
#     && git rev-parse HEAD > .snap/GIT_SHA)
# Steps:
#   warm      compile SUITE's kernels in parallel processes (qlabench warmup), ~3.5 min for h200-smoke
#   sweep     run SUITE with --resume and a time budget (MAX_TIME_S); repeat the call until it reports
#             0 points left; results accumulate in /tmp/qlaresults while the machine stays warm.
#             GPUS=N uses at most N GPUs (default: all visible)
#   gputests  python -m pytest -m gpu tests/gpu
#   scaling   SUITE (default h200-smoke-fwd) from scratch with the local executor on 1 GPU and on all,
#             then the ray executor likewise (needs ray: RAY_SITE=.ray/ray-site.tar.xz, see below);
#             wall time per run in scaling.csv, every run's parquet in scaling.tar
#   ncu       `run sweep --ncu` on SUITE (default h200-ncu): Nsight Compute's sm_active_pct per point
#   selfbench the harness's own benchmarks (docs/BENCHMARKS.md) on SUITE (default h200-precision; warm
#             it first): WHAT=all|precision|cost|agreement; resumable: repeat the call until it no
#             longer says "runs not made"; runs accumulate in /tmp/qlaresults/selfbench-$WHAT (suffixed
#             -gpuI when pinned, so two GPUs can each take a timer: SELFBENCH_ARGS="--timer events")
#   study     the gate's A/A and injected-slowdown study (docs/GATING.md) on SUITE (default
#             gate-study-h200)
#   pack      last in a call whose steps wrote more than the 8 files the device tool returns: tars the
#             results (not the logs) into out.tar, and everything into all.tar if still too many
# The GPU steps stop at once (exit 3) if flash_qla/fla are not importable in this shell.
# Pin a step to one GPU with CUDA_VISIBLE_DEVICES=i; two steps on different GPUs may run at once.
# $OUT keeps only what the current call wrote (at most 8 files, two folders down), so each step writes
# one log and one tar of its results into $OUT; results also stay in /tmp/qlaresults for the next call.
# A copy without .git records its commit from GIT_SHA (see above).
set -u
export PYTHONUNBUFFERED=1 QLABENCH_CACHE_DIR=${QLABENCH_CACHE_DIR:-/tmp/qlacache}
# NVLink multicast stays off in every process on multi-GPU hosts (shared/gpu/README.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[ -f GIT_SHA ] && export QLABENCH_GIT_SHA=$(cat GIT_SHA)
OUT=${OUT:-/tmp/out}
RES=/tmp/qlaresults
STEP=${1:-}
mkdir -p "$OUT" "$QLABENCH_CACHE_DIR" "$RES"
gpu_state() {
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active \
    --format=csv 2>&1
}
quiet() { grep -vE "^\s*$|TileLang|Warning|j_t_vec|dk_fragment|Initialize the buffer|━"; }
# ray travels as its own bundle (.ray/ray-site.tar.xz: ray and the few deps the host lacks)
with_ray() {
  local site=/tmp/raysite
  python3 -c 'import ray' 2>/dev/null && { python3 -c 'import ray; print("ray", ray.__version__)'; return 0; }
  if [ ! -d "$site/site/ray" ]; then
    [ -f "${RAY_SITE:-.ray/ray-site.tar.xz}" ] || { echo "no ray bundle at ${RAY_SITE:-.ray/ray-site.tar.xz}"; return 1; }
    mkdir -p "$site" && tar xJf "${RAY_SITE:-.ray/ray-site.tar.xz}" -C "$site" || return 1
  fi
  export PYTHONPATH=$site/site:$PYTHONPATH
  python3 -c 'import ray; print("ray", ray.__version__)'
}
# Fail fast, before any device time is spent measuring `skipped` rows, when the GPU bundle is not on the
# path of this shell (e.g. a `cd .snap && export PYTHONPATH=...` chain that went to the background).
need_gpu_libs() {
  python3 -c 'import flash_qla, fla' 2>/dev/null && return 0
  echo "h200.sh $STEP: flash_qla/fla not importable (PYTHONPATH=${PYTHONPATH:-unset}, cwd $PWD):" \
    "extract .gpu/gpu-site.tar.xz and export PYTHONPATH in this shell first" >&2
  exit 3
}
# The device tool returns at most 8 files from $OUT: run `h200.sh pack` last in a call that wrote more.
pack_out() {
  local n
  n=$(find "$OUT" -maxdepth 1 -type f | wc -l)
  [ "$n" -le 8 ] && { echo "pack: $n files in \$OUT, nothing to do"; return 0; }
  (cd "$OUT" && find . -maxdepth 1 -type f ! -name '*.log' ! -name '*.txt' ! -name '*.csv' ! -name 'out.tar' \
     -printf '%P\n' | tar cf out.tar -T - --remove-files)
  n=$(find "$OUT" -maxdepth 1 -type f | wc -l)
  if [ "$n" -gt 8 ]; then  # still too many: everything but out.tar into all.tar
    (cd "$OUT" && find . -maxdepth 1 -type f ! -name 'all.tar' -printf '%P\n' | tar cf all.tar -T - --remove-files)
  fi
  ls -la "$OUT"
}
ngpus() { python3 -c 'import torch; print(torch.cuda.device_count())'; }
tag=${CUDA_VISIBLE_DEVICES:+-gpu$CUDA_VISIBLE_DEVICES}

case "$STEP" in
  warm)
    SUITE=${2:-h200-smoke}
    { date -u; gpu_state; python3 -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(), torch.cuda.device_count())'; } 2>&1 | tee "$OUT/env.txt"
    ( time timeout "${WARM_S:-300}" python3 -m qlabench warmup --suite "$SUITE" --jobs 16 ) > "$OUT/warmup-$SUITE.log" 2>&1
    grep -E "points in|real" "$OUT/warmup-$SUITE.log" | tail -10
    ;;
  sweep)
    need_gpu_libs
    SUITE=${2:-h200-smoke}
    log="$OUT/sweep-$SUITE$tag.log"
    { echo "== before"; gpu_state; } > "$log"
    timeout "${SWEEP_S:-560}" python3 -m qlabench run sweep --suite "$SUITE" --out "$RES" --resume \
      --max-time "${MAX_TIME_S:-420}" ${GPUS:+--gpus $GPUS} 2>&1 | quiet >> "$log"
    { echo "== after"; gpu_state; } >> "$log"
    tail -8 "$log"
    tar cf "$OUT/sweep-$SUITE.tar" -C "$RES" "$SUITE"
    ;;
  gputests)
    need_gpu_libs
    log="$OUT/pytest-gpu$tag.log"
    timeout "${TESTS_S:-560}" python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider -rA 2>&1 | grep -v TileLang > "$log"
    grep -E "passed|failed|error" "$log" | tail -4
    ;;
  scaling)
    need_gpu_libs
    SUITE=${2:-h200-smoke-fwd}
    csv="$OUT/scaling.csv" log="$OUT/scaling.log"
    n=$(ngpus)
    echo "suite,executor,gpus,wall_s,rc" > "$csv"
    { date -u; gpu_state; } > "$log"
    runs="local:1"; [ "$n" -gt 1 ] && runs="$runs local:$n"
    if with_ray >> "$log" 2>&1; then runs="$runs ray:1"; [ "$n" -gt 1 ] && runs="$runs ray:$n"; fi
    for r in $runs; do
      ex=${r%:*} g=${r#*:} dst="$RES/scaling/$ex-g$g"
      rm -rf "$dst"
      echo "== $ex on $g GPU(s)" >> "$log"
      t0=$(date +%s.%N)
      timeout "${RUN_S:-240}" python3 -m qlabench run sweep --suite "$SUITE" --out "$dst" --executor "$ex" \
        --gpus "$g" 2>&1 | quiet >> "$log"
      rc=${PIPESTATUS[0]}
      t1=$(date +%s.%N)
      echo "$SUITE,$ex,$g,$(python3 -c "print(f'{$t1-$t0:.1f}')"),$rc" | tee -a "$csv"
    done
    { echo "== after"; gpu_state; } >> "$log"
    tar cf "$OUT/scaling.tar" -C "$RES" scaling
    ;;
  ncu)
    need_gpu_libs
    SUITE=${2:-h200-ncu}
    log="$OUT/ncu$tag.log"
    { echo "ncu: $(command -v ncu || echo missing)"; ncu --version 2>&1 | tail -1; } > "$log"
    timeout "${NCU_S:-300}" python3 -m qlabench run sweep --suite "$SUITE" --out "$RES/ncu" --ncu 2>&1 | quiet >> "$log"
    tail -12 "$log"
    tar cf "$OUT/ncu.tar" -C "$RES" ncu
    ;;
  selfbench)
    need_gpu_libs
    SUITE=${2:-h200-precision}
    WHAT=${WHAT:-all}
    log="$OUT/selfbench-$WHAT$tag.log"
    { echo "== before"; gpu_state; } > "$log"
    timeout "${SELFBENCH_S:-570}" python3 -m qlabench selfbench "$WHAT" --suite "$SUITE" \
      --out "$RES/selfbench-$WHAT$tag" --max-time "${MAX_TIME_S:-400}" ${SELFBENCH_ARGS:-} 2>&1 | quiet >> "$log"
    { echo "== after"; gpu_state; } >> "$log"
    grep -E "^(suite|flashqla) |runs not made|agreement skipped|wrote" "$log" | tail -20
    (cd "$RES" && tar cf "$OUT/selfbench-$WHAT$tag.tar" --exclude='*/runs/*/*.part*' "selfbench-$WHAT$tag")
    ;;
  study)
    SUITE=${2:-gate-study-h200}
    log="$OUT/study$tag.log"
    timeout "${STUDY_S:-560}" python3 -m qlabench compare-study --suite "$SUITE" --out "$RES/study" \
      ${STUDY_ARGS:-} 2>&1 | quiet > "$log"
    tail -12 "$log"
    tar cf "$OUT/study.tar" -C "$RES" study
    ;;
  pack)
    pack_out ;;
  *)
    echo "usage: h200.sh warm|sweep|gputests|scaling|ncu|selfbench|study|pack [SUITE]" >&2; exit 2 ;;
esac
