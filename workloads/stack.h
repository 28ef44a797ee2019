/* stack: the software that ran a training step, as a documented choice.
 *
 * Two runs of one model on one machine differ by their software: Dash et al. ran
 * Megatron-DeepSpeed on ROCm 5.7 with FlashAttention-2 ported to Frontier; FORGE (Yin et al.,
 * SC'23) ran GPT-NeoX with DeepSpeed 0.7.3 on ROCm 5.1-5.4 and attention as batched GEMMs
 * around a fused softmax. A workload's `stack` section names the framework, the attention
 * implementation and the fused kernels that ran (each framework's defaults below, with their
 * sources), and the version of the collective library the platform runs (its tuning constants
 * changed between releases: sim/engine/ccl.h). */
#ifndef TS_STACK_H
#define TS_STACK_H

#include <stdbool.h>

/* The training framework, for what differs in how it runs a step: its default kernel fusions,
 * and the cross-entropy's memory (the Megatron family's works in place on one fp32 copy of the
 * logits: 2 + 4 bytes per logit; PyTorch's F.cross_entropy on fp32 logits also keeps the
 * log-softmax: 2 + 4 + 4). megatron-deepspeed (Microsoft's Megatron-DeepSpeed) and gpt-neox
 * (EleutherAI's) are Megatron-LM's model code under DeepSpeed's engine. */
typedef enum ts_framework {
  TS_FRAMEWORK_MEGATRON,
  TS_FRAMEWORK_PYTORCH,
  TS_FRAMEWORK_MEGATRON_DEEPSPEED,
  TS_FRAMEWORK_GPT_NEOX,
  TS_FRAMEWORK_COUNT
} ts_framework;
extern const char *const ts_framework_names[]; /* "megatron", "pytorch", "megatron-deepspeed",
                                                  "gpt-neox" */

/* The attention core: FlashAttention-2 (one kernel a pass; ROCm's port on AMD GPUs); unfused:
 * Q K^T and P V as batched GEMMs around a softmax over the whole score matrix; or sdpa:
 * F.scaled_dot_product_attention with PyTorch's own choice of backend, what a plain PyTorch
 * model calls: cuDNN's fused attention on sm90 and sm100 GPUs (PyTorch's sdp_utils.cpp,
 * check_prefer_cudnn_attention, with cuDNN 9; measured as the choice on an H200 with PyTorch
 * 2.11, bench/device/h200_sdpa_backends.csv), the flash backend elsewhere. The kernel table's
 * sdpa_* tables price it; a GPU without them (PyTorch picks flash there) its flash_* tables.
 * sdpa_flash: SDPA running its flash backend, PyTorch's choice on Hopper while cuDNN's attention
 * was opt-in (2.5.1 to 2.8: pytorch/pytorch#138522 put it last; #162073 made it the default of
 * sm90 and sm100 again for 2.9, with cuDNN 9.15 and later), as torchtitan's 2024 H100 runs
 * had it: the flash tables price it, and grouped-query attention repeats K and V first as with
 * sdpa. flash1: FlashAttention 1.x (2022), the flash tables' time at FlashAttention-1's published
 * speed against FlashAttention-2's on the same GPU (workloads/cost.c, flash1_slowdown); MPT's
 * Triton kernel (llm-foundry's flash_attn_triton.py, `attn_impl: triton`) is described so: its
 * author's docstring finds its forward + backward "slightly slower" than FlashAttention-1's CUDA
 * kernels on the A100. */
typedef enum ts_attention {
  TS_ATTENTION_FLASH2,
  TS_ATTENTION_UNFUSED,
  TS_ATTENTION_SDPA,
  TS_ATTENTION_SDPA_FLASH,
  TS_ATTENTION_FLASH1,
  TS_ATTENTION_COUNT
} ts_attention;
extern const char *const ts_attention_names[]; /* "flash2", "unfused", "sdpa", "sdpa_flash",
                                                  "flash1" */

/* How a plain PyTorch model computes RMSNorm (stack.rms_norm): F.rms_norm (functional, the
 * default: the kernel table's rms_norm tables) or torchtitan's RMSNorm of 2024 (eager_fp32:
 * x.float(), pow, mean, + eps, rsqrt, the product, type_as and the weight as eager operations;
 * its models/norms.py at 9dec370, norm_type rmsnorm), measured on an H100 at 1,005 us forward
 * and 2,339 us backward over 16,384 x 4,096 values against F.rms_norm's 68 and 160
 * (platforms/kernels/h100.yaml, rms_norm_fp32_*). */
