/* schedule: per-rank programs for pipeline schedules; see schedule.h. */
#include "schedule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "layout.h"
#include "memory.h"
#include "zero3.h"

const char *const ts_category_names[] = {"compute", "recompute", "optimizer", "tp_comm",
                                         "pp_comm", "dp_comm",   "ep_comm",   "cp_comm",
                                         "bubble",  "idle",      NULL};
const char *const ts_coll_op_names[] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all",
                                        NULL};
const char *const ts_op_names[] = {"",          "attn",       "mlp",  "attn-core",
                                   "layers",    "embedding",  "head", "optimizer",
                                   "grad-sync", "activation", "mtp",  NULL};

void ts_job_init(ts_job *job, long n_ranks) {
  memset(job, 0, sizeof *job);
  job->n_ranks = n_ranks;
  job->rank_group = ts_alloc((size_t)n_ranks * TS_GROUP_KINDS, sizeof(long));
  job->rank_peer = ts_alloc((size_t)n_ranks * TS_PEERS, sizeof(long));
  job->programs = ts_alloc((size_t)n_ranks, sizeof(ts_program));
  for (long i = 0; i < n_ranks * TS_GROUP_KINDS; i++)
    job->rank_group[i] = -1;
  for (long i = 0; i < n_ranks * TS_PEERS; i++)
    job->rank_peer[i] = -1;
}

long ts_job_add_group(ts_job *job, const long *members, int n_members) {
  ts_group *g = realloc(job->groups, (size_t)(job->n_groups + 1) * sizeof *g);
  TS_ASSERT(g != NULL);
  job->groups = g;
  g[job->n_groups].n_members = n_members;
  g[job->n_groups].members = ts_alloc((size_t)n_members, sizeof(long));
  memcpy(g[job->n_groups].members, members, (size_t)n_members * sizeof(long));
  return job->n_groups++;
}

long ts_job_add_template(ts_job *job, const ts_event *events, int n_events) {
  job->templates = realloc(job->templates, (size_t)(job->n_templates + 1) * sizeof(ts_event *));
  job->template_len = realloc(job->template_len, (size_t)(job->n_templates + 1) * sizeof(int));
  TS_ASSERT(job->templates != NULL && job->template_len != NULL);
  ts_event *copy = ts_alloc((size_t)n_events, sizeof *copy);
  memcpy(copy, events, (size_t)n_events * sizeof *copy);
  job->templates[job->n_templates] = copy;
  job->template_len[job->n_templates] = n_events;
  return job->n_templates++;
}

/* A new block list owned by the job; ranks may share it (all ranks of a stage run one). */
static ts_block *blocks_from(ts_job *job, const long *template_ids, int n_blocks) {
  ts_block *blocks = ts_alloc((size_t)n_blocks, sizeof *blocks);
  job->block_lists = realloc(job->block_lists, (size_t)(job->n_block_lists + 1) * sizeof blocks);
  TS_ASSERT(job->block_lists != NULL);
  job->block_lists[job->n_block_lists++] = blocks;
  for (int i = 0; i < n_blocks; i++) {
    TS_ASSERT(template_ids[i] >= 0 && template_ids[i] < job->n_templates);
    blocks[i].events = job->templates[template_ids[i]];
    blocks[i].n_events = job->template_len[template_ids[i]];
  }
  return blocks;
}

void ts_job_set_blocks(ts_job *job, long rank, const long *template_ids, int n_blocks) {
  TS_ASSERT(job->programs[rank].blocks == NULL);
  job->programs[rank].blocks = blocks_from(job, template_ids, n_blocks);
  job->programs[rank].n_blocks = n_blocks;
}

long ts_job_gpu(const ts_job *job, long rank) {
  return job->rank_gpu != NULL ? job->rank_gpu[rank] : rank;
}

double ts_overlap_slowdown(const ts_event *ev, double overlap, long units) {
  if (ev->sms_taken == 0 || units <= (long)ev->sms_taken)
    return overlap;
  return (double)units / (double)(units - (long)ev->sms_taken) - 1;
}

bool ts_job_is_flex_group(const ts_job *job, long g, bool **marks) {
  if (!job->is_ep_flex)
    return false;
  if (*marks == NULL) {
    *marks = ts_alloc((size_t)job->n_groups, sizeof **marks);
    for (long r = 0; r < job->n_ranks; r++) {
      long e = job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_EP];
      if (e >= 0)
        (*marks)[e] = true;
    }
  }
  return (*marks)[g];
}

void ts_job_fini(ts_job *job) {
  free(job->rank_gpu);
  for (long g = 0; g < job->n_groups; g++)
    free(job->groups[g].members);
  free(job->groups);
  for (long i = 0; i < job->n_block_lists; i++)
    free(job->block_lists[i]);
  free(job->block_lists);
  free(job->programs);
  free(job->rank_group);
  free(job->rank_peer);
  for (long t = 0; t < job->n_templates; t++)
    free(job->templates[t]);
  free(job->templates);
  free(job->template_len);
  memset(job, 0, sizeof *job);
}

/* DualPipe.step (deepseek-ai/DualPipe, dualpipe.py), pass by pass, for pipeline rank `rank` of
 * p: its eight steps with their counts, phase 0 / 1 meaning this rank's chunk of the forward /
 * backward-going pipeline in the first half of the ranks and the other way round in the
 * second; B with enable_zb defers its W to a first-in first-out queue. Microbatch k of direction
 * d is step index k x 2 + d (chunk d). */
static long dualpipe_order(long p, long rank, long m, long *steps) {
  long n = 0, half = p / 2, hr = rank < p - 1 - rank ? rank : p - 1 - rank, hm = m / 2;
  long second = rank >= half, f[2] = {0, 0}, b[2] = {0, 0}, head = 0, tail = 0;
  bool middle = rank == half - 1 || rank == half;
  long *deferred = ts_alloc((size_t)m, sizeof(long)); /* the W queue */
#define F(ph) (steps[n++] = f[(ph) ^ second]++ * 2 + ((ph) ^ second))
#define B_IDX(ph) (b[(ph) ^ second]++ * 2 + ((ph) ^ second))
#define B(ph, zb)                                                                                  \
  do {                                                                                             \
    long idx_ = B_IDX(ph);                                                                         \
    steps[n++] = (zb) ? TS_STEP_BI + (deferred[tail++] = idx_) : -1 - idx_;                        \
  } while (0)
#define W() (steps[n++] = TS_STEP_W + deferred[head++])
#define FB(ph0, ph1)                                                                               \
  do {                                                                                             \
    long f_ = f[(ph0) ^ second]++ * 2 + ((ph0) ^ second);                                          \
    steps[n++] = TS_STEP_FB + (f_ << TS_STEP_FB_SHIFT) + B_IDX(ph1);                               \
  } while (0)
  for (long i = 0; i < (half - hr - 1) * 2; i++) /* 1: nF0 */
    F(0);
  for (long i = 0; i < hr + 1; i++) { /* 2: nF0F1 */
    F(0);
    F(1);
  }
  for (long i = 0; i < half - hr - 1; i++) { /* 3: nB1W1F1, zero bubble */
    B(1, true);
    W();
    F(1);
  }
  for (long i = 0; i < hm - p + hr + 1; i++) { /* 4, the main step: nF0B1F1B0 */
    if (i == 0 && middle) { /* not overlapped, "to further reduce bubble size" */
      F(0);
      B(1, false);
    } else {
      FB(0, 1);
    }
    FB(1, 0);
  }
  for (long i = 0; i < half - hr - 1; i++) { /* 5: nB1F1B0 */
    B(1, false);
    FB(1, 0);
  }
  bool zb = false; /* 6: nB1B0, the second half with zero bubble */
  for (long i = 0; i < hr + 1; i++) {
    if (i == (hr + 1) / 2 && hr % 2 == 1)
      zb = true;
    B(1, zb);
    if (i == (hr + 1) / 2 && hr % 2 == 0)
      zb = true;
    B(0, zb);
  }
  for (long i = 0; i < half - hr - 1; i++) { /* 7: nWB0, zero bubble */
    W();
    B(0, true);
  }
  while (head < tail) /* 8: nW */
    W();
#undef F
#undef B_IDX
#undef B
#undef W
#undef FB
  free(deferred);
  return n;
}

/* zb-v (PyTorch's ScheduleZBVZeroBubble._calculate_single_rank_operations): rank r holds
 * chunk 0 (virtual stage r) and chunk 1 (2p - 1 - r); warm-up forwards, then F, B and W of
 * each chunk in turn, the cool-down's W's deferred; planned over max(2p - 1, m) microbatches,
 * the passes of those past m dropped, as PyTorch does. */
static long zbv_order(long p, long r, long m, long *steps) {
  long n = 0, total = m > 2 * p - 1 ? m : 2 * p - 1, f[2] = {0, 0}, b[2] = {0, 0};
#define EMIT(base, c, k)                                                                           \
  do {                                                                                             \
    long k_ = (k); /* evaluated once */                                                            \
    if (k_ < m)                                                                                    \
      steps[n++] = (base) + k_ * 2 + (c);                                                          \
  } while (0)
#define F(c) EMIT(0, c, f[c]++)
#define I(c) EMIT(TS_STEP_BI, c, b[c])
#define W(c, k) EMIT(TS_STEP_W, c, k)
  for (long i = 0; i < 2 * (p - r) - 1; i++)
    F(0);
  for (long i = 0; i < r; i++) {
    F(1);
    F(0);
  }
  for (long i = 0; i < p - r; i++) {
    F(1);
    I(1);
    W(1, b[1]);
    b[1]++;
  }
  while (f[1] < f[0] || f[0] < total) {
    if (f[0] < total)
      F(0);
    I(0);
    W(0, b[0]);
    b[0]++;
    F(1);
    I(1);
    W(1, b[1]);
    b[1]++;
  }
  long w[2] = {b[0], b[1]};
  for (long i = 0; i < r; i++) {
    I(0);
    b[0]++;
    I(1);
    b[1]++;
  }
  for (long i = 0; i < p - r; i++) {
    I(0);
    b[0]++;
    W(0, w[0]);
    w[0]++;
  }
  for (; w[1] < b[1]; w[1]++)
    W(1, w[1]);
  for (; w[0] < b[0]; w[0]++)
    W(0, w[0]);
#undef EMIT
#undef F
#undef I
#undef W
  return n;
}

long ts_schedule_order(ts_schedule_kind kind, long n_stages, long n_chunks, long stage,
                       long n_micro, long *steps) {
  long n = 0, p = n_stages, v = n_chunks, total = n_micro * n_chunks;
  if (kind == TS_SCHED_DUALPIPE)
    return dualpipe_order(p, stage, n_micro, steps);
  if (kind == TS_SCHED_ZB_V)
    return zbv_order(p, stage, n_micro, steps);
  if (kind == TS_SCHED_ZB_H1) { /* v = 1 */
    long warm = p - stage - 1 < n_micro ? p - stage - 1 : n_micro, next_w = 0;
    for (long k = 0; k < warm; k++)
      steps[n++] = k;
    for (long k = 0; k < n_micro - warm; k++) {
      steps[n++] = warm + k;
      steps[n++] = TS_STEP_BI + k;
      if (k + 1 - next_w > stage) /* stage i keeps i weight gradients deferred */
        steps[n++] = TS_STEP_W + next_w++;
    }
    for (long k = n_micro - warm; k < n_micro; k++) {
      steps[n++] = TS_STEP_BI + k;
      steps[n++] = TS_STEP_W + next_w++;
    }
    while (next_w < n_micro) /* the deferred ones fill the pipeline's drain */
      steps[n++] = TS_STEP_W + next_w++;
    return n;
  }
  if (kind == TS_SCHED_GPIPE) {
    for (long i = 0; i < n_micro; i++)
      steps[n++] = i;
    for (long i = 0; i < n_micro; i++)
      steps[n++] = -1 - i;
    return n;
  }
  long warm = kind == TS_SCHED_INTERLEAVED ? 2 * (p - stage - 1) + (v - 1) * p : p - stage - 1;
  if (warm > total)
    warm = total;
    /* Forward and backward step k: which microbatch and chunk (for v = 1, microbatch k). */
#define MICRO(k) (((k) / (p * v)) * p + (k) % p)
#define FWD(k) (MICRO(k) * v + ((k) / p) % v)
#define BWD(k) (-1 - (MICRO(k) * v + v - 1 - ((k) / p) % v))
  for (long k = 0; k < warm; k++)
    steps[n++] = FWD(k);
  for (long k = 0; k < total - warm; k++) {
    steps[n++] = FWD(warm + k);
    steps[n++] = BWD(k);
  }
  for (long k = total - warm; k < total; k++)
    steps[n++] = BWD(k);
#undef MICRO
#undef FWD
#undef BWD
  return n;
}

/* The microbatch x v + chunk a step runs (of a combined step, its forward's). */
static long step_index(long step) {
  if (step < 0)
    return -1 - step;
  if (step >= TS_STEP_FB)
    return (step - TS_STEP_FB) >> TS_STEP_FB_SHIFT;
  return step >= TS_STEP_BI ? step - TS_STEP_BI : step >= TS_STEP_W ? step - TS_STEP_W : step;
}

long ts_schedule_step_micro(long step, long n_chunks) {
  return step_index(step) / n_chunks;
}

long ts_schedule_step_chunk(long step, long n_chunks) {
  return step_index(step) % n_chunks;
}

char ts_schedule_step_pass(long step) {
  return step < 0             ? 'B'
         : step >= TS_STEP_FB ? 'X'
         : step >= TS_STEP_BI ? 'B'
         : step >= TS_STEP_W  ? 'W'
                              : 'F';
}

void ts_schedule_step_name(long step, long n_chunks, char pass, char *out, size_t size) {
  if (ts_schedule_step_pass(step) == 'X') { /* "F3c0+B1c1" */
    long f = (step - TS_STEP_FB) >> TS_STEP_FB_SHIFT;
    long b = (step - TS_STEP_FB) & ((1L << TS_STEP_FB_SHIFT) - 1);
    snprintf(out, size, "%c%ldc%ld+B%ldc%ld", pass != 0 ? pass : 'F', f / n_chunks, f % n_chunks,
             b / n_chunks, b % n_chunks);
    return;
  }
  long micro = ts_schedule_step_micro(step, n_chunks);
  char letter = pass != 0 ? pass : ts_schedule_step_pass(step);
  if (n_chunks > 1)
    snprintf(out, size, "%c%ldc%ld", letter, micro, ts_schedule_step_chunk(step, n_chunks));
  else
    snprintf(out, size, "%c%ld", letter, micro);
}

