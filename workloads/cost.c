/* cost: per-microbatch compute costs; see cost.h. */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double ts_cost_elem_bytes(ts_precision p) {
  return p == TS_PREC_FP32 ? 4.0 : p == TS_PREC_FP64 ? 8.0 : 2.0;
}

double ts_cost_gemm_efficiency(const ts_gpu *gpu, long batch, long m, long n) {
  double tiles_m = ceil((double)m / (double)gpu->gemm_tile_m);
  double tiles_n = ceil((double)n / (double)gpu->gemm_tile_n);
  double tiles = (double)batch * tiles_m * tiles_n;
  double waves = ceil(tiles / (double)gpu->n_compute_units);
  double slots =
      waves * (double)gpu->n_compute_units * (double)gpu->gemm_tile_m * (double)gpu->gemm_tile_n;
  return gpu->gemm_ceiling * ((double)batch * (double)m * (double)n) / slots;
}

static ts_cost kernel(const ts_gpu *gpu, double flops, double rate, double bytes) {
  double t_compute = flops > 0 ? flops / rate : 0;
  double t_memory = bytes / gpu->hbm_Bps;
  ts_cost c = {flops, bytes, fmax(t_compute, t_memory) + gpu->kernel_launch_s, 1, {0}, {0}};
  c.n_by_source[TS_KERNEL_SRC_MODEL] = 1;
  c.class_s[flops > 0 ? TS_POWER_GEMM : TS_POWER_OTHER] = c.time_s;
  return c;
}

ts_cost ts_cost_gemm(const ts_gpu *gpu, double peak_flops_per_s, long batch, long m, long n, long k,
                     double elem_bytes) {
  double flops = 2.0 * (double)batch * (double)m * (double)n * (double)k;
  double bytes = elem_bytes * (double)batch *
                 ((double)m * (double)k + (double)k * (double)n + (double)m * (double)n);
  double rate = peak_flops_per_s * ts_cost_gemm_efficiency(gpu, batch, m, n);
  return kernel(gpu, flops, rate, bytes);
}

ts_cost ts_cost_memory_bound(const ts_gpu *gpu, double bytes) {
  return kernel(gpu, 0, 1, bytes);
}

ts_cost ts_cost_add(ts_cost a, ts_cost b) {
  ts_cost c = {a.flops + b.flops,
               a.bytes + b.bytes,
               a.time_s + b.time_s,
               a.n_kernels + b.n_kernels,
               {0},
               {0}};
  for (int s = 0; s < TS_KERNEL_SRC_COUNT; s++)
    c.n_by_source[s] = a.n_by_source[s] + b.n_by_source[s];
  for (int k = 0; k < TS_POWER_CLASS_COUNT; k++)
    c.class_s[k] = a.class_s[k] + b.class_s[k];
  return c;
}

/* What prices a workload's kernels: its GPU, the peak and element size of its precision, and
 * the kernel table when the workload trains in bf16 (the precision the tables are measured in). */
typedef struct pricer {
  const ts_gpu *gpu;
  const ts_kernel_table *table;
  double peak, eb;
  ts_kernel_log *log; /* when listing kernels (ts_cost_layer_kernels); else NULL */
  const char *piece; /* the part of the layer being priced, for the list */
  int count; /* how often the layer runs what is being priced */
  bool fp8; /* linear layers run their GEMMs in FP8 (Transformer Engine) */
  double fp8_peak; /* the GPU's dense FP8 peak */
  double microbatches; /* per iteration: FP8 weights are cast once per iteration */
  bool bias; /* the linear layers have biases (add_bias_linear) */
  bool other_pass; /* priced from the other pass's kernel (for the list) */
  ts_fp8_recipe fp8_recipe; /* how the FP8 tensors are scaled */
  bool torchao; /* the FP8 linears are torchao's (stack.fp8_linear), compiled */
  bool input_cast_shared; /* torchao: the input's casts are another linear's (Inductor's CSE) */
  bool autocast; /* fp32 weights cast at each forward (ts_workload.is_autocast) */
  /* Each power class's time over its boost-clock time at the clock the power limit sets for
   * what is being priced (power_stretch); NULL: the boost clock (the tables' times where the
   * GPU has no power model). */
  const double *stretch;
} pricer;

static pricer pricer_of(const ts_workload *wl, const ts_gpu *gpu) {
  pricer p = {gpu,
              ts_gpu_kernels_for(gpu, wl->precision),
              gpu->peak_flops_per_s[wl->precision],
              ts_cost_elem_bytes(wl->precision),
              NULL,
              "",
              1,
              false,
              gpu->peak_fp8_flops_per_s,
              (double)ts_workload_microbatches(wl),
              wl->model.bias,
              false,
              wl->fp8_recipe,
              wl->fp8_linear == TS_FP8_LINEAR_TORCHAO,
              false,
              wl->is_autocast,
              NULL};
  return p;
}

static void log_kernel(const pricer *p, const char *name, int n_shape, const double *shape,
                       const ts_cost *c) {
  ts_kernel_log *log = p->log;
  if (log == NULL)
    return;
  if (log->n == log->cap) {
    log->cap = log->cap > 0 ? 2 * log->cap : 64;
    log->rows = realloc(log->rows, (size_t)log->cap * sizeof *log->rows);
    TS_ASSERT(log->rows != NULL);
  }
  ts_kernel_row *r = &log->rows[log->n++];
  memset(r, 0, sizeof *r);
  snprintf(r->piece, sizeof r->piece, "%s", p->piece);
  r->count = p->count;
  snprintf(r->kernel, sizeof r->kernel, "%s", name);
  r->is_other_pass = p->other_pass;
  r->n_shape = n_shape;
  for (int i = 0; i < n_shape; i++)
    r->shape[i] = shape[i];
  r->time_s = c->time_s;
  r->flops = c->flops;
  r->bytes = c->bytes;
  for (int s = 0; s < TS_KERNEL_SRC_COUNT; s++)
    if (c->n_by_source[s] > 0)
      r->source = (ts_kernel_source)s;
}

/* The model's time of a GEMM kind at a table point (the axes as priced_at's callers pass them:
 * gemm_* (m, n, k) of a GEMM m x n x k; grouped_mm_* (experts, tokens, n, k), the weight
 * gradient's GEMM k x n reduced over the tokens). 0 for other kinds. */
static double gemm_model_s(const pricer *p, ts_kernel_kind kind, const double *x) {
  const ts_gpu *gpu = p->gpu;
  switch (kind) {
  case TS_KERNEL_GEMM_FWD:
  case TS_KERNEL_GEMM_DGRAD:
  case TS_KERNEL_GEMM_WGRAD:
    return ts_cost_gemm(gpu, p->peak, 1, (long)x[0], (long)x[1], (long)x[2], p->eb).time_s;
  case TS_KERNEL_GROUPED_MM_FWD:
  case TS_KERNEL_GROUPED_MM_DGRAD:
    return ts_cost_gemm(gpu, p->peak, (long)x[0], (long)x[1], (long)x[2], (long)x[3], p->eb).time_s;
  case TS_KERNEL_GROUPED_MM_WGRAD:
    return ts_cost_gemm(gpu, p->peak, (long)x[0], (long)x[3], (long)x[2], (long)x[1], p->eb).time_s;
  default:
    return 0;
  }
}

/* A GEMM below the table's grid along some axes (the router's h -> 8..64 experts against a grid
 * from 128 wide): the time at the grid's edge there, scaled by the model's time at the point
 * over its time at the edge (the measured level, the model's shape dependence). */
static bool below_grid(const pricer *p, ts_kernel_kind kind, const double *point, ts_cost model,
                       double *time_s) {
  double at[4];
  bool below = false;
  int n = ts_kernel_n_axes(kind);
  for (int i = 0; i < n; i++) {
    double lo = ts_kernels_axis_min(p->table, kind, i);
    below = below || point[i] < lo;
    at[i] = point[i] < lo ? lo : point[i];
  }
  double edge_s = 0, edge_model_s = gemm_model_s(p, kind, at);
  if (!below || !(edge_model_s > 0) ||
      ts_kernels_time(p->table, kind, at, &edge_s) == TS_KERNEL_SRC_MODEL)
    return false;
  *time_s = edge_s * model.time_s / edge_model_s;
  return true;
}

/* The power class of a kernel kind (power.h): GEMMs of every kind, cuDNN's fused attention,
 * FlashAttention, and the memory-bound rest. FP8 GEMMs are ASSUMED to draw as bf16's (the mixes
 * measured bf16). */
static ts_power_class power_class(ts_kernel_kind kind) {
  switch (kind) {
  case TS_KERNEL_GEMM_FWD:
  case TS_KERNEL_GEMM_DGRAD:
  case TS_KERNEL_GEMM_WGRAD:
  case TS_KERNEL_BGEMM_QK:
  case TS_KERNEL_BGEMM_AV:
  case TS_KERNEL_GEMM_FP8_FWD:
  case TS_KERNEL_GEMM_FP8_BWD:
  case TS_KERNEL_GEMM_FP8_BLOCK_FWD:
  case TS_KERNEL_GEMM_FP8_BLOCK_WGRAD:
  case TS_KERNEL_GROUPED_MM_FWD:
  case TS_KERNEL_GROUPED_MM_DGRAD:
  case TS_KERNEL_GROUPED_MM_WGRAD:
    return TS_POWER_GEMM;
  case TS_KERNEL_SDPA_FWD_CAUSAL:
  case TS_KERNEL_SDPA_BWD_CAUSAL:
  case TS_KERNEL_SDPA_MLA_FWD_CAUSAL:
  case TS_KERNEL_SDPA_MLA_BWD_CAUSAL:
    return TS_POWER_SDPA;
  case TS_KERNEL_FLASH_FWD_CAUSAL:
  case TS_KERNEL_FLASH_BWD_CAUSAL:
  case TS_KERNEL_FLASH_FWD:
  case TS_KERNEL_FLASH_BWD:
    return TS_POWER_FLASH;
  default:
    return TS_POWER_OTHER;
  }
}

/* c, one kernel of power class k, at the clock the pricer's power limit sets; table_bias, where
 * its time is a GEMM table point's, the anchors that first bring it to the boost clock (the
 * mix's first pass prices every kernel there). */
static ts_cost at_clock(const pricer *p, ts_power_class k, const ts_power_anchors *table_bias,
                        ts_cost c) {
  const ts_power_model *m = &p->gpu->power_limit;
  if (ts_power_on(m) && table_bias != NULL)
    c.time_s /= ts_power_table_ratio(table_bias, c.time_s);
  if (p->stretch != NULL)
    c.time_s *= p->stretch[k];
  memset(c.class_s, 0, sizeof c.class_s);
  c.class_s[k] = c.time_s;
  return c;
}

/* One kernel's cost: its time from the table at `point` (the kind's axes) when it has it, else
 * the model's; at the power limit's clock. */
static ts_cost from_table(const pricer *p, ts_kernel_kind kind, const double *point,
                          ts_cost model) {
  double t = 0;
  ts_kernel_source src = ts_kernels_time(p->table, kind, point, &t);
  if (src == TS_KERNEL_SRC_MODEL && below_grid(p, kind, point, model, &t))
    src = TS_KERNEL_SRC_EXTRAPOLATED;
  if (src != TS_KERNEL_SRC_MODEL) {
    model.time_s = t;
    model.n_by_source[TS_KERNEL_SRC_MODEL] = 0;
    model.n_by_source[src] = 1;
  }
  /* the table's GEMM points, timed back to back, first brought to the boost clock */
  const ts_power_model *m = &p->gpu->power_limit;
  const ts_power_anchors *bias =
      src == TS_KERNEL_SRC_MODEL ? NULL
      : kind == TS_KERNEL_GEMM_FWD || kind == TS_KERNEL_GEMM_DGRAD || kind == TS_KERNEL_GEMM_WGRAD
          ? &m->gemm_table
      : ts_kernel_is_fp8(kind) ? &m->fp8_gemm_table
                               : NULL;
  return at_clock(p, power_class(kind), bias, model);
}

/* from_table, listed under the kind's name. */
static ts_cost priced_at(const pricer *p, ts_kernel_kind kind, const double *point, ts_cost model) {
  ts_cost c = from_table(p, kind, point, model);
  log_kernel(p, ts_kernel_names[kind], ts_kernel_n_axes(kind), point, &c);
  return c;
}

static ts_cost priced(const pricer *p, ts_kernel_kind kind, double a, double b, double c,
                      ts_cost model) {
  return priced_at(p, kind, (double[]){a, b, c}, model);
}

/* A kernel the table has no entry for (a fused kernel, attention dropout): the model. */
static ts_cost model_only(const pricer *p, const char *name, double elements, double bytes) {
  ts_cost c = at_clock(p, TS_POWER_OTHER, NULL, ts_cost_memory_bound(p->gpu, bytes));
  log_kernel(p, name, 1, &elements, &c);
  return c;
}

/* Bytes a GEMM's epilogue adds to that GEMM, no kernel of their own: their time at the HBM rate,
 * at the GEMMs' clock. */
static ts_cost epilogue_bytes(const pricer *p, const char *name, double elements, double bytes) {
  ts_cost c = {0, bytes, bytes / p->gpu->hbm_Bps, 0, {0}, {0}};
  c = at_clock(p, TS_POWER_GEMM, NULL, c);
  c.n_by_source[TS_KERNEL_SRC_MODEL] = 1; /* listed as priced by the model */
  log_kernel(p, name, 1, &elements, &c);
  c.n_by_source[TS_KERNEL_SRC_MODEL] = 0;
  return c;
}

static ts_cost memory_op(const pricer *p, ts_kernel_kind kind, double a, double b, double bytes) {
  return priced(p, kind, a, b, 0, ts_cost_memory_bound(p->gpu, bytes));
}

/* A backward pass's sum of two gradients of n values (bytes moved), priced from the add table
 * and listed with the backward. */
static ts_cost gradient_sum(const pricer *p, double n, double bytes) {
  pricer backward = *p;
  backward.other_pass = true;
  return memory_op(&backward, TS_KERNEL_ADD_FWD, n, 0, bytes);
}

/* The bf16 -> fp32 cast's rate against the bf16 add's, by bytes moved: 1.94 / 2.99 TB/s on an
 * H100 at 2^28 elements (1.85 / 2.84 at 2^26; bench/device/h100_autocast_kernels.csv), ASSUMED
 * alike on other GPUs. */
#define AUTOCAST_WIDENING_RATE 0.65

/* The FlashAttention repository's own kernels at its 2022 training's commit (4a6eaa9f), built and
 * timed on an H100 (bench/device/fa_fused_kernels.py, bench/device/h100_fa_fused_kernels.csv):
 * each one's rate over the bytes it must move, against the bf16 add's moving as many bytes
 * (bench/device/h100_autocast_kernels.csv), the median over the rows and widths measured
 * (8,192-65,536 rows of 768-2,560; 50,264 logits a row): fused_dropout_add_ln 0.72 forward
 * (0.61-0.87) and 0.84 backward (0.69-0.93); Apex's softmax cross-entropy (csrc/xentropy) 0.53
 * forward (0.51-0.54) and 0.73 with its in-place backward (0.71-0.73), flash-attn's later Triton
 * cross-entropy ASSUMED alike. ASSUMED alike on other GPUs, against their own add. */
#define FA_LAYER_NORM_FWD_RATE 0.72
#define FA_LAYER_NORM_BWD_RATE 0.84
#define FUSED_CE_FWD_RATE 0.53
#define FUSED_CE_BWD_RATE 0.73

/* The kernel table's add points below a few tens of millions of elements were timed on operands
 * that stay in L2 between repetitions (H100: 4,194,304 bf16 elements, 25 MB moved, in 4.0 us,
 * 6.3 TB/s, past the HBM's 3.35); in a step the same kernels read what earlier kernels wrote and
 * weights last touched a step before: measured in Hugging Face GPT-2's blocks on an H100
 * (bench/device/h100_hf_head_copies.csv), a 3,148,800-element weight cast took 8.1 us where the
 * table's add of its bytes prices 3.4, the fp32 element-wise operations of gelu_new over
 * 6,553,600 elements 14-32 us where it prices 12.6. An element-wise kernel streamed against the
 * add is priced no faster than the add's rate per element at ADD_PAST_L2_ELEMS (1.6 GB moved
 * in bf16, past any GPU's L2: the HBM's sustained rate). */
#define ADD_PAST_L2_ELEMS 268435456.0

/* A division by a 0-dim CUDA tensor (Hugging Face GPT-2's attn_weights / torch.full([], sqrt(d),
 * device=...)): the broadcast operand takes PyTorch's unvectorised element-wise path, 0.52 of the
 * add's rate at equal bytes on an H100 (bench/device/hf_eager_kernels.py ->
 * h100_hf_eager_kernels.csv: 276.0 us over 100,663,296 fp16 scores, 2 bytes in and out, against
 * the add's 217.6 us for 3: 0.526; bf16 261.9 against 203.9: 0.519), ASSUMED alike on other GPUs.
 */
#define DIVIDE_BY_DEVICE_SCALAR_RATE 0.52
/* torch.where(causal bool mask [1, 1, s, s], scores, 0-dim CUDA tensor) against the add's rate,
 * both timed alone on an H100 over 8 x 12 x 1,024^2 scores (bench/device/h100_hf_eager_kernels
 * .csv: fp16 275.3 us moving 4 bytes a score against the add's 217.6 us moving 6, 0.527; bf16
 * 273.1 against 203.9, 0.498; the mean): the broadcast mask keeps it on PyTorch's unvectorised
 * path. In Hugging Face's GPT-2 steps its forward and its gradient's kernel each ran 180-182 us
 * over 4 x 16 x 1,024^2 scores (bench/device/h100_hf_head_copies.csv). ASSUMED alike on other
 * GPUs, against their own add. */
#define WHERE_RATE 0.51

/* A vectorised elementwise kernel over n elements moving bytes_per_elem bytes each (a cast whose
 * input and output types are the kernel's own, an add of two fp32 tensors), priced from the
 * table's add_fwd (a + b in the model's precision: 3 eb bytes an element) at the elements that
 * move as many bytes: they stream HBM at that add's measured rate (the H200's: 4.37 TB/s at 2^28
 * elements, where grad_accum's mixed-dtype add, which PyTorch runs through its dynamic-casting
 * path, reaches 2.85). Measured on an H100 (bench/device/h100_autocast_kernels.csv, 2^28
 * elements): the fp32 -> bf16 cast 2.98 TB/s and the fp32 add 3.00 against the bf16 add's 2.99;
 * the bf16 -> fp32 cast slower, AUTOCAST_WIDENING_RATE of it: `rate`, against the add's (the
 * roofline, where the table has no add, streams them all alike). */
