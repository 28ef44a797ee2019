/* step_requests: see step_requests.h. Each function below emits one module's or operation's
 * requests in the order PyTorch makes them; "saved" tensors are those autograd keeps for the
 * backward pass (freed when the node that saved them has run: Engine::evaluate_function
 * releases a node's variables right after it, and AccumulateGrad nodes run first of the ready
 * ones, so a weight's gradient is freed by its hook before the next node). Sizes in bytes. */
#include "step_requests.h"

#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "cost.h"
#include "err.h"
#include "memory.h"

/* How a layer's forward treats what autograd saves: kept for the backward (KEEP), dropped at its
 * last use by torch.utils.checkpoint's forward (DROP), or made again by its recomputation in the
 * backward (RECOMPUTE: kept, and the recomputation stops after the last saved tensor:
 * checkpoint's early stop, on by default since PyTorch 2.1). */
typedef enum pass_mode { KEEP, DROP, RECOMPUTE } pass_mode;

/* A layer's saved tensors (-1: none). */
typedef struct layer_saved {
  long x, y1, mu1, rs1, qkv, q, k, v, o, lse, m1, x1, y2, mu2, rs2, fc1, act, gate_up, gate, up,
      mul, m2;
} layer_saved;

typedef struct gen {
  ts_step_requests *r;
  double T, s, h, heads, kv_width, q_width, f, V, eb, mlp_in;
  bool llama_like; /* RMSNorm, rotary, separate q, k, v, SwiGLU, no dropout (else GPT's) */
  bool bias, dropout, repeats_kv, learned_positions, tied, swiglu, separate_gate_up;
  long n_layers, n_micro;
  pass_mode layer_mode;
  long late[8]; /* a checkpointed block's locals, freed as its forward returns (L) */
  int n_late;
  bool recompute;
  double *params; /* elements of each weight, in the model's order */
  long n_params;
} gen;

static void push(gen *g, ts_step_request_kind kind, long tensor, double bytes) {
  ts_step_requests *r = g->r;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 4096;
    r->v = realloc(r->v, (size_t)r->cap * sizeof *r->v);
    TS_ASSERT(r->v != NULL);
  }
  r->v[r->n++] = (ts_step_request){kind, tensor, bytes > 0 ? (uint64_t)llround(bytes) : 0};
}

static long A(gen *g, double bytes) {
  long t = g->r->n_tensors++;
  push(g, TS_STEP_REQUEST_ALLOC, t, bytes);
  return t;
}

static void F(gen *g, long t) {
  if (t >= 0)
    push(g, TS_STEP_REQUEST_FREE, t, 0);
}

/* A tensor autograd saves, at its last use in the forward: kept, or freed under checkpoint. */
static long S(gen *g, long t) {
  if (g->layer_mode == DROP) {
    F(g, t);
    return -1;
  }
  return t;
}

/* The same for a tensor the block's Python code also holds in a local variable (gpt.py's qkv
 * and attention output, llama_steps.py's y, q, k, v, a, gate and up, both's x): under
 * checkpoint it lives until the block's forward returns (late_frees). */
static long L(gen *g, long t) {
  if (g->layer_mode == DROP && t >= 0) {
    TS_ASSERT(g->n_late < (int)(sizeof g->late / sizeof g->late[0]));
    g->late[g->n_late++] = t;
    return -1;
  }
  return t;
}

static void late_frees(gen *g) {
  for (int i = 0; i < g->n_late; i++)
    F(g, g->late[i]);
  g->n_late = 0;
}

static void add_param(gen *g, double elems) {
  g->params = realloc(g->params, (size_t)(g->n_params + 1) * sizeof *g->params);
  TS_ASSERT(g->params != NULL);
  g->params[g->n_params++] = elems;
}

/* The weights in construction order (that of gpt.py's and llama_steps.py's modules, and of
 * model.parameters() up to the norms' small weights). */
