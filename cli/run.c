/* run: see run.h. */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analysis/html.h"
#include "../analysis/metrics.h"
#include "../analysis/plots.h"
#include "../analysis/report.h"
#include "../analysis/timeline.h"
#include "../sim/simulate.h"
#include "../workloads/alloc.h"
#include "../workloads/cost.h"
#include "../workloads/doc.h"
#include "args.h"
#include "progress.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* TS_FLAG_CHOICE stores these through an int. */
_Static_assert(sizeof(ts_fidelity) == sizeof(int) && sizeof(ts_coll_algo) == sizeof(int) &&
                   sizeof(ts_placement) == sizeof(int),
               "enums stored by TS_FLAG_CHOICE must be int-sized");

static const char run_description[] =
    "Simulates one training iteration of WORKLOAD (a YAML file, e.g. workloads/gpt-175b.yaml)\n"
    "and prints a summary; writes result.json into the output directory.\n";

/* --timeline-window T0:T1, two times (units.h) with T0 < T1. */
static int parse_window(void *group, const char *flag, const char *text, ts_err *err) {
  ts_run_args *a = group;
  ts_loc at = {NULL, 0, 0, flag, NULL};
  char copy[256];
  snprintf(copy, sizeof copy, "%s", text);
  char *colon = strchr(copy, ':');
  double t0 = 0, t1 = 0;
  if (colon != NULL)
    *colon = '\0';
  if (colon == NULL || ts_units_parse(copy, TS_UNITS_TIME, &t0, NULL) != 0 ||
      ts_units_parse(colon + 1, TS_UNITS_TIME, &t1, NULL) != 0 || !(t1 > t0))
    return ts_err_at(err, at,
                     "expected two times T0:T1 with T0 < T1 such as 10s:12.5s or 0s:500ms, "
                     "found '%s'",
                     text);
  a->window_start_s = t0;
  a->window_end_s = t1;
  return 0;
}

/* --overlap-slowdown F, a fraction from 0 to 10. */
static int parse_slowdown(void *group, const char *flag, const char *text, ts_err *err) {
  ts_run_args *a = group;
  if (ts_parse_double(text, &a->overlap_slowdown) != 0 || !(a->overlap_slowdown >= 0) ||
      a->overlap_slowdown > 10) {
    ts_loc at = {NULL, 0, 0, flag, NULL};
    return ts_err_at(err, at, "expected a fraction from 0 to 10 such as 0.1, found '%s'", text);
  }
  return 0;
}

const ts_flag ts_run_input_flags[] = {
    {.name = "--platform",
     .value = "FILE",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(ts_run_args, platform),
     .help = "platform file (default: the built-in platforms/frontier.yaml)"},
    {.name = "--gpus",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(ts_run_args, ov.gpus),
     .set_offset = TS_FLAG_SET(ts_run_args, ov.is_gpus_set),
     .lo = 1,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "GPUs (GCDs on Frontier); data parallelism = N / (tp x cp x pp)"},
    {.name = "--dp",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(ts_run_args, ov.dp),
     .set_offset = TS_FLAG_SET(ts_run_args, ov.is_dp_set),
     .lo = 1,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "data-parallel size (parallelism.data)"},
    {.name = NULL}};

