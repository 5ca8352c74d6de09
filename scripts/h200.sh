#!/usr/bin/env bash
# What qlabench runs on the H200 host (through the device tool), one step per call:
#   mkdir -p /tmp/gpu && tar xJf .gpu/gpu-site.tar.xz -C /tmp/gpu && export PYTHONPATH=/tmp/gpu/site:$PWD \
#     && bash scripts/h200.sh STEP
# Logs and results go under $OUT; kernel caches persist in /tmp/qlacache while the machine stays warm,
# and travel as $OUT/kcache.tar.xz (carry it back as .kcache/kcache.tar.xz).
set -u
export PYTHONUNBUFFERED=1 QLABENCH_CACHE_DIR=/tmp/qlacache
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" "$QLABENCH_CACHE_DIR"
if [ -f .kcache/kcache.tar.xz ] && [ ! -f "$QLABENCH_CACHE_DIR/.restored" ]; then
  tar xJf .kcache/kcache.tar.xz -C "$QLABENCH_CACHE_DIR" && touch "$QLABENCH_CACHE_DIR/.restored"
fi
q() { python3 -m qlabench "$@"; }
gpu_state() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active \
    --format=csv 2>&1
}
save_cache() { tar cJf "$OUT/kcache.tar.xz" -C "$QLABENCH_CACHE_DIR" . 2>/dev/null; ls -la "$OUT/kcache.tar.xz"; }

case "${1:-}" in
  smoke)
    { date -u; gpu_state; python3 -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())'; } 2>&1 | tee "$OUT/env.txt"
    ( time q warmup --suite h200-smoke --jobs 16 ) > "$OUT/warmup.log" 2>&1; tail -3 "$OUT/warmup.log"
    save_cache
    gpu_state | tee "$OUT/gpu-before.txt"
    q run sweep --suite h200-smoke --out "$OUT/results" 2>&1 | tee "$OUT/sweep.log" | grep -v "^\s*$" | tail -60
    gpu_state | tee "$OUT/gpu-after.txt"
    ;;
  gputests)
    python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider -rA 2>&1 | grep -v TileLang > "$OUT/pytest-gpu.log"
    tail -45 "$OUT/pytest-gpu.log"
    ;;
  *)
    echo "usage: h200.sh smoke|gputests" >&2; exit 2 ;;
esac
