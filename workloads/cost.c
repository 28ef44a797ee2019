/* cost: per-microbatch compute costs; see cost.h. */
#include "cost.h"

#include <math.h>

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
  ts_cost c = {flops, bytes, fmax(t_compute, t_memory) + gpu->kernel_launch_s, 1};
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
  ts_cost c = {a.flops + b.flops, a.bytes + b.bytes, a.time_s + b.time_s,
               a.n_kernels + b.n_kernels};
  return c;
}

/* Forward and backward of one linear layer y[M,N] = x[M,K] w[K,N]. Backward is the input
 * gradient (M x K) and the weight gradient (K x N), which Megatron accumulates into an fp32
 * main_grad buffer (gradient-accumulation fusion): 4 bytes read + 4 written per weight. */
typedef struct linear_cost {
  ts_cost fwd, bwd;
} linear_cost;

static linear_cost linear(const ts_gpu *gpu, double peak, long m, long n, long k, double eb) {
  linear_cost c;
  c.fwd = ts_cost_gemm(gpu, peak, 1, m, n, k, eb);
  ts_cost dgrad = ts_cost_gemm(gpu, peak, 1, m, k, n, eb);
  ts_cost wgrad = ts_cost_gemm(gpu, peak, 1, k, n, m, eb);
  wgrad.bytes += 8.0 * (double)k * (double)n;
  wgrad.time_s =
      fmax(wgrad.time_s - gpu->kernel_launch_s, wgrad.bytes / gpu->hbm_Bps) + gpu->kernel_launch_s;
  c.bwd = ts_cost_add(dgrad, wgrad);
  return c;
}

/* Attention core (QK^T, softmax, dropout, AV) for b x heads/t heads of s x s, head dim d.
 * Flash attention is one fused kernel reading Q, K, V and writing O (its backward reads them
 * plus dO and writes dQ, dK, dV); without it the s x s scores go through HBM: written by
 * QK^T, read and written by softmax (2 + 2 bytes) and dropout (2 + 2 + 1-byte mask), read by
 * AV. Backward FLOPs are twice the forward, as in Megatron's count. */
static void attention_core(const ts_workload *wl, const ts_gpu *gpu, double peak, double eb,
                           ts_cost *fwd, ts_cost *bwd) {
  const ts_model *m = &wl->model;
  long b = wl->micro_batch, s = m->seq, heads = m->n_heads / wl->tp;
  long d = m->hidden / m->n_heads, kv_heads = m->n_query_groups / wl->tp;
  long batch = b * heads;
  if (wl->flash_attention) {
    double qkvo = eb * (double)b * (double)s * (double)d * (double)(2 * heads + 2 * kv_heads);
    double flops = 4.0 * (double)batch * (double)s * (double)s * (double)d;
    double rate = peak * ts_cost_gemm_efficiency(gpu, batch, s, s);
    *fwd = kernel(gpu, flops, rate, qkvo);
    *bwd = kernel(gpu, 2 * flops, rate,
                  2 * qkvo + eb * (double)b * (double)s * (double)d * (double)heads);
    return;
  }
  double scores = (double)batch * (double)s * (double)s;
  ts_cost qk = ts_cost_gemm(gpu, peak, batch, s, s, d, eb);
  ts_cost softmax = ts_cost_memory_bound(gpu, 4.0 * scores);
  ts_cost dropout = ts_cost_memory_bound(gpu, 5.0 * scores);
  ts_cost av = ts_cost_gemm(gpu, peak, batch, s, d, s, eb);
  *fwd = ts_cost_add(ts_cost_add(qk, softmax), ts_cost_add(dropout, av));
  /* Backward: dV and dP from AV, dropout and softmax gradients, dQ and dK from QK^T. */
  ts_cost av_b = ts_cost_add(ts_cost_gemm(gpu, peak, batch, s, d, s, eb),
                             ts_cost_gemm(gpu, peak, batch, s, s, d, eb));
  ts_cost qk_b = ts_cost_add(ts_cost_gemm(gpu, peak, batch, s, d, s, eb),
                             ts_cost_gemm(gpu, peak, batch, s, d, s, eb));
  ts_cost elem_b =
      ts_cost_add(ts_cost_memory_bound(gpu, 7.0 * scores), ts_cost_memory_bound(gpu, 6.0 * scores));
  *bwd = ts_cost_add(ts_cost_add(av_b, qk_b), elem_b);
}