static const ts_flag simulation_flags[] = {
    {.name = "--fidelity",
     .value = "hybrid|aggregate|flow|analytic",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(ts_run_args, fidelity),
     .choices = ts_fidelity_names,
     .help = "collective transfers: one per rank and collective (aggregate) or one per ring step "
             "(flow); hybrid (default): aggregate, with collectives inside a node priced, not "
             "played (within 1% of aggregate, 5-20x faster: see docs/performance.md); analytic: "
             "no network simulation, alpha-beta times without contention (optimistic; searches)"},
    {.name = "--collectives",
     .value = "auto|ring|hierarchical|tree",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(ts_run_args, collectives),
     .choices = ts_coll_algo_names,
     .help = "all-reduce algorithm (default auto: per call, the one the platform's library "
             "(NCCL, RCCL) picks by its own model; hierarchical is trainsim's, priced at the "
             "wire; result.json counts them)"},
    {.name = "--overlap-slowdown",
     .value = "F",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_slowdown,
     .help = "compute that overlaps communication runs (1 + F) times longer (kernels share the "
             "GPU; default: the platform's collectives.overlap_slowdown, measured where it says "
             "so)"},
    {.name = "--placement",
     .value = "contiguous|spread|random",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(ts_run_args, placement),
     .choices = ts_placement_names,
     .help = "which nodes the job gets: the first ones (default), round robin over the "
             "network's units (dragonfly groups, fat-tree leaves or rail units), or drawn at "
             "random (a busy machine; --seed N, default 1)"},
    {.name = "--seed",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(ts_run_args, seed),
     .set_offset = TS_FLAG_SET(ts_run_args, is_seed_set),
     .lo = 0,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "the random placement's seed"},
    {.name = "--ignore-memory",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, ignore_memory),
     .help = "simulate even when a rank's memory exceeds what it can allocate of its HBM "
             "(`gpu.hbm_capacity` less `gpu.runtime_memory`)"},
    {.name = "--force",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_forced),
     .help = "run even when the job looks too big for this machine (over an hour: more than "
             "5e9 events at hybrid, 1e9 at aggregate and flow, 1e11 analytic)"},
    {.name = "--play-every-rank",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_playing_every_rank),
     .help = "hybrid: one actor per rank, even where a node's ranks could play as one (node "
             "play: tensor-parallel ranks, 8x fewer actors and transfers on Frontier; with a "
             "hand-over to every rank at the collectives across nodes where tensor groups are "
             "smaller than a node; rail play: rail-optimised fat trees; docs/performance.md)"},
    {.name = "--periodic",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_periodic),
     .help = "1F1B pipelines of many microbatches: play p + 16 of them and carry each rank on "
             "at its steady state's measured rate even where that state does not repeat (by "
             "default only where it repeats, within 1e-6 of the iteration; the summary gives "
             "the error estimate; docs/performance.md)"},
    {.name = "--play-every-microbatch",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_every_microbatch),
     .help = "no periodic play: every microbatch plays, even where the steady state repeats"},
    {.name = NULL}};

static const ts_flag output_flags[] = {
    {.name = "--out",
     .value = "DIR",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(ts_run_args, out_dir),
     .is_output = true,
     .help = "output directory (default: trainsim-out)"},
    {.name = "--timeline",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_timeline),
     .is_output = true,
     .help = "also write timeline.json (Chrome trace format: open it in ui.perfetto.dev or "
             "chrome://tracing)"},
    {.name = "--timeline-ranks",
     .value = "WHICH",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(ts_run_args, timeline_ranks),
     .is_output = true,
     .help = "ranks in the timeline: pipeline (default: tp 0 of data-parallel replica 0, every "
             "stage), replica (all of replica 0), all, or a list of ranks and nodes such as "
             "0,8,node:3 (node:N = every rank placed on node N)"},
    {.name = "--timeline-window",
     .value = "T0:T1",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_window,
     .set_offset = TS_FLAG_SET(ts_run_args, is_window_set),
     .is_output = true,
     .help = "only spans that overlap simulated times T0 to T1, e.g. 10s:12.5s or 0s:500ms "
             "(default: the whole iteration)"},
    {.name = "--report",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_report),
     .is_output = true,
     .help = "also write report.html: summary, time breakdown, a Gantt chart of the pipeline of "
             "replica 0, memory per stage and the definitions (self-contained: open it in a "
             "browser), and pipeline.svg, the Gantt chart alone"},
    {.name = "--explain",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_explain),
     .is_output = true,
     .help = "then explain the result (trainsim explain DIR): the largest losses, why, and the "
             "changes that cut them most, each re-simulated"},
    {.name = "--quiet",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_run_args, is_quiet),
     .is_output = true,
     .help = "no progress line on stderr (shown only when stderr is a terminal: events played, "
             "simulated time, ETA)"},
    {.name = NULL}};

