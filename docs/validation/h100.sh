#!/usr/bin/env bash
# Regenerates docs/validation/h100.md: whole training steps measured on one NVIDIA H100 80GB
# (bench/device/steps.py and sdpa_steps.py -> bench/device/h100_steps.csv, h100_sdpa_steps.csv)
# against `trainsim run` on platforms/dgx-h100.yaml, whose kernel table
# (platforms/kernels/h100.yaml) was measured apart on the same GPU by
# bench/device/kernel_table.py; and against the same platform with the table that
# platforms/kernels/derive.py transfers from the H200's (what trainsim used before the H100 was
# measured), to show how far that cross-GPU transfer errs. Validation only: no parameter is set.
#   docs/validation/h100.sh            (after a build; a few seconds)
set -euo pipefail
cd "$(dirname "$0")/../.."
TRAINSIM=${TRAINSIM:-build/trainsim}
[ -x "$TRAINSIM" ] || { echo "h100.sh: $TRAINSIM not found: build first" >&2; exit 2; }
REPLAY=${REPLAY:-$(dirname "$TRAINSIM")/alloc_trace_replay}
[ -x "$REPLAY" ] || { echo "h100.sh: $REPLAY not found: build first" >&2; exit 2; }
flash=bench/device/h100_steps.csv
sdpa=bench/device/h100_sdpa_steps.csv
autocast=bench/device/h100_autocast_kernels.csv
llama=bench/device/h100_llama_steps.csv
hf=bench/device/h100_hf_gpt2_steps.csv
amp=bench/device/h100_amp_steps.csv
hf_again=bench/device/h100_hf_gpt2_ablate.csv
alloc=bench/device/h100_allocator.csv
alloc_exp=bench/device/h100_allocator_expandable.csv
trace=bench/device/h100_alloc_trace.csv.gz
alloc_amp=bench/device/h100_allocator_amp.csv
alloc_amp_exp=bench/device/h100_allocator_amp_expandable.csv
alloc_amp_fresh=bench/device/h100_allocator_amp_fresh.csv
trace_amp=bench/device/h100_alloc_trace_amp.csv.gz
trace_fresh=bench/device/h100_alloc_trace_fresh.csv.gz
drop0=bench/device/h100_sdpa_dropout0.csv
drop1=bench/device/h100_sdpa_dropout0.1.csv
channels=bench/device/h100_channel_occupancy.csv
page=docs/validation/h100.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. docs/validation/steps_lib.sh
python3 platforms/kernels/derive.py h100-from-h200 "$work/h100-derived.yaml"
sed "s#^\(  kernel_table:\).*#\1 $work/h100-derived.yaml#" platforms/dgx-h100.yaml >"$work/derived.yaml"

# The table of an allocator trace ($1, bench/device/alloc_trace.py) replayed by alloc_trace_replay:
# each run's outcome and reserved peak, measured and replayed.
trace_table() {
  echo "| model | micro-batch | recompute | measured | replayed | measured reserved peak | replayed | same outcome |"
  echo "|---|---|---|---|---|---|---|---|"
  zcat "$1" | "$REPLAY" | awk -F, 'NR > 1 {
      m = $12 == "oom" ? sprintf("out of memory (%.2f GiB asked)", $13 / 2^30) : "ran"
      r = $16 == "oom" ? sprintf("out of memory (%.2f GiB asked)", $17 / 2^30) : "ran"
      printf "| %s | %s | %s | %s | %s | %.2f GiB | %.2f GiB | %s |\n", $2, $9, $11 == "True" ? "full" : "none", m, r, $14 / 2^30, $18 / 2^30, $19 == "same" ? "yes" : "no" }' | tee "$work/trace.md"
}

# The last trace_table's runs with the same outcome: "14 of 17".
trace_same() {
  echo "$(grep -c '| yes |$' "$work/trace.md") of $(grep -c '^| ' "$work/trace.md")"
}

# A CSV ($1) with the commas inside its quoted fields turned to semicolons, the quotes dropped.
unquoted() {
  awk '{ out = ""; q = 0
      for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
        if (c == "\"") { q = !q; continue }
        out = out (c == "," && q ? ";" : c) }
      print out }' "$1"
}

# Prints "iteration peak verdict" of the workload $1 on platform $2 (one GPU).
# Of a markdown table's rows ($1) whose column $2 matches $3: their count, mean and largest
# absolute step error (column $4, in %) and largest absolute peak error (column $5).
step_errors() {
  printf '%s' "$1" | awk -F'|' -v c="$2" -v re="$3" -v e="$4" -v p="$5" '$c ~ re {
      x = $e; gsub(/[%+ ]/, "", x); x += 0; a = x < 0 ? -x : x; s += a; if (a > m) m = a; n++
      y = $p; gsub(/[%+ ]/, "", y); y += 0; b = y < 0 ? -y : y; if (b > mp) mp = b }
    END { printf "%d %.4f %.4f %.4f\n", n, s / n, m, mp }'
}

predict() {
  local verdict=fits
  if ! "$TRAINSIM" run "$1" --platform "$2" --gpus 1 --quiet --out "$work/out" \
    >/dev/null 2>"$work/err.txt"; then
    grep -q 'out of memory' "$work/err.txt" || { cat "$work/err.txt" >&2; exit 1; }
    verdict=oom
    "$TRAINSIM" run "$1" --platform "$2" --gpus 1 --quiet --out "$work/out" --ignore-memory >/dev/null
  fi
  echo "$(sed -n 's/.*"iteration_s": \([0-9.e+-]*\).*/\1/p' "$work/out/result.json" | head -1)" \
    "$(sed -n 's/.*"peak_bytes": \([0-9.e+-]*\).*/\1/p' "$work/out/result.json" | head -1)" "$verdict"
}

rows=$work/rows.tsv
: >"$rows"
n=0
for set in flash sdpa; do
  csv=${!set}
  while IFS=, read -r name layers hidden heads seq mbs micro recompute _ status step_s _ _ peak; do
    n=$((n + 1))
    echo "h100.sh: case $n ($set): $name seq $seq micro-batch $mbs x $micro, recompute $recompute" >&2
    wl=$work/case$n.yaml
    # steps.py forces the flash backend (gpt.py); sdpa_steps.py leaves PyTorch its choice.
    attention="flash_attention: true}"
    [ "$set" = sdpa ] && attention="}"$'\n'"stack: {framework: pytorch}"
    cat >"$wl" <<YAML