long ts_schedule_n_blocks(const ts_workload *wl) {
  long passes = wl->schedule == TS_SCHED_GPIPE || wl->schedule == TS_SCHED_1F1B ||
                        wl->schedule == TS_SCHED_INTERLEAVED
                    ? 2
                    : 3;
  return passes * ts_workload_microbatches(wl) * ts_workload_chunks(wl) + 1;
}

/* A growing event template; adjacent compute events merge into one (they run back to back on
 * the compute stream, so only their sum matters), keeping apart the time that is
 * recomputation. */
typedef struct tpl {
  ts_event *ev;
  int n, cap;
  int n_posts; /* collectives posted to the communication stream so far */
  ts_op op; /* label of the events being added */
  int16_t layer;
} tpl;

static void push(tpl *t, ts_event e) {
  ts_event *last = t->n > 0 ? &t->ev[t->n - 1] : NULL;
  bool is_layer_work = e.category == TS_CAT_COMPUTE || e.category == TS_CAT_RECOMPUTE;
  if (e.kind == TS_EV_COMPUTE && last != NULL && last->kind == TS_EV_COMPUTE && is_layer_work &&
      (last->category == TS_CAT_COMPUTE || last->category == TS_CAT_RECOMPUTE)) {
    last->time_s += e.time_s;
    last->recompute_s += e.recompute_s;
    last->flops += e.flops;
    if (e.category == TS_CAT_COMPUTE)
      last->category = TS_CAT_COMPUTE; /* holds some work that is not recomputation */
    if (last->op != e.op || last->layer_first != e.layer_first)
      last->op = TS_OP_LAYERS;
    if (e.layer_first < last->layer_first)
      last->layer_first = e.layer_first;
    if (e.layer_last > last->layer_last)
      last->layer_last = e.layer_last;
    return;
  }
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->ev = realloc(t->ev, (size_t)t->cap * sizeof *t->ev);
    TS_ASSERT(t->ev != NULL);
  }
  t->ev[t->n++] = e;
}

/* The template builders label what follows with an op and a layer (-1: none). */
static void at(tpl *t, ts_op op, long layer) {
  t->op = op;
  t->layer = (int16_t)layer;
}

static void compute(tpl *t, ts_cost c, ts_category cat) {
  ts_event e = {.kind = TS_EV_COMPUTE,
                .category = (uint8_t)cat,
                .op = (uint8_t)t->op,
                .layer_first = t->layer,
                .layer_last = t->layer,
                .time_s = c.time_s,
                .recompute_s = cat == TS_CAT_RECOMPUTE ? c.time_s : 0,
                .flops = c.flops};
  push(t, e);
}

static void coll(tpl *t, ts_coll_op op, ts_group_kind g, double bytes, ts_category cat) {
  if (bytes <= 0)
    return;
  ts_event e = {.kind = TS_EV_COLL,
                .category = (uint8_t)cat,
                .coll_op = (uint8_t)op,
                .group = (uint8_t)g,
                .op = (uint8_t)t->op,
                .layer_first = t->layer,
                .layer_last = t->layer,
                .bytes = bytes};
  push(t, e);
}

static void p2p(tpl *t, ts_event_kind kind, ts_peer peer, double bytes) {
  ts_event e = {.kind = (uint8_t)kind,
                .category = TS_CAT_PP,
                .peer = (uint8_t)peer,
                .op = TS_OP_ACTIVATION,
                .layer_first = -1,
                .layer_last = -1,
                .bytes = bytes};
  push(t, e);
}

typedef struct stage_costs {
  ts_layer_cost layer;
  ts_moe_cost moe;
  ts_edge_cost edge;
  double act_bytes; /* what one rank sends of a microbatch's b x s x h activation */
  double gather_bytes; /* > 0: the activation all-gathered over TP after it arrives */
  double hbm_Bps; /* the GPU's memory bandwidth (DeepSpeed's copies around its gathers) */
  ts_fsdp_copies fsdp; /* FSDP's work around its collectives, a parameter */
} stage_costs;

/* A pipeline receive, and with the scatter/gather optimisation the all-gather that rebuilds
 * the whole activation (or gradient) from the tp slices. */
static void p2p_recv(tpl *t, const stage_costs *c, ts_peer peer) {
  p2p(t, TS_EV_RECV, peer, c->act_bytes);
  at(t, TS_OP_ACTIVATION, -1);
  if (c->gather_bytes > 0)
    coll(t, TS_COLL_ALLGATHER, TS_GROUP_TP, c->gather_bytes, TS_CAT_PP);
}

/* The TP collective around a layer piece: an all-reduce, or with sequence parallelism the
 * reduce-scatter (after a row-parallel GEMM) or all-gather (before a column-parallel one). */
static void tp_coll(tpl *t, const ts_workload *wl, ts_coll_op sp_op, double bytes) {
  coll(t, wl->sequence_parallel ? sp_op : TS_COLL_ALLREDUCE, TS_GROUP_TP, bytes, TS_CAT_TP);
}

/* One layer's forward (cost.h's diagram), as compute or as recomputation. Without sequence
 * parallelism the first of each pair of collectives is skipped (an all-reduce, not an
 * all-gather, closes the row-parallel GEMM). */
/* part of c: its time and FLOPs scaled by share. */
static ts_cost part(ts_cost c, double share) {
  c.time_s *= share;
  c.flops *= share;
  c.bytes *= share;
  return c;
}

/* c without `core`, a part of it. */
static ts_cost minus(ts_cost c, ts_cost core) {
  c.time_s -= core.time_s;
  c.flops -= core.flops;
  c.bytes -= core.bytes;
  return c;
}

/* A collective that runs under the compute g beside it, split into as many chunks as the group
 * has ranks (tp_comm_overlap's GEMM chunks; ring attention's steps): one event holding both,
 * which the engines play as max(collective, compute) plus one chunk of the shorter, the
 * pipeline's fill; the collective's exposed time counts as comm_cat. */
static void overlapped(tpl *t, ts_coll_op op, ts_group_kind group, ts_category comm_cat,
                       double bytes, ts_cost g, ts_category cat) {
  ts_event e = {.kind = TS_EV_COLL,
                .category = (uint8_t)comm_cat,
                .coll_op = (uint8_t)op,
                .group = (uint8_t)group,
                .op = (uint8_t)t->op,
                .layer_first = t->layer,
                .layer_last = t->layer,
                .time_s = g.time_s,
                .recompute_s = cat == TS_CAT_RECOMPUTE ? g.time_s : 0,
                .flops = g.flops,
                .bytes = bytes};
  push(t, e);
}

/* A tensor-parallel collective under the GEMM g beside it (tp_comm_overlap: Transformer Engine
 * splits both into tp chunks). */
static void tp_overlapped(tpl *t, ts_coll_op op, double bytes, ts_cost g, ts_category cat) {
  overlapped(t, op, TS_GROUP_TP, TS_CAT_TP, bytes, g, cat);
}

/* The attention core beside the context-parallel ring: each of the cp steps computes a block
 * while the next block's keys and values arrive, which moves what an all-gather over the cp
 * ranks moves; the backward also passes the keys' and values' gradients (ts_layer_cost
 * cp_bwd_bytes). */
static void cp_core(tpl *t, double bytes, ts_cost core, ts_category cat) {
  overlapped(t, TS_COLL_ALLGATHER, TS_GROUP_CP, TS_CAT_CP, bytes, core, cat);
}

/* Whether tp_comm_overlap runs the TP collectives under the GEMMs beside them (Megatron-Core's
 * userbuffers, with sequence parallelism). */
static bool tp_overlaps(const ts_workload *wl) {
  return wl->tp_comm_overlap && wl->sequence_parallel && wl->tp > 1;
}

/* The attention piece of a context-parallel layer: QKV, the core beside the ring, the
 * projection; the TP collectives around it run under QKV's and the projection's GEMMs with
 * tp_comm_overlap (the ring is the core's: NeMo runs both, its Llama 3 70B recipe), else
 * apart. */
static void attn_forward_cp(tpl *t, const ts_workload *wl, const ts_layer_cost *lc,
                            ts_category cat) {
  bool ov = tp_overlaps(wl);
  ts_cost qkv = part(lc->attn, lc->share_attn_in), proj = part(lc->attn, lc->share_attn_out);
  if (ov)
    tp_overlapped(t, TS_COLL_ALLGATHER, lc->tp_comm_bytes, qkv, cat);
  else {
    if (wl->sequence_parallel)
      tp_coll(t, wl, TS_COLL_ALLGATHER, lc->tp_comm_bytes);
    compute(t, qkv, cat);
  }
  cp_core(t, lc->cp_kv_bytes, lc->attn_core_fwd, cat);
  ts_cost rest = minus(minus(lc->attn, qkv), lc->attn_core_fwd);
  if (ov) {
    compute(t, minus(rest, proj), cat);
    tp_overlapped(t, TS_COLL_REDUCE_SCATTER, lc->tp_comm_bytes, proj, cat);
  } else {
    compute(t, rest, cat);
    tp_coll(t, wl, TS_COLL_REDUCE_SCATTER, lc->tp_comm_bytes);
  }
}

/* Its backward (after any selective recompute): the projection's gradients (under which
 * tp_comm_overlap runs sequence parallelism's all-gather; without it the gather came first),
 * the core's beside the ring, QKV's (under whose input gradient the reduce-scatter runs). */
static void attn_backward_cp(tpl *t, const ts_workload *wl, const ts_layer_cost *lc) {
  bool ov = tp_overlaps(wl);
  ts_cost proj = part(lc->attn_bwd, 2 * lc->share_attn_bwd_in); /* the share is dgrad's half */
  ts_cost qkv_dgrad = part(lc->attn_bwd, lc->share_attn_bwd_out);
  if (ov)
    tp_overlapped(t, TS_COLL_ALLGATHER, lc->tp_comm_bytes, part(proj, 0.5), TS_CAT_COMPUTE);
  compute(t, ov ? part(proj, 0.5) : proj, TS_CAT_COMPUTE);
  cp_core(t, lc->cp_bwd_bytes, lc->attn_core_bwd, TS_CAT_COMPUTE);
  ts_cost rest = minus(minus(lc->attn_bwd, proj), lc->attn_core_bwd);
  if (ov) {
    compute(t, minus(rest, qkv_dgrad), TS_CAT_COMPUTE);
    tp_overlapped(t, TS_COLL_REDUCE_SCATTER, lc->tp_comm_bytes, qkv_dgrad, TS_CAT_COMPUTE);
  } else {
    compute(t, rest, TS_CAT_COMPUTE);
    tp_coll(t, wl, TS_COLL_REDUCE_SCATTER, lc->tp_comm_bytes);
  }
}

/* A piece with a TP collective after it (a reduce-scatter, or without sequence parallelism an
 * all-reduce) and, when gather, an all-gather before it: under tp_comm_overlap both run under
 * the piece's GEMMs next to them (shares in and out of its time), otherwise around it. */
static void piece_with_tp(tpl *t, const ts_workload *wl, ts_cost c, double share_in,
                          double share_out, bool gather, double bytes, ts_category cat) {
  if (!(wl->tp_comm_overlap && wl->sequence_parallel && wl->tp > 1)) {
    if (gather)
      tp_coll(t, wl, TS_COLL_ALLGATHER, bytes);
    compute(t, c, cat);
    tp_coll(t, wl, TS_COLL_REDUCE_SCATTER, bytes);
    return;
  }
  if (gather)
    tp_overlapped(t, TS_COLL_ALLGATHER, bytes, part(c, share_in), cat);
  compute(t, part(c, 1 - (gather ? share_in : 0) - share_out), cat);
  tp_overlapped(t, TS_COLL_REDUCE_SCATTER, bytes, part(c, share_out), cat);
}

/* A collective of the expert grid inside a pass (the dispatch and combine). */
/* An expert collective; DeepEP's (flex) all-to-alls note the SMs their kernels take. */
static void ep_coll(tpl *t, const ts_workload *wl, ts_coll_op op, ts_group_kind g, double bytes) {
  int before = t->n;
  coll(t, op, g, bytes, TS_CAT_EP);
  if (t->n > before && g == TS_GROUP_EP && wl->moe_flex)
    t->ev[t->n - 1].sms_taken = (uint8_t)wl->moe_deepep_sms;
}

/* A mixture-of-experts MLP (cost.h, ts_moe_cost): the shared expert, then routing, dispatch,
 * the experts, combine. Backward: the mirror image. */
static void moe_forward(tpl *t, const ts_workload *wl, const ts_moe_cost *mc, ts_category cat) {
  if (wl->model.moe_shared_ffn > 0) {
    tp_coll(t, wl, TS_COLL_ALLGATHER, mc->shared_tp_bytes);
    compute(t, mc->shared, cat);
    tp_coll(t, wl, TS_COLL_REDUCE_SCATTER, mc->shared_tp_bytes);
  }
  compute(t, mc->router, cat);
  ep_coll(t, wl, TS_COLL_ALLTOALL, TS_GROUP_EP, mc->dispatch_fwd_bytes);
  ep_coll(t, wl, TS_COLL_ALLGATHER, TS_GROUP_ETP, mc->etp_bytes);
  compute(t, mc->experts, cat);
  ep_coll(t, wl, TS_COLL_REDUCE_SCATTER, TS_GROUP_ETP, mc->etp_bytes);
  ep_coll(t, wl, TS_COLL_ALLTOALL, TS_GROUP_EP, mc->dispatch_bytes);
  compute(t, mc->unpermute, cat);
}

static void moe_backward(tpl *t, const ts_workload *wl, const ts_moe_cost *mc) {
  compute(t, mc->unpermute_bwd, TS_CAT_COMPUTE);
  ep_coll(t, wl, TS_COLL_ALLTOALL, TS_GROUP_EP, mc->dispatch_bytes);
  ep_coll(t, wl, TS_COLL_ALLGATHER, TS_GROUP_ETP, mc->etp_bytes);
  if (ts_workload_recomputes(wl, TS_RECOMPUTE_MOE_ACT))
    compute(t, mc->experts_act, TS_CAT_RECOMPUTE);
  compute(t, mc->experts_bwd, TS_CAT_COMPUTE);
  ep_coll(t, wl, TS_COLL_REDUCE_SCATTER, TS_GROUP_ETP, mc->etp_bytes);
  ep_coll(t, wl, TS_COLL_ALLTOALL, TS_GROUP_EP, mc->dispatch_bytes);
  compute(t, mc->router_bwd, TS_CAT_COMPUTE);
  if (wl->model.moe_shared_ffn > 0) {
    tp_coll(t, wl, TS_COLL_ALLGATHER, mc->shared_tp_bytes);
    compute(t, mc->shared_bwd, TS_CAT_COMPUTE);
    tp_coll(t, wl, TS_COLL_REDUCE_SCATTER, mc->shared_tp_bytes);
  }
}

