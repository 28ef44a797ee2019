/* explain: see explain.h. */
#include "explain.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../workloads/cost.h"
#include "../workloads/doc.h"
#include "../workloads/layout.h"
#include "../workloads/memory.h"
#include "../workloads/text.h"
#include "args.h"
#include "run.h"
#include "study.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MAX_TOKENS 16 /* of one change */
#define MAX_CHANGES 64
#define MAX_LOSS_CHANGES 8
#define SHOWN_CHANGES 3 /* per loss */
/* A loss is explained when it takes at least this share of the iteration; at most MAX_SHOWN. */
#define MIN_LOSS_SHARE 0.01
#define MAX_SHOWN 5
/* Unused memory is a loss worth naming from this share of HBM on. */
#define MIN_FREE_SHARE 0.2

static const char usage[] =
    "usage: trainsim explain RESULT_DIR [--simulate K] [--jobs N] [--quiet]\n"
    "\n"
    "Explains the iteration 'trainsim run' simulated into RESULT_DIR (its result.json): the\n"
    "largest losses (pipeline bubble, exposed tensor-, pipeline-, data-, expert- and\n"
    "context-parallel communication, recomputation, idle time, unused memory), the mechanism\n"
    "behind each with its numbers, and the changes that would cut it most: layout,\n"
    "micro-batch, schedule, virtual stages, overlap options, a faster NIC. Each change is\n"
    "estimated with the analytic fidelity (no contention) against the same estimate of the\n"
    "run's layout; the K best estimates of each loss (default 2; 0: none) are then simulated\n"
    "at the run's fidelity, which contention can reorder: each costs about as much as the\n"
    "run. --jobs N simulates N at a time (default 1: a full-scale simulation can take GiBs).\n"
    "The run is rebuilt from the arguments result.json records; a workload, platform or\n"
    "kernel file changed since is an error. --quiet: no progress line on stderr.\n";

enum loss_kind {
  L_BUBBLE,
  L_TP,
  L_PP,
  L_DP,
  L_EP,
  L_CP,
  L_RECOMPUTE,
  L_IDLE,
  L_OPTIMIZER,
  L_MEMORY
};
static const char *const loss_titles[] = {"pipeline bubble",
                                          "exposed tensor-parallel communication",
                                          "exposed pipeline transfers",
                                          "exposed data-parallel gradient synchronisation",
                                          "exposed expert-parallel all-to-alls",
                                          "exposed context-parallel ring exchange",
                                          "recomputation",
                                          "idle time",
                                          "optimizer step",
                                          "unused memory"};

typedef enum change_state { C_OK, C_NO_FIT } change_state;

typedef struct change {
  char tokens[MAX_TOKENS][96]; /* the flags added to the run's arguments */
  int n_tokens;
  char flags[MAX_TOKENS * 96]; /* the tokens, as shown */
  char note[200]; /* what it changes, in plain words */
  change_state state;
  double peak_gib;
  double estimate_s, simulated_s; /* 0 until known */
  char failure[320]; /* why its estimate or simulation did not finish */
} change;

typedef struct loss {
  enum loss_kind kind;
  double seconds; /* mean over ranks; 0 for unused memory */
  char mechanism[1400];
  int changes[MAX_LOSS_CHANGES];
  int n_changes;
} loss;

typedef struct explain {
  const char *dir;
  char **args; /* result.json's inputs.arguments */
  int n_args;
  ts_run_args a;
  ts_platform *pf;
  ts_workload wl;
  double iteration_s, breakdown_s[TS_CAT_COUNT];
  long n_stages;
  double *stage_work_s; /* [stage]: compute and recomputation */
  bool same_binary;
  loss losses[TS_CAT_COUNT + 1];
  int n_losses;
  change changes[MAX_CHANGES];
  int n_changes;
  /* the pool's points: 0 the run's own layout, i > 0 changes[i - 1] */
  bool is_estimating;
  double base_estimate_s, base_simulated_s;
  double compare_s; /* the run's iteration the simulated changes are compared with */
  char base_failure[320];
} explain;

/* ---- result.json ---- */