name: $name
model: {num_layers: $layers, hidden_size: $hidden, num_attention_heads: $heads, seq_length: $seq, vocab_size: 50304, attention_dropout: 0}
training: {global_batch_size: $((mbs * micro)), micro_batch_size: $mbs, precision: bf16, optimizer: adam, autocast: false}
parallelism: {tensor: 1, pipeline: 1, data: 1, recompute: $recompute, $attention
YAML
    [ "$set" = flash ] && sed -i 's/autocast: false}/autocast: false, framework: pytorch}/' "$wl"
    read -r meas_s meas_peak meas_verdict < <(predict "$wl" platforms/dgx-h100.yaml)
    read -r der_s _ der_verdict < <(predict "$wl" "$work/derived.yaml")
    [ -n "$meas_s" ] && [ -n "$der_s" ] || { echo "h100.sh: case $n: no prediction" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$set" "$name" "$seq" "$mbs" \
      "$micro" "$recompute" "$status" "$step_s" "$peak" "$meas_s" "$meas_peak" "$meas_verdict" \
      "$der_s" "$der_verdict" >>"$rows"
  done < <(grep -v '^#' "$csv" | tail -n +2)
done

# The summary line of one set's rows (column 10: the measured table, 13: the derived one).
summary() {
  awk -F'\t' -v set="$1" -v col="$2" -v what="$3" '$1 == set && $7 == "ok" {
      k++; e = 100 * ($col / $8 - 1); a = e < 0 ? -e : e; s += a; if (a > mx) mx = a
      if ($2 == "gpt-350m" && $4 == 1) { host = e } else { g++; gs += a } }
    END { printf "%s: %d cases, mean absolute error %.1f%%, largest %.1f%%", what, k, s / k, mx
          if (host != "") printf "; without the host-bound case %.1f%% (%d cases)", gs / g, g
          printf ".\n" }' "$rows"
}

# One set's table.
table() {
  echo "| model | seq | micro-batch x count | recompute | measured step | H100 table | error | H200 table transferred | error | measured peak | predicted | OOM: measured / predicted |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' -v set="$1" '$1 == set {
    ok = $7 == "ok"
    printf "| %s | %s | %s x %s | %s | %s | %.1f ms | %s | %.1f ms | %s | %.2f GiB | %.2f GiB | %s / %s |\n",
      $2, $3, $4, $5, $6, ok ? sprintf("%.1f ms", 1e3 * $8) : "out of memory", 1e3 * $10,
      ok ? sprintf("%+.1f%%", 100 * ($10 / $8 - 1)) : "-", 1e3 * $13,
      ok ? sprintf("%+.1f%%", 100 * ($13 / $8 - 1)) : "-", $9 / 2^30, $11 / 2^30,
      ok ? "fits" : "oom", $12 }' "$rows"
}

# Hugging Face's eager GPT-2 (bench/device/hf_gpt2_steps.py): each row and its ablations
HF_STACK="{framework: pytorch, attention: unfused, gelu: eager_tanh, score_divisions: 2, causal_mask: where}"
hf_rows=""
declare -A hf_pred hf_first
while IFS=, read -r name layers hidden heads seq mbs micro dtype variant step_ms peak; do
  [ "$variant" = transformers ] && continue
  stack=$HF_STACK vocab=50257
  case $variant in
    functional_gelu) stack="{framework: pytorch, attention: unfused, score_divisions: 2, causal_mask: where}" ;;
    no_divisions) stack="{framework: pytorch, attention: unfused, gelu: eager_tanh, causal_mask: where}" ;;
    vocab_50304) vocab=50304 ;;
  esac
  echo "h100.sh: Hugging Face $name ($variant)" >&2
  wl=$work/hf.yaml
  cat >"$wl" <<YAML
name: $name
model: {num_layers: $layers, hidden_size: $hidden, num_attention_heads: $heads, seq_length: $seq, vocab_size: $vocab, attention_dropout: 0.1}
training: {global_batch_size: $((mbs * micro)), micro_batch_size: $mbs, precision: $dtype, optimizer: adam, autocast: true}
parallelism: {tensor: 1, pipeline: 1, data: 1, recompute: none}
stack: $stack
YAML
  read -r pred_s pred_peak _ < <(predict "$wl" platforms/dgx-h100.yaml)
  [ "$variant" = hf ] && hf_pred[$name]=$pred_s hf_first[$name]=$step_ms
  hf_rows+=$(awk -v n="$name" -v s="$seq" -v d="$dtype" -v m="$mbs" -v k="$micro" -v v="$variant" \
    -v ms="$step_ms" -v p="$pred_s" -v g="$peak" -v pg="$pred_peak" 'BEGIN {
      printf "| %s | %d | %s | %d x %d | %s | %.1f ms | %.1f ms | %+.1f%% | %.2f GiB | %.2f GiB | %+.1f%% |\n",
        n, s, d, m, k, v, ms, 1e3 * p, 100 * (1e3 * p / ms - 1), g, pg / 2^30, 100 * (pg / 2^30 / g - 1) }')$'\n'
done < <(grep -v '^#' "$hf" | tail -n +2)
# Off the grid (bench/device/offgrid_steps.py): each configuration under the default allocator
# and, where it failed there, under expandable segments
og_gpt=bench/device/h100_offgrid_gpt_steps.csv
og_llama=bench/device/h100_offgrid_llama_steps.csv
og_rows=""
offgrid_row() { # $1 family, $2 allocator, then the CSV's status, step_s and peak; the workload in $wl
  [ "$2" = expandable ] && sed -i 's/^stack: {framework: pytorch/stack: {framework: pytorch, allocator: expandable/' "$wl"
  "$TRAINSIM" memory "$wl" --platform platforms/dgx-h100.yaml --gpus 1 >"$wl.mem"
  local verdict
  if grep -q 'finds no free block' "$wl.mem"; then verdict="does not fit (fragmentation)"
  elif grep -q 'DOES NOT FIT$' "$wl.mem"; then verdict="does not fit"
  elif grep -q 'lies within its largest allocation' "$wl.mem"; then verdict="AT RISK"
  else verdict=fits; fi
  read -r pred_s pred_peak _ < <(predict "$wl" platforms/dgx-h100.yaml)
  og_rows+=$(awk -v n="$name" -v h="$h" -v a="$heads" -v s="$seq" -v b="$mbs x $micro" -v r="$rec" \
    -v al="$2" -v st="$3" -v m="$4" -v pk="$5" -v p="$pred_s" -v pp="$pred_peak" -v v="$verdict" 'BEGIN {
      if (st == "ok") printf "| %s | %d x %d | %s | %s | %s | %s | %.1f ms | %.1f ms | %+.1f%% | %.2f GiB | %.2f GiB | %+.2f%% | %s |\n",
        n, h, h / a, s, b, r, al, 1e3 * m, 1e3 * p, 100 * (p / m - 1), pk / 2^30, pp / 2^30, 100 * (pp / pk - 1), v
      else printf "| %s | %d x %d | %s | %s | %s | %s | out of memory | - | - | (%.2f GiB held) | %.2f GiB | - | %s |\n",
        n, h, h / a, s, b, r, al, pk / 2^30, pp / 2^30, v }')$'\n'
}
for csv in "$og_gpt" "${og_gpt%.csv}_expandable.csv"; do
  og_alloc=$([ "$csv" = "$og_gpt" ] && echo default || echo expandable)
  while IFS=, read -r name layers h heads seq mbs micro rec _ status step_s _ _ peak; do
    wl=$work/og-$name.yaml
    cat >"$wl" <<YAML
