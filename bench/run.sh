#!/usr/bin/env bash
# bench/run.sh: wall time, peak memory, simulated events and the predicted iteration time of
# the reference runs. Run after building (./build.sh test or cmake --build build):
#   bench/run.sh            22B / 64, 175B / 1,024 and 1T / 3,072 GCDs on Frontier
#   bench/run.sh quick      22B / 64 only
# Timings on shared machines vary; compare ratios measured in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/trainsim}
[ -x /usr/bin/time ] || { echo "bench/run.sh needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
[ -x "$BIN" ] || { echo "bench/run.sh: build first (./build.sh test)" >&2; exit 1; }
cases=("workloads/gpt-22b.yaml --gpus 64 --tp 2 --pp 4 --micro-batch-size 2")
if [ "${1:-}" != "quick" ]; then
  cases+=("workloads/gpt-175b.yaml --gpus 1024 --tp 8 --pp 16"
          "workloads/gpt-1t.yaml --gpus 3072 --tp 8 --pp 64")
fi
out=$(mktemp -d)
printf '%-58s %9s %9s %11s %11s %10s %12s\n' case wall_s rss_MiB events transfers events/s iteration_s
for c in "${cases[@]}"; do
  /usr/bin/time -f '%e %M' -o "$out/time" "$BIN" run $c --out "$out" >/dev/null
  read -r wall rss <"$out/time"
  events=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$out/result.json")
  transfers=$(sed -n 's/.*"transfers": \([0-9]*\).*/\1/p' "$out/result.json")
  iter=$(sed -n 's/.*"iteration_s": \([0-9.e+-]*\).*/\1/p' "$out/result.json")
  printf '%-58s %9.1f %9.0f %11d %11d %10.0f %12.4f\n' "$c" "$wall" "$((rss / 1024))" "$events" \
    "$transfers" "$(awk -v e="$events" -v w="$wall" 'BEGIN { print (w > 0 ? e / w : 0) }')" "$iter"
done
rm -rf "$out"