void ts_cost_layer(const ts_workload *wl, const ts_gpu *gpu, ts_layer_cost *out) {
  const ts_model *m = &wl->model;
  double eb = ts_cost_elem_bytes(wl->precision);
  double peak = gpu->peak_flops_per_s[wl->precision];
  long t = wl->tp, bs = wl->micro_batch * m->seq, h = m->hidden;
  long d = h / m->n_heads, qkv_n = (h + 2 * m->n_query_groups * d) / t;
  double act = (double)bs * (double)h; /* elements of one b x s x h activation */

  linear_cost qkv = linear(gpu, peak, bs, qkv_n, h, eb);
  linear_cost proj = linear(gpu, peak, bs, h, h / t, eb);
  linear_cost fc1 = linear(gpu, peak, bs, m->ffn_hidden / t, h, eb);
  linear_cost fc2 = linear(gpu, peak, bs, h, m->ffn_hidden / t, eb);
  ts_cost core_f, core_b;
  attention_core(wl, gpu, peak, eb, &core_f, &core_b);

  /* Memory-bound kernels: layer norm reads and writes the activation (plus fp32 statistics,
   * negligible); bias-dropout-add reads input and residual, writes output and a 1-byte mask;
   * GeLU reads and writes the b x s x f/t intermediate. Backward moves about twice as much.
   * With sequence parallelism, layer norms and bda's see s/t of the sequence. */
  double shard = wl->sequence_parallel ? act / (double)t : act;
  double ffn_act = (double)bs * (double)(m->ffn_hidden / t);
  out->ln1 = out->ln2 = ts_cost_memory_bound(gpu, 2 * eb * shard);
  out->bda1 = out->bda2 = ts_cost_memory_bound(gpu, (3 * eb + 1) * shard);
  out->ln1_bwd = out->ln2_bwd = ts_cost_memory_bound(gpu, 4 * eb * shard);
  out->bda1_bwd = out->bda2_bwd = ts_cost_memory_bound(gpu, (2 * eb + 1) * shard);
  out->attn = ts_cost_add(ts_cost_add(qkv.fwd, core_f), proj.fwd);
  out->attn_bwd = ts_cost_add(ts_cost_add(proj.bwd, core_b), qkv.bwd);
  ts_cost gelu = ts_cost_memory_bound(gpu, 2 * eb * ffn_act);
  ts_cost gelu_b = ts_cost_memory_bound(gpu, 3 * eb * ffn_act);
  out->mlp = ts_cost_add(ts_cost_add(fc1.fwd, gelu), fc2.fwd);
  out->mlp_bwd = ts_cost_add(ts_cost_add(fc2.bwd, gelu_b), fc1.bwd);
  out->attn_core_fwd = core_f;
  out->tp_comm_bytes = t > 1 ? eb * act : 0;
}

void ts_cost_edges(const ts_workload *wl, const ts_gpu *gpu, ts_edge_cost *out) {
  const ts_model *m = &wl->model;
  double eb = ts_cost_elem_bytes(wl->precision);
  double peak = gpu->peak_flops_per_s[wl->precision];
  long t = wl->tp, bs = wl->micro_batch * m->seq, h = m->hidden;
  long v = ts_workload_padded_vocab(wl) / t;
  double act = (double)bs * (double)h, logits = (double)bs * (double)v;

  /* Embedding: gather of word rows plus position rows, add, dropout (write + mask); backward
   * scatter-adds into the fp32 main_grad of both tables. */
  out->embed_fwd = ts_cost_add(ts_cost_memory_bound(gpu, 3 * eb * act),
                               ts_cost_memory_bound(gpu, (2 * eb + 1) * act));
  out->embed_bwd = ts_cost_memory_bound(gpu, (eb + 8 + eb + 8) * act);
  out->embed_allreduce_bytes = t > 1 ? eb * act : 0;

  /* Output layer: final LN, logits GEMM against the vocab-parallel embedding, cross-entropy in
   * fp32 (cast, max, exp-sum, loss: about 3 passes over 4-byte logits plus the bf16 read);
   * backward writes the logits gradient and runs the GEMM's input and weight gradients. */
  linear_cost head = linear(gpu, peak, bs, v, h, eb);
  ts_cost ln = ts_cost_memory_bound(gpu, 2 * eb * act);
  ts_cost ce = ts_cost_memory_bound(gpu, (eb + 3 * 4) * logits);
  ts_cost ce_b = ts_cost_memory_bound(gpu, (4 + eb) * logits);
  out->head_fwd = ts_cost_add(ts_cost_add(ln, head.fwd), ce);
  out->head_bwd = ts_cost_add(ts_cost_add(ce_b, head.bwd), ts_cost_memory_bound(gpu, 4 * eb * act));
  out->loss_allreduce_bytes = t > 1 ? 4.0 * (double)bs : 0;
  out->head_allreduce_bytes = t > 1 ? eb * act : 0;
}

