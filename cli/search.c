/* search: see search.h. */
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../analysis/html.h"
#include "../analysis/metrics.h"
#include "../analysis/report.h"
#include "../sim/simulate.h"
#include "../workloads/alloc.h"
#include "../workloads/doc.h"
#include "../workloads/layout.h"
#include "../workloads/search.h"
#include "args.h"
#include "progress.h"
#include "study.h"

typedef struct candidate {
  ts_workload wl;
  double analytic_s, megatron_fraction, mfu, peak_bytes; /* of the estimate */
  double breakdown_s[TS_CAT_COUNT]; /* of the estimate */
  double simulated_s, simulated_fraction, simulated_mfu; /* top K only; 0 otherwise */
} candidate;

typedef struct search_args {
  const char *workload, *platform, *out_dir;
  long gpus, top, jobs;
  ts_fidelity fidelity; /* of the top K's simulations */
  bool is_report;
  bool is_quiet; /* no progress line */
} search_args;

static const ts_flag search_flags[] = {
    {.name = "--gpus",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(search_args, gpus),
     .lo = 1,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "the GPUs every layout uses"},
    {.name = "--top",
     .value = "K",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(search_args, top),
     .lo = 1,
     .hi = 100,
     .help = "how many of the fastest estimates to simulate (default 3)"},
    {.name = "--fidelity",
     .value = "hybrid|aggregate|flow|analytic",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(search_args, fidelity),
     .choices = ts_fidelity_names,
     .help = "of the top K's simulations (default hybrid, as 'trainsim run')"},
    {.name = "--platform",
     .value = "FILE",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(search_args, platform),
     .help = "platform file (default: the built-in platforms/frontier.yaml)"},
    {.name = "--jobs",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(search_args, jobs),
     .lo = 1,
     .hi = 4096,
     .is_output = true,
     .help = "top candidates simulated at once, in child processes (default 1)"},
    {.name = "--out",
     .value = "DIR",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(search_args, out_dir),
     .is_output = true,
     .help = "output directory for search.csv (default: trainsim-out)"},
    {.name = "--report",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(search_args, is_report),
     .is_output = true,
     .help = "also write report.html (the 20 best, their estimated time breakdown)"},
    {.name = "--quiet",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(search_args, is_quiet),
     .is_output = true,
     .help = "no progress line on stderr (it is shown only when stderr is a terminal)"},
    {.name = NULL}};

static const ts_flag_group groups[] = {{"options", search_flags, 0}, {NULL, NULL, 0}};

const ts_command ts_search_command = {
    .name = "search",
    .synopsis = "WORKLOAD --gpus N [options]",
    .summary = "the fastest layouts of N GPUs (analytic estimate, then the top ones simulated; "
               "search.csv)",
    .description =
        "Searches the layouts of N GPUs for the fastest iteration of WORKLOAD's model and batch:\n"
        "tensor parallelism inside a node or across up to 4 nodes, pipeline parallelism, data\n"
        "parallelism, micro-batch 1, 2 or 4, the schedules 1F1B, interleaved (2 virtual stages),\n"
        "zb-h1, zb-v and dualpipe where a pipeline allows them, recomputation none /\n"
        "selective / full, ZeRO 0 or 1 (2 and 3 without a pipeline), sequence parallelism off or\n"
        "on; context parallelism 2-16 for 8k+ sequences; expert parallelism for a MoE model.\n"
        "Candidates that break a rule or do not fit in memory are counted by reason; the others\n"
        "are played with the analytic fidelity (no contention: optimistic; one pipeline plays\n"
        "for all replicas and tensor ranks, which then run alike), and the K fastest simulated\n"
        "at --fidelity. Writes search.csv (every candidate) into --out.\n",
    .groups = groups,
    .main = ts_search_main};