static const ts_flag_group run_groups[] = {{"inputs", ts_run_input_flags, 0},
                                           {"layout (each overrides the workload file)",
                                            ts_args_override_flags, offsetof(ts_run_args, ov)},
                                           {"simulation", simulation_flags, 0},
                                           {"outputs", output_flags, 0},
                                           {NULL, NULL, 0}};

const ts_command ts_run_command = {.name = "run",
                                   .synopsis = "WORKLOAD [options]",
                                   .summary = "simulate one training iteration and report it",
                                   .description = run_description,
                                   .groups = run_groups,
                                   .main = ts_run_main};

int ts_run_parse(const ts_command *c, int argc, char **argv, ts_run_args *a, ts_err *err) {
  memset(a, 0, sizeof *a);
  a->out_dir = "trainsim-out";
  a->fidelity = TS_FIDELITY_HYBRID;
  a->seed = 1;
  a->window_end_s = INFINITY;
  a->overlap_slowdown = -1; /* the platform's */
  ts_args cli = {c, argc, argv, 0, a, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, err)) != TS_ARGS_END;) {
    if (item < 0)
      return -1;
    if (item == TS_ARGS_HELP) {
      ts_args_usage(stdout, c);
      return 1;
    }
    if (item == TS_ARGS_ARGUMENT) {
      if (a->workload != NULL)
        return ts_err_plain(err, "%s takes one WORKLOAD file, found a second one: '%s'", c->name,
                            value);
      a->workload = value;
    }
  }
  if (a->workload == NULL)
    return ts_err_plain(err, "%s needs a WORKLOAD file (see 'trainsim %s --help')", c->name,
                        c->name);
  /* Flags that only mean something beside another: an error, never silently ignored. */
  ts_loc at = {NULL, 0, 0, NULL, NULL};
  if (!a->is_timeline && (a->timeline_ranks != NULL || a->is_window_set)) {
    at.flag = a->timeline_ranks != NULL ? "--timeline-ranks" : "--timeline-window";
    return ts_err_at(err, at, "needs --timeline (it selects what the timeline holds)");
  }
  if (a->timeline_ranks != NULL &&
      strspn(a->timeline_ranks, ",") == strlen(a->timeline_ranks)) { /* empty, or commas alone */
    at.flag = "--timeline-ranks";
    return ts_err_at(err, at, "expected pipeline, replica, all, or a list of ranks, found '%s'",
                     a->timeline_ranks);
  }
  if (a->is_explain && ts_args_executable() == NULL) {
    at.flag = "--explain";
    return ts_err_at(err, at,
                     "starts 'trainsim explain' as a process of its own, which a library call "
                     "cannot: explain the result directory with a call of its own");
  }
  if (a->is_periodic && a->is_every_microbatch) {
    at.flag = "--periodic";
    return ts_err_at(err, at, "expected either it or --play-every-microbatch, found both");
  }
  if (a->is_seed_set && a->placement != TS_PLACEMENT_RANDOM) {
    at.flag = "--seed";
    return ts_err_at(err, at, "needs --placement random (only a random placement draws)");
  }
  return 0;
}

int ts_run_parse_recorded(int n, char **arguments, ts_run_args *a, ts_err *err) {
  return ts_run_parse(&ts_run_command, n, arguments, a, err);
}

static char *absolute_path(const char *path) {
  char *abs = realpath(path, NULL);
  if (abs == NULL)
    abs = strdup(path);
  TS_ASSERT(abs != NULL);
  return abs;
}

/* The arguments result.json records (ts_run_info.arguments) of a run whose argv parsed: a new
 * array of *n new strings. */