typedef enum ts_rms_norm_impl { TS_RMS_NORM_FUNCTIONAL, TS_RMS_NORM_EAGER_FP32 } ts_rms_norm_impl;
extern const char *const ts_rms_norm_names[]; /* "functional", "eager_fp32" */

/* How a plain PyTorch model applies the rotary embedding (stack.rope): x cos + rotate_half(x)
 * sin (rotate_half, the default, Hugging Face's) or as a complex multiplication in fp32
 * (complex: Meta's Llama reference and torchtitan's apply_rotary_emb, view_as_complex of
 * x.float(), times the position's phase, view_as_real, type_as). */
typedef enum ts_rope_impl { TS_ROPE_ROTATE_HALF, TS_ROPE_COMPLEX } ts_rope_impl;
extern const char *const ts_rope_names[]; /* "rotate_half", "complex" */

/* How a plain PyTorch GeLU MLP computes GeLU (stack.gelu): F.gelu (functional, the default: one
 * kernel each way) or Hugging Face's gelu_new (eager_tanh: transformers' activations.py,
 * NewGELUActivation, GPT-2's `activation_function`: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
 * x^3))) as eight eager operations, whose autograd graph keeps four tensors and runs eleven
 * kernels backward; under autocast in fp32 from its pow on, on autocast's fp32 list: cost.c,
 * activation). Hugging Face's GPT-2 eager attention also divides its
 * scores apart (stack.score_divisions, workload.h): by a device scalar sqrt(head_dim), and by
 * layer_idx + 1 where GPT2Config's scale_attn_by_inverse_layer_idx is set (modeling_gpt2.py,
 * GPT2Attention._attn); elsewhere the scale rides in Q K^T's GEMM. */
typedef enum ts_gelu_impl { TS_GELU_FUNCTIONAL, TS_GELU_EAGER_TANH } ts_gelu_impl;
extern const char *const ts_gelu_names[]; /* "functional", "eager_tanh" */

/* How a plain PyTorch model's unfused attention applies the causal mask (stack.causal_mask):
 * scores.masked_fill(mask, -inf) (masked_fill, the default: nanoGPT's, and Megatron's
 * FusedScaleMaskSoftmax.forward_torch_softmax; out of place, a copy and the fill, as the kernel
 * table's attention_mask points time it) or torch.where(mask, scores, min) (where: Hugging
 * Face's GPT2Attention._attn; one kernel, its bool mask broadcast, PyTorch's unvectorised path;
 * its gradient another where). */
typedef enum ts_causal_mask { TS_CAUSAL_MASK_MASKED_FILL, TS_CAUSAL_MASK_WHERE } ts_causal_mask;
extern const char *const ts_causal_mask_names[]; /* "masked_fill", "where" */

/* How a plain PyTorch GPT's unfused attention forms its heads and scores (stack.eager_attention;
 * the copies it makes: cost.c, eager_head_copies): matmul (the default: nanoGPT's and Hugging
 * Face GPT-2's: q, k, v split from the fused projection, viewed as heads and permuted, and
 * torch.matmul(q, k.transpose(-1, -2)), the scale apart) or baddbmm (Megatron's CoreAttention
 * written in plain PyTorch, as trainsim's own H200 steps ran it, bench/device/stack_steps.py: q,
 * k, v unbound from the projection viewed as (b, s, 3, heads, d), each folded by reshape, and
 * torch.baddbmm on k's transposed view with the scale as its alpha). */
typedef enum ts_eager_attention {
  TS_EAGER_ATTENTION_MATMUL,
  TS_EAGER_ATTENTION_BADDBMM
} ts_eager_attention;
extern const char *const ts_eager_attention_names[]; /* "matmul", "baddbmm" */

/* How a plain PyTorch SwiGLU MLP makes gate and up (stack.gate_up): one linear of twice the FFN
 * width whose output is chunked (fused, the default: the kernel table's Llama block, and
 * Megatron-Core's fused FC1), or two linears (separate: Hugging Face's gate_proj and up_proj,
 * torchtitan's w1 and w3): two GEMMs and their input gradients summed, and a SwiGLU backward
 * that writes two gradients instead of assembling one (measured on an H100: 394 against 1,008
 * us at 2^26 elements, platforms/kernels/h100.yaml swiglu_split_bwd, swiglu_bwd). */
typedef enum ts_gate_up { TS_GATE_UP_FUSED, TS_GATE_UP_SEPARATE } ts_gate_up;
extern const char *const ts_gate_up_names[]; /* "fused", "separate" */