static int read_result(explain *x, ts_err *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/result.json", x->dir);
  ts_doc *doc = NULL;
  if (access(path, F_OK) != 0)
    return ts_err_plain(err, "%s: no result.json (a 'trainsim run WORKLOAD --out %s' writes one)",
                        x->dir, x->dir);
  if (ts_doc_load_file(path, &doc, err) != 0)
    return -1;
  int root = ts_doc_root(doc), inputs = ts_doc_get(doc, root, "inputs");
  int args = inputs != 0 ? ts_doc_get(doc, inputs, "arguments") : 0;
  const char *files = NULL, *binary = NULL;
  int rc = -1;
  if (args == 0 || !ts_doc_is_seq(doc, args)) {
    ts_err_plain(err,
                 "%s: no inputs.arguments (written by a trainsim before 'explain'?): run it "
                 "again with this trainsim",
                 path);
    goto done;
  }
  int metrics = ts_doc_get(doc, root, "metrics"), breakdown = ts_doc_get(doc, root, "breakdown_s");
  int stages = ts_doc_get(doc, root, "stages");
  if (ts_doc_get_string(doc, inputs, "files_digest", &files, err) != 1 ||
      ts_doc_get_string(doc, inputs, "binary_digest", &binary, err) != 1 || metrics == 0 ||
      breakdown == 0 || stages == 0 || !ts_doc_is_seq(doc, stages) ||
      ts_doc_get_double(doc, metrics, "iteration_s", 1e-12, 1e12, &x->iteration_s, err) != 1) {
    if (err->msg[0] == '\0')
      ts_err_plain(err,
                   "%s: expected metrics, breakdown_s, stages and inputs as trainsim run "
                   "writes them",
                   path);
    goto done;
  }
  for (int c = 0; c < TS_CAT_COUNT; c++)
    if (ts_doc_get_double(doc, breakdown, ts_category_names[c], 0, 1e12, &x->breakdown_s[c], err) <
        0)
      goto done;
  x->n_stages = ts_doc_seq_len(doc, stages);
  x->stage_work_s = calloc((size_t)(x->n_stages > 0 ? x->n_stages : 1), sizeof(double));
  TS_ASSERT(x->stage_work_s != NULL);
  for (long s = 0; s < x->n_stages; s++) {
    int b = ts_doc_get(doc, ts_doc_seq_item(doc, stages, (int)s), "breakdown_s");
    double compute = 0, recompute = 0;
    if (b == 0 || ts_doc_get_double(doc, b, "compute", 0, 1e12, &compute, err) < 0 ||
        ts_doc_get_double(doc, b, "recompute", 0, 1e12, &recompute, err) < 0)
      goto done;
    x->stage_work_s[s] = compute + recompute;
  }
  x->n_args = ts_doc_seq_len(doc, args);
  if (x->n_args > 4096) {
    ts_err_plain(err, "%s: inputs.arguments: expected at most 4096 arguments, found %d", path,
                 x->n_args);
    goto done;
  }
  x->args = calloc((size_t)x->n_args + 1, sizeof *x->args);
  TS_ASSERT(x->args != NULL);
  for (int i = 0; i < x->n_args; i++) {
    const char *s = ts_doc_scalar(doc, ts_doc_seq_item(doc, args, i));
    x->args[i] = strdup(s != NULL ? s : "");
    TS_ASSERT(x->args[i] != NULL);
  }
  /* The files the run read must be the ones it will be compared with. */
  ts_run_args a;
  if (ts_run_parse_recorded(x->n_args, x->args, &a, err) != 0 ||
      ts_run_load_inputs(&a, x->pf, &x->wl, err) != 0)
    goto done;
  ts_digest d;
  ts_digest_init(&d);
  ts_run_digest_inputs(&a, x->pf, &d);
  char now[17];
  snprintf(now, sizeof now, "%016llx", (unsigned long long)d.h);
  if (strcmp(now, files) != 0) {
    ts_err_plain(err,
                 "%s: the workload, platform or kernel file it was simulated from has changed "
                 "since (digest %s, now %s): run it again",
                 path, files, now);
    goto done;
  }
  if (x->n_stages != x->wl.pp) {
    ts_err_plain(err, "%s: %ld stages, but its inputs give %ld", path, x->n_stages, x->wl.pp);
    goto done;
  }
  ts_digest_init(&d);
  ts_digest_file(&d, "/proc/self/exe");
  snprintf(now, sizeof now, "%016llx", (unsigned long long)d.h);
  x->same_binary = strcmp(now, binary) == 0;
  x->a = a;
  rc = 0;
done:
  ts_doc_free(doc);
  return rc;
}

/* ---- changes ---- */

/* The run's arguments followed by change c's (NULL: none), parsed and loaded (the --set
 * registry holds theirs alone afterwards). */
static int load_with(const explain *x, const change *c, ts_run_args *a, ts_platform *pf,
                     ts_workload *wl, ts_err *err) {
  char *argv[4096 + MAX_TOKENS];
  int n = 0;
  for (int i = 0; i < x->n_args && n < 4096; i++)
    argv[n++] = x->args[i];
  for (int i = 0; c != NULL && i < c->n_tokens; i++)
    argv[n++] = (char *)c->tokens[i];
  ts_doc_overrides_clear();
  if (ts_run_parse_recorded(n, argv, a, err) != 0)
    return -1;
  return ts_run_load_inputs(a, pf, wl, err);
}

/* Adds the change whose flags are `flags` (space-separated) to loss l, once for all losses:
 * checked against the layout rules and memory here. */
