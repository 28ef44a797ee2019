/* cost: FLOPs, HBM bytes and time of the work one GPU does for one microbatch.
 *
 * Compute model (DESIGN.md): time = max(flops / (peak x efficiency(shape)), bytes / HBM
 * bandwidth) + kernel launch, per kernel. GEMM efficiency = the platform's measured ceiling x
 * the tile and wave quantisation of the output: an M x N output needs ceil(M/tm) ceil(N/tn)
 * tiles of tm x tn, which run in ceil(tiles / CUs) waves, so the efficiency is
 * ceiling x M N / (waves x CUs x tm x tn).
 *
 * A transformer layer (Megatron-LM, tensor parallel t) is kept as pieces, in forward order
 *   ln1 | attn = QKV, attention core, projection | bda1 | ln2 | mlp = FC1, GeLU, FC2 | bda2
 * (bda = bias-dropout-add), which the schedule joins around the TP collectives:
 *   no sequence parallelism:
 *     forward  [ln1 attn] AR [bda1 ln2 mlp] AR [bda2]
 *     backward [bda2' mlp'] AR [ln2' bda1' attn'] AR [ln1']
 *   sequence parallelism (Korthikanti et al. 2022): layer norms and bda's work on s/t of the
 *   sequence, and each all-reduce becomes a reduce-scatter plus an all-gather:
 *     forward  [ln1] AG [attn] RS [bda1 ln2] AG [mlp] RS [bda2]
 *     backward [bda2'] AG [mlp'] RS [ln2' bda1'] AG [attn'] RS [ln1']
 * Matrix FLOPs per layer and microbatch sum to Megatron's 24 b s h^2 (1 + s/6h) forward for
 * f = 4h (Narayanan et al. SC'21, eq. 3). */
#ifndef TS_COST_H
#define TS_COST_H

#include "gpu.h"
#include "kernels.h"
#include "power.h"
#include "workload.h"

typedef struct ts_cost {
  double flops; /* matrix FLOPs (what Megatron's formulas count) */
  double bytes; /* HBM traffic */
  double time_s;
  int n_kernels;
  int n_by_source[TS_KERNEL_SRC_COUNT]; /* kernels priced from the table, interpolated, model */
  /* The kernels' time by power class (power.h); time_s less their sum is the host's gaps. Kept
   * by this module's pricing, for the power limit's mix; not tracked past it. */
  double class_s[TS_POWER_CLASS_COUNT];
} ts_cost;

/* Pieces of one layer, one microbatch, one TP rank (see the diagram above). */
typedef struct ts_layer_cost {
  ts_cost ln1, attn, bda1, ln2, mlp, bda2; /* forward */
  ts_cost ln1_bwd, attn_bwd, bda1_bwd, ln2_bwd, mlp_bwd, bda2_bwd; /* backward */
  ts_cost attn_core_fwd; /* the attention core alone: what selective recompute redoes */
  ts_cost attn_core_bwd; /* its backward (part of attn_bwd) */
  /* What recompute: op re-runs before the layer's backward (workload.h, TS_RECOMPUTE_OP). */
  ts_cost op_recompute_fwd;
  /* The MLP's forward up to FC2's input (FC1 and the activation): what full recomputation
   * re-runs of it where it stops early (ts_workload_recompute_stops_early). */
  ts_cost mlp_recompute_fwd;
  /* Multi-head latent attention's latent norms, up projections and rotary part (forward; the
   * rotary part also in attn_core_fwd): what recompute module mla_up_proj redoes. */
  ts_cost mla_up_fwd, rope_fwd;
  double cp_kv_bytes; /* context parallelism: the keys and values all cp ranks gather (0: cp 1) */
  /* ... and what its backward moves, as an all-gather's buffer: the keys and values again and
   * their gradients passed around the ring (Transformer Engine's in the model's precision,
   * PyTorch's in fp32, at each of cp steps) */
  double cp_bwd_bytes;
  /* The GEMMs next to the tensor-parallel collectives, as shares of their piece's time (what
   * tp_comm_overlap hides the collectives under): forward QKV and projection of attn, FC1 and
   * FC2 of mlp; backward the projection's and QKV's input gradients of attn_bwd, FC2's and
   * FC1's of mlp_bwd (first and last of each). */
  double share_attn_in, share_attn_out, share_mlp_in, share_mlp_out;
  double share_attn_bwd_in, share_attn_bwd_out, share_mlp_bwd_in, share_mlp_bwd_out;
  double tp_comm_bytes; /* the b x s x h buffer of each TP collective (0 when tp = 1) */
  /* The weight gradients' share of attn_bwd and mlp_bwd (their GEMMs and main_grad
   * accumulations): what a zero-bubble schedule runs apart as W, the rest being B. */
  double wgrad_share_attn, wgrad_share_mlp;
} ts_layer_cost;

