#!/usr/bin/env bash
# Regenerates docs/validation/frontier.md: trainsim against the claims of Dash et al.,
# "Optimizing Distributed Training on Frontier for Large Language Models" (ISC 2024,
# arXiv:2312.12705). One command, after a build (./build.sh test or cmake --build build):
#   docs/validation/frontier.sh
# Every figure in the page is measured by this run (about 5 minutes on two cores, hybrid
# fidelity); the prose around them is the script's. WORK=DIR keeps the runs (default: a
# temporary directory, removed at the end); a second call with the same WORK and the same
# binary rewrites the page from them without running again.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/validation/lib.sh
if [ ! -x "$TRAINSIM" ]; then
  echo "frontier.sh: $TRAINSIM not found: build first (cmake --build build)" >&2
  exit 2
fi
if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd) # variants name files in it: relative paths would resolve twice
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
page=docs/validation/frontier.md
fid=$VALIDATION_FIDELITY

# ---- runs: two at a time -------------------------------------------------------------------
jobs_running() { jobs -rp | wc -l; }
step=0
steps=0 # set below, once the runs are known
spawn() { # NAME COMMAND...: runs COMMAND in the background, output in $work/NAME.log
  local name=$1
  shift
  while [ "$(jobs_running)" -ge 2 ]; do wait -n || exit 1; done
  step=$((step + 1))
  echo "frontier.sh: step $step of $steps: $name ($(date +%H:%M:%S))" >&2
  ("$@" >"$work/$name.log" 2>&1 || { echo "frontier.sh: $name failed:" >&2; cat "$work/$name.log" >&2; exit 1; }) &
}

# The sensitivity variants of platforms/frontier.yaml: its (MODELLED) kernel table's
# times x factor, no kernel table at all (the roofline of gemm_ceiling and HBM bandwidth), and
# the NICs' bandwidth x factor. The copies live in $work, so they name their table by its path.
table=$PWD/platforms/kernels/mi250x.yaml
scaled_table() { # FACTOR OUT: the table with every measured time x FACTOR
  awk -v f="$1" '
    /^    time_us: \[/ { inside = 1; print; next }
    inside && /^    \]/ { inside = 0 }
    inside { n = split($0, v, ","); line = ""
      for (i = 1; i <= n; i++) { x = v[i]; gsub(/ /, "", x); if (x == "") continue
        line = line (line == "" ? "      " : ", ") (x == "null" ? x : sprintf("%.4g", x * f)) }
      print line (/,[ ]*$/ ? "," : ""); next }
    { print }' "$table" >"$2"
}
variant() { # KERNEL_TABLE NIC_FACTOR OUT (KERNEL_TABLE "-": none)
  awk -v k="$1" -v n="$2" '
    /^  kernel_table:/ { if (k == "-") next; $0 = "  kernel_table: " k }
    /bandwidth: [0-9.]+Gbps/ { match($0, /bandwidth: [0-9.]+/)
      $0 = substr($0, 1, RSTART + 10) (substr($0, RSTART + 11, RLENGTH - 11) * n) substr($0, RSTART + RLENGTH) }
    { print }' platforms/frontier.yaml >"$3"
}
declare -A preset_gpus=([22b]=64 [175b]=1024 [1t]=3072)
models=(1t 175b 22b)
sens=(kernels-0.8 kernels-1.2 roofline nic-0.8 nic-1.2)
scaled_table 0.8 "$work/mi250x-0.8.yaml"
scaled_table 1.2 "$work/mi250x-1.2.yaml"
variant "$work/mi250x-0.8.yaml" 1 "$work/kernels-0.8.yaml"
variant "$work/mi250x-1.2.yaml" 1 "$work/kernels-1.2.yaml"
variant - 1 "$work/roofline.yaml"
variant "$table" 0.8 "$work/nic-0.8.yaml"
variant "$table" 1.2 "$work/nic-1.2.yaml"
# The contrast for section 7: Slingshot's adaptive routing replaced by minimal routing.
awk -v k="$table" '/^  routing: adaptive / { sub(/adaptive /, "minimal  ") }
  /^  kernel_table:/ { $0 = "  kernel_table: " k } { print }' \
  platforms/frontier.yaml >"$work/minimal.yaml"