static void add_change(explain *x, loss *l, const char *note, const char *fmt, ...) {
  char flags[MAX_TOKENS * 96];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(flags, sizeof flags, fmt, ap);
  va_end(ap);
  if (l->n_changes == MAX_LOSS_CHANGES)
    return;
  for (int i = 0; i < x->n_changes; i++) {
    if (strcmp(x->changes[i].flags, flags) == 0) {
      for (int k = 0; k < l->n_changes; k++)
        if (l->changes[k] == i)
          return;
      l->changes[l->n_changes++] = i;
      return;
    }
  }
  if (x->n_changes == MAX_CHANGES)
    return;
  change *c = &x->changes[x->n_changes];
  memset(c, 0, sizeof *c);
  char copy[sizeof flags];
  snprintf(copy, sizeof copy, "%s", flags);
  for (char *tok = strtok(copy, " "); tok != NULL && c->n_tokens < MAX_TOKENS;
       tok = strtok(NULL, " "))
    snprintf(c->tokens[c->n_tokens++], sizeof c->tokens[0], "%s", tok);
  ts_text_copy(c->flags, sizeof c->flags, flags);
  snprintf(c->note, sizeof c->note, "%s", note);
  ts_run_args a;
  ts_workload wl;
  ts_err err = {0};
  if (load_with(x, c, &a, x->pf, &wl, &err) != 0)
    return; /* breaks a layout rule: not a change to offer */
  long stage = 0;
  double peak = ts_memory_peak(&wl, &stage);
  c->peak_gib = peak / GIB;
  c->state = peak > x->pf->gpu.hbm_bytes ? C_NO_FIT : C_OK;
  l->changes[l->n_changes++] = x->n_changes++;
}

/* A layout of the same GPUs with tp, pp and cp (dp follows), virtual stages reset where the
 * pipeline goes. */
static void add_layout(explain *x, loss *l, long tp, long pp, long cp, const char *note) {
  const ts_workload *w = &x->wl;
  if (tp < 1 || pp < 1 || cp < 1 || w->n_gpus % (tp * pp * cp) != 0)
    return;
  char flags[256];
  int n = 0;
  if (tp != w->tp)
    n += snprintf(flags + n, sizeof flags - (size_t)n, " --tp %ld", tp);
  if (pp != w->pp)
    n += snprintf(flags + n, sizeof flags - (size_t)n, " --pp %ld", pp);
  if (cp != w->cp)
    n += snprintf(flags + n, sizeof flags - (size_t)n, " --cp %ld", cp);
  n += snprintf(flags + n, sizeof flags - (size_t)n, " --dp %ld", w->n_gpus / (tp * pp * cp));
  if (pp == 1 && w->virtual_stages > 1)
    snprintf(flags + n, sizeof flags - (size_t)n, " --virtual-stages 1");
  add_change(x, l, note, "%s", flags + 1);
}

/* Every NIC at twice its bandwidth: the network what-if of a communication loss (the
 * platform's NICs are alike: the first one's bandwidth, doubled, for all). */
static void add_faster_nics(explain *x, loss *l) {
  const ts_platform *pf = x->pf;
  for (int i = 1; i < pf->n_nics; i++)
    if (pf->nics[i].bw_Bps != pf->nics[0].bw_Bps)
      return;
  if (pf->n_nics > 0)
    add_change(x, l, "hardware: every NIC at twice its bandwidth",
               "--set node.nics[*].bandwidth=%.6gGBps", 2 * pf->nics[0].bw_Bps / 1e9);
}

/* ---- mechanisms ---- */

/* The nodes the group of rank 0 along one axis spans, ranks placed in order (contiguous). */
static long nodes_spanned(const ts_workload *wl, int gpus_per_node, char axis) {
  /* the data-parallel coordinate spans the context-parallel ranks too (layout.h) */
  long size = axis == 't' ? wl->tp : axis == 'd' ? wl->dp * wl->cp : wl->pp, first = -1, last = -1;
  for (long k = 0; k < size; k++) {
    ts_coords c = {axis == 't' ? k : 0, axis == 'd' ? k : 0, axis == 'p' ? k : 0};
    long node = ts_layout_rank(wl, c) / gpus_per_node;
    first = first < 0 || node < first ? node : first;
    last = node > last ? node : last;
  }
  return last - first + 1;
}

static void format_bytes(double bytes, char *out, size_t size) {
  if (bytes >= GIB)
    snprintf(out, size, "%.2f GiB", bytes / GIB);
  else
    snprintf(out, size, "%.1f MiB", bytes / (1024.0 * 1024.0));
}

