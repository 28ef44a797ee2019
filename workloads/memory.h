/* memory: bytes one GPU holds during training, by category, per pipeline stage.
 *
 * Model states (per parameter held by the rank; Megatron-LM's distributed-optimizer table:
 * bf16/fp16 weights with fp32 gradients are 2 + 4 + 12 = 18 B, and ZeRO-1 / the distributed
 * optimizer shards the 12 B of fp32 master weight, momentum and variance over the d
 * data-parallel ranks: 6 + 12/d; ZeRO-2 shards the gradients too: 2 + 16/d; Rajbhandari et
 * al., SC'20). fp32 training keeps no master
 * copy: 4 + 4 + 8.
 *
 * Activations per layer and microbatch (Korthikanti et al. 2022, Table 2, tensor parallel t):
 * s b h (10 + 24/t + 5 a s/(h t)) bytes, or s b h (34/t + 5 a s/(h t)) with sequence
 * parallelism; flash attention never stores the s x s scores, dropping the last term;
 * selective recomputation drops it too; full recomputation keeps only the layer input, 2 s b h
 * (2 s b h / t with sequence parallelism), plus one layer's activations while it is
 * recomputed. Stage i of p holds min(p - i, m) microbatches in flight under 1F1B and all m
 * under GPipe; interleaved over v chunks, min(2 (p - i - 1) + (v - 1) p + 1, m v) chunks of
 * L / (p v) layers (its warm-up plus one), i.e. stage 0 holds p (1 + (p - 1) / (p v))
 * microbatches' worth (Korthikanti et al. section 4.2.3). The last stage also holds the fp32
 * logits, 4 s b V/t, of one microbatch (all m under GPipe) (Korthikanti et al. section 4.3).
 *
 * torch.optim's foreach Adam (training.adam_implementation: foreach) allocates at its step a list
 * as large as the second moments it updates (exp_avg_sq_sqrt, _multi_tensor_adam), after every
 * backward has freed its activations: a stage's peak is the passes' or the step's.
 *
 * DeepSpeed's ZeRO-1 and ZeRO-2 (frameworks megatron-deepspeed and gpt-neox; DeepSpeed's
 * deepspeed/runtime/zero/stage_1_and_2.py, read at v0.7.3 and v0.10.0) keep the gradients in the
 * model's precision, not fp32 (ZeRO-2: the rank's partition), shard an fp32 copy of the
 * partition's gradients with the fp32 master weight and moments (16 B / d), and reduce through
 * two buckets of reduce_bucket_size elements (overlap_comm; 5e8, DeepSpeed's default): 2 + 2 +
 * 16/d B a parameter, plus 2 x 5e8 x 2 B.
 *
 * ZeRO-3 / FSDP shards the weights too (2 + 4 + 12 = 18 B / d per parameter; DeepSpeed's
 * ZeRO-3 keeps its gradient partitions in the model's precision, 2 + 2 + 12, and casts a
 * sub-group of them to fp32 at its step, memory.c) and needs
 * communication buffers: FSDP two layers' gathered weights (the one computing and the one
 * prefetched) and one layer's fp32 gradients before their reduce-scatter; DeepSpeed the most
 * weights its trace holds gathered at once (zero3.h: kept between uses, in use, prefetched),
 * a reduce bucket in the model's precision and the largest weight's gradient. ZeRO-2 holds a
 * microbatch's gradients until their reduce-scatter: a bucket (dp_bucket_size), or the whole
 * stage's without one. Pipeline receive tensors are not counted; NCCL's own buffers live outside
 * PyTorch's allocator and lower what it can have (ccl_memory.h); RCCL's are not counted.
 */
#ifndef TS_MEMORY_H
#define TS_MEMORY_H

#include "workload.h"

typedef enum ts_mem_category {
  TS_MEM_WEIGHTS,
  TS_MEM_GRADIENTS,
  TS_MEM_OPTIMIZER,
  TS_MEM_ACTIVATIONS,
  TS_MEM_BUFFERS, /* communication buffers beyond the model states (see above) */
  TS_MEM_COUNT
} ts_mem_category;