/* One layer's forward (l: its index among the stage's layers; moe: a mixture-of-experts MLP). */
static void layer_forward(tpl *t, const ts_workload *wl, const stage_costs *c, long l, bool moe,
                          ts_category cat) {
  const ts_layer_cost *lc = &c->layer;
  bool sp = wl->sequence_parallel;
  double n = lc->tp_comm_bytes;
  at(t, TS_OP_ATTN, l);
  compute(t, lc->ln1, cat);
  if (wl->cp > 1)
    attn_forward_cp(t, wl, lc, cat);
  else
    piece_with_tp(t, wl, lc->attn, lc->share_attn_in, lc->share_attn_out, sp, n, cat);
  at(t, TS_OP_MLP, l);
  compute(t, lc->bda1, cat);
  compute(t, lc->ln2, cat);
  if (moe)
    moe_forward(t, wl, &c->moe, cat);
  else if (cat == TS_CAT_RECOMPUTE && ts_workload_recompute_stops_early(wl)) {
    compute(t, lc->mlp_recompute_fwd, cat); /* up to FC2's input: no FC2, no residual add */
    return;
  } else
    piece_with_tp(t, wl, lc->mlp, lc->share_mlp_in, lc->share_mlp_out, sp, n, cat);
  compute(t, lc->bda2, cat);
}

static void layer_backward(tpl *t, const ts_workload *wl, const stage_costs *c, long l, bool moe) {
  const ts_layer_cost *lc = &c->layer;
  bool sp = wl->sequence_parallel;
  double n = lc->tp_comm_bytes;
  bool norms = ts_workload_recomputes(wl, TS_RECOMPUTE_LAYERNORM),
       core = ts_workload_recomputes(wl, TS_RECOMPUTE_CORE_ATTN);
  if (wl->recompute == TS_RECOMPUTE_OP) { /* the first unpacked tensor re-runs the layer's ops */
    at(t, TS_OP_LAYERS, l);
    compute(t, lc->op_recompute_fwd, TS_CAT_RECOMPUTE);
  }
  at(t, TS_OP_MLP, l);
  compute(t, lc->bda2_bwd, TS_CAT_COMPUTE);
  if (norms) /* the MLP's input, for its weight gradients (Megatron-Core's "layernorm") */
    compute(t, lc->ln2, TS_CAT_RECOMPUTE);
  if (moe)
    moe_backward(t, wl, &c->moe);
  else
    piece_with_tp(t, wl, lc->mlp_bwd, lc->share_mlp_bwd_in, lc->share_mlp_bwd_out, sp, n,
                  TS_CAT_COMPUTE);
  compute(t, lc->ln2_bwd, TS_CAT_COMPUTE);
  compute(t, lc->bda1_bwd, TS_CAT_COMPUTE);
  bool overlap = wl->tp_comm_overlap && wl->tp > 1;
  if (sp && !overlap) /* the gather precedes the selective recompute, which needs it */
    tp_coll(t, wl, TS_COLL_ALLGATHER, n);
  at(t, TS_OP_ATTN, l);
  if (norms)
    compute(t, lc->ln1, TS_CAT_RECOMPUTE);
  if (ts_workload_recomputes(wl, TS_RECOMPUTE_MLA_UP_PROJ)) /* the core's recompute has rope */
    compute(t, core ? minus(lc->mla_up_fwd, lc->rope_fwd) : lc->mla_up_fwd, TS_CAT_RECOMPUTE);
  if (core) {
    at(t, TS_OP_ATTN_CORE, l);
    if (wl->cp > 1) /* the recomputed core needs the ring's keys and values again */
      cp_core(t, lc->cp_kv_bytes, lc->attn_core_fwd, TS_CAT_RECOMPUTE);
    else
      compute(t, lc->attn_core_fwd, TS_CAT_RECOMPUTE);
  }
  at(t, TS_OP_ATTN, l);
  if (wl->cp > 1)
    attn_backward_cp(t, wl, lc);
  else
    piece_with_tp(t, wl, lc->attn_bwd, lc->share_attn_bwd_in, lc->share_attn_bwd_out, sp && overlap,
                  n, TS_CAT_COMPUTE);
  compute(t, lc->ln1_bwd, TS_CAT_COMPUTE);
}

/* A chunk's place in the model: virtual stage chunk x p + stage (the stage itself when v = 1);
 * layers are labelled by their index among the stage's layers. */
typedef struct chunk_place {
  bool is_first, is_last; /* holds the embedding / the logits and loss */
  long layer0, n_layers;
  /* Multi-token-prediction modules run after the layers, labelled layer0 + n_layers on; the
   * parameters of the embedding and output-layer copies they need on this stage. */
  long n_mtp;
  double mtp_copies;
  long model_layer0; /* the model's index of its first layer */
  /* Where its activations come from and go to: the previous and the next stage, but for
   * dualpipe's and zb-v's chunk 1, whose pipeline runs from the last rank to the first;
   * local_up / local_down: from or to a chunk of the same rank (zb-v's turn), no transfer. */
  ts_peer up, down;
  bool local_up, local_down;
} chunk_place;

static chunk_place place_of(const ts_workload *wl, long stage, long chunk) {
  long p = wl->pp, vstage = chunk * p + stage, layer0 = 0;
  for (long c = 0; c < chunk; c++)
    layer0 += ts_workload_vstage_layers(wl, c * p + stage);
  chunk_place pl = {vstage == 0,
                    vstage == p * ts_workload_chunks(wl) - 1,
                    layer0,
                    ts_workload_vstage_layers(wl, vstage),
                    ts_workload_chunk_mtp_layers(wl, stage, chunk),
                    0,
                    ts_workload_chunk_first_layer(wl, stage, chunk),
                    TS_PEER_PREV,
                    TS_PEER_NEXT,
                    false,
                    false};
  if (wl->schedule == TS_SCHED_ZB_V) { /* the V: chunk 0 down the ranks, chunk 1 back up */
    pl.is_first = chunk == 0 && stage == 0;
    pl.is_last = chunk == 1 && stage == 0;
    pl.up = chunk == 0 ? TS_PEER_PREV : TS_PEER_NEXT;
    pl.down = chunk == 0 ? TS_PEER_NEXT : TS_PEER_PREV;
    pl.local_down = chunk == 0 && stage == p - 1;
    pl.local_up = chunk == 1 && stage == p - 1;
  }
  if (wl->schedule == TS_SCHED_DUALPIPE) { /* each chunk a whole pipeline of its own */
    pl.is_first = chunk == 0 ? stage == 0 : stage == p - 1;
    pl.is_last = chunk == 0 ? stage == p - 1 : stage == 0;
    pl.up = chunk == 0 ? TS_PEER_PREV : TS_PEER_NEXT;
    pl.down = chunk == 0 ? TS_PEER_NEXT : TS_PEER_PREV;
  }
  if (pl.n_mtp > 0)
    pl.mtp_copies = ts_cost_mtp_copy_params(wl, stage);
  return pl;
}

/* Whether the chunk's layer l (the stage's numbering) is a mixture-of-experts layer; its
 * parameters reduced over data parallelism (returned) and over expert data parallelism. */
static bool is_mtp(chunk_place pl, long l) {
  return l >= pl.layer0 + pl.n_layers;
}

static bool is_moe(const ts_workload *wl, chunk_place pl, long l) {
  return ts_workload_is_moe_layer(wl, is_mtp(pl, l) ? wl->model.n_layers
                                                    : pl.model_layer0 + l - pl.layer0);
}

/* An MTP module's parameters are its layer's, eh_proj's and its norms'. */
static double params_of(const ts_workload *wl, chunk_place pl, long l, double *expert) {
  if (is_mtp(pl, l))
    return ts_cost_mtp_params(wl, expert);
  return ts_cost_layer_params_at(wl, pl.model_layer0 + l - pl.layer0, expert);
}

/* ---- data-parallel communication on the rank's communication stream ---- */

/* A collective posted to the communication stream (it runs while the rank computes), over the
 * data-parallel group or, for the experts' parameters, the expert data-parallel group. */
static void post_to(tpl *t, ts_coll_op op, ts_group_kind group, double bytes) {
  if (bytes <= 0)
    return;
  t->n_posts++;
  ts_event e = {.kind = TS_EV_COLL,
                .category = TS_CAT_DP,
                .coll_op = (uint8_t)op,
                .group = (uint8_t)group,
                .op = TS_OP_GRAD_SYNC,
                .is_async = 1,
                .layer_first = t->layer,
                .layer_last = t->layer,
                .bytes = bytes};
  push(t, e);
}

static void post(tpl *t, ts_coll_op op, double bytes) {
  post_to(t, op, TS_GROUP_DP, bytes);
}

/* FSDP's work on `params` as compute-stream time (ts_cost_fsdp_copies): after a gather arrives
 * (FSDP2's copy out of its flat output), or before a reduce-scatter is posted (FSDP2's copy into
 * its flat input; FSDP1's side-stream kernels, the share that shows). */
static void fsdp_copy(tpl *t, double s_per_param, double params) {
  if (s_per_param > 0 && params > 0)
    compute(t, (ts_cost){.time_s = s_per_param * params}, TS_CAT_DP);
}

/* A unit's gradients (`params` elements, fp32 as FSDP reduces them), prepared (before_reduce_s a
 * parameter: ts_cost_fsdp_copies), reduce-scattered over the data-parallel group and, under
 * HSDP, their shard all-reduced over the replicas (FSDP2's HSDP reduction). Returns the posts
 * made. */
static int post_reduction(tpl *t, const ts_workload *wl, double before_reduce_s, double params) {
  double bytes = 4.0 * params;
  fsdp_copy(t, before_reduce_s, params);
  post(t, TS_COLL_REDUCE_SCATTER, bytes);
  if (!ts_workload_is_hsdp(wl) || bytes <= 0)
    return 1;
  post_to(t, TS_COLL_ALLREDUCE, TS_GROUP_DP_REPLICATE, bytes / (double)ts_workload_shard_ranks(wl));
  return 2;
}

/* Waits until at most `keep` posted collectives are unfinished; the wait is exposed dp time. */
static void wait_posted(tpl *t, int keep) {
  ts_event e = {.kind = TS_EV_WAIT,
                .category = TS_CAT_DP,
                .op = TS_OP_GRAD_SYNC,
                .wait_keep = (int16_t)keep,
                .layer_first = t->layer,
                .layer_last = t->layer};
  push(t, e);
}

/* How a backward pass hands its gradients to data parallelism. */
typedef enum grad_sync {
  GRADS_KEEP, /* accumulate; the epilogue reduces them (after the pipeline flush) */
  GRADS_BUCKETS, /* reduce bucket by bucket as they are final, overlapped (last microbatch) */
  GRADS_EACH_MICROBATCH, /* ZeRO-2: reduce-scatter every microbatch's gradients */
} grad_sync;

/* Host costs of DeepSpeed's ZeRO-3 before 0.6.0 (ts_deepspeed_path), per call: a PyTorch
 * operation called from Python (flatten, div_, all_reduce), about 2 us (pytorch/pytorch#41383,
 * ngimel: x * x "approx 2 us", half of it Python's parsing), and a piece's device-to-device
 * copy_ as ProcessGroupNCCL's loop issues it (PyTorch 1.8's all_gather post hook and
 * reduce_scatter pre hook: recordStream, then copy_ of the flat buffer's row), measured from C++
 * on an H100 machine's host (bench/device/h100_deepspeed_host_loops.csv, PyTorch 2.11: 5.95 us
 * a 4 KiB piece, 5.88 a 1 MiB one; 4.87 a bare copy_; the machine's Python loops ran 1.8-2.1x
 * slower than this project's, PyTorch 2.11's dispatch included, so 2021's may be faster:
 * ASSUMED as measured), within DualPath's 5-7 us (Wu et al., arXiv 2602.21548, section 5.2,
 * from Python). Its loops over the
 * ranks, as partition_parameters.py at v0.3.16 wrote them, timed on this project's machine
 * (bench/device/cpu_deepspeed_host_loops.csv: Python 3.11, PyTorch 1.13, an AMD EPYC, views of
 * CPU tensors, whose cost is their metadata), at 2,240 ranks: a narrow view 1.06 us;
 * _allgather_param's loop (a narrow, an append, a get_rank on Megatron's data-parallel group)
 * 1.66 us a rank; _reduce_scatter_gradient's (the bounds, a view and a narrow, an append) 2.00
 * us a rank. 2021's stack runs them about as fast: Debian 11's PyTorch 1.7.1 and Python 3.9 in
 * 0.96, 1.74 and 1.91 us, with another job on the machine (cpu_deepspeed_host_loops_torch17.csv).
 * Selene's EPYC 7742 ASSUMED as fast as this machine's. */
static const double ds_python_op_s = 2e-6, ds_small_copy_s = 5.9e-6;
static const double ds_view_s = 1.06e-6, ds_gather_rank_s = 1.66e-6, ds_scatter_rank_s = 2.00e-6;

/* One of the N copies of a list collective's pieces on the GPU, measured on an H100 (copy_ calls
 * of 4 KiB-8 MiB pieces queued back to back: bench/device/h100_list_collective_copies.csv, 256
 * copies a size; 128 and 512 gave the same): a floor of 1.88 us to 32 KiB, then the time grows
 * with the bytes (8 MiB: 1.96 TB/s read and written). Interpolated in the piece's size, past 8
 * MiB at the last step's rate; on another GPU the part above the floor scales by the H100's
 * memory bandwidth over its own (ASSUMED). */
static const double list_copy_piece_bytes[] = {4096,   32768,   65536,   131072,  262144,
                                               524288, 1 << 20, 2 << 20, 4 << 20, 8 << 20},
                    list_copy_h100_s[] = {1.883e-6, 1.886e-6, 2.164e-6, 2.513e-6, 2.669e-6,
                                          2.885e-6, 3.304e-6, 4.186e-6, 5.727e-6, 8.563e-6};
