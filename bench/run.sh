#!/usr/bin/env bash
# bench/run.sh: wall time, peak memory, simulated events and the predicted iteration time of
# the reference runs (issue 7's cases). Run after building (./build.sh test or cmake --build
# build); timings on shared machines vary, so compare ratios measured in one run.
#   bench/run.sh             22B / 64, 175B / 1,024 and 1T / 3,072 GCDs at the default
#                            fidelity, and the analytic estimate of one configuration (~1 min)
#   bench/run.sh quick       22B / 64 only
#   bench/run.sh fidelities  the three runs at each fidelity: hybrid, aggregate, analytic
#                            (~5 min: aggregate plays every in-node collective)
#   bench/run.sh targets     every case of issues 7 and 33: adds 1T and 22B weak-scaled to the
#                            whole machine (75,264 GCDs: 1T ~6 min, ~0.4 GiB with node play; 22B
#                            ~1 min, ~1.7 GiB with node play then every rank; by default both
#                            decline periodic play, their steady states not repeating), both
#                            again with --periodic (1-3 min), the DeepSeek-V3 preset on 2,048
#                            H800s (~10 s, rail play; again with NCCL's all-to-all) and search
#                            for 175B on 1,024 GCDs
# bench/scale_cost.sh prints how the cost grows with the machine; bench/platform_build.sh the
# cost of building the platform alone.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
mode=${1:-default}
case $mode in
  default | quick | fidelities | targets) ;;
  *) echo "usage: bench/run.sh [quick|fidelities|targets]" >&2; exit 2 ;;
esac
cases=("22B, 64 GCDs|workloads/gpt-22b.yaml --gpus 64 --tp 2 --pp 4 --micro-batch-size 2")
if [ "$mode" != quick ]; then
  cases+=("175B, 1,024 GCDs|workloads/gpt-175b.yaml --gpus 1024 --tp 8 --pp 16"
          "1T, 3,072 GCDs|workloads/gpt-1t.yaml --gpus 3072 --tp 8 --pp 64")
fi
fidelities=("")
[ "$mode" = fidelities ] && fidelities=(hybrid aggregate analytic)
bench_header
for f in "${fidelities[@]}"; do
  for c in "${cases[@]}"; do
    read -r -a args <<<"${c#*|}"
    [ -n "$f" ] && args+=(--fidelity "$f")
    bench_row "${c%%|*}${f:+, $f}" "${args[@]}"
  done
done
if [ "$mode" = targets ]; then # 1T's replica (TP8 PP64, 512 GCDs) 147 times, batch 512 each
  bench_row "1T weak, 75,264 GCDs" workloads/gpt-1t.yaml --gpus 75264 --tp 8 --pp 64 \
    --global-batch-size 75264 --force
  # issue 33's 22B case: TP 2 PP 4, batch 1,024 per 64 GCDs, on the whole machine (~1 min: node
  # play through the pipeline phase, every rank for ZeRO-1's collectives)
  bench_row "22B weak, 75,264 GCDs" workloads/gpt-22b.yaml --gpus 75264 \
    --global-batch-size $((1024 * 75264 / 64)) --force
  # the same with Megatron's 160 MB gradient buckets reduced in the last backward pass (~3 min:
  # the nodes hand over at their first bucket; about 69 buckets a rank then play rank by rank)
  bench_row "22B weak, 160 MB buckets" workloads/gpt-22b.yaml --gpus 75264 \
    --global-batch-size $((1024 * 75264 / 64)) --force --dp-bucket-size 160MB
  # the same two with periodic play kept (p + 16 microbatches played, the rest carried on at
  # their steady rate; its error against the rows above: docs/performance.md)
  bench_row "1T weak, periodic" workloads/gpt-1t.yaml --gpus 75264 --tp 8 --pp 64 \
    --global-batch-size 75264 --force --periodic
  bench_row "22B weak, periodic" workloads/gpt-22b.yaml --gpus 75264 \
    --global-batch-size $((1024 * 75264 / 64)) --force --periodic
  # issue 33's MoE case: DeepSeek-V3 as trained, DeepEP's all-to-alls over 8 nodes (~10 s: rail play)
  # (--ignore-memory: with NCCL's buffers trainsim finds it 0.5 GiB over the H800's memory,
  # docs/validation/presets.md; the bench times the play, not the verdict)
  bench_row "DeepSeek-V3, 2,048 H800" workloads/deepseek-v3.yaml --platform platforms/h800.yaml \
    --ignore-memory
  # the same with NCCL's all-to-all (~8 s: through PXN, rail-aligned, so rail play applies)
  bench_row "DeepSeek-V3, NCCL all-to-all" workloads/deepseek-v3.yaml \
    --platform platforms/h800.yaml --set model.moe_token_dispatcher_type=alltoall --ignore-memory
fi
# The analytic estimate of one configuration, as search makes it for every candidate (schedule,
# playback, metrics; the platform is loaded once): search prints its time on stderr.
search_row() {
  local label=$1 out wall rss
  shift
  bench_step "search $label"
  out=$(mktemp -d)
  /usr/bin/time -f '%e %M' -o "$out/time" "$BIN" search "$@" --quiet --out "$out" >/dev/null \
    2>"$out/err"
  read -r wall rss <"$out/time"
  printf '%-20s %9.1f %8d  %s\n' "$label" "$wall" $((rss / 1024)) \
    "$(sed -n 's/^search: //p' "$out/err")"
  rm -rf "$out"
}
if [ "$mode" = default ] || [ "$mode" = targets ]; then
  printf '\n%-20s %9s %8s  %s\n' search wall_s rss_MiB "what it did"
  search_row "22B, 64 GCDs" workloads/gpt-22b.yaml --gpus 64 --top 1
  if [ "$mode" = targets ]; then
    search_row "175B, 1,024 GCDs" workloads/gpt-175b.yaml --gpus 1024
  fi
fi