static ts_cost streamed(const pricer *p, const char *name, double n, double bytes_per_elem,
                        double rate) {
  double like = n * bytes_per_elem / (3.0 * p->eb * rate);
  ts_cost c = from_table(p, TS_KERNEL_ADD_FWD, (double[]){like, 0, 0},
                         ts_cost_memory_bound(p->gpu, bytes_per_elem * n));
  double past_l2 = ADD_PAST_L2_ELEMS;
  if (c.n_by_source[TS_KERNEL_SRC_MODEL] == 0 && like < past_l2) {
    ts_cost big = from_table(p, TS_KERNEL_ADD_FWD, (double[]){past_l2, 0, 0},
                             ts_cost_memory_bound(p->gpu, 3.0 * p->eb * past_l2));
    double floor_s = big.time_s * like / past_l2;
    if (floor_s > c.time_s && c.time_s > 0) {
      for (int k = 0; k < TS_POWER_CLASS_COUNT; k++)
        c.class_s[k] *= floor_s / c.time_s;
      c.time_s = floor_s;
    }
  }
  log_kernel(p, name, 1, &n, &c);
  return c;
}

/* main_grad (fp32) += grad (low precision) for one tensor of n elements: the framework's
 * gradient accumulation where the GEMM does not fuse it (reads 4 + eb, writes 4 bytes). Under
 * autocast the low-precision gradient of the weight's cast copy is first cast back to the fp32
 * weight's dtype (autograd's validate_outputs: reads eb, writes 4), then AccumulateGrad adds it
 * to .grad (reads 4 + 4, writes 4): two kernels. */
static ts_cost grad_accum(const pricer *p, double n) {
  if (p->autocast)
    return ts_cost_add(streamed(p, "autocast_grad_cast", n, p->eb + 4.0, AUTOCAST_WIDENING_RATE),
                       streamed(p, "autocast_grad_add", n, 12.0, 1));
  return memory_op(p, TS_KERNEL_GRAD_ACCUM, n, 0, (8.0 + p->eb) * n);
}

/* Forward and backward of one linear layer y[M,N] = x[M,K] w[K,N] + b[N]. Backward is the input
 * gradient (M x K) and the weight gradient (K x N). With gradient-accumulation fusion
 * (Megatron-LM's default) the weight gradient accumulates into the fp32 main_grad in the GEMM
 * (4 bytes read + 4 written per weight); without it a separate kernel adds it. The bias
 * gradient always accumulates through a kernel of its own. */
typedef struct linear_cost {
  ts_cost fwd, bwd;
  ts_cost wgrad; /* the part of bwd that is the weight gradient and its accumulations */
} linear_cost;

/* part's share of whole's time (0 when whole takes none). */
static double share(ts_cost part, ts_cost whole) {
  return whole.time_s > 0 ? part.time_s / whole.time_s : 0;
}

/* Gradient-accumulation fusion: the weight-gradient GEMM also reads and writes the weights' fp32
 * main_grad (4 + 4 bytes a weight), which can make it bandwidth-bound. */
static void accumulate_in_gemm(const ts_gpu *gpu, ts_cost *wgrad, double weights) {
  wgrad->bytes += 8.0 * weights;
  wgrad->time_s = fmax(wgrad->time_s - gpu->kernel_launch_s, wgrad->bytes / gpu->hbm_Bps) +
                  gpu->kernel_launch_s;
}

/* A linear layer's accumulations into main_grad besides the GEMMs: its bias's (n values)
 * where it has one, its weights' unless the GEMM fused them. */
static ts_cost accumulations(const pricer *p, double n, double weights, bool is_fused_accum) {
  ts_cost none = {0};
  ts_cost c = p->bias ? grad_accum(p, n) : none;
  return is_fused_accum ? c : ts_cost_add(c, grad_accum(p, weights));
}

/* An FP8 GEMM C[m,n] = A[m,k] B[k,n] by the roofline: 1-byte operands, a bf16 result, at the
 * FP8 peak with the bf16 GEMM's ceiling and quantisation (ASSUMED: the H200's measured FP8
 * table reaches 0.78 of the FP8 peak, its bf16 table 0.80 of the bf16 peak). */
static ts_cost gemm_fp8(const pricer *p, long m, long n, long k) {
  double M = (double)m, N = (double)n, K = (double)k;
  return kernel(p->gpu, 2.0 * M * N * K, p->fp8_peak * ts_cost_gemm_efficiency(p->gpu, 1, m, n),
                M * K + K * N + 2.0 * M * N);
}

/* Bytes an FP8 cast moves per element of its bf16 input: it reads the input and writes the FP8
 * copy and its transpose (the other GEMM's operand layout), one fused kernel; current scaling
 * (tensorwise) first reads the whole tensor for its amax (Transformer Engine's
 * nvte_compute_amax, then the cast with the scale it gives); block scaling finds each tile's
 * amax inside the cast and writes an fp32 scale per 128 values of each copy. */
static double fp8_cast_bytes(const pricer *p) {
  switch (p->fp8_recipe) {
  case TS_FP8_RECIPE_TENSORWISE:
    return 2.0 + 2.0 + 2.0;
  case TS_FP8_RECIPE_BLOCKWISE:
    return 2.0 + 2.0 * (1.0 + 4.0 / 128.0);
  default:
    return 2.0 + 2.0;
  }
}

/* torchao's Float8Linear (stack.fp8_linear torchao) compiled as torchtitan runs it: every cast
 * is an amax pass over a bf16 tensor and a cast with the scale it gives (2 + 2 bytes read, 1
 * written an element: torchao's hp_tensor_to_float8_dynamic), at every microbatch, the weight's
 * too (no FP8 copy is cached). The forward casts the input and the weight; the compiled graph
 * keeps neither nor their bf16 sources (bench/device/float8_block.py: a layer keeps exactly the
 * norms' outputs and SwiGLU's product fewer bytes than bf16), so the backward casts the input
 * and the weight again, each to the layout its GEMM reads, and the output gradient to both
 * layouts (one more byte written). Inductor's kernels are priced on the roofline of those
 * bytes, as the compiled block's other fusions are; a linear that shares its input with another
 * (gate and up, w1 and w3) shares that input's casts (common-subexpression elimination in the
 * compiled graph, ASSUMED). The GEMMs are the FP8 tables' (forward with fast accumulation, the
 * gradients without: Float8LinearConfig's defaults). */
static linear_cost linear_fp8_torchao(const pricer *p, long m, long n, long k,
                                      bool is_fused_accum) {
  double M = (double)m, N = (double)n, K = (double)k, cast = 2.0 * p->eb + 1.0;
  bool own_x = !p->input_cast_shared;
  linear_cost c;
  ts_cost cast_x = own_x ? model_only(p, "fp8_cast_input", M * K, cast * M * K) : (ts_cost){0};
  ts_cost cast_w = model_only(p, "fp8_cast_weight", K * N, cast * K * N);
  ts_cost fwd = priced(p, TS_KERNEL_GEMM_FP8_FWD, M, N, K, gemm_fp8(p, m, n, k));
  c.fwd = ts_cost_add(ts_cost_add(cast_x, cast_w), fwd);
  ts_cost cast_dy = model_only(p, "fp8_cast_grad_output", M * N, (cast + 1.0) * M * N);
  ts_cost recast =
      ts_cost_add(own_x ? model_only(p, "fp8_cast_input_bwd", M * K, cast * M * K) : (ts_cost){0},
                  model_only(p, "fp8_cast_weight_bwd", K * N, cast * K * N));
  ts_cost dgrad = priced(p, TS_KERNEL_GEMM_FP8_BWD, M, K, N, gemm_fp8(p, m, k, n));
  ts_cost wgrad_model = gemm_fp8(p, k, n, m);
  if (is_fused_accum)
    accumulate_in_gemm(p->gpu, &wgrad_model, K * N);
  ts_cost wgrad = priced(p, TS_KERNEL_GEMM_FP8_BWD, K, N, M, wgrad_model);
  c.wgrad = ts_cost_add(wgrad, accumulations(p, N, K * N, is_fused_accum));
  c.bwd = ts_cost_add(ts_cost_add(ts_cost_add(cast_dy, recast), dgrad), c.wgrad);
  return c;
}

/* Transformer Engine's FP8 linear layer (te.Linear under fp8_autocast): the forward casts its
 * input to FP8 with the transpose the weight gradient needs (fp8_cast_bytes) and runs the FP8
 * GEMM against the FP8 copy of the weight, which is cast (with its transpose) once per
 * iteration: Megatron passes is_first_microbatch, so each microbatch carries 1 / m of that
 * cast's bytes (and, ASSUMED, a whole launch). The backward casts the output gradient likewise
 * (E5M2 with `hybrid`), then the input- and weight-gradient GEMMs in FP8; the weight gradient
 * accumulates into the fp32 main_grad as the bf16 layer's does. Per-tensor scales (delayed,
 * tensorwise) run cuBLASLt's FP8 GEMM (the gemm_fp8 tables); block scales its VEC128 /
 * BLK128x128 modes (the gemm_fp8_block tables: the forward and the input gradient a tile-scaled
 * operand against a block-scaled weight, the weight gradient two tile-scaled operands). */
static linear_cost linear_fp8(const pricer *p, long m, long n, long k, bool is_fused_accum) {
  if (p->torchao)
    return linear_fp8_torchao(p, m, n, k, is_fused_accum);
  const ts_gpu *gpu = p->gpu;
  double M = (double)m, N = (double)n, K = (double)k, cast = fp8_cast_bytes(p);
  bool block = p->fp8_recipe == TS_FP8_RECIPE_BLOCKWISE;
  ts_kernel_kind fwd_kind = block ? TS_KERNEL_GEMM_FP8_BLOCK_FWD : TS_KERNEL_GEMM_FP8_FWD;
  ts_kernel_kind dgrad_kind = block ? TS_KERNEL_GEMM_FP8_BLOCK_FWD : TS_KERNEL_GEMM_FP8_BWD;
  ts_kernel_kind wgrad_kind = block ? TS_KERNEL_GEMM_FP8_BLOCK_WGRAD : TS_KERNEL_GEMM_FP8_BWD;
  linear_cost c;
  ts_cost cast_x = model_only(p, "fp8_cast_transpose", M * K, cast * M * K);
  ts_cost cast_w = model_only(p, "fp8_cast_weight", K * N, cast * K * N / p->microbatches);
  ts_cost fwd = priced(p, fwd_kind, M, N, K, gemm_fp8(p, m, n, k));
  c.fwd = ts_cost_add(ts_cost_add(cast_x, cast_w), fwd);
  ts_cost cast_dy = model_only(p, "fp8_cast_transpose_bwd", M * N, cast * M * N);
  pricer dgrad_pricer = *p; /* block scaling's input gradient runs the forward's kernel */
  dgrad_pricer.other_pass = block;
  ts_cost dgrad = priced(&dgrad_pricer, dgrad_kind, M, K, N, gemm_fp8(p, m, k, n));
  ts_cost wgrad_model = gemm_fp8(p, k, n, m);
  if (is_fused_accum)
    accumulate_in_gemm(gpu, &wgrad_model, K * N);
  ts_cost wgrad = priced(p, wgrad_kind, K, N, M, wgrad_model);
  c.wgrad = ts_cost_add(wgrad, accumulations(p, N, K * N, is_fused_accum));
  c.bwd = ts_cost_add(ts_cost_add(cast_dy, dgrad), c.wgrad);
  return c;
}

/* Whether the GPU's kernels are NVIDIA's (its kernel table was measured on NVIDIA hardware),
 * whatever the precision: fp16 runs cuBLAS all the same, table or roofline. */
static bool is_cublas(const pricer *p) {
  const char *device = p->gpu->kernels != NULL ? ts_kernels_device(p->gpu->kernels) : NULL;
  return device != NULL && strncmp(device, "NVIDIA", 6) == 0;
}

/* A GEMM whose operands' rows are off the 16-byte alignment that cuBLAS's tensor-core kernels
 * need (Hopper's bulk copies and vectorised loads: a row of 50,257 bf16 logits, plain PyTorch's
 * unpadded GPT-2 vocabulary) runs a fallback kernel whose rate does not grow with the problem.
 * Measured on the H100 (bench/device/vocab_alignment.py -> h100_vocab_alignment.csv: the output
 * layer at vocabularies 50,257 and 32,001, 8,192-16,384 tokens x hidden 768-4,096, 12 shapes):
 * forward 93-112 TFLOP/s (median 99.9), input gradient 143-148 (145.2), weight gradient 149-155
 * (151.3), the aligned neighbours' (50,304 and 32,000) 4.4-7.5x faster; here as shares
 * of the H100's dense bf16 peak, 989.4 TFLOP/s, so that another NVIDIA GPU's fallback scales with
 * its peak (ASSUMED: measured on the H100 only; the H200 has the same GH100 compute). Measured
 * with the vocabulary as the misaligned dimension; a misaligned hidden dimension is ASSUMED
 * alike (the same rows, of another operand), and fp16 (2-byte rows as bf16's). */
#define MISALIGNED_GEMM_FWD_SHARE (99.9 / 989.4)
#define MISALIGNED_GEMM_DGRAD_SHARE (145.15 / 989.4)
#define MISALIGNED_GEMM_WGRAD_SHARE (151.28 / 989.4)

/* c, a GEMM pass of a linear layer m x n x k (m tokens) just priced(), at the fallback's rate
 * (above) where n or k leaves a row of eb-byte elements off 16 bytes and the fallback is slower
 * than the table's aligned time; its row in the kernel list becomes "<kind> misaligned". */
static ts_cost misaligned(const pricer *p, ts_kernel_kind kind, double n, double k, ts_cost c) {
  if (!is_cublas(p) || (fmod(n * p->eb, 16.0) == 0 && fmod(k * p->eb, 16.0) == 0))
    return c;
  double share = kind == TS_KERNEL_GEMM_FWD     ? MISALIGNED_GEMM_FWD_SHARE
                 : kind == TS_KERNEL_GEMM_DGRAD ? MISALIGNED_GEMM_DGRAD_SHARE
                                                : MISALIGNED_GEMM_WGRAD_SHARE;
  c.time_s = fmax(c.time_s, c.flops / (share * p->peak));
  c.class_s[TS_POWER_GEMM] = c.time_s;
  if (p->log != NULL) {
    ts_kernel_row *r = &p->log->rows[p->log->n - 1];
    snprintf(r->kernel, sizeof r->kernel, "%s misaligned", ts_kernel_names[kind]);
    r->time_s = c.time_s;
  }
  return c;
}

bool ts_cost_vocab_misaligned(const ts_workload *wl, const ts_gpu *gpu) {
  pricer p = pricer_of(wl, gpu);
  double v = (double)(ts_workload_padded_vocab(wl) / wl->tp);
  return !p.fp8 && is_cublas(&p) && fmod(v * p.eb, 16.0) != 0;
}

static linear_cost linear(const pricer *p, long m, long n, long k, bool is_fused_accum) {
  if (p->fp8)
    return linear_fp8(p, m, n, k, is_fused_accum);
  const ts_gpu *gpu = p->gpu;
  linear_cost c;
  double M = (double)m, N = (double)n, K = (double)k;
  c.fwd = misaligned(
      p, TS_KERNEL_GEMM_FWD, N, K,
      priced(p, TS_KERNEL_GEMM_FWD, M, N, K, ts_cost_gemm(gpu, p->peak, 1, m, n, k, p->eb)));
  /* Under autocast the forward first casts the fp32 weight (and bias) to the model's precision
   * (reads 4, writes eb): torch.autocast's cast, or FlashAttention's FusedDenseFunc casting
   * weight and bias itself (flash_attn/ops/fused_dense.py); the copy is what the backward
   * reads. */
  if (p->autocast)
    c.fwd = ts_cost_add(
        streamed(p, "autocast_weight_cast", K * N + (p->bias ? N : 0), 4.0 + p->eb, 1), c.fwd);
  ts_cost dgrad = misaligned(
      p, TS_KERNEL_GEMM_DGRAD, N, K,
      priced(p, TS_KERNEL_GEMM_DGRAD, M, K, N, ts_cost_gemm(gpu, p->peak, 1, m, k, n, p->eb)));
  ts_cost wgrad_model = ts_cost_gemm(gpu, p->peak, 1, k, n, m, p->eb);
  if (is_fused_accum)
    accumulate_in_gemm(gpu, &wgrad_model, K * N);
  ts_cost wgrad = misaligned(p, TS_KERNEL_GEMM_WGRAD, N, K,
                             priced(p, TS_KERNEL_GEMM_WGRAD, K, N, M, wgrad_model));
  c.wgrad = ts_cost_add(wgrad, accumulations(p, N, K * N, is_fused_accum));
  c.bwd = ts_cost_add(dgrad, c.wgrad);
  return c;
}

/* Attention core (QK^T, softmax, dropout, AV) for b x heads/t heads of s x s, head dim d, causal
 * (GPT). Flash attention is one fused kernel reading Q, K, V and writing O (its backward reads
 * them plus dO and writes dQ, dK, dV); without it the s x s scores go through HBM: written by
 * QK^T, read and written by softmax (2 + 2 bytes) and dropout (2 + 2 + 1-byte mask), read by
 * AV. Backward FLOPs are twice the forward, as in Megatron's count (which counts the whole
 * s x s square; a causal flash kernel skips the blocks above the diagonal, which its measured
 * time shows). */
/* c repeated n times (the same kernel on n equal problems). */
static ts_cost times(ts_cost c, double n) {
  c.flops *= n;
  c.bytes *= n;
  c.time_s *= n;
  for (int k = 0; k < TS_POWER_CLASS_COUNT; k++)
    c.class_s[k] *= n;
  c.n_kernels = (int)(c.n_kernels * n);
  for (int s = 0; s < TS_KERNEL_SRC_COUNT; s++)
    c.n_by_source[s] = (int)(c.n_by_source[s] * n);
  return c;
}

/* FlashAttention-1 against FlashAttention-2 on the same GPU: forward + backward TFLOPS of each, as
 * the FlashAttention-2 paper's benchmark published them side by side (Dao-AILab/flash-attention,
 * assets/flash2_a100_fwd_bwd_benchmark.png and flash2_h100_fwd_bwd_benchmark.png; hidden 2,048,
 * batch 16,384 / sequence, bf16): [causal][head dimension 64, 128][sequence 512 ... 16,384]. The
 * bars' labels, but three FlashAttention-2 A100 labels the legend hides, read from their bars'
 * heights (non-causal: 153 at 1k for 64; 152 and 173 at 512 and 1k for 128). The H100's figure
 * prices the GPUs of the same GH100 compute (H200, H800). */
typedef struct flash1_figure {
  const char *gpu; /* a substring of the platform's gpu.model */
  double fa1[2][2][6], fa2[2][2][6];
} flash1_figure;

static const flash1_figure FLASH1_FIGURES[] = {
    {"A100",
     {{{91, 92, 104, 108, 110, 110}, {76, 72, 76, 80, 82, 83}},
      {{58, 70, 77, 87, 92, 97}, {55, 62, 69, 76, 80, 83}}},
     {{{132, 153, 162, 171, 175, 176}, {152, 173, 187, 196, 201, 203}},
      {{88, 119, 140, 156, 165, 171}, {99, 133, 155, 173, 182, 189}}}},
    {"H100",
     {{{157, 159, 161, 161, 166, 168}, {127, 127, 128, 131, 137, 139}},
      {{104, 123, 136, 138, 149, 156}, {98, 109, 108, 126, 135, 137}}},
     {{{215, 254, 274, 288, 294, 296}, {248, 294, 320, 326, 335, 338}},
      {{141, 192, 232, 257, 273, 284}, {163, 221, 265, 294, 308, 328}}}},
};