static const double list_copy_h100_hbm_Bps = 3.35e12; /* NVIDIA H100 SXM datasheet */
static double list_copy_gpu_s(double piece_bytes, double hbm_Bps) {
  const double *x = list_copy_piece_bytes, *y = list_copy_h100_s;
  int n = (int)(sizeof list_copy_h100_s / sizeof *y), k = 1;
  while (k < n - 1 && piece_bytes > x[k])
    k++;
  double h100 = piece_bytes <= x[0]
                    ? y[0]
                    : y[k - 1] + (y[k] - y[k - 1]) * (piece_bytes - x[k - 1]) / (x[k] - x[k - 1]);
  return y[0] + (h100 - y[0]) * list_copy_h100_hbm_Bps / hbm_Bps;
}

/* The host busy for `seconds`, the GPU idle: DeepSpeed's loops between synchronisations. */
static void host(tpl *t, double seconds) {
  ts_event e = {.kind = TS_EV_COMPUTE,
                .category = TS_CAT_DP,
                .op = (uint8_t)t->op,
                .is_host = 1,
                .layer_first = t->layer,
                .layer_last = t->layer,
                .time_s = seconds};
  push(t, e);
}

/* Gradient buckets of one backward pass: fp32 gradients (bf16 with grad_reduce_in_bf16: the
 * same parameters a bucket, Megatron sizing buckets in elements) gather in a bucket of
 * wl->dp_bucket_bytes, posted when full (reduce-scatter with a sharded optimizer, all-reduce
 * without), as Megatron-LM's overlap_grad_reduce and DeepSpeed's reduce buckets do. With no
 * bucket size, the whole pass's gradients go in one collective at its end. DeepSpeed's ZeRO-3
 * reduces in the model's precision (its ipg buffer is of the model's dtype: stage3.py, every
 * release read) through buckets of reduce_bucket_size elements (5e8, its default, where
 * dp_bucket_size is not given); before 0.6.0 (ts_deepspeed_path) it flushes a bucket as it
 * would overflow, after waiting for the previous one (reduction_stream.synchronize()), and
 * reduce-scatters each parameter of it apart through PyTorch's list API, each gradient first
 * copied into the bucket's buffer (contiguous_gradients) or, without contiguous gradients,
 * all-reduces the bucket's gradients flattened (stage3.py at v0.3.16, reduce_ipg_grads ->
 * buffered_reduce_fallback -> allreduce_and_copy: flatten, div_, all_reduce, then each gradient
 * copied back out of the flat result, all on the reduction stream). */
typedef struct buckets {
  double size_bytes, filled_bytes, elem_bytes;
  ts_coll_op op;
  ts_group_kind group; /* data parallel, or expert data parallel (Megatron-Core buckets the
                        * experts' gradients apart) */
  double replicate_shards; /* > 1: HSDP's shard ranks, whose shards the replicas all-reduce */
  bool per_tensor; /* DeepSpeed before 0.6.0: parameter by parameter, as below */
  bool flat_all_reduce; /* and without contiguous gradients: a bucket all-reduced flattened */
  double ranks; /* the data-parallel ranks N of those lists */
  double hbm_Bps;
  double before_reduce_s; /* FSDP's work on a bucket's gradients before it, a parameter */
  double *tensors; /* the parameters (elements) in the open bucket, when per_tensor */
  int n_tensors, cap_tensors;
} buckets;

static buckets make_buckets(const ts_workload *wl, grad_sync sync, ts_group_kind group,
                            const stage_costs *c) {
  bool deepspeed3 = ts_workload_zero(wl) == 3 && ts_workload_dp_cp(wl) > 1 && !wl->is_fsdp;
  double grad = ts_workload_grad_bytes(wl);
  buckets bk = {.size_bytes = sync == GRADS_KEEP ? 0 : ts_cost_bucket_bytes(wl) * grad / 4.0,
                .elem_bytes = grad,
                .op = ts_workload_zero(wl) >= 1 ? TS_COLL_REDUCE_SCATTER : TS_COLL_ALLREDUCE,
                .group = group,
                .hbm_Bps = c->hbm_Bps};
  if (group == TS_GROUP_DP) /* FSDP's reductions, a unit a bucket with pipelines */
    bk.before_reduce_s = c->fsdp.before_reduce_s;
  if (group == TS_GROUP_DP && ts_workload_is_hsdp(wl))
    bk.replicate_shards = (double)ts_workload_shard_ranks(wl);
  if (deepspeed3 && group == TS_GROUP_DP) {
    bk.elem_bytes = ts_cost_elem_bytes(wl->precision);
    if (sync != GRADS_KEEP && wl->dp_bucket_bytes <= 0)
      bk.size_bytes = TS_DEEPSPEED_BUCKET_ELEMS * bk.elem_bytes;
    bk.per_tensor = ts_deepspeed_zero3_path(wl->deepspeed_version) != TS_DEEPSPEED_COALESCED;
    bk.flat_all_reduce = bk.per_tensor && !wl->contiguous_gradients;
    if (bk.flat_all_reduce)
      bk.op = TS_COLL_ALLREDUCE;
    bk.ranks = (double)ts_workload_dp_cp(wl);
  }
  return bk;
}

/* A full bucket's reduction: over its group and, for the data-parallel one under HSDP, the
 * replicas' all-reduce of its shard; DeepSpeed before 0.6.0 its parameters one by one, each
 * after the host's N views (view and narrow) and PyTorch's N copies into a flat input, or
 * (flat_all_reduce) the bucket in one all-reduce: the host's calls to flatten, div_ and
 * all_reduce, then a view and a copy_ a parameter; the GPU's flatten, div_ and copies out
 * (each a device copy's time) on the reduction stream, played after the all-reduce (the
 * stream is busy as long; the all-reduce starts the flatten and div_ early, a few ms on a
 * 3 GB bucket). */
static void bucket_post(tpl *t, buckets *bk) {
  if (bk->flat_all_reduce) {
    wait_posted(t, 0); /* reduction_stream.synchronize() */
    double stream_s = 2.0 * list_copy_gpu_s(bk->filled_bytes, bk->hbm_Bps);
    for (int i = 0; i < bk->n_tensors; i++)
      stream_s += list_copy_gpu_s(bk->elem_bytes * bk->tensors[i], bk->hbm_Bps);
    host(t, 3.0 * ds_python_op_s + bk->n_tensors * (ds_view_s + ds_small_copy_s));
    post_to(t, bk->op, bk->group, bk->filled_bytes);
    if (bk->filled_bytes > 0)
      t->ev[t->n - 1].time_s = stream_s;
    bk->n_tensors = 0;
  } else if (bk->per_tensor) {
    wait_posted(t, 0); /* reduction_stream.synchronize() */
    for (int i = 0; i < bk->n_tensors; i++) {
      double bytes = bk->elem_bytes * bk->tensors[i];
      host(t, bk->ranks * (ds_scatter_rank_s +
                           fmax(ds_small_copy_s, list_copy_gpu_s(bytes / bk->ranks, bk->hbm_Bps))));
      post_to(t, bk->op, bk->group, bytes);
    }
    bk->n_tensors = 0;
  } else {
    fsdp_copy(t, bk->before_reduce_s, bk->filled_bytes / bk->elem_bytes);
    post_to(t, bk->op, bk->group, bk->filled_bytes);
    if (bk->replicate_shards > 1)
      post_to(t, TS_COLL_ALLREDUCE, TS_GROUP_DP_REPLICATE, bk->filled_bytes / bk->replicate_shards);
  }
  bk->filled_bytes = 0;
}

/* One parameter's (or, but per_tensor, a layer's) gradients, final. */
static void bucket_add(tpl *t, buckets *bk, double params) {
  double bytes = bk->elem_bytes * params;
  if (bk->per_tensor) { /* DeepSpeed flushes before a parameter that would overflow */
    if (bk->filled_bytes > 0 && bk->filled_bytes + bytes > bk->size_bytes)
      bucket_post(t, bk);
    if (bk->n_tensors == bk->cap_tensors) {
      bk->cap_tensors = bk->cap_tensors ? 2 * bk->cap_tensors : 64;
      bk->tensors = realloc(bk->tensors, (size_t)bk->cap_tensors * sizeof(double));
      TS_ASSERT(bk->tensors != NULL);
    }
    bk->tensors[bk->n_tensors++] = params;
  }
  /* its copy into the bucket's buffer, on the compute stream (one larger than the bucket is
   * reduced from where it lies) */
  if (bk->per_tensor && !bk->flat_all_reduce && bytes <= bk->size_bytes)
    compute(t, (ts_cost){.time_s = list_copy_gpu_s(bytes, bk->hbm_Bps)}, TS_CAT_DP);
  bk->filled_bytes += bytes;
  if (bk->size_bytes > 0 && bk->filled_bytes >= bk->size_bytes)
    bucket_post(t, bk);
}

/* The last bucket of a pass, when partly filled: posted, or (no bucket size: ZeRO-2's one
 * reduce-scatter per pass) run in place. */
static void bucket_flush(tpl *t, buckets *bk) {
  if (bk->filled_bytes > 0 && bk->size_bytes > 0)
    bucket_post(t, bk);
  else if (bk->filled_bytes > 0)
    coll(t, bk->op, bk->group, bk->filled_bytes, TS_CAT_DP);
  bk->filled_bytes = 0;
  free(bk->tensors);
  bk->tensors = NULL;
  bk->n_tensors = bk->cap_tensors = 0;
}

/* ---- the passes of one chunk ---- */

/* ZeRO-3 keeps 1/d of each layer's weights; a layer's forward or backward first all-gathers
 * them (the first and last gathers carry the embeddings and the final LN), and the gather of
 * the next layer is posted before this one computes (prefetch of one layer, as DeepSpeed's
 * and FSDP's defaults). */
static double zero3_gather_bytes(const ts_workload *wl, long l, long n_layers) {
  double params = ts_cost_layer_params(wl), h = (double)wl->model.hidden;
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * h;
  if (l == 0)
    params += word + ts_workload_position_params(wl);
  if (l == n_layers - 1) /* the output layer (tied: the embedding again) and the final norm */
    params += word + ts_workload_norm_params(wl);
  return ts_cost_elem_bytes(wl->precision) * params;
}

/* DeepSpeed's ZeRO-3 fetch (Megatron-DeepSpeed): one all-gather per parameter of at least
 * stage3_param_persistence_threshold elements (the weight matrices and embeddings; layer norms
 * and biases stay whole on every rank), in the order the pass uses them, with the units ahead
 * prefetched up to stage3_prefetch_bucket_size elements at each fetch; which uses gather is
 * fetch_plan's (DeepSpeed's reuse distance). Units are grouped by where the pass waits for
 * them (zero3.h: ts_zero3_group, ts_zero3_head_group).
 * Before 0.6.0 (ts_deepspeed_path) the small parameters are released after every backward too,
 * so a forward that follows one gathers them as well (`persistent`). */
typedef struct fetcher {
  double *elems;
  int *group;
  int *pos; /* post position of each posted unit (tpl.n_posts before it) */
  int n, next;
  double prefetch_elems, elem_bytes;
  bool persistent; /* this pass gathers the small parameters too */
  ts_deepspeed_path path;
  double ranks; /* data-parallel ranks: the pieces of a list all-gather */
  double hbm_Bps;
  /* stage3_max_live_parameters: the elements gathered or in flight (DeepSpeed's available
   * parameters), and the pass's uses (group, large elements, released after), the next not
   * yet passed: a use's weights are released when the pass fetches for a later one. */
  double live_limit, available;
  int *use_group, n_uses, use_next;
  double *use_elems, *use_all; /* the use's large elements; all of them */
  bool *use_released;
  /* 0.3.15-0.5.4 log each fetched submodule's weights with an f-string whose param.norm() runs
   * whether it prints or not (stage3.py fetch_sub_module, from 0d4a54a0, 2021-04-18, until PR
   * #1188): a pass over them and a device sync for .item() */
  bool logs_norms;
} fetcher;

/* The same layer's tensors in forward order; returns their count (at most 12). */
static int layer_tensors(const ts_workload *wl, double *elems) {
  ts_zero3_module mods[TS_ZERO3_LAYER_MODULES];
  ts_zero3_layer_modules(wl, mods);
  int n = 0;
  for (int i = 0; i < TS_ZERO3_LAYER_MODULES; i++)
    for (int k = 0; k < mods[i].n; k++)
      elems[n++] = mods[i].elems[k];
  return n;
}

/* The final norm's tensors and, where it is a parameter apart (untied, or the last stage's
 * copy: ts_workload_head_params), the output layer's weight, as gradients. */
static int head_tensors(const ts_workload *wl, double *elems) {
  int n = 0;
  for (int k = 0; k < (wl->model.rms_norm ? 1 : 2); k++)
    elems[n++] = (double)wl->model.hidden;
  double own = ts_workload_head_params(wl) - ts_workload_norm_params(wl);
  if (own > 0)
    elems[n++] = own;
  return n;
}

/* The units of the pass asked for, in its order, from DeepSpeed's trace (zero3.h): the large
 * tensors of each use that gathers; with `persistent`, the small ones at their first use in
 * the forward. */
static void fetch_plan(const ts_workload *wl, chunk_place pl, bool backward, bool persistent,
                       double hbm_Bps, fetcher *f) {
  ts_zero3_trace tr;
  ts_zero3_trace_build(wl, pl.n_layers, pl.is_first, pl.is_last, &tr);
  *f = (fetcher){.elems = ts_alloc((size_t)(2 * tr.len), sizeof(double)),
                 .group = ts_alloc((size_t)(2 * tr.len), sizeof(int)),
                 .pos = ts_alloc((size_t)(2 * tr.len), sizeof(int)),
                 .prefetch_elems = wl->stage3_prefetch_elems,
                 .elem_bytes = ts_cost_elem_bytes(wl->precision),
                 .persistent = persistent,
                 .path = ts_deepspeed_zero3_path(wl->deepspeed_version),
                 .ranks = (double)ts_workload_dp_cp(wl),
                 .hbm_Bps = hbm_Bps};
  int from = backward ? tr.n_fwd : 0, to = backward ? tr.len : tr.n_fwd;
  f->live_limit = wl->stage3_max_live_elems > 0 ? wl->stage3_max_live_elems : INFINITY;
  f->use_group = ts_alloc((size_t)(to - from), sizeof(int));
  f->use_elems = ts_alloc((size_t)(to - from), sizeof(double));
  f->use_released = ts_alloc((size_t)(to - from), sizeof(bool));
  f->use_all = ts_alloc((size_t)(to - from), sizeof(double));
  f->logs_norms = wl->deepspeed_version >= 315 && f->path == TS_DEEPSPEED_LIST;
  for (int p = 0; p < to; p++) { /* what the forward kept, when this is the backward */
    double large = ts_zero3_large_elems(wl, &tr.mods[tr.use[p]]);
    if (p >= from) {
      for (int k = 0; k < tr.mods[tr.use[p]].n; k++)
        f->use_all[f->n_uses] += tr.mods[tr.use[p]].elems[k];
      f->use_group[f->n_uses] = tr.group[p];
      f->use_elems[f->n_uses] = large;
      f->use_released[f->n_uses++] = tr.released[p];
      continue;
    }
    f->available += (tr.gathered[p] ? large : 0) - (tr.released[p] ? large : 0);
  }
  for (int p = from; p < to; p++) {
    const ts_zero3_module *m = &tr.mods[tr.use[p]];
    for (int k = 0; k < m->n; k++) {
      double e = m->elems[k];
      bool small = e < wl->stage3_persistence_elems;
      if (e > 0 && (small ? persistent && !backward && tr.first_use[p] : tr.gathered[p])) {
        f->elems[f->n] = e;
        f->group[f->n++] = tr.group[p];
      }
    }
  }
  ts_zero3_trace_free(&tr);
}

