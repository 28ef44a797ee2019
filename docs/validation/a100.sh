#!/usr/bin/env bash
# Regenerates docs/validation/a100.md: GPT-3 and GPT-2 models trained on 8 x A100 80GB by the
# FlashAttention authors (Dao-AILab/flash-attention, training/README.md; figures as read in
# ../shared/CALIBRATION-SOURCES.md 2.b) against `trainsim run` on platforms/dgx-a100.yaml.
# Validation only: nothing here sets a parameter.
#   docs/validation/a100.sh            (after a build; about a minute)
set -euo pipefail
cd "$(dirname "$0")/../.."
TRAINSIM=${TRAINSIM:-build/trainsim}
[ -x "$TRAINSIM" ] || { echo "a100.sh: $TRAINSIM not found: build first" >&2; exit 2; }
page=docs/validation/a100.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The repository's training configs (training/configs/experiment/pile/gpt3{s,m,l,xl}-flash.yaml,
# gpt3-2.7B-flash-hdim128.yaml) set the micro-batch by the GPU's memory: on 80 GB (nvidia-smi's
# 81,920 MiB / 1000 = 82, not below 80) 32, 16, 16, 8 and 4; gpt3l, gpt3xl and 2.7B (which
# inherits gpt3xl's) train with DDPStrategyZero1, DDP with PyTorch's ZeroRedundancyOptimizer.
# They train under PyTorch Lightning's `trainer.precision: bf16` (experiment/pile/base.yaml), its
# native automatic mixed precision: fp32 weights, each linear layer's weight and bias cast to bf16
# at every forward (flash_attn/ops/fused_dense.py, FusedDenseFunc.forward), the bf16 weight
# gradients cast back and accumulated into the fp32 .grad: `training.autocast: true`.
# name layers hidden heads global-batch(sequences of 2,048) micro-batch published-tokens/s zero
cases=("gpt3-125m 12 768 12 256 32 1310000 0"
       "gpt3-355m 24 1024 16 256 16 503000 0"
       "gpt3-760m 24 1536 16 256 16 245000 1"
       "gpt3-1.3b 24 2048 16 512 8 169000 1"
       "gpt3-2.7b 32 2560 20 512 4 85000 1")
# The stack as the repository's GPT configs ran it (gpt3s-flash.yaml, which the others build on):
# plain PyTorch (flash_attn/models/gpt.py under Lightning) with its own fused kernels
# (fused_dropout_add_ln, fused_dense_gelu_dense; the loss CrossEntropyLossApex, experiment/pile/
# base.yaml), the vocabulary padded to a multiple of 8 (pad_vocab_size_multiple: 8: 50,264).
FA_STACK="{framework: pytorch, attention: flash1, fused_kernels: [dropout_add_layer_norm, dense_gelu_dense, cross_entropy]}"
# The same runs described with fewer of those kernels, each step adding one (the table below
# the main one): Megatron's stack (as until 2026-12-07), plain PyTorch, then the loss, the
# layer norm and the MLP.
STEPS=("{attention: flash1}|50257"
       "{framework: pytorch, attention: flash1}|50264"
       "{framework: pytorch, attention: flash1, fused_kernels: [cross_entropy]}|50264"
       "{framework: pytorch, attention: flash1, fused_kernels: [dropout_add_layer_norm, cross_entropy]}|50264")