/* The MLP of a mixture-of-experts layer, one microbatch, one rank: Megatron-Core's MoELayer
 * with the alltoall token dispatcher (token_dispatcher.py), in forward order
 *   [router, permute] A2A(ep) AG(etp) [experts] RS(etp) A2A(ep) [unpermute]
 * and, with a shared expert, a dense MLP beside it: AG(tp) [shared] RS(tp). The backward pass
 * runs the mirror image. With tensor parallelism (which needs sequence parallelism here) each
 * rank routes its s/t of the sequence; each token goes to moe_topk experts, so a rank sends
 * b s k / t token copies and, after the etp gather, its n_experts / ep experts process etp
 * times that. Load imbalance and capacity scale both by ts_workload_moe_token_factor: the
 * busiest rank sets the pace, since the combine all-to-all waits for it. */
typedef struct ts_moe_cost {
  ts_cost router, router_bwd; /* router GEMM, scores and top-k, token permutation */
  ts_cost experts, experts_bwd; /* the local experts' FC1, activation and FC2 */
  ts_cost experts_act; /* their activation function (forward): what moe_act redoes */
  ts_cost unpermute, unpermute_bwd; /* each token's expert outputs, weighted and summed */
  ts_cost shared, shared_bwd; /* the shared expert (nothing when there is none) */
  double dispatch_bytes; /* each all-to-all's buffer on a rank (0 when ep = 1) */
  /* The forward dispatch's: in FP8 with DeepEP (flex) under fp8, 1 byte a value and a 4-byte
   * scale a 128 (DeepSeek-AI 2024, 3.3.2; DeepEP's FP8 dispatch, bf16 combine). */
  double dispatch_fwd_bytes;
  double etp_bytes; /* the all-gather and reduce-scatter over etp (0 when etp = 1) */
  double shared_tp_bytes; /* the shared expert's TP all-gather and reduce-scatter */
  double tokens; /* token copies the rank's experts process */
  /* The weight gradients' share of router_bwd, experts_bwd and shared_bwd (ts_layer_cost's). */
  double wgrad_share_router, wgrad_share_experts, wgrad_share_shared;
} ts_moe_cost;

/* Zero for a dense model. */
void ts_cost_moe(const ts_workload *wl, const ts_gpu *gpu, ts_moe_cost *out);

/* Work outside the layers: embedding on the first stage, output layer and loss on the last. */
typedef struct ts_edge_cost {
  ts_cost embed_fwd, embed_bwd;
  double embed_allreduce_bytes; /* forward all-reduce of the vocab-parallel embedding */
  ts_cost head_fwd, head_bwd; /* final LN, logits, vocab-parallel cross-entropy */
  double loss_allreduce_bytes; /* each of the 3 small cross-entropy all-reduces */
  double head_allreduce_bytes; /* backward all-reduce of the logits' input gradient */
  /* The output layer's weight gradient's share of head_bwd (embed_bwd is all weight
   * gradient). */
  double wgrad_share_head;
  /* A multi-token-prediction module's entry (workload.h, mtp_layers): the norms of the
   * embedding and of the hidden state, their concatenation and eh_proj (2h -> h, column
   * parallel); its weight gradient's share of mtp_bwd; the bytes of its tensor-parallel
   * gathers (the 2h-wide input along the sequence with sequence parallelism, the output's
   * slices), a reduce-scatter of as many in the backward. */
  ts_cost mtp_fwd, mtp_bwd;
  double wgrad_share_mtp, mtp_gather_bytes;
} ts_edge_cost;