static const flash1_figure *flash1_figure_of(const ts_gpu *gpu) {
  const char *same_compute[][2] = {
      {"A100", "A100"}, {"H100", "H100"}, {"H200", "H100"}, {"H800", "H100"}};
  for (size_t i = 0; i < sizeof same_compute / sizeof same_compute[0]; i++)
    if (strstr(gpu->model, same_compute[i][0]) != NULL)
      for (size_t f = 0; f < sizeof FLASH1_FIGURES / sizeof FLASH1_FIGURES[0]; f++)
        if (strcmp(FLASH1_FIGURES[f].gpu, same_compute[i][1]) == 0)
          return &FLASH1_FIGURES[f];
  return NULL;
}

bool ts_cost_flash1_priced(const ts_gpu *gpu) {
  return flash1_figure_of(gpu) != NULL;
}

/* How much longer FlashAttention-1 takes than FlashAttention-2 at a head dimension D and a
 * sequence S: the figure's ratio of rates, linear in log2 S between its sequences and in D between
 * 64 and 128, held beyond them (ASSUMED), and alike forward and backward (ASSUMED: only their sum
 * is published). */
static double flash1_slowdown(const ts_gpu *gpu, bool causal, double D, double S) {
  const flash1_figure *f = flash1_figure_of(gpu);
  TS_ASSERT(f != NULL); /* ts_simulate_check refuses flash1 on other GPUs */
  double x = fmin(fmax(log2(S) - 9.0, 0.0), 5.0), y = fmin(fmax((D - 64.0) / 64.0, 0.0), 1.0);
  int i = x >= 5.0 ? 4 : (int)x;
  double ratio[2];
  for (int d = 0; d < 2; d++) {
    const double *a = f->fa1[causal][d], *b = f->fa2[causal][d];
    double lo = b[i] / a[i], hi = b[i + 1] / a[i + 1];
    ratio[d] = lo + (hi - lo) * (x - i);
  }
  return ratio[0] + (ratio[1] - ratio[0]) * y;
}

/* A flash-attention kernel from the table, at FlashAttention-1's speed for stack.attention flash1
 * (listed as "<kind> flash1"). FlashAttention-1 compiles its kernels for head dimensions 32, 64
 * and 128 and runs a head dimension on the first that holds it (flash-attn 4a6eaa9f,
 * csrc/flash_attn/fmha_api.cpp: run_fmha_fwd and run_fmha_bwd dispatch d <= 32, <= 64, <= 128
 * to fmha_*_hdim32/64/128), its tiles as wide as the kernel's (src/fmha/gmem_tile.h: the columns
 * past d predicated off the loads, the matrix products over all): a head of 80 or 96 costs what
 * one of 128 does. */
static ts_cost priced_flash(const pricer *p, const ts_workload *wl, ts_kernel_kind kind, double B,
                            double S, double D, ts_cost model) {
  if (wl->attention != TS_ATTENTION_FLASH1)
    return priced(p, kind, B, S, D, model);
  D = D <= 32 ? 32 : D <= 64 ? 64 : D <= 128 ? 128 : D;
  double point[] = {B, S, D};
  ts_cost c = from_table(p, kind, point, model);
  bool causal = kind == TS_KERNEL_FLASH_FWD_CAUSAL || kind == TS_KERNEL_FLASH_BWD_CAUSAL;
  double slowdown = flash1_slowdown(p->gpu, causal, D, S);
  c.time_s *= slowdown;
  for (int k = 0; k < TS_POWER_CLASS_COUNT; k++)
    c.class_s[k] *= slowdown;
  char name[32];
  snprintf(name, sizeof name, "%s flash1", ts_kernel_names[kind]);
  log_kernel(p, name, 3, point, &c);
  return c;
}

/* Attention dropout inside the fused kernels just priced and logged (fwd, bwd): the mask drawn
 * per score (Philox), priced at the platform's time a score for the backend (gpu.attention_dropout:
 * cudnn for PyTorch's SDPA choice and cuDNN's attention, else the flash kernels; measured on an
 * H100 by bench/device/sdpa_backends.py --dropout, near-constant per score over sequences of
 * 1,024-32,768 and head dims of 64-128) over the scores computed, at the power limit's clock.
 * Nothing where the model drops nothing or the platform gives no figure (the run report warns). */
static void add_attention_dropout(const pricer *p, const ts_workload *wl, bool cudnn, double scores,
                                  ts_cost *fwd, ts_cost *bwd) {
  const ts_gpu *gpu = p->gpu;
  if (wl->model.attention_dropout <= 0 || !gpu->has_attention_dropout)
    return;
  ts_power_class k = cudnn ? TS_POWER_SDPA : TS_POWER_FLASH;
  ts_cost *c[] = {fwd, bwd};
  for (int pass = 0; pass < 2; pass++) {
    double t = gpu->attention_dropout_s[cudnn ? TS_DROPOUT_SDPA : TS_DROPOUT_FLASH][pass] * scores *
               (p->stretch != NULL ? p->stretch[k] : 1);
    c[pass]->time_s += t;
    c[pass]->class_s[k] += t;
    if (p->log != NULL)
      p->log->rows[p->log->n - 2 + pass].time_s += t;
  }
}

/* Flash attention of b x heads/t heads, queries of S tokens against keys of S' = share x S
 * (share 1: causal on the diagonal block; share 1/2: half a full block, as a load-balanced
 * context-parallel step sees), priced from the table's causal or full kernels at S and scaled
 * by share (ASSUMED for the half blocks: the time of a full S x S block, halved). */
static void flash_block(const ts_workload *wl, const pricer *p, double S, bool causal, double share,
                        ts_cost *fwd, ts_cost *bwd) {
  const ts_gpu *gpu = p->gpu;
  const ts_model *m = &wl->model;
  double eb = p->eb, b = (double)wl->micro_batch, heads = (double)(m->n_heads / wl->tp);
  double kv_heads = (double)(m->n_query_groups / wl->tp), B = b * heads;
  double D = (double)ts_workload_qk_head_dim(wl), Dv = (double)ts_workload_v_head_dim(wl);
  double qkvo = eb * b * S * ((D + Dv) * heads + (D + Dv) * kv_heads);
  double flops = 2.0 * B * S * S * (D + Dv);
  double rate = p->peak * ts_cost_gemm_efficiency(gpu, (long)B, (long)S, (long)S);
  /* PyTorch's SDPA where the table measured it (workloads/stack.h), else the flash kernel.
   * DeepSeek's MLA shape (queries and keys of 192, values of 128) from its own tables, which
   * measure cuDNN's fused attention, whatever the stack's attention: FlashAttention-2 takes
   * only equal head widths, so Transformer Engine's DotProductAttention (Megatron-Core) runs
   * MLA on its cuDNN backend (FusedAttention), as PyTorch's SDPA does. */
  bool sdpa = wl->attention == TS_ATTENTION_SDPA && causal;
  bool mla = causal && wl->attention != TS_ATTENTION_UNFUSED && D == 192 && Dv == 128 &&
             ts_kernels_has(gpu->kernels, TS_KERNEL_SDPA_MLA_FWD_CAUSAL) &&
             ts_kernels_has(gpu->kernels, TS_KERNEL_SDPA_MLA_BWD_CAUSAL);
  sdpa = sdpa && ts_kernels_has(gpu->kernels, TS_KERNEL_SDPA_FWD_CAUSAL) &&
         ts_kernels_has(gpu->kernels, TS_KERNEL_SDPA_BWD_CAUSAL);
  *fwd = priced_flash(p, wl,
                      mla      ? TS_KERNEL_SDPA_MLA_FWD_CAUSAL
                      : sdpa   ? TS_KERNEL_SDPA_FWD_CAUSAL
                      : causal ? TS_KERNEL_FLASH_FWD_CAUSAL
                               : TS_KERNEL_FLASH_FWD,
                      B, S, D, kernel(gpu, flops, rate, qkvo));
  *bwd = priced_flash(p, wl,
                      mla      ? TS_KERNEL_SDPA_MLA_BWD_CAUSAL
                      : sdpa   ? TS_KERNEL_SDPA_BWD_CAUSAL
                      : causal ? TS_KERNEL_FLASH_BWD_CAUSAL
                               : TS_KERNEL_FLASH_BWD,
                      B, S, D, kernel(gpu, 2 * flops, rate, 2 * qkvo + eb * b * S * Dv * heads));
  add_attention_dropout(p, wl, sdpa || mla, B * S * S * (causal ? 0.5 : 1.0), fwd, bwd);
  if (share != 1) {
    ts_cost *c[] = {fwd, bwd};
    for (int i = 0; i < 2; i++) {
      c[i]->time_s *= share;
      for (int k = 0; k < TS_POWER_CLASS_COUNT; k++)
        c[i]->class_s[k] *= share;
      c[i]->flops *= share;
      c[i]->bytes *= share;
    }
    for (int i = 1; p->log != NULL && i <= 2; i++) { /* the two rows just listed, as run */
      ts_kernel_row *r = &p->log->rows[p->log->n - i];
      r->time_s *= share;
      r->flops *= share;
      r->bytes *= share;
    }
  }
}

/* streamed(), run reps times (listed with that count). */
static ts_cost streamed_n(const pricer *p, const char *name, double n, double bytes_per_elem,
                          double rate, int reps) {
  pricer listed = *p;
  listed.count = p->count * reps;
  return times(streamed(&listed, name, n, bytes_per_elem, rate), reps);
}

/* PyTorch's ring attention (stack.cp_attention pytorch; torch/distributed/tensor/experimental/
 * _context_parallel/_attention.py in PyTorch 2.11, _templated_ring_attention and its backward,
 * with the defaults it printed there: convert_to_f32, round-robin load balancing, the keys and
 * values all-gathered: bench/device/cp_ring_loop.py) runs eager kernels around its cp flash
 * calls, priced as streamed element-wise kernels over o (the rank's output elements), q (its
 * query's) and kv (its keys' and values', of every head where repeat_kv comes first), with
 * lse_rows log-sum-exp values. Priced for the ring's slowest rank,
 * the last, whose every step past its own meets both query chunks: whole merges, none partial.
 *   Forward (_SDPAMerger): each step's output cast to fp32 (widening: o x (eb + 4) bytes) and,
 *   past the first, merged: out - out_i, sigmoid(lse_i - lse) x that, out - that (12, 8, 12
 *   bytes an element of o), and five kernels over the log-sum-exp (sub, sigmoid, sub,
 *   logsigmoid, sub); the keys and values concatenated for the rotater at every step but the
 *   last (kv x 2 eb); the result cast back (o x (4 + eb)).
 *   Backward: fp32 zeros for the three gradients (q + kv, x 4); each step's query gradient
 *   added into the fp32 one (a mixed-dtype add, q x (4 + eb + 4)); the key and value gradients
 *   likewise at the first step, past it into the first half of what the previous rank sent
 *   (_partial_update: kv / 2 added, then the halves concatenated, kv x 8); the fp32 key and value
 *   gradients concatenated to be sent on at every step (kv x 8); the keys and values
 *   concatenated as in the forward; the gradients cast back ((q + kv) x (4 + eb)).
 * Widening casts and mixed-dtype adds at AUTOCAST_WIDENING_RATE of the add's rate. */
static void pytorch_ring_kernels(const pricer *p, int cp, double o, double q, double kv,
                                 double lse_rows, ts_cost *fwd, ts_cost *bwd) {
  double eb = p->eb, w = AUTOCAST_WIDENING_RATE;
  int later = cp - 1; /* the steps past the rank's own */
  ts_cost f = ts_cost_add(streamed_n(p, "cp_out_to_fp32", o, eb + 4, w, cp),
                          streamed_n(p, "cp_merge_sub", o, 12, 1, 2 * later));
  f = ts_cost_add(f, streamed_n(p, "cp_merge_scale", o, 8, 1, later));
  f = ts_cost_add(f, streamed_n(p, "cp_merge_lse_sub", lse_rows, 12, 1, 3 * later));
  f = ts_cost_add(f, streamed_n(p, "cp_merge_lse_sigmoid", lse_rows, 8, 1, 2 * later));
  f = ts_cost_add(f, streamed_n(p, "cp_kv_cat", kv, 2 * eb, 1, later));
  *fwd = ts_cost_add(f, streamed(p, "cp_out_cast", o, 4 + eb, 1));

  ts_cost b = ts_cost_add(streamed(p, "cp_grad_zeros", q + kv, 4, 1),
                          streamed_n(p, "cp_grad_q_add", q, 8 + eb, w, cp));
  b = ts_cost_add(b, streamed(p, "cp_grad_kv_add", kv, 8 + eb, w));
  b = ts_cost_add(b, streamed_n(p, "cp_grad_kv_half_add", kv / 2, 8 + eb, w, later));
  b = ts_cost_add(b, streamed_n(p, "cp_grad_kv_cat", kv, 8, 1, cp + later));
  b = ts_cost_add(b, streamed_n(p, "cp_kv_cat_bwd", kv, 2 * eb, 1, later));
  *bwd = ts_cost_add(b, streamed(p, "cp_grad_cast", q + kv, 4 + eb, 1));
}

/* The attention core of a context-parallel rank (ring attention as Transformer Engine runs it,
 * with causal load balancing): the rank's 2 chunks of s / 2cp queries meet the keys of all cp
 * ranks in cp steps: its own (a causal block of s / cp) and cp - 1 others, each half a full
 * s / cp block (either both query chunks against the earlier key chunk, or the later query
 * chunk against both). FLOPs: Megatron's count of the whole s x s square, divided by cp. */
static void context_parallel_core(const ts_workload *wl, const pricer *p, ts_cost *fwd,
                                  ts_cost *bwd) {
  double local = (double)ts_workload_local_seq(wl), cp = (double)wl->cp;
  ts_cost own_f, own_b, step_f, step_b;
  flash_block(wl, p, local, true, 1, &own_f, &own_b);
  pricer steps = *p;
  steps.count = p->count * (int)(wl->cp - 1);
  flash_block(wl, &steps, local, false, 0.5, &step_f, &step_b);
  *fwd = ts_cost_add(own_f, times(step_f, cp - 1));
  *bwd = ts_cost_add(own_b, times(step_b, cp - 1));
  double D = (double)ts_workload_qk_head_dim(wl), Dv = (double)ts_workload_v_head_dim(wl);
  double B = (double)wl->micro_batch * (double)(wl->model.n_heads / wl->tp);
  double S = (double)wl->model.seq;
  if (wl->cp_attention == TS_CP_ATTENTION_PYTORCH) {
    ts_cost extra_f, extra_b;
    double kv_heads =
        (double)(ts_workload_repeats_kv(wl) ? wl->model.n_heads : wl->model.n_query_groups) /
        (double)wl->tp;
    double rows = (double)wl->micro_batch * local, heads = B / (double)wl->micro_batch;
    pytorch_ring_kernels(p, (int)wl->cp, rows * heads * Dv, rows * heads * D,
                         rows * kv_heads * (D + Dv), rows * heads, &extra_f, &extra_b);
    *fwd = ts_cost_add(*fwd, extra_f);
    *bwd = ts_cost_add(*bwd, extra_b);
  }
  fwd->flops = 2.0 * B * S * S * (D + Dv) / cp;
  bwd->flops = 2.0 * fwd->flops;
}

/* A batched GEMM of attention without flash whose head dimension leaves its operands off the
 * 16-byte alignment that cuBLAS's vectorised tensor-core kernels need (a head dimension of 86
 * in bf16: FORGE-S's) runs a slower kernel than the table's aligned points. Measured on the
 * H200 (bench/device/attention_unfused.py -> h200_attention_unfused.csv: 192 heads x 2,048
 * tokens, head dimension 86 against 88): Q K^T in Megatron's strided layout 1,692 against
 * 592 us, P V 819 against 456 us; ASSUMED alike on the other NVIDIA GPUs' cuBLAS. Not priced
 * on other vendors' libraries: for Q K^T on the MI250X none of the 276 solutions of rocBLAS's
 * Tensile logic (ROCm/rocBLAS b520bc8, Logic/asm_full/aldebaran/aldebaran_Cijk_Alik_Bljk_
 * BBS_BH.yaml) asserts a summation element multiple, so each takes any head dimension, its
 * remainder in a tail loop; P V's were not examined; neither is measured there. */
#define MISALIGNED_QK_SLOWDOWN (1692.256 / 592.384)
#define MISALIGNED_AV_SLOWDOWN (818.528 / 456.352)

/* priced() for bgemm_qk and bgemm_av over (batch, seq, head dim), with the slowdown above
 * (listed as misaligned) when the GPU's kernel table was measured on an NVIDIA GPU and the head
 * dimension, d elements of eb bytes, is not a multiple of 16 bytes. */
static ts_cost priced_bgemm(const pricer *p, ts_kernel_kind kind, double B, double S, double d,
                            ts_cost model) {
  double point[] = {B, S, d};
  ts_cost c = from_table(p, kind, point, model);
  bool qk = kind == TS_KERNEL_BGEMM_QK, is_misaligned = is_cublas(p) && fmod(d * p->eb, 16.0) != 0;
  if (is_misaligned) {
    c.time_s *= qk ? MISALIGNED_QK_SLOWDOWN : MISALIGNED_AV_SLOWDOWN;
    c.class_s[TS_POWER_GEMM] = c.time_s;
  }
  log_kernel(p,
             is_misaligned ? (qk ? "bgemm_qk misaligned" : "bgemm_av misaligned")
                           : ts_kernel_names[kind],
             3, point, &c);
  return c;
}

/* A non-contiguous copy PyTorch runs on its unvectorised element-wise path, priced as moving
 * bytes at a measured fraction of the GPU's HBM bandwidth (no table has such copies). */
static ts_cost strided_copy(const pricer *p, const char *name, double elements, double bytes,
                            double fraction) {
  ts_cost c = ts_cost_memory_bound(p->gpu, bytes / fraction);
  c.bytes = bytes;
  c = at_clock(p, TS_POWER_OTHER, NULL, c);
  log_kernel(p, name, 1, &elements, &c);
  return c;
}