static void describe(explain *x, loss *l) {
  const ts_workload *w = &x->wl;
  const ts_platform *pf = x->pf;
  char *out = l->mechanism;
  size_t size = sizeof l->mechanism;
  double share = 100 * l->seconds / x->iteration_s;
  long m = ts_workload_microbatches(w), p = w->pp, v = w->virtual_stages;
  double nic_gbps = 0;
  for (int i = 0; i < pf->n_nics; i++)
    nic_gbps += pf->nics[i].bw_Bps / 1e9 / pf->gpus_per_node;
  char message[32];
  format_bytes((double)w->micro_batch * (double)(w->model.seq / w->cp) * (double)w->model.hidden *
                   ts_cost_elem_bytes(w->precision),
               message, sizeof message);
  switch (l->kind) {
  case L_BUBBLE:
    snprintf(out, size,
             "The pipeline fills and drains once an iteration: the first stage's last backward "
             "pass waits for all %ld stages, and the last stage's first forward pass for all "
             "the stages before it. With %ld microbatches per pipeline%s the idealised bubble "
             "is (p - 1) / (v m + p - 1) = %.1f%% of the iteration (Narayanan et al., SC'21); "
             "here %.3g s, %.1f%%, the mean over stages.",
             p, m, v > 1 ? " over the interleaved schedule's chunks" : "",
             100.0 * (double)(p - 1) / (double)(v * m + p - 1), l->seconds, share);
    break;
  case L_TP: {
    long nodes = nodes_spanned(w, pf->gpus_per_node, 't');
    char where[160];
    if (nodes > 1)
      snprintf(where, sizeof where,
               "spanning %ld nodes: its rings and trees leave each node through the NICs, %.1f "
               "GB/s a GPU, besides the in-node links",
               nodes, nic_gbps);
    else
      snprintf(where, sizeof where, "inside a node");
    snprintf(out, size,
             "Each layer's tensor-parallel group of %ld GPUs (%s) %s its activations (%s a "
             "call: micro-batch x sequence x hidden) twice in the forward pass and twice in the "
             "backward pass%s; the layer's next GEMM waits for each%s. Each GPU's GEMMs shrink "
             "as 1/tp, but what it all-reduces does not. Here %.3g s, %.1f%%.",
             w->tp, where, w->sequence_parallel ? "all-gathers and reduce-scatters" : "all-reduces",
             message,
             w->recompute == TS_RECOMPUTE_FULL ? ", and twice more when full recomputation reruns "
                                                 "the forward pass"
                                               : "",
             w->tp_comm_overlap ? " unless tp_comm_overlap hides it under a GEMM" : "", l->seconds,
             share);
    break;
  }
  case L_PP:
    snprintf(out, size,
             "Each microbatch crosses the %ld stage boundaries forward (its activations, %s%s) "
             "and backward (their gradients); a stage that has nothing else to do waits for "
             "the transfer. Here %.3g s, %.1f%%.",
             p - 1, message,
             w->pipeline_scatter_gather ? ", 1/tp of it per tensor rank then an all-gather" : "",
             l->seconds, share);
    break;
  case L_DP: {
    double params = ts_cost_stage_params(w, 0);
    long nodes = nodes_spanned(w, pf->gpus_per_node, 'd');
    char when[200];
    if (w->dp_bucket_bytes > 0)
      snprintf(when, sizeof when,
               "in buckets of %.0f MB while the backward pass runs: what stays exposed is the "
               "buckets left when it ends",
               w->dp_bucket_bytes / 1e6);
    else
      snprintf(when, sizeof when, "after the %s, with no computation left to hide them under",
               w->pp > 1 ? "pipeline flush" : "last backward pass");
    snprintf(out, size,
             "Every GPU's gradients (%.2f billion parameters on stage 0) are %s over the %ld "
             "data-%sparallel ranks (%ld node%s), %s%s. Here %.3g s, %.1f%%.",
             params / 1e9,
             w->zero_stage >= 1 ? "reduce-scattered, and the updated weights all-gathered,"
                                : "all-reduced",
             w->dp * w->cp, w->cp > 1 ? " and context-" : "", nodes, nodes > 1 ? "s" : "", when,
             w->zero_stage >= 1 && !w->overlap_param_gather
                 ? "; the weights' all-gather runs before the next forward pass"
                 : "",
             l->seconds, share);
    break;
  }
  case L_EP:
    snprintf(out, size,
             "Each mixture-of-experts layer sends every token to its %ld experts over the %ld "
             "expert-parallel ranks and back (dispatch and combine all-to-alls), in the forward "
             "and backward passes; the experts wait for their tokens. Here %.3g s, %.1f%%.",
             w->model.moe_topk, w->ep, l->seconds, share);
    break;
  case L_CP:
    snprintf(out, size,
             "Ring attention passes keys and values around the %ld context-parallel ranks; a "
             "step whose transfer outlasts its attention block leaves the rest exposed. Here "
             "%.3g s, %.1f%%.",
             w->cp, l->seconds, share);
    break;
  case L_RECOMPUTE:
    snprintf(out, size,
             "%s recomputation runs %s again during the backward pass so that fewer "
             "activations are stored: %.3g s, %.1f%% of the iteration, to save memory.",
             w->recompute == TS_RECOMPUTE_FULL ? "Full" : "Selective",
             w->recompute == TS_RECOMPUTE_FULL ? "every layer's forward pass"
                                               : "the attention core",
             l->seconds, share);
    break;
  case L_IDLE: {
    long slowest = 0;
    double mean = 0;
    for (long s = 0; s < x->n_stages; s++) {
      mean += x->stage_work_s[s] / (double)x->n_stages;
      if (x->stage_work_s[s] > x->stage_work_s[slowest])
        slowest = s;
    }
    snprintf(out, size,
             "Ranks that finish early wait for the slowest: stage %ld computes for %.3g s against "
             "a mean of %.3g s per stage%s. Here %.3g s, %.1f%%, the mean over ranks.",
             slowest, x->stage_work_s[slowest], mean,
             slowest == p - 1 && p > 1 ? " (the last stage also runs the output layer and the loss)"
             : slowest == 0 && p > 1   ? " (the first stage also runs the embedding)"
                                       : "",
             l->seconds, share);
    break;
  }
  case L_OPTIMIZER:
    snprintf(out, size,
             "The optimizer step (Adam) reads and writes every parameter's states once an "
             "iteration, bound by HBM bandwidth: %.3g s, %.1f%%.",
             l->seconds, share);
    break;
  case L_MEMORY: {
    long stage = 0;
    double peak = ts_memory_peak(w, &stage), hbm = pf->gpu.hbm_bytes;
    snprintf(out, size,
             "The fullest GPU (stage %ld) holds %.2f GiB of its %.2f GiB: %.2f GiB (%.0f%%) "
             "unused, room for larger micro-batches, less recomputation or less model "
             "parallelism.",
             stage, peak / GIB, hbm / GIB, (hbm - peak) / GIB, 100 * (hbm - peak) / hbm);
    break;
  }
  }
}