static char **record_arguments(int argc, char **argv, int *n) {
  int n_sets = ts_doc_overrides_count(TS_DOC_PLATFORM) + ts_doc_overrides_count(TS_DOC_WORKLOAD);
  char **out = ts_alloc((size_t)(2 * argc + 2 * n_sets + 1), sizeof *out);
  int k = 0;
  ts_err unused = {0};
  ts_args cli = {&ts_run_command, argc, argv, 0, NULL, true};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &unused)) > TS_ARGS_END;) {
    if (item == TS_ARGS_ARGUMENT) {
      out[k++] = absolute_path(value);
    } else if (item == TS_ARGS_OPTION && !flag->is_output) {
      out[k++] = strdup(flag->name);
      if (value != NULL)
        out[k++] = strcmp(flag->name, "--platform") == 0 ? absolute_path(value) : strdup(value);
    }
  }
  for (int i = 0; ts_doc_override(i) != NULL; i++) {
    out[k++] = strdup("--set");
    out[k++] = strdup(ts_doc_override(i));
  }
  for (int i = 0; i < k; i++)
    TS_ASSERT(out[i] != NULL);
  *n = k;
  return out;
}

/* The platform and the resolved workload a command's arguments name, checked together. */
int ts_run_load_inputs(const ts_run_args *a, ts_platform *pf, ts_workload *wl, ts_err *err) {
  if (ts_args_load_platform(a->platform, pf, err) != 0 ||
      ts_workload_load_file(a->workload, wl, err) != 0 || ts_workload_resolve(wl, &a->ov, err) != 0)
    return -1;
  return ts_simulate_check(pf, wl, err);
}

void ts_run_digest_inputs(const ts_run_args *a, const ts_platform *pf, ts_digest *d) {
  ts_digest_file(d, a->workload);
  if (a->platform != NULL)
    ts_digest_file(d, a->platform);
  else
    ts_digest_str(d, ts_platform_default_text);
  if (pf->gpu.kernels != NULL && ts_digest_file(d, ts_kernels_path(pf->gpu.kernels)) != 0)
    ts_digest_str(d, ts_kernels_default_text);
}

