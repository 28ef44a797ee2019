#!/usr/bin/env bash
# Regenerates docs/report-175b.png: the report of the default study (GPT-175B on 1,024
# Frontier GCDs, TP8 x PP16 x DP8), rendered by headless Chromium. About two minutes.
# usage: docs/screenshot.sh [BUILD_DIR]   (after ./build.sh study or ./build.sh test)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/trainsim" run workloads/gpt-175b.yaml --gpus 1024 --tp 8 --pp 16 --report --out "$out"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/profile" \
  --window-size=1100,3000 --screenshot="$PWD/docs/report-175b.png" "file://$out/report.html" \
  >/dev/null 2>&1
echo "wrote docs/report-175b.png"
