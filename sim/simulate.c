/* simulate: see simulate.h. */
#include "simulate.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "../workloads/alloc.h"
#include "../workloads/ccl_memory.h"
#include "../workloads/doc.h"
#include "../workloads/layout.h"
#include "../workloads/memory.h"
#include "../workloads/step_requests.h"
#include "../workloads/variation.h"
#include "engine/ccl.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
/* Spans a timeline may hold before its file gets unwieldy (about 200 bytes each). */
#define MAX_TRACED_EVENTS 2e7

ts_simulate_opts ts_simulate_defaults(void) {
  return (ts_simulate_opts){.engine = {.fidelity = TS_FIDELITY_HYBRID, .overlap_slowdown = -1},
                            .placement = TS_PLACEMENT_CONTIGUOUS,
                            .seed = 1,
                            .periodic = TS_PERIODIC_EXACT};
}

long ts_simulate_ccl_version(const ts_platform *pf, const ts_workload *wl, ts_loc *at) {
  bool rccl = pf->ccl.library == TS_CCL_RCCL, nccl = pf->ccl.library == TS_CCL_NCCL;
  long v = rccl ? wl->rccl_version : nccl ? wl->nccl_version : 0;
  if (at != NULL)
    *at = rccl ? wl->locs.rccl_version : wl->locs.nccl_version;
  return v > 0 ? v : pf->ccl.version;
}

int ts_simulate_check_ccl_version(const ts_platform *pf, const ts_workload *wl, ts_err *err) {
  char why[320];
  ts_loc at;
  long version = ts_simulate_ccl_version(pf, wl, &at);
  if (version != pf->ccl.version && !ts_ccl_version_modelled(&pf->ccl, version, why, sizeof why))
    return ts_err_at(err, at, "%s_version: platform '%s' runs %s, and %s",
                     ts_ccl_library_names[pf->ccl.library], pf->name,
                     ts_ccl_library_names[pf->ccl.library], why);
  return 0;
}

