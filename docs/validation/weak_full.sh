#!/usr/bin/env bash
# Weak scaling to the whole of Frontier: GPT-22B from 64 and GPT-1T from 512 GCDs to 75,264
# (bench/scale_cost.sh: one `trainsim run` per point at the default fidelity, with its wall
# time and memory), kept in docs/validation/data/weak-full-MODEL.txt, which
# docs/validation/frontier.sh tables in its section 8. The largest points take an hour or more
# on one core, so the page reads the kept tables instead of running them.
#   docs/validation/weak_full.sh 22b|1t      (after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
model=${1:?usage: docs/validation/weak_full.sh 22b|1t}
out=docs/validation/data/weak-full-$model.txt
{
  echo "# bench/scale_cost.sh $model, $(date -u +%Y-%m-%d) UTC, trainsim at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- sim workloads cli platforms || echo ' (modified)')"
  bash bench/scale_cost.sh "$model"
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "weak_full.sh: wrote $out" >&2