/* The changes that address loss l. */
static void propose(explain *x, loss *l) {
  const ts_workload *w = &x->wl;
  long t = w->tp, p = w->pp, c = w->cp, b = w->micro_batch, v = w->virtual_stages;
  switch (l->kind) {
  case L_BUBBLE:
    /* the interleaved schedule: the first two chunk counts that split the layers evenly */
    for (long v2 = v + 1, tried = 0; v2 <= 8 * v && tried < 2; v2++)
      if (w->model.n_layers % (p * v2) == 0) {
        add_change(x, l, "the interleaved schedule: the bubble shrinks by the chunks per stage",
                   "--virtual-stages %ld", v2);
        tried++;
      }
    if (b > 1)
      add_change(x, l, "twice the microbatches per pipeline, each half as large",
                 "--micro-batch-size %ld", b / 2);
    add_layout(x, l, t, p / 2, c, "half the pipeline stages, twice the data parallelism");
    add_layout(x, l, 2 * t, p / 2, c, "half the stages, twice the tensor parallelism");
    break;
  case L_TP:
    add_layout(x, l, t / 2, 2 * p, c, "half the tensor parallelism, twice the stages");
    add_layout(x, l, t / 2, p, c, "half the tensor parallelism, twice the data parallelism");
    if (!w->tp_comm_overlap)
      add_change(x, l, "sequence parallelism with its collectives under the GEMMs",
                 "%s--set parallelism.tp_comm_overlap=true",
                 w->sequence_parallel ? "" : "--sequence-parallel ");
    if (nodes_spanned(w, x->pf->gpus_per_node, 't') > 1)
      add_faster_nics(x, l);
    break;
  case L_PP:
    if (t > 1 && !w->pipeline_scatter_gather)
      add_change(x, l, "1/tp of each activation per tensor rank, then an all-gather",
                 "--scatter-gather");
    add_layout(x, l, t, p / 2, c, "half the pipeline stages, twice the data parallelism");
    add_faster_nics(x, l);
    break;
  case L_DP:
    if (w->dp_bucket_bytes <= 0)
      add_change(x, l,
                 "gradients reduced in buckets during the backward pass (Megatron-LM's "
                 "--overlap-grad-reduce)",
                 "--dp-bucket-size 160MB");
    if (w->zero_stage >= 1 && !w->overlap_param_gather)
      add_change(x, l, "buckets, and the weights' all-gather under the next forward pass",
                 "--dp-bucket-size %.0fMB --set parallelism.overlap_param_gather=true",
                 w->dp_bucket_bytes > 0 ? w->dp_bucket_bytes / 1e6 : 160.0);
    add_layout(x, l, t, 2 * p, c, "half the data parallelism, twice the stages");
    add_faster_nics(x, l);
    break;
  case L_EP:
    if (w->ep > 1)
      add_change(x, l, "half the expert parallelism (more experts per GPU)", "--ep %ld", w->ep / 2);
    add_faster_nics(x, l);
    break;
  case L_CP:
    add_layout(x, l, t, p, c / 2, "half the context parallelism, twice the data parallelism");
    add_layout(x, l, 2 * t, p, c / 2, "half the context parallelism, twice the tensor");
    break;
  case L_RECOMPUTE:
    if (w->recompute == TS_RECOMPUTE_FULL)
      add_change(x, l, "recompute only the attention core", "--recompute selective");
    add_change(x, l, "store every activation", "--recompute none");
    if (w->n_gpus % (t * 2 * p * c) == 0)
      add_change(x, l, "twice the stages (fewer layers per GPU) storing every activation",
                 "--pp %ld --dp %ld --recompute none", 2 * p, w->n_gpus / (t * 2 * p * c));
    break;
  case L_IDLE: {
    add_layout(x, l, t, p / 2, c, "half the pipeline stages: the extra layers weigh less");
    /* Fewer layers beside the embedding or the output layer (Megatron-LM's
     * --decoder-first/last-pipeline-num-layers); the stages between split the rest evenly. */
    long per = w->model.n_layers / p;
    for (long first = per; first >= per - 2 && first >= 1; first--)
      for (long last = per; last >= per - 2 && last >= 1; last--) {
        long rest = w->model.n_layers - first - last;
        if ((first == per && last == per) || v > 1 || p < 2 ||
            (p > 2 ? rest % (p - 2) != 0 || rest / (p - 2) < 1 : rest != 0))
          continue;
        add_change(x, l, "fewer layers on the stages with the embedding or the output",
                   "--first-stage-layers %ld --last-stage-layers %ld", first, last);
      }
    break;
  }
  case L_OPTIMIZER:
    break;
  case L_MEMORY:
    add_change(x, l, "twice the micro-batch (half the microbatches)", "--micro-batch-size %ld",
               2 * b);
    if (w->recompute != TS_RECOMPUTE_NONE)
      add_change(x, l, "less recomputation",
                 w->recompute == TS_RECOMPUTE_FULL ? "--recompute selective" : "--recompute none");
    add_layout(x, l, t / 2, p, c, "half the tensor parallelism, twice the data parallelism");
    break;
  }
}

