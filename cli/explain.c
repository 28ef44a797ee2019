/* explain: see explain.h. */
#include "explain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/explain.h"
#include "../analysis/report.h"
#include "../workloads/alloc.h"
#include "../workloads/ccl_memory.h"
#include "../workloads/doc.h"
#include "../workloads/memory.h"
#include "../workloads/text.h"
#include "../workloads/variation.h"
#include "args.h"
#include "run.h"
#include "study.h"

/* The options of `explain`. */
typedef struct explain_args {
  const char *dir;
  long simulate, jobs;
  bool is_quiet;
} explain_args;

static const ts_flag explain_flags[] = {
    {.name = "--simulate",
     .value = "K",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(explain_args, simulate),
     .lo = 0,
     .hi = TS_EXPLAIN_SHOWN_CHANGES,
     .help = "the K best estimates of each loss simulated at the run's fidelity (default 2; 0: "
             "none): each costs about as much as the run"},
    {.name = "--jobs",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(explain_args, jobs),
     .lo = 1,
     .hi = 4096,
     .help = "simulations at once (default 1: a full-scale simulation can take GiBs)"},
    {.name = "--quiet",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(explain_args, is_quiet),
     .help = "no progress line on stderr"},
    {.name = NULL}};

static const ts_flag_group groups[] = {{"options", explain_flags, 0}, {NULL, NULL, 0}};

const ts_command ts_explain_command = {
    .name = "explain",
    .synopsis = "RESULT_DIR [--simulate K] [--jobs N] [--quiet]",
    .summary = "what limits a run's iteration, and the changes that would cut it most, each "
               "re-simulated",
    .description =
        "Explains the iteration 'trainsim run' simulated into RESULT_DIR (its result.json): the\n"
        "largest losses (pipeline bubble, exposed tensor-, pipeline-, data-, expert- and\n"
        "context-parallel communication, recomputation, idle time, unused memory), the mechanism\n"
        "behind each with its numbers, and the changes that would cut it most: layout,\n"
        "micro-batch, schedule, virtual stages, overlap options, a faster NIC. Each change is\n"
        "estimated with the analytic fidelity (no contention) against the same estimate of the\n"
        "run's layout; the best estimates of each loss are then simulated at the run's fidelity,\n"
        "which contention can reorder. The run is rebuilt from the arguments result.json\n"
        "records; a workload, platform or kernel file changed since is an error.\n",
    .groups = groups,
    .main = ts_explain_main};

/* The run being explained: its record, rebuilt inputs, and the pool's points (0: the run's own
 * layout, i > 0: x.changes[i - 1]). */
typedef struct front {
  ts_report_record record;
  ts_run_args a;
  ts_platform *pf;
  ts_workload wl;
  double nic_Bps[TS_PLATFORM_MAX_NICS];
  bool same_binary;
  ts_reliability reliability;
  ts_explain x;
  const char *dir;
  bool is_estimating;
  double base_simulated_s;
  char base_failure[320];
} front;

/* The run's arguments followed by change c's (NULL: none), parsed and loaded (the --set
 * registry holds theirs alone afterwards). */
static int load_with(const front *e, const ts_explain_change *c, ts_run_args *a, ts_platform *pf,
                     ts_workload *wl, ts_err *err) {
  char *argv[4096 + TS_EXPLAIN_MAX_TOKENS];
  int n = 0;
  for (int i = 0; i < e->record.n_arguments && n < 4096; i++)
    argv[n++] = e->record.arguments[i];
  for (int i = 0; c != NULL && i < c->n_tokens; i++)
    argv[n++] = (char *)c->tokens[i];
  ts_doc_overrides_clear();
  if (ts_run_parse_recorded(n, argv, a, err) != 0)
    return -1;
  return ts_run_load_inputs(a, pf, wl, err);
}

/* The loss model's vetting of a change: it must load (no layout rule broken); its peak. */
static int check_change(void *ctx, const ts_explain_change *c, double *peak_bytes,
                        double *usable_bytes) {
  const front *e = ctx;
  ts_run_args a;
  ts_workload wl;
  ts_err err = {0};
  if (load_with(e, c, &a, e->pf, &wl, &err) != 0)
    return -1;
  *peak_bytes = ts_memory_peak(&wl, NULL);
  *usable_bytes = ts_usable_bytes(&e->pf->gpu, &wl);
  return 0;
}

/* Reads dir's result.json and rebuilds the run: the files it read must be the ones it will be
 * compared with. */