/* The copies of a GPT's eager attention in plain PyTorch (stack.eager_attention, stack.h), as
 * their kernels ran on an H100 (bench/device/hf_head_copies.py: Hugging Face GPT-2's block at
 * seven shapes, h100_hf_head_copies.csv, and with --code baddbmm trainsim's H200 steps' block at
 * three, h100_baddbmm_head_copies.csv; 3-67 MB tensors, the rates steady across them):
 *   forward: each head tensor folded into a batch of matrices, a copy where the micro-batch
 *   exceeds 1 (by torch.matmul's reshape or an explicit one: 1.25-1.43 TB/s; matmul's k,
 *   transposed first, 0.51-0.55), and the merged heads made contiguous (1.37-1.43);
 *   backward: the output's gradient folded again (micro-batch past 1); matmul: q's and v's
 *   gradients copied back to the projection's layout (k's, transposed twice, is a view) and the
 *   split's backward concatenating the three (reading k's transposed: 0.95-1.03 TB/s);
 *   baddbmm: unbind's backward stacking the three strided gradients into the projection's
 *   interleaved layout (0.90-0.94 TB/s), and baddbmm's gradients scaled by its alpha (two
 *   kernels over q and k, streamed as the add).
 * Priced at those rates as fractions of the H100's 3.35 TB/s (HEAD_*_HBM_FRACTION: the largest
 * shapes' copies), ASSUMED alike on other GPUs. q, k and v of q_elems, kv_elems and kv_elems
 * elements, the output of o_elems. */
#define HEAD_PERMUTE_COPY_HBM_FRACTION 0.40
#define HEAD_TRANSPOSE_COPY_HBM_FRACTION 0.16
#define HEAD_GRAD_CAT_HBM_FRACTION 0.31
#define HEAD_GRAD_STACK_HBM_FRACTION 0.28
static void eager_head_copies(const pricer *p, ts_eager_attention code, long micro_batch,
                              double q_elems, double kv_elems, double o_elems, ts_cost *fwd,
                              ts_cost *bwd) {
  double eb = p->eb, qkv = q_elems + 2 * kv_elems;
  bool matmul = code == TS_EAGER_ATTENTION_MATMUL;
  ts_cost f = strided_copy(p, "heads_merge_copy", o_elems, 2 * eb * o_elems,
                           HEAD_PERMUTE_COPY_HBM_FRACTION);
  ts_cost b;
  if (matmul) {
    b = ts_cost_add(strided_copy(p, "heads_q_grad_copy", q_elems, 2 * eb * q_elems,
                                 HEAD_PERMUTE_COPY_HBM_FRACTION),
                    strided_copy(p, "heads_v_grad_copy", kv_elems, 2 * eb * kv_elems,
                                 HEAD_PERMUTE_COPY_HBM_FRACTION));
    b = ts_cost_add(
        b, strided_copy(p, "qkv_split_grad_cat", qkv, 2 * eb * qkv, HEAD_GRAD_CAT_HBM_FRACTION));
  } else {
    b = ts_cost_add(streamed(p, "baddbmm_alpha_grad", q_elems, 2 * eb, 1),
                    streamed(p, "baddbmm_alpha_grad", kv_elems, 2 * eb, 1));
    b = ts_cost_add(b, strided_copy(p, "qkv_unbind_grad_stack", qkv, 2 * eb * qkv,
                                    HEAD_GRAD_STACK_HBM_FRACTION));
  }
  if (micro_batch > 1) {
    f = ts_cost_add(f, strided_copy(p, "heads_q_copy", q_elems, 2 * eb * q_elems,
                                    HEAD_PERMUTE_COPY_HBM_FRACTION));
    f = ts_cost_add(f, matmul ? strided_copy(p, "heads_k_transpose_copy", kv_elems,
                                             2 * eb * kv_elems, HEAD_TRANSPOSE_COPY_HBM_FRACTION)
                              : strided_copy(p, "heads_k_copy", kv_elems, 2 * eb * kv_elems,
                                             HEAD_PERMUTE_COPY_HBM_FRACTION));
    f = ts_cost_add(f, strided_copy(p, "heads_v_copy", kv_elems, 2 * eb * kv_elems,
                                    HEAD_PERMUTE_COPY_HBM_FRACTION));
    b = ts_cost_add(b, strided_copy(p, "heads_output_grad_copy", o_elems, 2 * eb * o_elems,
                                    HEAD_PERMUTE_COPY_HBM_FRACTION));
  }
  *fwd = ts_cost_add(*fwd, f);
  *bwd = ts_cost_add(*bwd, b);
}

static void attention_core(const ts_workload *wl, const pricer *p, ts_cost *fwd, ts_cost *bwd) {
  const ts_gpu *gpu = p->gpu;
  const ts_model *m = &wl->model;
  double peak = p->peak, eb = p->eb;
  long b = wl->micro_batch, s = m->seq, heads = m->n_heads / wl->tp;
  long d = ts_workload_qk_head_dim(wl), dv = ts_workload_v_head_dim(wl);
  long batch = b * heads;
  double B = (double)batch, S = (double)s, D = (double)d, Dv = (double)dv;
  if (wl->cp > 1) { /* flash attention: ts_workload_resolve requires it with cp */
    context_parallel_core(wl, p, fwd, bwd);
    return;
  }
  if (wl->flash_attention) { /* the table's head dimension is the query's and key's */
    flash_block(wl, p, S, true, 1, fwd, bwd);
    return;
  }
  double scores = B * S * S;
  ts_cost qk =
      priced_bgemm(p, TS_KERNEL_BGEMM_QK, B, S, D, ts_cost_gemm(gpu, peak, batch, s, s, d, eb));
  /* The softmax in fp32 under autocast (ts_workload_softmax_fp32), as ATen's softmax with dtype
   * float runs it (aten/src/ATen/native/SoftMax.cpp, softmax()): fp16 scores in one kernel that
   * writes fp32 (_softmax with half_to_float) and whose backward writes fp16; bf16 scores cast up
   * first (a widening cast, its backward a narrowing one) and a softmax in fp32. The fp32
   * probabilities are then cast back down (Hugging Face's attn_weights.type(value.dtype);
   * elsewhere autocast's cast before P V), the gradient cast up in the backward. The table's
   * softmax, measured in bf16 (4 and 6 bytes a score), at rows moving the same bytes. */
  bool fp32 = ts_workload_softmax_fp32(wl), half_in = fp32 && wl->precision == TS_PREC_FP16;
  double fwd_bytes = !fp32     ? 4.0
                     : half_in ? eb + 4
                               : 8.0,
         bwd_bytes = !fp32     ? 6.0
                     : half_in ? 8 + eb
                               : 12.0;
  /* fp32 scores' softmax from the table's own fp32 rows where it has them: PyTorch's warp softmax
   * moves fp32 rows at another rate per byte than bf16's (kernel_table.py, softmax_fp32) */
  bool fp32_rows = fp32 && !half_in && ts_kernels_has(p->table, TS_KERNEL_SOFTMAX_FP32_FWD);
  ts_cost softmax =
      fp32_rows
          ? memory_op(p, TS_KERNEL_SOFTMAX_FP32_FWD, B * S, S, fwd_bytes * scores)
          : memory_op(p, TS_KERNEL_SOFTMAX_FWD, B * S * fwd_bytes / 4.0, S, fwd_bytes * scores);
  ts_cost softmax_b =
      memory_op(p, TS_KERNEL_SOFTMAX_BWD, B * S * bwd_bytes / 6.0, S, bwd_bytes * scores);
  if (fp32) {
    softmax = ts_cost_add(softmax, streamed(p, "softmax_downcast", scores, 4 + eb, 1.0));
    softmax_b = ts_cost_add(
        streamed(p, "softmax_upcast_bwd", scores, eb + 4, AUTOCAST_WIDENING_RATE), softmax_b);
    if (!half_in) {
      softmax = ts_cost_add(streamed(p, "softmax_upcast", scores, eb + 4, AUTOCAST_WIDENING_RATE),
                            softmax);
      softmax_b = ts_cost_add(softmax_b, streamed(p, "softmax_downcast_bwd", scores, 4 + eb, 1.0));
    }
  }
  /* Without the masked-softmax fusion the causal mask is applied by a kernel of its own before
   * the softmax, reading and writing the scores (Megatron's FusedScaleMaskSoftmax
   * .forward_torch_softmax: masked_fill), and its gradient passes back through it. The softmax
   * scale rides in Q K^T's GEMM (torch.baddbmm's alpha, as Megatron and GPT-NeoX call it). */
  ts_cost unfused_b = {0};
  if (wl->causal_mask == TS_CAUSAL_MASK_WHERE) { /* stack.causal_mask, stack.h */
    softmax = ts_cost_add(softmax, streamed(p, "causal_mask_where", scores, 2 * eb, WHERE_RATE));
    unfused_b = streamed(p, "causal_mask_where_bwd", scores, 2 * eb, WHERE_RATE);
  } else if (!ts_workload_fuses(wl, TS_FUSE_MASKED_SOFTMAX)) {
    softmax =
        ts_cost_add(softmax, memory_op(p, TS_KERNEL_ATTENTION_MASK_FWD, B * S, S, 2 * eb * scores));
    unfused_b = memory_op(p, TS_KERNEL_ATTENTION_MASK_BWD, B * S, S, 2 * eb * scores);
  }
  /* Hugging Face's GPT-2 eager attention divides the scores apart (stack.score_divisions): first
   * by a 0-dim CUDA tensor (sqrt(head_dim)), then by a Python float (layer_idx + 1). Each
   * division reads and writes them (2 eb a score), and so does its gradient's (grad / other),
   * streamed against the table's add (the roofline without one): the tensor's division at
   * DIVIDE_BY_DEVICE_SCALAR_RATE, the float's at the add's rate (measured: 144 us for two
   * thirds of the add's 218 us of bytes, bench/device/h100_hf_eager_kernels.csv). */
  if (wl->score_divisions > 0) {
    qk = ts_cost_add(
        qk, streamed(p, "score_division_tensor", scores, 2 * eb, DIVIDE_BY_DEVICE_SCALAR_RATE));
    unfused_b = ts_cost_add(unfused_b, streamed(p, "score_division_tensor_bwd", scores, 2 * eb,
                                                DIVIDE_BY_DEVICE_SCALAR_RATE));
  }
  if (wl->score_divisions > 1) {
    qk = ts_cost_add(qk, streamed(p, "score_division_float", scores, 2 * eb, 1));
    unfused_b = ts_cost_add(unfused_b, streamed(p, "score_division_float_bwd", scores, 2 * eb, 1));
  }
  bool drops = wl->model.attention_dropout > 0; /* at 0 no dropout kernel runs */
  ts_cost dropout = drops ? model_only(p, "attention_dropout", scores, 5.0 * scores) : (ts_cost){0};
  ts_cost av =
      priced_bgemm(p, TS_KERNEL_BGEMM_AV, B, S, Dv, ts_cost_gemm(gpu, peak, batch, s, dv, s, eb));
  *fwd = ts_cost_add(ts_cost_add(qk, softmax), ts_cost_add(dropout, av));
  /* Backward: dV = P^T dO and dP = dO V^T from AV, dropout and softmax gradients, dQ = dS K and
   * dK = dS^T Q from QK^T; each priced as the forward product of its shape (listed with the
   * backward: three like AV, one like QK^T). */
  pricer backward = *p;
  backward.other_pass = true;
  backward.count = 3 * p->count;
  ts_cost like_av = priced_bgemm(&backward, TS_KERNEL_BGEMM_AV, B, S, Dv,
                                 ts_cost_gemm(gpu, peak, batch, s, dv, s, eb));
  backward.count = p->count;
  ts_cost like_qk = priced_bgemm(&backward, TS_KERNEL_BGEMM_QK, B, S, D,
                                 ts_cost_gemm(gpu, peak, batch, s, s, d, eb));
  ts_cost av_b = ts_cost_add(like_av, like_qk);
  ts_cost qk_b = ts_cost_add(like_av, like_av);
  ts_cost elem_b =
      ts_cost_add(softmax_b, drops ? model_only(p, "attention_dropout_bwd", scores, 7.0 * scores)
                                   : (ts_cost){0});
  *bwd = ts_cost_add(ts_cost_add(av_b, qk_b), ts_cost_add(elem_b, unfused_b));
  if (ts_workload_eager_heads(wl)) {
    double kv_heads = (double)(m->n_query_groups / wl->tp), tokens = (double)b * S;
    eager_head_copies(p, wl->eager_attention, b, B * S * D, tokens * kv_heads * D, B * S * Dv, fwd,
                      bwd);
  }
}

/* The host's time for one more eager operation, against the kernel table's eager_op_us (an
 * in-place add without autograd, 1,000 in a chain): an out-of-place operation recorded by
 * autograd under autocast (the forward of a model's extra operation) and one node of autograd's
 * backward through such a chain, measured on one H100 host beside it (bench/device/
 * hf_eager_kernels.py, host_us: 10.18 and 13.23 us against 6.42), ASSUMED alike on other hosts. */
#define AUTOGRAD_OP_FORWARD_RATIO (10.18 / 6.42)
#define AUTOGRAD_NODE_BACKWARD_RATIO (13.23 / 6.42)

/* The host's CPU time issuing n kernels of one layer's pass: the measured layer's time per
 * kernel (layer_s over layer_kernels: its modules' Python, the dispatcher and the launches) for
 * as many kernels as that layer issued, and each kernel past those one eager operation's time
 * (eager_op_s times ratio, above), as the extra operations of a model written more eagerly cost
 * it. Without eager_op_us in the table, every kernel at the layer's rate. */
static double layer_host_s(const ts_software *sw, double layer_s, int layer_kernels, double n,
                           double ratio) {
  if (sw->eager_op_s <= 0 || n <= layer_kernels)
    return n * layer_s / layer_kernels;
  return layer_s + (n - layer_kernels) * sw->eager_op_s * ratio;
}

double ts_cost_layer_host_s(const ts_software *sw, int n, bool backward) {
  if (sw->cpu_layer_forward_s <= 0)
    return 0;
  return backward ? layer_host_s(sw, sw->cpu_layer_backward_s, sw->kernels_per_layer_backward, n,
                                 AUTOGRAD_NODE_BACKWARD_RATIO)
                  : layer_host_s(sw, sw->cpu_layer_forward_s, sw->kernels_per_layer_forward, n,
                                 AUTOGRAD_OP_FORWARD_RATIO);
}

/* Stretches pieces[0..n) evenly so that they last at least cpu_s: the host issues kernels
 * asynchronously, so a stretch of work takes max(GPU time, CPU time). */
static void host_bound(ts_cost **pieces, int n, double cpu_s) {
  double gpu_s = 0;
  for (int i = 0; i < n; i++)
    gpu_s += pieces[i]->time_s;
  if (!(cpu_s > gpu_s) || !(gpu_s > 0))
    return;
  for (int i = 0; i < n; i++)
    pieces[i]->time_s *= cpu_s / gpu_s;
}

/* One normalization over rows x h: it reads and writes the activation (plus fp32 statistics,
 * negligible); its backward reads input and gradient and writes one, and accumulates its
 * weight's (and LayerNorm's bias') gradient. */
static void norm_costs(const ts_workload *wl, const pricer *p, double rows, double h, ts_cost *fwd,
                       ts_cost *bwd) {
  double eb = p->eb, shard = rows * h;
  ts_cost weights =
      wl->model.rms_norm ? grad_accum(p, h) : ts_cost_add(grad_accum(p, h), grad_accum(p, h));
  bool rms = wl->model.rms_norm;
  if (ts_workload_fuses(wl, TS_FUSE_DROPOUT_ADD_LAYER_NORM)) {
    /* flash-attn's fused_dropout_add_ln (stack.h) over an fp32 residual: forward reads the
     * branch (eb) and the residual (4) and writes the normalized output (eb), the new residual
     * (4) and, with dropout, its 1-byte mask; its prenorm backward reads the output's gradient
     * (eb), the residual's from above (4), the residual (4) and the mask, and writes the
     * branch's (eb) and the residual's (4) gradients, summing the two: its own kernels, streamed
     * at their measured rates (FA_LAYER_NORM_*_RATE). */
    double mask = wl->model.hidden_dropout > 0 ? 1 : 0;
    *fwd = streamed(p, "dropout_add_layer_norm", shard, 2 * eb + 8 + mask, FA_LAYER_NORM_FWD_RATE);
    *bwd = ts_cost_add(streamed(p, "dropout_add_layer_norm_bwd", shard, 2 * eb + 12 + mask,
                                FA_LAYER_NORM_BWD_RATE),
                       weights);
    return;
  }
  if (rms && wl->rms_norm_impl == TS_RMS_NORM_EAGER_FP32 && !wl->is_compiled) {
    /* torchtitan's eager fp32 RMSNorm (stack.h): the roofline where the table lacks it, on the
     * bytes its operations move, ASSUMED counted from autograd's graph: 36 an element forward
     * (the fp32 upcast, pow, mean, product, type_as, weight), 88 backward; the H100's table
     * runs at 0.72 and 0.51 of that roofline */
    *fwd = memory_op(p, TS_KERNEL_RMS_NORM_FP32_FWD, rows, h, 36.0 * shard);
    *bwd = memory_op(p, TS_KERNEL_RMS_NORM_FP32_BWD, rows, h, 88.0 * shard);
    return;
  }
  if (ts_workload_residual_fp32(wl)) {
    /* Under autocast (ts_workload_residual_fp32) the norm reads and writes fp32 (8 bytes a value
     * forward; its backward reads the fp32 gradient and input and writes one, 12), priced as the
     * table's norm over the rows that move as many bytes; the next linear casts its input down
     * (autocast's cast, reading 4 and writing eb), and the backward casts that gradient up. */
    *fwd = ts_cost_add(memory_op(p, TS_KERNEL_LAYER_NORM_FWD, rows * 8 / (2 * eb), h, 8 * shard),
                       streamed(p, "autocast_input_cast", shard, 4 + eb, 1));
    *bwd = ts_cost_add(
        ts_cost_add(streamed(p, "autocast_input_cast_bwd", shard, eb + 4, AUTOCAST_WIDENING_RATE),
                    memory_op(p, TS_KERNEL_LAYER_NORM_BWD, rows * 12 / (4 * eb), h, 12 * shard)),
        weights);
    return;
  }
  *fwd = memory_op(p, rms ? TS_KERNEL_RMS_NORM_FWD : TS_KERNEL_LAYER_NORM_FWD, rows, h,
                   2 * eb * shard);
  *bwd = ts_cost_add(memory_op(p, rms ? TS_KERNEL_RMS_NORM_BWD : TS_KERNEL_LAYER_NORM_BWD, rows, h,
                               4 * eb * shard),
                     weights);
}

/* The MLP's activation over `elements` values of its intermediate (cost_layer explains the
 * bytes): SwiGLU fused (Megatron) or eager, or GeLU. */