int ts_simulate_check(const ts_platform *pf, const ts_workload *wl, ts_err *err) {
  long have = ts_platform_n_gpus(pf);
  if (wl->n_gpus > have)
    return ts_err_at(err, wl->locs.gpus,
                     "the layout needs %ld GPUs (tp %ld x pp %ld x dp %ld) but platform '%s' "
                     "has %ld (%ld nodes x %d)",
                     wl->n_gpus, wl->tp, wl->pp, wl->dp, pf->name, have, pf->n_nodes,
                     pf->gpus_per_node);
  if (pf->gpu.peak_flops_per_s[wl->precision] <= 0) {
    ts_loc loc = {pf->source_name, 0, 0, NULL, NULL};
    return ts_err_at(err, loc, "gpu.peak has no %s entry, and workload '%s' trains in %s",
                     ts_precision_names[wl->precision], wl->name,
                     ts_precision_names[wl->precision]);
  }
  /* The stack's attention is priced from the GPU's kernel table when it has one: a table
   * without that implementation's kernels cannot price it, and says which are missing. */
  static const ts_kernel_kind flash[] = {TS_KERNEL_FLASH_FWD_CAUSAL, TS_KERNEL_FLASH_BWD_CAUSAL};
  static const ts_kernel_kind unfused[] = {TS_KERNEL_BGEMM_QK, TS_KERNEL_BGEMM_AV,
                                           TS_KERNEL_SOFTMAX_FWD, TS_KERNEL_SOFTMAX_BWD};
  /* sdpa is priced from the flash tables where the table has no sdpa_* ones (workloads/stack.h) */
  const ts_kernel_kind *need = wl->flash_attention ? flash : unfused;
  int n_need = wl->flash_attention ? 2 : 4;
  for (int i = 0; pf->gpu.kernels != NULL && i < n_need; i++)
    if (!ts_kernels_has(pf->gpu.kernels, need[i]))
      return ts_err_at(err, wl->locs.attention,
                       "attention %s: the kernel table of platform '%s' (%s, %s) has no '%s' "
                       "table, so it cannot price this attention implementation on %s",
                       ts_attention_names[wl->attention], pf->name,
                       ts_kernels_path(pf->gpu.kernels), ts_kernels_device(pf->gpu.kernels),
                       ts_kernel_names[need[i]], pf->gpu.model);
  if (wl->attention == TS_ATTENTION_FLASH1 && !ts_cost_flash1_priced(&pf->gpu))
    return ts_err_at(err, wl->locs.attention,
                     "attention flash1: FlashAttention-1 is priced from its published speed beside "
                     "FlashAttention-2's on the A100 and the H100 (and the H200 and H800, the same "
                     "compute); platform '%s' has %s, for which no such figure exists",
                     pf->name, pf->gpu.model);
  /* flash-attn's GeLU-epilogue GEMMs are priced as on the A100 their authors tuned them for:
   * measured on an H100 (CUDA 13's cuBLASLt) they took 1.1-2.9x the plain GEMMs' time forward
   * (median 1.47) and 1.1-1.9x backward (1.33), more than GeLU's own kernels save there. */
  if (ts_workload_fuses(wl, TS_FUSE_DENSE_GELU_DENSE) && strstr(pf->gpu.model, "A100") == NULL)
    return ts_err_at(err, wl->locs.fusions,
                     "key 'fused_kernels': dense_gelu_dense is priced on the A100 only: on an H100 "
                     "flash-attn's GeLU-epilogue GEMMs ran 1.1-2.9x the plain GEMMs' time "
                     "(bench/device/h100_fa_fused_kernels.csv), which trainsim does not model; "
                     "platform '%s' has %s: leave the fusion out (GEMMs and GeLU priced apart)",
                     pf->name, pf->gpu.model);
  if (ts_simulate_check_ccl_version(pf, wl, err) != 0)
    return -1;
  if (wl->fp8 != TS_FP8_NONE && pf->gpu.peak_fp8_flops_per_s <= 0)
    return ts_err_at(err, wl->locs.fp8,
                     "fp8: %s needs FP8 tensor cores, but platform '%s' (%s) gives no gpu.peak.fp8",
                     ts_fp8_names[wl->fp8], pf->name, pf->gpu.model);
  if (wl->is_checkpoint_async && pf->reliability.is_set && pf->reliability.host_Bps <= 0)
    return ts_err_at(err, wl->locs.checkpoint_async,
                     "async: an asynchronous checkpoint blocks for the copy to host memory, but "
                     "platform '%s' gives no reliability.storage.host_bandwidth to price it",
                     pf->name);
  return 0;
}

/* The most loaded stage against HBM: the figures, and what would make it fit. */
static int check_memory(const ts_platform *pf, const ts_workload *wl, ts_err *err) {
  long stage = 0;
  double peak = ts_memory_peak(wl, &stage), usable = ts_usable_bytes(&pf->gpu, wl);
  ts_memory m;
  ts_memory_stage(wl, stage, &m);
  if (peak <= usable) { /* the default caching allocator replayed decides, where it can */
    ts_caching_allocator_stats st;
    if (ts_step_requests_blocks_fit(wl, usable, &st))
      return 0;
    ts_err_plain(err,
                 "out of memory from fragmentation: each GPU needs %.2f GiB of the %.2f GiB it "
                 "can allocate, but PyTorch's default caching allocator, replayed on the run's "
                 "requests, finds no free block of %.2f GiB (it holds %.2f GiB, %.2f GiB of "
                 "it in free pieces of segments in use); try stack.allocator: expandable "
                 "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), a smaller micro-batch, or "
                 "--ignore-memory",
                 peak / GIB, usable / GIB, (double)st.failed_request_bytes / GIB,
                 (double)st.failed_reserved_bytes / GIB,
                 (double)(st.failed_reserved_bytes - st.failed_allocated_bytes) / GIB);
    return TS_SIMULATE_NO_FIT;
  }
  char hints[160] = "more pipeline or tensor parallelism";
  if (wl->zero_stage == 0 && ts_workload_dp_cp(wl) > 1) /* ZeRO shards over DP x CP */
    strcat(hints, ", --zero-stage 1");
  if (wl->recompute != TS_RECOMPUTE_FULL)
    strcat(hints, ", --recompute full");
  ts_err_plain(
      err,
      "out of memory: each GPU of pipeline stage %ld (first rank: %ld) needs %.2f GiB but "
      "can allocate %.2f GiB (weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f, "
      "buffers %.2f GiB); try %s, or --ignore-memory",
      stage, ts_layout_rank(wl, (ts_coords){0, 0, stage}), m.total_bytes / GIB, usable / GIB,
      m.bytes[TS_MEM_WEIGHTS] / GIB, m.bytes[TS_MEM_GRADIENTS] / GIB,
      m.bytes[TS_MEM_OPTIMIZER] / GIB, m.bytes[TS_MEM_ACTIVATIONS] / GIB,
      m.bytes[TS_MEM_BUFFERS] / GIB, hints);
  return TS_SIMULATE_NO_FIT;
}

