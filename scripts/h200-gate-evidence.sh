#!/usr/bin/env bash
# GPU evidence for the between-run gate (docs/GATING.md), in one script. Its steps ran on 2 x H200 on
# 2026-11-30, split over several jobs (results/h200-gate/README.md has the exact commands). Run on one
# H200 host, from a qlabench checkout, with the current GPU stack importable (pip install -e '.[gpu]', or
# the offline bundle of scripts/offline-host.sh on PYTHONPATH):
#
#   bash scripts/h200-gate-evidence.sh OUT OLD_SITE
#
# OUT       where everything goes (made if missing); commit OUT/*.md and the parquet files it names.
# OLD_SITE  the published stack as a site folder (flash-qla 0.1.2, tilelang 0.1.9, fla-core 0.5.1):
#             pip install --no-deps --target /tmp/old-site flash-qla==0.1.2 tilelang==0.1.9 \
#               apache-tvm-ffi==0.1.9 fla-core==0.5.1                (then OLD_SITE=/tmp/old-site)
#
# 1. A/A across separate processes AND a fresh compile cache (kernels recompiled, FLA re-autotuned):
#    144 points (h200-smoke-fwd 30 + flashqla-study-stack 114), 3 replicates a side, each side with its own
#    empty cache directory. Goal: 0 `slower`.
# 2. Power: the synthetic backend slowed by +5% and +10% (compare-study, 3 replicates, confirmation by
#    interleaved A/B), at a 5% threshold (the default then; 3% now) and at 3% (a +5% change sits on a 5% threshold: to
#    catch it, gate at 3%). Goal: +5% on >= 95% of points at 3%, +10% on all.
# 3. Same-job A/B of two library stacks, 5 rounds A B A B ..., published (A) against current (B), on the
#    published table's forward points at TP8 and TP2. The study found flash-qla 0.1.3 up to 1.7x slower
#    than 0.1.2 there (0.395 vs 0.326 ms at 2/8 1x32768; 1.255 vs 0.910 ms at 8/32; docs/FLASHQLA-STUDY.md).
set -euo pipefail
out=${1:?usage: h200-gate-evidence.sh OUT OLD_SITE}
old=${2:?usage: h200-gate-evidence.sh OUT OLD_SITE}
mkdir -p "$out"
log() { echo "== $(date -u +%FT%TZ) $*" | tee -a "$out/commands.txt"; }

for s in h200-smoke-fwd flashqla-study-stack; do
  for side in a b; do
    log "qlabench run sweep --suite $s --replicates 3 --cache-dir $out/cache-$side --out $out/aa-$side"
    qlabench run sweep --suite "$s" --replicates 3 --cache-dir "$out/cache-$side" --out "$out/aa-$side"
  done
  log "qlabench compare $out/aa-a/$s $out/aa-b/$s --threshold 0.05 --format markdown"
  qlabench compare "$out/aa-a/$s" "$out/aa-b/$s" --threshold 0.05 --format markdown --output "$out/aa-$s.md" --all || true
done

log "qlabench compare-study --suite gate-study-h200 --slowdowns 1.05,1.10 --threshold 0.05 --replicates 3 --out $out/study"
qlabench compare-study --suite gate-study-h200 --slowdowns 1.05,1.10 --threshold 0.05 --replicates 3 --out "$out/study" \
  > "$out/study.md"
log "qlabench compare-study --suite gate-study-h200 --slowdowns 1.05 --threshold 0.03 --replicates 3 --out $out/study-t3"
qlabench compare-study --suite gate-study-h200 --slowdowns 1.05 --threshold 0.03 --replicates 3 \
  --out "$out/study-t3" > "$out/study-t3.md"

log "qlabench ab $old current --suite flashqla-study-stack --rounds 5 --out $out/ab"
qlabench ab "$old" current --suite flashqla-study-stack --rounds 5 --out "$out/ab" --format markdown \
  --top 80 --output "$out/ab.md" || true
log "done"
