/* explain: see explain.h. */
#include "explain.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/cost.h"
#include "../workloads/layout.h"
#include "../workloads/memory.h"
#include "../workloads/text.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
/* A loss is explained when it takes at least this share of the iteration; at most MAX_SHOWN. */
#define MIN_LOSS_SHARE 0.01
#define MAX_SHOWN 5
/* Unused memory is a loss worth naming from this share of HBM on. */
#define MIN_FREE_SHARE 0.2

static const char *const loss_titles[] = {"pipeline bubble",
                                          "exposed tensor-parallel communication",
                                          "exposed pipeline transfers",
                                          "exposed data-parallel gradient synchronisation",
                                          "exposed expert-parallel all-to-alls",
                                          "exposed context-parallel ring exchange",
                                          "recomputation",
                                          "idle time",
                                          "optimizer step",
                                          "the slowest GPU",
                                          "interruptions (goodput)",
                                          "mixture-of-experts load imbalance",
                                          "too few tokens an expert",
                                          "mixture-of-experts routing and permutation",
                                          "unused memory"};

/* ---- changes ---- */

/* The analysis under way: the explanation it fills and the caller's vetting of changes. */
typedef struct analysis {
  ts_explain *x;
  ts_explain_check_fn check;
  void *ctx;
} analysis;

/* Adds the change whose flags are `flags` (space-separated) to loss l, once for all losses:
 * vetted against the layout rules and memory here. */
static void add_change(const analysis *an, ts_explain_loss *l, const char *note, const char *fmt,
                       ...) {
  ts_explain *x = an->x;
  char flags[TS_EXPLAIN_MAX_TOKENS * 96];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(flags, sizeof flags, fmt, ap);
  va_end(ap);
  if (l->n_changes == TS_EXPLAIN_MAX_LOSS_CHANGES)
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
  if (x->n_changes == TS_EXPLAIN_MAX_CHANGES)
    return;
  ts_explain_change *c = &x->changes[x->n_changes];
  memset(c, 0, sizeof *c);
  char copy[sizeof flags];
  snprintf(copy, sizeof copy, "%s", flags);
  for (char *tok = strtok(copy, " "); tok != NULL && c->n_tokens < TS_EXPLAIN_MAX_TOKENS;
       tok = strtok(NULL, " "))
    snprintf(c->tokens[c->n_tokens++], sizeof c->tokens[0], "%s", tok);
  ts_text_copy(c->flags, sizeof c->flags, flags);
  snprintf(c->note, sizeof c->note, "%s", note);
  double peak = 0, usable = 0;
  if (an->check(an->ctx, c, &peak, &usable) != 0)
    return; /* breaks a layout rule: not a change to offer */
  c->peak_gib = peak / GIB;
  c->usable_gib = usable / GIB;
  c->is_no_fit = peak > usable;
  l->changes[l->n_changes++] = x->n_changes++;
}

/* A layout of the same GPUs with tp, pp and cp (dp follows), virtual stages reset where the
 * pipeline goes. */
static void add_layout(const analysis *an, ts_explain_loss *l, long tp, long pp, long cp,
                       const char *note) {
  const ts_workload *w = an->x->wl;
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
  add_change(an, l, note, "%s", flags + 1);
}

/* Every NIC at twice its bandwidth: the network what-if of a communication loss (the
 * platform's NICs are alike: the first one's bandwidth, doubled, for all). */
static void add_faster_nics(const analysis *an, ts_explain_loss *l) {
  const ts_explain *x = an->x;
  for (int i = 1; i < x->n_nics; i++)
    if (x->nic_Bps[i] != x->nic_Bps[0])
      return;
  if (x->n_nics > 0)
    add_change(an, l, "hardware: every NIC at twice its bandwidth",
               "--set node.nics[*].bandwidth=%.6gGBps", 2 * x->nic_Bps[0] / 1e9);
}

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

/* DeepSpeed's ZeRO-3 (not FSDP), and a release of it before 0.6.0 (stack.h). */
static bool deepspeed3(const ts_workload *w) {
  return w->zero_stage == 3 && w->dp * w->cp > 1 && !w->is_fsdp;
}
static bool ds_synced(const ts_workload *w) {
  return deepspeed3(w) && ts_deepspeed_zero3_path(w->deepspeed_version) != TS_DEEPSPEED_COALESCED;
}

/* What selective recomputation redoes, in words: the attention core unless recompute_modules
 * names others (Megatron-Core's). */
static void recomputed_parts(const ts_workload *w, char *out, size_t size) {
  static const char *const words[] = {"the attention core", "the experts' activation function",
                                      "the norms", "MLA's latent norms and up-projections"};
  unsigned modules = w->is_recompute_modules_set ? w->recompute_modules : TS_RECOMPUTE_CORE_ATTN;
  int n = 0, total = 0;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    total += (int)((modules >> i) & 1u);
  out[0] = '\0';
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    if (!((modules >> i) & 1u))
      continue;
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s%s",
             n == 0           ? ""
             : n + 1 == total ? " and "
                              : ", ",
             words[i]);
    n++;
  }
}