static int rebuild(front *e, const char *dir, ts_err *err) {
  if (ts_report_read_json(dir, &e->record, err) != 0)
    return -1;
  char path[4096];
  snprintf(path, sizeof path, "%s/result.json", dir);
  if (load_with(e, NULL, &e->a, e->pf, &e->wl, err) != 0)
    return -1;
  ts_digest d;
  ts_digest_init(&d);
  ts_run_digest_inputs(&e->a, e->pf, &d);
  char now[17];
  snprintf(now, sizeof now, "%016llx", (unsigned long long)d.h);
  if (strcmp(now, e->record.files_digest) != 0)
    return ts_err_plain(err,
                        "%s: the workload, platform or kernel file it was simulated from has "
                        "changed since (digest %s, now %s): run it again",
                        path, e->record.files_digest, now);
  if (e->record.n_stages != e->wl.pp)
    return ts_err_plain(err, "%s: %ld stages, but its inputs give %ld", path, e->record.n_stages,
                        e->wl.pp);
  double slowdown = ts_variation_slowdown(e->pf->gpu.speed_spread, e->wl.n_gpus);
  if (fabs(e->record.slowest_gpu_slowdown - slowdown) > 1e-9 * slowdown)
    return ts_err_plain(err,
                        "%s: simulation.slowest_gpu_slowdown is %.9g, but its inputs give %.9g",
                        path, e->record.slowest_gpu_slowdown, slowdown);
  ts_digest_init(&d);
  ts_digest_file(&d, ts_args_program());
  snprintf(now, sizeof now, "%016llx", (unsigned long long)d.h);
  e->same_binary = strcmp(now, e->record.binary_digest) == 0;
  return 0;
}

/* ---- the pool ---- */

static void point_label(void *ctx, int i, char *out, size_t size) {
  const front *e = ctx;
  const char *what = e->is_estimating ? "estimating" : "simulating";
  if (i == 0)
    snprintf(out, size, "explain: %s the run's own layout", what);
  else
    snprintf(out, size, "explain: %s change %d of %d (%.80s)", what, i, e->x.n_changes,
             e->x.changes[i - 1].flags);
}

static int load_point(void *ctx, int i, ts_platform *pf, ts_workload *wl, ts_simulate_opts *opts,
                      ts_err *err) {
  const front *e = ctx;
  ts_run_args a;
  if (load_with(e, i > 0 ? &e->x.changes[i - 1] : NULL, &a, pf, wl, err) != 0)
    return -1;
  *opts = ts_run_simulate_opts(&a);
  if (e->is_estimating)
    opts->engine.fidelity = TS_FIDELITY_ANALYTIC;
  opts->is_one_pipeline = e->is_estimating;
  return 0;
}

static void point_done(void *ctx, int i, int rc, const ts_scaling_point *p, const ts_err *err) {
  front *e = ctx;
  ts_explain_change *c = i > 0 ? &e->x.changes[i - 1] : NULL;
  char *failure = c != NULL ? c->failure : e->base_failure;
  double *out = c != NULL ? (e->is_estimating ? &c->estimate_s : &c->simulated_s)
                          : (e->is_estimating ? &e->x.base_estimate_s : &e->base_simulated_s);
  if (rc == 0)
    *out = p->iteration_s;
  else
    ts_text_copy(failure, sizeof e->base_failure, err->msg);
}

/* Runs points (0: the run's layout, i: changes[i - 1]) through the study pool. */
static void play(front *e, const int *points, int n, bool is_estimating, long jobs, bool quiet) {
  e->is_estimating = is_estimating;
  fflush(stdout);
  int sig =
      ts_study_pool(n, points, (int)jobs, load_point, point_done, quiet ? NULL : point_label, e);
  if (sig != 0)
    ts_study_stopped(sig, "the changes 'explain' tries");
}

/* Estimates of the run's layout and of every change that fits, then the best `simulate` changes
 * of each loss simulated at the run's fidelity (and the run itself again when another build
 * wrote result.json). Returns the exit status on failure, else 0. */