/* Events a run plays in about an hour on one core (docs/performance.md: aggregate plays 0.2-0.7
 * M events/s, hybrid, which merges most of them into steps, 1.5-6 M/s); a run beyond that is
 * rarely what was meant. */
static double max_events(ts_fidelity fidelity) {
  return fidelity == TS_FIDELITY_HYBRID ? 5e9 : fidelity == TS_FIDELITY_ANALYTIC ? 1e11 : 1e9;
}

/* [rank]: the rank whose timeline it shares when one pipeline plays (tensor rank 0 of replica 0
 * of its stage). */
static long *one_pipeline(const ts_workload *wl) {
  long *rep = ts_alloc((size_t)wl->n_gpus, sizeof *rep);
  for (long r = 0; r < wl->n_gpus; r++)
    rep[r] = ts_layout_rank(wl, (ts_coords){0, 0, ts_layout_coords(wl, r).pp});
  return rep;
}

/* The ranks `which` selects (simulate.h: timeline_ranks), as a new array of flags; NULL with an
 * error. Nodes (node:N) are those of the job's placement. */
static bool *select_ranks(const ts_workload *wl, const ts_job *job, int gpus_per_node,
                          const char *which, ts_err *err) {
  ts_loc flag = {NULL, 0, 0, "--timeline-ranks", NULL};
  bool *selected = ts_alloc((size_t)wl->n_gpus, sizeof(bool));
  if (which == NULL || strcmp(which, "pipeline") == 0 || strcmp(which, "replica") == 0) {
    bool replica = which != NULL && strcmp(which, "replica") == 0;
    for (long r = 0; r < wl->n_gpus; r++) {
      ts_coords c = ts_layout_coords(wl, r);
      selected[r] = c.dp == 0 && (replica || c.tp == 0);
    }
    return selected;
  }
  if (strcmp(which, "all") == 0) {
    for (long r = 0; r < wl->n_gpus; r++)
      selected[r] = true;
    return selected;
  }
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", which);
  int n_tokens = 0;
  const char *bad = NULL; /* the first token that names no rank or node of the job */
  for (char *tok = strtok(copy, ","); bad == NULL && tok != NULL; tok = strtok(NULL, ",")) {
    long r = 0, node = 0;
    bool is_node = strncmp(tok, "node:", 5) == 0, any = false;
    n_tokens++;
    if (is_node && ts_parse_long(tok + 5, &node) == 0 && node >= 0) {
      for (long k = 0; k < wl->n_gpus; k++) {
        if (ts_job_gpu(job, k) / gpus_per_node == node)
          selected[k] = any = true;
      }
    } else if (!is_node && ts_parse_long(tok, &r) == 0 && r >= 0 && r < wl->n_gpus) {
      selected[r] = any = true;
    }
    bad = any ? NULL : tok;
  }
  if (bad == NULL && n_tokens > 0)
    return selected;
  ts_err_at(err, flag,
            "expected pipeline, replica, all, or ranks from 0 to %ld and node:N (a node the job "
            "runs on) separated by commas, found '%s'",
            wl->n_gpus - 1, bad != NULL ? bad : which);
  free(selected);
  return NULL;
}

/* The ranks whose spans the engine keeps (the timeline's and the Gantt chart's), and the
 * timeline's alone into *shown; -1 with an error. */