name: $name
model: {num_layers: $layers, hidden_size: $h, num_attention_heads: $heads, seq_length: $seq, vocab_size: 50304, attention_dropout: 0}
training: {global_batch_size: $((mbs * micro)), micro_batch_size: $mbs, precision: bf16, optimizer: adam, autocast: false}
parallelism: {tensor: 1, pipeline: 1, data: 1, recompute: $rec}
stack: {framework: pytorch}
YAML
    offgrid_row gpt "$og_alloc" "$status" "$step_s" "$peak"
  done < <(grep -v '^#' "$csv" | tail -n +2)
done
for csv in "$og_llama" "${og_llama%.csv}_expandable.csv"; do
  og_alloc=$([ "$csv" = "$og_llama" ] && echo default || echo expandable)
  while IFS=, read -r name layers h heads kv ffn seq mbs micro rec _ status step_s _ _ peak; do
    wl=$work/og-$name.yaml
    llama_workload >"$wl"
    offgrid_row llama "$og_alloc" "$status" "$step_s" "$peak"
  done < <(grep -v '^#' "$csv" | tail -n +2)
done
# The same steps on another H100 machine, and without the mask's blocking host-to-device copy
hf_again_rows=""
while IFS=, read -r name _ _ _ _ _ _ _ variant step_ms _; do
  [ "$variant" = hf ] || continue
  without=$(awk -F, -v n="$name" '$1 == n && $9 == "mask_on_device" { print $10 }' "$hf_again")
  hf_again_rows+=$(awk -v n="$name" -v a="${hf_first[$name]}" -v b="$step_ms" -v c="$without" \
    -v p="${hf_pred[$name]}" 'BEGIN {
      printf "| %s | %.1f ms | %.1f ms | %.1f ms | %+.1f%% | %.1f ms | %+.1f%% |\n",
        n, a, b, 1e3 * p, 100 * (1e3 * p / b - 1), c, 100 * (c / b - 1) }')$'\n'
done < <(grep -v '^#' "$hf_again" | tail -n +2)