static void list_params(gen *g, const ts_workload *wl) {
  const ts_model *m = &wl->model;
  double h = g->h, b = g->bias ? 1 : 0, norm = m->rms_norm ? 1 : 2;
  add_param(g, g->V * h);
  if (g->learned_positions)
    add_param(g, (double)m->seq * h);
  for (long l = 0; l < g->n_layers; l++) {
    for (int i = 0; i < norm; i++)
      add_param(g, h);
    if (g->llama_like) {
      add_param(g, g->q_width * h);
      add_param(g, g->kv_width * h);
      add_param(g, g->kv_width * h);
    } else {
      add_param(g, (g->q_width + 2 * g->kv_width) * h);
      if (b)
        add_param(g, g->q_width + 2 * g->kv_width);
    }
    add_param(g, h * g->q_width);
    if (b)
      add_param(g, h);
    for (int i = 0; i < norm; i++)
      add_param(g, h);
    if (g->swiglu && !g->separate_gate_up) {
      add_param(g, 2 * g->f * h);
    } else {
      add_param(g, g->f * h);
      if (g->swiglu)
        add_param(g, g->f * h);
      else if (b)
        add_param(g, g->f);
    }
    add_param(g, h * g->f);
    if (b)
      add_param(g, h);
  }
  for (int i = 0; i < norm; i++)
    add_param(g, h);
  if (!g->tied)
    add_param(g, g->V * h);
}

/* A normalisation: its output and, saved, its fp32 statistics (LayerNorm's mean and rstd,
 * RMSNorm's rstd: native_layer_norm, _fused_rms_norm) */
static long norm_forward(gen *g, long *mu, long *rs) {
  long y = A(g, g->eb * g->T * g->h);
  *mu = g->llama_like ? -1 : A(g, 4 * g->T);
  *rs = A(g, 4 * g->T);
  if (g->layer_mode == DROP) { /* no one keeps the statistics */
    F(g, *mu);
    F(g, *rs);
    *mu = *rs = -1;
  }
  return y;
}

/* x cos + rotate_half(x) sin on a projection's output t of width w (elementwise ops on bf16;
 * rotate_half: a negation of one half and a cat); t is dropped for the result */
static long rotary(gen *g, long t, double w) {
  double bytes = g->eb * g->T * w;
  long xc = A(g, bytes), neg = A(g, bytes / 2), cat = A(g, bytes);
  F(g, neg);
  long cs = A(g, bytes);
  F(g, cat);
  long out = A(g, bytes);
  F(g, xc);
  F(g, cs);
  F(g, t);
  return out;
}

