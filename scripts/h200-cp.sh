#!/usr/bin/env bash
# The context-parallel run on the 2-GPU H200 host (docs/CONTEXT-PARALLEL.md), in ONE device call:
#   mkdir -p /tmp/gpu && tar xJf .gpu/gpu-site.tar.xz -C /tmp/gpu && cd .snap \
#     && export PYTHONPATH=/tmp/gpu/site:$PWD && bash scripts/h200-cp.sh [SUITE]
# It must finish inside the call's 570 s (compiles included: 30-100 s per new kernel set), so:
#   - the sweep starts no new point after MAX_TIME_S (default 360) and is killed at BUDGET_S (495);
#     rows are written as they are measured, so a killed sweep keeps every finished point;
#   - the results are read back from the results folder (part files of an unfinished run included)
#     and written flat into $OUT as one parquet file, whatever happened to the sweep.
# $OUT gets (flat, at most 8 files): cp-run.log (everything), <suite>.parquet, cp-summary.txt.
# NVLink multicast stays off in every process: the three variables below are exported here and qlabench
# sets them again in every process it starts (qlabench/run/distributed/safety.py).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 QLABENCH_CACHE_DIR=${QLABENCH_CACHE_DIR:-/tmp/qlacache}
[ -f GIT_SHA ] && export QLABENCH_GIT_SHA=$(cat GIT_SHA)
OUT=${OUT:-/tmp/out}
SUITE=${1:-h200x2-cp}
RES=${RES:-/tmp/qlaresults-cp}
BUDGET_S=${BUDGET_S:-495}
MAX_TIME_S=${MAX_TIME_S:-360}
mkdir -p "$OUT" "$QLABENCH_CACHE_DIR" "$RES"
LOG="$OUT/cp-run.log"
T0=$(date +%s)

{
  echo "== $(date -u) suite=$SUITE budget=${BUDGET_S}s max_time=${MAX_TIME_S}s"
  echo "== NVLS: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
  nvidia-smi
  nvidia-smi topo -m
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,memory.used \
    --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())
try: print("nccl", torch.cuda.nccl.version())
except Exception as e: print("nccl version unknown:", e)'
} > "$LOG" 2>&1
cat "$LOG"

echo "== sweep (start $(( $(date +%s) - T0 ))s)" | tee -a "$LOG"
timeout -k 15 "$BUDGET_S" python3 -m qlabench run sweep --suite "$SUITE" --out "$RES" --max-time "$MAX_TIME_S" \
  >> "$LOG" 2>&1
RC=$?
echo "== sweep exit $RC after $(( $(date +%s) - T0 ))s (124: killed at the budget; rows so far are kept)" | tee -a "$LOG"
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw,memory.used --format=csv >> "$LOG" 2>&1

# Read everything the sweep wrote (compacted or not), write it flat into $OUT, print the table last.
NAME=$(python3 -c "import sys; from qlabench.core.spec import load_suite; print(load_suite(sys.argv[1]).name)" "$SUITE" \
  2>>"$LOG" || echo "$SUITE")
timeout 60 python3 - "$RES" "$NAME" "$OUT" >> "$LOG" 2>&1 <<'EOF'
import json, math, sys
from pathlib import Path

res, suite, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
from qlabench.store.files import read_results, write_table
import pyarrow as pa

folder = Path(res) / suite
try:
    df = read_results([folder])
except Exception as e:
    print(f"no results readable in {folder}: {e}")
    sys.exit(0)
df = df.sort_values("timestamp", kind="stable")
write_table(out / f"{suite}.parquet", pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False))

def f(x, nd=3):
    try:
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{float(x):.{nd}f}"
    except (TypeError, ValueError):
        return "-"

def ranks(xs):
    xs = list(xs) if xs is not None else []
    return "/".join(f(x) for x in xs) if len(xs) else "-"

lines = [f"{'backend':15} {'mode':8} {'cp':12} {'W':>2} {'T':>8} {'e2e_ms':>9} {'rank_ms':>17} "
         f"{'fwd_ms/rank':>17} {'bwd_ms/rank':>17} {'err_o':>8} {'compile_s':>9} status"]
for _, r in df.iterrows():
    ws = r.get("cp_world_size")
    ws = 1 if ws is None or (isinstance(ws, float) and math.isnan(ws)) else int(ws)
    mode = r.get("cp_mode") if isinstance(r.get("cp_mode"), str) else ("1 GPU")
    if r.get("cp_intra") is True:
        mode += "+intra"
    status = r["status"] + ("" if r["status"] == "ok" else f": {str(r.get('reason'))[:90]}")
    lines.append(f"{r['backend']:15} {r['mode']:8} {mode:12} {ws:>2} {int(r['total_tokens']):>8} "
                 f"{f(r.get('median_ms')):>9} {ranks(r.get('cp_rank_ms')):>17} {ranks(r.get('cp_rank_fwd_ms')):>17} "
                 f"{ranks(r.get('cp_rank_bwd_ms')):>17} {f(r.get('err_o'), 5):>8} {f(r.get('compile_s'), 1):>9} "
                 f"{status}")
text = "\n".join(lines)
(out / "cp-summary.txt").write_text(text + "\n")
print("== summary")
print(text)
EOF
ls -la "$OUT" >> "$LOG" 2>&1
echo "== sweep log (last lines)"
grep -vE "^\s*$|TileLang|Warning|━" "$LOG" | sed -n '/^== sweep (start/,/^== summary/p' | tail -n 20
echo "== done after $(( $(date +%s) - T0 ))s; files in \$OUT: $(ls "$OUT" | tr '\n' ' ')"
echo "== summary (e2e_ms: per-iteration max over ranks, median; rank_ms: each rank's own median)"
cat "$OUT/cp-summary.txt" 2>/dev/null || echo "no summary: see cp-run.log"
