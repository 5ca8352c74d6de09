#!/usr/bin/env bash
# What qlabench runs on the H200 host (through the device tool), one step per call:
#   mkdir -p /tmp/gpu && tar xJf .gpu/gpu-site.tar.xz -C /tmp/gpu && export PYTHONPATH=/tmp/gpu/site:$PWD \
#     && bash scripts/h200.sh STEP [SUITE]
# Steps:
#   warm    compile SUITE's kernels in parallel processes (qlabench warmup), ~3.5 min for h200-smoke
#   sweep   run SUITE with --resume and a time budget (SWEEP_S): repeat the call until it reports
#           0 points left; results accumulate in /tmp/qlaresults while the machine stays warm
#   gputests  python -m pytest -m gpu
#   selfbench  the harness's own benchmarks (docs/BENCHMARKS.md) on SUITE (default h200-precision; warm
#           it first): WHAT=all|precision|cost|agreement; resumable like sweep: repeat the call until
#           it no longer says "runs not made"; runs accumulate in /tmp/qlaresults/selfbench
# $OUT only keeps what the current call wrote (and files at most two folders down), so results live in
# /tmp/qlaresults and each call copies the compacted run files into $OUT flat.
# A copy without .git records its commit from .snap/GIT_SHA (write it when making the copy:
#   git rev-parse HEAD > .snap/GIT_SHA).
set -u
export PYTHONUNBUFFERED=1 QLABENCH_CACHE_DIR=/tmp/qlacache
[ -f GIT_SHA ] && export QLABENCH_GIT_SHA=$(cat GIT_SHA)
OUT=${OUT:-/tmp/out}
RES=/tmp/qlaresults
SUITE=${2:-h200-smoke}
mkdir -p "$OUT" "$QLABENCH_CACHE_DIR" "$RES"
q() { python3 -m qlabench "$@"; }
gpu_state() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active \
    --format=csv 2>&1
}
quiet() { grep -vE "^\s*$|TileLang|Warning|j_t_vec|dk_fragment|Initialize the buffer|━"; }

case "${1:-}" in
  warm)
    { date -u; gpu_state; python3 -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())'; } 2>&1 | tee "$OUT/env.txt"
    ( time timeout "${WARM_S:-300}" python3 -m qlabench warmup --suite "$SUITE" --jobs 16 ) > "$OUT/warmup.log" 2>&1
    grep -E "points in|real" "$OUT/warmup.log" | tail -40
    ;;
  sweep)
    { echo "== before"; gpu_state; } | tee -a "$OUT/env.txt"
    timeout "${SWEEP_S:-500}" python3 -m qlabench run sweep --suite "$SUITE" --out "$RES" --resume \
      --max-time "${MAX_TIME_S:-420}" 2>&1 | quiet > "$OUT/sweep.log"
    { echo "== after"; gpu_state; } | tee -a "$OUT/env.txt"
    tail -25 "$OUT/sweep.log"
    find "$RES" -maxdepth 2 -name '*.parquet' -exec cp {} "$OUT/" \;
    ls -la "$OUT"
    ;;
  gputests)
    python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider -rA 2>&1 | grep -v TileLang > "$OUT/pytest-gpu.log"
    tail -45 "$OUT/pytest-gpu.log"
    ;;
  selfbench)
    SUITE=${2:-h200-precision}
    { echo "== before"; gpu_state; } | tee -a "$OUT/env.txt"
    timeout "${SELFBENCH_S:-570}" python3 -m qlabench selfbench "${WHAT:-all}" --suite "$SUITE" \
      --out "$RES/selfbench" --max-time "${MAX_TIME_S:-400}" 2>&1 | quiet > "$OUT/selfbench.log"
    { echo "== after"; gpu_state; } | tee -a "$OUT/env.txt"
    grep -E "^(suite|flashqla) |runs not made|agreement skipped|wrote" "$OUT/selfbench.log" | tail -40
    find "$RES/selfbench" -maxdepth 1 -type f \( -name '*.md' -o -name '*.csv' -o -name '*.parquet' \) \
      -exec cp {} "$OUT/" \;
    ls -la "$OUT"
    ;;
  *)
    echo "usage: h200.sh warm|sweep|gputests|selfbench [SUITE]" >&2; exit 2 ;;
esac
