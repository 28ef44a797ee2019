#!/usr/bin/env bash
# The sweep pool's speed-up: one 96-point what-if study (GPT-22B on Frontier: GPUs x tensor
# parallelism x micro-batch x global-link bandwidth) run at --jobs 1 and at --jobs N (default:
# the machine's cores), from scratch each time, then once more to show the reuse of finished
# points; prints the wall times and checks that both runs wrote the same sweep.csv.
#   bench/sweep.sh [TRAINSIM] [N]          (from the repository root)
set -euo pipefail
trainsim=${1:-build/trainsim}
jobs=${2:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/spec.yaml" <<'SPEC'
name: gpt-22b what-if
workload: workloads/gpt-22b.yaml
grid:
  gpus: [64, 128, 256, 512]
  tp: [1, 2, 4, 8]
  micro_batch_size: [1, 2]
  network.global_link.bandwidth: [12.5GBps, 25GBps, 50GBps]
SPEC
wall() { # COMMAND...: seconds it took
  local t0
  t0=$(date +%s.%N)
  "$@" >/dev/null
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}
one=$(wall "$trainsim" sweep "$work/spec.yaml" --jobs 1 --quiet --out "$work/j1")
many=$(wall "$trainsim" sweep "$work/spec.yaml" --jobs "$jobs" --quiet --out "$work/jn")
again=$(wall "$trainsim" sweep "$work/spec.yaml" --jobs "$jobs" --quiet --out "$work/jn")
cmp -s "$work/j1/sweep.csv" "$work/jn/sweep.csv" || { echo "sweep.sh: the CSVs differ" >&2; exit 1; }
points=$(($(wc -l <"$work/j1/sweep.csv") - 1))
ok=$(grep -c ',ok,' "$work/j1/sweep.csv" || true)
echo "sweep.sh: $points points, $ok simulated, $((points - ok)) failed (sweep.csv says why), on $(nproc) cores"
echo "  --jobs 1:  $one s"
echo "  --jobs $jobs:  $many s  (speed-up $(awk -v a="$one" -v b="$many" 'BEGIN { printf "%.2f", a / b }'))"
echo "  rerun:     $again s  (every point reused)"
echo "  sweep.csv identical at --jobs 1 and --jobs $jobs"