/* ---- the pool ---- */

static void point_label(void *ctx, int i, char *out, size_t size) {
  const explain *x = ctx;
  const char *what = x->is_estimating ? "estimating" : "simulating";
  if (i == 0)
    snprintf(out, size, "explain: %s the run's own layout", what);
  else
    snprintf(out, size, "explain: %s change %d of %d (%.80s)", what, i, x->n_changes,
             x->changes[i - 1].flags);
}

static int load_point(void *ctx, int i, ts_platform *pf, ts_workload *wl, ts_simulate_opts *opts,
                      ts_err *err) {
  const explain *x = ctx;
  ts_run_args a;
  if (load_with(x, i > 0 ? &x->changes[i - 1] : NULL, &a, pf, wl, err) != 0)
    return -1;
  *opts = ts_run_simulate_opts(&a);
  if (x->is_estimating)
    opts->engine.fidelity = TS_FIDELITY_ANALYTIC;
  opts->is_one_pipeline = x->is_estimating;
  return 0;
}

static void point_done(void *ctx, int i, int rc, const ts_scaling_point *p, const ts_err *err) {
  explain *x = ctx;
  char *failure = i > 0 ? x->changes[i - 1].failure : x->base_failure;
  double *out =
      i > 0 ? (x->is_estimating ? &x->changes[i - 1].estimate_s : &x->changes[i - 1].simulated_s)
            : (x->is_estimating ? &x->base_estimate_s : &x->base_simulated_s);
  if (rc == 0)
    *out = p->iteration_s;
  else
    ts_text_copy(failure, sizeof x->base_failure, err->msg);
}

/* Runs points (0: the run's layout, i: changes[i - 1]) through the study pool. */
static void play(explain *x, const int *points, int n, bool is_estimating, long jobs, bool quiet) {
  x->is_estimating = is_estimating;
  fflush(stdout);
  int sig =
      ts_study_pool(n, points, (int)jobs, load_point, point_done, quiet ? NULL : point_label, x);
  if (sig != 0)
    ts_study_stopped(sig, "the changes 'explain' tries");
}

/* ---- output ---- */

/* Words of text, wrapped at 96 columns after `indent` spaces. */
static void print_wrapped(int indent, const char *text) {
  int col = 0;
  const char *s = text;
  while (*s != '\0') {
    while (*s == ' ')
      s++;
    size_t n = strcspn(s, " ");
    if (n == 0)
      break;
    if (col > 0 && col + 1 + (int)n > 96) {
      putchar('\n');
      col = 0;
    }
    if (col == 0)
      col = printf("%*s%.*s", indent, "", (int)n, s);
    else
      col += printf(" %.*s", (int)n, s);
    s += n;
  }
  if (col > 0)
    putchar('\n');
}

static void print_gain(const char *what, double t, double against) {
  printf("%s %.4g s (%+.1f%%)", what, t, 100 * (t / against - 1));
}

/* Changes in the order shown: those with a figure by their gain, each against its own
 * fidelity's figure for the run's layout (simulated against the run, estimated against the
 * estimate), then those whose estimate failed, then those that do not fit (by memory). */
static int change_rank(const explain *x, const change *c, double *key) {
  if (c->state == C_OK && c->simulated_s > 0)
    return *key = c->simulated_s / x->compare_s, 0;
  if (c->state == C_OK && c->estimate_s > 0)
    return *key = c->estimate_s / x->base_estimate_s, 0;
  *key = c->peak_gib;
  return c->state == C_OK ? 1 : 2;
}

static int by_outcome(const explain *x, int i, int j) {
  double ki = 0, kj = 0;
  int ri = change_rank(x, &x->changes[i], &ki), rj = change_rank(x, &x->changes[j], &kj);
  if (ri != rj)
    return ri - rj;
  return (ki > kj) - (ki < kj);
}

static void sort_changes(const explain *x, loss *l) {
  for (int i = 1; i < l->n_changes; i++)
    for (int k = i; k > 0 && by_outcome(x, l->changes[k - 1], l->changes[k]) > 0; k--) {
      int tmp = l->changes[k];
      l->changes[k] = l->changes[k - 1];
      l->changes[k - 1] = tmp;
    }
}

static bool helps(const explain *x, const change *c) {
  if (c->simulated_s > 0)
    return c->simulated_s < x->compare_s;
  return c->estimate_s > 0 && c->estimate_s < x->base_estimate_s;
}

