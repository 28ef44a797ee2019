# Shared by docs/validation/h200.sh and h100.sh (sourced; they set TRAINSIM and work): the
# workloads of bench/device/llama_steps.py's and allocator.py's models, and the tables that
# hold their measurements against trainsim on a platform of one GPU.

# A Llama-style workload as llama_steps.py and allocator.py train it, from the caller's
# name layers h heads kv ffn seq mbs micro rec.
llama_workload() {
  cat <<YAML
name: $name
model: {num_layers: $layers, hidden_size: $h, num_attention_heads: $heads, num_query_groups: $kv, ffn_hidden_size: $ffn, seq_length: $seq, vocab_size: 128256, swiglu: true, normalization: RMSNorm, position_embedding_type: rope, untie_embeddings_and_output_weights: true, add_bias_linear: false, attention_dropout: 0, hidden_dropout: 0}
training: {global_batch_size: $((mbs * micro)), micro_batch_size: $mbs, precision: bf16, optimizer: adam, autocast: false}
parallelism: {tensor: 1, pipeline: 1, data: 1, recompute: $rec}
stack: {framework: pytorch}
YAML
}

# gpt.py's GPT as allocator.py trains it (flash attention forced), from the same variables.
gpt_workload() {
  cat <<YAML
name: $name
model: {num_layers: $layers, hidden_size: $h, num_attention_heads: $heads, seq_length: $seq, vocab_size: 50304, attention_dropout: 0}
training: {global_batch_size: $((mbs * micro)), micro_batch_size: $mbs, precision: bf16, optimizer: adam, autocast: false}
parallelism: {tensor: 1, pipeline: 1, data: 1, recompute: $rec}
stack: {framework: pytorch, attention: flash2}
YAML
}

# The rows of the Llama steps table: llama_steps.py's CSV $2 against `trainsim run` on $1.
llama_table() {
  echo "| model | seq | micro-batch x count | recompute | measured step | predicted | error | measured peak | predicted | error |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  grep -v '^#' "$2" | tail -n +2 | while IFS=, read -r name layers h heads kv ffn seq mbs micro rec _ _ step_s _ _ peak; do
    wl=$work/llama-$name-$seq-$mbs-$micro-$rec.yaml
    llama_workload >"$wl"
    "$TRAINSIM" run "$wl" --platform "$1" --gpus 1 --quiet --out "$wl.out" >/dev/null
    p=$(sed -n 's/.*"iteration_s": \([0-9.e+-]*\).*/\1/p' "$wl.out/result.json" | head -1)
    pm=$(sed -n 's/.*"peak_bytes": \([0-9.e+-]*\).*/\1/p' "$wl.out/result.json" | head -1)
    awk -v n="$name" -v s="$seq" -v b="$mbs x $micro" -v r="$rec" -v m="$step_s" -v p="$p" \
      -v mm="$peak" -v pm="$pm" 'BEGIN { printf "| %s | %s | %s | %s | %.1f ms | %.1f ms | %+.1f%% | %.2f GiB | %.2f GiB | %+.1f%% |\n",
        n, s, b, r, 1e3 * m, 1e3 * p, 100 * (p / m - 1), mm / 2^30, pm / 2^30, 100 * (pm / mm - 1) }'
  done
}

# A workload on stdin as a plain PyTorch user describes amp_steps.py's runs: `stack: {framework:
# pytorch}` and no recipe named (autocast is then trainsim's default).
as_amp() {
  sed 's/, autocast: false}/}/; s/^stack: .*/stack: {framework: pytorch}/'
}

# The table of allocator.py's ladders on platform $1: trainsim's peak and its verdicts (`trainsim
# memory`) under the default allocator, replayed, and with expandable segments, beside what the
# default allocator ($2) and expandable segments ($3) did; with $4 = amp, allocator.py --amp's
# ladders (amp_steps.py's recipe, described as as_amp does).
edge_table() {
  echo "| model | seq | micro-batch | recompute | predicted peak | trainsim, default allocator | measured, default allocator | split at the end | trainsim, expandable segments | measured, expandable segments |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  grep -v '^#' "$3" | awk -F, '$1 == "ladder"' | while IFS=, read -r _ kind name layers h heads kv ffn seq mbs micro rec status _ _ _ _ _ apeak _ resv split _ _ req; do
    wl=$work/edge${4:-}-$name-$seq-$mbs-$rec.yaml
    if [ "$kind" = gpt ]; then gpt_workload; else llama_workload; fi |
      if [ "${4:-}" = amp ]; then as_amp; else cat; fi >"$wl"
    sed 's/^stack: {framework: pytorch/stack: {framework: pytorch, allocator: expandable/' "$wl" >"$wl.exp.yaml"
    "$TRAINSIM" memory "$wl" --platform "$1" --gpus 1 >"$wl.mem"
    "$TRAINSIM" memory "$wl.exp.yaml" --platform "$1" --gpus 1 >"$wl.exp.mem"
    pred=$(sed -n 's/^peak: \([0-9.]*\) GiB.*/\1/p' "$wl.mem")
    asked=$(sed -n 's/.*finds no free block of \([0-9.]*\) GiB.*/\1/p' "$wl.mem")
    if [ -n "$asked" ]; then verdict="does not fit ($asked GiB found no block)"
    elif grep -q 'DOES NOT FIT$' "$wl.mem"; then verdict="does not fit"
    elif grep -q 'lies within its largest allocation' "$wl.mem"; then verdict="AT RISK"
    else verdict=fits; fi
    vexp=$(grep -q 'DOES NOT FIT$' "$wl.exp.mem" && echo "does not fit" || echo fits)
    default=$(grep -v '^#' "$2" | awk -F, -v n="$name" -v s="$seq" -v b="$mbs" -v r="$rec" '$3 == n && $9 == s && $10 == b && $12 == r {
      if ($13 == "ok") printf "ran, %.2f GiB|%.2f GiB", $19 / 2^30, $22 / 2^30; else printf "out of memory (%s asked)|%.2f GiB", $25, $22 / 2^30 }')
    [ -n "$default" ] || default="not run (a smaller one failed)|-"
    exp=$([ "$status" = ok ] && awk -v a="$apeak" 'BEGIN { printf "ran, %.2f GiB", a / 2^30 }' || echo "out of memory ($req asked)")
    echo "| $name | $seq | $mbs | $rec | $pred GiB | $verdict | ${default%|*} | ${default#*|} | $vexp | $exp |"
  done | tee "$work/edge.md"
}