static void activation(const ts_workload *wl, const pricer *p, double elements, ts_cost *fwd,
                       ts_cost *bwd) {
  double eb = p->eb, n = elements;
  if (wl->model.swiglu && ts_workload_fuses(wl, TS_FUSE_SWIGLU)) {
    *fwd = model_only(p, "swiglu_fused", n, 3 * eb * n);
    *bwd = model_only(p, "swiglu_fused_bwd", n, 5 * eb * n);
  } else if (wl->model.swiglu) {
    *fwd = memory_op(p, TS_KERNEL_SWIGLU_FWD, n, 0, 3 * eb * n);
    *bwd = memory_op(
        p, wl->gate_up == TS_GATE_UP_SEPARATE ? TS_KERNEL_SWIGLU_SPLIT_BWD : TS_KERNEL_SWIGLU_BWD,
        n, 0, 5 * eb * n);
  } else if (wl->model.squared_relu) {
    /* torch.pow(F.relu(x), 2), eager: relu and pow forward (2 eb an element each); backward,
     * PyTorch's derivatives (tools/autograd/derivatives.yaml): pow_backward's
     * grad * (2 * x.pow(1)), a copy, a scalar product and a product (2 + 2 + 3 eb), then
     * relu's threshold_backward (3 eb). The roofline prices them (no table has them). */
    *fwd = ts_cost_add(model_only(p, "relu", n, 2 * eb * n), model_only(p, "pow", n, 2 * eb * n));
    *bwd = ts_cost_add(ts_cost_add(model_only(p, "pow_bwd_copy", n, 2 * eb * n),
                                   model_only(p, "pow_bwd_scale", n, 2 * eb * n)),
                       ts_cost_add(model_only(p, "pow_bwd_mul", n, 3 * eb * n),
                                   model_only(p, "relu_bwd", n, 3 * eb * n)));
  } else if (ts_workload_fuses(wl, TS_FUSE_DENSE_GELU_DENSE)) {
    /* flash-attn's fused_dense_gelu_dense (stack.h): GeLU in the GEMMs' cuBLASLt epilogues,
     * whose only extra traffic is the pre-activation written forward and read back backward
     * (eb an element each), priced by those bytes beside the GEMMs (ASSUMED). */
    *fwd = epilogue_bytes(p, "gemm_gelu_epilogue", n, eb * n);
    *bwd = epilogue_bytes(p, "gemm_dgelu_epilogue_bwd", n, eb * n);
  } else if (wl->gelu_impl == TS_GELU_EAGER_TANH && !wl->is_compiled && !p->autocast) {
    /* Hugging Face's gelu_new as eager operations (stack.h): forward pow, three scalar
     * products, an add, tanh, a scalar add and the product (2, 2, 3, 2, 2, 2, 2, 3 eb an
     * element); backward, PyTorch's derivatives (tools/autograd/derivatives.yaml): the
     * product's two gradients (3 eb each), tanh_backward (3), the two scalar products' (2 each),
     * pow_backward's x.pow(2), its scale and product (2, 2, 3), 0.5 x's (2) and the two adds
     * summing x's three gradients (3 each): 18 eb forward in 8 kernels, 28 eb backward in 11.
     * Each streamed at the table's add rate (the roofline without one). */
    *fwd = streamed_n(p, "gelu_new_eager", n, 18.0 / 8 * eb, 1, 8);
    *bwd = streamed_n(p, "gelu_new_eager_bwd", n, 28.0 / 11 * eb, 1, 11);
  } else if (wl->gelu_impl == TS_GELU_EAGER_TANH && !wl->is_compiled) {
    /* The same under autocast, where pow is on the fp32 list (autocast_mode.h, AT_FORALL_FP32):
     * x is cast up for it and the chain runs in fp32 from there (type promotion), its output
     * cast down again before the next linear. Forward: the upcast (eb + 4), pow, the scalar
     * product, the add of x (eb + 8), the scalar product, tanh, the scalar add, 0.5 x (2 eb)
     * and the product (eb + 8), then the downcast (4 + eb). Backward: the gradient cast up,
     * the product's two gradients (12; eb + 8), tanh_backward (12), two scalar products (8),
     * pow_backward (8, 8, 12), 0.5 x's (2 eb), the two adds of x's gradients (3 eb each), and
     * three gradients cast down to their inputs' dtypes (the product's eb factor, x's through
     * the add and through the upcast): 76 bytes an element forward in 10 kernels, 118 backward
     * in 15 (bf16 or fp16). */
    *fwd =
        ts_cost_add(ts_cost_add(streamed(p, "gelu_new_upcast", n, eb + 4, AUTOCAST_WIDENING_RATE),
                                streamed_n(p, "gelu_new_eager_fp32", n, (56 + 4 * eb) / 8, 1, 8)),
                    streamed(p, "gelu_new_downcast", n, 4 + eb, 1));
    *bwd = ts_cost_add(
        ts_cost_add(streamed(p, "gelu_new_upcast_bwd", n, eb + 4, AUTOCAST_WIDENING_RATE),
                    streamed_n(p, "gelu_new_eager_fp32_bwd", n, (76 + 9 * eb) / 11, 1, 11)),
        streamed_n(p, "gelu_new_downcast_bwd", n, 4 + eb, 1, 3));
  } else {
    *fwd = memory_op(p, TS_KERNEL_GELU_FWD, n, 0, 2 * eb * n);
    *bwd = memory_op(p, TS_KERNEL_GELU_BWD, n, 0, 3 * eb * n);
    /* The Megatron family's first MLP GEMM leaves its bias out (skip_bias_add) for the fused
     * bias-GeLU kernel; without that fusion the bias is added by a kernel of its own (GPT-NeoX:
     * activation_func(intermediate + bias)). PyTorch's nn.Linear adds it in the GEMM. */
    if (wl->model.bias && !ts_framework_is_pytorch(wl->framework) &&
        !ts_workload_fuses(wl, TS_FUSE_BIAS_GELU))
      *fwd = ts_cost_add(*fwd, model_only(p, "bias_add", n, 2 * eb * n));
  }
}

/* flash-attn's unpad_input and pad_input around FlashAttention-2's variable-length kernel
 * (stack.unpad_input; flash-attn's bert_padding.py, as llm-foundry's MPT calls it: flash_attn_fn
 * in llmfoundry/models/layers/attention.py at 5e85bd62d). Each of Q, K and V is unpadded: the
 * mask's sum, torch.nonzero, .max().item(), a cumsum and a pad (five small kernels, nonzero and
 * .item() each synchronising the host), then index_first_axis gathers its rows (a read and a
 * write of its values); the output is padded back by a zero fill and index_put (three moves).
 * Backward, each gather's gradient is zero-filled and scattered (three moves) and the output's
 * gradient gathered (two). The copies are priced by the roofline on those bytes. After each
 * synchronisation the GPU has nothing queued, so the host's time issuing the unpads' kernels
 * (six each) is the GPU's idle time: ASSUMED all of it, at the host's time per kernel of the
 * kernel table's layer measurement (the launch time without one). Checked on an H100
 * (bench/device/unpad_input.py, h100_unpad_input.csv: a layer proxy's forward and backward):
 * +1.23 ms at MPT-1B's shape and micro-batch and +1.14 ms at 7B's, against +1.17 and +1.15 ms
 * priced; with tiny tensors, host-bound, +0.64 ms against +0.88 (the layer's host time per
 * kernel is more than these plain calls take). */
static void unpad_input(const ts_workload *wl, const ts_gpu *gpu, const pricer *p, double tokens,
                        ts_cost *fwd, ts_cost *bwd) {
  const ts_model *m = &wl->model;
  double eb = p->eb, t = (double)wl->tp;
  double d = (double)ts_workload_qk_head_dim(wl), dv = (double)ts_workload_v_head_dim(wl);
  double widths[3] = {(double)m->n_heads / t * d, (double)m->n_query_groups / t * d,
                      (double)m->n_query_groups / t * dv}; /* Q, K, V */
  double out_w = (double)m->n_heads / t * dv;
  pricer each = *p; /* the five small kernels of each of the three unpads, logged once */
  each.count = 15;
  ts_cost small = model_only(&each, "unpad_index", 0, 0);
  for (int k = 0; k < 3; k++) {
    double n = tokens * widths[k];
    *fwd = ts_cost_add(*fwd, model_only(p, "unpad_gather", n, 2 * eb * n));
    *bwd = ts_cost_add(*bwd, model_only(p, "unpad_gather_bwd", n, 3 * eb * n));
    for (int i = 0; i < 5; i++)
      *fwd = ts_cost_add(*fwd, small);
  }
  *fwd = ts_cost_add(*fwd, model_only(p, "pad_output", tokens * out_w, 3 * eb * tokens * out_w));
  *bwd =
      ts_cost_add(*bwd, model_only(p, "pad_output_bwd", tokens * out_w, 2 * eb * tokens * out_w));
  const ts_software *sw = &gpu->software;
  double per_kernel = sw->cpu_layer_forward_s > 0 && sw->kernels_per_layer_forward > 0
                          ? sw->cpu_layer_forward_s / sw->kernels_per_layer_forward
                          : gpu->kernel_launch_s;
  ts_cost idle = {0};
  idle.time_s = 3 * 6 * per_kernel; /* the host's gaps: no kernel, no power class */
  ts_cost shown = idle; /* shown beside the kernels (profile), as the model's */
  shown.n_by_source[TS_KERNEL_SRC_MODEL] = 1;
  log_kernel(p, "host_sync_gaps", 0, NULL, &shown);
  *fwd = ts_cost_add(*fwd, idle);
}

static void cost_layer(const ts_workload *wl, const ts_gpu *gpu, ts_kernel_log *log,
                       const double *stretch, ts_layer_cost *out) {
  const ts_model *m = &wl->model;
  memset(out, 0, sizeof *out);
  pricer pr = pricer_of(wl, gpu);
  pr.log = log;
  pr.stretch = stretch;
  pr.fp8 = wl->fp8 != TS_FP8_NONE;
  const pricer *p = &pr;
  double eb = pr.eb;
  long t = wl->tp, bs = wl->micro_batch * ts_workload_local_seq(wl), h = m->hidden;
  long d = ts_workload_qk_head_dim(wl), dv = ts_workload_v_head_dim(wl);
  double act = (double)bs * (double)h; /* elements of one b x s x h activation */
  bool fused = ts_workload_fuses(wl, TS_FUSE_GRADIENT_ACCUMULATION);

  pr.piece = "qkv";
  linear_cost qkv, proj, qkv_in; /* qkv_in: the GEMMs that take the layer's input */
  if (!m->mla) {
    qkv = qkv_in = linear(p, bs, (m->n_heads + 2 * m->n_query_groups) * d / t, h, fused);
  } else {
    /* Multi-head latent attention as its GEMMs (Megatron-Core's MLASelfAttention): the down
     * projections to the query latent and to the key-value latent with the shared rotary key,
     * replicated on every TP rank; RMSNorm on both latents; the up projections to the heads'
     * queries and to their keys and values, column-parallel. The latent norms are priced as
     * the layer's norms are, over the latents' widths. */
    long n = m->n_heads / t, q_lora = m->q_lora_rank, kv_lora = m->kv_lora_rank;
    ts_cost norm_f, norm_b;
    qkv_in =
        linear(p, bs, (q_lora > 0 ? q_lora : n * d) + kv_lora + m->qk_pos_emb_head_dim, h, fused);
    qkv = qkv_in;
    if (q_lora > 0) {
      pr.piece = "q_up";
      linear_cost up = linear(p, bs, n * d, q_lora, fused);
      norm_costs(wl, p, (double)bs, (double)q_lora, &norm_f, &norm_b);
      qkv.fwd = ts_cost_add(qkv.fwd, ts_cost_add(norm_f, up.fwd));
      qkv.bwd = ts_cost_add(qkv.bwd, ts_cost_add(norm_b, up.bwd));
      qkv.wgrad = ts_cost_add(qkv.wgrad, up.wgrad);
      out->mla_up_fwd = ts_cost_add(norm_f, up.fwd);
    }
    pr.piece = "kv_up";
    linear_cost up = linear(p, bs, n * (m->qk_head_dim + dv), kv_lora, fused);
    norm_costs(wl, p, (double)bs, (double)kv_lora, &norm_f, &norm_b);
    qkv.fwd = ts_cost_add(qkv.fwd, ts_cost_add(norm_f, up.fwd));
    qkv.bwd = ts_cost_add(qkv.bwd, ts_cost_add(norm_b, up.bwd));
    qkv.wgrad = ts_cost_add(qkv.wgrad, up.wgrad);
    out->mla_up_fwd = ts_cost_add(out->mla_up_fwd, ts_cost_add(norm_f, up.fwd));
  }
  pr.piece = "proj";
  proj = linear(p, bs, h, m->n_heads * dv / t, fused);
  /* SwiGLU: gate and up in one GEMM, as Megatron-Core fuses them; or two (stack.gate_up
   * separate), whose input gradients autograd sums */
  pr.piece = "fc1";
  bool split = m->swiglu && wl->gate_up == TS_GATE_UP_SEPARATE;
  linear_cost fc1 = linear(p, bs, (m->swiglu && !split ? 2 : 1) * (m->ffn_hidden / t), h, fused);
  if (split) {
    pr.piece = "fc1 (up)";
    pr.input_cast_shared = true; /* torchao: w1's input casts serve w3 */
    linear_cost up = linear(p, bs, m->ffn_hidden / t, h, fused);
    pr.input_cast_shared = false;
    fc1.fwd = ts_cost_add(fc1.fwd, up.fwd);
    fc1.wgrad = ts_cost_add(fc1.wgrad, up.wgrad);
    double x = (double)bs * (double)h;
    fc1.bwd = ts_cost_add(ts_cost_add(fc1.bwd, up.bwd), gradient_sum(p, x, 3 * eb * x));
  }
  pr.piece = "fc2";
  linear_cost fc2 = linear(p, bs, h, m->ffn_hidden / t, fused);
  pr.piece = "attention";
  ts_cost core_f, core_b;
  attention_core(wl, p, &core_f, &core_b);
  /* Transformer Engine's amax history and scale update under delayed scaling, a kernel per
   * layer and pass (ASSUMED; the amax all-reduce over tp x dp is not modelled); the other
   * recipes scale from the tensor itself */
  if (pr.fp8 && wl->fp8_recipe == TS_FP8_RECIPE_DELAYED) {
    pr.piece = "fp8 scales";
    core_f = ts_cost_add(core_f, model_only(p, "fp8_scale_update", 0, 0));
    core_b = ts_cost_add(core_b, model_only(p, "fp8_scale_update_bwd", 0, 0));
  }

  /* Memory-bound kernels: layer norm reads and writes the activation (plus fp32 statistics,
   * negligible), its backward also accumulates the gradients of its weight and bias; bias-
   * dropout-add reads input and residual, writes output and a 1-byte mask (fused: one kernel;
   * unfused: dropout, then the add); its backward applies the mask, and the residual stream's
   * two gradients (through the block and around it) are summed by an add. GeLU reads and
   * writes the b x s x f/t intermediate. With sequence parallelism, layer norms and bda's see
   * s/t of the sequence. */
  double rows = wl->sequence_parallel ? (double)bs / (double)t : (double)bs;
  double shard = rows * (double)h;
  double ffn_act = (double)bs * (double)(m->ffn_hidden / t);
  pr.piece = "ln1, ln2";
  pr.count = 2;
  ts_cost ln, ln_b;
  norm_costs(wl, p, rows, (double)h, &ln, &ln_b);
  pr.piece = "bda1, bda2";
  /* Without dropout (hidden_dropout 0) the fused kernel only adds bias and residual, keeping no
   * mask, and nothing runs backward; unfused, only the residual add runs. flash-attn's
   * fused_dropout_add_ln runs each dropout and residual add inside the next norm's kernel (the
   * MLP's in the next layer's ln1, the last layer's in the final norm: norm_costs prices them
   * there), no kernels here. */
  bool fused_bda = ts_workload_fuses(wl, TS_FUSE_BIAS_DROPOUT), drops = m->hidden_dropout > 0;
  /* An fp32 residual stream (ts_workload_residual_fp32): the add reads the branch (eb) and the
   * residual (4) and writes 4, 8 - 2 eb bytes a value more than in eb; backward the residual's
   * two gradients are summed in fp32 (12 bytes, not 3 eb), and the branch's is cast down to its
   * dtype first (autograd matches a gradient to its input's dtype). The table's kernels are
   * priced over the values that move as many bytes. */
  bool fp32 = ts_workload_residual_fp32(wl);
  double more = fp32 ? 8 - 2 * eb : 0, more_b = fp32 ? 12 - 3 * eb : 0;
  double fwd_bytes = fused_bda ? 3 * eb + (drops ? 1 : 0) : drops ? 5 * eb + 1 : 3 * eb;
  double like = shard * (fwd_bytes + more) / fwd_bytes,
         like_b = shard * (3 * eb + more_b) / (3 * eb);
  ts_cost bda = {0}, bda_b = {0};
  if (!ts_workload_fuses(wl, TS_FUSE_DROPOUT_ADD_LAYER_NORM)) {
    bda = fused_bda ? model_only(p, "bias_dropout_add_fused", shard, (fwd_bytes + more) * shard)
          : drops   ? memory_op(p, TS_KERNEL_DROPOUT_ADD_FWD, like, 0, (fwd_bytes + more) * shard)
                    : memory_op(p, TS_KERNEL_ADD_FWD, like, 0, (fwd_bytes + more) * shard);
    bda_b = gradient_sum(p, like_b, (3 * eb + more_b) * shard);
    if (drops)
      bda_b = ts_cost_add(
          fused_bda ? model_only(p, "bias_dropout_add_fused_bwd", shard, (2 * eb + 1) * shard)
                    : memory_op(p, TS_KERNEL_DROPOUT_ADD_BWD, shard, 0, (2 * eb + 1) * shard),
          bda_b);
    if (fp32)
      bda_b = ts_cost_add(bda_b, streamed(p, "residual_grad_cast", shard, 4 + eb, 1));
  }
  pr.piece = m->swiglu ? "swiglu" : "gelu";
  pr.count = 1;
  out->ln1 = out->ln2 = ln;
  out->bda1 = out->bda2 = bda;
  out->ln1_bwd = out->ln2_bwd = ln_b;
  out->bda1_bwd = out->bda2_bwd = bda_b;
  /* SwiGLU reads gate and up and writes their product (3 values an element); its backward reads
   * both and the output's gradient and writes two gradients (5). The rotary embedding reads
   * and writes Q and K. Megatron-Core fuses each into one kernel (bias_swiglu_fusion,
   * apply_rope_fusion: its defaults), priced by the roofline on those bytes; plain PyTorch runs
   * them as eager operations, priced from the kernel table (several kernels each). */
  bool fuses = ts_workload_fuses(wl, TS_FUSE_ROPE);
  ts_cost gelu, gelu_b;
  activation(wl, p, ffn_act, &gelu, &gelu_b);
  if (m->rope) {
    pr.piece = "rope";
    /* MLA: only the rotary parts (qk_pos_emb_head_dim) of each query and of the shared key. */
    double qk =
        m->mla ? (double)bs * (double)m->qk_pos_emb_head_dim * ((double)m->n_heads / (double)t + 1)
               : (double)bs * (double)(m->n_heads + m->n_query_groups) * (double)d / (double)t *
                     m->rotary_percent;
    /* stack.rope complex: the fp32 upcast, complex product and type_as, 20 bytes an element
     * each way on the roofline where the table lacks it (ASSUMED counted) */
    bool complex = wl->rope_impl == TS_ROPE_COMPLEX;
    ts_cost rope = fuses     ? model_only(p, "rope_fused", qk, 2 * eb * qk)
                   : complex ? memory_op(p, TS_KERNEL_ROPE_COMPLEX_FWD, qk, 0, 20.0 * qk)
                             : memory_op(p, TS_KERNEL_ROPE_FWD, qk, 0, 2 * eb * qk);
    ts_cost rope_b = fuses     ? model_only(p, "rope_fused_bwd", qk, 2 * eb * qk)
                     : complex ? memory_op(p, TS_KERNEL_ROPE_COMPLEX_BWD, qk, 0, 20.0 * qk)
                               : memory_op(p, TS_KERNEL_ROPE_BWD, qk, 0, 2 * eb * qk);
    core_f = ts_cost_add(core_f, rope);
    core_b = ts_cost_add(core_b, rope_b);
    out->rope_fwd = rope;
    out->mla_up_fwd = ts_cost_add(out->mla_up_fwd, m->mla ? rope : (ts_cost){0});
  }
  /* Plain PyTorch's grouped-query attention through SDPA: K and V copied to every query head,
   * a kernel each (reads the groups' values, writes the heads'); the backward sums each head's
   * gradient into its group (reads the heads', writes the groups'). Priced by the roofline. */
  ts_cost repeat = {0};
  if (ts_workload_repeats_kv(wl)) {
    pr.piece = "repeat_kv";
    double tokens = (double)bs, groups = (double)(m->n_query_groups / t),
           heads = (double)(m->n_heads / t);
    for (int v = 0; v < 2; v++) { /* K, then V */
      double width = tokens * (double)(v ? dv : d), moved = eb * width * (groups + heads);
      repeat = ts_cost_add(repeat, model_only(p, "repeat_kv", width * heads, moved));
      core_b = ts_cost_add(core_b, model_only(p, "repeat_kv_bwd", width * heads, moved));
    }
  }
  core_f = ts_cost_add(core_f, repeat);
  if (wl->is_unpad_input) {
    pr.piece = "unpad_input";
    unpad_input(wl, gpu, p, (double)bs, &core_f, &core_b);
  }
  out->attn = ts_cost_add(ts_cost_add(qkv.fwd, core_f), proj.fwd);
  out->attn_bwd = ts_cost_add(ts_cost_add(proj.bwd, core_b), qkv.bwd);
  out->mlp = ts_cost_add(ts_cost_add(fc1.fwd, gelu), fc2.fwd);
  out->mlp_bwd = ts_cost_add(ts_cost_add(fc2.bwd, gelu_b), fc1.bwd);
  out->wgrad_share_attn = share(ts_cost_add(qkv.wgrad, proj.wgrad), out->attn_bwd);
  out->wgrad_share_mlp = share(ts_cost_add(fc1.wgrad, fc2.wgrad), out->mlp_bwd);
  out->attn_core_fwd = core_f;
  out->attn_core_bwd = core_b;
  out->mlp_recompute_fwd = ts_cost_add(fc1.fwd, gelu);
  /* torchtitan's op policy re-runs what its save list does not keep (memory.c, op_saved), up
   * to the last tensor the backward needs (torch.utils.checkpoint stops its recomputation
   * there): the norms, wk, the rotary embedding, repeat_kv, wo, the first residual add, w3 (the
   * MLP's up projection, where gate and up are separate as torchtitan's) and the activation;
   * wk and w3 priced as GEMMs of their own widths, not listed with the forward's kernels.
   * Measured on an H100 (bench/device/h100_op_sac.csv): 7.4 ms a Llama 3 8B layer at
   * micro-batch 2 x 8,192. */
  if (wl->recompute == TS_RECOMPUTE_OP) {
    pricer quiet = pr;
    quiet.log = NULL;
    ts_cost k = linear(&quiet, bs, m->n_query_groups * d / t, h, fused).fwd;
    ts_cost up = split ? linear(&quiet, bs, m->ffn_hidden / t, h, fused).fwd : (ts_cost){0};
    ts_cost attn_part = ts_cost_add(ts_cost_add(k, out->rope_fwd), ts_cost_add(repeat, proj.fwd));
    ts_cost mlp_part = ts_cost_add(up, gelu);
    out->op_recompute_fwd =
        ts_cost_add(ts_cost_add(ts_cost_add(ln, ln), ts_cost_add(bda, attn_part)), mlp_part);
  }
  /* Context parallelism: each rank's keys and values (s / cp tokens of the query groups' or,
   * with MLA, the heads' widths; of every head where a plain PyTorch model repeats them before
   * SDPA, which the ring wraps: torchtitan's), gathered around the ring: the all-gather's whole
   * buffer. */
  double kv_heads = ts_workload_repeats_kv(wl) ? (double)m->n_heads : (double)m->n_query_groups;
  out->cp_kv_bytes =
      wl->cp > 1 ? eb * (double)bs * (kv_heads / (double)t) * (double)(d + dv) * (double)wl->cp : 0;
  /* PyTorch's fp32 gradients: 4 / eb of the keys' bytes a step, cp steps, each rank sending what
   * an all-gather of cp / (cp - 1) times that buffer would */
  double cp = (double)wl->cp;
  out->cp_bwd_bytes = wl->cp_attention == TS_CP_ATTENTION_PYTORCH && wl->cp > 1
                          ? out->cp_kv_bytes * (1.0 + 4.0 / eb * cp / (cp - 1.0))
                          : 2.0 * out->cp_kv_bytes;
  out->share_attn_in = share(qkv_in.fwd, out->attn);
  out->share_attn_out = share(proj.fwd, out->attn);
  out->share_mlp_in = share(fc1.fwd, out->mlp);
  out->share_mlp_out = share(fc2.fwd, out->mlp);
  out->share_attn_bwd_in =
      share(proj.bwd, out->attn_bwd) / 2; /* dgrad: about half of dgrad + wgrad */
  out->share_attn_bwd_out = share(qkv.bwd, out->attn_bwd) / 2;
  out->share_mlp_bwd_in = share(fc2.bwd, out->mlp_bwd) / 2;
  out->share_mlp_bwd_out = share(fc1.bwd, out->mlp_bwd) / 2;
  out->tp_comm_bytes = t > 1 ? eb * act : 0;

  /* The host: per-kernel CPU time measured on a layer of the same framework, each collective
   * call's enqueue (tensor parallelism: 2 a pass, 4 with sequence parallelism; ZeRO-3: the
   * weights' all-gather, and in backward their gradients' reduce-scatter) and FSDP's work per
   * wrapped unit (a layer), taken as half in each pass (ASSUMED). */
  const ts_software *sw = &gpu->software;
  bool zero3 = ts_workload_zero(wl) == 3 && ts_workload_dp_cp(wl) > 1;
  double tp_calls = t > 1 ? (wl->sequence_parallel ? 4 : 2) : 0;
  double fsdp_s = zero3 && ts_framework_is_pytorch(wl->framework) ? gpu->fsdp_unit_s / 2 : 0;
  double launch_fwd_s = (tp_calls + zero3) * gpu->collective_launch_s + fsdp_s;
  double launch_bwd_s = (tp_calls + 2 * zero3) * gpu->collective_launch_s + fsdp_s;
  if (sw->cpu_layer_forward_s > 0) {
    ts_cost *f[] = {&out->ln1, &out->attn, &out->bda1, &out->ln2, &out->mlp, &out->bda2};
    int n = 0;
    for (int i = 0; i < 6; i++)
      n += f[i]->n_kernels;
    double gpu_s = 0;
    for (int i = 0; i < 6; i++)
      gpu_s += f[i]->time_s;
    double cpu_s = ts_cost_layer_host_s(sw, n, false) + launch_fwd_s;
    host_bound(f, 6, cpu_s);
    if (cpu_s > gpu_s && gpu_s > 0) { /* recomputation re-runs part of the same pass */
      out->attn_core_fwd.time_s *= cpu_s / gpu_s;
      out->op_recompute_fwd.time_s *= cpu_s / gpu_s;
      out->mlp_recompute_fwd.time_s *= cpu_s / gpu_s;
    }
  }
  if (sw->cpu_layer_backward_s > 0) {
    ts_cost *b[] = {&out->bda2_bwd, &out->mlp_bwd,  &out->ln2_bwd,
                    &out->bda1_bwd, &out->attn_bwd, &out->ln1_bwd};
    int n = 0;
    for (int i = 0; i < 6; i++)
      n += b[i]->n_kernels;
    double before = out->attn_bwd.time_s;
    host_bound(b, 6, ts_cost_layer_host_s(sw, n, true) + launch_bwd_s);
    if (before > 0) /* the core is part of attn_bwd: stretched with it */
      out->attn_core_bwd.time_s *= out->attn_bwd.time_s / before;
  }
}