static void describe(const ts_explain *x, ts_explain_loss *l) {
  const ts_workload *w = x->wl;
  char *out = l->mechanism;
  size_t size = sizeof l->mechanism;
  double share = 100 * l->seconds / x->iteration_s;
  long m = ts_workload_microbatches(w), p = w->pp, v = w->virtual_stages;
  double nic_gbps = 0;
  for (int i = 0; i < x->n_nics; i++)
    nic_gbps += x->nic_Bps[i] / 1e9 / x->gpus_per_node;
  char message[32];
  format_bytes((double)w->micro_batch * (double)(w->model.seq / w->cp) * (double)w->model.hidden *
                   ts_cost_elem_bytes(w->precision),
               message, sizeof message);
  switch (l->kind) {
  case TS_EXPLAIN_BUBBLE:
    if (w->schedule == TS_SCHED_DUALPIPE) {
      snprintf(out, size,
               "DualPipe feeds half the microbatches from each end of the %ld stages and runs "
               "one microbatch's forward with another's backward: its bubble is (p/2 - 1)(F&B + "
               "B - 3W) (DeepSeek-V3 technical report, Table 2), over %ld microbatches; here "
               "%.3g s, %.1f%%, the mean over stages.",
               p, m, l->seconds, share);
      break;
    }
    if (w->schedule == TS_SCHED_ZB_H1) {
      snprintf(out, size,
               "The pipeline fills and drains once an iteration. zb-h1 fills the drain with "
               "the weight-gradient passes each stage deferred, which leaves (p - 1)(T_F + T_B "
               "- T_W) of 1F1B's (p - 1)(T_F + T_B + T_W) (Qi et al., ICLR 2024), over %ld "
               "stages and %ld microbatches; here %.3g s, %.1f%%, the mean over stages.",
               p, m, l->seconds, share);
      break;
    }
    snprintf(out, size,
             "The pipeline fills and drains once an iteration: the first stage's last backward "
             "pass waits for all %ld stages, and the last stage's first forward pass for all "
             "the stages before it. With %ld microbatches per pipeline%s the idealised bubble "
             "is (p - 1) / (v m + p - 1) = %.1f%% of the iteration (Narayanan et al., SC'21); "
             "here %.3g s, %.1f%%, the mean over stages.",
             p, m, v > 1 ? " over the interleaved schedule's chunks" : "",
             100.0 * (double)(p - 1) / (double)(v * m + p - 1), l->seconds, share);
    break;
  case TS_EXPLAIN_TP: {
    long nodes = nodes_spanned(w, x->gpus_per_node, 't');
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
  case TS_EXPLAIN_PP:
    snprintf(out, size,
             "Each microbatch crosses the %ld stage boundaries forward (its activations, %s%s) "
             "and backward (their gradients); a stage that has nothing else to do waits for "
             "the transfer. Here %.3g s, %.1f%%.",
             p - 1, message,
             w->pipeline_scatter_gather ? ", 1/tp of it per tensor rank then an all-gather" : "",
             l->seconds, share);
    break;
  case TS_EXPLAIN_DP: {
    if (deepspeed3(w)) {
      char release[32] = "its newest release";
      if (w->deepspeed_version > 0)
        ts_stack_version_text(w->deepspeed_version, release, sizeof release);
      snprintf(out, size,
               "DeepSpeed's ZeRO-3 (%s%s) gathers every weight over the %ld %s ranks before "
               "each use, in the forward and again in the backward pass, and reduce-scatters the "
               "gradients%s. Here %.3g s, %.1f%%.",
               w->deepspeed_version > 0 ? "release " : "", release, w->dp * w->cp,
               w->cp > 1 ? "data- and context-parallel" : "data-parallel",
               !ds_synced(w) ? " in buckets as the backward pass runs"
               : w->contiguous_gradients
                   ? ": before 0.6.0 each gather follows a device synchronisation, each "
                     "parameter's gradient is reduced apart, and the host loops over the ranks "
                     "in every list collective"
                   : ": before 0.6.0 each gather follows a device synchronisation, and without "
                     "contiguous gradients each bucket of gradients is flattened and "
                     "all-reduced whole, twice a reduce-scatter's bytes",
               l->seconds, share);
      break;
    }
    if (w->zero_stage == 3 && w->is_fsdp && w->dp * w->cp > 1) {
      snprintf(out, size,
               "PyTorch's FSDP%s gathers each layer's weights over the %ld data-%sparallel "
               "ranks before %s and reduce-scatters its gradients after its backward, under the "
               "neighbouring layers' compute; %s. What shows is those copies and whatever the "
               "compute does not hide of the collectives. Here %.3g s, %.1f%%.",
               w->fsdp_version == 1 ? "1 (FullyShardedDataParallel)" : "2 (fully_shard)",
               w->dp * w->cp, w->cp > 1 ? " and context-" : "",
               w->fsdp_keeps_weights       ? "its first forward (kept through the iteration)"
               : w->fsdp_keeps_to_backward ? "its forward (kept to its backward)"
                                           : "its forward and again before its backward",
               w->fsdp_version == 1
                   ? "its post-backward stream builds, casts and pre-divides each layer's flat "
                     "gradient beside the next layer's GEMMs, which hide little of it"
                   : "it copies each gather's weights out of its flat buffer and the gradients "
                     "into the reduce-scatter's, on the compute stream",
               l->seconds, share);
      break;
    }
    double params = ts_cost_stage_params(w, 0);
    long nodes = nodes_spanned(w, x->gpus_per_node, 'd');
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
  case TS_EXPLAIN_EP:
    snprintf(out, size,
             "Each mixture-of-experts layer sends every token to its %ld experts over the %ld "
             "expert-parallel ranks and back (dispatch and combine all-to-alls), in the forward "
             "and backward passes; the experts wait for their tokens. Here %.3g s, %.1f%%.",
             w->model.moe_topk, w->ep, l->seconds, share);
    break;
  case TS_EXPLAIN_CP:
    snprintf(out, size,
             "Ring attention passes keys and values around the %ld context-parallel ranks; a "
             "step whose transfer outlasts its attention block leaves the rest exposed. Here "
             "%.3g s, %.1f%%.",
             w->cp, l->seconds, share);
    break;
  case TS_EXPLAIN_RECOMPUTE: {
    char parts[160];
    if (w->recompute == TS_RECOMPUTE_FULL)
      snprintf(parts, sizeof parts, "every layer's forward pass");
    else if (w->recompute == TS_RECOMPUTE_OP)
      snprintf(parts, sizeof parts,
               "each layer's norms, rotary embedding, wk, wo, w3 and activation (all but "
               "the attention and every second GEMM)");
    else
      recomputed_parts(w, parts, sizeof parts);
    snprintf(out, size,
             "%s recomputation runs %s again during the backward pass so that fewer "
             "activations are stored: %.3g s, %.1f%% of the iteration, to save memory.",
             w->recompute == TS_RECOMPUTE_FULL ? "Full"
             : w->recompute == TS_RECOMPUTE_OP ? "torchtitan's op-level"
                                               : "Selective",
             parts, l->seconds, share);
    break;
  }
  case TS_EXPLAIN_IDLE: {
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
  case TS_EXPLAIN_OPTIMIZER:
    snprintf(out, size,
             "The optimizer step (Adam) reads and writes every parameter's states once an "
             "iteration, bound by HBM bandwidth: %.3g s, %.1f%%.",
             l->seconds, share);
    break;
  case TS_EXPLAIN_SLOWEST_GPU:
    snprintf(out, size,
             "A synchronous step runs at its slowest GPU's pace: every collective and pipeline "
             "hand-off waits for it. With sustained speeds spread by %.2f%% across the machine's "
             "GPUs (gpu.speed_spread), the slowest of %ld is expected %.2f%% slower than a "
             "typical one: %.3g s, %.1f%% of the iteration. Screening out slow GPUs (or nodes) "
             "before a long job recovers it.",
             100 * x->speed_spread, w->n_gpus, 100 * (x->slowest_gpu_slowdown - 1), l->seconds,
             share);
    break;
  case TS_EXPLAIN_GOODPUT: {
    const ts_reliability *r = x->reliability;
    if (!(r->goodput > 0)) {
      snprintf(out, size,
               "Parts fail: %.3g interruptions a day on the job's %ld GPUs and %ld nodes, one "
               "every %.3g s (the platform's reliability.failure_rates), while a checkpoint "
               "interval is %.3g s and a restart %.3g s: no interval completes, goodput 0. "
               "Faster restarts or fewer parts per job are needed before anything trains.",
               r->interruptions_per_day, r->parts[TS_PART_GPU], r->parts[TS_PART_NODE], r->mtbf_s,
               r->checkpoint_interval_s, r->restart_s + r->checkpoint_read_s);
      break;
    }
    snprintf(out, size,
             "Parts fail: %.3g interruptions a day on the job's %ld GPUs and %ld nodes, one every "
             "%.3g h (the platform's reliability.failure_rates). Each costs a restart of %.3g "
             "min with the checkpoint read back (%.3g s), and the work since the last checkpoint, "
             "written every %ld iterations (%.3g min) in %.3g s. Goodput %.2f%%: %.3g s of wall "
             "time lost per iteration, %.1f%% of one (restarts %.1f%%, rework %.1f%%, "
             "checkpoints %.1f%%). Faster restarts, asynchronous checkpoints (checkpoint.async) or "
             "fewer "
             "parts per job recover it.",
             r->interruptions_per_day, r->parts[TS_PART_GPU], r->parts[TS_PART_NODE],
             r->mtbf_s / 3600, r->restart_s / 60, r->checkpoint_read_s,
             r->checkpoint_interval_iterations, r->checkpoint_interval_s / 60,
             r->checkpoint_write_s, 100 * r->goodput, l->seconds, share,
             100 * r->lost_restarts / r->goodput, 100 * r->lost_rework / r->goodput,
             100 * r->lost_checkpoints / r->goodput);
    break;
  }
  case TS_EXPLAIN_MOE_IMBALANCE:
    snprintf(out, size,
             "The router does not spread tokens evenly: the busiest expert gets %.2fx the mean "
             "(model.moe_load_imbalance%s), and every expert-parallel rank waits for it in each "
             "MoE layer, forward and backward. What the extra tokens cost on the slowest rank: "
             "%.3g s, %.1f%% of the iteration.",
             ts_workload_moe_token_factor(w),
             w->moe_capacity_factor > 0 ? ", capped by the capacity factor" : "", l->seconds,
             share);
    break;
  case TS_EXPLAIN_MOE_SMALL_GROUPS: {
    double tokens = (double)(w->micro_batch * ts_workload_local_seq(w)) / (double)w->tp *
                    (double)w->model.moe_topk * (double)w->ep / (double)w->model.n_experts;
    snprintf(out, size,
             "Each expert receives about %.0f tokens a microbatch: its %s read all %ld local "
             "experts' weights for little arithmetic, and their weight gradients accumulate "
             "expert by expert. Against one GEMM over all the rank's routed tokens (one expert's "
             "weights), the experts take %.3g s more per iteration, %.1f%%. More tokens a "
             "microbatch (a larger micro-batch) fill the groups.",
             tokens, w->moe_grouped_gemm ? "grouped GEMMs" : "GEMMs, one expert after another,",
             w->model.n_experts / w->ep, l->seconds, share);
    break;
  }
  case TS_EXPLAIN_MOE_ROUTING:
    snprintf(out, size,
             "The router (gate GEMM, scores, top-%ld) and the permutation of each token's %ld "
             "copies to their experts and back (sort, gather, the weighted scatter-add, and their "
             "backward passes) are memory-bound and do no model FLOPs: %.3g s per iteration, "
             "%.1f%%. Fused permutation kernels (Megatron-Core's moe_permute_fusion; not "
             "modelled here) cut the passes over the copies.",
             w->model.moe_topk, w->model.moe_topk, l->seconds, share);
    break;
  case TS_EXPLAIN_MEMORY: {
    long stage = 0;
    double peak = ts_memory_peak(w, &stage), hbm = x->usable_bytes;
    snprintf(out, size,
             "The fullest GPU (stage %ld) holds %.2f GiB of its %.2f GiB: %.2f GiB (%.0f%%) "
             "unused, room for larger micro-batches, less recomputation or less model "
             "parallelism.",
             stage, peak / GIB, hbm / GIB, (hbm - peak) / GIB, 100 * (hbm - peak) / hbm);
    break;
  }
  }
}

/* Whether the run's layout could take dualpipe as it is (DualPipe.step's conditions and what
 * trainsim models with it). */
static bool dualpipe_fits(const ts_workload *w) {
  long m = ts_workload_microbatches(w);
  return w->schedule != TS_SCHED_DUALPIPE && w->pp >= 2 && w->pp % 2 == 0 && m % 2 == 0 &&
         m >= 2 * w->pp && w->virtual_stages == 1 && w->zero_stage < 2 && w->dp_bucket_bytes <= 0 &&
         !w->overlap_param_gather && !w->account_embedding && !w->account_loss &&
         w->n_layout_stages == 0;
}

/* The changes that address loss l. */
static void propose(const analysis *an, ts_explain_loss *l) {
  const ts_explain *x = an->x;
  const ts_workload *w = x->wl;
  long t = w->tp, p = w->pp, c = w->cp, b = w->micro_batch, v = w->virtual_stages;
  switch (l->kind) {
  case TS_EXPLAIN_BUBBLE:
    if (w->schedule == TS_SCHED_1F1B && w->zero_stage < 2)
      add_change(an, l,
                 "zero-bubble H1: the weight gradients fill the drain (Qi et al., ICLR 2024); "
                 "memory: 1F1B's and the deferred weight gradients' inputs, much more under "
                 "full recomputation",
                 "--schedule zb-h1");
    if (w->schedule == TS_SCHED_1F1B && w->zero_stage < 2 && w->pp > 1 &&
        w->model.n_layers % (2 * p) == 0 && w->first_stage_layers == 0 &&
        w->last_stage_layers == 0 && !w->account_embedding && !w->account_loss &&
        w->n_layout_stages == 0)
      add_change(an, l,
                 "zero-bubble V: two chunks a rank down and back up, the weight gradients "
                 "filling the bubbles, at 1F1B's activation memory (Qi et al.)",
                 "--schedule zb-v");
    if (dualpipe_fits(w))
      add_change(an, l,
                 "DualPipe: half the microbatches from each end, a bubble of about (p/2 - 1) "
                 "passes, at two copies of the weights (DeepSeek-V3)",
                 "--schedule dualpipe");
    /* the interleaved schedule: the first two chunk counts that split the layers evenly */
    for (long v2 = v + 1, tried = 0; v2 <= 8 * v && tried < 2; v2++)
      if (w->model.n_layers % (p * v2) == 0) {
        add_change(an, l, "the interleaved schedule: the bubble shrinks by the chunks per stage",
                   "--virtual-stages %ld", v2);
        tried++;
      }
    if (b > 1)
      add_change(an, l, "twice the microbatches per pipeline, each half as large",
                 "--micro-batch-size %ld", b / 2);
    add_layout(an, l, t, p / 2, c, "half the pipeline stages, twice the data parallelism");
    add_layout(an, l, 2 * t, p / 2, c, "half the stages, twice the tensor parallelism");
    break;
  case TS_EXPLAIN_TP:
    add_layout(an, l, t / 2, 2 * p, c, "half the tensor parallelism, twice the stages");
    add_layout(an, l, t / 2, p, c, "half the tensor parallelism, twice the data parallelism");
    if (!w->tp_comm_overlap)
      add_change(an, l, "sequence parallelism with its collectives under the GEMMs",
                 "%s--set parallelism.tp_comm_overlap=true",
                 w->sequence_parallel ? "" : "--sequence-parallel ");
    if (nodes_spanned(w, x->gpus_per_node, 't') > 1)
      add_faster_nics(an, l);
    break;
  case TS_EXPLAIN_PP:
    if (t > 1 && !w->pipeline_scatter_gather)
      add_change(an, l, "1/tp of each activation per tensor rank, then an all-gather",
                 "--scatter-gather");
    add_layout(an, l, t, p / 2, c, "half the pipeline stages, twice the data parallelism");
    add_faster_nics(an, l);
    break;
  case TS_EXPLAIN_DP:
    if (ds_synced(w)) {
      if (!w->contiguous_gradients)
        add_change(an, l,
                   "contiguous gradients: each parameter's gradient reduce-scattered, half the "
                   "all-reduce's bytes",
                   "--set stack.contiguous_gradients=true");
      add_change(an, l, "DeepSpeed 0.6.0's ZeRO-3 (PR #1453): no syncs, bucketed reductions",
                 "--set stack.deepspeed_version=0.6.0");
    } else if (w->dp_bucket_bytes <= 0 && !deepspeed3(w))
      add_change(an, l,
                 "gradients reduced in buckets during the backward pass (Megatron-LM's "
                 "--overlap-grad-reduce)",
                 "--dp-bucket-size 160MB");
    if (w->zero_stage >= 1 && !w->overlap_param_gather && !deepspeed3(w))
      add_change(an, l, "buckets, and the weights' all-gather under the next forward pass",
                 "--dp-bucket-size %.0fMB --set parallelism.overlap_param_gather=true",
                 w->dp_bucket_bytes > 0 ? w->dp_bucket_bytes / 1e6 : 160.0);
    add_layout(an, l, t, 2 * p, c, "half the data parallelism, twice the stages");
    add_faster_nics(an, l);
    break;
  case TS_EXPLAIN_EP:
    if (dualpipe_fits(w))
      add_change(an, l,
                 "DualPipe: each microbatch's all-to-alls under another's compute, at two copies "
                 "of the weights (DeepSeek-V3)",
                 "--schedule dualpipe");
    if (w->ep > 1)
      add_change(an, l, "half the expert parallelism (more experts per GPU)", "--ep %ld",
                 w->ep / 2);
    add_faster_nics(an, l);
    break;
  case TS_EXPLAIN_CP:
    add_layout(an, l, t, p, c / 2, "half the context parallelism, twice the data parallelism");
    add_layout(an, l, 2 * t, p, c / 2, "half the context parallelism, twice the tensor");
    break;
  case TS_EXPLAIN_RECOMPUTE:
    if (w->recompute == TS_RECOMPUTE_FULL)
      add_change(an, l, "recompute only the attention core", "--recompute selective");
    if (w->recompute == TS_RECOMPUTE_FULL && ts_framework_is_pytorch(w->framework))
      add_change(an, l,
                 "torchtitan's op-level policy: keep every second GEMM's output and the "
                 "attention's, recompute the rest",
                 "--recompute op");
    add_change(an, l, "store every activation", "--recompute none");
    if (w->n_gpus % (t * 2 * p * c) == 0)
      add_change(an, l, "twice the stages (fewer layers per GPU) storing every activation",
                 "--pp %ld --dp %ld --recompute none", 2 * p, w->n_gpus / (t * 2 * p * c));
    break;
  case TS_EXPLAIN_IDLE: {
    add_layout(an, l, t, p / 2, c, "half the pipeline stages: the extra layers weigh less");
    /* Fewer layers beside the embedding or the output layer (Megatron-LM's
     * --decoder-first/last-pipeline-num-layers); the stages between split the rest evenly. */
    long per = w->model.n_layers / p;
    for (long first = per; first >= per - 2 && first >= 1; first--)
      for (long last = per; last >= per - 2 && last >= 1; last--) {
        long rest = w->model.n_layers - first - last;
        if ((first == per && last == per) || v > 1 || p < 2 ||
            (p > 2 ? rest % (p - 2) != 0 || rest / (p - 2) < 1 : rest != 0))
          continue;
        add_change(an, l, "fewer layers on the stages with the embedding or the output",
                   "--first-stage-layers %ld --last-stage-layers %ld", first, last);
      }
    break;
  }
  case TS_EXPLAIN_OPTIMIZER:
    break;
  case TS_EXPLAIN_SLOWEST_GPU:
    add_change(an, l, "GPUs alike (the slow ones screened out): what the spread costs",
               "--set gpu.speed_spread=0");
    break;
  case TS_EXPLAIN_GOODPUT: /* changes re-simulate an iteration, which failures do not change */
    break;
  case TS_EXPLAIN_MOE_IMBALANCE:
    add_change(an, l,
               "even routing (what balancing the router, e.g. with an expert bias, is worth)",
               "--set model.moe_load_imbalance=1");
    if (w->moe_capacity_factor == 0 || w->moe_capacity_factor > 1.25)
      add_change(an, l, "a capacity of 1.25x the mean tokens an expert, the rest dropped",
                 "--set model.moe_expert_capacity_factor=1.25");
    break;
  case TS_EXPLAIN_MOE_SMALL_GROUPS:
    add_change(an, l, "twice the micro-batch (twice the tokens an expert)",
               "--micro-batch-size %ld", 2 * b);
    if (!w->moe_grouped_gemm)
      add_change(an, l, "the local experts' GEMMs as grouped GEMMs",
                 "--set model.moe_grouped_gemm=true");
    break;
  case TS_EXPLAIN_MOE_ROUTING:
    break;
  case TS_EXPLAIN_MEMORY:
    add_change(an, l, "twice the micro-batch (half the microbatches)", "--micro-batch-size %ld",
               2 * b);
    if (w->recompute != TS_RECOMPUTE_NONE)
      add_change(an, l, "less recomputation",
                 w->recompute == TS_RECOMPUTE_FULL ? "--recompute selective" : "--recompute none");
    add_layout(an, l, t / 2, p, c, "half the tensor parallelism, twice the data parallelism");
    break;
  }
}

/* Inserts a loss of `seconds` in order when it takes at least MIN_LOSS_SHARE. */
static void insert_loss(ts_explain *x, ts_explain_loss_kind kind, double seconds) {
  if (!(seconds >= MIN_LOSS_SHARE * x->iteration_s))
    return;
  int k = x->n_losses++;
  for (; k > 0 && x->losses[k - 1].seconds < seconds; k--)
    x->losses[k] = x->losses[k - 1];
  x->losses[k] = (ts_explain_loss){.kind = kind, .seconds = seconds};
}

/* A MoE layer's time per iteration on a stage of `layers` MoE layers (its router to its
 * unpermutation and shared expert; the forward twice under full recomputation). */
static double moe_iteration_s(const ts_workload *w, const ts_gpu *gpu, long layers,
                              double *routing_s) {
  ts_moe_cost c;
  ts_cost_moe(w, gpu, &c);
  double again = w->recompute == TS_RECOMPUTE_FULL ? 2 : 1;
  double passes = (double)layers * (double)ts_workload_microbatches(w);
  if (routing_s != NULL)
    *routing_s = passes * ((c.router.time_s + c.unpermute.time_s) * again + c.router_bwd.time_s +
                           c.unpermute_bwd.time_s);
  return passes *
         ((c.router.time_s + c.experts.time_s + c.unpermute.time_s + c.shared.time_s) * again +
          c.router_bwd.time_s + c.experts_bwd.time_s + c.unpermute_bwd.time_s +
          c.shared_bwd.time_s);
}

/* A MoE model's losses inside its layers' compute, per iteration on the stage with the most MoE
 * layers, as the layers' time with and without each: the busiest expert's tokens beyond the
 * mean (against even routing); the experts' time beyond one GEMM over all their tokens (the
 * same workload with one local expert); the router and permutations, where the GPU bounds the
 * layers (where the host does, their kernels cost nothing more than its CPU time). */
static void moe_losses(ts_explain *x) {
  const ts_workload *w = x->wl;
  if (x->gpu == NULL || w->model.n_experts == 0)
    return;
  long layers = 0;
  for (long s = 0; s < w->pp; s++) {
    long n = ts_workload_stage_moe_layers(w, s);
    layers = n > layers ? n : layers;
  }
  ts_workload even = *w, flat;
  even.moe_load_imbalance = 1;
  even.moe_capacity_factor = 0;
  even.moe_pad_to_capacity = false;
  flat = even;
  flat.model.n_experts = w->ep; /* one local expert: one GEMM over the rank's routed tokens */
  ts_gpu gpu_only = *x->gpu; /* GPU time alone, the host's figures left out */
  gpu_only.software = (ts_software){0};
  double routing = 0;
  double with_host = moe_iteration_s(w, x->gpu, layers, NULL);
  double gpu_s = moe_iteration_s(w, &gpu_only, layers, &routing);
  insert_loss(x, TS_EXPLAIN_MOE_IMBALANCE,
              with_host - moe_iteration_s(&even, x->gpu, layers, NULL));
  insert_loss(x, TS_EXPLAIN_MOE_SMALL_GROUPS,
              moe_iteration_s(&even, x->gpu, layers, NULL) -
                  moe_iteration_s(&flat, x->gpu, layers, NULL));
  insert_loss(x, TS_EXPLAIN_MOE_ROUTING, with_host > gpu_s * (1 + 1e-9) ? 0 : routing);
}

void ts_explain_analyse(ts_explain *x, ts_explain_check_fn check, void *ctx) {
  static const struct {
    ts_category category;
    ts_explain_loss_kind kind;
  } timed[] = {{TS_CAT_BUBBLE, TS_EXPLAIN_BUBBLE},
               {TS_CAT_TP, TS_EXPLAIN_TP},
               {TS_CAT_PP, TS_EXPLAIN_PP},
               {TS_CAT_DP, TS_EXPLAIN_DP},
               {TS_CAT_EP, TS_EXPLAIN_EP},
               {TS_CAT_CP, TS_EXPLAIN_CP},
               {TS_CAT_RECOMPUTE, TS_EXPLAIN_RECOMPUTE},
               {TS_CAT_IDLE, TS_EXPLAIN_IDLE},
               {TS_CAT_OPTIMIZER, TS_EXPLAIN_OPTIMIZER}};
  enum { N_TIMED = sizeof timed / sizeof timed[0] };
  x->n_losses = x->n_changes = 0;
  for (int i = 0; i < N_TIMED; i++) {
    double s = x->breakdown_s[timed[i].category];
    if (s >= MIN_LOSS_SHARE * x->iteration_s)
      x->losses[x->n_losses++] = (ts_explain_loss){.kind = timed[i].kind, .seconds = s};
  }
  for (int i = 1; i < x->n_losses; i++)
    for (int k = i; k > 0 && x->losses[k - 1].seconds < x->losses[k].seconds; k--) {
      ts_explain_loss tmp = x->losses[k];
      x->losses[k] = x->losses[k - 1];
      x->losses[k - 1] = tmp;
    }
  /* The slowest GPU stretches all compute: its share is the compute it added. */
  double work = x->breakdown_s[TS_CAT_COMPUTE] + x->breakdown_s[TS_CAT_RECOMPUTE] +
                x->breakdown_s[TS_CAT_OPTIMIZER];
  double slowest = x->slowest_gpu_slowdown > 1 ? work * (1 - 1 / x->slowest_gpu_slowdown) : 0;
  insert_loss(x, TS_EXPLAIN_SLOWEST_GPU, slowest);
  moe_losses(x);
  /* Interruptions: the wall time beyond the useful, per iteration. */
  const ts_reliability *r = x->reliability;
  double lost = r == NULL || !r->is_modelled ? 0
                : r->goodput > 0             ? x->iteration_s * (1 / r->goodput - 1)
                                             : INFINITY;
  insert_loss(x, TS_EXPLAIN_GOODPUT, lost);
  if (x->n_losses > MAX_SHOWN)
    x->n_losses = MAX_SHOWN;
  x->peak_bytes = ts_memory_peak(x->wl, NULL);
  if (x->peak_bytes < (1 - MIN_FREE_SHARE) * x->usable_bytes)
    x->losses[x->n_losses++] = (ts_explain_loss){.kind = TS_EXPLAIN_MEMORY};
  analysis an = {x, check, ctx};
  for (int i = 0; i < x->n_losses; i++) {
    describe(x, &x->losses[i]);
    propose(&an, &x->losses[i]);
  }
}

/* ---- output ---- */

/* Words of text, wrapped at 96 columns after `indent` spaces. */
static void print_wrapped(FILE *f, int indent, const char *text) {
  int col = 0;
  const char *s = text;
  while (*s != '\0') {
    while (*s == ' ')
      s++;
    size_t n = strcspn(s, " ");
    if (n == 0)
      break;
    if (col > 0 && col + 1 + (int)n > 96) {
      fputc('\n', f);
      col = 0;
    }
    if (col == 0)
      col = fprintf(f, "%*s%.*s", indent, "", (int)n, s);
    else
      col += fprintf(f, " %.*s", (int)n, s);
    s += n;
  }
  if (col > 0)
    fputc('\n', f);
}

static void print_gain(FILE *f, const char *what, double t, double against) {
  fprintf(f, "%s %.4g s (%+.1f%%)", what, t, 100 * (t / against - 1));
}

/* A change's place in the order shown (explain.h: ts_explain_sort). */
static int change_rank(const ts_explain *x, const ts_explain_change *c, double *key) {
  if (!c->is_no_fit && c->simulated_s > 0)
    return *key = c->simulated_s / x->compare_s, 0;
  if (!c->is_no_fit && c->estimate_s > 0)
    return *key = c->estimate_s / x->base_estimate_s, 0;
  *key = c->peak_gib;
  return !c->is_no_fit ? 1 : 2;
}

static int by_outcome(const ts_explain *x, int i, int j) {
  double ki = 0, kj = 0;
  int ri = change_rank(x, &x->changes[i], &ki), rj = change_rank(x, &x->changes[j], &kj);
  if (ri != rj)
    return ri - rj;
  return (ki > kj) - (ki < kj);
}

void ts_explain_sort(const ts_explain *x, ts_explain_loss *l) {
  for (int i = 1; i < l->n_changes; i++)
    for (int k = i; k > 0 && by_outcome(x, l->changes[k - 1], l->changes[k]) > 0; k--) {
      int tmp = l->changes[k];
      l->changes[k] = l->changes[k - 1];
      l->changes[k - 1] = tmp;
    }
}

static bool helps(const ts_explain *x, const ts_explain_change *c) {
  if (c->simulated_s > 0)
    return c->simulated_s < x->compare_s;
  return c->estimate_s > 0 && c->estimate_s < x->base_estimate_s;
}

static void print_loss(FILE *f, const ts_explain *x, int rank, const ts_explain_loss *l) {
  if (l->kind == TS_EXPLAIN_MEMORY)
    fprintf(f, "\n%d. %s\n", rank, loss_titles[l->kind]);
  else if (!isfinite(l->seconds)) /* goodput 0: no iteration ever completes */
    fprintf(f, "\n%d. %s: every iteration's wall time\n", rank, loss_titles[l->kind]);
  else
    fprintf(f, "\n%d. %s: %.4g s, %.1f%% of the iteration\n", rank, loss_titles[l->kind],
            l->seconds, 100 * l->seconds / x->iteration_s);
  print_wrapped(f, 3, l->mechanism);
  int shown = 0;
  for (int k = 0; k < l->n_changes && shown < TS_EXPLAIN_SHOWN_CHANGES; k++) {
    const ts_explain_change *c = &x->changes[l->changes[k]];
    fprintf(f, "   %c) %s\n      %s\n      ", 'a' + shown++, c->flags, c->note);
    if (c->is_no_fit) {
      fprintf(f, "does not fit: %.2f GiB of %.2f GiB\n", c->peak_gib, c->usable_gib);
      continue;
    }
    if (c->estimate_s <= 0) {
      fprintf(f, "not estimated: %s\n", c->failure);
      continue;
    }
    print_gain(f, "estimate", c->estimate_s, x->base_estimate_s);
    if (c->simulated_s > 0)
      print_gain(f, ", simulated", c->simulated_s, x->compare_s);
    else if (c->failure[0] != '\0')
      fprintf(f, ", simulation failed: %s", c->failure);
    fprintf(f, "; %.2f GiB a GPU\n", c->peak_gib);
  }
  if (shown == 0)
    fprintf(f, "   (no change of the layout, schedule or network tried here addresses it)\n");
  else if (!x->changes[l->changes[0]].is_no_fit && !helps(x, &x->changes[l->changes[0]]))
    fprintf(f, "   None of these shortens the iteration: here this loss is the price of the "
               "layout.\n");
}

void ts_explain_print(FILE *f, const ts_explain *x, long simulated) {
  const ts_workload *w = x->wl;
  fprintf(f, "trainsim explain: %s on %ld x %s (%s)\n", w->name, w->n_gpus, x->gpu_model,
          x->platform_name);
  long m = ts_workload_microbatches(w);
  fprintf(f,
          "  TP %ld x CP %ld x PP %ld x DP %ld, %s, %ld microbatch%s of %ld per pipeline, "
          "recompute %s, ZeRO-%d\n",
          w->tp, w->cp, w->pp, w->dp, ts_schedule_names[w->schedule], m, m == 1 ? "" : "es",
          w->micro_batch, ts_recompute_names[w->recompute], w->zero_stage);
  char text[1024];
  int len = snprintf(text, sizeof text,
                     "Iteration %.4g s at fidelity %s: computing %.4g s (%.1f%%), the rest lost "
                     "as below.",
                     x->iteration_s, x->fidelity, x->breakdown_s[TS_CAT_COMPUTE],
                     100 * x->breakdown_s[TS_CAT_COMPUTE] / x->iteration_s);
  if (x->is_resimulated)
    len += snprintf(text + len, sizeof text - (size_t)len,
                    " result.json comes from another trainsim build: this one simulates the "
                    "run in %.4g s, which the simulated changes are compared with.",
                    x->compare_s);
  len += snprintf(text + len, sizeof text - (size_t)len,
                  " Each change is estimated with the analytic fidelity (no contention), against "
                  "its %.4g s for this layout",
                  x->base_estimate_s);
  if (simulated == 1)
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "; the best of each loss is then simulated at the run's fidelity");
  else if (simulated > 1)
    len +=
        snprintf(text + len, sizeof text - (size_t)len,
                 "; the %ld best of each loss are then simulated at the run's fidelity", simulated);
  double missed = 1 - x->base_estimate_s / x->compare_s;
  if (simulated > 0 && (missed > 0.1 || missed < -0.1))
    snprintf(text + len, sizeof text - (size_t)len,
             ". The estimate misses %.0f%% of this run's time (contention, which only the "
             "simulation has): trust the simulated figures, and read the estimates as a ranking "
             "at best.",
             100 * missed);
  else
    snprintf(text + len, sizeof text - (size_t)len, ".");
  print_wrapped(f, 2, text);
  if (x->n_losses == 0)
    fprintf(f, "\nNo loss takes %.0f%% of the iteration or more, and memory is %.0f%% full.\n",
            100 * MIN_LOSS_SHARE, 100 * x->peak_bytes / x->usable_bytes);
  for (int i = 0; i < x->n_losses; i++)
    print_loss(f, x, i + 1, &x->losses[i]);
}