grep -q '^  routing: minimal' "$work/minimal.yaml" || { echo "frontier.sh: no routing key" >&2; exit 1; }
for v in "${sens[@]}"; do
  if cmp -s platforms/frontier.yaml "$work/$v.yaml"; then
    echo "frontier.sh: variant $v changed nothing in platforms/frontier.yaml" >&2
    exit 1
  fi
done

stamp=$(sha256sum "$TRAINSIM" tests/validation/*.sh platforms/frontier.yaml platforms/kernels/mi250x.yaml \
  workloads/gpt-*.yaml)
if [ "$(cat "$work/runs-complete" 2>/dev/null)" = "$stamp" ]; then
  echo "frontier.sh: reusing the runs in $work" >&2
else
rm -f "$work/runs-complete"
echo "frontier.sh: runs in $work" >&2
# claims, two wide strong series, the minimal-routing contrast, a search per model, the
# sensitivities
steps=$((4 + ${#models[@]} + ${#models[@]} * ${#sens[@]}))
spawn claims bash tests/validation/run.sh "$work/claims"
spawn 1t-strong-wide "$TRAINSIM" scale workloads/gpt-1t.yaml --gpus 1024,1536,2048,3072 --strong \
  --fidelity "$fid" --out "$work/1t-strong-wide"
for m in "${models[@]}"; do
  spawn "search-$m" "$TRAINSIM" search "workloads/gpt-$m.yaml" --gpus "${preset_gpus[$m]}" --top 3 \
    --fidelity "$fid" --out "$work/search-$m"
done
spawn 1t-minimal "$TRAINSIM" scale workloads/gpt-1t.yaml --gpus 3072 --weak \
  --platform "$work/minimal.yaml" --fidelity "$fid" --out "$work/1t-minimal"
spawn 175b-strong-wide "$TRAINSIM" scale workloads/gpt-175b.yaml --gpus 256,512,1024 --strong \
  --fidelity "$fid" --out "$work/175b-strong-wide"
for m in "${models[@]}"; do
  for v in "${sens[@]}"; do
    spawn "sens-$m-$v" "$TRAINSIM" scale "workloads/gpt-$m.yaml" --gpus "${preset_gpus[$m]}" --weak \
      --platform "$work/$v.yaml" --fidelity "$fid" --out "$work/sens-$m-$v"
  done
done
"$TRAINSIM" memory workloads/gpt-1t.yaml >"$work/memory-1t.log"
while [ "$(jobs_running)" -gt 0 ]; do wait -n || exit 1; done
echo "$stamp" >"$work/runs-complete"
fi
echo "frontier.sh: writing $page" >&2

# ---- the page ------------------------------------------------------------------------------
col() { csv_last "$@"; }
fmt() { awk -v v="$1" -v d="${2:-2}" 'BEGIN { printf "%.*f", d, v }'; }
pct_of() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (a / b - 1) }'; }
# A scale.csv as a markdown table: GCDs, batch, iteration, TFLOPS/GCD, % of peak, efficiency.
series_table() {
  echo "| GCDs | layout | global batch | iteration (s) | TFLOPS/GCD | % of peak | efficiency |"
  echo "|---|---|---|---|---|---|---|"
  awk -F, '/^#/ || /^workload/ { next }
    { printf "| %s | TP%s PP%s DP%s | %s | %.2f | %.1f | %.2f%% | %.2f%% |\n", $2, $3, $4, $5, $6, $7,
        $10 * 191.5 / 100, $10, 100 * $12 }' "$1"
}
best_of_search() { # CSV: the simulated candidate with the shortest iteration
  awk -F, 'NR > 1 && $12 != "analytic" && (best == "" || $13 < best) { best = $13; row = $0 } END { print row }' "$1"
}
layout_of() { # a search.csv row
  awk -F, '{ printf "TP%s PP%s DP%s, micro-batch %s, %s%s recompute, ZeRO-%s%s", $1, $2, $3, $4,
    ($5 > 1 ? "interleaved v=" $5 ", " : ""), $6, $7, ($8 == 1 ? ", SP" : "") }' <<<"$1"
}
share() { # SERIES_CSV COLUMN: the last point's COLUMN as a share of its iteration
  awk -v a="$(col "$1" "$2")" -v t="$(col "$1" iteration_s)" 'BEGIN { printf "%.1f%%", 100 * a / t }'
}
peak_csv() { case $1 in 22b) echo "$work/claims/22b/scale.csv" ;; 175b) echo "$work/claims/175b-weak/scale.csv" ;; 1t) echo "$work/claims/1t-weak/scale.csv" ;; esac; }
paper_peak() { case $1 in 22b) echo 38.38 ;; 175b) echo 36.14 ;; 1t) echo 31.96 ;; esac; }

# Section 7's prose, its figures from this run's files.
differences() {
  local c22 c175 c1t k22 k175 k1t g22 g175 g1t b22
  c22=$(peak_csv 22b) c175=$(peak_csv 175b) c1t=$(peak_csv 1t)
  k() { awk -v a="$(col "$1" compute_s)" -v b="$(col "$1" recompute_s)" -v t="$(col "$1" iteration_s)" \
    'BEGIN { printf "%.0f%%", 100 * (a + b) / t }'; }
  k22=$(k "$c22") k175=$(k "$c175") k1t=$(k "$c1t")
  g22=$(fmt "$(col "$work/sens-22b-kernels-1.2/scale.csv" megatron_percent)")
  g175=$(fmt "$(col "$work/sens-175b-kernels-1.2/scale.csv" megatron_percent)")
  g1t=$(fmt "$(col "$work/sens-1t-kernels-1.2/scale.csv" megatron_percent)")
  b22=$(fmt "$(cut -d, -f15 <<<"$(best_of_search "$work/search-22b/search.csv")")")
  local f22
  f22=$(awk -v a="$(col "$c22" megatron_percent)" 'BEGIN { printf "%.2f", a / 38.38 }')
  local w1t wmin s175 s175w s1t s1tc
  # the 512-GCD point's FLOP/s per GCD = the last point's / its efficiency
  wmin=$(awk -v a="$(col "$work/1t-minimal/scale.csv" model_tflops_per_gpu)" \
    -v b="$(col "$work/claims/1t-weak/scale.csv" model_tflops_per_gpu)" \
    -v e="$(col "$work/claims/1t-weak/scale.csv" efficiency)" 'BEGIN { printf "%.2f", 100 * a * e / b }')
  w1t=$(fmt "$(awk -v e="$(col "$work/claims/1t-weak/scale.csv" efficiency)" 'BEGIN { print 100 * e }')")
  s175=$(fmt "$(awk -v e="$(col "$work/claims/175b-strong/scale.csv" efficiency)" 'BEGIN { print 100 * e }')")
  s175w=$(fmt "$(awk -v e="$(col "$work/175b-strong-wide/scale.csv" efficiency)" 'BEGIN { print 100 * e }')")
  s1t=$(fmt "$(awk -v e="$(col "$work/1t-strong-wide/scale.csv" efficiency)" 'BEGIN { print 100 * e }')")
  s1tc=$(fmt "$(awk -v e="$(col "$work/claims/1t-strong/scale.csv" efficiency)" 'BEGIN { print 100 * e }')")
  cat <<TEXT
**% of peak: all three above their bands.** trainsim's figures are what the modelled kernels
and network allow; three things it lacks, or cannot calibrate for the MI250X, put them above
the paper's. GPU kernels are 22B $k22, 175B $k175 and 1T $k1t of the iteration:

1. *Kernel speed.* The MI250X's kernel table comes from an architecture model
   (platforms/kernels/archmodel.py: macro tiles, waves, split-k and HBM for GEMMs,
   FlashAttention-2's blocks for attention), validated on the H200's measured table (GEMMs of
   training shapes within 5-6% on average) and grounded in the MI250X's published figures:
   rocBLAS 32768^3 on Frontier with every GCD busy sets the GEMM mainloop at 65.6% of peak
   (125.7 TFLOPS; the single-GCD best shape, 147, is not what a busy node sustains), CK's
   FlashAttention forward sets attention's efficiency, BabelStream (1.35 TB/s) the memory-bound
   kernels (docs/validation/kernels.md). Kernel times 20% longer give 22B $g22%, 175B $g175%,
   1T $g1t% (section 6).
2. *What is not modelled at all:* host time beyond the H200 machine's eager PyTorch figures
   (carried over, ASSUMED: DeepSpeed's hooks, host-device synchronisation at every pipeline
   step and before the optimizer), data loading, and the backward pass of FlashAttention-2 on
   ROCm 5.7, which nothing publishes (the model takes one early CK port's backward / forward
   ratio). Each can only lower real throughput.
3. *Layouts and batch.* The paper's final layouts and batches are not published; the presets
   are assumptions. 22B is the furthest off (the paper: 73.5 TFLOPS per GCD), and trainsim's
   own search finds layouts faster still ($b22%), so no layout explains it: the factor of
   about $f22 must be per-GPU speed (items 1 and 2), larger for 22B than for the others, which
   the model has no MI250X measurement to show.

Collectives follow RCCL 2.21.5's own tuning model (its tuning model 3, for 8-GCD MI250X nodes
with 4 NICs: per-step latencies, bandwidth ratios and size corrections;
docs/validation/collectives.md). Against the wire model before it, the presets moved by under a
point: the tensor-parallel all-reduces stay bound by the node ring's single xGMI links, which
RCCL drives at 36 of their 50 GB/s, and RCCL's model prefers its tree there. The searches
moved more: ZeRO-3 no longer ranks first for 175B and 1T, because DeepSpeed gathers each
weight matrix on its own and each gather over 512-1,536 ranks pays RCCL's ring latency (about
12 ms at 1,536 GCDs: a 6 us step per GCD and a 19.8 us step per node).

None of these is fitted: the kernel model's parameters come from the architecture and from
kernel microbenchmarks, none from a training run, and
the gaps stay marked in tests/validation/claims.tsv with trainsim's figures. 1T once sat
inside its band (36.26%), for the wrong reason: its 3,072-GCD point was slowed by traffic
between dragonfly groups held to their direct cables (the weak-scaling paragraph below).

**Weak scaling: both within their bands (1T: $w1t%).** Every replica does the same work and
the data-parallel all-reduce grows only as (N-1)/N, so weak scaling stays near 100% as long as
the network carries what crosses the dragonfly's groups (128 nodes each). 1T's pipeline
stages are spread over the data-parallel replicas (Megatron's rank order: TP fastest, then
DP, then PP), so every replica's hop between two stages crosses the same pair of groups at
once. With minimal routing a group pair has its 4 direct cables (100 GB/s), and the 3,072-GCD
point reaches only $wmin% of the 512-GCD point's FLOP/s per GCD (the contrast run, routing:
minimal). Slingshot routes adaptively: traffic between two groups also takes non-minimal
paths through the others, each byte on two global cables. The model (sim/network/route.h)
gives each group a pool of its 292 global cables and each group pair the direct cables plus
half of the rest (3.7 TB/s), the Valiant bound for such adversarial traffic (Kim et al.,
ISCA'08); docs/validation/network.md checks it against the cabling. Until this was modelled
the 1T weak claim was a known gap (92.12%). Section 8 runs both series to the whole machine.

**Strong scaling** (section 4) is governed by the 1F1B bubble: at a fixed batch, more
data-parallel replicas leave fewer microbatches per pipeline, and the bubble (p - 1)/m grows
(1T, 64 stages: 1,536 microbatches per pipeline at 1,024 GCDs, 512 at 3,072; 175B, 16
stages: 768 at 256 GCDs, 192 at 1,024). 1T over 1,536 -> 3,072 scales at $s1tc% (the paper:
87.05%), which is the bubble alone: (1 + 63/1,024) / (1 + 63/512) = 94.5%. It sat inside its
band before non-minimal routing was modelled, for the wrong reason: the 4-cable group pairs
slowed the 3,072-GCD point. 175B over 512 -> 1,024 scales better than the paper ($s175%), and
still $s175w% over 256 -> 1,024 (1T over 1,024 -> 3,072: $s1t%). The paper's base count and
batch are not published; costs that do not shrink as GCDs are added (per-iteration framework
work, the optimizer step's host side, data loading) lower real strong scaling and are not
modelled (item 2 above), and choosing a base point to land in the band would be fitting.

**Memory** (section 5): trainsim counts Adam's second moment, which the paper's 14 B per
parameter leaves out.
TEXT
}

{
  cat <<'TEXT'
# trainsim against the Frontier study

Generated by `docs/validation/frontier.sh` (do not edit by hand); every number below is
measured by that run. The study: Dash et al., "Optimizing Distributed Training on Frontier for
Large Language Models", ISC 2024, arXiv:2312.12705 (facts in ../shared/REFERENCE.md section 1).
Its "GPU" is one GCD (half an MI250X, 191.5 TFLOPS bf16 peak); its % of peak is
Megatron-DeepSpeed's hardware-FLOPs formula (recomputation counted), as trainsim's
`megatron_percent`. The platform is `platforms/frontier.yaml`: every compute and
network parameter comes from hardware documents or microbenchmarks, none from the paper's
percentages. The paper does not publish its final layouts or batch sizes; trainsim's presets
(`workloads/gpt-*.yaml`) are assumed starting points, and `trainsim search` looks for the best
layout as the authors' hyperparameter search did.
TEXT
  echo
  echo "Runs use the \`$fid\` fidelity (aggregate collectives, those inside a node priced in closed"
  echo "form: within 0.6% of the default on these presets, docs/performance.md)."
  echo
  echo "## 1. The claims against issue 6's bands"
  echo
  echo "Checked by \`ctest -L validation\` (tests/validation/: the same runs, the same figures)."
  echo "Bands: % of peak within 15% relative of the paper; weak scaling >= 95%; strong scaling"
  echo "within 5 percentage points."
  echo
  echo "| claim | paper | trainsim | band | verdict |"
  echo "|---|---|---|---|---|"
  awk '!/^#/ && NF { print $1 }' tests/validation/claims.tsv | while read -r c; do
    claim_load "$c"
    v=$(claim_measure "$work/claims")
    echo "| $c | $CLAIM_PAPER% | $v% | $(claim_band_text) | $(claim_verdict "$v") |"
  done
  echo
  echo "Where the claims come from in trainsim: % of peak at the presets (22B: TP2 PP4 DP8 on 64"
  echo "GCDs; 175B: TP8 PP16 DP8 on 1,024; 1T: TP8 PP64 DP6 on 3,072); weak scaling 175B 128 ->"
  echo "1,024 GCDs and 1T 512 -> 3,072 (batch grown with the GCDs); strong scaling over a factor"
  echo "of 2 ending at the paper's largest count at the preset batch (the paper gives neither its"
  echo "base count nor its batch; section 4 shows wider ranges)."
  echo
  echo "## 2. The best layout found"
  echo
  echo "\`trainsim search WORKLOAD --gpus N --top 3 --fidelity $fid\`: every layout estimated"
  echo "analytically, the 3 fastest simulated; the best simulated one is shown."
  echo
  echo "| model | GCDs | preset layout: % of peak | best found | its % of peak | paper | candidates |"
  echo "|---|---|---|---|---|---|---|"
  for m in 22b 175b 1t; do
    row=$(best_of_search "$work/search-$m/search.csv")
    summary=$(grep -m1 ' candidates: ' "$work/search-$m.log" | sed 's/\.$//')
    echo "| ${m^^} | ${preset_gpus[$m]} | $(fmt "$(col "$(peak_csv $m)" megatron_percent)")% |" \
      "$(layout_of "$row") | $(fmt "$(cut -d, -f15 <<<"$row")")% | $(paper_peak $m)% | $summary |"
  done
  echo
  echo "## 3. Weak scaling"
  echo
  echo "GPT-175B, TP8 PP16, global batch 192 per 128 GCDs:"
  echo
  series_table "$work/claims/175b-weak/scale.csv"
  echo
  echo "GPT-1T, TP8 PP64, global batch 512 per 512 GCDs:"
  echo
  series_table "$work/claims/1t-weak/scale.csv"
  echo
  echo "## 4. Strong scaling"
  echo
  echo "GPT-175B, global batch 1,536:"
  echo
  series_table "$work/175b-strong-wide/scale.csv"
  echo
  echo "GPT-1T, global batch 3,072:"
  echo
  series_table "$work/1t-strong-wide/scale.csv"
  echo
  echo "## 5. Memory: the paper's \"at least 14 TB\" for 1T"
  echo
  echo "The paper counts 14 B per parameter (2 B bf16 weight, 4 B gradient, 4 B fp32 weight, 4 B"
  echo "momentum). trainsim's model (\`trainsim memory workloads/gpt-1t.yaml\`):"
  echo
  echo '```'
  sed -n '/^model states/,$p' "$work/memory-1t.log"
  echo '```'
  echo
  echo "The paper leaves out Adam's second moment (4 B per parameter), which mixed-precision Adam"
  echo "keeps (Rajbhandari et al., ZeRO, K = 12 B of optimizer state). The preset runs"
  echo "Megatron-DeepSpeed, whose ZeRO-1 (DeepSpeed's stage_1_and_2.py) keeps the gradient in bf16"
  echo "and shards an fp32 copy of it with the optimizer (Megatron-LM's own optimizer: an fp32"
  echo "main_grad, 18 B). With $(grep -m1 'one copy' "$work/memory-1t.log" | sed 's/.*one copy: //; s/ B.parameter.*//') B/parameter the model states alone need at least"
  echo "$(awk -v b="$(grep -m1 'one copy' "$work/memory-1t.log" | sed 's/.*= //; s/ TB//')" \
    'BEGIN { printf "%.0f", b * 1e12 / (64 * 1073741824) + 0.5 }') GCDs of 64 GiB (the paper: 219 with 14 B)."
  echo
  echo "## 6. Sensitivity to the assumed parameters"
  echo
  echo "The MI250X's kernel table is MODELLED (platforms/kernels/archmodel.py, grounded in the"
  echo "GCD's published GEMM and attention figures), and the NICs' delivered bandwidth is the network"
  echo "figure a real run would miss most. % of peak at each preset with every kernel time x0.8 or"
  echo "x1.2, with no kernel table at all (the roofline: GEMM ceiling 125.7 TFLOPS x tile and wave"
  echo "efficiency, HBM bandwidth, 2 us a kernel, no host time), and with the NICs' bandwidth"
  echo "changed by 20%:"
  echo
  echo "| model | base | kernel times x0.8 | x1.2 | roofline, no table | NIC bandwidth x0.8 | x1.2 |"
  echo "|---|---|---|---|---|---|---|"
  for m in 22b 175b 1t; do
    base=$(col "$(peak_csv $m)" megatron_percent)
    line="| ${m^^} | $(fmt "$base")%"
    for v in "${sens[@]}"; do
      x=$(col "$work/sens-$m-$v/scale.csv" megatron_percent)
      line+=" | $(fmt "$x")% ($(pct_of "$x" "$base"))"
    done
    echo "$line |"
  done
  echo
  echo "## 7. Where trainsim and the paper differ, and why"
  echo
  c22="$work/claims/22b/scale.csv" c175="$work/claims/175b-weak/scale.csv" c1t="$work/claims/1t-weak/scale.csv"
  echo "Time shares of one iteration at the presets (compute + recompute = GPU kernels):"
  echo
  echo "| model | compute | recompute | TP comm | PP comm | DP comm | bubble | idle |"
  echo "|---|---|---|---|---|---|---|---|"
  for m in 22b 175b 1t; do
    f=$(peak_csv $m)
    echo "| ${m^^} | $(share "$f" compute_s) | $(share "$f" recompute_s) | $(share "$f" tp_comm_s) |" \
      "$(share "$f" pp_comm_s) | $(share "$f" dp_comm_s) | $(share "$f" bubble_s) | $(share "$f" idle_s) |"
  done
  echo
  differences
  echo
  echo "## 8. Weak scaling to the whole machine"
  echo
  echo "GPT-22B (TP2 PP4, from 64 GCDs) and GPT-1T (TP8 PP64, from 512 GCDs) with the global batch"
  echo "grown with the GCDs, up to all 75,264 GCDs (9,408 nodes). The series take about a minute"
  echo "(22B: node play with a hand-over, one actor per node until ZeRO-1's collectives) and seven"
  echo "(1T: node play; docs/performance.md), so \`docs/validation/weak_full.sh 22b|1t\` keeps"
  echo "them in docs/validation/data/ and this page reads them: efficiency is the first point's"
  echo "iteration time over each point's (the same work per GCD), at the default fidelity; wall"
  echo "time, memory and actors (the ranks with an actor from the start) are what the simulation"
  echo "cost on one core of the development machine. Part of the loss with size is the slowest"
  echo "GCD's (platform gpu.speed_spread: every rank's compute at the slowest of n GCDs' speed)."
  for m in 22b 1t; do
    f=docs/validation/data/weak-full-$m.txt
    echo
    if [ ! -f "$f" ]; then
      echo "${m^^}: not run yet (\`docs/validation/weak_full.sh $m\`)."
      continue
    fi
    echo "${m^^} ($(sed -n '1s/^# //p' "$f")):"
    echo
    echo "| GCDs | iteration | efficiency | wall | peak memory | actors |"
    echo "|---|---|---|---|---|---|"
    awk '/^#/ { next }
         / GCDs / && !/failed/ {
           for (i = 1; i <= NF; i++) if ($i == "GCDs") n = $(i - 1)
           it = $NF; if (!base) base = it
           printf "| %\047d | %.2f s | %.2f%% | %.0f s | %\047d MiB | %\047d |\n", n, it, 100 * base / it, $(NF - 7), $(NF - 6), $(NF - 2)
         }
         / GCDs / && /failed/ { for (i = 1; i <= NF; i++) if ($i == "GCDs") n = $(i - 1)
           sub(/.*failed: /, ""); printf "| %\047d | %s | | | | |\n", n, $0 }' "$f"
  done
  echo
  echo "## 9. Other published Frontier measurements"
  echo
  echo "docs/validation/frontier-published.md (\`docs/validation/frontier_published.py\`, a minute)"
  echo "runs every other Frontier training throughput found with its configuration published: FORGE's"
  echo "GPT-NeoX runs (Yin et al., SC'23) of 1.4B to 175B on 8 to 1,024 GCDs, with their software"
  echo "stack (GPT-NeoX on DeepSpeed 0.7.3, ROCm 5.x, attention without flash). None sets a value."
  f=docs/validation/frontier-published.md
  if [ -f "$f" ]; then
    echo "As last generated: $(grep -m1 'rows within' "$f" | tr -s ' ')"
  fi
  echo "AxoNN (arXiv:2502.08145), ORBIT (arXiv:2404.14712) and arXiv:2501.04266 publish figures"
  echo "without the model, batch or layout behind them; that page lists them."
} >"$page.tmp"
mv "$page.tmp" "$page" # whole or not at all
echo "frontier.sh: wrote $page" >&2