static void fetch_free(fetcher *f) {
  free(f->elems);
  free(f->group);
  free(f->pos);
  free(f->use_group);
  free(f->use_elems);
  free(f->use_released);
  free(f->use_all);
}

/* Posts unit u's gather. Before 0.6.0 DeepSpeed calls torch.cuda.synchronize() first (every
 * collective in flight ends, the GPU idles), and before 0.5.5 it gathers through PyTorch's
 * list all_gather: N narrow views built in Python, then N copies out of the flat result that
 * the host issues one by one and the GPU runs on the gather's stream once it ends
 * (ProcessGroupNCCL's post hook: outputTensors[i][j].copy_(outputFlattened[i][j], true)). */
static void fetch_post(fetcher *f, tpl *t, int u) {
  double bytes = f->elem_bytes * f->elems[u];
  if (f->path != TS_DEEPSPEED_COALESCED) { /* the gathered tensor is zeroed first (torch.zeros) */
    compute(t, (ts_cost){.time_s = bytes / f->hbm_Bps}, TS_CAT_DP);
    wait_posted(t, 0);
  }
  if (f->path == TS_DEEPSPEED_LIST)
    host(t, f->ranks * ds_gather_rank_s);
  f->pos[u] = t->n_posts;
  f->available += f->elems[u];
  post(t, TS_COLL_ALLGATHER, bytes);
  if (f->path == TS_DEEPSPEED_LIST && bytes > 0) {
    t->ev[t->n - 1].time_s = f->ranks * list_copy_gpu_s(bytes / f->ranks, f->hbm_Bps);
    host(t, f->ranks * ds_small_copy_s);
  }
}

/* Posts the units ahead of the last posted, up to the prefetch bucket (the last one may pass
 * it: DeepSpeed checks before adding), and no further than stage3_max_live_parameters allows:
 * before 0.6.0 nothing while that many are gathered (stage3.py, prefetch_next_sub_modules);
 * from 0.6.0 up to the difference (partitioned_param_coordinator.py, fetch_sub_module). */
static void fetch_prefetch(fetcher *f, tpl *t) {
  double limit = f->prefetch_elems;
  if (f->path != TS_DEEPSPEED_COALESCED && f->available >= f->live_limit)
    limit = 0;
  else if (f->path == TS_DEEPSPEED_COALESCED && f->live_limit - f->available < limit)
    limit = f->live_limit - f->available;
  for (double ahead = 0; f->next < f->n && ahead < limit; f->next++) {
    ahead += f->elems[f->next];
    fetch_post(f, t, f->next);
  }
}

/* Before the pass uses group g: for each of its units as DeepSpeed fetches a submodule, the
 * unit's gather if not yet posted, then the units ahead; then a wait for g's own gathers.
 * Before 0.6.0 the fetch ends in a device synchronisation and the prefetch follows it
 * (stage3.py, fetch_sub_module then prefetch_next_sub_modules), each gather after another;
 * the releases of the uses before g are counted first (stage3_max_live_parameters). */
static void fetch_group(fetcher *f, tpl *t, int g) {
  for (; f->use_next < f->n_uses && f->use_group[f->use_next] != g; f->use_next++)
    f->available -= f->use_released[f->use_next] ? f->use_elems[f->use_next] : 0;
  int last = -1;
  bool synced = f->path != TS_DEEPSPEED_COALESCED;
  for (int u = 0; u < f->n; u++) {
    if (f->group[u] != g)
      continue;
    last = u;
    for (; f->next <= u; f->next++)
      fetch_post(f, t, f->next);
    if (!synced)
      fetch_prefetch(f, t);
  }
  if (!synced && last < 0) /* its weights kept: today's fetch still prefetches */
    fetch_prefetch(f, t);
  else if (!synced)
    wait_posted(t, t->n_posts - f->pos[last] - 1);
  if (!synced)
    return;
  if (last >= 0) /* before 0.6.0 a fetch that gathered syncs, then prefetches; one that did not
                  * leaves the earlier prefetch's handles in flight, and so prefetches nothing */
    wait_posted(t, 0);
  double norms = 0; /* the group's weights read once more (logs_norms) */
  for (int u = f->use_next; f->logs_norms && u < f->n_uses && f->use_group[u] == g; u++)
    norms += f->elem_bytes * f->use_all[u] / f->hbm_Bps;
  if (norms > 0) {
    compute(t, (ts_cost){.time_s = norms}, TS_CAT_DP);
    wait_posted(t, 0); /* .item() syncs the device */
  }
  if (last >= 0)
    fetch_prefetch(f, t);
}

/* Where DeepSpeed's hooks fetch submodule by submodule inside a layer: a dense layer without
 * tensor or context parallelism, recomputed whole or not at all (elsewhere a layer's weights
 * are fetched before it, all its submodules at once). */
static bool fetches_by_submodule(const ts_workload *wl, bool moe) {
  return wl->tp == 1 && wl->cp == 1 && !moe && !wl->model.mla &&
         (wl->recompute == TS_RECOMPUTE_NONE || wl->recompute == TS_RECOMPUTE_FULL);
}

/* Submodule k of the chunk's layer i, before its use. */
static void fetch_module(fetcher *f, tpl *t, long l, long i, int k, bool after_recompute) {
  ts_op op = t->op;
  at(t, TS_OP_GRAD_SYNC, l);
  fetch_group(f, t, ts_zero3_group(i, k, after_recompute));
  at(t, op, l);
}

/* A piece of two GEMMs around work without weights (attention: QKV, the core, the projection;
 * the MLP: FC1, the activation, FC2; their backwards the other way), each GEMM's submodule
 * fetched before it, the piece split at the GEMMs' shares `first` and `last`. */
static void gemms_fetching(fetcher *f, tpl *t, long l, long i, ts_cost piece, double first,
                           double last, int first_module, int last_module, bool after_recompute,
                           ts_category cat) {
  fetch_module(f, t, l, i, first_module, after_recompute);
  compute(t, part(piece, first), cat);
  compute(t, part(piece, 1 - first - last), cat);
  fetch_module(f, t, l, i, last_module, after_recompute);
  compute(t, part(piece, last), cat);
}

/* Layer l (the chunk's i) forward under DeepSpeed's ZeRO-3: each submodule's weights fetched
 * before it (norm 0, QKV 1, projection 2, norm 3, FC1 4, FC2 5); or, where
 * fetches_by_submodule does not hold, all six before the layer. */
static void layer_forward_fetching(tpl *t, const ts_workload *wl, const stage_costs *c, long l,
                                   long i, bool moe, ts_category cat, fetcher *f) {
  const ts_layer_cost *lc = &c->layer;
  if (!fetches_by_submodule(wl, moe)) {
    for (int k = 0; k < TS_ZERO3_LAYER_MODULES; k++)
      fetch_module(f, t, l, i, k, false);
    layer_forward(t, wl, c, l, moe, cat);
    return;
  }
  at(t, TS_OP_ATTN, l);
  fetch_module(f, t, l, i, 0, false);
  compute(t, lc->ln1, cat);
  gemms_fetching(f, t, l, i, lc->attn, lc->share_attn_in, lc->share_attn_out, 1, 2, false, cat);
  at(t, TS_OP_MLP, l);
  compute(t, lc->bda1, cat);
  fetch_module(f, t, l, i, 3, false);
  compute(t, lc->ln2, cat);
  gemms_fetching(f, t, l, i, lc->mlp, lc->share_mlp_in, lc->share_mlp_out, 4, 5, false, cat);
  compute(t, lc->bda2, cat);
}

/* Its backward, the submodules the other way (the weights a recomputed forward released; all
 * of them without recomputation), each GEMM's backward (data and weight gradients) twice its
 * data gradient's share. */
static void layer_backward_fetching(tpl *t, const ts_workload *wl, const stage_costs *c, long l,
                                    long i, bool moe, fetcher *f) {
  const ts_layer_cost *lc = &c->layer;
  bool after = wl->recompute == TS_RECOMPUTE_FULL;
  if (!fetches_by_submodule(wl, moe)) {
    for (int k = TS_ZERO3_LAYER_MODULES - 1; k >= 0; k--)
      fetch_module(f, t, l, i, k, after);
    layer_backward(t, wl, c, l, moe);
    return;
  }
  at(t, TS_OP_MLP, l);
  compute(t, lc->bda2_bwd, TS_CAT_COMPUTE);
  gemms_fetching(f, t, l, i, lc->mlp_bwd, 2 * lc->share_mlp_bwd_in, 2 * lc->share_mlp_bwd_out, 5, 4,
                 after, TS_CAT_COMPUTE);
  fetch_module(f, t, l, i, 3, after);
  compute(t, lc->ln2_bwd, TS_CAT_COMPUTE);
  compute(t, lc->bda1_bwd, TS_CAT_COMPUTE);
  at(t, TS_OP_ATTN, l);
  gemms_fetching(f, t, l, i, lc->attn_bwd, 2 * lc->share_attn_bwd_in, 2 * lc->share_attn_bwd_out, 2,
                 1, after, TS_CAT_COMPUTE);
  fetch_module(f, t, l, i, 0, after);
  compute(t, lc->ln1_bwd, TS_CAT_COMPUTE);
}

/* Megatron-Core's overlap_param_gather: the chunk's updated weights gathered in buckets of
 * dp_bucket_size fp32 bytes' worth of parameters (one bucket without it), in forward order,
 * all posted as the pass starts (Megatron issues them after the optimizer step); the experts'
 * weights fill buckets of their own, gathered over expert data parallelism. Layer l needs the
 * posts up to need[l - layer0]; posted[k] is the k-th post's data-parallel parameters (0 for
 * the experts' posts). Returns the number of posts. */
static int post_param_buckets(const ts_workload *wl, chunk_place pl, tpl *t, int *need,
                              double *posted) {
  double h = (double)wl->model.hidden, eb = ts_cost_elem_bytes(wl->precision);
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * h;
  double filled[2] = {0, 0};
  long open_from[2] = {0, 0}; /* the first layer in each open bucket */
  ts_group_kind group[2] = {TS_GROUP_DP, TS_GROUP_EDP};
  bool dp = ts_workload_dp_cp(wl) > 1, edp = ts_workload_edp(wl) > 1;
  int n_posts = 0;
  at(t, TS_OP_GRAD_SYNC, pl.layer0);
  long units = pl.n_layers + pl.n_mtp;
  for (long i = 0; i < units; i++) {
    double expert = 0, params = params_of(wl, pl, pl.layer0 + i, &expert);
    if (pl.is_first && i == 0)
      params += word + ts_workload_position_params(wl);
    if (pl.is_last && i == pl.n_layers - 1)
      params += ts_workload_head_params(wl);
    if (i == pl.n_layers)
      params += pl.mtp_copies;
    filled[0] += dp ? params : 0;
    filled[1] += edp ? expert : 0;
    need[i] = -1;
    for (int k = 0; k < 2; k++) {
      bool full = ts_cost_bucket_bytes(wl) > 0 && 4.0 * filled[k] >= ts_cost_bucket_bytes(wl);
      if (filled[k] > 0 && (i == units - 1 || full)) {
        post_to(t, TS_COLL_ALLGATHER, group[k], eb * filled[k]);
        posted[n_posts] = k == 0 ? filled[k] : 0;
        for (long j = open_from[k]; j <= i; j++)
          need[j] = n_posts > need[j] ? n_posts : need[j];
        n_posts++;
        filled[k] = 0;
        open_from[k] = i + 1;
      }
    }
  }
  return n_posts;
}

/* FSDP's work in a pass: gather each layer's weights before its use (the next prefetched), and
 * in a backward reduce each layer's gradients as they are final. ZeRO-3 with FSDP does both in
 * every pass; FSDP resharding after each forward with pipelines (torch.distributed.pipelining
 * keeps the weights after a backward and syncs gradients at the last) gathers in a forward
 * that does not follow a backward and in a backward that follows a forward, and reduces in the
 * last backward only (ts_schedule_build picks each step's). */
typedef struct fsdp_pass {
  bool gather, reduce;
} fsdp_pass;

static fsdp_pass default_pass(const ts_workload *wl) {
  bool sharded3 = ts_workload_zero(wl) == 3 && ts_workload_dp_cp(wl) > 1;
  return (fsdp_pass){sharded3 && wl->is_fsdp, sharded3};
}

/* FSDP without pipelines keeping the weights from the forward to the backward
 * (reshard_after_forward false): a forward gathers, its backward reduces each layer. */
static fsdp_pass kept_pass(const ts_workload *wl, bool forward) {
  if (!wl->fsdp_keeps_to_backward || ts_workload_dp_cp(wl) <= 1)
    return default_pass(wl);
  return (fsdp_pass){forward, !forward};
}

/* The embedding's forward (the first chunk), and the output layer's backward with its
 * gradient's reduction over TP (the last chunk): inside the layer loop, or alone in a chunk
 * that holds no layer (a layout's "E|" or "|L"). */
static void embedding_forward(tpl *t, const ts_workload *wl, const stage_costs *c) {
  at(t, TS_OP_EMBEDDING, -1);
  compute(t, c->edge.embed_fwd, TS_CAT_COMPUTE);
  tp_coll(t, wl, TS_COLL_REDUCE_SCATTER, c->edge.embed_allreduce_bytes);
}