static int traced_ranks(const ts_platform *pf, const ts_workload *wl, const ts_job *job,
                        const ts_simulate_opts *o, bool **traced, bool **shown, ts_err *err) {
  *traced = *shown = NULL;
  if (!o->is_timeline && !o->is_gantt)
    return 0;
  bool *timeline =
      select_ranks(wl, job, pf->gpus_per_node, o->is_timeline ? o->timeline_ranks : NULL, err);
  if (timeline == NULL)
    return -1;
  bool *all = select_ranks(wl, job, pf->gpus_per_node, "pipeline", err);
  for (long r = 0; r < wl->n_gpus; r++)
    all[r] = (all[r] && o->is_gantt) || (timeline[r] && o->is_timeline);
  double n_traced = ts_engine_count_events(job, all);
  if (n_traced > MAX_TRACED_EVENTS && !o->is_forced) {
    ts_loc flag = {NULL, 0, 0, "--timeline-ranks", NULL};
    ts_err_at(err, flag,
              "the timeline would hold %.3g events, more than %.0e; trace fewer ranks "
              "(e.g. --timeline-ranks 0) or --force",
              n_traced, MAX_TRACED_EVENTS);
    free(timeline);
    free(all);
    return -1;
  }
  *traced = all;
  *shown = o->is_timeline ? timeline : (free(timeline), NULL);
  return 0;
}