extern const char *const ts_mem_category_names[]; /* "weights", ... */

typedef struct ts_memory {
  double bytes[TS_MEM_COUNT]; /* activations: at the peak of the forward and backward passes */
  /* What the optimizer step allocates for a while once every backward is done (no activation
   * live then): foreach Adam's square-root list; 0 for a fused step. */
  double step_bytes;
  double total_bytes; /* the larger of the passes' peak and the optimizer step's */
  /* The largest single allocation near the peak: the loss's fp32 logits, a layer's widest
   * output (FC1's), a mixture-of-experts layer's routed copies, ZeRO-3's largest gathered
   * weight (DeepSpeed: a parameter whole) or fp32 gradients (FSDP: a unit's reduce-scatter
   * input, whose gathered weights are the same elements in half the bytes). PyTorch's default
   * caching allocator needs it in one free piece, which fragmentation can deny (stack.h,
   * ts_allocator). */
  double largest_alloc_bytes;
  double microbatches_in_flight; /* of the whole stage: chunks in flight / v */
} ts_memory;

/* Footprint of any rank of pipeline stage `stage` (all TP and DP ranks of a stage match). */
void ts_memory_stage(const ts_workload *wl, long stage, ts_memory *out);

/* Bytes of model state per parameter, as the framework keeps them: the weight and the gradient
 * on every rank holding the parameter (before ZeRO-2/3 shard them), and what ZeRO-1 shards over
 * the data-parallel ranks (fp32 master weight, moments; DeepSpeed's fp32 gradient partition). */
typedef struct ts_state_bytes {
  double weight, gradient, sharded;
  bool is_deepspeed; /* DeepSpeed's ZeRO-1/2 accounting (above) */
} ts_state_bytes;
ts_state_bytes ts_memory_state_bytes(const ts_workload *wl);
/* Microbatch-chunks whose activations stage `stage` holds at its peak. */
long ts_memory_chunks_in_flight(const ts_workload *wl, long stage);
/* Activation bytes of one layer for one microbatch when its activations are all kept. */
double ts_memory_layer_activations(const ts_workload *wl);
/* The same for a mixture-of-experts layer. */
double ts_memory_moe_layer_activations(const ts_workload *wl);

/* Whether a stage that fits may still run out of memory in PyTorch's default caching
 * allocator: its peak lies within its largest allocation of the limit (measured on the H200:
 * docs/validation/h200.md, "Out of memory at the edge"). Never with expandable segments. */
bool ts_memory_fragmentation_risk(const ts_workload *wl, const ts_memory *m, double usable_bytes);

/* The most loaded stage (the first of equals; usually stage 0, with the most microbatches in
 * flight and the embedding, or the last, with the logits): its bytes, and its index into *stage
 * (may be NULL). Every stage is priced, so that the verdict is the per-stage table's. */
double ts_memory_peak(const ts_workload *wl, long *stage);

/* The layout with the fewest GPUs (then the lowest peak) whose every rank fits in what the
 * framework can allocate on gpu beside that layout's NCCL buffers (ccl_memory.h, ts_usable_bytes;
 * where ts_step_requests_blocks_fit replays the default caching allocator, with it),
 * keeping wl's batch, recomputation, ZeRO stage and schedule: tp dividing the heads, query
 * groups and FFN width, at most max_tp (a node); pp splitting the layers as the workload's
 * rule does (its first and last stages' own layer counts kept); dp such that
 * micro-batch x dp divides the global batch; at most max_gpus in all. Returns 0 and writes
 * *out (wl with tp, pp, dp and n_gpus set), or -1 when nothing fits. */
int ts_memory_smallest_layout(const ts_workload *wl, long max_tp, long max_gpus, const ts_gpu *gpu,
                              ts_workload *out);

#endif