/* A layer's forward from its input x; returns its output. */
static long layer_forward(gen *g, long x, layer_saved *sv) {
  double T = g->T, h = g->h, eb = g->eb;
  *sv = (layer_saved){x,  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                      -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  sv->y1 = norm_forward(g, &sv->mu1, &sv->rs1);
  if (g->llama_like) {
    long q = A(g, eb * T * g->q_width), k = A(g, eb * T * g->kv_width),
         v = A(g, eb * T * g->kv_width);
    sv->y1 = L(g, sv->y1);
    q = rotary(g, q, g->q_width);
    k = rotary(g, k, g->kv_width);
    if (g->repeats_kv) { /* repeat_interleave: expand and copy to every query head */
      long kr = A(g, eb * T * g->q_width), vr = A(g, eb * T * g->q_width);
      F(g, k);
      F(g, v);
      k = kr;
      v = vr;
    }
    sv->o = A(g, eb * T * g->q_width); /* flash's output and log-sum-exp */
    sv->lse = A(g, 4 * T * g->heads);
    sv->q = L(g, q);
    sv->k = L(g, k);
    sv->v = L(g, v);
    sv->lse = S(g, sv->lse);
  } else {
    sv->qkv = A(g, eb * T * (g->q_width + 2 * g->kv_width));
    sv->y1 = S(g, sv->y1);
    sv->o = A(g, eb * T * g->q_width);
    sv->lse = A(g, 4 * T * g->heads);
    sv->qkv = L(g, sv->qkv);
    sv->lse = S(g, sv->lse);
  }
  long proj = A(g, eb * T * h);
  sv->o = L(g, sv->o);
  if (g->dropout) { /* native_dropout: its output and a bool mask, saved */
    long d = A(g, eb * T * h);
    sv->m1 = S(g, A(g, T * h));
    F(g, proj);
    proj = d;
  }
  sv->x1 = A(g, eb * T * h); /* the residual sum */
  F(g, proj);
  sv->y2 = norm_forward(g, &sv->mu2, &sv->rs2);
  long mlp_out;
  if (g->swiglu) {
    if (g->separate_gate_up) {
      sv->gate = A(g, eb * T * g->f);
      sv->up = A(g, eb * T * g->f);
    } else {
      sv->gate_up = A(g, eb * T * 2 * g->f);
    }
    sv->y2 = S(g, sv->y2);
    sv->act = A(g, eb * T * g->f); /* silu(gate) */
    sv->mul = A(g, eb * T * g->f);
    sv->gate_up = L(g, sv->gate_up);
    sv->gate = L(g, sv->gate);
    sv->up = L(g, sv->up);
    sv->act = S(g, sv->act);
    if (g->layer_mode == RECOMPUTE) /* early stop: the last saved tensor is down's input */
      return -1;
    mlp_out = A(g, eb * T * h);
    sv->mul = S(g, sv->mul);
  } else {
    sv->fc1 = A(g, eb * T * g->f);
    sv->y2 = S(g, sv->y2);
    sv->act = A(g, eb * T * g->f); /* gelu */
    sv->fc1 = S(g, sv->fc1);
    mlp_out = A(g, eb * T * h);
    sv->act = S(g, sv->act);
  }
  if (g->dropout) {
    long d = A(g, eb * T * h);
    sv->m2 = S(g, A(g, T * h));
    F(g, mlp_out);
    mlp_out = d;
    if (g->layer_mode == RECOMPUTE) { /* early stop after the last saved tensor, the mask */
      F(g, mlp_out);
      return -1;
    }
  } else if (g->layer_mode == RECOMPUTE) {
    F(g, mlp_out);
    return -1;
  }
  long out = A(g, eb * T * h);
  F(g, mlp_out);
  sv->x1 = L(g, sv->x1);
  late_frees(g);
  return out;
}

/* A weight's gradient: made by its layer's backward, added to the fp32 main gradient by the
 * post-accumulate hook and freed (gpt.Trainer._accumulate) */
static void weight_grad(gen *g, double elems) {
  F(g, A(g, g->eb * elems));
}

/* A linear layer's backward (AddmmBackward0 / MmBackward0): the bias's gradient (sum_to), the
 * input's, the weight's; then its saved input and the incoming gradient are dropped. Returns
 * the input's gradient. */
static long linear_backward(gen *g, double in_width, double out_width, long saved_in, long grad,
                            bool free_grad) {
  long gb = g->bias ? A(g, g->eb * out_width) : -1;
  long gin = A(g, g->eb * g->T * in_width);
  long gw = A(g, g->eb * in_width * out_width);
  F(g, saved_in);
  if (free_grad)
    F(g, grad);
  F(g, gw);
  F(g, gb);
  return gin;
}

static long norm_backward(gen *g, long x, long mu, long rs, long grad) {
  long gx = A(g, g->eb * g->T * g->h);
  F(g, x);
  F(g, mu);
  F(g, rs);
  F(g, grad);
  weight_grad(g, g->h);
  if (!g->llama_like)
    weight_grad(g, g->h);
  return gx;
}

/* FlashAttention-2's backward (mha_bwd): dq, dk, dv, then its fp32 softmax_d and dq_accum
 * (sequences rounded to 128), freed before it returns */
static void flash_backward(gen *g, double kv_width, long *dq, long *dk, long *dv) {
  double rounded = ceil(g->s / 128.0) * 128.0 / g->s;
  *dq = A(g, g->eb * g->T * g->q_width);
  *dk = A(g, g->eb * g->T * kv_width);
  *dv = A(g, g->eb * g->T * kv_width);
  long sd = A(g, 4 * g->T * rounded * g->heads), acc = A(g, 4 * g->T * rounded * g->q_width);
  F(g, acc);
  F(g, sd);
}

/* The rotary embedding's backward on a gradient of width w: the cos product's, the sin
 * product's, the negation's and rotate_half's cat; returns the projection output's gradient */
static long rotary_backward(gen *g, long grad, double w) {
  double bytes = g->eb * g->T * w;
  long g_sin = A(g, bytes), g_neg = A(g, bytes / 2), g_rot = A(g, bytes);
  F(g, g_sin);
  F(g, g_neg);
  long g_cos = A(g, bytes);
  F(g, grad);
  F(g, g_rot); /* summed into g_cos in place */
  return g_cos;
}

/* A layer's backward from the gradient of its output (dx, shared with the residual branch);
 * returns the gradient of its input. */
static long layer_backward(gen *g, long dx, layer_saved *sv) {
  double T = g->T, h = g->h, eb = g->eb;
  if (g->recompute) { /* the first saved tensor unpacked recomputes the layer */
    g->layer_mode = RECOMPUTE;
    long x = sv->x;
    layer_forward(g, x, sv);
    g->layer_mode = DROP;
  }
  long grad = dx;
  bool shared = true; /* dx is also the residual branch's: not freed by the first node */
  if (g->dropout) {
    grad = A(g, eb * T * h);
    F(g, sv->m2);
    shared = false;
  }
  long gmlp;
  if (g->swiglu) {
    long gin = linear_backward(g, g->f, h, sv->mul, grad, !shared);
    long g_act = A(g, eb * T * g->f), g_up = A(g, eb * T * g->f);
    F(g, sv->act);
    F(g, sv->up);
    F(g, gin);
    long g_gate = A(g, eb * T * g->f);
    F(g, sv->gate);
    F(g, sv->gate_up);
    F(g, g_act);
    if (g->separate_gate_up) {
      long a = linear_backward(g, h, g->f, -1, g_up, true);
      long b2 = linear_backward(g, h, g->f, sv->y2, g_gate, true);
      F(g, b2); /* summed into a in place */
      gmlp = a;
    } else {
      long cat = A(g, eb * T * 2 * g->f);
      F(g, g_gate);
      F(g, g_up);
      gmlp = linear_backward(g, h, 2 * g->f, sv->y2, cat, true);
    }
  } else {
    long gin = linear_backward(g, g->f, h, sv->act, grad, !shared);
    long gg = A(g, eb * T * g->f); /* gelu's backward */
    F(g, sv->fc1);
    F(g, gin);
    gmlp = linear_backward(g, h, g->f, sv->y2, gg, true);
  }
  long gx1 = norm_backward(g, sv->x1, sv->mu2, sv->rs2, gmlp);
  F(g, gx1); /* summed into dx in place (InputBuffer::accumulate) */
  grad = dx;
  shared = true;
  if (g->dropout) {
    grad = A(g, eb * T * h);
    F(g, sv->m1);
    shared = false;
  }
  long g_o = linear_backward(g, g->q_width, h, -1, grad, !shared);
  long dq, dk, dv;
  bool repeated = g->llama_like && g->repeats_kv;
  flash_backward(g, repeated ? g->q_width : g->kv_width, &dq, &dk, &dv);
  F(g, sv->qkv);
  F(g, sv->q);
  F(g, sv->k);
  F(g, sv->v);
  F(g, sv->o);
  F(g, sv->lse);
  F(g, g_o);
  long gy1;
  if (g->llama_like) {
    if (repeated) { /* repeat_interleave's backward sums the copies; v's node runs first */
      long v_small = A(g, eb * T * g->kv_width);
      F(g, dv);
      dv = v_small;
      long k_small = A(g, eb * T * g->kv_width);
      F(g, dk);
      dk = k_small;
    }
    gy1 = linear_backward(g, h, g->kv_width, -1, dv, true);
    long gk = rotary_backward(g, dk, g->kv_width);
    F(g, linear_backward(g, h, g->kv_width, -1, gk, true));
    long gq = rotary_backward(g, dq, g->q_width);
    F(g, linear_backward(g, h, g->q_width, sv->y1, gq, true));
  } else { /* unbind's backward stacks the three gradients */
    long gqkv = A(g, eb * T * (g->q_width + 2 * g->kv_width));
    F(g, dq);
    F(g, dk);
    F(g, dv);
    gy1 = linear_backward(g, h, g->q_width + 2 * g->kv_width, sv->y1, gqkv, true);
  }
  long gx = norm_backward(g, sv->x, sv->mu1, sv->rs1, gy1);
  F(g, gx); /* summed into dx in place */
  return dx;
}

/* embedding_dense_backward_cuda: sorted and original indices, the zeroed weight gradient and
 * the fp32 partial sums of its segments (one a distinct index, plus one per 10 repeats:
 * NROWS_PER_THREAD; distinct indices of T uniform draws over V: V (1 - e^(-T/V)), ASSUMED for
 * the batches' token mix); returns the weight's gradient */
static long embedding_backward(gen *g, double rows, double indices) {
  long si = A(g, 8 * indices), oi = A(g, 8 * indices);
  long gw = A(g, g->eb * rows * g->h);
  double segments = rows * (1.0 - exp(-indices / rows)) + indices / 10.0;
  F(g, A(g, 4 * segments * g->h));
  F(g, si);
  F(g, oi);
  return gw;
}

static void microbatch(gen *g) {
  double T = g->T, h = g->h, eb = g->eb;
  long pos = -1, emb_mask = -1, x;
  if (g->learned_positions) { /* wte(idx) + wpe(arange(s)) */
    long e = A(g, eb * T * h);
    pos = A(g, 8 * g->s);
    long p = A(g, eb * g->s * h);
    x = A(g, eb * T * h);
    F(g, e);
    F(g, p);
  } else {
    x = A(g, eb * T * h);
  }
  if (g->dropout) {
    long d = A(g, eb * T * h);
    emb_mask = A(g, T * h);
    F(g, x);
    x = d;
  }
  layer_saved *sv = ts_alloc((size_t)g->n_layers, sizeof *sv);
  g->layer_mode = g->recompute ? DROP : KEEP;
  for (long l = 0; l < g->n_layers; l++)
    x = layer_forward(g, x, &sv[l]);
  long mu, rs;
  pass_mode mode = g->layer_mode;
  g->layer_mode = KEEP;
  long yf = norm_forward(g, &mu, &rs);
  g->layer_mode = mode;
  /* the logits, their fp32 copy (the bf16 ones dropped: .float()'s backward keeps nothing),
   * log_softmax's output (saved) and nll_loss's scalars */
  long l16 = A(g, eb * T * g->V), l32 = A(g, 4 * T * g->V);
  F(g, l16);
  long ls = A(g, 4 * T * g->V);
  F(g, l32);
  long loss = A(g, 4), total = A(g, 4);
  /* backward: the loss's gradient, nll_loss's dense gradient, log_softmax's, the bf16 cast */
  long g0 = A(g, 4), gn = A(g, 4 * T * g->V);
  F(g, g0);
  F(g, total);
  long gl = A(g, 4 * T * g->V);
  F(g, gn);
  F(g, ls);
  long g16 = A(g, eb * T * g->V);
  F(g, gl);
  long gy = A(g, eb * T * h), gw_out = A(g, eb * g->V * h);
  F(g, yf);
  F(g, g16);
  if (!g->tied) { /* a tied weight's gradient waits in its AccumulateGrad's buffer */
    F(g, gw_out);
    gw_out = -1;
  }
  long dx = norm_backward(g, x, mu, rs, gy);
  for (long l = g->n_layers - 1; l >= 0; l--)
    dx = layer_backward(g, dx, &sv[l]);
  free(sv);
  if (g->dropout) {
    long gd = A(g, eb * T * h);
    F(g, emb_mask);
    F(g, dx);
    dx = gd;
  }
  if (g->learned_positions) {
    F(g, embedding_backward(g, g->s, g->s));
    F(g, pos);
  }
  F(g, embedding_backward(g, g->V, T));
  F(g, gw_out);
  F(g, dx);
  F(g, loss);
}

static void optimizer_step(gen *g, const ts_workload *wl, bool first) {
  /* clip_grad_norm_(foreach): a norm a weight, their stack, the total, the clip coefficient */
  long *tmp = ts_alloc((size_t)g->n_params + 4, sizeof *tmp);
  for (long i = 0; i < g->n_params; i++)
    tmp[i] = A(g, 4);
  tmp[g->n_params] = A(g, 4.0 * (double)g->n_params);
  for (int i = 1; i < 4; i++)
    tmp[g->n_params + i] = A(g, 4);
  for (long i = 0; i < g->n_params + 4; i++)
    F(g, tmp[i]);
  /* AdamW's state at its first step (_init_group): a step count (fused: on the GPU) and the
   * two fp32 moments, weight by weight */
  bool fused = wl->adam_implementation == TS_ADAM_FUSED;
  if (first)
    for (long i = 0; i < g->n_params; i++) {
      if (fused)
        A(g, 4);
      A(g, 4 * g->params[i]);
      A(g, 4 * g->params[i]);
    }
  if (!fused) { /* _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs) */
    for (long i = 0; i < g->n_params; i++)
      tmp[i] = A(g, 4 * g->params[i]);
    for (long i = 0; i < g->n_params; i++)
      F(g, tmp[i]);
  }
  free(tmp);
}

/* The most layer passes (layers x microbatches) a step may have for its requests to be
 * replayed: about 120 requests each over three steps, some 40 MB at the bound; beyond it the
 * verdict stays the byte count's. */
#define MAX_LAYER_PASSES 5000

bool ts_step_requests_supported(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  return (double)m->n_layers * (double)ts_workload_microbatches(wl) <= MAX_LAYER_PASSES &&
         wl->framework == TS_FRAMEWORK_PYTORCH && wl->n_gpus == 1 && wl->tp == 1 && wl->pp == 1 &&
         wl->cp == 1 && ts_workload_zero(wl) == 0 && m->n_experts == 0 && !m->mla &&
         m->mtp_layers == 0 && wl->fp8 == TS_FP8_NONE && !wl->is_autocast && !wl->is_compiled &&
         (wl->precision == TS_PREC_BF16 || wl->precision == TS_PREC_FP16) && wl->flash_attention &&
         !wl->is_unpad_input &&
         (wl->recompute == TS_RECOMPUTE_NONE || wl->recompute == TS_RECOMPUTE_FULL) &&
         wl->gelu_impl == TS_GELU_FUNCTIONAL && wl->rms_norm_impl == TS_RMS_NORM_FUNCTIONAL &&
         wl->rope_impl == TS_ROPE_ROTATE_HALF && wl->fusions == 0 && m->rms_norm == m->rope &&
         m->rope == m->swiglu && m->rotary_percent == 1.0 && m->kv_channels == 0 &&
         !m->squared_relu;
}

void ts_step_requests_build(const ts_workload *wl, int n_steps, ts_step_requests *out) {
  const ts_model *m = &wl->model;
  gen g = {.r = out};
  g.s = (double)ts_workload_local_seq(wl);
  g.T = g.s * (double)wl->micro_batch;
  g.h = (double)m->hidden;
  g.heads = (double)m->n_heads;
  g.q_width = g.h;
  g.kv_width = g.h / g.heads * (double)m->n_query_groups;
  g.f = (double)m->ffn_hidden;
  g.V = (double)ts_workload_padded_vocab(wl);
  g.eb = ts_cost_elem_bytes(wl->precision);
  g.llama_like = m->rope;
  g.bias = m->bias;
  g.dropout = m->hidden_dropout > 0;
  g.repeats_kv = ts_workload_repeats_kv(wl);
  g.learned_positions = !m->rope;
  g.tied = !m->untied;
  g.swiglu = m->swiglu;
  g.separate_gate_up = wl->gate_up == TS_GATE_UP_SEPARATE;
  g.n_layers = m->n_layers;
  g.n_micro = ts_workload_microbatches(wl);
  g.recompute = wl->recompute == TS_RECOMPUTE_FULL;
  list_params(&g, wl);
  /* built in fp32 on the GPU, each weight in turn; Llama's rotary tables (llama_steps.rotary:
   * arange, its fp32 copy, outer, cat, cos, sin) */
  long *w = ts_alloc((size_t)g.n_params, sizeof *w);
  for (long i = 0; i < g.n_params; i++)
    w[i] = A(&g, 4 * g.params[i]);
  long cos = -1, sin = -1;
  double d = g.h / g.heads;
  if (g.llama_like) {
    long ar = A(&g, 8 * g.s), arf = A(&g, 4 * g.s);
    F(&g, ar);
    long outer = A(&g, 4 * g.s * d / 2);
    F(&g, arf);
    long cat = A(&g, 4 * g.s * d);
    F(&g, outer);
    cos = A(&g, 4 * g.s * d);
    sin = A(&g, 4 * g.s * d);
    F(&g, cat);
  }
  /* .to(bfloat16): each weight's copy, then its fp32 tensor freed (Module._apply); then the
   * buffers */
  for (long i = 0; i < g.n_params; i++) {
    long c = A(&g, g.eb * g.params[i]);
    F(&g, w[i]);
    w[i] = c;
  }
  if (g.llama_like) {
    long c = A(&g, g.eb * g.s * d);
    F(&g, cos);
    long s2 = A(&g, g.eb * g.s * d);
    F(&g, sin);
    cos = c;
    sin = s2;
  }
  for (long i = 0; i < 2 * g.n_micro; i++) /* the batches: token ids and targets, int64 */
    A(&g, 8 * g.T);
  for (long i = 0; i < g.n_params; i++) /* fp32 master weights, then main gradients */
    A(&g, 4 * g.params[i]);
  for (long i = 0; i < g.n_params; i++)
    A(&g, 4 * g.params[i]);
  free(w);
  push(&g, TS_STEP_REQUEST_EMPTY_CACHE, -1, 0);
  for (int step = 0; step < n_steps; step++) {
    for (long mb = 0; mb < g.n_micro; mb++)
      microbatch(&g);
    optimizer_step(&g, wl, step == 0);
  }
  free(g.params);
}

void ts_step_requests_free(ts_step_requests *r) {
  free(r->v);
  *r = (ts_step_requests){0};
}

void ts_step_requests_replay(const ts_step_requests *r, uint64_t capacity_bytes,
                             ts_caching_allocator_stats *stats) {
  ts_caching_allocator *a = ts_caching_allocator_new(capacity_bytes);
  long *handle = ts_alloc((size_t)r->n_tensors, sizeof *handle);
  for (long t = 0; t < r->n_tensors; t++)
    handle[t] = -1;
  for (long i = 0; i < r->n; i++) {
    const ts_step_request *q = &r->v[i];
    if (q->kind == TS_STEP_REQUEST_EMPTY_CACHE) {
      ts_caching_allocator_empty_cache(a);
    } else if (q->kind == TS_STEP_REQUEST_ALLOC) {
      handle[q->tensor] = ts_caching_allocator_malloc(a, q->bytes, 0);
      if (handle[q->tensor] < 0)
        break;
    } else { /* a tensor is freed once: its handle may name another block afterwards */
      TS_ASSERT(handle[q->tensor] >= 0);
      ts_caching_allocator_free(a, handle[q->tensor]);
      handle[q->tensor] = -1;
    }
  }
  *stats = *ts_caching_allocator_stats_of(a);
  free(handle);
  ts_caching_allocator_delete(a);
}

bool ts_step_requests_edge_fits(const ts_workload *wl, const ts_memory *m, double usable_bytes,
                                ts_caching_allocator_stats *stats) {
  return !ts_memory_fragmentation_risk(wl, m, usable_bytes) || !ts_step_requests_supported(wl) ||
         ts_step_requests_fit(wl, (uint64_t)usable_bytes, stats);
}

bool ts_step_requests_fit(const ts_workload *wl, uint64_t capacity_bytes,
                          ts_caching_allocator_stats *stats) {
  ts_step_requests req = {0};
  ts_step_requests_build(wl, 3, &req);
  ts_step_requests_replay(&req, capacity_bytes, stats);
  ts_step_requests_free(&req);
  return !stats->is_out_of_memory;
}