# predict NAME LAYERS HIDDEN HEADS BATCH MBS ZERO STACK VOCAB [SEQ PRECISION]: "tokens/s peak-bytes"
predict() {
  cat >"$work/$1.yaml" <<YAML
name: $1
model: {num_layers: $2, hidden_size: $3, num_attention_heads: $4, seq_length: ${10:-2048}, vocab_size: $9, attention_dropout: 0.1}
training: {global_batch_size: $5, micro_batch_size: $6, precision: ${11:-bf16}, optimizer: adam, autocast: true}
parallelism: {tensor: 1, pipeline: 1, zero_stage: $7, recompute: none, dp_bucket_size: 25MB}
stack: $8
YAML
  if "$TRAINSIM" run "$work/$1.yaml" --platform platforms/dgx-a100.yaml --gpus 8 --quiet \
    --out "$work/$1" >/dev/null 2>&1; then
    echo "$(sed -n 's/.*"tokens_per_s": \([0-9.e+-]*\).*/\1/p' "$work/$1/result.json" | head -1)" \
      "$(sed -n 's/.*"peak_bytes": \([0-9.e+-]*\).*/\1/p' "$work/$1/result.json" | head -1)" \
      "$(sed -n 's/.*"fits": \([a-z]*\).*/\1/p' "$work/$1/result.json" | head -1)"
  else # refused as out of memory: the peak from trainsim memory
    "$TRAINSIM" memory "$work/$1.yaml" --platform platforms/dgx-a100.yaml --gpus 8 |
      awk '/^peak: / { printf "0 %.0f false\n", $2 * 2^30 }'
  fi
}
# summary ROWS FIELD: the mean and largest absolute difference of a table's percent column
summary() {
  printf '%s' "$1" | awk -F'|' -v f="$2" '{ gsub(/[%+ ]/, "", $f); x = $f + 0; d = x < 0 ? -x : x; s += d; if (d > m) m = d; n++ }
    END { printf "Mean absolute difference %.1f%%, largest %.1f%%.\n", s / n, m }'
}
rows=""
steps=""
n=0
for c in "${cases[@]}"; do
  read -r name layers hidden heads batch mbs published zero <<<"$c"
  n=$((n + 1))
  echo "a100.sh: case $n of ${#cases[@]}: $name" >&2
  read -r tps gib _ <<<"$(predict "$name" "$layers" "$hidden" "$heads" "$batch" "$mbs" "$zero" \
    "$FA_STACK" 50264)"
  rows+=$(awk -v n="$name" -v b="$batch" -v m="$mbs" -v p="$published" -v t="$tps" -v g="$gib" \
    -v z="$zero" 'BEGIN { printf "| %s | %d | %d | %s | %.0fk | %.0fk | %+.1f%% | %.1f GiB |\n", n, b * 2048 / 1e3, m, z ? "ZeRO-1" : "DDP", p / 1e3, t / 1e3, 100 * (t / p - 1), g / 2^30 }')$'\n'
  line="| $name |"
  i=0
  for step in "${STEPS[@]}"; do
    i=$((i + 1))
    read -r t _ <<<"$(predict "$name-step$i" "$layers" "$hidden" "$heads" "$batch" "$mbs" "$zero" \
      "${step%|*}" "${step#*|}")"
    line+=$(awk -v p="$published" -v t="$t" 'BEGIN { printf " %+.1f%% |", 100 * (t / p - 1) }')
  done
  line+=$(awk -v p="$published" -v t="$tps" 'BEGIN { printf " %+.1f%% |", 100 * (t / p - 1) }')
  steps+="$line"$'\n'
done
# GPT-2 at sequence 1,024 on OpenWebText (training/configs/experiment/owt/gpt2{s,m,l,xl}-flash.yaml:
# the same kernels as gpt3s-flash.yaml, Lightning's `precision: 16`, fp16 automatic mixed
# precision with a loss scaler; global batch 512; on 80 GB micro-batches of 64, 64, 32, 16, the
# large and xl models with DDPStrategyZero1). Published: training speed in TFLOPS a GPU (the
# README's figure assets/gpt2_training_efficiency.jpg: Megatron's formula x 3/4, model FLOPs);
# trainsim's tokens per second in the same formula, the vocabulary 50,257 in both.
# name layers hidden heads micro-batch published-TFLOPS zero
gpt2=("gpt2-small 12 768 12 64 147 0"
      "gpt2-medium 24 1024 16 64 159 0"
      "gpt2-large 36 1280 20 32 170 1"
      "gpt2-xl 48 1600 25 16 164 1")
gpt2_rows=""
for c in "${gpt2[@]}"; do
  read -r name layers hidden heads mbs published zero <<<"$c"
  echo "a100.sh: $name" >&2
  read -r tps gib _ <<<"$(predict "$name" "$layers" "$hidden" "$heads" 512 "$mbs" "$zero" \
    "$FA_STACK" 50264 1024 fp16)"
  read -r old _ <<<"$(predict "$name-megatron" "$layers" "$hidden" "$heads" 512 "$mbs" "$zero" \
    "${STEPS[0]%|*}" "${STEPS[0]#*|}" 1024 fp16)"
  gpt2_rows+=$(awk -v n="$name" -v l="$layers" -v h="$hidden" -v m="$mbs" -v p="$published" \
    -v t="$tps" -v o="$old" -v g="$gib" -v z="$zero" 'BEGIN {
      f = 72 * l * h * h * (1 + 1024 / (6 * h) + 50257 / (16 * l * h)) / 8 / 1e12
      printf "| %s | %d | %s | %.0f | %.1f | %+.1f%% | %.1f GiB | %+.1f%% |\n", n, m,
        z ? "ZeRO-1" : "DDP", p, t * f, t * f / p * 100 - 100, g / 2^30, o * f / p * 100 - 100 }')$'\n'
done
# The README's Hugging Face bars: transformers' eager GPT2LMHeadModel (the *-hf configs)
HF_STACK="{framework: pytorch, attention: unfused, gelu: eager_tanh, score_divisions: 2, causal_mask: where}"
hf=("gpt2-small 12 768 12 512 8 0 35 1024 fp16"
    "gpt2-medium 24 1024 16 512 4 0 41 1024 fp16"
    "gpt2-large 36 1280 20 512 2 1 46 1024 fp16"
    "gpt2-xl 48 1600 25 512 1 1 51 1024 fp16"
    "gpt3-125m 12 768 12 256 8 0 25 2048 bf16"
    "gpt3-355m 24 1024 16 256 4 0 29 2048 bf16"
    "gpt3-760m 24 1536 16 256 2 0 46 2048 bf16"
    "gpt3-1.3b 24 2048 16 512 2 1 63 2048 bf16"
    "gpt3-2.7b 32 2560 32 512 1 1 OOM 2048 bf16")
hf_rows=""
for c in "${hf[@]}"; do
  read -r name layers hidden heads batch mbs zero published seq prec <<<"$c"
  echo "a100.sh: $name-hf" >&2
  read -r tps gib fits <<<"$(predict "$name-hf" "$layers" "$hidden" "$heads" "$batch" "$mbs" "$zero" \
    "$HF_STACK" 50257 "$seq" "$prec")"
  read -r plain _ <<<"$(predict "$name-hf-plain" "$layers" "$hidden" "$heads" "$batch" "$mbs" \
    "$zero" "{framework: pytorch, attention: unfused}" 50257 "$seq" "$prec")"
  hf_rows+=$(awk -v n="$name" -v l="$layers" -v h="$hidden" -v m="$mbs" -v p="$published" \
    -v t="$tps" -v o="$plain" -v g="$gib" -v z="$zero" -v s="$seq" -v pr="$prec" -v f="$fits" 'BEGIN {
      k = 72 * l * h * h * (1 + s / (6 * h) + 50257 / (16 * l * h)) / 8 / 1e12
      if (p == "OOM") {
        printf "| %s | %d | %s | %d | %s | out of memory | %s | - | %.1f GiB | - |\n", n, s, pr, m,
          z ? "ZeRO-1" : "DDP", f == "true" ? "fits (wrong)" : "does not fit", g / 2^30
        exit
      }
      printf "| %s | %d | %s | %d | %s | %.0f | %.1f | %+.1f%% | %.1f GiB | %+.1f%% |\n", n, s, pr, m,
        z ? "ZeRO-1" : "DDP", p, t * k, t * k / p * 100 - 100, g / 2^30, o * k / p * 100 - 100 }')$'\n'
done
{
  echo "# trainsim against GPT-3 training on 8 x A100 80GB"
  echo
  echo "Generated by \`docs/validation/a100.sh\`; do not edit. Published: the FlashAttention authors'"
  echo "training of GPT-3 models on one node of 8 A100 80GB SXM4 (400 W) with NVLink, bf16,"
  echo "FlashAttention, sequence 2,048 (Dao-AILab/flash-attention, training/README.md). Predicted:"
  echo "\`trainsim run\` on \`platforms/dgx-a100.yaml\`, data parallelism 8, as the repository's GPT"
  echo "configs ran (training/configs/experiment/pile/gpt3s-flash.yaml, which the others build on):"
  echo "plain PyTorch with the repository's own fused kernels (\`framework: pytorch\`,"
  echo "\`fused_kernels: [dropout_add_layer_norm, dense_gelu_dense, cross_entropy]\`, below), the"
  echo "vocabulary padded to 50,264 (pad_vocab_size_multiple: 8), gradients all-reduced in 25 MB"
  echo "buckets during the backward pass (PyTorch DDP's"
  echo "default bucket_cap_mb). The micro-batches and optimizers are the repository's training"
  echo "configs' on an 80 GB GPU (training/configs/experiment/pile/: 32, 16, 16, 8, 4; ZeRO-1 from"
  echo "760M up, PyTorch's ZeroRedundancyOptimizer, priced as Megatron's distributed optimizer:"
  echo "a reduce-scatter of the gradients and an all-gather of the updated fp32 weights, where"
  echo "it all-reduces and broadcasts each rank's shard, under 1% of a step here); until"
  echo "2026-12-05 they were ASSUMED (16, 8, 8, 8, 4, no ZeRO: mean difference 5.9%). They train"
  echo "under PyTorch Lightning's bf16 automatic mixed precision (\`training.autocast: true\`: fp32"
  echo "weights cast to bf16 at every forward, their gradients cast back and added to fp32"
  echo "ones; earlier on 2026-12-05 priced as bf16 weights with Megatron's fused accumulation: mean"
  echo "difference 5.8%, 2.7B +7.8%, 1.3B +5.3%). The"
  echo "platform carries the A100's measured GPU-to-GPU spread (1.05%, Perlmutter's fleet: the"
  echo "slowest of the 8 paces each step, 1.5% slower than the typical one)."
  echo "Nothing here set a parameter. The A100's kernel table is the H200's carried over by the"
  echo "datasheet rates (its GEMMs at the H200's boost clock since 2026-12-06: the A100's own power"
  echo "limit is not modelled, ASSUMED), but for flash attention, set from FlashAttention-2's"
  echo "published A100 benchmark (platforms/kernels/derive.py, docs/validation/kernels.md)."
  echo
  echo "| model | batch (k tokens) | micro-batch | optimizer | published tokens/s | trainsim | difference | peak memory |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
  echo
  summary "$rows" 8
  echo
  echo "The figures were published on 2022-11-29 (the repository's commit 4a6eaa9f), before"
  echo "FlashAttention-2 (July 2023): the runs used FlashAttention-1's kernels, described since"
  echo "2026-12-06 as \`attention: flash1\` (FlashAttention-1 at its published speed against"
  echo "FlashAttention-2's on the A100). Described as FlashAttention-2 they were too fast (mean 7.8%,"
  echo "760M +15.5%, with the A100's GEMMs at the H200's boost clock; 3.7% with the H200's"
  echo "power-limited GEMM times carried over, before that). FlashAttention-1 compiles its kernels"
  echo "for head dimensions 32, 64 and 128 and runs any other on the next wider one"
  echo "(csrc/flash_attn/fmha_api.cpp at 4a6eaa9f): 760M's heads of 96 cost what heads of 128 do,"
  echo "modelled since 2026-12-07 (it slows 760M by about 5%). Not priced: the runs' attention"
  echo "dropout (transformers.GPT2Config's attn_pdrop, 0.1, drawn inside FlashAttention's kernel):"
  echo "the A100 has no measured figure for it (\`gpu.attention_dropout\`; trainsim warns), and the"
  echo "published kernel speeds that price these runs' attention were timed without dropout. At the"
  echo "H100's measured cost a score (platforms/dgx-h100.yaml) times 1.72, the H100's 132 SMs at"
  echo "1.98 GHz over the A100's 108 at 1.41 GHz (boost clocks; the random draws are integer work,"
  echo "ASSUMED to scale so), the steps would take 1.1% (2.7B) to 3.9% (355M) longer (tried on"
  echo "2026-12-07, not kept), every row further below the published: what makes them slow is not"
  echo "found (the A100's GEMMs are the H200's carried over, the part the A100 has least evidence for)."
  echo
  echo "## The repository's own kernels"
  echo
  echo "The configs switch on three kernels of the repository's beside FlashAttention, each"
  echo "replacing several of PyTorch's: \`fused_dropout_add_ln\` (csrc/layer_norm, from Apex's"
  echo "FastLayerNorm: the branch's dropout, the residual add and the next LayerNorm in one kernel"
  echo "over an fp32 residual, and one backward kernel that also sums the residual's two"
  echo "gradients), \`fused_dense_gelu_dense\` (csrc/fused_dense_lib: the bias and GeLU in FC1's"
  echo "cuBLASLt epilogue, which saves the pre-activation, and GeLU's gradient in FC2's"
  echo "data-gradient epilogue: no GeLU kernels) and the loss \`CrossEntropyLossApex\` (csrc/xentropy:"
  echo "Apex's softmax cross-entropy on the bf16 logits, its gradient written in place). trainsim"
  echo "prices each by the bytes it must move, streamed at the rate measured for it against a plain"
  echo "add moving as many bytes: \`bench/device/fa_fused_kernels.py\` builds the repository's kernels"
  echo "at that commit and times them on an H100 (\`bench/device/h100_fa_fused_kernels.csv\`, 8,192-"
  echo "65,536 rows of 768-2,560): the layer norm forward at 0.72 of the add's rate, its backward 0.84,"
  echo "the loss 0.53 forward and 0.73 backward (medians; workloads/cost.c), ASSUMED alike on the A100"
  echo "against its own add. The epilogue-fused MLP adds only its pre-activation's bytes to the GEMMs,"
  echo "as on the A100 its authors tuned it for (ASSUMED): on the H100, with CUDA 13's cuBLASLt, it ran"
  echo "1.1-2.9x the plain GEMMs' time, so trainsim refuses it on other GPUs. These rows are in bf16;"
  echo "the GPT-2 rows below trained in fp16, which the A100 runs at bf16's rate (312 TFLOPS each,"
  echo "NVIDIA's datasheet), priced from the same table since 2026-12-07 (by the roofline before:"
  echo "-4.9%, -3.7%, +3.3%, +2.0%). The kernels matter most where the"
  echo "model is narrow: at 125M a layer's PyTorch LayerNorm backward alone (its weight-gradient"
  echo "reduction over 65,536 rows of 768) took 7% of the layer, and the loss over 65,536 x 50,264"
  echo "logits in fp32 (plain F.cross_entropy) about a sixth of the step. Each column below adds one to"
  echo "the description, against the published throughput:"
  echo
  echo "| model | Megatron's kernels (the description until 2026-12-07) | plain PyTorch | + fused cross-entropy | + dropout_add_layer_norm | + dense_gelu_dense (the runs) |"
  echo "|---|---|---|---|---|---|"
  printf '%s' "$steps"
  echo
  echo "The fp32 residual adds 2 bytes a value to each norm's kept input: the peak memory column"
  echo "counts it."
  echo
  echo "## GPT-2 at sequence 1,024"
  echo
  echo "The README's other figure (assets/gpt2_training_efficiency.jpg): GPT-2 small to xl on"
  echo "OpenWebText on the same node, trained by the configs training/configs/experiment/owt/"
  echo "gpt2{s,m,l,xl}-flash.yaml (the same kernels, fp16 automatic mixed precision with a loss"
  echo "scaler, global batch 512, micro-batches of 64, 64, 32, 16 on 80 GB, ZeRO-1 for large and"
  echo "xl), in TFLOPS a GPU by Megatron's formula x 3/4; trainsim's tokens per second put in the"
  echo "same formula. The Megatron-LM bars of both figures ran configurations the repository does"
  echo "not give (not compared); its Hugging Face bars are, below."
  echo
  echo "| model | micro-batch | optimizer | published TFLOPS/GPU | trainsim | difference | peak memory | with Megatron's kernels |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s' "$gpt2_rows"
  echo
  summary "$gpt2_rows" 7
  echo
  echo "## The Hugging Face baseline"
  echo
  echo "Both figures' first bars: the repository's *-hf configs (training/configs/experiment/owt/"
  echo "gpt2{s,m,l,xl}-hf.yaml, pile/gpt3{s,m,l,xl}-hf.yaml and gpt3-2.7B-hf.yaml) train"
  echo "transformers' GPT2LMHeadModel (configs/model/gpt2-hf.yaml: scale_attn_by_inverse_layer_idx,"
  echo "no reordered upcast) at the unpadded vocabulary of 50,257 with torch.nn.CrossEntropyLoss,"
  echo "the same trainer and recipe (fp16 for GPT-2, bf16 for GPT-3, automatic mixed precision),"
  echo "micro-batches of 8, 4, 2, 1 (GPT-2) and 8, 4, 2, 2, 1 (GPT-3), ZeRO-1 where the config"
  echo "switches PyTorch's ZeroRedundancyOptimizer on. Described as Hugging Face's eager code runs"
  echo "(modeling_gpt2.py, GPT2Attention._attn, GPT2MLP; activations.py, NewGELUActivation):"
  echo "\`stack: $HF_STACK\`: the scores divided apart by sqrt(head_dim) and by"
  echo "layer_idx + 1, gelu_new as eight eager operations, and what plain PyTorch under autocast"
  echo "the causal mask by torch.where, the heads' copies into torch.matmul (measured on an H100:"
  echo "\`bench/device/hf_head_copies.py\`), and what plain PyTorch under autocast already implies"
  echo "(the softmax in fp32, LayerNorm and the residual stream in fp32, the output layer's GEMMs at"
  echo "cuBLAS's fallback for 50,257-wide rows)."
  echo "The last column describes the same runs as plain PyTorch's attention and F.gelu only. The"
  echo "same code measured on an H100 (docs/validation/h100.md, \`bench/device/hf_gpt2_steps.py\`)"
  echo "checks the eager GeLU's and the divisions' prices and the memory (within 1.4%)."
  echo "Not modelled: the fp32 embeddings."
  echo
  echo "| model | seq | precision | micro-batch | optimizer | published TFLOPS/GPU | trainsim | difference | peak memory | without the eager GeLU and divisions |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  printf '%s' "$hf_rows"
  echo
  summary "$(printf '%s' "$hf_rows" | grep -v 'out of memory')" 9
  echo
  echo "The README marks GPT-3 2.7B's Hugging Face run out of memory (micro-batch 1, ZeRO-1, heads"
  echo "of 80); trainsim's verdict is in the row. What it counts there: fp32 weights and gradients"
  echo "(4 + 4 bytes a parameter), Adam's moments sharded over 8, the weights' bf16 copies, a"
  echo "layer's scores kept as fp32 probabilities, their bf16 copy and the dropout mask (7 bytes a"
  echo "score, 32 heads x 2,048^2 a layer), and since 2026-12-07 DDP's reducer buckets: Lightning's"
  echo "\`strategy: ddp\` wraps the model in DistributedDataParallel (under ZeroRedundancyOptimizer"
  echo "too) with gradient_as_bucket_view off, its default, so the buckets hold a second copy of every"
  echo "gradient (4 bytes a parameter here, 10 GiB for 2.7B; \`stack.gradient_as_bucket_view\`)."
  echo "One rank of that config measured on an H100 80GB with today's PyTorch without DDP ($(head -1 bench/device/h100_hf_zero1_memory.csv | sed 's/^# bench\/device\/hf_gpt2_steps.py --zero1-memory: device //; s/;.*//');"
  echo "\`bench/device/hf_gpt2_steps.py --zero1-memory\`: the transcription, AdamW over"
  echo "ZeroRedundancyOptimizer's largest share of the parameters, two microbatches a step): $(awk -F, '$1 == "gpt3-2.7b" { printf "%.2f GiB allocated at the peak, %.2f GiB reserved, %s", $11, $12, $13 }' bench/device/h100_hf_zero1_memory.csv)"
  echo "(GPT-3 1.3B's row: $(awk -F, '$1 == "gpt3-1.3b" { printf "%.2f and %.2f GiB", $11, $12 }' bench/device/h100_hf_zero1_memory.csv)), where trainsim without the buckets said 69.8"
  echo "GiB, fits; with them, on 8 GPUs, it does not fit, as the README's run did not (its buckets"
  echo "are not measured here: multi-GPU machines are not lent)."
} >"$page.tmp"
mv "$page.tmp" "$page"
echo "a100.sh: wrote $page" >&2