static void head_forward(tpl *t, const ts_workload *wl, const stage_costs *c) {
  at(t, TS_OP_HEAD, -1);
  if (wl->sequence_parallel) /* the final LN's sharded output, gathered for the logits */
    tp_coll(t, wl, TS_COLL_ALLGATHER, c->edge.head_allreduce_bytes);
  compute(t, c->edge.head_fwd, TS_CAT_COMPUTE);
  for (int i = 0; i < 3; i++) /* max logit, sum of exponentials, target logit */
    coll(t, TS_COLL_ALLREDUCE, TS_GROUP_TP, c->edge.loss_allreduce_bytes, TS_CAT_TP);
}

static void head_backward(tpl *t, const ts_workload *wl, const stage_costs *c) {
  at(t, TS_OP_HEAD, -1);
  compute(t, c->edge.head_bwd, TS_CAT_COMPUTE);
  tp_coll(t, wl, TS_COLL_REDUCE_SCATTER, c->edge.head_allreduce_bytes);
}

/* A multi-token-prediction module (workload.h; Megatron-Core's MultiTokenPredictionLayer and
 * its loss), labelled as the chunk's layer l: the embedding of the shifted tokens, the entry
 * (norms, concatenation, eh_proj and its tensor-parallel gathers), the transformer layer, then
 * logits and a loss of its own against the shared output layer; the backward the reverse. */
static void mtp_forward(tpl *t, const ts_workload *wl, const stage_costs *c, chunk_place pl,
                        long l) {
  embedding_forward(t, wl, c);
  at(t, TS_OP_MTP, l);
  compute(t, c->edge.mtp_fwd, TS_CAT_COMPUTE);
  if (c->edge.mtp_gather_bytes > 0)
    coll(t, TS_COLL_ALLGATHER, TS_GROUP_TP, c->edge.mtp_gather_bytes, TS_CAT_TP);
  layer_forward(t, wl, c, l, is_moe(wl, pl, l), TS_CAT_COMPUTE);
  head_forward(t, wl, c);
}

static void mtp_backward(tpl *t, const ts_workload *wl, const stage_costs *c, chunk_place pl,
                         long l) {
  head_backward(t, wl, c);
  bool moe = is_moe(wl, pl, l);
  if (wl->recompute == TS_RECOMPUTE_FULL)
    layer_forward(t, wl, c, l, moe, TS_CAT_RECOMPUTE);
  layer_backward(t, wl, c, l, moe);
  at(t, TS_OP_MTP, l);
  if (c->edge.mtp_gather_bytes > 0)
    coll(t, TS_COLL_REDUCE_SCATTER, TS_GROUP_TP, c->edge.mtp_gather_bytes, TS_CAT_TP);
  compute(t, c->edge.mtp_bwd, TS_CAT_COMPUTE);
  at(t, TS_OP_EMBEDDING, -1);
  compute(t, c->edge.embed_bwd, TS_CAT_COMPUTE);
}

/* DeepSpeed before 0.6.0 partitions every parameter after each backward, the small ones too
 * (stage3.py: backward() ends in _partition_all_parameters()): the forwards of a step's later
 * microbatches gather them again, one by one. */
static bool regathers_small_params(const ts_workload *wl) {
  return ts_workload_zero(wl) == 3 && ts_workload_dp_cp(wl) > 1 && !wl->is_fsdp &&
         ts_deepspeed_zero3_path(wl->deepspeed_version) != TS_DEEPSPEED_COALESCED;
}

/* A chunk's forward pass; with gather_params (its first microbatch under
 * overlap_param_gather), each layer first waits for its bucket of updated weights;
 * after_backward: a backward of the step ran before it. */
static void forward_template(const ts_workload *wl, const stage_costs *c, chunk_place pl,
                             bool gather_params, bool after_backward, fsdp_pass fp, tpl *t) {
  bool first = pl.is_first, last = pl.is_last,
       sharded3 = ts_workload_zero(wl) == 3 && ts_workload_dp_cp(wl) > 1;
  bool zero3 = fp.gather, deepspeed3 = sharded3 && !wl->is_fsdp;
  long n = pl.n_layers;
  double eb = ts_cost_elem_bytes(wl->precision);
  int *need = gather_params ? ts_alloc((size_t)(n + pl.n_mtp), sizeof(int)) : NULL;
  /* at most two posts a unit (its data-parallel and its experts' buckets) */
  double *posted = gather_params ? ts_alloc((size_t)(2 * (n + pl.n_mtp)), sizeof(double)) : NULL;
  int n_posts = gather_params ? post_param_buckets(wl, pl, t, need, posted) : 0, copied = -1;
  fetcher f = {0};
  if (deepspeed3)
    fetch_plan(wl, pl, false, after_backward && regathers_small_params(wl), c->hbm_Bps, &f);
  if (!first && !pl.local_up)
    p2p_recv(t, c, pl.up);
  if (zero3) {
    at(t, TS_OP_GRAD_SYNC, pl.layer0);
    post(t, TS_COLL_ALLGATHER, zero3_gather_bytes(wl, 0, n));
  }
  for (long l = pl.layer0; l < pl.layer0 + n + pl.n_mtp; l++) {
    if (gather_params && (l == pl.layer0 || need[l - pl.layer0] != need[l - 1 - pl.layer0])) {
      at(t, TS_OP_GRAD_SYNC, l);
      wait_posted(t, n_posts - 1 - need[l - pl.layer0]);
      for (; copied < need[l - pl.layer0]; copied++) /* FSDP2 with pipelines: units unsharded */
        fsdp_copy(t, wl->fsdp_keeps_weights ? c->fsdp.after_gather_s : 0, posted[copied + 1]);
    }
    if (zero3) {
      at(t, TS_OP_GRAD_SYNC, l);
      wait_posted(t, 0);
      if (l + 1 < pl.layer0 + n)
        post(t, TS_COLL_ALLGATHER, zero3_gather_bytes(wl, l + 1 - pl.layer0, n));
      fsdp_copy(t, c->fsdp.after_gather_s, zero3_gather_bytes(wl, l - pl.layer0, n) / eb);
    }
    if (first && l == pl.layer0) {
      at(t, TS_OP_EMBEDDING, -1);
      if (deepspeed3)
        fetch_group(&f, t, 0);
      embedding_forward(t, wl, c);
    }
    if (is_mtp(pl, l)) {
      mtp_forward(t, wl, c, pl, l);
      continue;
    }
    if (deepspeed3)
      layer_forward_fetching(t, wl, c, l, l - pl.layer0, is_moe(wl, pl, l), TS_CAT_COMPUTE, &f);
    else
      layer_forward(t, wl, c, l, is_moe(wl, pl, l), TS_CAT_COMPUTE);
  }
  if (first && n + pl.n_mtp == 0)
    embedding_forward(t, wl, c);
  if (last) {
    if (deepspeed3) {
      at(t, TS_OP_HEAD, -1);
      fetch_group(&f, t, ts_zero3_head_group(n));
    }
    head_forward(t, wl, c);
  } else if (!pl.local_down) {
    p2p(t, TS_EV_SEND, pl.down, c->act_bytes);
  }
  free(need);
  free(posted);
  fetch_free(&f);
}

/* Layer l's gradients, final: reduced at once (FSDP's per-layer reduction), or into the
 * data-parallel buckets, the experts' into their own. */
static void grads_final(tpl *t, const ts_workload *wl, long l, bool reduces, grad_sync sync,
                        buckets *bk, buckets *bk_expert, double params, double expert) {
  at(t, TS_OP_GRAD_SYNC, l);
  if (reduces) {
    post_reduction(t, wl, bk->before_reduce_s, params);
  } else if (sync != GRADS_KEEP) {
    double elems[12];
    int n = bk->per_tensor ? layer_tensors(wl, elems) : 0;
    for (int k = n - 1; k >= 0; k--) /* DeepSpeed's parameter by parameter, last used first */
      bucket_add(t, bk, elems[k]);
    if (!bk->per_tensor)
      bucket_add(t, bk, params);
    if (ts_workload_edp(wl) > 1)
      bucket_add(t, bk_expert, expert);
  }
}

static void backward_template(const ts_workload *wl, const stage_costs *c, chunk_place pl,
                              grad_sync sync, fsdp_pass fp, tpl *t) {
  bool first = pl.is_first, last = pl.is_last,
       sharded3 = ts_workload_zero(wl) == 3 && ts_workload_dp_cp(wl) > 1;
  bool zero3 = fp.gather, deepspeed3 = sharded3 && !wl->is_fsdp;
  /* each layer's gradients as they are final (FSDP; DeepSpeed's go through its buckets) */
  bool reduces = fp.reduce && !deepspeed3;
  long n = pl.n_layers, top = pl.layer0 + n - 1;
  double eb = ts_cost_elem_bytes(wl->precision);
  fetcher f = {0};
  if (deepspeed3)
    fetch_plan(wl, pl, true, false, c->hbm_Bps, &f);
  double h = (double)wl->model.hidden;
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * h;
  buckets bk = make_buckets(wl, sync, TS_GROUP_DP, c),
          bk_expert = make_buckets(wl, sync, TS_GROUP_EDP, c);
  if (!last && !pl.local_down)
    p2p_recv(t, c, pl.down);
  if (zero3) {
    at(t, TS_OP_GRAD_SYNC, top);
    post(t, TS_COLL_ALLGATHER, zero3_gather_bytes(wl, n - 1, n));
  }
  for (long l = top + pl.n_mtp; l > top; l--) { /* the MTP modules, the last one first */
    mtp_backward(t, wl, c, pl, l);
    double expert = 0, params = params_of(wl, pl, l, &expert) + (l == top + 1 ? pl.mtp_copies : 0);
    grads_final(t, wl, l, reduces, sync, &bk, &bk_expert, params, expert);
  }
  if (last && n == 0) {
    head_backward(t, wl, c);
    at(t, TS_OP_GRAD_SYNC, -1);
    if (reduces)
      post_reduction(t, wl, bk.before_reduce_s, ts_workload_head_params(wl));
    else if (sync != GRADS_KEEP)
      bucket_add(t, &bk, ts_workload_head_params(wl));
  }
  for (long l = top; l >= pl.layer0; l--) {
    if (zero3) { /* this layer's weights; the next layer's gradients were posted after them */
      at(t, TS_OP_GRAD_SYNC, l);
      wait_posted(t, l == top || !fp.reduce ? 0 : ts_workload_is_hsdp(wl) ? 2 : 1);
      if (l > pl.layer0)
        post(t, TS_COLL_ALLGATHER, zero3_gather_bytes(wl, l - 1 - pl.layer0, n));
      fsdp_copy(t, c->fsdp.after_gather_s, zero3_gather_bytes(wl, l - pl.layer0, n) / eb);
    }
    if (deepspeed3 && last && l == top) {
      at(t, TS_OP_HEAD, -1);
      fetch_group(&f, t, ts_zero3_head_group(n));
    }
    /* Gradients of this layer (and of the final norm and the output layer's own weights or,
     * with pp > 1, the tied embedding's copy, on the last chunk). */
    double expert = 0, params = params_of(wl, pl, l, &expert);
    if (last && l == top) {
      head_backward(t, wl, c);
      if (bk.per_tensor && sync != GRADS_KEEP) { /* the output layer's, then the final norm's */
        at(t, TS_OP_GRAD_SYNC, l);
        double elems[3];
        for (int k = head_tensors(wl, elems) - 1; k >= 0; k--)
          bucket_add(t, &bk, elems[k]);
      } else {
        params += ts_workload_head_params(wl);
      }
    }
    bool moe = is_moe(wl, pl, l);
    if (wl->recompute == TS_RECOMPUTE_FULL && deepspeed3)
      layer_forward_fetching(t, wl, c, l, l - pl.layer0, moe, TS_CAT_RECOMPUTE, &f);
    else if (wl->recompute == TS_RECOMPUTE_FULL)
      layer_forward(t, wl, c, l, moe, TS_CAT_RECOMPUTE);
    if (deepspeed3)
      layer_backward_fetching(t, wl, c, l, l - pl.layer0, moe, &f);
    else
      layer_backward(t, wl, c, l, moe);
    grads_final(t, wl, l, reduces, sync, &bk, &bk_expert, params, expert);
  }
  if (first) {
    at(t, TS_OP_EMBEDDING, -1);
    if (deepspeed3)
      fetch_group(&f, t, 0);
    compute(t, c->edge.embed_bwd, TS_CAT_COMPUTE);
    at(t, TS_OP_GRAD_SYNC, -1);
    double embedding = word + ts_workload_position_params(wl);
    if (reduces) {
      post_reduction(t, wl, bk.before_reduce_s, embedding);
    } else if (bk.per_tensor && sync != GRADS_KEEP) {
      bucket_add(t, &bk, ts_workload_position_params(wl));
      bucket_add(t, &bk, word);
    } else if (sync != GRADS_KEEP) {
      bucket_add(t, &bk, embedding);
    }
  } else if (!pl.local_up) {
    p2p(t, TS_EV_SEND, pl.up, c->act_bytes);
  }
  fetch_free(&f);
  if (reduces || sync == GRADS_KEEP)
    return;
  at(t, TS_OP_GRAD_SYNC, -1);
  bucket_flush(t, &bk);
  bucket_flush(t, &bk_expert);
  if (sync == GRADS_EACH_MICROBATCH && bk.size_bytes > 0)
    wait_posted(t, 0); /* DeepSpeed syncs its reduction stream at the end of each backward */
}

/* zb-h1's W pass of a chunk: the weight gradients B left, layer by layer from the top as the
 * backward ran them (the output layer's first, the embedding's last), each layer's gradients
 * then ready for the data-parallel buckets as a whole backward's are (costs: the W parts,
 * split_costs). */