/* The roofline model (the fallback where no table prices a kernel). Efficiency (0..1] of a
 * batch of M x N-output GEMMs on gpu, ceiling included. */
double ts_cost_gemm_efficiency(const ts_gpu *gpu, long batch, long m, long n);
/* One GEMM kernel (batched): C[M,N] = A[M,K] B[K,N], operands of elem_bytes. */
ts_cost ts_cost_gemm(const ts_gpu *gpu, double peak_flops_per_s, long batch, long m, long n, long k,
                     double elem_bytes);
/* One memory-bound kernel moving `bytes`. */
ts_cost ts_cost_memory_bound(const ts_gpu *gpu, double bytes);
/* a + b (times, bytes, FLOPs and kernels add). */
ts_cost ts_cost_add(ts_cost a, ts_cost b);

void ts_cost_layer(const ts_workload *wl, const ts_gpu *gpu, ts_layer_cost *out);

/* One kernel of a layer as the cost model prices it (GPU time, before the host's). */
typedef struct ts_kernel_row {
  char piece[24]; /* "qkv", "attention", "ln1, ln2", ... */
  char kernel[32]; /* a kernel table's name ("gemm_dgrad"), or a model-only kernel's */
  bool is_other_pass; /* the other pass's kernel priced it (Megatron's unpermutation runs the
                       * permutation's backward, and its backward the permutation) */
  int n_shape;
  double shape[4]; /* the kernel's axes (kernels.h), or its elements for a model-only one */
  int count; /* times per layer and microbatch */
  double time_s, flops, bytes;
  ts_kernel_source source;
} ts_kernel_row;
typedef struct ts_kernel_log {
  ts_kernel_row *rows; /* owned; free() it */
  int n, cap;
} ts_kernel_log;
/* Appends the kernels of one layer (forward and backward) of wl on gpu to *log, at the clock
 * the GPU's power limit sets for its work (power.h). */
void ts_cost_layer_kernels(const ts_workload *wl, const ts_gpu *gpu, ts_kernel_log *log);
/* The host's CPU time issuing one layer's forward (backward) pass of n kernels, as the cost
 * model prices it from sw (the measured layer's time per kernel up to its kernel count, an eager
 * operation's past it; collective calls not included); 0 without software figures. */
double ts_cost_layer_host_s(const ts_software *sw, int n, bool backward);
/* The power limit over the GPU's work (power.h; the window: a microbatch's layers, its share of
 * the embedding, output layer and optimizer, and the host's gaps): false where the GPU has no
 * power model; else the throttle x that work runs at and each power class's time over its
 * time at the boost clock. */
bool ts_cost_power_limit(const ts_workload *wl, const ts_gpu *gpu, double *throttle,
                         double stretch[TS_POWER_CLASS_COUNT]);
void ts_cost_edges(const ts_workload *wl, const ts_gpu *gpu, ts_edge_cost *out);
/* FSDP's own GPU work around its collectives, as compute-stream time in seconds a parameter of
 * the unit: after each all-gather and before each reduce-scatter (0 where ZeRO-3 is not
 * PyTorch's FSDP or nothing is sharded). */
typedef struct ts_fsdp_copies {
  double after_gather_s, before_reduce_s;
} ts_fsdp_copies;
ts_fsdp_copies ts_cost_fsdp_copies(const ts_workload *wl, const ts_gpu *gpu);
/* Optimizer step over n_params parameters held by this rank (mixed-precision Adam: gradient
 * norm, clipping, the fused step on the fp32 masters, the copy to the low-precision weights,
 * zeroing the gradient buffers). */
ts_cost ts_cost_optimizer(const ts_workload *wl, const ts_gpu *gpu, double n_params);

