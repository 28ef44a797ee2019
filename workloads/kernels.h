/* kernels: kernel times measured on one GPU (a kernel table file), looked up by shape.
 *
 * A kernel table (format in platforms/README.md, "Kernel tables") holds, for each kernel kind
 * trainsim prices, times on a grid of shapes: GEMMs over (m, n, k), flash attention over
 * (batch x heads, sequence, head dim), memory-bound operations over their rows and columns or
 * elements, the optimizer over (hidden, layers). A lookup inside the grid interpolates
 * multilinearly in log space (log time against the logs of the axes), which is exact for
 * times that are power laws of the shape between two grid points; a point outside the grid,
 * or next to a point that was not measured, is a miss, and the cost model falls back to its
 * roofline there. The table also carries the measured CPU costs of the framework that ran the
 * kernels (ts_software).
 *
 * Tables are immutable once loaded and shared: ts_kernels_load returns the same table for the
 * same path for the life of the process.
 */
#ifndef TS_KERNELS_H
#define TS_KERNELS_H

#include "err.h"

typedef enum ts_kernel_kind {
  TS_KERNEL_GEMM_FWD, /* y[m,n] = x[m,k] W[n,k]^T + b */
  TS_KERNEL_GEMM_DGRAD, /* dx[m,n] = dy[m,k] W[k,n] */
  TS_KERNEL_GEMM_WGRAD, /* dW[n,m] = dy[k,n]^T x[k,m], and the bias gradient */
  TS_KERNEL_FLASH_FWD_CAUSAL,
  TS_KERNEL_FLASH_BWD_CAUSAL,
  TS_KERNEL_FLASH_FWD,
  TS_KERNEL_FLASH_BWD,
  TS_KERNEL_BGEMM_QK, /* attention without flash: S = Q K^T, (batch, seq, head_dim) */
  TS_KERNEL_BGEMM_AV, /* O = P V */
  TS_KERNEL_SOFTMAX_FWD,
  TS_KERNEL_SOFTMAX_BWD,
  TS_KERNEL_LAYER_NORM_FWD,
  TS_KERNEL_LAYER_NORM_BWD,
  TS_KERNEL_GELU_FWD,
  TS_KERNEL_GELU_BWD,
  TS_KERNEL_DROPOUT_ADD_FWD,
  TS_KERNEL_DROPOUT_ADD_BWD,
  TS_KERNEL_ADD_FWD,
  TS_KERNEL_CROSS_ENTROPY_FWD,
  TS_KERNEL_CROSS_ENTROPY_BWD,
  TS_KERNEL_EMBEDDING_FWD,
  TS_KERNEL_EMBEDDING_BWD,
  TS_KERNEL_GRAD_ACCUM,
  TS_KERNEL_CLIP_GRAD_NORM,
  TS_KERNEL_ADAM_FUSED,
  TS_KERNEL_MASTER_COPY,
  TS_KERNEL_ZERO_MAIN_GRAD,
  TS_KERNEL_ADAM_FOREACH, /* torch.optim.AdamW's default (foreach, not fused) */
  TS_KERNEL_AMP_UNSCALE, /* fp16 loss scaling: the inf/nan check and unscale of the gradients */
  TS_KERNEL_RMS_NORM_FWD, /* Llama blocks: (rows, cols) */
  TS_KERNEL_RMS_NORM_BWD,
  TS_KERNEL_SWIGLU_FWD, /* elements of the output */
  TS_KERNEL_SWIGLU_BWD,
  TS_KERNEL_ROPE_FWD, /* elements of Q or K rotated */
  TS_KERNEL_ROPE_BWD,
  TS_KERNEL_GEMM_FP8_FWD, /* C[m,n] = A[m,k] B[k,n] in FP8 (E4M3 x E4M3), bf16 out */
  TS_KERNEL_GEMM_FP8_BWD, /* the same, E5M2 gradient x E4M3 (dgrad and wgrad) */
  TS_KERNEL_ATTENTION_MASK_FWD, /* scores.masked_fill(causal mask): attention without the
                                   masked-softmax fusion, (rows, cols) as the softmax's */
  TS_KERNEL_ATTENTION_MASK_BWD,
  /* F.scaled_dot_product_attention with PyTorch's default backend, causal (stack.attention
   * sdpa): (batch x heads, seq, head_dim) as the flash tables */
  TS_KERNEL_SDPA_FWD_CAUSAL,
  TS_KERNEL_SDPA_BWD_CAUSAL,
  /* A MoE layer's experts as one grouped GEMM (torch._grouped_mm) over (experts, tokens per
   * expert, n, k): y[E m, n] = x[E m, k] W[E, k, n]; the input gradient with (n, k) the GEMM's
   * output width and reduction; the weight gradient dW[E, k, n], ragged in its reduction m. */
  TS_KERNEL_GROUPED_MM_FWD,
  TS_KERNEL_GROUPED_MM_DGRAD,
  TS_KERNEL_GROUPED_MM_WGRAD,
  /* The router after its gate GEMM (fp32 scores, top-k, normalisation, token counts) over
   * (tokens, experts, topk); the permutation of tokens to their experts and the weighted
   * unpermutation over (rows = tokens x topk, hidden). */
  TS_KERNEL_MOE_ROUTER_FWD,
  TS_KERNEL_MOE_ROUTER_BWD,
  TS_KERNEL_MOE_PERMUTE_FWD,
  TS_KERNEL_MOE_PERMUTE_BWD,
  TS_KERNEL_MOE_UNPERMUTE_FWD,
  TS_KERNEL_MOE_UNPERMUTE_BWD,
  /* Multi-head latent attention's core by SDPA (stack.attention sdpa): DeepSeek-V2/V3's
   * queries and keys of 128 + 64 and values of 128, over (batch x heads, seq). */
  TS_KERNEL_SDPA_MLA_FWD_CAUSAL,
  TS_KERNEL_SDPA_MLA_BWD_CAUSAL,
  /* FP8 GEMMs with block scaling (fp8_recipe blockwise), C[m,n] = A[m,k] B[k,n], E4M3: A in
   * 1 x 128 tiles and B in 128 x 128 blocks (forward, input gradient), or both in 1 x 128 tiles
   * (weight gradient) */
  TS_KERNEL_GEMM_FP8_BLOCK_FWD,
  TS_KERNEL_GEMM_FP8_BLOCK_WGRAD,
  /* torchtitan's RMSNorm in eager fp32 operations (stack.rms_norm eager_fp32), (rows, cols) */
  TS_KERNEL_RMS_NORM_FP32_FWD,
  TS_KERNEL_RMS_NORM_FP32_BWD,
  /* the rotary embedding as a complex multiplication in fp32 (stack.rope complex), elements */
  TS_KERNEL_ROPE_COMPLEX_FWD,
  TS_KERNEL_ROPE_COMPLEX_BWD,
  /* SwiGLU's backward with gate and up from two linears (stack.gate_up separate), elements */
  TS_KERNEL_SWIGLU_SPLIT_BWD,
  /* softmax over the last dim of fp32 scores, fp32 out (autocast's softmax of bf16 scores, after
   * their widening cast), (rows, cols) */
  TS_KERNEL_SOFTMAX_FP32_FWD,
  TS_KERNEL_COUNT
} ts_kernel_kind;