static void wgrad_template(const ts_workload *wl, const stage_costs *w, chunk_place pl,
                           grad_sync sync, tpl *t) {
  buckets bk = make_buckets(wl, sync, TS_GROUP_DP, w),
          bk_expert = make_buckets(wl, sync, TS_GROUP_EDP, w);
  long top = pl.layer0 + pl.n_layers - 1;
  if (pl.is_last && pl.n_layers == 0) {
    at(t, TS_OP_HEAD, -1);
    compute(t, w->edge.head_bwd, TS_CAT_COMPUTE);
    at(t, TS_OP_GRAD_SYNC, -1);
    if (sync != GRADS_KEEP)
      bucket_add(t, &bk, ts_workload_head_params(wl));
  }
  for (long l = top + pl.n_mtp; l >= pl.layer0; l--) { /* MTP modules (their own logits), layers */
    bool mtp = is_mtp(pl, l);
    double expert = 0, params = params_of(wl, pl, l, &expert);
    if (mtp || (pl.is_last && l == top)) {
      at(t, TS_OP_HEAD, -1);
      compute(t, w->edge.head_bwd, TS_CAT_COMPUTE);
      params += !mtp ? ts_workload_head_params(wl) : l == top + 1 ? pl.mtp_copies : 0;
    }
    at(t, TS_OP_MLP, l);
    if (is_moe(wl, pl, l)) {
      compute(t, w->moe.experts_bwd, TS_CAT_COMPUTE);
      compute(t, w->moe.router_bwd, TS_CAT_COMPUTE);
      compute(t, w->moe.shared_bwd, TS_CAT_COMPUTE);
    } else {
      compute(t, w->layer.mlp_bwd, TS_CAT_COMPUTE);
    }
    at(t, TS_OP_ATTN, l);
    compute(t, w->layer.attn_bwd, TS_CAT_COMPUTE);
    if (mtp) {
      at(t, TS_OP_MTP, l);
      compute(t, w->edge.mtp_bwd, TS_CAT_COMPUTE);
      at(t, TS_OP_EMBEDDING, -1);
      compute(t, w->edge.embed_bwd, TS_CAT_COMPUTE);
    }
    grads_final(t, wl, l, false, sync, &bk, &bk_expert, params, expert);
  }
  if (pl.is_first) {
    at(t, TS_OP_EMBEDDING, -1);
    compute(t, w->edge.embed_bwd, TS_CAT_COMPUTE);
    at(t, TS_OP_GRAD_SYNC, -1);
    if (sync != GRADS_KEEP)
      bucket_add(t, &bk,
                 (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)wl->model.hidden +
                     ts_workload_position_params(wl));
  }
  if (sync == GRADS_KEEP)
    return;
  at(t, TS_OP_GRAD_SYNC, -1);
  bucket_flush(t, &bk);
  bucket_flush(t, &bk_expert);
}

/* dualpipe's step of one microbatch's forward with another's backward (the report's
 * "overlapping of forward and backward computation-communication phases"): both passes'
 * receives, then their work with each expert all-to-all (and expert-tensor gather or reduction)
 * of one pass running under an equal share of the other pass's compute, the rest as each pass
 * has it, then both sends. */
static bool is_expert_coll(const ts_event *e) {
  return e->kind == TS_EV_COLL && !e->is_async &&
         (e->group == TS_GROUP_EP || e->group == TS_GROUP_ETP);
}

static void fb_template(const ts_job *job, long f_id, long b_id, tpl *t) {
  const ts_event *pass[2] = {job->templates[f_id], job->templates[b_id]};
  int len[2] = {job->template_len[f_id], job->template_len[b_id]}, head[2] = {0, 0};
  double time[2] = {0, 0}, recompute[2] = {0, 0}, flops[2] = {0, 0};
  int n_ep[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    while (head[k] < len[k] && pass[k][head[k]].op == TS_OP_ACTIVATION &&
           pass[k][head[k]].kind != TS_EV_SEND)
      head[k]++; /* the receive (and its scatter-gather all-gather) */
    for (int i = 0; i < len[k]; i++) {
      const ts_event *e = &pass[k][i];
      if (e->kind == TS_EV_COMPUTE) {
        time[k] += e->time_s;
        recompute[k] += e->recompute_s;
        flops[k] += e->flops;
      }
      n_ep[k] += is_expert_coll(e);
    }
  }
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < head[k]; i++)
      push(t, pass[k][i]);
  for (int k = 0; k < 2; k++) {
    int other = 1 - k;
    for (int i = head[k]; i < len[k]; i++) {
      ts_event e = pass[k][i];
      if (e.kind == TS_EV_SEND || (e.kind == TS_EV_COMPUTE && n_ep[other] > 0))
        continue; /* sends at the end; compute under the other's all-to-alls */
      if (is_expert_coll(&e)) {
        double share = 1.0 / n_ep[k];
        e.time_s = time[other] * share;
        e.recompute_s = recompute[other] * share;
        e.flops = flops[other] * share;
      }
      push(t, e);
    }
  }
  for (int k = 0; k < 2; k++)
    for (int i = head[k]; i < len[k]; i++)
      if (pass[k][i].kind == TS_EV_SEND)
        push(t, pass[k][i]);
}

/* A backward cost split at its weight gradients' share: into *b the rest, into *w that. */
static void split(ts_cost whole, double wgrad_share, ts_cost *b, ts_cost *w) {
  *b = part(whole, 1 - wgrad_share);
  *w = part(whole, wgrad_share);
}

/* zb-h1's costs: b the backward without its weight gradients (B), w those alone (W). The
 * tensor-parallel GEMM shares of B are the same GEMMs' shares of a shorter piece. */
static void split_costs(const stage_costs *c, stage_costs *b, stage_costs *w) {
  *b = *c;
  memset(w, 0, sizeof *w);
  w->hbm_Bps = c->hbm_Bps;
  w->fsdp = c->fsdp;
  ts_layer_cost *bl = &b->layer;
  const ts_layer_cost *cl = &c->layer;
  split(cl->attn_bwd, cl->wgrad_share_attn, &bl->attn_bwd, &w->layer.attn_bwd);
  split(cl->mlp_bwd, cl->wgrad_share_mlp, &bl->mlp_bwd, &w->layer.mlp_bwd);
  double ka = cl->wgrad_share_attn < 1 ? 1 / (1 - cl->wgrad_share_attn) : 1;
  double km = cl->wgrad_share_mlp < 1 ? 1 / (1 - cl->wgrad_share_mlp) : 1;
  bl->share_attn_bwd_in *= ka;
  bl->share_attn_bwd_out *= ka;
  bl->share_mlp_bwd_in *= km;
  bl->share_mlp_bwd_out *= km;
  const ts_moe_cost *cm = &c->moe;
  split(cm->router_bwd, cm->wgrad_share_router, &b->moe.router_bwd, &w->moe.router_bwd);
  split(cm->experts_bwd, cm->wgrad_share_experts, &b->moe.experts_bwd, &w->moe.experts_bwd);
  split(cm->shared_bwd, cm->wgrad_share_shared, &b->moe.shared_bwd, &w->moe.shared_bwd);
  split(c->edge.head_bwd, c->edge.wgrad_share_head, &b->edge.head_bwd, &w->edge.head_bwd);
  split(c->edge.embed_bwd, 1, &b->edge.embed_bwd, &w->edge.embed_bwd);
  split(c->edge.mtp_bwd, c->edge.wgrad_share_mtp, &b->edge.mtp_bwd, &w->edge.mtp_bwd);
}

/* Whether stage `stage` holds a copy of the first stage's word embedding, whose gradient
 * Megatron's embedding group all-reduces with the first stage's: the last stage's output layer
 * tied to it, or the table an MTP module reads (zb-v's first stage holds both ends itself). */
bool ts_schedule_embedding_copy(const ts_workload *wl, long stage) {
  bool tied = !wl->model.untied && wl->schedule != TS_SCHED_ZB_V && stage == wl->pp - 1;
  bool mtp =
      ts_workload_stage_mtp_layers(wl, stage) > 0 && !ts_workload_stage_has_embedding(wl, stage);
  return stage > 0 && (tied || mtp);
}

static long embedding_copies(const ts_workload *wl) {
  long n = 0;
  for (long s = 1; s < wl->pp; s++)
    n += ts_schedule_embedding_copy(wl, s);
  return n;
}

/* Gradient sync and optimizer step, in Megatron's order: data-parallel gradient all-reduce
 * (or, with ZeRO-1 / the distributed optimizer, reduce-scatter) unless the backward passes
 * already posted them (then: wait for them), the tied-embedding all-reduce between first and
 * last stage, the optimizer step on this rank's share, and with ZeRO-1/2 the all-gather of
 * updated weights (ZeRO-3 gathers them layer by layer in the next forward). Gradients travel
 * in fp32 (Megatron-LM accumulates and all-reduces bf16 models' gradients in fp32:
 * accumulate_allreduce_grads_in_fp32), or bf16 with grad_reduce_in_bf16. */
/* DeepSpeed's ZeRO-3 ends a step gathering the small parameters that the optimizer updated
 * in shards (stage3.py, _post_step). Before 0.5.5 through _allgather_params: N narrow views, one
 * list all-gather of their partitions, then for each parameter and rank a narrow, a view, a
 * narrow and a copy_ from Python (partition_parameters.py at v0.3.16); from 0.5.5 one all-gather
 * of each (_allgather_params_coalesced), all posted, then waited for. */
static void regather_small_params(const ts_workload *wl, long stage, tpl *t) {
  double n = 0, elems = 0, ranks = (double)ts_workload_dp_cp(wl);
  ts_deepspeed_path path = ts_deepspeed_zero3_path(wl->deepspeed_version);
  double eb = ts_cost_elem_bytes(wl->precision);
  for (long chunk = 0; chunk < wl->virtual_stages; chunk++) {
    fetcher f;
    fetch_plan(wl, place_of(wl, stage, chunk), false, true, 0, &f);
    for (int u = 0; u < f.n; u++)
      if (f.elems[u] < wl->stage3_persistence_elems) {
        n++;
        elems += f.elems[u];
        if (path != TS_DEEPSPEED_LIST)
          post(t, TS_COLL_ALLGATHER, eb * f.elems[u]);
      }
    fetch_free(&f);
  }
  if (n == 0)
    return;
  if (path != TS_DEEPSPEED_LIST) {
    wait_posted(t, 0);
    return;
  }
  host(t, ranks * ds_view_s); /* _allgather_params: a narrow a rank */
  coll(t, TS_COLL_ALLGATHER, TS_GROUP_DP, eb * elems, TS_CAT_DP);
  /* PyTorch's copies out, then a parameter and rank at a time: three views and a copy_ */
  host(t, ranks * ds_small_copy_s + n * ranks * (3.0 * ds_view_s + ds_small_copy_s));
}

static void epilogue_template(const ts_workload *wl, const ts_gpu *gpu, long stage, grad_sync sync,
                              tpl *t) {
  /* The experts' parameters are reduced, sharded and gathered over expert data parallelism. */
  double all = ts_cost_stage_params(wl, stage), expert = ts_cost_stage_expert_params(wl, stage);
  double params = all - expert, edp = (double)ts_workload_edp(wl);
  double grad = ts_workload_grad_bytes(wl); /* a gradient's bytes: fp32, or grad_reduce_in_bf16 */
  double dp = (double)ts_workload_dp_cp(wl), shard_ranks = (double)ts_workload_shard_ranks(wl);
  bool sharded = ts_workload_zero(wl) >= 1 && dp > 1,
       expert_sharded = ts_workload_zero(wl) >= 1 && edp > 1;
  ts_coll_op reduce = ts_workload_zero(wl) >= 1 ? TS_COLL_REDUCE_SCATTER : TS_COLL_ALLREDUCE;
  at(t, TS_OP_GRAD_SYNC, -1);
  if (sync != GRADS_KEEP) {
    wait_posted(t, 0);
  } else {
    if (dp > 1)
      coll(t, reduce, TS_GROUP_DP, grad * params, TS_CAT_DP);
    if (edp > 1)
      coll(t, reduce, TS_GROUP_EDP, grad * expert, TS_CAT_DP);
  }
  if (ts_schedule_embedding_copy(wl, stage) || (stage == 0 && embedding_copies(wl) > 0)) {
    double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)wl->model.hidden;
    coll(t, TS_COLL_ALLREDUCE, TS_GROUP_EMBEDDING, grad * word, TS_CAT_DP);
  }
  double shard = sharded ? shard_ranks : 1.0, expert_shard = expert_sharded ? edp : 1.0;
  at(t, TS_OP_OPTIMIZER, -1);
  compute(t, ts_cost_optimizer(wl, gpu, params / shard + expert / expert_shard), TS_CAT_OPTIMIZER);
  at(t, TS_OP_GRAD_SYNC, -1);
  if (ts_workload_zero(wl) == 3 && dp > 1 && !wl->is_fsdp)
    regather_small_params(wl, stage, t);
  double weight_bytes = ts_memory_state_bytes(wl).weight; /* the updated weights gathered */
  if (ts_workload_zero(wl) < 3 && !ts_workload_gathers_params(wl) && !wl->fsdp_reshards_pp &&
      !wl->fsdp_keeps_to_backward) {
    if (sharded)
      coll(t, TS_COLL_ALLGATHER, TS_GROUP_DP, weight_bytes * params, TS_CAT_DP);
    if (expert_sharded)
      coll(t, TS_COLL_ALLGATHER, TS_GROUP_EDP, weight_bytes * expert, TS_CAT_DP);
  }
}

static long add_tpl(ts_job *job, tpl *t) {
  long id = ts_job_add_template(job, t->ev, t->n);
  free(t->ev);
  memset(t, 0, sizeof *t);
  return id;
}

/* The expert grid's groups (layout.h): for each kind, the ranks that differ only in its
 * coordinate. Groups of one rank are left out (their collectives are never emitted). */
static void build_expert_groups(const ts_workload *wl, ts_job *job) {
  long etp = ts_workload_etp(wl), edp = ts_workload_edp(wl);
  long size[3] = {wl->ep, etp, edp};
  ts_group_kind kinds[3] = {TS_GROUP_EP, TS_GROUP_ETP, TS_GROUP_EDP};
  long *members = ts_alloc((size_t)(wl->tp * ts_workload_dp_cp(wl)), sizeof(long));
  for (int k = 0; k < 3; k++) {
    if (size[k] < 2)
      continue;
    for (long r = 0; r < job->n_ranks; r++) {
      ts_expert_coords c = ts_layout_expert_coords(wl, r);
      long *mine = k == 0 ? &c.ep : k == 1 ? &c.etp : &c.edp;
      if (*mine != 0) /* one group per rank at coordinate 0 */
        continue;
      for (long i = 0; i < size[k]; i++) {
        *mine = i;
        members[i] = ts_layout_expert_rank(wl, c);
      }
      long g = ts_job_add_group(job, members, (int)size[k]);
      for (long i = 0; i < size[k]; i++)
        job->rank_group[members[i] * TS_GROUP_KINDS + kinds[k]] = g;
    }
  }
  free(members);
}

