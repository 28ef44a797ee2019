#!/usr/bin/env bash
# bench/platform_build.sh: cost of building the SimGrid platform for a job on Frontier, from a
# 384-node job (3,072 GCDs) to the whole machine (9,408 nodes, 75,264 GCDs). Each case runs one
# 8-byte all-reduce over all the job's GCDs (one ring, so the build, the actors' start and one
# collective are all there is), printing wall time and peak memory; a case that fails prints
# its first error line instead.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/trainsim}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
[ -x "$BIN" ] || { echo "bench/platform_build.sh: build first (./build.sh test)" >&2; exit 1; }
printf '%-8s %-8s %9s %9s  %s\n' nodes GCDs wall_s rss_MiB note
sizes=(3072 12288 24576 49152 75264)
for i in "${!sizes[@]}"; do
  gcds=${sizes[$i]}
  echo "bench/platform_build.sh: step $((i + 1)) of ${#sizes[@]}: $gcds GCDs ($(date +%H:%M:%S))" >&2
  out=$(mktemp)
  if /usr/bin/time -f '%e %M' -o "$out.time" "$BIN" bench allreduce --gpus "$gcds" \
    --min-bytes 8 --max-bytes 8 --quiet >/dev/null 2>"$out"; then
    read -r wall rss <"$out.time"
    printf '%-8d %-8d %9.1f %9.0f\n' $((gcds / 8)) "$gcds" "$wall" $((rss / 1024))
  else
    printf '%-8d %-8d %9s %9s  %s\n' $((gcds / 8)) "$gcds" - - "$(head -1 "$out")"
  fi
  rm -f "$out" "$out.time"
done
