# bench/lib.sh: one simulated run measured (sourced by bench/run.sh and bench/scale_cost.sh).
# bench_header prints the column names; bench_row LABEL ARGS... runs `trainsim run ARGS...`
# under /usr/bin/time and prints wall time, peak RSS, the events it played (and how many of
# them merged into steps), SimGrid transfers, the ranks that played (fewer than the GCDs
# under node play: sim/engine/engine.h), events per second and the simulated iteration.
# bench_step LABEL says on stderr which step runs (stdout keeps the table alone).
BIN=${BIN:-build/trainsim}
[ -x /usr/bin/time ] || { echo "bench: needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
[ -x "$BIN" ] || { echo "bench: build first (./build.sh test)" >&2; exit 1; }

bench_header() {
  printf '%-44s %9s %8s %13s %13s %11s %7s %10s %12s\n' case wall_s rss_MiB events merged \
    transfers actors events/s iteration_s
}

# The value of a numeric key of result.json (each key appears once).
bench_json() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" "$2" | head -1; }

BENCH_STEP=0
bench_step() {
  BENCH_STEP=$((BENCH_STEP + 1))
  echo "bench: step $BENCH_STEP: $1 ($(date +%H:%M:%S))" >&2
}

bench_row() {
  local label=$1 out
  shift
  bench_step "$label"
  out=$(mktemp -d)
  if ! /usr/bin/time -f '%e %M' -o "$out/time" "$BIN" run "$@" --quiet --out "$out" \
    >/dev/null 2>"$out/err"; then
    printf '%-44s failed: %s\n' "$label" "$(grep -v '^Command' "$out/err" | head -1)"
    rm -rf "$out"
    return 0
  fi
  local wall rss events merged transfers actors iter
  read -r wall rss <"$out/time"
  events=$(bench_json events "$out/result.json")
  merged=$(bench_json merged_events "$out/result.json")
  transfers=$(bench_json transfers "$out/result.json")
  actors=$(bench_json played_ranks "$out/result.json")
  iter=$(bench_json iteration_s "$out/result.json")
  printf '%-44s %9.1f %8d %13d %13d %11d %7d %10.0f %12.4f\n' "$label" "$wall" $((rss / 1024)) \
    "$events" "$merged" "$transfers" "$actors" \
    "$(awk -v e="$events" -v w="$wall" 'BEGIN { print (w > 0 ? e / w : 0) }')" "$iter"
  rm -rf "$out"
}