/* The table names in files ("gemm_fwd"), indexed by ts_kernel_kind; NULL-terminated. */
extern const char *const ts_kernel_names[];
/* Whether kind is an FP8 GEMM (priced against the FP8 peak). */
bool ts_kernel_is_fp8(ts_kernel_kind kind);
/* How many axes each kind has (1 to 4), and their names (NULL-terminated). */
int ts_kernel_n_axes(ts_kernel_kind kind);
const char *const *ts_kernel_axes(ts_kernel_kind kind);

/* Where a kernel's time came from; result.json counts each. */
typedef enum ts_kernel_source {
  TS_KERNEL_SRC_TABLE, /* a measured grid point */
  TS_KERNEL_SRC_INTERPOLATED, /* between measured grid points */
  TS_KERNEL_SRC_MODEL, /* the roofline model: no table, or outside its grid */
  /* beyond the grid's largest measured size along a kind's first axis (a batch of independent
   * problems, rows, elements, tokens, experts): the edge's time in proportion to the size; or a
   * GEMM below the grid's smallest size along some axes (workloads/cost.c, priced_at) */
  TS_KERNEL_SRC_EXTRAPOLATED,
  TS_KERNEL_SRC_COUNT
} ts_kernel_source;
extern const char *const ts_kernel_source_names[]; /* "table", "interpolated", "model",
                                                      "extrapolated" */

/* CPU time outside the kernels, as the framework that was measured spends it (eager PyTorch
 * issues each kernel from the host; the GPU waits when the host is slower). 0 = none. */