# The last edge_table's verdicts against what ran: under the default allocator (column 7 against
# 8, rows it ran) and with expandable segments (10 against 11). "fits" is right where the run
# ran, "does not fit" where it failed; AT RISK (no replay) is counted wrong wherever it stands.
edge_verdicts() {
  awk -F'|' -v pred="$1" -v meas="$(($1 + 1))" '$meas ~ /ran|out of memory/ { n++
      right += ($pred !~ /AT RISK/) && (($pred ~ /does not fit/) == ($meas ~ /out of memory/)) }
    END { printf "%d of %d", right, n }' "$work/edge.md"
}

# How far the last edge_table's predicted peaks lie from the allocated peaks of the runs that
# ran with expandable segments: "0.05-0.14% low".
edge_error() {
  awk -F'|' '$11 ~ /ran/ { split($11, r, " "); e = 100 * ($6 / r[2] - 1); a = e < 0 ? -e : e
      if (n++ == 0 || a < lo) lo = a; if (a > hi) hi = a; neg += e < 0 }
    END { printf "%.2f-%.2f%% %s", lo, hi, neg == n ? "low" : neg == 0 ? "high" : "off" }' "$work/edge.md"
}

# The table of bench/device/amp_steps.py's CSV $2 against `trainsim run` on platform $1: the models
# as a plain PyTorch user describes them (`stack: {framework: pytorch}`, no recipe named: autocast
# is then trainsim's default), out-of-memory rows against trainsim's verdict.
amp_table() {
  echo "| model | seq | micro-batch x count | recompute | measured step | predicted | error | measured peak | predicted | error |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  grep -v '^#' "$2" | tail -n +2 | while IFS=, read -r kind name layers h heads kv ffn seq mbs micro rec _ status step_s _ _ peak; do
    wl=$work/amp-$name-$seq-$mbs-$micro-$rec.yaml
    if [ "$kind" = gpt ]; then gpt_workload; else llama_workload; fi | as_amp >"$wl"
    "$TRAINSIM" memory "$wl" --platform "$1" --gpus 1 >"$wl.mem"
    pm=$(sed -n 's/^peak: \([0-9.]*\) GiB.*/\1/p' "$wl.mem")
    if [ "$status" != ok ]; then
      verdict=$(grep -q 'DOES NOT FIT' "$wl.mem" && echo "does not fit" || echo "fits (wrong)")
      echo "| $name | $seq | $mbs x $micro | $rec | out of memory | $verdict | - | - | $pm GiB | - |"
      continue
    fi
    "$TRAINSIM" run "$wl" --platform "$1" --gpus 1 --quiet --out "$wl.out" >/dev/null
    p=$(sed -n 's/.*"iteration_s": \([0-9.e+-]*\).*/\1/p' "$wl.out/result.json" | head -1)
    awk -v n="$name" -v s="$seq" -v b="$mbs x $micro" -v r="$rec" -v m="$step_s" -v p="$p" \
      -v mm="$peak" -v pm="$pm" 'BEGIN { printf "| %s | %s | %s | %s | %.1f ms | %.1f ms | %+.1f%% | %.2f GiB | %.2f GiB | %+.1f%% |\n",
        n, s, b, r, 1e3 * m, 1e3 * p, 100 * (p / m - 1), mm / 2^30, pm, 100 * (pm * 2^30 / mm - 1) }'
  done | tee "$work/amp.md"
}

# The last amp_table's summary: the mean absolute step and peak errors over the runs that ran, and
# the out-of-memory verdicts right.
amp_summary() {
  awk -F'|' '$6 ~ / ms/ { n++; e = $8 + 0; m += e < 0 ? -e : e; if ((e < 0 ? -e : e) > big) big = e < 0 ? -e : e
      p = $11 + 0; pm += p < 0 ? -p : p; if ((p < 0 ? -p : p) > pbig) pbig = p < 0 ? -p : p }
    $6 ~ /out of memory/ { o++; ok += $7 ~ /does not fit/ }
    END { printf "Step time: %d runs, mean absolute error %.1f%% (largest %.1f%%); peak memory mean %.1f%% (largest %.1f%%); out-of-memory verdicts right: %d of %d.\n", n, m / n, big, pm / n, pbig, ok, o }' "$work/amp.md"
}
