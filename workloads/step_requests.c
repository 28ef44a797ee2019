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

/* A layer's saved tensors (-1: none); under autocast also the linear layers' cast weights and
 * the casts of their inputs that they keep (Llama's k and v projections each cast the norm's
 * output anew). */
typedef struct layer_saved {
  long x, y1, mu1, rs1, qkv, q, k, v, o, lse, m1, x1, y2, mu2, rs2, fc1, act, gate_up, gate, up,
      mul, m2;
  long y1k, y1v, y2u;
  long wc[7]; /* by the layer's linear layers, in order (LINEAR_*) */
} layer_saved;

/* Nothing saved yet but the layer's input (every member a tensor, -1 for none). */
static layer_saved nothing_saved(long x) {
  layer_saved sv;
  long *slot = (long *)&sv;
  for (size_t i = 0; i < sizeof sv / sizeof *slot; i++)
    slot[i] = -1;
  sv.x = x;
  return sv;
}

/* A layer's linear layers, GPT's and Llama's (wc's slots). */
enum {
  LINEAR_QKV,
  LINEAR_Q = 0,
  LINEAR_K,
  LINEAR_V,
  LINEAR_O,
  LINEAR_UP,
  LINEAR_GATE,
  LINEAR_DOWN
};

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
  /* Automatic mixed precision (torch.autocast over fp32 weights): rb, the bytes of a value of
   * the residual stream and the norms (4; eb without); what autocast's region holds to its exit
   * (its cache's weight casts that no node saved, bias casts: addmm saves neither bias); the
   * weights' fp32 .grad, made by the step's first microbatch and freed by
   * zero_grad(set_to_none=True). */
  bool amp, first_micro;
  double rb;
  long *region, *grads;
  long n_region, n_grads;
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

/* A tensor only the block's Python code holds (not saved): freed as the block returns, in any
 * mode (the fp32 locals of Llama's block under autocast). */
static long R(gen *g, long t) {
  TS_ASSERT(g->n_late < (int)(sizeof g->late / sizeof g->late[0]));
  g->late[g->n_late++] = t;
  return -1;
}

static void late_frees(gen *g) {
  for (int i = 0; i < g->n_late; i++)
    F(g, g->late[i]);
  g->n_late = 0;
}

static void push_tensor(long **list, long *n, long t) {
  *list = realloc(*list, (size_t)(*n + 1) * sizeof **list);
  TS_ASSERT(*list != NULL);
  (*list)[(*n)++] = t;
}

/* Held by autocast's region to its exit (region_exit). */
static void to_region_exit(gen *g, long t) {
  push_tensor(&g->region, &g->n_region, t);
}

static void region_exit(gen *g) {
  for (long i = 0; i < g->n_region; i++)
    F(g, g->region[i]);
  g->n_region = 0;
}

/* An fp32 gradient reaching a weight's AccumulateGrad: the step's first microbatch makes it the
 * .grad; later ones add it there and free it. */
static void accumulate(gen *g, long grad32) {
  if (g->first_micro)
    push_tensor(&g->grads, &g->n_grads, grad32);
  else
    F(g, grad32);
}

/* A linear layer's forward on its input *in (of in_width), under autocast: the input's cast
 * when it is fp32 (the copy the layer saves: *in becomes it, the fp32 value a temporary freed
 * after the call unless keep_in), then the weight's cast from autocast's cache (the layer saves
 * it: *wc; under checkpoint's forward only the cache holds it, to the region's exit) and the
 * bias's (the cache alone); returns the output. Without autocast only the output. */