/* One linear layer of `experts` experts of m tokens each run as grouped GEMMs
 * (torch._grouped_mm; Megatron-Core's TEGroupedMLP): y[E m, n] = x[E m, k] W[E, k, n]. The
 * table measures them (bench/device/kernel_table.py, section moe); elsewhere the model's price
 * is a batch of E GEMMs, each quantised to tiles and waves on its own, every expert's weights
 * read: what makes a grouped GEMM of few tokens per expert slower than one GEMM over all its
 * tokens. The weight gradients (E k n of them) accumulate into main_grad like a linear's. */
static linear_cost grouped_linear(const pricer *p, long experts, long m, long n, long k,
                                  bool is_fused_accum) {
  const ts_gpu *gpu = p->gpu;
  double E = (double)experts, M = (double)m, N = (double)n, K = (double)k;
  linear_cost c;
  c.fwd = priced_at(p, TS_KERNEL_GROUPED_MM_FWD, (double[]){E, M, N, K},
                    ts_cost_gemm(gpu, p->peak, experts, m, n, k, p->eb));
  ts_cost dgrad = priced_at(p, TS_KERNEL_GROUPED_MM_DGRAD, (double[]){E, M, K, N},
                            ts_cost_gemm(gpu, p->peak, experts, m, k, n, p->eb));
  ts_cost wgrad_model = ts_cost_gemm(gpu, p->peak, experts, k, n, m, p->eb);
  if (is_fused_accum)
    accumulate_in_gemm(gpu, &wgrad_model, E * K * N);
  ts_cost wgrad = priced_at(p, TS_KERNEL_GROUPED_MM_WGRAD, (double[]){E, M, N, K}, wgrad_model);
  c.wgrad = ts_cost_add(wgrad, accumulations(p, E * N, E * K * N, is_fused_accum));
  c.bwd = ts_cost_add(dgrad, c.wgrad);
  return c;
}

/* An MLP of width f (already divided over its tensor-parallel ranks) on `rows` tokens spread
 * over `experts` experts (1: a dense MLP or a shared expert): FC1, the activation, FC2, as the
 * dense layer prices them; several experts as grouped GEMMs (`grouped`, bf16) or one expert's
 * GEMMs after another (Megatron-Core's SequentialMLP; FP8 experts likewise). */
static void mlp_cost(const ts_workload *wl, pricer *pr, const char *piece, double rows, long f,
                     long experts, bool grouped, ts_cost *fwd, ts_cost *bwd, double *wgrad_share,
                     ts_cost *act_fwd) {
  const ts_model *m = &wl->model;
  const pricer *p = pr;
  bool fused = ts_workload_fuses(wl, TS_FUSE_GRADIENT_ACCUMULATION);
  long each = (long)ceil(rows / (double)experts), h = m->hidden, n1 = (m->swiglu ? 2 : 1) * f;
  bool group = grouped && experts > 1 && !pr->fp8;
  long gemms = group ? 1 : experts;
  double act = rows * (double)f;
  char name[24];
  pr->count = (int)gemms;
  snprintf(name, sizeof name, "%s fc1", piece);
  pr->piece = name;
  linear_cost fc1 =
      group ? grouped_linear(p, experts, each, n1, h, fused) : linear(p, each, n1, h, fused);
  snprintf(name, sizeof name, "%s fc2", piece);
  linear_cost fc2 =
      group ? grouped_linear(p, experts, each, h, f, fused) : linear(p, each, h, f, fused);
  pr->count = 1;
  snprintf(name, sizeof name, "%s act", piece);
  ts_cost a, a_b;
  activation(wl, p, act, &a, &a_b);
  double g = (double)gemms;
  *fwd = ts_cost_add(ts_cost_add(times(fc1.fwd, g), a), times(fc2.fwd, g));
  *bwd = ts_cost_add(ts_cost_add(times(fc2.bwd, g), a_b), times(fc1.bwd, g));
  *wgrad_share = share(times(ts_cost_add(fc1.wgrad, fc2.wgrad), g), *bwd);
  *act_fwd = a;
}

static void cost_moe(const ts_workload *wl, const ts_gpu *gpu, ts_kernel_log *log,
                     const double *stretch, ts_moe_cost *out) {
  const ts_model *m = &wl->model;
  memset(out, 0, sizeof *out);
  if (m->n_experts == 0)
    return;
  pricer pr = pricer_of(wl, gpu);
  pr.log = log;
  pr.stretch = stretch;
  const pricer *p = &pr;
  double eb = pr.eb, h = (double)m->hidden, experts = (double)m->n_experts;
  long t = wl->tp, etp = ts_workload_etp(wl), local = m->n_experts / wl->ep;
  double bs = (double)(wl->micro_batch * ts_workload_local_seq(wl)), rows = bs / (double)t;
  double k = (double)m->moe_topk;
  double factor = ts_workload_moe_token_factor(wl), sent = rows * k * factor;
  out->tokens = sent * (double)etp;
  out->dispatch_bytes = wl->ep > 1 ? eb * h * sent : 0;
  out->dispatch_fwd_bytes = wl->moe_flex && wl->fp8 != TS_FP8_NONE
                                ? out->dispatch_bytes * (1.0 + 4.0 / 128.0) / eb
                                : out->dispatch_bytes;
  out->etp_bytes = etp > 1 ? eb * h * out->tokens : 0;
  out->shared_tp_bytes = t > 1 && m->moe_shared_ffn > 0 ? eb * h * bs : 0;

  /* The router: a linear h -> n_experts on the rank's tokens, then (moe_router tables) the
   * scores in fp32 (softmax or sigmoid: measured with softmax), the top-k, their normalisation
   * and the tokens per expert; where no table has them, a read of the logits and two passes
   * over 4-byte scores. An expert bias adds a pass over the scores, the load-balancing loss
   * (moe_aux_loss_coeff) a read of them (its backward a write). The permutation (argsort of
   * the chosen experts, gather of each token's copies; its backward scatter-adds them back) is
   * priced from the moe_permute tables, else as a read of the tokens and a write of the
   * copies. */
  pr.piece = "router"; /* in the model's precision; the experts in FP8 with `fp8` */
  linear_cost router = linear(p, (long)rows, m->n_experts, m->hidden,
                              ts_workload_fuses(wl, TS_FUSE_GRADIENT_ACCUMULATION));
  pr.fp8 = wl->fp8 != TS_FP8_NONE;
  double scores = rows * experts, copies = h * sent, own = h * rows;
  ts_cost none = {0};
  ts_cost score_f = priced_at(p, TS_KERNEL_MOE_ROUTER_FWD, (double[]){rows, experts, k},
                              ts_cost_memory_bound(gpu, (eb + 8) * scores));
  ts_cost score_b = priced_at(p, TS_KERNEL_MOE_ROUTER_BWD, (double[]){rows, experts, k},
                              ts_cost_memory_bound(gpu, (eb + 8) * scores));
  ts_cost bias = m->moe_expert_bias ? model_only(p, "moe_expert_bias", scores, 8 * scores) : none;
  bool aux = m->moe_aux_loss_coeff > 0;
  ts_cost aux_f = aux ? model_only(p, "moe_aux_loss", scores, 4 * scores) : none;
  ts_cost aux_b = aux ? model_only(p, "moe_aux_loss_bwd", scores, 4 * scores) : none;
  ts_cost permute_f = priced_at(p, TS_KERNEL_MOE_PERMUTE_FWD, (double[]){sent, h},
                                ts_cost_memory_bound(gpu, eb * (own + copies)));
  ts_cost permute_b = priced_at(p, TS_KERNEL_MOE_PERMUTE_BWD, (double[]){sent, h},
                                ts_cost_memory_bound(gpu, eb * (own + copies)));
  out->router = ts_cost_add(ts_cost_add(router.fwd, ts_cost_add(score_f, bias)),
                            ts_cost_add(aux_f, permute_f));
  out->router_bwd = ts_cost_add(ts_cost_add(permute_b, aux_b), ts_cost_add(score_b, router.bwd));
  out->wgrad_share_router = share(router.wgrad, out->router_bwd);
  /* The experts, on the tokens the rank receives: the local experts' grouped GEMMs, or one
   * expert's GEMMs after another. */
  mlp_cost(wl, &pr, "experts", out->tokens, m->moe_ffn_hidden / etp, local, wl->moe_grouped_gemm,
           &out->experts, &out->experts_bwd, &out->wgrad_share_experts, &out->experts_act);
  /* The unpermutation scatter-adds a token's returned copies. Plain PyTorch (torchtitan) first
   * weighs each copy by its router probability in fp32 (a cast, the product, a cast back: the
   * moe_unpermute tables; else about 5 eb + 16 bytes a value, ASSUMED); its backward the
   * reverse. Megatron-Core's unfused path (moe_permute_fusion off, its default) applies the
   * probabilities in the experts' activation (activation_func_with_probs) and scatter-adds the
   * copies in the model's precision, the permutation's backward, whose backward is the
   * permutation's gather: priced from the moe_permute tables the other way round
   * (bench/device/moe_permute_paths.py on the H200, hidden 7168, 32,768 copies: scatter-add
   * 904 us against the permutation's backward 916 us, gather 217 against 219 us; torchtitan's
   * weighted path 2,203 and 3,012 us). */
  pr.piece = "unpermute";
  if (ts_framework_is_pytorch(wl->framework)) {
    double unpermute_bytes = (5 * eb + 16) * copies;
    out->unpermute = priced_at(p, TS_KERNEL_MOE_UNPERMUTE_FWD, (double[]){sent, h},
                               ts_cost_memory_bound(gpu, unpermute_bytes));
    out->unpermute_bwd = priced_at(p, TS_KERNEL_MOE_UNPERMUTE_BWD, (double[]){sent, h},
                                   ts_cost_memory_bound(gpu, unpermute_bytes));
  } else {
    pr.other_pass = true;
    out->unpermute = priced_at(p, TS_KERNEL_MOE_PERMUTE_BWD, (double[]){sent, h},
                               ts_cost_memory_bound(gpu, eb * (own + copies)));
    out->unpermute_bwd = priced_at(p, TS_KERNEL_MOE_PERMUTE_FWD, (double[]){sent, h},
                                   ts_cost_memory_bound(gpu, eb * (own + copies)));
    pr.other_pass = false;
  }
  ts_cost unused;
  if (m->moe_shared_ffn > 0)
    mlp_cost(wl, &pr, "shared", bs, m->moe_shared_ffn / t, 1, false, &out->shared, &out->shared_bwd,
             &out->wgrad_share_shared, &unused);

  /* The host: the MoE MLP's CPU time as measured with the kernel table (router to
   * unpermutation, grouped; each expert's own without grouped GEMM), else per kernel as the
   * dense layer; the shared expert per kernel; per collective call (two all-to-alls, the etp
   * gather and reduction, the shared expert's two). */
  const ts_software *sw = &gpu->software;
  double calls = (wl->ep > 1 ? 2 : 0) + (etp > 1 ? 2 : 0) + (out->shared_tp_bytes > 0 ? 2 : 0);
  ts_cost *f[] = {&out->router, &out->experts, &out->unpermute, &out->shared};
  ts_cost *b[] = {&out->unpermute_bwd, &out->experts_bwd, &out->router_bwd, &out->shared_bwd};
  bool measured = sw->cpu_moe_layer_forward_s > 0 && sw->cpu_moe_layer_backward_s > 0;
  double loop = wl->moe_grouped_gemm ? 0 : (double)local;
  int nf = 0, nb = 0;
  for (int i = measured ? 3 : 0; i < 4; i++) {
    nf += f[i]->n_kernels;
    nb += b[i]->n_kernels;
  }
  double cpu_f = measured ? sw->cpu_moe_layer_forward_s + loop * sw->cpu_moe_expert_forward_s : 0;
  double cpu_b = measured ? sw->cpu_moe_layer_backward_s + loop * sw->cpu_moe_expert_backward_s : 0;
  if (sw->cpu_layer_forward_s > 0)
    host_bound(f, 4,
               cpu_f + ts_cost_layer_host_s(sw, nf, false) + calls * gpu->collective_launch_s);
  if (sw->cpu_layer_backward_s > 0)
    host_bound(b, 4, cpu_b + ts_cost_layer_host_s(sw, nb, true) + calls * gpu->collective_launch_s);
}