/* Plays job (placed) with the engine the fidelity names; the job moves into *out. */
static int play(const ts_platform *pf, ts_job *job, const ts_simulate_opts *o, const bool *traced,
                const long *representative, double n_events, ts_simulation *out, ts_err *err) {
  ts_engine_opts engine = o->engine;
  engine.is_traced = traced;
  engine.representative = representative;
  if (engine.overlap_slowdown < 0)
    engine.overlap_slowdown = pf->ccl.overlap_slowdown;
  if (o->on_start != NULL)
    o->on_start(o->start_ctx, n_events);
  ts_sim_result sim;
  if (ts_engine_run(pf, job, &engine, &sim, err) != 0) {
    ts_job_fini(job);
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->job = *job;
  out->result = sim;
  out->n_events = n_events;
  out->overlap_slowdown = engine.overlap_slowdown;
  out->slowest_gpu_slowdown = 1;
  return 0;
}

/* Every rank computes at the pace of the job's slowest GPU (variation.h): the collectives and
 * pipeline hand-offs that follow each step of compute wait for it. */
static void slow_to_slowest(ts_job *job, double slowdown) {
  if (slowdown == 1)
    return;
  for (long t = 0; t < job->n_templates; t++)
    for (int i = 0; i < job->template_len[t]; i++) {
      ts_event *ev = &job->templates[t][i];
      /* GPU work: compute, and the compute a collective holds (its time_s: a GEMM its
       * transfers overlap, dualpipe's other microbatch beside DeepEP's all-to-alls) */
      bool gpu_work = (ev->kind == TS_EV_COMPUTE && !ev->is_host) || ev->kind == TS_EV_COLL;
      if (gpu_work) {
        ev->time_s *= slowdown;
        ev->recompute_s *= slowdown;
      }
    }
}

static int simulate_workload(const ts_platform *pf, const ts_workload *wl,
                             const ts_simulate_opts *opts, ts_simulation *out, ts_err *err);

int ts_simulate_workload(const ts_platform *pf, const ts_workload *wl, const ts_simulate_opts *opts,
                         ts_simulation *out, ts_err *err) {
  if (ts_simulate_check(pf, wl, err) != 0)
    return -1;
  long version = ts_simulate_ccl_version(pf, wl, NULL);
  if (version == pf->ccl.version)
    return simulate_workload(pf, wl, opts, out, err);
  /* The stack's release of the collective library: the platform as that release tunes it. */
  ts_platform *own = ts_alloc(1, sizeof *own);
  *own = *pf;
  own->ccl.version = version;
  int rc = simulate_workload(own, wl, opts, out, err);
  free(own);
  return rc;
}

/* The job of wl, its compute at the slowest GPU's pace, its events counted against the
 * fidelity's limit and its ranks placed: 0, or -1 with an error (nothing to free). rep: the
 * analytic fidelity's one pipeline (NULL: every rank plays). */
static int placed_job(const ts_platform *pf, const ts_workload *wl, const ts_simulate_opts *opts,
                      const long *rep, ts_job *job, double *events, ts_err *err) {
  if (ts_schedule_build(wl, &pf->gpu, job, err) != 0)
    return -1;
  slow_to_slowest(job, ts_variation_slowdown(pf->gpu.speed_spread, wl->n_gpus));
  ts_fidelity fidelity = opts->engine.fidelity;
  bool *playing = NULL;
  if (rep != NULL) {
    playing = ts_alloc((size_t)wl->n_gpus, sizeof(bool));
    for (long r = 0; r < wl->n_gpus; r++)
      playing[r] = rep[r] == r;
  }
  *events = ts_engine_count_events(job, playing);
  free(playing);
  if (*events > max_events(fidelity) && !opts->is_forced) {
    ts_err_plain(err,
                 "this run would play %.3g events, more than the %.0e that finish within about "
                 "an hour at fidelity %s; use fewer microbatches or GPUs, or --force",
                 *events, max_events(fidelity), ts_fidelity_names[fidelity]);
    ts_job_fini(job);
    return -1;
  }
  job->rank_gpu = ts_placement_gpus(pf, opts->placement, (uint64_t)opts->seed, job->n_ranks);
  if (job->rank_gpu == NULL) {
    ts_err_plain(err, "--placement: platform '%s' has too few nodes for %s", pf->name,
                 ts_placement_names[opts->placement]);
    ts_job_fini(job);
    return -1;
  }
  return 0;
}

/* ---- periodic play (simulate.h) ---- */

#define PERIODIC_WINDOW 8 /* periods compared, between the two snapshots */
#define PERIODIC_SETTLE 8 /* periods left to settle before them */

/* Microbatches a pipeline plays under periodic play, or 0 where every one plays: the 1F1B
 * schedule of one chunk (its steady state is one forward and one backward a period; the
 * others' are not modelled), no FP8 (its weights' cast is priced per microbatch as a share of
 * the iteration's), no timeline or block record (they show every microbatch), SimGrid fidelities
 * (the analytic one is fast anyway), and enough microbatches to save some: asked for, at least
 * a window more than it plays; by default (TS_PERIODIC_EXACT), four times as many, so that a
 * declined attempt costs at most a quarter of the full play. */
static long periodic_microbatches(const ts_workload *wl, const ts_simulate_opts *o) {
  long played = wl->pp + PERIODIC_SETTLE + PERIODIC_WINDOW;
  bool applies = o->periodic != TS_PERIODIC_OFF && o->engine.fidelity != TS_FIDELITY_ANALYTIC &&
                 wl->schedule == TS_SCHED_1F1B && ts_workload_chunks(wl) == 1 &&
                 wl->fp8 == TS_FP8_NONE && !o->is_timeline && !o->is_gantt &&
                 !o->engine.is_recording_blocks && o->engine.on_block == NULL;
  long needed = o->periodic == TS_PERIODIC_ALWAYS ? played + PERIODIC_WINDOW : 4 * played;
  return applies && ts_workload_microbatches(wl) >= needed ? played : 0;
}

/* [stage * (PERIODIC_WINDOW + 1) + j]: the block of backward k1 + j on each stage, k1 + WINDOW
 * being stage 0's last backward before its drain (played microbatches, 1F1B). */
static int *window_blocks(const ts_workload *wl, long played) {
  long p = wl->pp, k2 = played - p, k1 = k2 - PERIODIC_WINDOW;
  int *out = ts_alloc((size_t)(p * (PERIODIC_WINDOW + 1)), sizeof(int));
  long *steps = ts_alloc((size_t)(2 * played), sizeof(long));
  for (long s = 0; s < p; s++) {
    long n = ts_schedule_order(TS_SCHED_1F1B, p, 1, s, played, steps);
    for (long i = 0; i < n; i++) {
      long k = -1 - steps[i]; /* a backward's microbatch */
      if (steps[i] < 0 && k >= k1 && k <= k2)
        out[s * (PERIODIC_WINDOW + 1) + (k - k1)] = (int)i;
    }
  }
  free(steps);
  return out;
}

/* Carries sim (played microbatches) on to all of wl's: each rank's categories and FLOPs grow by
 * their rate between its two snapshots (PERIODIC_WINDOW periods apart), its finish by their
 * sum. Each rank keeps its own rate: data-parallel replicas are separate pipelines until the
 * gradient synchronisation, and on a shared network their periods differ (GPT-22B on 3,072
 * GCDs: 0.47165 s and 0.47263 s). Returns the error that the drift of the ranks' periods
 * across the window implies (s): a drift of d a period, carried on linearly from the window's
 * mean, errs by about d extra (extra + K - 1) / 2; an irregular wobble by its size over K a
 * period. An estimate, not a bound: what the window does not show (the replicas' phases drifting
 * into other contention) it cannot count; where the periods wobble it overstates (GPT-1T on the
 * whole machine: 1.5 s against a measured 6.4 ms, docs/performance.md). */
static double extrapolate(const ts_workload *wl, const int *blocks, long played,
                          ts_sim_result *sim) {
  const double K = PERIODIC_WINDOW, extra = (double)(ts_workload_microbatches(wl) - played);
  double drift = 0, wobble = 0;
  for (long r = 0; r < sim->n_ranks; r++) {
    const int *b = &blocks[ts_layout_coords(wl, r).pp * (PERIODIC_WINDOW + 1)];
    const double *end = sim->ranks[r].block_end_s;
    double first = end[b[1]] - end[b[0]];
    double last = end[b[PERIODIC_WINDOW]] - end[b[PERIODIC_WINDOW - 1]];
    double mean = (end[b[PERIODIC_WINDOW]] - end[b[0]]) / K;
    drift = fmax(drift, fabs(last - first) / (K - 1));
    for (int j = 1; j <= PERIODIC_WINDOW; j++)
      wobble = fmax(wobble, fabs(end[b[j]] - end[b[j - 1]] - mean));
  }
  sim->iteration_s = 0;
  for (long r = 0; r < sim->n_ranks; r++) {
    ts_rank_result *x = &sim->ranks[r];
    double period = 0;
    for (int c = 0; c < TS_CAT_COUNT; c++) {
      double rate =
          c == TS_CAT_IDLE ? 0 : (x->snapshot_time_s[1][c] - x->snapshot_time_s[0][c]) / K;
      x->time_s[c] += extra * rate;
      period += rate;
    }
    x->finish_s += extra * period;
    x->flops += extra * (x->snapshot_flops[1] - x->snapshot_flops[0]) / K;
    sim->iteration_s = fmax(sim->iteration_s, x->finish_s);
    free(x->block_end_s);
    x->block_end_s = NULL;
  }
  for (long r = 0; r < sim->n_ranks; r++)
    sim->ranks[r].time_s[TS_CAT_IDLE] = sim->iteration_s - sim->ranks[r].finish_s;
  sim->played_microbatches = played;
  return drift * extra * (extra + K - 1) / 2 + wobble * extra / K;
}

/* All n bytes through the pipe end fd, as read() or write() moves them (is_write). */
static bool move_all(int fd, void *buf, size_t n, bool is_write) {
  for (char *p = buf; n > 0;) {
    ssize_t k = is_write ? write(fd, p, n) : read(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

/* What the child sends back: a status (0 carried on, -1 an error), the error,
 * the result's figures, then each rank's. */
/* The engine's shortcuts (ts_sim_result.shortcut), as the child names them. */
static const char *const shortcut_names[] = {"node play", "rail play",
                                             "node play, then every rank"};

typedef struct periodic_head {
  int status;
  ts_err err;
  ts_sim_result sim; /* its pointers are not sent */
  int shortcut; /* 0 none, else 1 + its index in shortcut_names */
  double n_events, overlap_slowdown;
} periodic_head;

typedef struct periodic_rank {
  double finish_s, time_s[TS_CAT_COUNT], flops;
} periodic_rank;

/* The child's side: plays `played` microbatches a pipeline and writes what periodic_head
 * describes to fd. */
static void periodic_child(const ts_platform *pf, const ts_workload *wl,
                           const ts_simulate_opts *opts, long played, int fd) {
  periodic_head head;
  memset(&head, 0, sizeof head);
  ts_workload short_wl = *wl;
  short_wl.global_batch = wl->global_batch / ts_workload_microbatches(wl) * played;
  int *blocks = window_blocks(wl, played);
  ts_simulate_opts o = *opts;
  o.engine.is_recording_blocks = true;
  int *snapshots = ts_alloc((size_t)(2 * wl->n_gpus), sizeof(int));
  for (long r = 0; r < wl->n_gpus; r++) {
    const int *b = &blocks[ts_layout_coords(wl, r).pp * (PERIODIC_WINDOW + 1)];
    snapshots[2 * r] = b[0];
    snapshots[2 * r + 1] = b[PERIODIC_WINDOW];
  }
  o.engine.snapshot_blocks = snapshots;
  ts_job job;
  ts_simulation sim;
  double events = 0;
  if (placed_job(pf, &short_wl, &o, NULL, &job, &events, &head.err) != 0 ||
      play(pf, &job, &o, NULL, NULL, events, &sim, &head.err) != 0) {
    head.status = -1;
    move_all(fd, &head, sizeof head, true);
    return;
  }
  sim.result.periodic_error_s = extrapolate(wl, blocks, played, &sim.result);
  head.sim = sim.result;
  for (int i = 0;
       sim.result.shortcut != NULL && i < (int)(sizeof shortcut_names / sizeof *shortcut_names);
       i++)
    if (strcmp(sim.result.shortcut, shortcut_names[i]) == 0)
      head.shortcut = i + 1;
  head.n_events = events;
  head.overlap_slowdown = sim.overlap_slowdown;
  bool ok = move_all(fd, &head, sizeof head, true);
  for (long r = 0; ok && r < sim.result.n_ranks; r++) {
    const ts_rank_result *x = &sim.result.ranks[r];
    periodic_rank pr = {x->finish_s, {0}, x->flops};
    memcpy(pr.time_s, x->time_s, sizeof pr.time_s);
    ok = move_all(fd, &pr, sizeof pr, true);
  }
}

/* Periodic play: 0 and *out filled; 1 when no child could be started, or by default when it
 * ended without its results (play every microbatch); -1 with an error. */
static int play_periodic(const ts_platform *pf, const ts_workload *wl, const ts_simulate_opts *o,
                         long played, ts_simulation *out, ts_err *err) {
  int fds[2];
  if (pipe(fds) != 0)
    return 1;
  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return 1;
  }
  if (pid == 0) { /* SimGrid runs once a process: the child plays, the parent may play again */
#ifdef __linux__
    /* a signal that stops the parent (a study's SIGTERM, Ctrl-C) stops the child with it */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
      _exit(1);
    close(fds[0]);
    periodic_child(pf, wl, o, played, fds[1]);
    _exit(0);
  }
  close(fds[1]);
  periodic_head head;
  bool ok = move_all(fds[0], &head, sizeof head, false);
  ts_rank_result *ranks = NULL;
  if (ok && head.status == 0) {
    ranks = ts_alloc((size_t)head.sim.n_ranks, sizeof *ranks);
    for (long r = 0; ok && r < head.sim.n_ranks; r++) {
      periodic_rank pr;
      ok = move_all(fds[0], &pr, sizeof pr, false);
      ranks[r].finish_s = pr.finish_s;
      ranks[r].flops = pr.flops;
      memcpy(ranks[r].time_s, pr.time_s, sizeof pr.time_s);
    }
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
    ;
  if (!ok) {
    free(ranks);
    if (o->periodic == TS_PERIODIC_EXACT) /* not asked for: every microbatch plays here */
      return 1;
    return ts_err_plain(err,
                        "periodic play's process ended before its results (%s %d); "
                        "with --play-every-microbatch every microbatch plays in this process",
                        WIFSIGNALED(wstatus) ? "signal" : "exit status",
                        WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
  }
  if (head.status != 0) {
    *err = head.err;
    return -1;
  }
  ts_job job;
  double events = 0;
  ts_simulate_opts full = *o;
  full.is_forced = true; /* what played was the short job, within the limit */
  if (placed_job(pf, wl, &full, NULL, &job, &events, err) != 0) {
    free(ranks);
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->job = job;
  out->result = head.sim;
  out->result.ranks = ranks;
  out->result.shortcut = head.shortcut == 0 ? NULL : shortcut_names[head.shortcut - 1];
  out->n_events = head.n_events;
  out->overlap_slowdown = head.overlap_slowdown;
  out->slowest_gpu_slowdown = ts_variation_slowdown(pf->gpu.speed_spread, wl->n_gpus);
  return 0;
}

static int simulate_workload(const ts_platform *pf, const ts_workload *wl,
                             const ts_simulate_opts *opts, ts_simulation *out, ts_err *err) {
  if (!opts->ignore_memory) {
    int rc = check_memory(pf, wl, err);
    if (rc != 0)
      return rc;
  }
  long played = periodic_microbatches(wl, opts);
  double declined_s = 0, declined_iteration_s = 0;
  if (played > 0 && opts->periodic == TS_PERIODIC_EXACT && !opts->is_forced) {
    /* By default the run refuses what playing every microbatch would (its event limit). The
     * job is freed here and built again after the child (play_periodic): held across the fork
     * it would add its memory to the child's (0.2 s of 14 s on 22B, 12,288 GCDs). */
    ts_job full;
    double events = 0;
    if (placed_job(pf, wl, opts, NULL, &full, &events, err) != 0)
      return -1;
    ts_job_fini(&full);
  }
  if (played > 0) {
    int rc = play_periodic(pf, wl, opts, played, out, err);
    if (rc < 0)
      return rc;
    /* By default only a steady state that repeats is carried on (simulate.h): a period that
     * still drifts or wobbles across the window may be a transient the window does not see
     * the end of (docs/performance.md), so every microbatch plays. */
    double error_s = rc == 0 ? out->result.periodic_error_s : 0;
    if (rc == 0 && (opts->periodic == TS_PERIODIC_ALWAYS ||
                    error_s <= TS_PERIODIC_EXACT_TOLERANCE * out->result.iteration_s))
      return 0;
    if (rc == 0) {
      declined_iteration_s = out->result.iteration_s;
      ts_simulate_fini(out);
      if (opts->on_periodic_declined != NULL)
        opts->on_periodic_declined(opts->start_ctx, declined_iteration_s, error_s);
    }
    declined_s = error_s;
  }
  ts_fidelity fidelity = opts->engine.fidelity;
  long *rep = opts->is_one_pipeline && fidelity == TS_FIDELITY_ANALYTIC ? one_pipeline(wl) : NULL;
  ts_job job;
  double events = 0;
  if (placed_job(pf, wl, opts, rep, &job, &events, err) != 0) {
    free(rep);
    return -1;
  }
  bool *traced = NULL, *shown = NULL;
  if (traced_ranks(pf, wl, &job, opts, &traced, &shown, err) != 0) {
    free(rep);
    ts_job_fini(&job);
    return -1;
  }
  int rc = play(pf, &job, opts, traced, rep, events, out, err);
  free(rep);
  free(traced);
  if (rc != 0) {
    free(shown);
    return -1;
  }
  out->in_timeline = shown;
  out->slowest_gpu_slowdown = ts_variation_slowdown(pf->gpu.speed_spread, wl->n_gpus);
  out->result.periodic_declined_error_s = declined_s;
  out->result.periodic_declined_iteration_s = declined_iteration_s;
  return 0;
}

int ts_simulate_job(const ts_platform *pf, ts_job *job, const ts_simulate_opts *opts,
                    ts_simulation *out, ts_err *err) {
  return play(pf, job, opts, NULL, NULL, ts_engine_count_events(job, NULL), out, err);
}

void ts_simulate_fini(ts_simulation *s) {
  ts_sim_result_fini(&s->result);
  ts_job_fini(&s->job);
  free(s->in_timeline);
  memset(s, 0, sizeof *s);
}

void ts_simulate_reliability(const ts_platform *pf, const ts_workload *wl, const ts_job *job,
                             double iteration_s, double train_s, ts_reliability *out) {
  long parts[TS_PART_COUNT] = {0};
  if (pf->reliability.is_set)
    ts_placement_parts(pf, job->rank_gpu, wl->n_gpus, parts);
  ts_reliability_compute(&pf->reliability, wl, parts, job->rank_gpu, pf->gpus_per_node, iteration_s,
                         train_s, out);
}
