#!/usr/bin/env bash
# report.html in headless Chromium: a run's, a scaling study's, a search's and a sweep's page parse as
# strict XML (loaded as XHTML, any markup error shows as a <parsererror>), load as HTML with no
# console error, fetch nothing, hold their figures, and render to a non-empty screenshot.
# usage: render.sh TRAINSIM OUT_DIR (run from the source tree). Exit 77 = skipped.
set -euo pipefail
trainsim=$1
out=$2
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "SKIPPED: Chromium is not installed (apt-get install chromium); reports not rendered"
  exit 77
fi
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
rm -rf "$out"
mkdir -p "$out"
# A profile of its own: parallel tests must not share one.
browse() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$out/profile" --enable-logging=stderr --v=0 "$@"
}

"$trainsim" run tests/data/good/tiny.yaml --gpus 32 --report --out "$out/run" >/dev/null
"$trainsim" scale tests/data/good/tiny.yaml --gpus 8,16,32 --strong --report \
  --out "$out/scale" >/dev/null
"$trainsim" search tests/data/good/tiny.yaml --gpus 16 --top 1 --report --out "$out/search" \
  >/dev/null
printf 'workload: tests/data/good/tiny.yaml\nfixed: {gpus: 16}\ngrid: {tp: [1, 2], micro_batch_size: [1, 2]}\n' \
  >"$out/sweep.yaml"
"$trainsim" sweep "$out/sweep.yaml" --jobs 2 --report --quiet --out "$out/sweep" >/dev/null

check_page() { # page, number of figures
  local page=$1 figures=$2 dir
  dir=$(dirname "$page")
  [ -s "$page" ] || fail "$page was not written"
  if grep -n -E 'src=|href=|url\(|@import' "$page"; then
    fail "$page refers to something outside itself"
  fi
  cp "$page" "$dir/strict.xhtml"
  browse --dump-dom "file://$dir/strict.xhtml" >"$dir/strict.dom" 2>"$dir/strict.log"
  if grep -q parsererror "$dir/strict.dom"; then
    grep -o 'error on line[^<]*' "$dir/strict.dom" >&2 || true
    fail "$page is not well-formed XML"
  fi
  browse --dump-dom "file://$page" >"$dir/page.dom" 2>"$dir/page.log"
  if grep CONSOLE "$dir/page.log"; then
    fail "$page logs to the console"
  fi
  local n
  n=$(grep -o '<svg' "$dir/page.dom" | wc -l)
  [ "$n" -eq "$figures" ] || fail "$page shows $n figures, expected $figures"
  grep -q '<h2>Definitions</h2>' "$dir/page.dom" || fail "$page has no definitions"
  echo "ok: $page ($n figures)"
}

check_page "$out/run/report.html" 3 # time breakdown, pipeline Gantt, memory
check_page "$out/scale/report.html" 2 # scaling curve, time breakdown per point
check_page "$out/search/report.html" 1 # estimated time breakdown per candidate
check_page "$out/sweep/report.html" 2 # tokens/s per GPU along each axis

browse --window-size=1100,2400 --screenshot="$out/run/report.png" \
  "file://$out/run/report.html" >/dev/null 2>&1
[ "$(head -c 8 "$out/run/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  fail "no PNG screenshot"
echo "ok: screenshot $out/run/report.png ($(stat -c %s "$out/run/report.png") bytes)"