/* Which library's linear layers run training.fp8 (stack.fp8_linear): Transformer Engine's
 * (te.Linear under fp8_autocast, the default: an FP8 copy of each weight cached for the
 * iteration, fused cast-transposes, the FP8 inputs kept for the backward), or torchao's
 * Float8Linear as torchtitan converts a model's linears (torchao.float8.convert_to_float8_training
 * with Float8LinearConfig's defaults, torchao eab345c, torchtitan 9dec370): dynamic tensorwise
 * scaling of the input, the weight and the output gradient, each an amax pass and a cast, at
 * every microbatch, under torch.compile (bench/device/float8_block.py). */
typedef enum ts_fp8_linear { TS_FP8_LINEAR_TE, TS_FP8_LINEAR_TORCHAO } ts_fp8_linear;
extern const char *const ts_fp8_linear_names[]; /* "transformer_engine", "torchao" */

/* Whose ring attention context parallelism runs (stack.cp_attention): Transformer Engine's
 * (transformer_engine, the default but under framework pytorch: Megatron-Core's and NeMo's), each
 * step's partial output corrected in place inside its kernels; or PyTorch's
 * (torch.distributed.tensor.experimental.context_parallel, torchtitan's; the default under
 * framework pytorch), whose Python loop (_templated_ring_attention, PyTorch 2.11) merges
 * each step's output and log-sum-exp into a running fp32 result with eager kernels
 * (_SDPAMerger), concatenates the keys and values at every step, and in its backward sums the
 * gradients in fp32 and passes the keys' and values' fp32 gradients rank to rank
 * (_AllToAllRotater) while all-gathering the keys and values again (ts_cost_layer). */
typedef enum ts_cp_attention { TS_CP_ATTENTION_TE, TS_CP_ATTENTION_PYTORCH } ts_cp_attention;
extern const char *const ts_cp_attention_names[]; /* "transformer_engine", "pytorch" */

/* PyTorch's CUDA caching allocator as configured (stack.allocator): its default, which carves
 * requests out of cached blocks and returns only wholly free segments to the driver, so that
 * free bytes split among segments in use can leave a large request unplaced; or expandable
 * segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), which map pages into one
 * growing segment. Measured on the H200 (bench/device/allocator.py, docs/validation/h200.md):
 * with expandable segments every run whose predicted peak fits ran; with the default, runs
 * within their largest allocation of the limit ran out of memory in 4 of 5 cases, and on an H100
 * two ran out 8.6 and 14.1 GiB below it. Where the run is a plain PyTorch one on one GPU
 * (ts_step_requests_supported) the default allocator is replayed on its requests to decide
 * wherever the bytes fit (caching_allocator.h); elsewhere the band is AT RISK. */
typedef enum ts_allocator { TS_ALLOCATOR_CACHING, TS_ALLOCATOR_EXPANDABLE } ts_allocator;
extern const char *const ts_allocator_names[]; /* "caching", "expandable" */

/* Kernel fusions a framework may run, each replacing several eager kernels by one:
 * masked_softmax: scale, causal mask and softmax (Megatron's scaled_upper_triang_masked_softmax);
 * bias_gelu: the first MLP GEMM's bias add and GeLU;
 * bias_dropout: bias, dropout and the residual add;
 * gradient_accumulation: the weight-gradient GEMM accumulates into the fp32 main_grad;
 * swiglu: SwiGLU's gate x up (Megatron-Core's bias_swiglu_fusion);
 * rope: the rotary embedding of Q and K (Megatron-Core's apply_rope_fusion);
 * cross_entropy (framework pytorch): flash-attn's fused cross-entropy
 *   (flash_attn.losses.cross_entropy.CrossEntropyLoss, a Triton kernel; llm-foundry's MPT
 *   default, `loss_fn: fused_crossentropy`), in place of F.cross_entropy on fp32 logits: it reads
 *   the low-precision logits once, keeps them with each row's log-sum-exp for its backward, and
 *   writes a low-precision gradient;
 * dropout_add_layer_norm (framework pytorch): flash-attn's fused_dropout_add_ln (its
 *   csrc/layer_norm, from Apex's FastLayerNorm), as its GPT runs it (flash_attn/models/gpt.py,
 *   prenorm, residual_in_fp32): the branch's dropout, the residual add and the next LayerNorm
 *   in one kernel over an fp32 residual stream, and one backward kernel that also adds the
 *   residual's two gradients;
 * dense_gelu_dense (framework pytorch): flash-attn's fused_dense_gelu_dense (csrc/fused_dense_lib,
 *   cuBLASLt): the bias and GeLU in the first MLP GEMM's epilogue, which also writes the
 *   pre-activation for the backward, and GeLU's gradient in the second GEMM's data-gradient
 *   epilogue, which reads it back: no GeLU kernels. */