static void build_groups(const ts_workload *wl, ts_job *job) {
  /* The data-parallel axis holds dp x cp ranks (layout.h): the gradients' group. */
  long n_dp = ts_workload_dp_cp(wl);
  long *members = ts_alloc((size_t)(wl->tp > n_dp ? wl->tp : n_dp) + 2, sizeof(long));
  for (long pp = 0; pp < wl->pp; pp++)
    for (long dp = 0; dp < n_dp; dp++) {
      for (long tp = 0; tp < wl->tp; tp++)
        members[tp] = ts_layout_rank(wl, (ts_coords){tp, dp, pp});
      long g = ts_job_add_group(job, members, (int)wl->tp);
      for (long tp = 0; tp < wl->tp; tp++)
        job->rank_group[members[tp] * TS_GROUP_KINDS + TS_GROUP_TP] = g;
    }
  /* HSDP: the data-parallel group is one shard group (consecutive data-parallel coordinates,
   * a replica's context-parallel ranks together), and the ranks at the same place in every
   * shard group replicate one shard */
  long n_shard = ts_workload_shard_ranks(wl), n_replica = n_dp / n_shard;
  for (long pp = 0; pp < wl->pp; pp++)
    for (long tp = 0; tp < wl->tp; tp++)
      for (long r = 0; r < n_replica; r++) {
        for (long k = 0; k < n_shard; k++)
          members[k] = ts_layout_rank(wl, (ts_coords){tp, r * n_shard + k, pp});
        long g = ts_job_add_group(job, members, (int)n_shard);
        for (long k = 0; k < n_shard; k++)
          job->rank_group[members[k] * TS_GROUP_KINDS + TS_GROUP_DP] = g;
      }
  for (long pp = 0; n_replica > 1 && pp < wl->pp; pp++)
    for (long tp = 0; tp < wl->tp; tp++)
      for (long k = 0; k < n_shard; k++) {
        for (long r = 0; r < n_replica; r++)
          members[r] = ts_layout_rank(wl, (ts_coords){tp, r * n_shard + k, pp});
        long g = ts_job_add_group(job, members, (int)n_replica);
        for (long r = 0; r < n_replica; r++)
          job->rank_group[members[r] * TS_GROUP_KINDS + TS_GROUP_DP_REPLICATE] = g;
      }
  if (wl->cp > 1) /* context parallel: the cp ranks of one replica (dp / cp) */
    for (long pp = 0; pp < wl->pp; pp++)
      for (long replica = 0; replica < wl->dp; replica++)
        for (long tp = 0; tp < wl->tp; tp++) {
          for (long c = 0; c < wl->cp; c++)
            members[c] = ts_layout_rank(wl, (ts_coords){tp, replica * wl->cp + c, pp});
          long g = ts_job_add_group(job, members, (int)wl->cp);
          for (long c = 0; c < wl->cp; c++)
            job->rank_group[members[c] * TS_GROUP_KINDS + TS_GROUP_CP] = g;
        }
  free(members);
  members = ts_alloc((size_t)wl->pp, sizeof(long));
  if (embedding_copies(wl) > 0) /* the first stage and the stages with copies */
    for (long dp = 0; dp < n_dp; dp++)
      for (long tp = 0; tp < wl->tp; tp++) {
        int n = 0;
        for (long s = 0; s < wl->pp; s++)
          if (s == 0 || ts_schedule_embedding_copy(wl, s))
            members[n++] = ts_layout_rank(wl, (ts_coords){tp, dp, s});
        long g = ts_job_add_group(job, members, n);
        for (int k = 0; k < n; k++)
          job->rank_group[members[k] * TS_GROUP_KINDS + TS_GROUP_EMBEDDING] = g;
      }
  free(members);
  if (wl->model.n_experts > 0)
    build_expert_groups(wl, job);
  /* With virtual stages the pipeline wraps: the last stage's chunk c feeds the first stage's
   * chunk c + 1. */
  bool wraps = job->is_pipeline_wrapped = wl->virtual_stages > 1;
  job->is_ep_flex = wl->moe_flex && wl->ep > 1;
  job->ep_topk = (double)wl->model.moe_topk;
  job->ep_route_groups = (double)wl->model.moe_router_groups;
  job->ep_route_group_topk = (double)wl->model.moe_router_group_topk;
  /* dualpipe: messages both ways on every link, flowing as soon as sent (DualPipe posts its
   * receives ahead), the ends not joined */
  job->is_pipeline_wrapped =
      wraps || wl->schedule == TS_SCHED_DUALPIPE || wl->schedule == TS_SCHED_ZB_V;
  job->is_p2p_overlapped = wl->overlap_p2p_comm;
  for (long r = 0; r < job->n_ranks; r++) {
    ts_coords c = ts_layout_coords(wl, r);
    if (c.pp > 0 || wraps)
      job->rank_peer[r * TS_PEERS + TS_PEER_PREV] =
          ts_layout_rank(wl, (ts_coords){c.tp, c.dp, (c.pp + wl->pp - 1) % wl->pp});
    if (c.pp < wl->pp - 1 || wraps)
      job->rank_peer[r * TS_PEERS + TS_PEER_NEXT] =
          ts_layout_rank(wl, (ts_coords){c.tp, c.dp, (c.pp + 1) % wl->pp});
  }
}

int ts_schedule_build(const ts_workload *wl, const ts_gpu *gpu, ts_job *out, ts_err *err) {
  if (wl->moe_flex && wl->ep > 1 && gpu->n_compute_units > 0 &&
      wl->moe_deepep_sms >= gpu->n_compute_units)
    return ts_err_at(err, wl->locs.moe_deepep_sms,
                     "moe_deepep_num_sms (%ld) must leave the %s some of its %ld compute units",
                     wl->moe_deepep_sms, gpu->model, gpu->n_compute_units);
  /* Limits that keep the programs' own storage (blocks per stage, events per template) well
   * under a few GiB; the engine applies its own, machine-dependent limit afterwards. */
  long m = ts_workload_microbatches(wl), v = ts_workload_chunks(wl);
  if (m > TS_MAX_MICROBATCHES || wl->n_gpus > 10000000 ||
      (double)wl->pp * (double)(2 * m * v + 1) > 5e7 || (double)wl->model.n_layers * 16.0 > 5e7)
    return ts_err_plain(err,
                        "%ld layers in %ld stages with %ld microbatches on %ld GPUs is more than "
                        "trainsim simulates",
                        wl->model.n_layers, wl->pp, m, wl->n_gpus);
  ts_job job;
  ts_job_init(&job, wl->n_gpus);
  build_groups(wl, &job);

  stage_costs c;
  c.hbm_Bps = gpu->hbm_Bps;
  c.fsdp = ts_cost_fsdp_copies(wl, gpu);
  ts_cost_layer(wl, gpu, &c.layer);
  ts_cost_moe(wl, gpu, &c.moe);
  ts_cost_edges(wl, gpu, &c.edge);
  /* With sequence parallelism each TP rank holds, and sends, s/t of the sequence. */
  double act = ts_cost_elem_bytes(wl->precision) * (double)wl->micro_batch *
               (double)ts_workload_local_seq(wl) * (double)wl->model.hidden;
  bool sliced = wl->tp > 1 && (wl->sequence_parallel || wl->pipeline_scatter_gather);
  c.act_bytes = sliced ? act / (double)wl->tp : act;
  /* Sequence parallelism keeps activations sliced; otherwise the slices are gathered. */
  c.gather_bytes = sliced && !wl->sequence_parallel ? act : 0;

  long n_blocks = ts_schedule_n_blocks(wl);
  long *steps = ts_alloc((size_t)n_blocks, sizeof(long));
  long *ids = ts_alloc((size_t)n_blocks, sizeof(long));
  long *fwd = ts_alloc((size_t)v, sizeof(long)), *bwd = ts_alloc((size_t)v, sizeof(long));
  long *first_fwd = ts_alloc((size_t)v, sizeof(long));
  bool gather_params = ts_workload_gathers_params(wl) && ts_workload_zero(wl) >= 1 &&
                       (ts_workload_dp_cp(wl) > 1 || ts_workload_edp(wl) > 1);
  ts_block **stage_blocks = ts_alloc((size_t)wl->pp, sizeof(ts_block *));
  /* Which backward passes reduce gradients: ZeRO-2/3 every one; with buckets, the last of
   * each chunk (its gradients are final then); otherwise none (the epilogue does). */
  grad_sync sync = ts_workload_dp_cp(wl) <= 1     ? GRADS_KEEP
                   : ts_workload_zero(wl) >= 2    ? GRADS_EACH_MICROBATCH
                   : ts_cost_bucket_bytes(wl) > 0 ? GRADS_BUCKETS
                                                  : GRADS_KEEP;
  long *last_bwd = ts_alloc((size_t)v, sizeof(long));
  /* zb-h1 and dualpipe: B steps run the backward without its weight gradients (syncing none),
   * W steps those; dualpipe's whole backwards, and its forward-with-backward steps, beside. */
  bool zb = wl->schedule == TS_SCHED_ZB_H1 || wl->schedule == TS_SCHED_ZB_V,
       dual = wl->schedule == TS_SCHED_DUALPIPE;
  stage_costs cb = c, cw = {0};
  if (zb || dual)
    split_costs(&c, &cb, &cw);
  long *bwd_in = ts_alloc((size_t)v, sizeof(long)), *wgrad = ts_alloc((size_t)v, sizeof(long));
  long *last_wgrad = ts_alloc((size_t)v, sizeof(long)), fb[2] = {-1, -1};
  long *stage_n_blocks = ts_alloc((size_t)wl->pp, sizeof(long));
  /* FSDP resharding after each forward with pipelines: each chunk's passes with and without
   * gathering its weights, and its last backward reducing ([gather][last]) */
  bool reshards = wl->fsdp_reshards_pp && ts_workload_dp_cp(wl) > 1;
  long(*fsdp_fwd)[2] = ts_alloc((size_t)v, sizeof *fsdp_fwd);
  long(*fsdp_bwd)[2][2] = ts_alloc((size_t)v, sizeof *fsdp_bwd);
  bool *unsharded = ts_alloc((size_t)v, sizeof(bool));
  fsdp_pass normal = default_pass(wl), normal_fwd = kept_pass(wl, true),
            normal_bwd = kept_pass(wl, false);
  for (long s = 0; s < wl->pp; s++) {
    tpl t = {0};
    for (long chunk = 0; chunk < v; chunk++) {
      chunk_place pl = place_of(wl, s, chunk);
      forward_template(wl, &c, pl, false, true, normal_fwd, &t);
      fwd[chunk] = first_fwd[chunk] = add_tpl(&job, &t);
      if (gather_params || regathers_small_params(wl)) {
        forward_template(wl, &c, pl, gather_params, false, normal_fwd, &t);
        first_fwd[chunk] = add_tpl(&job, &t);
      }
      for (int g = 0; reshards && g < 2; g++) {
        forward_template(wl, &c, pl, false, true, (fsdp_pass){g == 1, false}, &t);
        fsdp_fwd[chunk][g] = add_tpl(&job, &t);
        for (int last = 0; last < 2; last++) {
          backward_template(wl, &c, pl, GRADS_KEEP, (fsdp_pass){g == 1, last == 1}, &t);
          fsdp_bwd[chunk][g][last] = add_tpl(&job, &t);
        }
      }
      if (!zb) {
        backward_template(wl, &c, pl, sync == GRADS_BUCKETS ? GRADS_KEEP : sync, normal_bwd, &t);
        bwd[chunk] = last_bwd[chunk] = add_tpl(&job, &t);
      }
      if (sync == GRADS_BUCKETS && !zb) {
        backward_template(wl, &c, pl, GRADS_BUCKETS, normal_bwd, &t);
        last_bwd[chunk] = add_tpl(&job, &t);
      }
      if (zb || dual) {
        backward_template(wl, &cb, pl, GRADS_KEEP, normal, &t);
        bwd_in[chunk] = add_tpl(&job, &t);
        wgrad_template(wl, &cw, pl, GRADS_KEEP, &t);
        wgrad[chunk] = last_wgrad[chunk] = add_tpl(&job, &t);
        if (sync == GRADS_BUCKETS) {
          wgrad_template(wl, &cw, pl, GRADS_BUCKETS, &t);
          last_wgrad[chunk] = add_tpl(&job, &t);
        }
      }
    }
    for (long chunk = 0; dual && chunk < 2; chunk++) {
      fb_template(&job, fwd[chunk], bwd[1 - chunk], &t);
      fb[chunk] = add_tpl(&job, &t); /* chunk's forward with the other chunk's backward */
    }
    /* the reductions posted in the last backwards: the epilogue waits for them */
    epilogue_template(wl, gpu, s, reshards ? GRADS_EACH_MICROBATCH : sync, &t);
    long epi = add_tpl(&job, &t);
    long n_steps = ts_schedule_order(wl->schedule, wl->pp, v, s, m, steps);
    memset(unsharded, 0, (size_t)v * sizeof(bool));
    for (long k = 0; k < n_steps; k++) {
      long chunk = ts_schedule_step_chunk(steps[k], v);
      long micro = ts_schedule_step_micro(steps[k], v);
      char pass = ts_schedule_step_pass(steps[k]);
      if (reshards) { /* a chunk's weights: resharded after a forward, kept after a backward */
        bool gather = !unsharded[chunk];
        ids[k] = pass == 'F' ? fsdp_fwd[chunk][gather] : fsdp_bwd[chunk][gather][micro == m - 1];
        unsharded[chunk] = pass != 'F' && micro != m - 1;
        continue;
      }
      ids[k] = pass == 'X'              ? fb[chunk]
               : pass == 'W'            ? (micro == m - 1 ? last_wgrad[chunk] : wgrad[chunk])
               : pass == 'F'            ? (micro == 0 ? first_fwd[chunk] : fwd[chunk])
               : steps[k] >= TS_STEP_BI ? bwd_in[chunk]
               : micro == m - 1         ? last_bwd[chunk]
                                        : bwd[chunk];
    }
    ids[n_steps] = epi;
    stage_blocks[s] = blocks_from(&job, ids, (int)(n_steps + 1));
    stage_n_blocks[s] = n_steps + 1;
  }
  free(last_bwd);
  for (long r = 0; r < job.n_ranks; r++) {
    long s = ts_layout_coords(wl, r).pp;
    job.programs[r].blocks = stage_blocks[s];
    job.programs[r].n_blocks = (int)stage_n_blocks[s];
  }
  free(bwd_in);
  free(wgrad);
  free(last_wgrad);
  free(stage_n_blocks);
  free(fsdp_fwd);
  free(fsdp_bwd);
  free(unsharded);
  free(fwd);
  free(first_fwd);
  free(bwd);
  free(stage_blocks);
  free(steps);
  free(ids);
  *out = job;
  return 0;
}