static long linear_forward(gen *g, long *in, bool in_fp32, bool keep_in, bool bias, double in_width,
                           double out_width, long *wc) {
  double eb = g->eb;
  long cast = -1;
  if (g->amp) {
    if (in_fp32)
      cast = A(g, eb * g->T * in_width);
    *wc = A(g, eb * in_width * out_width);
    if (g->layer_mode == DROP) {
      to_region_exit(g, *wc);
      *wc = -1;
    }
    if (bias)
      to_region_exit(g, A(g, eb * out_width));
  }
  long out = A(g, eb * g->T * out_width);
  if (cast >= 0) {
    if (!keep_in)
      F(g, *in);
    *in = cast;
  }
  return out;
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

/* A normalisation: its output (fp32 under autocast, as the residual stream it normalises) and,
 * saved, its fp32 statistics (LayerNorm's mean and rstd, RMSNorm's rstd: native_layer_norm,
 * _fused_rms_norm) */
static long norm_forward(gen *g, long *mu, long *rs) {
  long y = A(g, g->rb * g->T * g->h);
  *mu = g->llama_like ? -1 : A(g, 4 * g->T);
  *rs = A(g, 4 * g->T);
  if (g->layer_mode == DROP) { /* no one keeps the statistics */
    F(g, *mu);
    F(g, *rs);
    *mu = *rs = -1;
  }
  return y;
}

/* x cos + rotate_half(x) sin on a projection's output t of width w (rotate_half: a negation of
 * one half and a cat, in the model's precision; the products and their sum in it too, or in
 * fp32 under autocast, whose tables stay fp32: type promotion); t is dropped for the result */
static long rotary(gen *g, long t, double w) {
  double bytes = g->eb * g->T * w, product = (g->amp ? 4 : g->eb) * g->T * w;
  long xc = A(g, product), neg = A(g, bytes / 2), cat = A(g, bytes);
  F(g, neg);
  long cs = A(g, product);
  F(g, cat);
  long out = A(g, product);
  F(g, xc);
  F(g, cs);
  F(g, t);
  return out;
}

/* A layer's forward from its input x; returns its output. */
static long layer_forward(gen *g, long x, layer_saved *sv) {
  double T = g->T, h = g->h, eb = g->eb;
  *sv = nothing_saved(x);
  sv->y1 = norm_forward(g, &sv->mu1, &sv->rs1);
  if (g->llama_like) {
    long q, k, v;
    if (g->amp) { /* each projection casts the fp32 norm output, a local, anew */
      long y = sv->y1, yk = y, yv = y;
      q = linear_forward(g, &sv->y1, true, true, g->bias, h, g->q_width, &sv->wc[LINEAR_Q]);
      sv->y1 = S(g, sv->y1);
      k = linear_forward(g, &yk, true, true, g->bias, h, g->kv_width, &sv->wc[LINEAR_K]);
      sv->y1k = S(g, yk);
      v = linear_forward(g, &yv, true, true, g->bias, h, g->kv_width, &sv->wc[LINEAR_V]);
      sv->y1v = S(g, yv);
      R(g, y);
    } else {
      q = A(g, eb * T * g->q_width);
      k = A(g, eb * T * g->kv_width);
      v = A(g, eb * T * g->kv_width);
      sv->y1 = L(g, sv->y1);
    }
    q = rotary(g, q, g->q_width);
    k = rotary(g, k, g->kv_width);
    double kv_width = g->kv_width;
    if (g->repeats_kv) { /* repeat_interleave: expand and copy to every query head */
      long kr = A(g, (g->amp ? 4 : eb) * T * g->q_width), vr = A(g, eb * T * g->q_width);
      F(g, k);
      F(g, v);
      k = kr;
      v = vr;
      kv_width = g->q_width;
    }
    /* under autocast SDPA casts the fp32 q and k down (the copies it saves; the fp32 values
     * stay the block's locals), then flash's output and log-sum-exp */
    long qc = g->amp ? A(g, eb * T * g->q_width) : -1, kc = g->amp ? A(g, eb * T * kv_width) : -1;
    sv->o = A(g, eb * T * g->q_width);
    sv->lse = A(g, 4 * T * g->heads);
    if (g->amp) {
      R(g, q);
      R(g, k);
      sv->q = S(g, qc);
      sv->k = S(g, kc);
    } else {
      sv->q = L(g, q);
      sv->k = L(g, k);
    }
    sv->v = L(g, v);
    sv->lse = S(g, sv->lse);
  } else {
    sv->qkv = linear_forward(g, &sv->y1, g->amp, false, g->bias, h, g->q_width + 2 * g->kv_width,
                             &sv->wc[LINEAR_QKV]);
    sv->y1 = S(g, sv->y1);
    sv->o = A(g, eb * T * g->q_width);
    sv->lse = A(g, 4 * T * g->heads);
    sv->qkv = L(g, sv->qkv);
    sv->lse = S(g, sv->lse);
  }
  long proj = linear_forward(g, &sv->o, false, false, g->bias, g->q_width, h, &sv->wc[LINEAR_O]);
  sv->o = L(g, sv->o);
  if (g->dropout) { /* native_dropout: its output and a bool mask, saved */
    long d = A(g, eb * T * h);
    sv->m1 = S(g, A(g, T * h));
    F(g, proj);
    proj = d;
  }
  sv->x1 = A(g, g->rb * T * h); /* the residual sum */
  F(g, proj);
  sv->y2 = norm_forward(g, &sv->mu2, &sv->rs2);
  long mlp_out;
  if (g->swiglu) {
    if (g->separate_gate_up) {
      long y = sv->y2, yu = y;
      sv->gate = linear_forward(g, &sv->y2, g->amp, true, g->bias, h, g->f, &sv->wc[LINEAR_GATE]);
      sv->up = linear_forward(g, &yu, g->amp, true, g->bias, h, g->f, &sv->wc[LINEAR_UP]);
      if (g->amp) { /* the fp32 norm output, a temporary; each linear saves its cast */
        F(g, y);
        sv->y2u = S(g, yu);
      }
    } else {
      sv->gate_up =
          linear_forward(g, &sv->y2, g->amp, false, g->bias, h, 2 * g->f, &sv->wc[LINEAR_UP]);
    }
    sv->y2 = S(g, sv->y2);
    sv->act = A(g, eb * T * g->f); /* silu(gate) */
    sv->mul = A(g, eb * T * g->f);
    sv->gate_up = L(g, sv->gate_up);
    sv->gate = L(g, sv->gate);
    sv->up = L(g, sv->up);
    sv->act = S(g, sv->act);
    if (g->layer_mode == RECOMPUTE) { /* early stop: the last saved tensor is down's input */
      late_frees(g);
      return -1;
    }
    mlp_out = linear_forward(g, &sv->mul, false, false, g->bias, g->f, h, &sv->wc[LINEAR_DOWN]);
    sv->mul = S(g, sv->mul);
  } else {
    sv->fc1 = linear_forward(g, &sv->y2, g->amp, false, g->bias, h, g->f, &sv->wc[LINEAR_UP]);
    sv->y2 = S(g, sv->y2);
    sv->act = A(g, eb * T * g->f); /* gelu */
    sv->fc1 = S(g, sv->fc1);
    mlp_out = linear_forward(g, &sv->act, false, false, g->bias, g->f, h, &sv->wc[LINEAR_DOWN]);
    sv->act = S(g, sv->act);
  }
  if (g->dropout) {
    long d = A(g, eb * T * h);
    sv->m2 = S(g, A(g, T * h));
    F(g, mlp_out);
    mlp_out = d;
    if (g->layer_mode == RECOMPUTE) { /* early stop after the last saved tensor, the mask */
      F(g, mlp_out);
      late_frees(g);
      return -1;
    }
  } else if (g->layer_mode == RECOMPUTE) {
    F(g, mlp_out);
    late_frees(g);
    return -1;
  }
  long out = A(g, g->rb * T * h);
  F(g, mlp_out);
  sv->x1 = L(g, sv->x1);
  late_frees(g);
  return out;
}

/* A weight's gradient, made by its layer's backward. Without autocast a post-accumulate hook adds
 * it to the fp32 main gradient and frees it (gpt.Trainer._accumulate); under autocast a weight
 * that was cast has its low-precision gradient cast up to fp32 by the cast's backward for its
 * .grad, a weight used in fp32 (the norms') gives an fp32 one. */
static void weight_grad(gen *g, long grad, double elems) {
  if (grad < 0)
    return;
  if (!g->amp) {
    F(g, grad);
    return;
  }
  long up = A(g, 4 * elems);
  F(g, grad);
  accumulate(g, up);
}

/* The gradient of a linear layer's input cast down from fp32 under autocast, cast back up by the
 * cast's backward (grad a gradient of width w); grad itself otherwise. */
static long cast_up(gen *g, long grad, double w) {
  if (!g->amp)
    return grad;
  long up = A(g, 4 * g->T * w);
  F(g, grad);
  return up;
}

/* A linear layer's backward (AddmmBackward0 / MmBackward0): the bias's gradient (sum_to), the
 * input's, the weight's; then its saved input, its saved weight cast (autocast) and the
 * incoming gradient are dropped. Returns the input's gradient. */
static long linear_backward(gen *g, double in_width, double out_width, long saved_in, long grad,
                            bool free_grad, long wc) {
  long gb = g->bias ? A(g, g->eb * out_width) : -1;
  long gin = A(g, g->eb * g->T * in_width);
  long gw = A(g, g->eb * in_width * out_width);
  F(g, saved_in);
  F(g, wc);
  if (free_grad)
    F(g, grad);
  weight_grad(g, gw, in_width * out_width);
  weight_grad(g, gb, out_width);
  return gin;
}

static long norm_backward(gen *g, long x, long mu, long rs, long grad) {
  long gx = A(g, g->rb * g->T * g->h);
  F(g, x);
  F(g, mu);
  F(g, rs);
  F(g, grad);
  for (int i = 0; i < (g->llama_like ? 1 : 2); i++) { /* the weight's (and LayerNorm's bias') */
    if (g->amp)
      accumulate(g, A(g, 4 * g->h));
    else
      F(g, A(g, g->eb * g->h));
  }
  return gx;
}

/* The gradient that reaches a residual branch from the stream's (dx): under autocast cast down
 * to the branch's precision (AddBackward0, from the fp32 sum), then through its dropout (the mask
 * freed). *shared: whether it is dx itself. */
static long branch_grad(gen *g, long dx, long mask, bool *shared) {
  long grad = dx;
  *shared = true;
  if (g->amp) {
    grad = A(g, g->eb * g->T * g->h);
    *shared = false;
  }
  if (g->dropout) {
    long d = A(g, g->eb * g->T * g->h);
    F(g, mask);
    if (!*shared)
      F(g, grad);
    grad = d;
    *shared = false;
  }
  return grad;
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

/* A product's gradient for its low-precision factor (the projection's output or its
 * rotate_half): under autocast made in fp32 against the fp32 table, then cast down. */
static long product_grad(gen *g, double w) {
  if (!g->amp)
    return A(g, g->eb * g->T * w);
  long full = A(g, 4 * g->T * w), low = A(g, g->eb * g->T * w);
  F(g, full);
  return low;
}

/* The rotary embedding's backward on a gradient of width w: the cos product's, the sin
 * product's, the negation's and rotate_half's cat; returns the projection output's gradient */
static long rotary_backward(gen *g, long grad, double w) {
  double bytes = g->eb * g->T * w;
  long g_sin = product_grad(g, w), g_neg = A(g, bytes / 2), g_rot = A(g, bytes);
  F(g, g_sin);
  F(g, g_neg);
  long g_cos = product_grad(g, w);
  F(g, grad);
  F(g, g_rot); /* summed into g_cos in place */
  return g_cos;
}

/* A layer's backward from the gradient of its output (dx, shared with the residual branch);
 * returns the gradient of its input. */
static long layer_backward(gen *g, long dx, layer_saved *sv) {
  double T = g->T, h = g->h, eb = g->eb;
  if (g->recompute) { /* the first saved tensor unpacked recomputes the layer, under autocast in
                       * an autocast region of its own */
    g->layer_mode = RECOMPUTE;
    long x = sv->x;
    layer_forward(g, x, sv);
    region_exit(g);
    g->layer_mode = DROP;
  }
  bool shared;
  long grad = branch_grad(g, dx, sv->m2, &shared);
  long gmlp;
  if (g->swiglu) {
    long gin = linear_backward(g, g->f, h, sv->mul, grad, !shared, sv->wc[LINEAR_DOWN]);
    long g_act = A(g, eb * T * g->f), g_up = A(g, eb * T * g->f);
    F(g, sv->act);
    F(g, sv->up);
    F(g, gin);
    long g_gate = A(g, eb * T * g->f);
    F(g, sv->gate);
    F(g, sv->gate_up);
    F(g, g_act);
    if (g->separate_gate_up) {
      long a = cast_up(g, linear_backward(g, h, g->f, sv->y2u, g_up, true, sv->wc[LINEAR_UP]), h);
      long b2 =
          cast_up(g, linear_backward(g, h, g->f, sv->y2, g_gate, true, sv->wc[LINEAR_GATE]), h);
      F(g, b2); /* summed into a in place */
      gmlp = a;
    } else {
      long cat = A(g, eb * T * 2 * g->f);
      F(g, g_gate);
      F(g, g_up);
      gmlp = cast_up(g, linear_backward(g, h, 2 * g->f, sv->y2, cat, true, sv->wc[LINEAR_UP]), h);
    }
  } else {
    long gin = linear_backward(g, g->f, h, sv->act, grad, !shared, sv->wc[LINEAR_DOWN]);
    long gg = A(g, eb * T * g->f); /* gelu's backward */
    F(g, sv->fc1);
    F(g, gin);
    gmlp = cast_up(g, linear_backward(g, h, g->f, sv->y2, gg, true, sv->wc[LINEAR_UP]), h);
  }
  long gx1 = norm_backward(g, sv->x1, sv->mu2, sv->rs2, gmlp);
  F(g, gx1); /* summed into dx in place (InputBuffer::accumulate) */
  grad = branch_grad(g, dx, sv->m1, &shared);
  long g_o = linear_backward(g, g->q_width, h, -1, grad, !shared, sv->wc[LINEAR_O]);
  long dq, dk, dv;
  bool repeated = g->llama_like && g->repeats_kv;
  double kv_width = repeated ? g->q_width : g->kv_width;
  flash_backward(g, kv_width, &dq, &dk, &dv);
  F(g, sv->qkv);
  F(g, sv->q);
  F(g, sv->k);
  F(g, sv->v);
  F(g, sv->o);
  F(g, sv->lse);
  F(g, g_o);
  long gy1;
  if (g->llama_like) {
    /* under autocast SDPA's casts of the fp32 q and k pass their gradients back up */
    dq = cast_up(g, dq, g->q_width);
    dk = cast_up(g, dk, kv_width);
    if (repeated) { /* repeat_interleave's backward sums the copies; v's node runs first */
      long v_small = A(g, eb * T * g->kv_width);
      F(g, dv);
      dv = v_small;
      long k_small = A(g, (g->amp ? 4 : eb) * T * g->kv_width);
      F(g, dk);
      dk = k_small;
    }
    gy1 = cast_up(g, linear_backward(g, h, g->kv_width, sv->y1v, dv, true, sv->wc[LINEAR_V]), h);
    long gk = rotary_backward(g, dk, g->kv_width);
    F(g, cast_up(g, linear_backward(g, h, g->kv_width, sv->y1k, gk, true, sv->wc[LINEAR_K]), h));
    long gq = rotary_backward(g, dq, g->q_width);
    F(g, cast_up(g, linear_backward(g, h, g->q_width, sv->y1, gq, true, sv->wc[LINEAR_Q]), h));
  } else { /* unbind's backward stacks the three gradients */
    long gqkv = A(g, eb * T * (g->q_width + 2 * g->kv_width));
    F(g, dq);
    F(g, dk);
    F(g, dv);
    gy1 = cast_up(
        g,
        linear_backward(g, h, g->q_width + 2 * g->kv_width, sv->y1, gqkv, true, sv->wc[LINEAR_QKV]),
        h);
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
  long gw = A(g, (g->amp ? 4 : g->eb) * rows * g->h); /* the weight's precision */
  double segments = rows * (1.0 - exp(-indices / rows)) + indices / 10.0;
  F(g, A(g, 4 * segments * g->h));
  F(g, si);
  F(g, oi);
  return gw;
}

/* One microbatch's forward (under autocast, its region: to the loss) and backward. */
static void microbatch(gen *g) {
  double T = g->T, h = g->h, eb = g->eb, rb = g->rb;
  long pos = -1, emb_mask = -1, x;
  if (g->learned_positions) { /* wte(idx) + wpe(arange(s)) */
    long e = A(g, rb * T * h);
    pos = A(g, 8 * g->s);
    long p = A(g, rb * g->s * h);
    x = A(g, rb * T * h);
    F(g, e);
    F(g, p);
  } else {
    x = A(g, rb * T * h);
  }
  if (g->dropout) {
    long d = A(g, rb * T * h);
    emb_mask = A(g, T * h);
    F(g, x);
    x = d;
  }
  layer_saved *sv = ts_alloc((size_t)g->n_layers, sizeof *sv);
  g->layer_mode = g->recompute ? DROP : KEEP;
  for (long l = 0; l < g->n_layers; l++)
    x = layer_forward(g, x, &sv[l]);
  long mu, rs, w_out = -1;
  pass_mode mode = g->layer_mode;
  g->layer_mode = KEEP;
  long yf = norm_forward(g, &mu, &rs);
  /* the logits (under autocast the norm's fp32 output cast down, a temporary then, and the
   * output weight's cast), their fp32 copy, log_softmax's output (saved) and nll_loss's
   * scalars; .float()'s backward keeps nothing, but gpt.py's and llama_steps.py's forward hold
   * the logits in a local to the loss */
  long l16 = linear_forward(g, &yf, g->amp, false, false, h, g->V, &w_out);
  g->layer_mode = mode;
  long l32 = A(g, 4 * T * g->V), ls = A(g, 4 * T * g->V);
  long loss = A(g, 4), total = A(g, 4);
  F(g, l32); /* cross_entropy's argument, then the forward's local logits as it returns */
  F(g, l16);
  region_exit(g);
  /* backward: the loss's gradient, nll_loss's dense gradient, log_softmax's, the cast down */
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
  F(g, w_out);
  F(g, g16);
  gy = cast_up(g, gy, h);
  if (g->amp) { /* the output weight's cast passes its gradient up to fp32 */
    long up = A(g, 4 * g->V * h);
    F(g, gw_out);
    gw_out = up;
  }
  if (!g->tied) { /* a tied weight's gradient waits in its AccumulateGrad's buffer */
    if (g->amp)
      accumulate(g, gw_out);
    else
      F(g, gw_out);
    gw_out = -1;
  }
  long dx = norm_backward(g, x, mu, rs, gy);
  for (long l = g->n_layers - 1; l >= 0; l--)
    dx = layer_backward(g, dx, &sv[l]);
  free(sv);
  if (g->dropout) {
    long gd = A(g, rb * T * h);
    F(g, emb_mask);
    F(g, dx);
    dx = gd;
  }
  if (g->learned_positions) {
    long gp = embedding_backward(g, g->s, g->s);
    if (g->amp)
      accumulate(g, gp);
    else
      F(g, gp);
    F(g, pos);
  }
  long ge = embedding_backward(g, g->V, T);
  if (gw_out >= 0) { /* tied: the embedding's gradient summed into the output layer's */
    F(g, ge);
    ge = gw_out;
  }
  if (g->amp)
    accumulate(g, ge);
  else
    F(g, ge);
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
  for (long i = 0; i < g->n_grads; i++) /* zero_grad(set_to_none=True) */
    F(g, g->grads[i]);
  g->n_grads = 0;
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
         m->mtp_layers == 0 && wl->fp8 == TS_FP8_NONE && !wl->is_compiled &&
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
  g.amp = wl->is_autocast;
  g.rb = g.amp ? 4 : g.eb;
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
   * buffers. Under autocast the model stays fp32. */
  for (long i = 0; i < g.n_params && !g.amp; i++) {
    long c = A(&g, g.eb * g.params[i]);
    F(&g, w[i]);
    w[i] = c;
  }
  if (g.llama_like && !g.amp) {
    long c = A(&g, g.eb * g.s * d);
    F(&g, cos);
    long s2 = A(&g, g.eb * g.s * d);
    F(&g, sin);
    cos = c;
    sin = s2;
  }
  for (long i = 0; i < 2 * g.n_micro; i++) /* the batches: token ids and targets, int64 */
    A(&g, 8 * g.T);
  for (long i = 0; i < g.n_params && !g.amp; i++) /* fp32 master weights, then main gradients */
    A(&g, 4 * g.params[i]);
  for (long i = 0; i < g.n_params && !g.amp; i++)
    A(&g, 4 * g.params[i]);
  free(w);
  push(&g, TS_STEP_REQUEST_EMPTY_CACHE, -1, 0);
  for (int step = 0; step < n_steps; step++) {
    for (long mb = 0; mb < g.n_micro; mb++) {
      g.first_micro = mb == 0;
      microbatch(&g);
    }
    optimizer_step(&g, wl, step == 0);
  }
  free(g.params);
  free(g.region);
  free(g.grads);
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

bool ts_step_requests_decide(const ts_workload *wl) {
  return wl->allocator == TS_ALLOCATOR_CACHING && ts_step_requests_supported(wl);
}

bool ts_step_requests_blocks_fit(const ts_workload *wl, double usable_bytes,
                                 ts_caching_allocator_stats *stats) {
  return !ts_step_requests_decide(wl) || ts_step_requests_fit(wl, (uint64_t)usable_bytes, stats);
}

bool ts_step_requests_fit(const ts_workload *wl, uint64_t capacity_bytes,
                          ts_caching_allocator_stats *stats) {
  ts_step_requests req = {0};
  ts_step_requests_build(wl, 3, &req);
  ts_step_requests_replay(&req, capacity_bytes, stats);
  ts_step_requests_free(&req);
  return !stats->is_out_of_memory;
}
