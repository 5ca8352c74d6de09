#!/usr/bin/env bash
# qlabench on a GPU host that has no package index (air-gapped or offline): see docs/OFFLINE-HOSTS.md.
#
# 1. On a machine with a package index, from a checkout of this repository:
#      bash scripts/offline-host.sh bundle [TARBALL]
#    resolves the GPU packages of pyproject.toml's `gpu` extra (tilelang, flash-qla, fla-core and their
#    dependencies) for the GPU host's Python and platform, installs them into a folder `site/`, and packs
#    it with a copy of this repository at HEAD into TARBALL (default qlabench-offline.tar.xz):
#      qlabench-offline/site/       the packages (put on PYTHONPATH by the steps below)
#      qlabench-offline/qlabench/   the repository, with GIT_SHA (the commit every result row records)
#      qlabench-offline/MANIFEST.txt
# 2. Copy TARBALL to the GPU host and unpack it: tar xJf qlabench-offline.tar.xz
# 3. On the GPU host, from qlabench-offline/qlabench (any copy of the repository works):
#      bash scripts/offline-host.sh [--out DIR] STEP [SUITE]
#    Steps (SUITE defaults in brackets):
#      check      versions, GPUs and importable GPU packages into DIR/env.txt
#      warmup     compile SUITE's kernels in parallel processes (qlabench warmup) [h200-smoke]
#      sweep      run SUITE with --resume: repeat it after an interruption and it continues [h200-smoke]
#      tests      the GPU tests (python -m pytest -m gpu tests/gpu)
#      scaling    SUITE from scratch on 1 GPU and on all, local executor then ray (when ray is
#                 importable: bundle with QLABENCH_BUNDLE_EXTRAS="gpu ray"); wall times in DIR/scaling.csv
#                 [h200-smoke-fwd]
#      ncu        run sweep --ncu: Nsight Compute's sm_active_pct per point [h200-ncu]
#      selfbench  the harness's own benchmarks (docs/BENCHMARKS.md), WHAT=all|precision|cost|agreement;
#                 resumable like sweep [h200-precision]
#      study      the gate's A/A and injected-slowdown study (docs/GATING.md) [gate-study-h200]
#      cp         context-parallel sweep on 2+ GPUs (docs/CONTEXT-PARALLEL.md); writes SUITE's rows as
#                 DIR/<suite>.parquet and a table DIR/cp-summary.txt, whatever happened to the sweep
#                 [h200x2-cp]
#      pack       tar the results and the compile caches into DIR (results.tar.gz, compile-cache.tar.gz)
#    Each step writes its log into DIR; results accumulate in the work folder, so `pack` last gathers
#    everything to carry back. The GPU steps stop at once (exit 3) when flash_qla/fla are not importable.
#    A step's exit status is its command's (qlabench's: 2 for bad input such as an unknown suite; 124 when
#    STEP_TIMEOUT_S killed it); a failed command also prints the end of its log on stderr.
#
# Folders (relative paths are taken from where the script is called):
#   QLABENCH_OFFLINE_OUT   DIR: logs, summaries and packs to carry back (default ./offline-out; --out wins)
#   QLABENCH_OFFLINE_WORK  results/ and cache/ of this host, kept between steps (default ./offline-work)
#   QLABENCH_OFFLINE_SITE  the unpacked packages (default: site/ beside the repository, as unpacked above);
#                          not needed when the host's Python already has them
#   QLABENCH_CACHE_DIR     kernel compile caches (default WORK/cache)
# Knobs of the GPU steps:
#   CUDA_VISIBLE_DEVICES=i pins a step to one GPU (its logs get a -gpuI suffix): two steps on different
#                          GPUs may run at once. GPUS=N: a sweep uses at most N GPUs (default: all visible).
#   MAX_TIME_S             a sweep/selfbench/cp starts no new point (run) after this many seconds
#   STEP_TIMEOUT_S         kill a step after this many seconds (rows measured so far are kept)
#   JOBS                   warmup's parallel compile processes (default 16)
#   SELFBENCH_ARGS, STUDY_ARGS   extra arguments, e.g. SELFBENCH_ARGS="--timer events"
#   WARMUP_ARGS, SWEEP_ARGS      extra arguments of warmup and sweep, e.g. SWEEP_ARGS="--heads 2/8" (a study one
#                          head configuration per run: each answer there then comes from one run)
# Knobs of `bundle` (defaults in brackets):
#   QLABENCH_BUNDLE_PYTHON     the GPU host's Python version, e.g. 3.12 [this machine's python3]
#   QLABENCH_BUNDLE_PLATFORMS  wheel platform tags [manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64]
#   QLABENCH_BUNDLE_EXTRAS     extras of pyproject.toml to bundle [gpu]; add ray for --executor ray,
#                              main for qlabench's own dependencies (numpy, pandas, ...) when the host lacks them
#   QLABENCH_BUNDLE_EXCLUDE    packages the host provides, left out (shell patterns) [torch triton nvidia-*]
#   QLABENCH_HOST_TORCH        the host's torch version (e.g. 2.8.0): resolve the packages against it
set -u