typedef enum ts_fusion {
  TS_FUSE_MASKED_SOFTMAX,
  TS_FUSE_BIAS_GELU,
  TS_FUSE_BIAS_DROPOUT,
  TS_FUSE_GRADIENT_ACCUMULATION,
  TS_FUSE_SWIGLU,
  TS_FUSE_ROPE,
  TS_FUSE_CROSS_ENTROPY,
  TS_FUSE_DROPOUT_ADD_LAYER_NORM,
  TS_FUSE_DENSE_GELU_DENSE,
  TS_FUSION_COUNT
} ts_fusion;
extern const char *const ts_fusion_names[]; /* "masked_softmax", ... in enum order */

/* The fusions a framework runs unless told otherwise (a bit per ts_fusion). */
unsigned ts_framework_default_fusions(ts_framework fw);

/* The fusions of mask as a list for people ("masked_softmax, bias_gelu"; "none" for 0) into
 * buf of size n. */
void ts_fusions_describe(unsigned mask, char *buf, int n);

/* A release (a collective library's, DeepSpeed's) as major x 10000 + minor x 100 + patch (RCCL
 * 2.17.1 = 21701, DeepSpeed 0.3.16 = 316), parsed from "2.17.1" or "2.17" (patch 0); -1 when
 * text is not of that form or is 0.0.0. */
long ts_stack_parse_version(const char *text);
/* The version as text ("2.17.1") into buf of size n. */
void ts_stack_version_text(long version, char *buf, int n);

/* DeepSpeed's ZeRO-3 as its releases ran it (DeepSpeed's git history: stage3.py and
 * partition_parameters.py at v0.3.16, v0.5.5, v0.6.0 and v0.16.4):
 * - LIST (0.3.12-0.5.4, the 2021 releases): torch.cuda.synchronize() before every parameter's
 *   all-gather, into a tensor zeroed first (torch.zeros), and at the end of every submodule's
 *   fetch (only the last prefetched gather runs beside compute); gathers and reduce-scatters
 * through PyTorch's list API, for which DeepSpeed builds N views in Python and PyTorch copies each
 * of the N pieces apart (ProcessGroupNCCL's flatten-and-copy, PyTorch <= 1.9; a gather's copies
 * run on its stream once it ends, measured: schedule.c list_copy_gpu_s); one reduce-scatter
 * per parameter (or, without contiguous_gradients, the default to 0.4.2, each reduce bucket
 * flattened and all-reduced: workload.h); the small "persistent" parameters partitioned after
 * every backward, so every microbatch but a step's first gathers them one by one, and each step
 * ends re-gathering them all
 *   through a Python loop of a copy per parameter and rank (_allgather_params); from 0.3.15
 *   each fetched submodule's weights are read for a logged norm (param.norm(), then .item()).
 * - SYNCED (0.5.5-0.5.10, PR #1188): the same synchronisation and per-parameter
 *   reduce-scatters, but gathers into one flat tensor (_all_gather_base: PyTorch >= 1.9,
 *   ASSUMED present) and the step's re-gather one tiny all-gather per persistent parameter.
 * - COALESCED (0.6.0 on, PR #1453): no device-wide synchronisation, reduce-scatters per
 *   reduce bucket, parameters partitioned at the optimizer step only.
 * A version of 0 (not given) is the newest. */
typedef enum ts_deepspeed_path {
  TS_DEEPSPEED_LIST,
  TS_DEEPSPEED_SYNCED,
  TS_DEEPSPEED_COALESCED
} ts_deepspeed_path;
#define TS_DEEPSPEED_FIRST_ZERO3 312 /* 0.3.12, 2021-03-12 */
/* DeepSpeed's reduce_bucket_size (deepspeed/runtime/zero/config.py: 500,000,000 elements). */
#define TS_DEEPSPEED_BUCKET_ELEMS 5e8
ts_deepspeed_path ts_deepspeed_zero3_path(long version);

/* Whether fw runs PyTorch's own modules (not the Megatron family's). */
bool ts_framework_is_pytorch(ts_framework fw);

#endif