{
  echo "# trainsim against whole training steps on one NVIDIA H100 80GB"
  echo
  echo "Generated by \`docs/validation/h100.sh\`; do not edit. Measured: \`bench/device/steps.py\` and"
  echo "\`bench/device/sdpa_steps.py\` ($(sed -n '2s/^# parameter). //p' "$flash")),"
  echo "raw in \`$flash\` and \`$sdpa\`: the models and recipes of docs/validation/h200.md's first"
  echo "two sets (gpt.py's GPT, fp32 main gradients and masters, fused AdamW), on the H100 as far as"
  echo "the session's device time reached (not run: the first set's GPT-2.7B at micro-batches 8"
  echo "and 16 and its 6.7B rows, the second set's last three). Predicted: \`trainsim run\` on \`platforms/dgx-h100.yaml\`"
  echo "with one GPU, its kernels priced from \`platforms/kernels/h100.yaml\`, measured apart on the"
  echo "same GPU by \`bench/device/kernel_table.py\` (kernel microbenchmarks and the host's CPU time"
  echo "on a tiny model); and, for comparison, from the table that \`platforms/kernels/derive.py\`"
  echo "transfers from the H200's (the same GH100 compute, so GEMMs and attention carried over as"
  echo "they are, memory-bound kernels scaled by the HBM bandwidth, 4.8 -> 3.35 TB/s), which"
  echo "trainsim used for the H100 until 2026-12-05. None of the steps set or adjusted a parameter."
  echo
  echo "## Flash attention forced (\`framework: pytorch\`, \`flash_attention: true\`)"
  echo
  table flash
  echo
  summary flash 10 "H100 table"
  summary flash 13 "H200 table transferred"
  echo
  layouts=bench/device/h100_flash_layouts.csv
  range() { awk -F, -v c="$1" 'NR > 2 && $5 == "table" { t[$1" "$2" "$3" "$4] = $c }
    NR > 2 && $5 == "model" { r = 100 * ($c / t[$1" "$2" "$3" "$4] - 1); if (n++ == 0 || r < lo) lo = r
      if (n == 1 || r > hi) hi = r } END { printf "%+.1f%% to %+.1f%%", lo, hi }' "$layouts"; }
  echo "The flash tables time q, k and v as (1, batch x heads, seq, head_dim) leaves; these steps"
  echo "(\`bench/device/gpt.py\`) unbind them from the projection's (batch, seq, 3, heads, head_dim)"
  echo "output. Timed alone on a later H100 at five shapes (\`$layouts\`), the model's layout runs"
  echo "the forward $(range 6) against the table's, and its backward, unbind's stacking of"
  echo "the three gradients (not priced) included, $(range 7): in a 1.3B block profiled in"
  echo "place (\`bench/device/h100_flash_head_copies.csv\`) the stack took 136 us and the flash"
  echo "backward's kernels 1,540 us where the table prices 1,812. Two misses of about the same size"
  echo "in opposite directions; neither is modelled apart."
  echo
  echo "## PyTorch's own attention backend (cuDNN on Hopper; \`stack: {framework: pytorch}\`)"
  echo
  table sdpa
  echo
  summary sdpa 10 "H100 table"
  summary sdpa 13 "H200 table transferred"
  echo
  echo "## Llama-style blocks"
  echo
  echo "\`bench/device/llama_steps.py --hbm 80\` ($(sed -n '2s/^# sets no parameter). //p' "$llama")) trains"
  echo "the Llama-style models of docs/validation/h200.md's Llama section (plain PyTorch: F.rms_norm,"
  echo "grouped-query attention with 8 key/value heads repeated for SDPA, eager rotary embedding,"
  echo "SwiGLU, untied embeddings, vocabulary 128,256) at sizes that fit 80 GB: \"llama-8b-quarter\" is"
  echo "Llama 3 8B's layer with 8 of its 32 layers. Validation only: the steps set no parameter;"
  echo "the H100's kernel table was measured apart (2026-12-05)."
  echo
  llama_table platforms/dgx-h100.yaml "$llama"
  echo
  echo "## Out of memory at the edge"
  echo
  echo "\`bench/device/allocator.py --hbm 80\` (\`$alloc\`; with expandable segments \`$alloc_exp\`)"
  echo "climbs micro-batches through the H100's 80 GB as docs/validation/h200.md's section of the same"
  echo "name does through the H200's 141 GB, each ladder chosen to straddle trainsim's verdicts. The"
  echo "platform's \`runtime_memory\` is this machine's: nvidia-smi's 81,559 MiB less cudaMemGetInfo's"
  echo "$(sed -n 's/^# before any tensor: cudaMemGetInfo total \([0-9]*\).*/\1/p' "$alloc" | awk '{ printf "%.0f MiB", $1 / 2^20 }'), and $(grep -hv '^#' "$alloc" "$alloc_exp" | awk -F, '$1 != "set" && $24 > m { m = $24 } END { printf "%.0f MiB", m / 2^20 }') outside the allocator while training."
  echo
  edge_table platforms/dgx-h100.yaml "$alloc" "$alloc_exp"
  echo
  echo "Verdicts right under the default allocator (replayed as docs/validation/h200.md's section"
  echo "says): $(edge_verdicts 7) (where it ran); with expandable segments: $(edge_verdicts 10); the"
  echo "allocated peaks are predicted $(edge_error)."
  echo "These ladders found a term the memory model lacked: before it, GPT-1.3B with full"
  echo "recomputation at micro-batch 42 was predicted at 78.29 GiB, AT RISK but fitting, and failed"
  echo "even with expandable segments, its peaks predicted 0.4-1.1% low (0.77-0.85 GiB with full"
  echo "recomputation at micro-batches 36-40). At the loss's backward, beside the three fp32 logit"
  echo "tensors and the layers' kept inputs, the final norm's input and output (kept by the norm and"
  echo "by the output layer's matmul) and the embedding dropout's mask are live: 2.5 sbh values of"
  echo "GPT, the terms Korthikanti et al. (arXiv:2205.05198) count for the input and output layers."
  echo "trainsim now counts them (workloads/memory.c), which moved docs/validation/h200.md's"
  echo "allocated peaks from 0.1-1.3% low to the figures there."
  echo
  echo "### The allocator's rules on the runs' own requests"
  echo
  echo "\`bench/device/alloc_trace.py --hbm 80\` ($(zcat "$trace" | sed -n 1p | sed 's/.*device \(.*\) ([0-9]* bytes), \(torch [^,]*\), \(CUDA [^,]*\), \([^,]*UTC\).*/\1, \2, \3, \4/')) records every request and free"
  echo "PyTorch's allocator saw while the ladders above ran again (torch.cuda.memory._record_memory_history:"
  echo "\`$trace\`). \`alloc_trace_replay\` (bench/alloc_trace_replay.c) plays those requests through"
  echo "trainsim's model of the default allocator (workloads/caching_allocator.c) in the memory the"
  echo "run began with, apart from the requests trainsim generates: where each run failed, or that"
  echo "it ran, and the reserved peak."
  echo
  trace_table "$trace"
  echo
  echo "Same outcome, at the same request: $(trace_same) (the segments held when each run began,"
  echo "libraries' workspaces and what shares their segments, made again first). The one that differs"
  echo "asked for 180 MiB when the real allocator's segments stood 4 MB short of the memory the"
  echo "replay is given (the free bytes read once, before the run, and the segments held then), and"
  echo "the replay, its segments 2 MB short of that end, found room: a margin the measurement does"
  echo "not resolve. Where the outcomes agree the reserved peaks do to $(zcat "$trace" | "$REPLAY" | awk -F, 'NR > 1 && $19 == "same" { d = 100 * ($18 / $14 - 1); if (d < 0) d = -d; if (d > m) m = d } END { printf "%.2f%%", m }'). Until 2026-12-07 the"
  echo "replay placed each segment above the ones before (upward in the order made), and for GPT-1.3B"
  echo "at micro-batches 40-46 the real allocator then held 2 GiB more when it failed; placed as the"
  echo "driver places them (below the ones before: the section on autocast below), they agree."
  echo
  echo "## Off the grid"
  echo
  echo "\`bench/device/offgrid_steps.py\` ($(sed -n '2s/^# parameter). device //p' "$og_gpt")) trains GPT and Llama-style"
  echo "blocks at shapes none of the kernel tables measures (hidden sizes 1,344-5,120, heads of"
  echo "96-128, sequences 1,536-12,288, micro-batches 1-16), as a plain PyTorch model runs them (SDPA's"
  echo "own backend choice: \`stack: {framework: pytorch}\`), first under the default caching allocator,"
  echo "then, where that ran out of memory, with expandable segments. Sized for an H200's 141 GB, five"
  echo "of the eight did not fit the H100's 80 GB: their verdicts are the check there."
  echo
  echo "| model | hidden x head dim | seq | micro-batch x count | recompute | allocator | measured step | predicted | error | measured peak | predicted | error | trainsim |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s' "$og_rows"
  echo
  read -r n mean worst peak < <(step_errors "$og_rows" 8 ms 10 13)
  printf 'Steps: %d, mean absolute error %.1f%%, largest %.1f%%; peaks within %.2f%%.' "$n" "$mean" "$worst" "$peak"
  echo " Every \"does not fit\" failed. The two whose"
  echo "bytes fit within their largest allocation (the fp32 logits) of the limit failed under the"
  echo "default allocator, as its replay says (\"fragmentation\"), and ran with expandable segments at"
  echo "the predicted peak."
  echo
  echo "## What the two GPUs say"
  echo
  echo "The two measured tables side by side (H100 time over H200 time at the points both measured;"
  echo "\"long\": points whose H200 time is over 200 us, where launch and latency no longer dominate):"
  echo
  python3 - platforms/kernels/h100.yaml platforms/kernels/h200.yaml <<'PY'
import statistics, sys
import yaml
h100, h200 = (yaml.safe_load(open(f))["tables"] for f in sys.argv[1:3])
print("| kernels | points | median ratio | long points | their median | their range |")
print("|---|---|---|---|---|---|")
for names in (["gemm_fwd", "gemm_dgrad", "gemm_wgrad"], ["grouped_mm_fwd", "grouped_mm_dgrad", "grouped_mm_wgrad"],
              ["flash_fwd_causal", "flash_bwd_causal", "flash_fwd", "flash_bwd"], ["sdpa_fwd_causal", "sdpa_bwd_causal"],
              ["bgemm_qk", "bgemm_av", "softmax_fwd", "softmax_bwd"], ["layer_norm_fwd", "layer_norm_bwd"],
              ["gelu_fwd", "gelu_bwd", "dropout_add_fwd", "dropout_add_bwd", "add_fwd"],
              ["cross_entropy_fwd", "cross_entropy_bwd"], ["adam_fused", "clip_grad_norm", "master_copy", "zero_main_grad"]):
    pairs = [(a, b) for n in names for a, b in zip(h100[n]["time_us"], h200[n]["time_us"])
             if a is not None and b is not None]
    long = [a / b for a, b in pairs if b > 200]
    cells = [f"{statistics.median(long):.2f}", f"{min(long):.2f}-{max(long):.2f}"] if long else ["-", "-"]
    print(f"| {', '.join(names)} | {len(pairs)} | {statistics.median(a / b for a, b in pairs):.2f} | "
          f"{len(long)} | {' | '.join(cells)} |")
PY
  echo
  echo "- The transfer from the H200 is right about the GEMMs and attention (the same GH100 at the"
  echo "  same clocks: ratios near 1 above) and wrong about the memory-bound kernels: it scales each"
  echo "  by the full HBM ratio, 1.43, above the table's fastest kernel, where the measured ratio"
  echo "  falls from about that for long kernels to near 1 for short ones, whose time is mostly"
  # The first set's GPU-bound cases (all but the host-bound GPT-350M at micro-batch 1): the
  # transferred table's error range and the measured table's largest error.
  awk -F'\t' '$1 == "flash" && $7 == "ok" && !($2 == "gpt-350m" && $4 == 1) {
      d = 100 * ($13 / $8 - 1); m = 100 * ($10 / $8 - 1); m = m < 0 ? -m : m
      if (n++ == 0 || d < lo) lo = d; if (d > hi) hi = d; if (m > mx) mx = m }
    END { printf "  launch and latency. So it prices the first set'"'"'s GPU-bound steps %+.1f%% to %+.1f%%;\n  the measured table brings them within %.1f%%.\n", lo, hi, mx }' "$rows"
  echo "- The second set landed 2.6-7.6% fast on the H100 as on the H200 (docs/validation/h200.md)"
  echo "  before the power limit was modelled: every step runs at the 700 W limit, at a lower clock"
  echo "  than the table's attention points, which were timed in bursts at the boost clock;"
  echo "  cuDNN's attention, at GEMM rates, loses more to it than flash attention, while the table's"
  echo "  GEMM points, timed back to back, were partly at the limit already (docs/validation/"
  echo "  power.md). trainsim now prices a step's kernels at the clock their mix holds under the"
  echo "  limit (docs/model.md, \"The power limit\": parameters from this H100's synthetic kernel"
  echo "  mixes, bench/device/h100_power_mix.csv, never from these steps). The transferred table,"
  echo "  with the H200's GEMM factor, carries the H200's table's other differences."
  host_step() { awk -F, '$1 == "gpt-350m" && $6 == 1 { printf "%.0f to %.0f ms (median %.0f ms)", $12 * 1e3, $13 * 1e3, $11 * 1e3 }' "$1"; }
  cpu_layer() { sed -n 's/^  cpu_layer_\(forward\|backward\)_us: //p' "$1" | awk '{ s += $1 } END { printf "%.2f ms", s / 1e3 }'; }
  echo "- GPT-350M at micro-batch 1 is bound by the host, whose CPU time per layer the table"
  echo "  measures on a tiny model: on this machine's host the step took $(host_step "$flash")"
  echo "  over its 10 iterations (the H200's host: $(host_step bench/device/h200_steps.csv)), the tiny"
  echo "  model's layer $(cpu_layer platforms/kernels/h100.yaml) of CPU time (the H200's $(cpu_layer platforms/kernels/h200.yaml)): the host's"
  echo "  speed varies more with the model than the tiny model shows. Repeated on another H100"
  echo "  machine (bench/device/host_repeat.py, bench/device/h100_host_repeat.csv), the same step's"
  echo "  median took $(awk -F, '$1 == "gpt-350m" { v = v sep $7 " ms"; sep = ", " } END { print v }' bench/device/h100_host_repeat.csv) in three"
  echo "  repeats of 10 steps, while the GPU-bound GPT-1.3B beside them took $(awk -F, '$1 == "gpt-1.3b" { print $7 " ms" }' bench/device/h100_host_repeat.csv)"
  echo "  ($(awk -F, '$1 == "gpt-1.3b" && $5 == 2048 && $6 == 4 && $7 == 2 { printf "%.1f ms", 1e3 * $11 }' "$flash") in the set above): a host-bound step moves by tens of percent between hosts and"
  echo "  runs, more than the model's error, so it does not test the model to better than that."
  echo "- The H100 table's optimizer rows stop at hidden 2,048 (its measuring budget ran out);"
  echo "  wider models are priced from the same parameters as layers of half the width (the"
  echo "  optimizer is bandwidth-bound: workloads/cost.c), instead of the roofline, which put"
  echo "  GPT-2.7B's step 6.0% fast when this page was first made (2026-12-05). moe_router_bwd"
  echo "  has one measured point of 192: the H100's MoE"
  echo "  routers' backward falls back to the roofline."
  echo
  echo "## PyTorch's automatic mixed precision: its kernels on the H100"
  echo
  echo "\`bench/device/autocast_kernels.py\` (\`$autocast\`) times the kernels \`training.autocast\` adds"
  echo "against the bf16 add that prices them (the table's \`add_fwd\`, at equal bytes); at the"
  echo "largest size, in TB/s of bytes moved:"
  echo
  echo "| kernel | bytes an element | TB/s at 2^28 elements | against add_bf16 |"
  echo "|---|---|---|---|"
  awk -F, 'NR > 1 && $2 == 268435456 { tb[$1] = $5; b[$1] = $3; order[++n] = $1 }
    END { for (i = 1; i <= n; i++) printf "| %s | %s | %.2f | %.2f |\n", order[i], b[order[i]], tb[order[i]], tb[order[i]] / tb["add_bf16"] }' "$autocast"
  echo
  echo "The forward's weight cast (fp32 to bf16) and the fp32 gradient add stream as the bf16 add"
  echo "does, as the pricing assumes; the gradient's cast back (bf16 to fp32) runs at about two"
  echo "thirds of that rate, which \`training.autocast\` now prices it at (workloads/cost.c:"
  echo "AUTOCAST_WIDENING_RATE, 0.65)."
  echo
  echo "## PyTorch's automatic mixed precision: whole steps (plain PyTorch's default)"
  echo
  echo "\`bench/device/amp_steps.py\` ($(sed -n 2p "$amp" | sed 's/^# (validation data: sets no parameter). //')) trains"
  echo "gpt.py's GPT (SDPA with PyTorch's choice of backend) and llama_steps.py's Llama the way"
  echo "PyTorch's own mixed-precision recipe does (pytorch.org/docs/stable/amp): fp32 weights on the"
  echo "GPU, each microbatch's forward under \`torch.autocast(bfloat16)\`, fp32 \`.grad\`, clip,"
  echo "fused AdamW, \`zero_grad(set_to_none=True)\`. Described as a user would, with \`stack:"
  echo "{framework: pytorch}\` and no recipe named, trainsim prices them under autocast, its default"
  echo "there since 2026-12-07 (before, bf16 weights with fp32 master copies: 18 bytes a parameter"
  echo "against these runs' 16). The last rows are the H200-sized set, run first on the same H100:"
  echo "each ran out of its memory."
  echo
  amp_table platforms/dgx-h100.yaml "$amp"
  echo
  amp_summary
  echo
  echo "Four mechanisms of the recipe, found on these runs and modelled (workloads/memory.c): with"
  echo "one microbatch a step the fp32 gradients do not exist at the loss (\`set_to_none\` freed"
  echo "them at the last step, the backward makes them anew); under full recomputation"
  echo "torch.autocast's cache keeps every layer's cast weight until the forward's region exits,"
  echo "beside the loss's logits; a Llama block's residual stream is fp32 as a GPT's is (the"
  echo "fp32 embeddings' output, type promotion in the residual adds), so its norms run in fp32 and"
  echo "full recomputation keeps fp32 inputs; and its separate q, k and v projections each cast the"
  echo "norm's fp32 output anew and keep the copy. Before them the peaks were 6.5% off (mean, -10.5%"
  echo "to +18.3%) and the steps 2.7%. The same runs' requests, tensor by tensor"
  echo "(workloads/step_requests.c, which the default allocator's replay plays at the edge), peak"
  echo "within 0.2% of every measured peak (tests/unit/test_caching_allocator.c checks five)."
  echo
  echo "### Out of memory at the edge, under autocast"
  echo
  echo "\`bench/device/allocator.py --amp --hbm 80\` ($(sed -n 2p "$alloc_amp" | sed 's/^# context figure is a device measurement). device \(.*\) ([0-9.]* GiB), \(torch [^,]*\), \(CUDA [^,]*\), \([^,]*UTC\).*/\1, \2, \3, \4/'); \`$alloc_amp\`,"
  echo "with expandable segments \`$alloc_amp_exp\`) climbs the same recipe's micro-batches through the"
  echo "80 GB, each ladder chosen to straddle trainsim's verdicts, which were written down before"
  echo "the runs (issue 31's notes of 2026-12-07). Described as above (no recipe named: autocast)."
  echo
  edge_table platforms/dgx-h100.yaml "$alloc_amp" "$alloc_amp_exp" amp
  echo
  echo "Verdicts right with expandable segments: $(edge_verdicts 10), the allocated peaks predicted"
  echo "$(edge_error). Under the default allocator: $(edge_verdicts 7) where the ladder ran (it stops at the first"
  echo "failure; the trace below ran every rung, each failing where trainsim said it would not fit)."
  echo "Until 2026-12-07 two were wrong, both \"fits\" for runs that failed: GPT-1.3B and GPT-2.7B with"
  echo "full recomputation at the smallest micro-batch of their ladders, each peak further than its"
  echo "largest allocation from the limit, where trainsim did not replay the allocator, each failing"
  echo "on the loss's fp32 logits after the allocator, retrying with its cache emptied, still held"
  echo "13-14 GiB of free pieces inside segments in use (the split column). Two mechanisms, found on"
  echo "the runs' own requests, made them right:"
  echo
  trace_table "$trace_amp"
  echo
  echo "Same outcome, at the same request: $(trace_same) (\`bench/device/alloc_trace.py --amp --hbm 80\`:"
  echo "\`$trace_amp\`, each request and free of the runs above, replayed by \`alloc_trace_replay\`)."
  echo "In the two recomputing runs the replay and the real allocator held the same segment bytes (to"
  echo "6 MB) at every request up to the failing one; there, releasing its fully free segments, the"
  echo "replay found room and the real allocator did not: their blocks sat in different segments."
  echo "PyTorch's best fit breaks ties between free blocks of one size by address, and where a segment"
  echo "lies is the CUDA driver's choice. Replayed with each segment at the trace's own address"
  echo "(\`alloc_trace_replay --addresses\`), $(zcat "$trace_amp" | "$REPLAY" --addresses | tail -n +2 | grep -c ',same$') of $(zcat "$trace_amp" | "$REPLAY" --addresses | tail -n +2 | wc -l) agree. That ladder ran its rungs in one process, whose earlier rungs"
  echo "left the driver's address space laid out differently for the next (and held other segments);"
  echo "a user's run is one configuration in a fresh process. Every rung again, each in a process of"
  echo "its own (\`allocator.py --only\`, \`$alloc_amp_fresh\`): $(grep -v '^#' "$alloc_amp_fresh" | tail -n +2 | awk -F, -v f="$alloc_amp" 'BEGIN { while ((getline l < f) > 0) if (l !~ /^#/) { split(l, x, ","); s[x[3] "," x[10] "," x[12]] = x[13] } } { n++; k = $3 "," $10 "," $12; if (k in s) { m++; same += s[k] == $13 } } END { printf "%d rungs, the same outcome as in the ladder wherever both ran (%d of %d)", n, same, m }'), the two"
  echo "above failing on the same requests. Traced in fresh processes (\`alloc_trace.py --only\`,"
  echo "\`$trace_fresh\`, with each block's address), the replay at the trace's addresses follows"
  echo "the real allocator block by block to the same failure in both ($(zcat "$trace_fresh" | "$REPLAY" --addresses 2>&1 | grep -q 'placed at' && echo "not every block where the run put it" || echo "every block where the run put it")). Their segment lines"
  echo "show the driver's rule: once the process's first reservation (its first 2 GiB or so, packed"
  echo "upward) is full, each new segment goes below every one before it, so that ties go to the"
  echo "newest segment. trainsim's replay now places segments so (workloads/caching_allocator.c;"
  echo "before, upward in the order made, under which both runs fit), and replays the allocator"
  echo "wherever the bytes fit, not only within the largest allocation of the limit: these two failed"
  echo "8.6 and 14.1 GiB below it. The fresh traces replayed under that rule fail as the runs did"
  echo "($(zcat "$trace_fresh" | "$REPLAY" | tail -n +2 | grep -c ',same$') of 2); the table above replays the ladder's own requests under it (the ladder's process"
  echo "held other segments, laid out by its history). The first reservation's upward packing is not"
  echo "modelled. Expandable segments decided every rung as the bytes did."
  echo
  echo "## Hugging Face's eager GPT-2"
  echo
  echo "\`bench/device/hf_gpt2_steps.py\` ($(head -1 "$hf" | sed 's/^# bench\/device\/hf_gpt2_steps.py: device //; s/;.*//')) trains GPT-2 as"
  echo "transformers' eager modeling_gpt2.py (releases 4.2x-4.4x) computes it, the FlashAttention"
  echo "README's Hugging Face baseline (docs/validation/a100.md): Conv1D layers by torch.addmm, the"
  echo "scores divided by a device scalar and by layer_idx + 1, the causal mask by torch.where,"
  echo "softmax under autocast, gelu_new as eager operations, fp32 parameters under torch.autocast"
  echo "(fp16 with a gradient scaler, or bf16), the vocabulary of 50,257, two microbatches a step;"
  echo "the first four models at their configs' micro-batches and sequence 1,024, three GPT-3"
  echo "shapes at 2,048. GPT-2 small again with one mechanism off at a time: F.gelu for gelu_new,"
  echo "no divisions, the vocabulary padded to 50,304. Predicted: \`stack: $HF_STACK\`,"
  echo "\`training.autocast: true\` (the ablations drop the key or pad the vocabulary). The transcription"
  echo "checked against transformers 5.17.0's own GPT2LMHeadModel with eager attention on the same H100"
  echo "(GPT-2 small's row): 209.4 ms and 20.74 GiB, the transcription 214.5 ms and 20.76 GiB in the"
  echo "same process (the script's docstring; the CSV's \"transformers\" row ran transformers' SDPA)."
  echo
  echo "| model | seq | precision | micro-batch x count | run | measured step | predicted | error | measured peak | predicted | error |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s' "$hf_rows"
  echo
  read -r n mean worst peak < <(step_errors "$hf_rows" 6 hf 9 12)
  printf 'Steps: %d models, mean absolute error %.1f%%, largest %.1f%%; peak memory largest error %.1f%%.\n' "$n" "$mean" "$worst" "$peak"
  echo
  echo "The same steps on another H100 machine (\`$hf_again\`, $(head -1 "$hf_again" | sed 's/.*CUDA [0-9.]*, //; s/;.*//')), and"
  echo "again with the mask's minimum made on the GPU instead of copied from the host each layer"
  echo "(PyTorch's blocking copy, non_blocking=False: the stream is synchronised after it, aten's"
  echo "Copy.cu, so the host waits each layer until the GPU has run all it was given and cannot run"
  echo "ahead across layers):"
  echo
  echo "| model | measured (first machine) | measured (second) | predicted | error (second) | mask made on the GPU | change |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s' "$hf_again_rows"
  echo
  echo "GPT-2 medium to xl, whose kernels are small at micro-batches 4 to 1, ran 5-7% faster on"
  echo "the second machine (its host; the GPUs are the same model): these steps depend on the host"
  echo "as much as on the GPU, and the first machine's errors carry that spread. The blocking copy"
  echo "costs them 0.3-3.6% (xl the most, whose forward trainsim prices within 7% of the host's"
  echo "time); trainsim does not model the copy's wait."
  echo
  echo "What the ablations isolate, each priced from kernels measured alone"
  echo "(\`bench/device/hf_eager_kernels.py\`, \`bench/device/h100_hf_eager_kernels.csv\`): gelu_new under"
  echo "autocast runs in fp32 from its pow on (pow is on autocast's fp32 list), so it keeps 12 bytes"
  echo "an element more than F.gelu (measured 12.0) and moves 76 bytes an element forward, 118"
  echo "backward (alone, 713 us forward and 1,744 us both ways over 8,192 x 3,072; those bytes at the"
  echo "add's measured rate, 2.48 TB/s there, take about 770 and 1,970 us); priced as the same chain in"
  echo "fp16 it had come to 40% of its cost in the"
  echo "step. The division by a 0-dim CUDA tensor runs at 0.52 of the add's rate (a broadcast operand,"
  echo "PyTorch's unvectorised path), the division by a Python float at the add's: priced both at"
  echo "the add's rate, the divisions' share of the step came to two thirds of the measured 18.9 ms."
  echo "The unpadded vocabulary's cuBLAS fallback: fp16 measured like bf16"
  echo "(\`bench/device/h100_vocab_alignment_fp16.csv\`). Hugging Face's layer issues about three times"
  echo "the kernels of the layer the table's host time was measured on; at micro-batch 1 (GPT-2 xl)"
  echo "the host paces its backward. Each kernel past the measured layer's is priced at one eager"
  echo "operation recorded by autograd (forward 10.18 us, backward node 13.23 us, against 6.42 us for"
  echo "the table's in-place add, measured on this host: host_us); at the layer's own rate per kernel,"
  echo "as before 2026-12-07, xl came out 39% slow, at the plain add's 17% fast."
  echo
  echo "Every kernel of one block of each model, forward and backward, profiled in place"
  echo "(\`bench/device/hf_head_copies.py\` -> \`bench/device/h100_hf_head_copies.csv\`), against"
  echo "\`trainsim profile\`: torch.where's mask ran 180-182 us each way over GPT-2 medium's scores"
  echo "where the table's masked_fill (a copy and a fill) prices 284 us, and torch.matmul's copies of"
  echo "the permuted heads (4 forward and 4 backward a layer past micro-batch 1, 2-3.5% of the"
  echo "block) were not priced at all: both are now (\`causal_mask: where\`, 0.51 of the add's"
  echo "rate; the copies at their measured 0.40, 0.16 and 0.31 of the HBM bandwidth), which moved"
  echo "the steps from 5.7% to 4.9%. The small element-wise kernels ran slower in the block than"
  echo "the table's add prices their bytes: its points below about 16M elements were timed on"
  echo "operands that stay in L2 between repetitions (a 3.1M-element weight cast priced 3.4 us ran"
  echo "8.1); each kernel streamed against the add is now priced no faster than the add's rate past"
  echo "L2 (workloads/cost.c, ADD_PAST_L2_ELEMS). The fp32 softmax of 2,048-score rows, priced"
  echo "from the bf16 table by its bytes, came to 1,870 us where it ran 1,157 at GPT-3 125M's shape:"
  echo "it is priced from the table's own fp32 rows since (\`softmax_fp32_fwd\`, measured on this"
  echo "H100: 1,086 us there). Per block, trainsim's GPU time now stands at -2.0%, -2.8%, -5.9% and"
  echo "-5.7% of the measured for GPT-2 small to xl and -1.4%, -1.6%, -2.5% for the GPT-3 shapes. Not"
  echo "modelled: the fp32 embeddings. GPT-2 large's step misses by more than its block (-12.9%"
  echo "against -5.9%): about 25 ms a step outside the layers (the output layer at cuBLAS's"
  echo "fallback, the loss, the gradient scaler and the optimizer) is not accounted for."
  echo
  echo "## Attention dropout inside the fused kernels"
  echo
  echo "\`bench/device/sdpa_backends.py --dropout 0.1\` ($(sed -n '2s/^# //p' "$drop1"); \`$drop1\`, beside the"
  echo "same run with dropout 0: \`$drop0\`) times SDPA's backends with attention dropout as a model in"
  echo "training mode passes it: each draws its mask inside the kernel (Philox) and its backward draws"
  echo "it again. What dropout adds, as a ratio and per score computed (half of s^2 a head, causal):"
  echo
  echo "| batch x heads x seq x head dim | cuDNN forward | cuDNN backward | flash forward | flash backward | cuDNN added, ps a score (fwd / bwd) | flash added (fwd / bwd) |"
  echo "|---|---|---|---|---|---|---|"
  paste -d, <(grep -v '^#' "$drop0" | tail -n +2) <(grep -v '^#' "$drop1" | tail -n +2) | awk -F, '{
      sc = $1 * $2 * $3 * $3 / 2
      printf "| %s x %s x %s x %s | %.2fx | %.2fx | %.2fx | %.2fx | %.2f / %.2f | %.2f / %.2f |\n", $1, $2, $3, $4,
        $25 / $11, $26 / $12, $23 / $9, $24 / $10, ($25 - $11) * 1e9 / sc, ($26 - $12) * 1e9 / sc, ($23 - $9) * 1e9 / sc, ($24 - $10) * 1e9 / sc }'
  echo
  echo "PyTorch's choice (cuDNN here, with or without dropout) runs its forward about twice as long"
  echo "with dropout and its backward a fifth longer; the flash backend pays less forward. The added"
  echo "time is close to a constant per score (the mask drawn per element) across sequences of"
  echo "1,024-32,768 and head dims of 64-128. trainsim prices it so since 2026-12-07: the medians"
  echo "over these shapes are platforms/dgx-h100.yaml's \`gpu.attention_dropout\` (ps a score;"
  echo "workloads/cost.c, add_attention_dropout), which the H200, H800 and 16k-GPU H100 platforms"
  echo "carry as ASSUMED (the same multiprocessors and clock). Before, fused attention was priced"
  echo "without dropout whatever \`attention_dropout\` said: a plain PyTorch model left at attention"
  echo "dropout 0.1 on SDPA runs its attention about a third longer than that. The models this"
  echo "page's steps trained have no attention dropout, and their workloads say so."
  echo
  echo "## Measured, not yet priced: computation beside a collective whose channels hold their multiprocessors"
  echo
  echo "NCCL runs each call as one kernel, a block a channel resident until the call ends; \`cuobjdump\`"
  echo "on the NCCL that PyTorch loaded ($(unquoted "$channels" | awk -F, '$2 == "library" { print $5 }')) finds $(unquoted "$channels" | awk -F, '$2 == "registers a thread; median" { print $3 }') registers a thread in its sm_90"
  echo "collective kernels, $(unquoted "$channels" | awk -F, '$2 == "registers a block of 640; median" { print $3 }') a block of 640 threads: the multiprocessor's register file, which"
  echo "no GEMM block (cuBLAS's nvjet kernels: 384 threads of 168 registers) can share."
  echo "\`bench/device/channel_occupancy.py\` (\`$channels\`) starts a persistent reduction of that launch"
  echo "shape first and times work beside it, as the slowdown of the work's time alone:"
  echo
  echo "| work (its kernel's grid) | 8 channels | 16 | 24 | 32 |"
  echo "|---|---|---|---|---|"
  unquoted "$channels" | awk -F, '$1 == "kernels" { split($5, g, " block"); grid[$2] = g[1] }
    $1 == "beside" { split($2, a, " [|] "); if (!(a[1] in seen)) { seen[a[1]] = 1; order[++n] = a[1] }
      v[a[1], a[2] + 0] = sprintf("%+.0f%%", 100 * $3) }
    $1 == "device" && $2 == "multiprocessors" { sms = $3 }
    END { for (i = 1; i <= n; i++) { w = order[i]
        printf "| %s (%s) | %s | %s | %s | %s |\n", w, grid[w], v[w, 8], v[w, 16], v[w, 24], v[w, 32] }
      printf "| the multiprocessors lost: %d / (%d - channels) - 1 | %+.0f%% | %+.0f%% | %+.0f%% | %+.0f%% |\n", sms, sms, 100 * (sms / (sms - 8) - 1), 100 * (sms / (sms - 16) - 1), 100 * (sms / (sms - 24) - 1), 100 * (sms / (sms - 32) - 1) }'
  echo
  echo "SDPA's attention (cuDNN's flash kernel, PyTorch's choice here), a grid of one block a"
  echo "multiprocessor, loses about the multiprocessors' share; cuBLAS's GEMMs, persistent grids of"
  echo "two-block clusters sized for all 132"
  echo "multiprocessors, lose three times that (16 channels, NCCL's on these platforms: +40-54%),"
  echo "their last blocks waiting for a second round; the add loses more than its share to the"
  echo "reduction's HBM traffic (0.9-2.5 TB/s here, more than a network-bound collective moves)."
  echo "trainsim slows compute that starts beside a collective by the platform's"
  echo "\`overlap_slowdown\` (0.10 on the H100, measured with a reduction relaunched back to back,"
  echo "whose blocks gave their multiprocessors back between launches): the resident shape costs GEMMs"
  echo "several times that. Not applied yet: what it costs a step depends on how long the channels"
  echo "stay resident beside compute (NCCL's channels per call at each size, the wait for"
  echo "multiprocessors at a collective's start: the reduction posted beside running GEMMs started"
  echo "and ran $(unquoted "$channels" | awk -F, '$1 == "stretch" { v = 100 * $3; if (n++ == 0 || v < lo) lo = v; if (v > hi) hi = v } END { printf "%.0f-%.0f%%", lo, hi }') longer than alone), which only multi-GPU steps can check."
} >"$page.tmp"
mv "$page.tmp" "$page"
echo "h100.sh: wrote $page" >&2