/* Drops the dense MLP's rows from log's rows [first, n): a MoE layer lists its experts instead. */
static void drop_dense_mlp(ts_kernel_log *log, int first) {
  static const char *const dense_mlp[] = {"fc1", "fc2", "gelu", "swiglu"};
  int n = first;
  for (int i = first; i < log->n; i++) {
    bool is_mlp = false;
    for (int k = 0; k < 4; k++)
      is_mlp = is_mlp || strcmp(log->rows[i].piece, dense_mlp[k]) == 0;
    if (!is_mlp)
      log->rows[n++] = log->rows[i];
  }
  log->n = n;
}

static void cost_edges(const ts_workload *wl, const ts_gpu *gpu, const double *stretch,
                       ts_edge_cost *out);

/* Adds pieces[0..n), weight times each, to a window's kernel time by power class and its host
 * gaps. */
static void add_to_window(ts_cost *const *pieces, int n, double weight,
                          double busy[TS_POWER_CLASS_COUNT], double *idle_s) {
  for (int i = 0; i < n; i++) {
    double kernels_s = 0;
    for (int k = 0; k < TS_POWER_CLASS_COUNT; k++) {
      busy[k] += weight * pieces[i]->class_s[k];
      kernels_s += pieces[i]->class_s[k];
    }
    *idle_s += weight * fmax(0, pieces[i]->time_s - kernels_s);
  }
}

/* Each power class's time over its boost-clock time (stretch) at the clock the power limit sets
 * for the GPU's work, and the throttle x (power.h); NULL where the GPU has no power model. The
 * controller answers over tens of milliseconds, longer than a layer and than the lighter
 * stretches between layers (the output layer's cross-entropy, the optimizer, the host's gaps),
 * so the window is a microbatch's share of an iteration on an average pipeline stage, priced
 * at the boost clock: its layers' forward (twice with full recomputation) and backward (a MoE
 * layer's attention and experts), the embedding and output layer on one stage of pp, the
 * optimizer once per iteration's microbatches, and the host's gaps among them. ASSUMED one
 * clock for it all; the pipeline's bubbles and exposed communication, which the simulation
 * plays, are not in it. */
static const double *step_stretch(const ts_workload *wl, const ts_gpu *gpu,
                                  double stretch[TS_POWER_CLASS_COUNT], double *throttle) {
  const ts_power_model *m = &gpu->power_limit;
  if (!ts_power_on(m))
    return NULL;
  ts_layer_cost l;
  ts_moe_cost moe;
  ts_edge_cost e;
  cost_layer(wl, gpu, NULL, NULL, &l);
  cost_moe(wl, gpu, NULL, NULL, &moe);
  cost_edges(wl, gpu, NULL, &e);
  bool dense = wl->model.n_experts == 0;
  ts_cost *fwd[] = {&l.ln1,       &l.attn,        &l.bda1,
                    &l.ln2,       &l.bda2,        dense ? &l.mlp : &moe.router,
                    &moe.experts, &moe.unpermute, &moe.shared};
  ts_cost *bwd[] = {&l.ln1_bwd,       &l.attn_bwd,        &l.bda1_bwd,
                    &l.ln2_bwd,       &l.bda2_bwd,        dense ? &l.mlp_bwd : &moe.router_bwd,
                    &moe.experts_bwd, &moe.unpermute_bwd, &moe.shared_bwd};
  ts_cost *edges[] = {&e.embed_fwd, &e.embed_bwd, &e.head_fwd, &e.head_bwd};
  double shard = ts_workload_zero(wl) >= 1 ? (double)ts_workload_shard_ranks(wl) : 1.0;
  ts_cost opt = ts_cost_optimizer(wl, gpu, ts_cost_stage_params(wl, 0) / shard);
  ts_cost *optimizer[] = {&opt};
  double layers = (double)wl->model.n_layers / (double)wl->pp;
  double busy[TS_POWER_CLASS_COUNT] = {0}, idle_s = 0;
  add_to_window(fwd, 9, layers * (wl->recompute == TS_RECOMPUTE_FULL ? 2 : 1), busy, &idle_s);
  ts_cost *op_recompute[] = {&l.op_recompute_fwd}; /* nothing unless recompute: op */
  add_to_window(op_recompute, 1, layers, busy, &idle_s);
  add_to_window(bwd, 9, layers, busy, &idle_s);
  add_to_window(edges, 4, 1.0 / (double)wl->pp, busy, &idle_s);
  add_to_window(optimizer, 1, 1.0 / (double)ts_workload_microbatches(wl), busy, &idle_s);
  double x = ts_power_throttle(m, busy, idle_s);
  if (throttle != NULL)
    *throttle = x;
  for (int k = 0; k < TS_POWER_CLASS_COUNT; k++)
    stretch[k] = ts_power_stretch(m, (ts_power_class)k, x);
  return stretch;
}

/* The layer (and its MoE MLP) at the clock step_stretch gives the GPU's work; its kernels
 * listed in log where log is not NULL. */
static const double *layer_at_limit(const ts_workload *wl, const ts_gpu *gpu, ts_kernel_log *log,
                                    ts_layer_cost *out, ts_moe_cost *moe,
                                    double stretch[TS_POWER_CLASS_COUNT], double *throttle) {
  const double *at = step_stretch(wl, gpu, stretch, throttle);
  int first = log != NULL ? log->n : 0;
  cost_layer(wl, gpu, log, at, out);
  if (log != NULL && wl->model.n_experts > 0) /* the listing's MoE layer: no dense MLP */
    drop_dense_mlp(log, first);
  cost_moe(wl, gpu, log, at, moe);
  return at;
}

void ts_cost_moe(const ts_workload *wl, const ts_gpu *gpu, ts_moe_cost *out) {
  ts_layer_cost unused;
  double stretch[TS_POWER_CLASS_COUNT];
  layer_at_limit(wl, gpu, NULL, &unused, out, stretch, NULL);
}

void ts_cost_layer(const ts_workload *wl, const ts_gpu *gpu, ts_layer_cost *out) {
  ts_moe_cost unused;
  double stretch[TS_POWER_CLASS_COUNT];
  layer_at_limit(wl, gpu, NULL, out, &unused, stretch, NULL);
}

void ts_cost_layer_kernels(const ts_workload *wl, const ts_gpu *gpu, ts_kernel_log *log) {
  ts_layer_cost unused;
  ts_moe_cost unused_moe;
  double stretch[TS_POWER_CLASS_COUNT];
  layer_at_limit(wl, gpu, log, &unused, &unused_moe, stretch, NULL);
}

bool ts_cost_power_limit(const ts_workload *wl, const ts_gpu *gpu, double *throttle,
                         double stretch[TS_POWER_CLASS_COUNT]) {
  *throttle = 0;
  return step_stretch(wl, gpu, stretch, throttle) != NULL;
}

static void cost_edges(const ts_workload *wl, const ts_gpu *gpu, const double *stretch,
                       ts_edge_cost *out) {
  const ts_model *m = &wl->model;
  pricer pr = pricer_of(wl, gpu);
  pr.stretch = stretch;
  const pricer *p = &pr;
  double eb = pr.eb;
  long t = wl->tp, bs = wl->micro_batch * ts_workload_local_seq(wl), h = m->hidden;
  long v = ts_workload_padded_vocab(wl) / t;
  double act = (double)bs * (double)h, logits = (double)bs * (double)v;
  double word = (double)v * (double)h, pos = (double)m->seq * (double)h;

  /* Embedding: gather of word rows plus position rows, add, dropout (write + mask); backward
   * scatter-adds into the dense gradients of both tables, which then accumulate into their
   * fp32 main_grad (a kernel each: Megatron does not fuse these). The table's embedding is
   * measured whole (tensor parallelism 1); a vocabulary-parallel one takes the model. */
  bool rope = m->rope; /* no position table: one gather, no add (the table measures two) */
  ts_cost gather = ts_cost_add(ts_cost_memory_bound(gpu, (rope ? 2 : 3) * eb * act),
                               ts_cost_memory_bound(gpu, (2 * eb + 1) * act));
  ts_cost scatter = ts_cost_memory_bound(gpu, (rope ? 1 : 2) * (eb + 8) * act);
  if (t == 1 && !rope) {
    gather = priced(p, TS_KERNEL_EMBEDDING_FWD, (double)bs, (double)h, 0, gather);
    scatter = priced(p, TS_KERNEL_EMBEDDING_BWD, (double)bs, (double)h, 0, scatter);
  }
  out->embed_fwd = gather;
  out->embed_bwd = ts_cost_add(
      scatter, rope ? grad_accum(p, word) : ts_cost_add(grad_accum(p, word), grad_accum(p, pos)));
  out->embed_allreduce_bytes = t > 1 ? eb * act : 0;

  /* Output layer: final LN, logits GEMM against the vocab-parallel embedding, cross-entropy in
   * fp32 (cast, max, exp-sum, loss: about 3 passes over 4-byte logits plus the bf16 read);
   * backward writes the logits gradient and runs the GEMM's input and weight gradients (the
   * weight's, with the embedding's, accumulate in the embedding's main_grad). The table's
   * cross-entropy is PyTorch's F.cross_entropy on the whole vocabulary: it prices
   * `framework: pytorch` at tensor parallelism 1; Megatron's own fused, vocabulary-parallel
   * cross-entropy is a different kernel, which the model prices by its bytes. */
  linear_cost head = linear(p, bs, v, h, ts_workload_fuses(wl, TS_FUSE_GRADIENT_ACCUMULATION));
  ts_cost ln, ln_b;
  norm_costs(wl, p, (double)bs, (double)h, &ln, &ln_b);
  /* The model's bytes per logit: Megatron-LM (eb + 3 x 4 forward, 4 + eb backward); PyTorch's
   * F.cross_entropy(logits.float()): the cast (eb + 4), log-softmax (two reads and a write of
   * 4), forward; nll_loss's dense gradient (4), log-softmax's backward (two reads and a write),
   * the cast back (4 + eb), backward. flash-attn's fused cross-entropy (stack.h) reads the
   * logits forward and reads them and writes their gradient backward, its own kernel, not the
   * table's F.cross_entropy: those bytes streamed at the rates measured for the FlashAttention
   * repository's (FUSED_CE_*_RATE).
   */
  bool is_torch = ts_framework_is_pytorch(wl->framework);
  bool fused_ce = ts_workload_fuses(wl, TS_FUSE_CROSS_ENTROPY);
  ts_cost ce = ts_cost_memory_bound(gpu, (fused_ce ? eb : eb + (is_torch ? 16 : 12)) * logits);
  ts_cost ce_b = ts_cost_memory_bound(gpu, (fused_ce   ? 2 * eb
                                            : is_torch ? 20 + eb
                                                       : 4 + eb) *
                                               logits);
  if (t == 1 && is_torch && !fused_ce) {
    ce = priced(p, TS_KERNEL_CROSS_ENTROPY_FWD, (double)bs, (double)v, 0, ce);
    ce_b = priced(p, TS_KERNEL_CROSS_ENTROPY_BWD, (double)bs, (double)v, 0, ce_b);
  } else if (fused_ce) {
    ce = streamed(p, "cross_entropy_fused", logits, eb, FUSED_CE_FWD_RATE);
    ce_b = streamed(p, "cross_entropy_fused_bwd", logits, 2 * eb, FUSED_CE_BWD_RATE);
  }
  out->head_fwd = ts_cost_add(ts_cost_add(ln, head.fwd), ce);
  out->head_bwd = ts_cost_add(ts_cost_add(ce_b, head.bwd), ln_b);
  out->wgrad_share_head = share(head.wgrad, out->head_bwd);
  out->loss_allreduce_bytes = t > 1 ? 4.0 * (double)bs : 0;
  out->head_allreduce_bytes = t > 1 ? eb * act : 0;

  /* A multi-token-prediction module's entry (Megatron-Core's MultiTokenPredictionLayer): enorm
   * and hnorm, the concatenation (a copy of both halves), eh_proj; the backward splits the
   * concatenation's gradient (another copy). */
  linear_cost eh =
      linear(p, bs, h / t, 2 * h, ts_workload_fuses(wl, TS_FUSE_GRADIENT_ACCUMULATION));
  ts_cost concat = ts_cost_memory_bound(gpu, 4.0 * eb * act);
  out->mtp_fwd = ts_cost_add(ts_cost_add(times(ln, 2), concat), eh.fwd);
  out->mtp_bwd = ts_cost_add(ts_cost_add(eh.bwd, concat), times(ln_b, 2));
  out->wgrad_share_mtp = share(eh.wgrad, out->mtp_bwd);
  out->mtp_gather_bytes = t > 1 ? eb * act * (wl->sequence_parallel ? 3.0 : 1.0) : 0;

  /* The host's time per microbatch outside the layers, half to each end of the model (an
   * assumption: the measurement does not split it). */
  double cpu_s = gpu->software.cpu_microbatch_s / 2;
  ts_cost *embed[] = {&out->embed_fwd, &out->embed_bwd}, *tail[] = {&out->head_fwd, &out->head_bwd};
  host_bound(embed, 2, cpu_s);
  host_bound(tail, 2, cpu_s);
}

/* The edges at the clock step_stretch gives the GPU's work. */
void ts_cost_edges(const ts_workload *wl, const ts_gpu *gpu, ts_edge_cost *out) {
  double stretch[TS_POWER_CLASS_COUNT];
  cost_edges(wl, gpu, step_stretch(wl, gpu, stretch, NULL), out);
}

/* Mixed-precision Adam as Megatron-LM (and gpt.Trainer) run it, per parameter: the gradient
 * norm reads the fp32 gradient (4 B), clipping scales it (4 + 4), the fused step reads
 * gradient, master weight, momentum and variance and writes the last three (28), the master is
 * copied to the low-precision weight (4 + eb), and the gradient buffer is zeroed (4). PyTorch's
 * foreach AdamW (torch/optim/adam.py, _multi_tensor_adam) runs eight multi-tensor operations
 * instead (weight decay, lerp, mul, addcmul, sqrt, div, add, addcdiv): 12 reads and 8 writes,
 * 80 B. With fp16, loss scaling first checks and unscales the gradients in place (8). From the
 * table over the stage's parameters as GPT layers of its width (hidden, layers = params /
 * (12 h^2 + 13 h)) when it has every operation used; then at least the host's time per
 * iteration. */
/* An optimizer operation's time from the table. Past the largest parameter set measured at a
 * width (the tables stop at 2^31 elements), time grows in proportion to the parameters: there
 * the operation is bandwidth-bound, as the measured tables show (H200 adam_fused at hidden 2048:
 * 7.48 ms for 16 layers, 14.55 ms for 32), so the lookup halves the layers until it lands in the
 * grid and doubles the time back. Where no parameter set was measured at the width (a table
 * whose budget ran out before its wider rows: the H100's adam_fused stops at hidden 2048), the
 * same parameters as layers of half the width, for the same reason. */
static ts_kernel_source optimizer_time(const ts_kernel_table *table, ts_kernel_kind kind, double h,
                                       double layers, double *time_s) {
  if (!ts_kernels_has(table, kind))
    return TS_KERNEL_SRC_MODEL;
  double params = layers * (12.0 * h * h + 13.0 * h),
         narrowest = ts_kernels_axis_min(table, kind, 0);
  for (double width = h; width == h || width >= narrowest; width /= 2) {
    double scale = 1, at = params / (12.0 * width * width + 13.0 * width);
    for (;;) {
      double point[3] = {width, at, 0};
      ts_kernel_source src = ts_kernels_time(table, kind, point, time_s);
      if (src != TS_KERNEL_SRC_MODEL) {
        *time_s *= scale;
        return src == TS_KERNEL_SRC_TABLE && (scale > 1 || width < h) ? TS_KERNEL_SRC_INTERPOLATED
                                                                      : src;
      }
      if (at < 2)
        break;
      at /= 2;
      scale *= 2;
    }
  }
  return TS_KERNEL_SRC_MODEL;
}

/* FSDP1's post-backward kernels beside the next unit's backward GEMMs add this fraction of their
 * own time to the compute stream: a cat, cast and divide of Llama 3 8B's and MPT-1B's units on
 * a side stream beside back-to-back bf16 GEMMs, either enqueued first, medians of 25 pairs:
 * 0.63-0.96 on an H100 (two runs, mean 0.80: bench/device/h100_side_stream.csv), 0.55-0.98 on
 * an H200 (mean 0.78: h200_side_stream.csv); the larger unit hides less. ASSUMED alike on other
 * GPUs. */
#define FSDP1_SIDE_EXPOSED 0.8

/* FSDP2's copy kernels' rates against the bf16 add's, by bytes moved, measured at the shapes N
 * ranks give them (bench/device/h100_fsdp_copy_kernels.csv, Llama 3 8B's layer, N = 8 to 512,
 * H100): split_with_sizes_copy 2.29-2.60 TB/s (0.77-0.87 of the add's 2.99; on one H200 rank
 * 0.78), chunk_cat into fp32 1.63-1.93 TB/s (0.55-0.65; on one H200 rank 0.45). ASSUMED alike
 * on other GPUs. */