/* Adam with an fp32 master copy (Megatron's mixed-precision optimizer): the gradient-norm pass
 * reads the fp32 gradients (4 B/param); the fused step reads the gradient (4), reads and writes
 * master weight, momentum and variance (3 x 8) and writes the low-precision weight (eb). */
ts_cost ts_cost_optimizer(const ts_workload *wl, const ts_gpu *gpu, double n_params) {
  double eb = ts_cost_elem_bytes(wl->precision);
  double per_param = 4.0 + 4.0 + 24.0 + (wl->precision == TS_PREC_FP32 ? 0.0 : eb);
  ts_cost norm = ts_cost_memory_bound(gpu, 4.0 * n_params);
  ts_cost step = ts_cost_memory_bound(gpu, (per_param - 4.0) * n_params);
  return ts_cost_add(norm, step);
}

/* Megatron GPT layer: QKV (h x (h + 2 g d), bias), projection (h x h, bias), FC1 (h x f, bias),
 * FC2 (f x h, bias), two layer norms (2h each). Column-parallel weights and biases split by t;
 * row-parallel weights split, their biases replicated; layer norms replicated. */
static double layer_params(const ts_model *m, long t) {
  double h = (double)m->hidden, f = (double)m->ffn_hidden;
  double qkv_n = h + 2.0 * (double)m->n_query_groups * (h / (double)m->n_heads);
  double split = h * qkv_n + qkv_n + h * h + h * f + f + f * h;
  return split / (double)t + h + h + 4.0 * h;
}

double ts_cost_layer_params(const ts_workload *wl) {
  return layer_params(&wl->model, wl->tp);
}

double ts_cost_stage_params(const ts_workload *wl, long stage) {
  const ts_model *m = &wl->model;
  double h = (double)m->hidden;
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * h;
  double p = (double)ts_workload_stage_layers(wl, stage) * layer_params(m, wl->tp);
  if (stage == 0)
    p += word + (double)m->seq * h; /* word and position embeddings */
  if (stage == wl->pp - 1) {
    p += 2.0 * h; /* final layer norm */
    if (wl->pp > 1)
      p += word; /* tied output embedding, kept in sync by an all-reduce */
  }
  return p;
}

double ts_cost_model_params(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  double h = (double)m->hidden;
  return (double)m->n_layers * layer_params(m, 1) + (double)m->vocab * h + (double)m->seq * h +
         2.0 * h;
}

static double flops_formula(const ts_workload *wl, double k, double vocab, double vocab_div) {
  const ts_model *m = &wl->model;
  double B = (double)wl->global_batch, s = (double)m->seq, l = (double)m->n_layers;
  double h = (double)m->hidden;
  return 24.0 * k * B * s * l * h * h * (1.0 + s / (6.0 * h) + vocab / (vocab_div * l * h));
}

double ts_cost_model_flops(const ts_workload *wl) {
  return flops_formula(wl, 3.0, (double)wl->model.vocab, 12.0);
}

double ts_cost_megatron_flops(const ts_workload *wl) {
  double k = wl->recompute == TS_RECOMPUTE_FULL ? 4.0 : 3.0;
  return flops_formula(wl, k, (double)ts_workload_padded_vocab(wl), 16.0);
}