static int try_changes(front *e, long simulate, long jobs, bool quiet) {
  ts_explain *x = &e->x;
  int *points = ts_alloc((size_t)(x->n_changes + 1), sizeof *points);
  int n = 0;
  points[n++] = 0;
  for (int i = 0; i < x->n_changes; i++)
    if (!x->changes[i].is_no_fit)
      points[n++] = i + 1;
  play(e, points, n, true, jobs, quiet);
  if (x->base_estimate_s <= 0) {
    fprintf(stderr, "trainsim: error: estimating the run's own layout failed: %s\n",
            e->base_failure);
    free(points);
    return 1;
  }
  /* The same binary at the analytic fidelity plays what the run played (one pipeline standing
   * for the rest, as the run's iteration is exactly that: docs/performance.md): a different
   * figure means the recorded arguments or figures were altered. */
  if (e->same_binary && e->a.fidelity == TS_FIDELITY_ANALYTIC &&
      fabs(x->base_estimate_s - x->iteration_s) > 1e-6 * x->iteration_s) {
    fprintf(stderr,
            "trainsim: error: %s/result.json: its iteration is %.9g s, but its inputs give %.9g s "
            "with the binary that wrote it: the file was altered\n",
            e->dir, x->iteration_s, x->base_estimate_s);
    free(points);
    return TS_ARGS_EXIT_INPUT;
  }
  n = 0;
  if (!e->same_binary && simulate > 0)
    points[n++] = 0; /* another trainsim wrote result.json: compare with this one's run */
  for (int i = 0; i < x->n_losses; i++) {
    ts_explain_loss *l = &x->losses[i];
    ts_explain_sort(x, l);
    for (int k = 0, taken = 0; k < l->n_changes && taken < simulate; k++) {
      const ts_explain_change *c = &x->changes[l->changes[k]];
      if (c->is_no_fit || !(c->estimate_s > 0))
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
    play(e, points, n, false, jobs, quiet);
  free(points);
  x->is_resimulated = !e->same_binary && simulate > 0;
  if (x->is_resimulated && !(e->base_simulated_s > 0)) {
    fprintf(stderr, "trainsim: error: simulating the run's own layout again failed: %s\n",
            e->base_failure);
    return 1;
  }
  x->compare_s = x->is_resimulated ? e->base_simulated_s : x->iteration_s;
  for (int i = 0; i < x->n_losses; i++)
    ts_explain_sort(x, &x->losses[i]);
  return 0;
}

static void free_front(front *e) {
  ts_report_record_fini(&e->record);
  free(e->pf);
  free(e);
}

int ts_explain_main(int argc, char **argv) {
  ts_err err = {0};
  explain_args o = {.simulate = 2, .jobs = 1};
  ts_args cli = {&ts_explain_command, argc, argv, 0, &o, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &err)) != TS_ARGS_END;) {
    if (item < 0) {
      ts_args_report(&err, NULL);
      return TS_ARGS_EXIT_INPUT;
    }
    if (item == TS_ARGS_HELP) {
      ts_args_usage(stdout, &ts_explain_command);
      return 0;
    }
    if (item == TS_ARGS_ARGUMENT) {
      if (o.dir != NULL) {
        fprintf(stderr, "trainsim: error: explain takes one RESULT_DIR, found a second: '%s'\n",
                value);
        return TS_ARGS_EXIT_INPUT;
      }
      o.dir = value;
    }
  }
  if (o.dir == NULL) {
    fprintf(stderr,
            "trainsim: error: explain needs a RESULT_DIR (see 'trainsim explain --help')\n");
    return TS_ARGS_EXIT_INPUT;
  }
  const char *dir = o.dir;
  long simulate = o.simulate, jobs = o.jobs;
  bool quiet = o.is_quiet;
  front *e = ts_alloc(1, sizeof *e);
  e->pf = ts_alloc(1, sizeof *e->pf);
  e->dir = dir;
  if (rebuild(e, dir, &err) != 0) {
    ts_args_report(&err, NULL);
    free_front(e);
    return TS_ARGS_EXIT_INPUT;
  }
  const ts_platform *pf = e->pf;
  ts_explain *x = &e->x;
  for (int i = 0; i < pf->n_nics; i++)
    e->nic_Bps[i] = pf->nics[i].bw_Bps;
  if (pf->reliability.is_set) { /* the run's placement, as ts_simulate_workload draws it */
    long *gpus = ts_placement_gpus(pf, e->a.placement, (uint64_t)e->a.seed, e->wl.n_gpus);
    long parts[TS_PART_COUNT] = {0};
    if (gpus != NULL) {
      ts_placement_parts(pf, gpus, e->wl.n_gpus, parts);
      ts_reliability_compute(&pf->reliability, &e->wl, parts, gpus, pf->gpus_per_node,
                             e->record.iteration_s, 0, &e->reliability);
    }
    free(gpus);
  }
  *x = (ts_explain){.wl = &e->wl,
                    .platform_name = pf->name,
                    .gpu_model = pf->gpu.model,
                    .fidelity = ts_fidelity_names[e->a.fidelity],
                    .gpus_per_node = pf->gpus_per_node,
                    .usable_bytes = ts_usable_bytes(&pf->gpu, &e->wl),
                    .n_nics = pf->n_nics,
                    .nic_Bps = e->nic_Bps,
                    .iteration_s = e->record.iteration_s,
                    .n_stages = e->record.n_stages,
                    .stage_work_s = e->record.stage_work_s,
                    .slowest_gpu_slowdown = e->record.slowest_gpu_slowdown,
                    .speed_spread = pf->gpu.speed_spread,
                    .reliability = &e->reliability,
                    .gpu = &pf->gpu};
  memcpy(x->breakdown_s, e->record.breakdown_s, sizeof x->breakdown_s);
  ts_explain_analyse(x, check_change, e);
  int rc = try_changes(e, simulate, jobs, quiet);
  if (rc == 0)
    ts_explain_print(stdout, x, simulate);
  free_front(e);
  return rc;
}