/* Whether the output layer's GEMMs run cuBLAS's fallback for rows off 16 bytes (an unpadded
 * vocabulary, such as GPT-2's 50,257 under plain PyTorch, on a GPU whose table is NVIDIA's). */
bool ts_cost_vocab_misaligned(const ts_workload *wl, const ts_gpu *gpu);

/* Whether stack.attention flash1 can be priced on this GPU: FlashAttention-1's speed is published
 * beside FlashAttention-2's for the A100 and the H100 (and GPUs of its compute) only. */
bool ts_cost_flash1_priced(const ts_gpu *gpu);

/* How the kernels of one layer (forward and backward), the embedding, the head and the
 * optimizer step over the first stage's parameters were priced: out[source] kernels each. */
void ts_cost_kernel_sources(const ts_workload *wl, const ts_gpu *gpu,
                            long out[TS_KERNEL_SRC_COUNT]);

/* Parameters held by one TP rank of one pipeline stage (embeddings on the first stage, final
 * LN and - when pp > 1 - the tied word-embedding copy on the last). */
double ts_cost_stage_params(const ts_workload *wl, long stage);
/* The experts' share of ts_cost_stage_params (what expert data parallelism reduces). */
double ts_cost_stage_expert_params(const ts_workload *wl, long stage);
/* Parameters of one dense transformer layer held by one tensor-parallel rank. */
double ts_cost_layer_params(const ts_workload *wl);
/* Parameters of layer `layer` (of the model) held by one rank: returned, those data
 * parallelism reduces; in *expert (unless NULL), the experts' (reduced over expert data
 * parallelism; 0 in a dense layer). */
double ts_cost_layer_params_at(const ts_workload *wl, long layer, double *expert);
/* The same for one multi-token-prediction module: its transformer layer, eh_proj and three
 * norms (the embedding's and the hidden state's, and its final one). */
double ts_cost_mtp_params(const ts_workload *wl, double *expert);
/* The word-embedding and output-layer copies that stage `stage`'s MTP modules need beside what
 * the stage holds (Megatron-Core's GPTModel builds both where mtp_process is set). */
double ts_cost_mtp_copy_params(const ts_workload *wl, long stage);
/* The data-parallel gradient bucket a rank fills, in bytes: dp_bucket_bytes, or under FSDP
 * keeping its weights (ts_workload_zero) one FSDP unit's, a transformer block's fp32
 * gradients. */
double ts_cost_bucket_bytes(const ts_workload *wl);
/* Parameters of the whole model (unpadded vocabulary, tied embeddings counted once). */
double ts_cost_model_params(const ts_workload *wl);

/* The peak a run's MFU and fractions of peak are taken against: that of the precision its GEMMs
 * run in (the FP8 peak with training.fp8, whose GEMMs may run faster than the BF16 peak: against
 * that, an FP8 run's MFU could pass 100%). */
double ts_cost_peak_flops(const ts_workload *wl, const ts_gpu *gpu);
/* FLOPs per iteration. Model FLOPs: 72 B s l h^2 (1 + s/6h + V/12lh) (Narayanan et al. SC'21,
 * eq. 3 without recomputation; also PaLM's MFU convention), V unpadded. */
double ts_cost_model_flops(const ts_workload *wl);
/* The part of ts_cost_model_flops that is the attention core (Q K^T and P V over the whole s x s
 * square, three passes). Megatron-Core's num_floating_point_operations counts half of it (the
 * causal mask), so its model FLOPs are ts_cost_model_flops - this / 2. */
double ts_cost_attention_core_flops(const ts_workload *wl);
/* Megatron-DeepSpeed's reported figure (the Frontier paper's metric): 24 k B s l h^2 (1 + s/6h
 * + V/16lh), k = 4 with activation checkpointing (full recompute) else 3, V padded. */
double ts_cost_megatron_flops(const ts_workload *wl);

/* Bytes per element of the training precision. */
double ts_cost_elem_bytes(ts_precision p);

#endif
