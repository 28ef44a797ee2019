#!/usr/bin/env bash
# One claim of claims.tsv against its band, from the runs run.sh left in DIR.
#   tests/validation/check.sh DIR CLAIM
# Exit 0: in band; 77 (ctest: skipped): a known gap, at its recorded figure; 1: otherwise.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=${1:?usage: check.sh DIR CLAIM} claim=${2:?usage: check.sh DIR CLAIM}
claim_load "$claim"
v=$(claim_measure "$dir") || { echo "$claim: no result in $dir/$CLAIM_SERIES/scale.csv" >&2; exit 1; }
verdict=$(claim_verdict "$v")
echo "$claim: trainsim $v%, paper $CLAIM_PAPER%, band $(claim_band_text): $verdict"
case $verdict in
  "in band") exit 0 ;;
  "known gap")
    echo "(docs/validation/frontier.md explains the gap)"
    exit 77
    ;;
  *) exit 1 ;;
esac