static int parse(int argc, char **argv, search_args *a, ts_err *err) {
  memset(a, 0, sizeof *a);
  a->out_dir = "trainsim-out";
  a->top = 3;
  a->jobs = 1; /* full-scale candidates can take GiBs each: one at a time unless asked */
  a->fidelity = TS_FIDELITY_HYBRID;
  ts_args cli = {&ts_search_command, argc, argv, 0, a, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, err)) != TS_ARGS_END;) {
    if (item < 0)
      return -1;
    if (item == TS_ARGS_HELP) {
      ts_args_usage(stdout, &ts_search_command);
      return 1;
    }
    if (item == TS_ARGS_ARGUMENT) {
      if (a->workload != NULL)
        return ts_err_plain(err, "search takes one WORKLOAD file, found a second one: '%s'", value);
      a->workload = value;
    }
  }
  if (a->workload == NULL)
    return ts_err_plain(err, "search needs a WORKLOAD file (see 'trainsim search --help')");
  if (a->gpus == 0)
    return ts_err_plain(err, "search needs --gpus N");
  return 0;
}

enum reject { REJECT_RULE, REJECT_MEMORY, REJECT_MICROBATCHES, REJECT_PLAY, REJECT_COUNT };
static const char *const reject_names[] = {
    "break a layout rule (divisibility, ZeRO-2/3 with "
    "a pipeline, what a schedule needs)",
    "do not fit in memory", "run more than 65,536 microbatches a pipeline",
    "are refused by the simulation (too many events, or what the platform cannot price)"};

/* The analytic iteration of wl on pf, its breakdown and fractions of peak. Only one pipeline
 * plays (tensor rank 0 of replica 0, the others sharing its timeline): without contention the
 * replicas and tensor ranks run alike, but for their routes' latencies (docs/performance.md
 * measures the difference). */
static int estimate(const ts_platform *pf, const ts_workload *wl, candidate *c, ts_err *err) {
  ts_simulate_opts opts = ts_simulate_defaults();
  opts.engine.fidelity = TS_FIDELITY_ANALYTIC;
  opts.engine.overlap_slowdown = 0;
  opts.is_one_pipeline = true;
  ts_simulation sim;
  if (ts_simulate_workload(pf, wl, &opts, &sim, err) != 0)
    return -1;
  ts_metrics m;
  ts_metrics_compute(wl, &pf->gpu, &sim.result, &m);
  c->analytic_s = m.iteration_s;
  c->megatron_fraction = m.megatron_fraction_of_peak;
  c->mfu = m.mfu;
  memcpy(c->breakdown_s, m.breakdown_s, sizeof c->breakdown_s);
  ts_metrics_fini(&m);
  ts_simulate_fini(&sim);
  return 0;
}

/* The pool's view of the candidates it simulates, and the first that failed. */
typedef struct pool_ctx {
  const ts_platform *pf;
  candidate *cands;
  ts_fidelity fidelity;
  long top;
  int failed;
  ts_err err;
} pool_ctx;

static void describe(const ts_workload *wl, char *out, size_t size);

static void candidate_label(void *ctx, int i, char *out, size_t size) {
  const pool_ctx *c = ctx;
  char layout[128];
  describe(&c->cands[i].wl, layout, sizeof layout);
  snprintf(out, size, "search: candidate %d of %ld (%s)", i + 1, c->top, layout);
}

static int load_candidate(void *ctx, int i, ts_platform *pf, ts_workload *wl,
                          ts_simulate_opts *opts, ts_err *err) {
  (void)err;
  const pool_ctx *c = ctx;
  *pf = *c->pf;
  *wl = c->cands[i].wl;
  opts->engine.fidelity = c->fidelity;
  return 0;
}