die() { echo "offline-host.sh: $*" >&2; exit 2; }
abspath() { case "$1" in /*) realpath -m -- "$1" ;; *) realpath -m -- "$CALLER_PWD/$1" ;; esac; }

CALLER_PWD=$PWD
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST=${QLABENCH_OFFLINE_OUT:-offline-out}
while [ $# -gt 0 ]; do
  case "$1" in
    -o|--out) [ $# -ge 2 ] || die "$1 needs a folder"; DEST=$2; shift 2 ;;
    --out=*) DEST=${1#--out=}; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
STEP=${1:-}
STEPS="bundle|check|warmup|sweep|tests|scaling|ncu|selfbench|study|cp|pack"
case "|$STEPS|" in
  *"|$STEP|"*) ;;
  *) die "usage: offline-host.sh [--out DIR] $STEPS [SUITE]  (--help for more)" ;;
esac
DEST=$(abspath "$DEST")
WORK=$(abspath "${QLABENCH_OFFLINE_WORK:-offline-work}")
SITE=$(abspath "${QLABENCH_OFFLINE_SITE:-$REPO/../site}")
RES=$WORK/results
tag=${CUDA_VISIBLE_DEVICES:+-gpu$CUDA_VISIBLE_DEVICES}

# -- bundle (on a machine with a package index) ------------------------------------------------------

bundle() {
  local tarball pyver
  tarball=$(abspath "${1:-qlabench-offline.tar.xz}")
  pyver=${QLABENCH_BUNDLE_PYTHON:-$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')}
  tmp=$(mktemp -d)  # global: the EXIT trap still sees it
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/qlabench-offline"
  cd "$REPO" || exit 1

  # Requirements of the extras, read from pyproject.toml (tomllib on Python >= 3.11, else a plain parse).
  local reqs=() text
  text=$(python3 - "${QLABENCH_BUNDLE_EXTRAS:-gpu}" <<'EOF'
import re, sys
text = open("pyproject.toml").read()
try:
    import tomllib
    project = tomllib.loads(text)["project"]
    extras = {"main": project["dependencies"], **project["optional-dependencies"]}
except ImportError:
    def entries(block):
        return {k: re.findall(r'"([^"]+)"', v) for k, v in re.findall(r"^([\w-]+)\s*=\s*\[(.*?)\]", block, re.S | re.M)}
    extras = {"main": entries(text.split("[project]", 1)[1].split("\n[", 1)[0])["dependencies"],
              **entries(text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0])}
for name in sys.argv[1].split():
    if name not in extras:
        sys.exit(f"no extra {name!r} in pyproject.toml (known: {', '.join(extras)})")
    print("\n".join(extras[name]))
EOF
  ) || exit 1
  mapfile -t reqs <<< "$text"
  [ -n "${QLABENCH_HOST_TORCH:-}" ] && reqs+=("torch==$QLABENCH_HOST_TORCH")
  [ ${#reqs[@]} -gt 0 ] || die "bundle: no requirements found"

  local tags=(--only-binary=:all: --python-version "$pyver" --implementation cp)
  local p
  for p in ${QLABENCH_BUNDLE_PLATFORMS:-manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64}; do
    tags+=(--platform "$p")
  done
  echo "== resolving for Python $pyver: ${reqs[*]}"
  # Resolve without downloading (pip >= 22.2): the host's own packages (torch, CUDA libraries) are never
  # fetched, only their metadata.
  python3 -m pip install --dry-run --ignore-installed --quiet --target "$tmp/resolve" \
    --report "$tmp/report.json" "${tags[@]}" "${reqs[@]}" || die "bundle: pip could not resolve the packages"

  local pins=()
  text=$(python3 - "$tmp/report.json" "${QLABENCH_BUNDLE_EXCLUDE-torch triton nvidia-*}" <<'EOF'
import fnmatch, json, re, sys
report, exclude = json.load(open(sys.argv[1])), sys.argv[2].split()
for item in report["install"]:
    name, version = item["metadata"]["name"], item["metadata"]["version"]
    norm = re.sub(r"[-_.]+", "-", name).lower()
    if any(fnmatch.fnmatch(norm, pat) for pat in exclude):
        print(f"left out (the host provides it): {name} {version}", file=sys.stderr)
    else:
        print(f"{name}=={version}")
EOF
  ) || exit 1
  mapfile -t pins <<< "$text"
  [ -n "${pins[0]:-}" ] || die "bundle: every resolved package is excluded"
  echo "== downloading ${#pins[@]} wheels"
  python3 -m pip download --no-deps --quiet --dest "$tmp/wheels" "${tags[@]}" "${pins[@]}" \
    || die "bundle: download failed"
  python3 -m pip install --no-deps --no-index --no-compile --quiet --target "$tmp/qlabench-offline/site" "${tags[@]}" \
    "$tmp"/wheels/*.whl || die "bundle: installing the wheels into site/ failed"

  # This repository at HEAD, with the commit it came from (a copy without .git reads GIT_SHA).
  local sha=unknown
  if git rev-parse --git-dir >/dev/null 2>&1; then
    sha=$(git rev-parse HEAD)
    [ -z "$(git status --porcelain --untracked-files=no)" ] || echo "note: uncommitted changes are not bundled (HEAD $sha is)"
    mkdir -p "$tmp/qlabench-offline/qlabench"
    git archive HEAD | tar x -C "$tmp/qlabench-offline/qlabench"
  else
    mkdir -p "$tmp/qlabench-offline/qlabench"
    cp -r qlabench publish tests scripts pyproject.toml "$tmp/qlabench-offline/qlabench/"
    [ -f GIT_SHA ] && sha=$(cat GIT_SHA)
  fi
  echo "$sha" > "$tmp/qlabench-offline/qlabench/GIT_SHA"
  {
    echo "qlabench offline bundle, made $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
    echo "qlabench commit: $sha"
    echo "python: $pyver; platforms: ${QLABENCH_BUNDLE_PLATFORMS:-manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64}"
    echo "requirements: ${reqs[*]}"
    echo "left out (the host provides them): ${QLABENCH_BUNDLE_EXCLUDE-torch triton nvidia-*}"
    echo "packages in site/:"
    printf '  %s\n' "${pins[@]}"
  } > "$tmp/qlabench-offline/MANIFEST.txt"
  tar cJf "$tarball" -C "$tmp" qlabench-offline || die "bundle: could not write $tarball"
  cat "$tmp/qlabench-offline/MANIFEST.txt"
  echo "== wrote $tarball ($(du -h "$tarball" | cut -f1))"
}

if [ "$STEP" = bundle ]; then
  bundle "${2:-}"
  exit $?
fi

# -- the GPU host --------------------------------------------------------------------------------------

cd "$REPO" || exit 1
mkdir -p "$DEST" "$RES"
export QLABENCH_CACHE_DIR=${QLABENCH_CACHE_DIR:-$WORK/cache}
mkdir -p "$QLABENCH_CACHE_DIR"
export PYTHONUNBUFFERED=1
# The folders the site's .pth files add to sys.path (Python reads .pth files only for site directories,
# never for a PYTHONPATH entry; nvidia-cutlass-dsl, which FlashInfer 0.7's kernels import, is found only
# through one, an `import` line in 4.8). The site is read as Python reads a site folder, in an interpreter
# started with -S (no other site folder), and the folders that added are printed ':'-prefixed; a .pth that
# stops that interpreter stops the script, naming the folder.
pth_dirs() {
  python3 -S -c 'import site, sys
before = list(sys.path); site.addsitedir(sys.argv[1])
print("".join(":" + p for p in sys.path if p not in before and p != sys.argv[1]))' "$1" \
    || { echo "offline-host: $1: its .pth files fail when read as a site folder" >&2; exit 2; }
}
if [ -d "$SITE" ]; then SITE=$(cd "$SITE" && pwd); extra=$(pth_dirs "$SITE") || exit 2; export PYTHONPATH=$SITE$extra${PYTHONPATH:+:$PYTHONPATH}; fi
# the checkout's publish/ last: `selfbench` is this repository's (python -m qlabench_publish), not the package's
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH}:$REPO/publish
# NVLink multicast stays off in every process on multi-GPU hosts; qlabench also sets these in every
# process it starts (qlabench/run/distributed/safety.py).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# A copy without .git records its commit from GIT_SHA (written by `bundle`).
[ -f GIT_SHA ] && { QLABENCH_GIT_SHA=$(cat GIT_SHA); export QLABENCH_GIT_SHA; }

smi() { if command -v nvidia-smi >/dev/null; then nvidia-smi "$@"; else echo "nvidia-smi: not found"; fi; }
gpu_state() {
  smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active \
    --format=csv 2>&1
}
quiet() { grep -vE "^\s*$|TileLang|Warning|j_t_vec|dk_fragment|Initialize the buffer|━"; }
limited() {  # run "$@", killed after STEP_TIMEOUT_S when set
  if [ -n "${STEP_TIMEOUT_S:-}" ]; then timeout -k 15 "$STEP_TIMEOUT_S" "$@"; else "$@"; fi
}
# The knob `limited` hands to timeout(1), checked first: timeout would exit 125 on "abc" and run with no
# limit at all on 0.
if [ -n "${STEP_TIMEOUT_S:-}" ] && ! { [[ $STEP_TIMEOUT_S =~ ^[0-9]*\.?[0-9]+$ ]] && [[ $STEP_TIMEOUT_S =~ [1-9] ]]; }; then
  die "STEP_TIMEOUT_S=$STEP_TIMEOUT_S: must be a positive number of seconds"
fi
# The step's status is its command's: a filter after it (grep, tee) or the gpu_state after it must not turn a
# failed qlabench into exit 0. `ran LOG RC` keeps the first failure for the script's exit and says so.
STEP_RC=0
ran() {
  local log=$1 rc=$2
  [ "$rc" -eq 0 ] && return 0
  [ "$STEP_RC" -ne 0 ] || STEP_RC=$rc
  {
    echo "offline-host.sh $STEP: the command exited $rc$([ "$rc" -eq 124 ] && echo ' (killed at STEP_TIMEOUT_S; rows so far are kept)'); the end of $log:"
    grep -vE "^\s*$" "$log" | tail -n 5 | sed 's/^/  /'
  } >&2
}
max_time() { [ -n "${MAX_TIME_S:-}" ] && echo "--max-time $MAX_TIME_S"; }
# Fail fast, before a sweep records nothing but `skipped` rows, when the GPU packages are not importable.
need_gpu_libs() {
  python3 -c 'import flash_qla, fla' 2>/dev/null && return 0
  echo "offline-host.sh $STEP: flash_qla/fla not importable (site: $SITE$([ -d "$SITE" ] || echo ', missing');" \
    "PYTHONPATH=$PYTHONPATH). Unpack the bundle beside the repository or set QLABENCH_OFFLINE_SITE." >&2
  exit 3
}
ngpus() { python3 -c 'import torch; print(torch.cuda.device_count())'; }

case "$STEP" in
  check)
    {
      date -u
      echo "qlabench commit: ${QLABENCH_GIT_SHA:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
      echo "site: $SITE$([ -d "$SITE" ] || echo ' (missing: using the host Python only)')"
      echo "python path: $PYTHONPATH"
      gpu_state
      python3 - <<'EOF'
import importlib
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count(),
          torch.cuda.get_device_name() if torch.cuda.is_available() else "(no CUDA device)")
except Exception as e:
    print("torch: not importable:", e)
for mod in ("triton", "tilelang", "flash_qla", "fla", "flashinfer", "cutlass", "ray"):
    try:
        print(mod, getattr(importlib.import_module(mod), "__version__", "?"))
    except Exception as e:
        print(f"{mod}: not importable: {type(e).__name__}: {e}")
EOF
      COLUMNS=160 python3 -m qlabench backends
    } 2>&1 | tee "$DEST/env$tag.txt"
    ran "$DEST/env$tag.txt" "${PIPESTATUS[0]}"
    ;;
  warmup)
    SUITE=${2:-h200-smoke}
    log="$DEST/warmup-$SUITE$tag.log"
    { date -u; gpu_state; } > "$log"
    # shellcheck disable=SC2086
    ( time limited python3 -m qlabench warmup --suite "$SUITE" --jobs "${JOBS:-16}" ${WARMUP_ARGS:-} ) >> "$log" 2>&1
    ran "$log" $?
    grep -E "points in|real" "$log" | tail -10
    ;;
  sweep)
    need_gpu_libs
    SUITE=${2:-h200-smoke}
    log="$DEST/sweep-$SUITE$tag.log"
    { echo "== before"; gpu_state; } > "$log"
    # shellcheck disable=SC2046
    limited python3 -m qlabench run sweep --suite "$SUITE" --out "$RES" --resume $(max_time) \
      ${GPUS:+--gpus $GPUS} ${SWEEP_ARGS:-} 2>&1 | quiet >> "$log"
    ran "$log" "${PIPESTATUS[0]}"
    { echo "== after"; gpu_state; } >> "$log"
    tail -8 "$log"
    ;;
  tests)
    need_gpu_libs
    log="$DEST/pytest-gpu$tag.log"
    limited python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider -rA 2>&1 | grep -v TileLang > "$log"
    ran "$log" "${PIPESTATUS[0]}"
    grep -E "passed|failed|error" "$log" | tail -4
    ;;
  scaling)
    need_gpu_libs
    SUITE=${2:-h200-smoke-fwd}
    csv="$DEST/scaling.csv" log="$DEST/scaling.log"
    n=$(ngpus)
    echo "suite,executor,gpus,wall_s,rc" > "$csv"
    { date -u; gpu_state; } > "$log"
    runs="local:1"; [ "$n" -gt 1 ] && runs="$runs local:$n"
    if python3 -c 'import ray; print("ray", ray.__version__)' >> "$log" 2>&1; then
      runs="$runs ray:1"; [ "$n" -gt 1 ] && runs="$runs ray:$n"
    else
      echo "ray not importable: local executor only" | tee -a "$log"
    fi
    for r in $runs; do
      ex=${r%:*} g=${r#*:} dst="$RES/scaling/$ex-g$g"
      rm -rf "$dst"
      echo "== $ex on $g GPU(s)" >> "$log"
      t0=$(date +%s.%N)
      limited python3 -m qlabench run sweep --suite "$SUITE" --out "$dst" --executor "$ex" --gpus "$g" 2>&1 \
        | quiet >> "$log"
      rc=${PIPESTATUS[0]}
      t1=$(date +%s.%N)
      ran "$log" "$rc"
      echo "$SUITE,$ex,$g,$(python3 -c "print(f'{$t1-$t0:.1f}')"),$rc" | tee -a "$csv"
    done
    { echo "== after"; gpu_state; } >> "$log"
    ;;
  ncu)
    need_gpu_libs
    SUITE=${2:-h200-ncu}
    log="$DEST/ncu$tag.log"
    { echo "ncu: $(command -v ncu || echo missing)"; ncu --version 2>&1 | tail -1; } > "$log"
    limited python3 -m qlabench run sweep --suite "$SUITE" --out "$RES/ncu" --ncu 2>&1 | quiet >> "$log"
    ran "$log" "${PIPESTATUS[0]}"
    tail -12 "$log"
    ;;
  selfbench)
    need_gpu_libs
    SUITE=${2:-h200-precision}
    WHAT=${WHAT:-all}
    dst="$RES/selfbench-$WHAT$tag"
    log="$DEST/selfbench-$WHAT$tag.log"
    { echo "== before"; gpu_state; } > "$log"
    # shellcheck disable=SC2046,SC2086
    limited python3 -m qlabench_publish selfbench "$WHAT" --suite "$SUITE" --out "$dst" $(max_time) ${SELFBENCH_ARGS:-} 2>&1 \
      | quiet >> "$log"
    ran "$log" "${PIPESTATUS[0]}"
    { echo "== after"; gpu_state; } >> "$log"
    grep -E "^(suite|flashqla) |runs not made|agreement skipped|wrote" "$log" | tail -20
    for f in "$dst"/*.md; do [ -f "$f" ] && cp "$f" "$DEST/$(basename "${f%.md}")$tag.md"; done
    ;;
  study)
    SUITE=${2:-gate-study-h200}
    log="$DEST/study$tag.log"
    # shellcheck disable=SC2086
    limited python3 -m qlabench compare-study --suite "$SUITE" --out "$RES/study" ${STUDY_ARGS:-} 2>&1 | quiet > "$log"
    ran "$log" "${PIPESTATUS[0]}"
    tail -12 "$log"
    ;;
  cp)
    need_gpu_libs
    SUITE=${2:-h200x2-cp}
    LOG="$DEST/cp-run.log"
    T0=$(date +%s)
    {
      echo "== $(date -u) suite=$SUITE max_time=${MAX_TIME_S:-none} timeout=${STEP_TIMEOUT_S:-none}"
      echo "== NVLS: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
      smi
      smi topo -m
      smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,memory.used \
        --format=csv
      python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())
try: print("nccl", torch.cuda.nccl.version())
except Exception as e: print("nccl version unknown:", e)'
    } > "$LOG" 2>&1
    cat "$LOG"
    echo "== sweep (start $(( $(date +%s) - T0 ))s)" | tee -a "$LOG"
    # shellcheck disable=SC2046
    limited python3 -m qlabench run sweep --suite "$SUITE" --out "$RES" $(max_time) >> "$LOG" 2>&1
    RC=$?
    ran "$LOG" "$RC"
    echo "== sweep exit $RC after $(( $(date +%s) - T0 ))s (124: killed at STEP_TIMEOUT_S; rows so far are kept)" | tee -a "$LOG"
    smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw,memory.used --format=csv >> "$LOG" 2>&1

    # Read everything the sweep wrote (compacted or not, an unfinished run's part files included), write it
    # into the output folder as one parquet file, print the table last.
    NAME=$(python3 -c "import sys; from qlabench.core.spec import load_suite; print(load_suite(sys.argv[1]).name)" "$SUITE" \
      2>>"$LOG" || echo "$SUITE")
    timeout 120 python3 - "$RES" "$NAME" "$DEST" >> "$LOG" 2>&1 <<'EOF'
import math, sys
from pathlib import Path

res, suite, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
from qlabench.store.files import read_results, write_table
from qlabench.store.schema import arrow_schema
import pyarrow as pa

folder = Path(res) / suite
try:
    df = read_results([folder])
except Exception as e:
    print(f"no results readable in {folder}: {e}")
    sys.exit(0)
df = df.sort_values("timestamp", kind="stable")
write_table(out / f"{suite}.parquet", pa.Table.from_pandas(df.reset_index(drop=True), schema=arrow_schema(),
                                                          preserve_index=False))  # typed, versioned: readable

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
    echo "== sweep log (last lines)"
    grep -vE "^\s*$|TileLang|Warning|━" "$LOG" | sed -n '/^== sweep (start/,/^== summary/p' | tail -n 20
    echo "== done after $(( $(date +%s) - T0 ))s; in $DEST: $NAME.parquet, cp-summary.txt, cp-run.log"
    echo "== summary (e2e_ms: per-iteration max over ranks, median; rank_ms: each rank's own median)"
    cat "$DEST/cp-summary.txt" 2>/dev/null || echo "no summary: see cp-run.log"
    ;;
  pack)
    # The results folder as it is (an unfinished run's part files too: read_results reads them), and the
    # compile caches, so that a host of the same GPU, driver and packages starts warm:
    #   tar xzf compile-cache.tar.gz -C WORK   (or wherever QLABENCH_CACHE_DIR's parent is)
    tar czf "$DEST/results.tar.gz" -C "$WORK" results || exit 1
    if [ "$QLABENCH_CACHE_DIR" = "$WORK/cache" ]; then
      tar czf "$DEST/compile-cache.tar.gz" -C "$WORK" cache || exit 1
    else
      tar czf "$DEST/compile-cache.tar.gz" -C "$(dirname "$QLABENCH_CACHE_DIR")" "$(basename "$QLABENCH_CACHE_DIR")" || exit 1
    fi
    ls -la "$DEST"
    ;;
esac
exit "$STEP_RC"
