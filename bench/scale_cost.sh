#!/usr/bin/env bash
# bench/scale_cost.sh: what a simulation costs as the machine grows, along a weak-scaling
# series (data parallelism grows, the global batch with it, so events grow with the GCDs):
#   bench/scale_cost.sh 22b    GPT-22B (TP2 PP4, micro-batch 1), 64 -> 75,264 GCDs
#   bench/scale_cost.sh 1t     GPT-1T (TP8 PP64), 512 -> 75,264 GCDs (the whole of Frontier)
#   bench/scale_cost.sh order  GPT-1T on all 75,264 GCDs with 64 microbatches per pipeline, in
#                              both rank orders: replicas inside dragonfly groups (tp-pp-dp) or
#                              the paper's (tp-dp-pp), every pipeline hop between groups: what
#                              the coupling costs the solver (docs/performance.md; minutes with node
#                              play, about 40 min with EVERY_RANK=1)
# FIDELITY=F picks the fidelity (default: trainsim's); EVERY_RANK=1 plays every rank (no node
# play: sim/engine/engine.h), the cost before it. The largest points take minutes (1T, node
# play, 22B with a hand-over) to an hour or more (EVERY_RANK=1 beyond 12,288 GCDs); compare ratios
# measured in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
fid=()
[ -n "${FIDELITY:-}" ] && fid=(--fidelity "$FIDELITY")
[ "${EVERY_RANK:-0}" = 1 ] && fid+=(--play-every-rank)
case ${1:-} in
  22b) wl=workloads/gpt-22b.yaml base=64 batch=1024
       points=(64 512 3072 12288 24576 49152 75264) ;;
  1t) wl=workloads/gpt-1t.yaml base=512 batch=512
      points=(512 1536 3072 6144 12288 24576 49152 75264) ;;
  order) bench_header
         for o in tp-pp-dp tp-dp-pp; do
           bench_row "gpt-1t 75264 GCDs, m 64, $o" workloads/gpt-1t.yaml --gpus 75264 \
             --global-batch-size 9408 --force --set placement.order=$o "${fid[@]}"
         done
         exit 0 ;;
  *) echo "usage: bench/scale_cost.sh 22b|1t|order" >&2; exit 2 ;;
esac
bench_header
for n in "${points[@]}"; do
  bench_row "$(basename "$wl" .yaml) weak, $n GCDs" "$wl" --gpus "$n" \
    --global-batch-size $((batch * n / base)) --force "${fid[@]}"
done