int ts_run_load_layout(const ts_command *c, int argc, char **argv, ts_platform *pf,
                       ts_workload *wl) {
  ts_err err = {0};
  ts_run_args a;
  int rc = ts_run_parse(c, argc, argv, &a, &err);
  if (rc == 1)
    return -1;
  if (rc != 0 || ts_run_load_inputs(&a, pf, wl, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  return 0;
}

ts_simulate_opts ts_run_simulate_opts(const ts_run_args *a) {
  ts_simulate_opts o = ts_simulate_defaults();
  o.engine.fidelity = a->fidelity;
  o.engine.collectives = a->collectives;
  o.engine.is_playing_every_rank = a->is_playing_every_rank;
  o.periodic = a->is_periodic           ? TS_PERIODIC_ALWAYS
               : a->is_every_microbatch ? TS_PERIODIC_OFF
                                        : TS_PERIODIC_EXACT;
  o.engine.overlap_slowdown = a->overlap_slowdown;
  o.placement = a->placement;
  o.seed = a->seed;
  o.ignore_memory = a->ignore_memory;
  o.is_forced = a->is_forced;
  o.is_timeline = a->is_timeline;
  o.is_gantt = a->is_report;
  o.timeline_ranks = a->timeline_ranks;
  return o;
}

/* pipeline.svg: the report's Gantt chart as a file of its own (for slides and docs). */
typedef struct gantt_ctx {
  const ts_workload *wl;
  const ts_job *job;
  const ts_sim_result *sim;
} gantt_ctx;

static void write_gantt(FILE *f, const void *ctx) {
  const gantt_ctx *g = ctx;
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
  ts_plot_gantt(f, g->wl, g->job, g->sim);
}

int ts_run_main(int argc, char **argv) {
  ts_err err = {0};
  ts_run_args a;
  int rc = ts_run_parse(&ts_run_command, argc, argv, &a, &err);
  if (rc == 1)
    return 0;
  static ts_platform pf;
  ts_workload wl;
  const char *outputs[5] = {"result.json"}; /* what this run will write */
  int n_outputs = 1;
  if (a.is_timeline)
    outputs[n_outputs++] = "timeline.json";
  if (a.is_report) {
    outputs[n_outputs++] = "report.html";
    outputs[n_outputs++] = "pipeline.svg";
  }
  if (rc != 0 || ts_run_load_inputs(&a, &pf, &wl, &err) != 0 ||
      ts_report_prepare_dir(a.out_dir, &err) != 0 ||
      ts_report_check_outputs(a.out_dir, outputs, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }

  ts_simulate_opts opts = ts_run_simulate_opts(&a);
  ts_progress progress;
  ts_progress_init(&progress, "run", a.is_quiet);
  ts_progress_engine progress_events = {&progress, 0};
  ts_progress_follow(&progress_events, &opts);
  ts_simulation run;
  rc = ts_simulate_workload(&pf, &wl, &opts, &run, &err);
  ts_progress_clear(&progress);
  if (rc != 0) {
    ts_args_report(&err, NULL);
    if (rc == TS_SIMULATE_NO_FIT) {
      ts_metrics mem;
      ts_metrics_memory(&wl, &pf.gpu, &mem);
      ts_report_memory(stderr, &wl, &mem);
      ts_metrics_fini(&mem);
    }
    return TS_ARGS_EXIT_INPUT;
  }
  const ts_sim_result *sim = &run.result;
  if (a.is_periodic && sim->played_microbatches == 0)
    fprintf(stderr, "trainsim: --periodic does not apply to this run (it needs the 1f1b schedule "
                    "of one chunk, no FP8, no timeline or report, a SimGrid fidelity and at least "
                    "p + 24 microbatches a pipeline): every microbatch played\n");
  if (ts_cost_vocab_misaligned(&wl, &pf.gpu))
    fprintf(stderr,
            "trainsim: note: a vocabulary of %ld (framework %s keeps it unpadded) leaves the "
            "logits' rows off 16 bytes, so cuBLAS runs the output layer's GEMMs 4.4-7.5x slower "
            "(measured on the H100, docs/model.md); a multiple of 64 (%ld) avoids it\n",
            wl.model.vocab, ts_framework_names[wl.framework], (wl.model.vocab + 63) / 64 * 64);
  ts_metrics m;
  ts_metrics_compute(&wl, &pf.gpu, sim, &m);
  ts_simulate_reliability(&pf, &wl, &run.job, m.iteration_s, m.train_s, &m.reliability);
  ts_run_info info = {.platform_name = pf.name,
                      .gpu_model = pf.gpu.model,
                      .fidelity = ts_fidelity_names[a.fidelity],
                      .placement = ts_placement_names[a.placement],
                      .seed = a.placement == TS_PLACEMENT_RANDOM ? a.seed : -1,
                      .n_events = sim->n_events,
                      .n_merged_events = sim->n_merged_events,
                      .n_transfers = sim->n_transfers,
                      .n_links = sim->n_links,
                      .n_routes = sim->n_routes,
                      .n_ranks = sim->n_ranks,
                      .n_played_ranks = sim->n_played_ranks,
                      .shortcut = sim->shortcut,
                      .played_microbatches = sim->played_microbatches,
                      .periodic_error_s = sim->periodic_error_s,
                      .periodic_declined_error_s = sim->periodic_declined_error_s,
                      .periodic_declined_iteration_s = sim->periodic_declined_iteration_s,
                      .n_ring_collectives = sim->n_ring_collectives,
                      .n_hierarchical_collectives = sim->n_hierarchical_collectives,
                      .n_tree_collectives = sim->n_tree_collectives,
                      .overlap_slowdown = run.overlap_slowdown,
                      .slowest_gpu_slowdown = run.slowest_gpu_slowdown,
                      .speed_spread = pf.gpu.speed_spread};
  double throttle = 0;
  if (ts_cost_power_limit(&wl, &pf.gpu, &throttle, info.power_stretch))
    info.power_clock = 1 / (1 + throttle);
  char collectives[48] = "ideal";
  if (pf.ccl.library != TS_CCL_IDEAL) {
    char version[16];
    ts_stack_version_text(ts_simulate_ccl_version(&pf, &wl, NULL), version, sizeof version);
    snprintf(collectives, sizeof collectives, "%s %s", ts_ccl_library_names[pf.ccl.library],
             version);
  }
  info.collectives = collectives;
  ts_cost_kernel_sources(&wl, &pf.gpu, info.n_kernels_by_source);
  info.kernels_provenance = ts_kernels_provenance(pf.gpu.kernels);
  info.attention_dropout_unpriced =
      wl.model.attention_dropout > 0 && wl.flash_attention && !pf.gpu.has_attention_dropout;
  info.kernels_path = pf.gpu.kernels != NULL ? ts_kernels_path(pf.gpu.kernels) : NULL;
  char files_digest[17], binary_digest[17];
  ts_digest d;
  ts_digest_init(&d);
  ts_run_digest_inputs(&a, &pf, &d);
  snprintf(files_digest, sizeof files_digest, "%016llx", (unsigned long long)d.h);
  ts_digest_init(&d);
  ts_digest_file(&d, ts_args_program());
  snprintf(binary_digest, sizeof binary_digest, "%016llx", (unsigned long long)d.h);
  info.arguments = record_arguments(argc, argv, &info.n_arguments);
  info.files_digest = files_digest;
  info.binary_digest = binary_digest;
  if (!isfinite(m.iteration_s) || !(m.iteration_s > 0) || !isfinite(m.tokens_per_s)) {
    /* Bounded inputs cannot give this: a bug, reported instead of a result that lies. */
    fprintf(stderr, "trainsim: internal error: the simulated iteration is %g s\n", m.iteration_s);
    ts_metrics_fini(&m);
    ts_simulate_fini(&run);
    return TS_ARGS_EXIT_FAILURE;
  }
  ts_report_summary(stdout, &wl, &info, &m);
  fflush(stdout);
  ts_progress_show(&progress, 0, 0, "writing the result files");
  rc = ts_report_write_json(a.out_dir, &wl, &info, &m, &err);
  ts_timeline_opts tl = {run.in_timeline, a.window_start_s, a.window_end_s};
  if (rc == 0 && a.is_timeline)
    rc = ts_timeline_write(a.out_dir, &wl, &run.job, sim, pf.gpus_per_node, &tl, &err);
  if (rc == 0 && a.is_report)
    rc = ts_html_run_report(a.out_dir, &wl, &info, &m, &run.job, sim, &err);
  if (rc == 0 && !a.is_timeline)
    rc = ts_report_remove_stale(a.out_dir, "timeline.json", &err);
  gantt_ctx gantt = {&wl, &run.job, sim};
  if (rc == 0 && a.is_report)
    rc = ts_report_write_file(a.out_dir, "pipeline.svg", write_gantt, &gantt, &err);
  if (rc == 0 && !a.is_report)
    rc = ts_report_remove_stale(a.out_dir, "report.html", &err);
  if (rc == 0 && !a.is_report)
    rc = ts_report_remove_stale(a.out_dir, "pipeline.svg", &err);
  ts_progress_clear(&progress);
  if (rc != 0)
    ts_args_report(&err, NULL);
  else
    printf("\nresults: %s/result.json%s%s\n", a.out_dir,
           a.is_timeline ? ", timeline.json (open in ui.perfetto.dev)" : "",
           a.is_report ? ", report.html, pipeline.svg" : "");
  ts_metrics_fini(&m);
  ts_simulate_fini(&run);
  for (int i = 0; i < info.n_arguments; i++)
    free(info.arguments[i]);
  free(info.arguments);
  if (rc == 0 && a.is_explain) { /* a process of its own: SimGrid ran in this one */
    fflush(NULL);
    char *explain[] = {(char *)"trainsim", (char *)"explain", (char *)a.out_dir,
                       a.is_quiet ? (char *)"--quiet" : NULL, NULL};
    execv(ts_args_executable(), explain); /* not NULL: ts_run_parse checked */
    fprintf(stderr, "trainsim: error: --explain: cannot start 'trainsim explain %s'\n", a.out_dir);
    return 1;
  }
  return rc == 0 ? 0 : 1;
}
