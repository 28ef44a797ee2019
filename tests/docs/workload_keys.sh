#!/usr/bin/env bash
# Every workload key documented in workloads/README.md is accepted by the loader (it may be
# refused for its value, never as an unknown key), and every key the loader accepts is
# documented there.
#   tests/docs/workload_keys.sh TRAINSIM      (from the repository root)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=${1:?usage: workload_keys.sh TRAINSIM}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
documented=$(grep -o '^| `[^|]*|' workloads/README.md | grep -o '`[a-z0-9_.]*`' | tr -d '`')
[ "$(wc -l <<<"$documented")" -ge 20 ] || { echo "workload_keys.sh: too few keys read" >&2; exit 1; }
for key in $documented; do
  section=${key%%.*} name=${key#*.}
  file=$work/w.yaml
  if [ "$section" = "$key" ]; then # a top-level key
    { grep -v "^$key:" tests/data/good/tiny.yaml; echo "$key: zzz"; } >"$file"
  elif grep -q "^$section: {" tests/data/good/tiny.yaml; then
    sed "s/^$section: {/$section: {$name: zzz, /" tests/data/good/tiny.yaml >"$file"
  else
    { cat tests/data/good/tiny.yaml; echo "$section: {$name: zzz}"; } >"$file"
  fi
  out=$("$bin" memory "$file" 2>&1 || true)
  if grep -q "unknown key" <<<"$out"; then
    echo "documented but refused as unknown: $key ($(head -1 <<<"$out"))" >&2
    failures=$((failures + 1))
  fi
done
# The loader's lists of keys, section by section (workloads/workload.c).
accepted() { accepted_keys workloads/workload.c "$1" "$2"; } # ARRAY PREFIX
for key in $(accepted top_keys "") $(accepted model_keys model.) $(accepted training_keys training.) \
  $(accepted parallel_keys parallelism.) $(accepted placement_keys placement.) \
  $(accepted stack_keys stack.) $(accepted checkpoint_keys checkpoint.); do
  case $key in model | training | parallelism | placement | stack | checkpoint) continue ;; esac
  if ! grep -qx "$key" <<<"$documented"; then
    echo "accepted but not documented in workloads/README.md: $key" >&2
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] && echo "workload_keys.sh: $(wc -l <<<"$documented") documented keys, all accepted and all documented"
exit $((failures > 0))