static void print_loss(const explain *x, int rank, const loss *l) {
  if (l->kind == L_MEMORY)
    printf("\n%d. %s\n", rank, loss_titles[l->kind]);
  else
    printf("\n%d. %s: %.4g s, %.1f%% of the iteration\n", rank, loss_titles[l->kind], l->seconds,
           100 * l->seconds / x->iteration_s);
  print_wrapped(3, l->mechanism);
  int shown = 0;
  for (int k = 0; k < l->n_changes && shown < SHOWN_CHANGES; k++) {
    const change *c = &x->changes[l->changes[k]];
    printf("   %c) %s\n      %s\n      ", 'a' + shown++, c->flags, c->note);
    if (c->state == C_NO_FIT) {
      printf("does not fit: %.2f GiB of %.2f GiB\n", c->peak_gib, x->pf->gpu.hbm_bytes / GIB);
      continue;
    }
    if (c->estimate_s <= 0) {
      printf("not estimated: %s\n", c->failure);
      continue;
    }
    print_gain("estimate", c->estimate_s, x->base_estimate_s);
    if (c->simulated_s > 0)
      print_gain(", simulated", c->simulated_s, x->compare_s);
    else if (c->failure[0] != '\0')
      printf(", simulation failed: %s", c->failure);
    printf("; %.2f GiB a GPU\n", c->peak_gib);
  }
  if (shown == 0)
    printf("   (no change of the layout, schedule or network tried here addresses it)\n");
  else if (x->changes[l->changes[0]].state == C_OK && !helps(x, &x->changes[l->changes[0]]))
    printf("   None of these shortens the iteration: here this loss is the price of the "
           "layout.\n");
}

static void free_explain(explain *x) {
  for (int i = 0; i < x->n_args; i++)
    free(x->args[i]);
  free(x->args);
  free(x->stage_work_s);
  free(x->pf);
}