#define FSDP_COPY_OUT_RATE 0.8
#define FSDP_CHUNK_CAT_RATE 0.6

/* FSDP2 (torch.distributed.fsdp.fully_shard; torch/distributed/fsdp/_fully_shard/
 * _fsdp_collectives.py) moves each unit through flat buffers on the compute stream:
 * foreach_all_gather_copy_out waits for the all-gather on the current stream and copies every
 * parameter out of the flat output (split_with_sizes_copy: reads and writes eb bytes an
 * element), and foreach_reduce_scatter_copy_in copies the gradients, cast to the fp32 reduce
 * dtype, into the reduce-scatter's flat input on the current stream before the reduce-scatter
 * stream waits for it (chunk_cat: reads eb, writes 4). Both at their measured rates (above):
 * Llama 3 8B's layer (218M parameters) in FSDP2 on one H100 rank (bench/device/
 * h100_fsdp_copies.csv) copy-out 335 us a gather and chunk_cat 720 us, priced 358 and 713 us
 * (336-381 and 679-801 us alone at N = 8 to 512); on one H200 rank (h200_fsdp_copies.csv) 257
 * and 670 us, priced 250 and 499.
 * FSDP1 (FullyShardedDataParallel; torch/distributed/fsdp/_runtime_utils.py) gathers into its
 * flat parameter in place, and on its post-backward stream builds the flat gradient from the
 * parameters' (autograd's cat of the views' gradients: reads and writes eb), casts it to the
 * fp32 reduce dtype (_post_backward_hook: eb + 4) and divides it by the pre-divide factor
 * (_reduce_grad's _div_if_needed: 4 + 4, the factor > 1 on 2 or more ranks) before the
 * reduce-scatter: side-stream kernels, of which FSDP1_SIDE_EXPOSED shows on the compute stream
 * (the one-rank profile in h100_fsdp_copies.csv shows the cat on a side stream; the cast of
 * each local shard before a gather, 1/N of the unit, is left out). Priced at a layer's
 * parameters. */
ts_fsdp_copies ts_cost_fsdp_copies(const ts_workload *wl, const ts_gpu *gpu) {
  if (!(wl->zero_stage == 3 && wl->is_fsdp && ts_workload_dp_cp(wl) > 1))
    return (ts_fsdp_copies){0, 0};
  pricer pr = pricer_of(wl, gpu);
  double n = ts_cost_layer_params(wl), widening = pr.eb < 4.0 ? AUTOCAST_WIDENING_RATE : 1;
  if (wl->fsdp_version == 1) {
    ts_cost side = ts_cost_add(streamed(&pr, "fsdp1_grad_cat", n, 2.0 * pr.eb, 1),
                               streamed(&pr, "fsdp1_predivide", n, 8.0, 1));
    if (pr.eb < 4.0)
      side = ts_cost_add(side, streamed(&pr, "fsdp1_grad_cast", n, pr.eb + 4.0, widening));
    return (ts_fsdp_copies){0, FSDP1_SIDE_EXPOSED * side.time_s / n};
  }
  ts_cost out = streamed(&pr, "fsdp_copy_out", n, 2.0 * pr.eb, FSDP_COPY_OUT_RATE),
          in = streamed(&pr, "fsdp_copy_in", n, pr.eb + 4.0, /* no cast for fp32: ASSUMED */
                        pr.eb < 4.0 ? FSDP_CHUNK_CAT_RATE : FSDP_COPY_OUT_RATE);
  return (ts_fsdp_copies){out.time_s / n, in.time_s / n};
}

ts_cost ts_cost_optimizer(const ts_workload *wl, const ts_gpu *gpu, double n_params) {
  pricer pr = pricer_of(wl, gpu);
  double eb = pr.eb, h = (double)wl->model.hidden;
  bool fp32 = wl->precision == TS_PREC_FP32, fp16 = wl->precision == TS_PREC_FP16;
  bool foreach = wl->adam_implementation == TS_ADAM_FOREACH;
  struct {
    ts_kernel_kind kind;
    double bytes_per_param;
    bool used;
  } ops[] = {
      {TS_KERNEL_CLIP_GRAD_NORM, 4.0, true}, /* the norm; the scaling is priced below */
      {foreach ? TS_KERNEL_ADAM_FOREACH : TS_KERNEL_ADAM_FUSED, foreach ? 80.0 : 28.0, true},
      {TS_KERNEL_MASTER_COPY, 4.0 + eb, !fp32 && !wl->is_autocast}, /* autocast: none */
      {TS_KERNEL_ZERO_MAIN_GRAD, 4.0, true},
      {TS_KERNEL_AMP_UNSCALE, 8.0, fp16},
  };
  enum { N_OPS = sizeof ops / sizeof ops[0] };
  ts_cost model = {0}, c;
  double layers = n_params / (12.0 * h * h + 13.0 * h), t_table = 0;
  int n_used = 0;
  ts_kernel_source src[N_OPS];
  bool all_in_table = true;
  for (int i = 0; i < N_OPS; i++) {
    if (!ops[i].used)
      continue;
    model = ts_cost_add(model, ts_cost_memory_bound(gpu, ops[i].bytes_per_param * n_params));
    if (ops[i].kind == TS_KERNEL_CLIP_GRAD_NORM) /* the roofline's second kernel: the scaling */
      model = ts_cost_add(model, ts_cost_memory_bound(gpu, 8.0 * n_params));
    double t = 0;
    src[n_used++] = optimizer_time(pr.table, ops[i].kind, h, layers, &t);
    all_in_table = all_in_table && src[n_used - 1] != TS_KERNEL_SRC_MODEL;
    t_table += t;
  }
  c = model;
  if (all_in_table) {
    c.time_s = c.class_s[TS_POWER_OTHER] = t_table;
    memset(c.n_by_source, 0, sizeof c.n_by_source);
    for (int i = 0; i < n_used; i++)
      c.n_by_source[src[i]]++;
    c.n_kernels = n_used;
  }
  ts_cost *pieces[] = {&c};
  host_bound(pieces, 1, gpu->software.cpu_iteration_s);
  return c;
}

void ts_cost_kernel_sources(const ts_workload *wl, const ts_gpu *gpu,
                            long out[TS_KERNEL_SRC_COUNT]) {
  ts_layer_cost l;
  ts_moe_cost moe;
  ts_edge_cost e;
  ts_cost_layer(wl, gpu, &l);
  ts_cost_moe(wl, gpu, &moe);
  ts_cost_edges(wl, gpu, &e);
  double shard = ts_workload_zero(wl) >= 1 ? (double)ts_workload_shard_ranks(wl) : 1.0;
  /* A MoE model's layer: its MoE MLP in place of the dense one. */
  bool is_moe = wl->model.n_experts > 0;
  ts_cost none = {0};
  ts_cost parts[] = {l.ln1,
                     l.attn,
                     l.bda1,
                     l.ln2,
                     is_moe ? none : l.mlp,
                     l.bda2,
                     l.ln1_bwd,
                     l.attn_bwd,
                     l.bda1_bwd,
                     l.ln2_bwd,
                     is_moe ? none : l.mlp_bwd,
                     l.bda2_bwd,
                     moe.router,
                     moe.experts,
                     moe.unpermute,
                     moe.shared,
                     moe.router_bwd,
                     moe.experts_bwd,
                     moe.unpermute_bwd,
                     moe.shared_bwd,
                     e.embed_fwd,
                     e.embed_bwd,
                     e.head_fwd,
                     e.head_bwd,
                     ts_cost_optimizer(wl, gpu, ts_cost_stage_params(wl, 0) / shard)};
  for (int s = 0; s < TS_KERNEL_SRC_COUNT; s++) {
    out[s] = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
      out[s] += parts[i].n_by_source[s];
  }
}

/* The attention's weight matrices: those split over tensor parallelism (returned) and those
 * replicated on every TP rank (*replicated: MLA's down projections). Multi-head attention and
 * GQA: QKV (h x (h + 2 g d)) and the projection (h x h). MLA (Megatron-Core's MLASelfAttention):
 * down projections h x q_lora (none without a query latent) and h x (kv_lora + rotary), up
 * projections q_lora (or h) x heads (qk + rotary) and kv_lora x heads (qk + v), the projection
 * heads v x h. */
static double attention_matrices(const ts_model *m, double *replicated) {
  double h = (double)m->hidden, n = (double)m->n_heads;
  if (!m->mla) {
    double d = m->kv_channels > 0 ? (double)m->kv_channels : h / n;
    *replicated = 0;
    return h * (n + 2.0 * (double)m->n_query_groups) * d + n * d * h;
  }
  double q_lora = (double)m->q_lora_rank, kv_lora = (double)m->kv_lora_rank;
  double dq = (double)(m->qk_head_dim + m->qk_pos_emb_head_dim), dv = (double)m->v_head_dim;
  *replicated = h * q_lora + h * (kv_lora + (double)m->qk_pos_emb_head_dim);
  return (q_lora > 0 ? q_lora : h) * n * dq + kv_lora * n * ((double)m->qk_head_dim + dv) +
         n * dv * h;
}

/* Parameters held by one of t tensor-parallel ranks. Column-parallel weights and biases split
 * by t; row-parallel weights split, their biases replicated; MLA's latent norms replicated. */
static double attention_params(const ts_model *m, long t) {
  double h = (double)m->hidden, replicated = 0, split = attention_matrices(m, &replicated);
  double n = (double)m->n_heads, d = m->kv_channels > 0 ? (double)m->kv_channels : h / n;
  double qkv_n = (n + 2.0 * (double)m->n_query_groups) * d;
  double latent_norms = m->mla ? (double)(m->q_lora_rank + m->kv_lora_rank) : 0;
  return (split + (m->bias ? qkv_n : 0)) / (double)t + (m->bias ? h : 0) + replicated +
         latent_norms;
}

/* An MLP of width f: FC1 (two matrices, gate and up, with SwiGLU) and FC2. */
static double mlp_params(const ts_model *m, double f, long t) {
  double h = (double)m->hidden, fc1 = m->swiglu ? 2.0 : 1.0;
  return ((fc1 + 1.0) * h * f + (m->bias ? fc1 * f : 0)) / (double)t + (m->bias ? h : 0);
}

/* The two norms of a layer, replicated. */
static double norm_params(const ts_model *m) {
  return 2.0 * (m->rms_norm ? 1.0 : 2.0) * (double)m->hidden;
}

/* Parameters of layer `layer` (of the model) held by a rank of tensor parallelism t: returned,
 * those data parallelism reduces (attention, norms and the MLP; in a MoE layer the router,
 * replicated, and the shared expert); in *expert (unless NULL) the experts' (n_experts / ep of
 * them, each split over etp), which expert data parallelism reduces. */
static double layer_params_at(const ts_workload *wl, long layer, long t, long ep, long etp,
                              double *expert) {
  const ts_model *m = &wl->model;
  double p = attention_params(m, t) + norm_params(m);
  bool moe = ts_workload_is_moe_layer(wl, layer);
  if (expert != NULL)
    *expert = moe ? (double)(m->n_experts / ep) * mlp_params(m, (double)m->moe_ffn_hidden, etp) : 0;
  if (!moe)
    return p + mlp_params(m, (double)m->ffn_hidden, t);
  double router = ((double)m->hidden + (m->moe_expert_bias ? 1.0 : 0)) * (double)m->n_experts;
  return p + router + (m->moe_shared_ffn > 0 ? mlp_params(m, (double)m->moe_shared_ffn, t) : 0);
}

double ts_cost_layer_params(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  return attention_params(m, wl->tp) + norm_params(m) +
         mlp_params(m, (double)m->ffn_hidden, wl->tp);
}

double ts_cost_bucket_bytes(const ts_workload *wl) {
  if (!(wl->fsdp_keeps_weights || wl->fsdp_keeps_to_backward) || wl->dp_bucket_bytes > 0)
    return wl->dp_bucket_bytes;
  double expert = 0;
  return 4.0 * (ts_cost_layer_params_at(wl, 0, &expert) + expert);
}

double ts_cost_layer_params_at(const ts_workload *wl, long layer, double *expert) {
  return layer_params_at(wl, layer, wl->tp, wl->ep, ts_workload_etp(wl), expert);
}

/* One MTP module's parameters on a rank of tensor parallelism t, expert layout ep x etp. */
static double mtp_params_at(const ts_workload *wl, long t, long ep, long etp, double *expert) {
  const ts_model *m = &wl->model;
  double h = (double)m->hidden;
  return layer_params_at(wl, m->n_layers, t, ep, etp, expert) + 2.0 * h * h / (double)t +
         1.5 * norm_params(m);
}

double ts_cost_mtp_params(const ts_workload *wl, double *expert) {
  return mtp_params_at(wl, wl->tp, wl->ep, ts_workload_etp(wl), expert);
}

/* The layers' parameters of a stage (all chunks): returned all, in *expert the experts'. */
static double stage_layer_params(const ts_workload *wl, long stage, double *expert) {
  double all = 0, experts = 0;
  for (long c = 0; c < ts_workload_chunks(wl); c++) {
    long first = ts_workload_chunk_first_layer(wl, stage, c);
    for (long i = 0; i < ts_workload_vstage_layers(wl, c * wl->pp + stage); i++) {
      double e = 0;
      all += ts_cost_layer_params_at(wl, first + i, &e) + e;
      experts += e;
    }
  }
  double e = 0, mtp = (double)ts_workload_stage_mtp_layers(wl, stage);
  if (mtp > 0) {
    all += mtp * (ts_cost_mtp_params(wl, &e) + e);
    experts += mtp * e;
  }
  *expert = experts;
  return all;
}

double ts_cost_stage_params(const ts_workload *wl, long stage) {
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)wl->model.hidden;
  double experts = 0, p = stage_layer_params(wl, stage, &experts);
  if (ts_workload_stage_has_embedding(wl, stage))
    p += word + ts_workload_position_params(wl); /* word (and position) embeddings */
  if (ts_workload_stage_has_head(wl, stage)) /* the final norm and the output layer (tied: a
                                              * copy kept in sync by an all-reduce) */
    p += ts_workload_head_params(wl);
  return p + ts_cost_mtp_copy_params(wl, stage);
}

double ts_cost_mtp_copy_params(const ts_workload *wl, long stage) {
  if (ts_workload_stage_mtp_layers(wl, stage) == 0)
    return 0;
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)wl->model.hidden;
  bool embedding = ts_workload_stage_has_embedding(wl, stage),
       head = ts_workload_stage_has_head(wl, stage);
  if (!wl->model.untied) /* one table serves both */
    return embedding || head ? 0 : word;
  return (embedding ? 0 : word) + (head ? 0 : word);
}

double ts_cost_stage_expert_params(const ts_workload *wl, long stage) {
  double experts = 0;
  stage_layer_params(wl, stage, &experts);
  return experts;
}

double ts_cost_model_params(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  double h = (double)m->hidden, layers = 0;
  for (long l = 0; l < m->n_layers; l++) {
    double e = 0;
    layers += layer_params_at(wl, l, 1, 1, 1, &e) + e;
  }
  double e = 0;
  layers += (double)m->mtp_layers * (mtp_params_at(wl, 1, 1, 1, &e) + e);
  return layers + (m->untied ? 2.0 : 1.0) * (double)m->vocab * h + ts_workload_position_params(wl) +
         ts_workload_norm_params(wl);
}

/* The weights of layer `layer`'s matrices a token passes through (a MoE layer: moe_topk
 * experts and the shared expert; the router, as Megatron-Core's count, not). */
static double layer_matrix_params(const ts_workload *wl, long layer) {
  const ts_model *m = &wl->model;
  double h = (double)m->hidden, mats = m->swiglu ? 3.0 : 2.0, replicated = 0;
  double attention = attention_matrices(m, &replicated) + replicated;
  /* Routed tokens beyond an expert's capacity are dropped, never computed: under a capacity
   * factor below 1 at most that share reaches the experts (else a % of peak could pass 100). */
  double cap = ts_workload_moe_capacity(wl), kept = cap > 0 && cap < 1 ? cap : 1;
  double mlp =
      ts_workload_is_moe_layer(wl, layer)
          ? mats * h *
                ((double)m->moe_topk * kept * (double)m->moe_ffn_hidden + (double)m->moe_shared_ffn)
          : mats * h * (double)m->ffn_hidden;
  return attention + mlp;
}

/* Narayanan et al.'s count with the layer's real matrices: per token and forward pass, 2
 * FLOPs per weight of its matrices, 4 s h for Q K^T and P V, and 2 h V for the logits; k passes
 * of the layers (3: forward and backward; 4 with full recomputation) and `logit_passes` of the
 * logits. A GPT layer (MHA, f = 4h) has 12 h^2 weights: 24 k B s l h^2 (1 + s / 6h) + ... */
static double flops_formula(const ts_workload *wl, double k, double vocab, double logit_passes) {
  const ts_model *m = &wl->model;
  double B = (double)wl->global_batch, s = (double)m->seq, h = (double)m->hidden, layers = 0;
  /* Q K^T and P V: 2 s n (d_qk + d_v) a token (4 s h when the heads' widths add up to h). */
  double core = 2.0 * s * (double)m->n_heads *
                (double)(ts_workload_qk_head_dim(wl) + ts_workload_v_head_dim(wl));
  for (long l = 0; l < m->n_layers; l++)
    layers += 2.0 * layer_matrix_params(wl, l) + core;
  /* MTP modules: their layer and eh_proj, and logits of their own (Megatron-LM's
   * num_floating_point_operations counts them so) */
  double mtp = (double)m->mtp_layers;
  layers += mtp * (2.0 * layer_matrix_params(wl, m->n_layers) + core + 2.0 * 2.0 * h * h);
  return B * s * (k * layers + logit_passes * (1.0 + mtp) * 2.0 * h * vocab);
}

double ts_cost_attention_core_flops(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  double s = (double)m->seq;
  return 3.0 * (double)wl->global_batch * s * (double)(m->n_layers + m->mtp_layers) * 2.0 * s *
         (double)m->n_heads * (double)(ts_workload_qk_head_dim(wl) + ts_workload_v_head_dim(wl));
}

double ts_cost_peak_flops(const ts_workload *wl, const ts_gpu *gpu) {
  double peak = gpu->peak_flops_per_s[wl->precision]; /* the rest runs in it */
  return wl->fp8 != TS_FP8_NONE ? fmax(peak, gpu->peak_fp8_flops_per_s) : peak;
}

double ts_cost_model_flops(const ts_workload *wl) {
  return flops_formula(wl, 3.0, (double)wl->model.vocab, 3.0);
}

/* Megatron-DeepSpeed's formula (the Frontier paper's): 24 k B s l h^2 (1 + s/6h + V/16lh) with
 * the padded vocabulary, whose logit term is 0.75 k passes of 2 h V (3 with recomputation). */
double ts_cost_megatron_flops(const ts_workload *wl) {
  double k = wl->recompute == TS_RECOMPUTE_FULL ? 4.0 : 3.0;
  return flops_formula(wl, k, (double)ts_workload_padded_vocab(wl), 0.75 * k);
}