static void candidate_done(void *ctx, int i, int rc, const ts_scaling_point *p, const ts_err *err) {
  pool_ctx *c = ctx;
  if (rc != 0) {
    ts_study_keep_first_failure(i, err, &c->failed, &c->err);
    return;
  }
  c->cands[i].simulated_s = p->iteration_s;
  c->cands[i].simulated_fraction = p->megatron_percent / 100;
  c->cands[i].simulated_mfu = p->mfu_percent / 100;
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static int by_estimate(const void *x, const void *y) {
  double a = ((const candidate *)x)->analytic_s, b = ((const candidate *)y)->analytic_s;
  return (a > b) - (a < b);
}

static void describe(const ts_workload *wl, char *out, size_t size) {
  char cp[24] = "", ep[24] = "";
  if (wl->cp > 1)
    snprintf(cp, sizeof cp, " CP%ld", wl->cp);
  if (wl->model.n_experts > 0)
    snprintf(ep, sizeof ep, " EP%ld", wl->ep);
  snprintf(out, size, "TP%ld%s PP%ld DP%ld%s mbs %ld %s%s %s ZeRO-%d%s", wl->tp, cp, wl->pp, wl->dp,
           ep, wl->micro_batch, ts_schedule_names[wl->schedule],
           wl->virtual_stages > 1 ? " v 2" : "", ts_recompute_names[wl->recompute], wl->zero_stage,
           wl->sequence_parallel ? " SP" : "");
}

typedef struct csv_ctx {
  const candidate *c;
  long n;
  ts_fidelity fidelity; /* of the top K's simulations */
} csv_ctx;

/* One row per estimated candidate: its layout and memory, then the figures of record (the
 * simulation's for the top K, the estimate's for the rest: `fidelity` says which), then the
 * estimate that ranked it. */
static void write_csv(FILE *f, const void *ctx) {
  const csv_ctx *x = ctx;
  fputs("tp,pp,dp,micro_batch,virtual_stages,schedule,recompute,zero_stage,sequence_parallel,"
        "context,"
        "expert,peak_memory_gib,fidelity,iteration_s,mfu_percent,megatron_percent,"
        "analytic_iteration_s,analytic_mfu_percent,analytic_megatron_percent\n",
        f);
  for (long i = 0; i < x->n; i++) {
    const candidate *c = &x->c[i];
    const ts_workload *w = &c->wl;
    bool simulated = c->simulated_s > 0;
    fprintf(
        f, "%ld,%ld,%ld,%ld,%ld,%s,%s,%d,%d,%ld,%ld,%.17g,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
        w->tp, w->pp, w->dp, w->micro_batch, w->virtual_stages, ts_schedule_names[w->schedule],
        ts_recompute_names[w->recompute], w->zero_stage, w->sequence_parallel, w->cp, w->ep,
        c->peak_bytes / 1073741824.0,
        ts_fidelity_names[simulated ? x->fidelity : TS_FIDELITY_ANALYTIC],
        simulated ? c->simulated_s : c->analytic_s, 100 * (simulated ? c->simulated_mfu : c->mfu),
        100 * (simulated ? c->simulated_fraction : c->megatron_fraction), c->analytic_s,
        100 * c->mfu, 100 * c->megatron_fraction);
  }
}

/* report.html: the 20 best candidates. */
static int write_report(const search_args *a, const ts_workload *base, const ts_platform *pf,
                        const candidate *c, long n, const char *summary, ts_err *err) {
  int shown = n < 20 ? (int)n : 20;
  ts_html_candidate *rows = calloc((size_t)(shown > 0 ? shown : 1), sizeof *rows);
  TS_ASSERT(rows != NULL);
  for (int i = 0; i < shown; i++) {
    describe(&c[i].wl, rows[i].layout, sizeof rows[i].layout);
    rows[i].analytic_s = c[i].analytic_s;
    rows[i].analytic_mfu = c[i].mfu;
    rows[i].analytic_fraction = c[i].megatron_fraction;
    rows[i].simulated_s = c[i].simulated_s;
    rows[i].simulated_mfu = c[i].simulated_mfu;
    rows[i].simulated_fraction = c[i].simulated_fraction;
    rows[i].peak_bytes = c[i].peak_bytes;
    memcpy(rows[i].breakdown_s, c[i].breakdown_s, sizeof rows[i].breakdown_s);
  }
  char title[192];
  snprintf(title, sizeof title, "trainsim: layouts of %.63s on %ld GPUs of %.63s", base->name,
           a->gpus, pf->name);
  int rc = ts_html_search_report(a->out_dir, title, summary, shown, rows, err);
  free(rows);
  return rc;
}

int ts_search_main(int argc, char **argv) {
  ts_err err = {0};
  search_args a;
  int rc = parse(argc, argv, &a, &err);
  if (rc == 1)
    return 0;
  static ts_platform pf;
  ts_workload base;
  if (rc != 0 || ts_args_load_platform(a.platform, &pf, &err) != 0 ||
      ts_workload_load_file(a.workload, &base, &err) != 0 ||
      ts_report_prepare_dir(a.out_dir, &err) != 0 ||
      ts_report_check_outputs(
          a.out_dir, (const char *const[]){"search.csv", a.is_report ? "report.html" : NULL, NULL},
          &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  if (ts_simulate_check_ccl_version(&pf, &base, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  if (a.gpus > ts_platform_n_gpus(&pf)) {
    fprintf(stderr, "trainsim: error: --gpus: platform '%s' has %ld GPUs, found %ld\n", pf.name,
            ts_platform_n_gpus(&pf), a.gpus);
    return TS_ARGS_EXIT_INPUT;
  }
  struct timespec started;
  clock_gettime(CLOCK_MONOTONIC, &started);
  ts_search_space space;
  ts_search_layouts(&base, a.gpus, pf.gpus_per_node, &pf.gpu, &space);
  long n = space.n, tried = space.tried;
  long rejected[REJECT_COUNT] = {space.rejected[TS_SEARCH_RULE], space.rejected[TS_SEARCH_MEMORY],
                                 space.rejected[TS_SEARCH_MICROBATCHES]};
  ts_err first_refusal = space.first_refusal;
  ts_err first_refused_play = {0}; /* the first estimate the simulation refused */
  candidate *cands = ts_alloc((size_t)n, sizeof *cands);
  for (long i = 0; i < n; i++)
    cands[i] = (candidate){.wl = space.layouts[i], .peak_bytes = space.peak_bytes[i]};
  ts_search_fini(&space);
  /* The estimates play one pipeline each: their work grows with the layers and the microbatches
   * a pipeline runs (measured here: about 5e6 layer-microbatches a second), and is refused up
   * front beyond about ten minutes of it. */
  double work = 0, max_work = 3e9;
  for (long i = 0; i < n; i++)
    work += (double)ts_workload_microbatches(&cands[i].wl) * (double)cands[i].wl.model.n_layers *
            (double)ts_workload_chunks(&cands[i].wl);
  if (work > max_work) {
    fprintf(stderr,
            "trainsim: error: search: the estimates of %ld candidates would play %.3g layers x "
            "microbatches, more than the %.0e (about ten minutes) search plays: expected a "
            "smaller global batch, fewer layers or fewer --gpus\n",
            n, work, max_work);
    free(cands);
    return TS_ARGS_EXIT_INPUT;
  }
  /* The estimates, in the order of enumeration (the ranking sorts them afterwards). */
  ts_progress progress;
  ts_progress_init(&progress, "search", a.is_quiet);
  long kept = 0;
  for (long i = 0; i < n; i++) {
    char what[96];
    snprintf(what, sizeof what, "%ld of %ld candidates estimated", i, n);
    ts_progress_show(&progress, (double)i, (double)n, what);
    ts_err e = {0};
    if (estimate(&pf, &cands[i].wl, &cands[i], &e) != 0) {
      rejected[REJECT_PLAY]++;
      if (e.is_set && !first_refused_play.is_set)
        first_refused_play = e;
    } else
      cands[kept++] = cands[i];
  }
  n = kept;
  ts_progress_clear(&progress);
  char summary[512];
  int len = snprintf(summary, sizeof summary, "%ld candidates: %ld estimated", tried, n);
  for (int r = 0; r < REJECT_COUNT; r++)
    if (rejected[r] > 0 && len < (int)sizeof summary)
      len += snprintf(summary + len, sizeof summary - (size_t)len, ", %ld %s", rejected[r],
                      reject_names[r]);
  if (n == 0) { /* nothing to rank: an input error, with why (and the first rule broken) */
    fprintf(stderr, "trainsim: error: --gpus: no layout of %ld GPUs is feasible (%s)\n", a.gpus,
            summary);
    if (rejected[REJECT_RULE] == tried && first_refusal.is_set)
      fprintf(stderr, "the first candidate refused: %s\n", first_refusal.msg);
    else if (first_refused_play.is_set)
      fprintf(stderr, "the first candidate the simulation refused: %s\n", first_refused_play.msg);
    free(cands);
    return TS_ARGS_EXIT_INPUT;
  }
  /* On stderr, to keep stdout the same from run to run (bench/run.sh reads it). */
  fprintf(stderr,
          "search: %ld candidates and %ld analytic estimates took %.3f s, %.2f ms an estimate\n",
          tried, n, seconds_since(&started), n > 0 ? 1e3 * seconds_since(&started) / (double)n : 0);
  qsort(cands, (size_t)n, sizeof *cands, by_estimate);
  long top = a.top < n ? a.top : n;
  /* The top K simulated, --jobs at a time (study.h's pool). */
  int *pending = malloc((size_t)(top > 0 ? top : 1) * sizeof *pending);
  TS_ASSERT(pending != NULL);
  for (long i = 0; i < top; i++)
    pending[i] = (int)i;
  pool_ctx pool = {.pf = &pf, .cands = cands, .fidelity = a.fidelity, .failed = -1};
  pool.top = top;
  fflush(stdout);
  int sig = ts_study_pool((int)top, pending, (int)a.jobs, load_candidate, candidate_done,
                          a.is_quiet ? NULL : candidate_label, &pool);
  free(pending);
  if (sig != 0) {
    free(cands);
    ts_study_stopped(sig, "a search's best candidates");
  }
  if (pool.failed >= 0) {
    char layout[128];
    describe(&cands[pool.failed].wl, layout, sizeof layout);
    char note[320];
    snprintf(note, sizeof note, " (simulating candidate %d, %s)", pool.failed + 1, layout);
    ts_args_report(&pool.err, note);
    free(cands);
    return TS_ARGS_EXIT_INPUT;
  }
  printf("search: %s on %ld x %s (%s), global batch %ld\n\n", base.name, a.gpus, pf.gpu.model,
         pf.name, base.global_batch);
  printf("  %-4s %-44s %12s %8s %11s %12s %8s %11s %9s\n", "rank", "layout", "analytic_s", "MFU",
         "Megatron %", "simulated_s", "MFU", "Megatron %", "GiB");
  for (long i = 0; i < top; i++) {
    const candidate *c = &cands[i];
    char layout[128];
    describe(&c->wl, layout, sizeof layout);
    printf("  %-4ld %-44s %12.4f %7.2f%% %10.2f%% %12.4f %7.2f%% %10.2f%% %9.2f\n", i + 1, layout,
           c->analytic_s, 100 * c->mfu, 100 * c->megatron_fraction, c->simulated_s,
           100 * c->simulated_mfu, 100 * c->simulated_fraction, c->peak_bytes / 1073741824.0);
  }
  printf("\n%s.\nMFU: model FLOPs; Megatron %%: Megatron-DeepSpeed's formula (the Frontier "
         "study's %% of peak).\nanalytic: no contention (optimistic), simulated: the engine at "
         "fidelity %s.\n",
         summary, ts_fidelity_names[a.fidelity]);
  csv_ctx ctx = {cands, n, a.fidelity};
  if (ts_report_write_file(a.out_dir, "search.csv", write_csv, &ctx, &err) != 0) {
    ts_args_report(&err, NULL);
    free(cands);
    return 1;
  }
  if (a.is_report && write_report(&a, &base, &pf, cands, n, summary, &err) != 0) {
    ts_args_report(&err, NULL);
    free(cands);
    return 1;
  }
  if (!a.is_report && ts_report_remove_stale(a.out_dir, "report.html", &err) != 0) {
    ts_args_report(&err, NULL);
    free(cands);
    return 1;
  }
  printf("results: %s/search.csv%s\n", a.out_dir, a.is_report ? " and report.html" : "");
  free(cands);
  return 0;
}
