#!/usr/bin/env bash
# Runs every series of claims.tsv into DIR (two at a time, longest first): the ctest fixture of
# the `validation` label, and the first step of docs/validation/frontier.sh.
#   tests/validation/run.sh DIR      (from the repository root)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=${1:?usage: run.sh DIR}
rm -rf "$dir" # scale.csv reuse would keep points of an older binary
mkdir -p "$dir"
run() { validation_series "$dir" "$1" >"$dir/$1.log" 2>&1 || { cat "$dir/$1.log" >&2; return 1; }; }
(run 1t-weak) &
first=$!
run 1t-strong
run 175b-weak
run 175b-strong
run 22b
wait "$first"