int ts_explain_main(int argc, char **argv) {
  static const char *const options[] = {"--simulate", "--jobs", NULL};
  static const char *const switches[] = {"--quiet", NULL};
  ts_err err = {0};
  ts_args cli = {argc, argv, 0, "explain", options, switches, false, false, false};
  const char *flag = NULL, *value = NULL, *dir = NULL;
  long jobs = 1, simulate = 2;
  bool quiet = false;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &err)) != TS_ARGS_END;) {
    int rc = 0;
    if (item < 0) {
      fprintf(stderr, "%s\n", err.msg);
      return TS_ARGS_EXIT_INPUT;
    }
    if (item == TS_ARGS_ARGUMENT) {
      if (dir != NULL) {
        fprintf(stderr, "trainsim: error: explain takes one RESULT_DIR, found a second: '%s'\n",
                value);
        return TS_ARGS_EXIT_INPUT;
      }
      dir = value;
    } else if (strcmp(flag, "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(flag, "--jobs") == 0) {
      rc = ts_args_count(flag, value, 1, 4096, &jobs, &err);
    } else if (strcmp(flag, "--simulate") == 0) {
      rc = ts_args_count(flag, value, 0, SHOWN_CHANGES, &simulate, &err);
    } else if (strcmp(flag, "--quiet") == 0) {
      quiet = true;
    }
    if (rc != 0) {
      fprintf(stderr, "%s\n", err.msg);
      return TS_ARGS_EXIT_INPUT;
    }
  }
  if (dir == NULL) {
    fprintf(stderr,
            "trainsim: error: explain needs a RESULT_DIR (see 'trainsim explain --help')\n");
    return TS_ARGS_EXIT_INPUT;
  }
  explain *x = calloc(1, sizeof *x);
  TS_ASSERT(x != NULL);
  x->dir = dir;
  x->pf = malloc(sizeof *x->pf);
  TS_ASSERT(x->pf != NULL);
  if (read_result(x, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    free_explain(x);
    free(x);
    return TS_ARGS_EXIT_INPUT;
  }
  const ts_workload *w = &x->wl;

  /* The losses, largest first; unused memory last. */
  static const struct {
    ts_category category;
    enum loss_kind kind;
  } timed[] = {{TS_CAT_BUBBLE, L_BUBBLE},
               {TS_CAT_TP, L_TP},
               {TS_CAT_PP, L_PP},
               {TS_CAT_DP, L_DP},
               {TS_CAT_EP, L_EP},
               {TS_CAT_CP, L_CP},
               {TS_CAT_RECOMPUTE, L_RECOMPUTE},
               {TS_CAT_IDLE, L_IDLE},
               {TS_CAT_OPTIMIZER, L_OPTIMIZER}};
  enum { N_TIMED = sizeof timed / sizeof timed[0] };
  for (int i = 0; i < N_TIMED; i++) {
    double s = x->breakdown_s[timed[i].category];
    if (s >= MIN_LOSS_SHARE * x->iteration_s)
      x->losses[x->n_losses++] = (loss){.kind = timed[i].kind, .seconds = s};
  }
  for (int i = 1; i < x->n_losses; i++)
    for (int k = i; k > 0 && x->losses[k - 1].seconds < x->losses[k].seconds; k--) {
      loss tmp = x->losses[k];
      x->losses[k] = x->losses[k - 1];
      x->losses[k - 1] = tmp;
    }
  if (x->n_losses > MAX_SHOWN)
    x->n_losses = MAX_SHOWN;
  double peak = ts_memory_peak(w, NULL);
  if (peak < (1 - MIN_FREE_SHARE) * x->pf->gpu.hbm_bytes)
    x->losses[x->n_losses++] = (loss){.kind = L_MEMORY};
  for (int i = 0; i < x->n_losses; i++) {
    describe(x, &x->losses[i]);
    propose(x, &x->losses[i]);
  }

  /* Estimates of the run's layout and of every change that fits, then the best change of each
   * loss (when it helps) simulated at the run's fidelity. */
  int *points = malloc((size_t)(x->n_changes + 1) * sizeof *points);
  TS_ASSERT(points != NULL);
  int n = 0;
  points[n++] = 0;
  for (int i = 0; i < x->n_changes; i++)
    if (x->changes[i].state == C_OK)
      points[n++] = i + 1;
  play(x, points, n, true, jobs, quiet);
  if (x->base_estimate_s <= 0) {
    fprintf(stderr, "trainsim: error: estimating the run's own layout failed: %s\n",
            x->base_failure);
    free(points);
    free_explain(x);
    free(x);
    return 1;
  }
  n = 0;
  if (!x->same_binary && simulate > 0)
    points[n++] = 0; /* another trainsim wrote result.json: compare with this one's run */
  for (int i = 0; i < x->n_losses; i++) {
    loss *l = &x->losses[i];
    sort_changes(x, l);
    for (int k = 0, taken = 0; k < l->n_changes && taken < simulate; k++) {
      const change *c = &x->changes[l->changes[k]];
      if (c->state != C_OK || !(c->estimate_s > 0))
        continue;
      taken++;
      bool listed = false;
      for (int q = 0; q < n; q++)
        listed = listed || points[q] == l->changes[k] + 1;
      if (!listed)
        points[n++] = l->changes[k] + 1;
    }
  }
  if (n > 0)
    play(x, points, n, false, jobs, quiet);
  free(points);
  bool resimulated = !x->same_binary && simulate > 0;
  if (resimulated && !(x->base_simulated_s > 0)) {
    fprintf(stderr, "trainsim: error: simulating the run's own layout again failed: %s\n",
            x->base_failure);
    free_explain(x);
    free(x);
    return 1;
  }
  x->compare_s = resimulated ? x->base_simulated_s : x->iteration_s;
  double compare_s = x->compare_s;
  for (int i = 0; i < x->n_losses; i++)
    sort_changes(x, &x->losses[i]);

  printf("trainsim explain: %s on %ld x %s (%s)\n", w->name, w->n_gpus, x->pf->gpu.model,
         x->pf->name);
  long m = ts_workload_microbatches(w);
  printf("  TP %ld x CP %ld x PP %ld x DP %ld, %s, %ld microbatch%s of %ld per pipeline, "
         "recompute %s, ZeRO-%d\n",
         w->tp, w->cp, w->pp, w->dp, ts_schedule_names[w->schedule], m, m == 1 ? "" : "es",
         w->micro_batch, ts_recompute_names[w->recompute], w->zero_stage);
  char text[1024];
  int len =
      snprintf(text, sizeof text,
               "Iteration %.4g s at fidelity %s: computing %.4g s (%.1f%%), the rest lost "
               "as below.",
               x->iteration_s, ts_fidelity_names[x->a.fidelity], x->breakdown_s[TS_CAT_COMPUTE],
               100 * x->breakdown_s[TS_CAT_COMPUTE] / x->iteration_s);
  if (resimulated)
    len += snprintf(text + len, sizeof text - (size_t)len,
                    " result.json comes from another trainsim build: this one simulates the "
                    "run in %.4g s, which the simulated changes are compared with.",
                    compare_s);
  len += snprintf(text + len, sizeof text - (size_t)len,
                  " Each change is estimated with the analytic fidelity (no contention), against "
                  "its %.4g s for this layout",
                  x->base_estimate_s);
  if (simulate == 1)
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "; the best of each loss is then simulated at the run's fidelity");
  else if (simulate > 1)
    len +=
        snprintf(text + len, sizeof text - (size_t)len,
                 "; the %ld best of each loss are then simulated at the run's fidelity", simulate);
  double missed = 1 - x->base_estimate_s / compare_s;
  if (simulate > 0 && (missed > 0.1 || missed < -0.1))
    snprintf(text + len, sizeof text - (size_t)len,
             ". The estimate misses %.0f%% of this run's time (contention, which only the "
             "simulation has): trust the simulated figures, and read the estimates as a ranking "
             "at best.",
             100 * missed);
  else
    snprintf(text + len, sizeof text - (size_t)len, ".");
  print_wrapped(2, text);
  if (x->n_losses == 0)
    printf("\nNo loss takes %.0f%% of the iteration or more, and memory is %.0f%% full.\n",
           100 * MIN_LOSS_SHARE, 100 * peak / x->pf->gpu.hbm_bytes);
  for (int i = 0; i < x->n_losses; i++)
    print_loss(x, i + 1, &x->losses[i]);
  free_explain(x);
  free(x);
  return 0;
}