typedef struct ts_software {
  double cpu_layer_forward_s; /* host time of one transformer layer's forward */
  double cpu_layer_backward_s; /* ... and backward */
  int kernels_per_layer_forward; /* kernels those issue (per-kernel host time = time / count) */
  int kernels_per_layer_backward;
  double cpu_microbatch_s; /* per microbatch outside the layers: embedding, loss, autograd */
  double cpu_iteration_s; /* per iteration: the optimizer's host work, zeroing, sync */
  /* A MoE layer's MLP (router to unpermutation) with grouped GEMM, forward and backward, and
   * what each expert adds without grouped GEMM (0: not measured; the per-kernel figure above
   * then prices those kernels). */
  double cpu_moe_layer_forward_s, cpu_moe_layer_backward_s;
  double cpu_moe_expert_forward_s, cpu_moe_expert_backward_s;
  /* one element-wise operation called from Python without autograd (0: not measured): what a
   * kernel past the measured layer's costs the host, scaled (cost.c, layer_host_s) */
  double eager_op_s;
} ts_software;

typedef struct ts_kernel_table ts_kernel_table;

/* Loads and validates the kernel table at path (the same table again for a path loaded
 * before). On success *out is the table, which lives as long as the process. Input errors
 * (unreadable file, unknown table, axes not increasing, a time count that does not match the
 * axes, a time that is not a positive number or null) name the file, line and key. */
int ts_kernels_load(const char *path, const ts_kernel_table **out, ts_err *err);

/* The same from text in memory (a table compiled into the binary), named `name` in messages
 * and cached under it. */
int ts_kernels_load_string(const char *name, const char *text, const ts_kernel_table **out,
                           ts_err *err);

/* A table parsed from text, not shared: the caller's, freed by ts_kernels_free (for tools that
 * read many tables, such as the fuzz harness; the simulator loads through ts_kernels_load). */
int ts_kernels_parse_string(const char *name, const char *text, ts_kernel_table **out, ts_err *err);
void ts_kernels_free(ts_kernel_table *t);

/* The time of kind at point (one value per axis, in the kind's axis order). Returns the
 * source, TS_KERNEL_SRC_TABLE or _INTERPOLATED, with *time_s set; for a kind whose first axis
 * counts independent work (batch, batch x heads, rows, elements, tokens) and a point beyond the
 * largest value measured there, TS_KERNEL_SRC_EXTRAPOLATED: that edge's time x point / edge (a full
 * GPU does twice the work in twice the time), and likewise for a dense GEMM beyond the grid's
 * largest m, n or k where that is 16,384 or more (each such dimension scales its time);
 * TS_KERNEL_SRC_MODEL (and *time_s untouched)
 * when t is NULL, has no such table, or the point is otherwise outside its grid or next to a
 * point that was not measured. */
ts_kernel_source ts_kernels_time(const ts_kernel_table *t, ts_kernel_kind kind, const double *point,
                                 double *time_s);
/* The smallest value of kind's axis `axis` in t's grid (0: no such table). */
double ts_kernels_axis_min(const ts_kernel_table *t, ts_kernel_kind kind, int axis);

/* The first measured point of a compute-bound table (GEMMs, batched GEMMs, flash and SDPA
 * attention) faster than its matrix FLOPs at peak_flops_per_s allow (FP8 GEMMs against
 * peak_fp8_flops_per_s; skipped when that is 0): returns its kind and writes the point, its
 * time and the fastest time possible; TS_KERNEL_COUNT when every point is possible. Causal
 * attention counts half the s x s square (its kernels skip the rest). */
ts_kernel_kind ts_kernels_faster_than_peak(const ts_kernel_table *t, double peak_flops_per_s,
                                           double peak_fp8_flops_per_s, double *point,
                                           double *time_s, double *fastest_s);

/* Whether t holds a table for kind (false when t is NULL). */
bool ts_kernels_has(const ts_kernel_table *t, ts_kernel_kind kind);

/* The measured software costs (all 0 when t is NULL), the file's path, device and framework
 * (borrowed; they live as long as the table). */
ts_software ts_kernels_software(const ts_kernel_table *t);
const char *ts_kernels_path(const ts_kernel_table *t);
const char *ts_kernels_device(const ts_kernel_table *t);
const char *ts_kernels_framework(const ts_kernel_table *t);
/* Where a table's times come from (its `provenance` key; absent: measured): measured on the GPU,
 * derived from another GPU's measured table by rates (platforms/kernels/derive.py), or modelled
 * from the architecture (platforms/kernels/archmodel.py). */
typedef enum ts_kernel_provenance {
  TS_KERNELS_MEASURED,
  TS_KERNELS_DERIVED,
  TS_KERNELS_MODELLED
} ts_kernel_provenance;
extern const char *const ts_kernel_provenance_names[];
ts_kernel_provenance ts_kernels_provenance(const ts_kernel_table *t);

#endif
