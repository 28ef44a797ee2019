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
#include "../workloads/cost.h"
#include "../workloads/doc.h"
#include "args.h"
#include "progress.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* In two parts: C11 compilers need only accept string literals of 4,095 characters. */
static const char run_usage[] =
    "usage: trainsim run WORKLOAD [options]\n"
    "\n"
    "Simulates one training iteration of WORKLOAD (a YAML file, e.g. workloads/gpt-175b.yaml)\n"
    "and prints a summary; writes result.json into the output directory.\n"
    "\n"
    "options (each overrides the workload file):\n"
    "  --platform FILE            platform file (default: the built-in platforms/frontier.yaml)\n"
    "  --set KEY=VALUE            any key of the platform or workload file, checked as there\n"
    "                             (repeatable; e.g. --set network.link.bandwidth=50GBps,\n"
    "                             --set model.num_layers=64); result.json lists them\n"
    "  --gpus N                   GPUs (GCDs on Frontier); data parallelism = N / (tp x cp x pp)\n"
    "  --tp N                     tensor-parallel size (parallelism.tensor)\n"
    "  --pp N                     pipeline-parallel size (parallelism.pipeline)\n"
    "  --dp N                     data-parallel size (parallelism.data)\n"
    "  --cp N                     context-parallel size: ring attention over N ranks that\n"
    "                             split each sequence (parallelism.context)\n"
    "  --ep N, --etp N            expert-parallel and expert tensor-parallel sizes of a\n"
    "                             mixture-of-experts model (parallelism.expert, .expert_tensor)\n"
    "  --micro-batch-size N       sequences per microbatch (training.micro_batch_size)\n"
    "  --global-batch-size N      sequences per iteration (training.global_batch_size)\n"
    "  --schedule gpipe|1f1b|interleaved\n"
    "                             pipeline schedule (parallelism.schedule)\n"
    "  --virtual-stages N         model chunks per pipeline rank; > 1 makes 1f1b the\n"
    "                             interleaved schedule (parallelism.virtual_stages)\n"
    "  --first-stage-layers N, --last-stage-layers N\n"
    "                             layers of the first / last pipeline stage, the rest split\n"
    "                             evenly (parallelism.decoder_first/last_pipeline_num_layers)\n"
    "  --recompute none|selective|full\n"
    "                             activation recomputation (parallelism.recompute)\n"
    "  --sequence-parallel        Megatron sequence parallelism: layer norms and dropouts\n"
    "                             on s/tp of the sequence, each TP all-reduce a reduce-\n"
    "                             scatter and an all-gather (parallelism.sequence_parallel)\n"
    "  --zero-stage 0|1|2|3       0: all-reduce gradients; 1: shard optimizer states\n"
    "                             (reduce-scatter gradients, all-gather weights); 2: shard\n"
    "                             gradients too, reduce-scattered every microbatch; 3: shard\n"
    "                             weights too, all-gathered per layer in forward and backward\n"
    "                             with the next layer prefetched (2 and 3 need --pp 1, as in\n"
    "                             DeepSpeed)\n"
    "  --fsdp                     PyTorch FSDP (FULL_SHARD): the same as --zero-stage 3\n"
    "  --scatter-gather           pipeline activations cross as 1/tp per TP rank, then an\n"
    "                             all-gather inside the stage (Megatron-LM's default;\n"
    "                             parallelism.scatter_gather_tensors_in_pipeline)\n"
    "  --dp-bucket-size BYTES     reduce gradients in buckets of BYTES (fp32) while the\n"
    "                             backward pass runs, overlapped with it (Megatron-LM's\n"
    "                             --overlap-grad-reduce: 160MB = its 40M parameters); 0\n"
    "                             (default): after the pipeline flush, as DeepSpeed does\n"
    "  --overlap-slowdown F       compute that overlaps communication runs (1 + F) times\n"
    "                             longer (kernels share the GPU; default: the platform's\n"
    "                             collectives.overlap_slowdown, measured where it says so)\n";
static const char run_usage_output[] =
    "  --collectives auto|ring|hierarchical|tree\n"
    "                             all-reduce algorithm (default auto: per call, the one the\n"
    "                             platform's library (NCCL, RCCL) picks by its own model;\n"
    "                             hierarchical is trainsim's, priced at the wire;\n"
    "                             result.json counts them)\n"
    "  --fidelity hybrid|aggregate|flow|analytic\n"
    "                             collective transfers: one per rank and collective\n"
    "                             (aggregate) or one per ring step (flow); hybrid (default):\n"
    "                             aggregate, with collectives inside a node priced, not\n"
    "                             played (within 1% of aggregate, 5-20x faster: see\n"
    "                             docs/performance.md); analytic: no network simulation,\n"
    "                             alpha-beta times without contention (optimistic; searches)\n"
    "  --out DIR                  output directory (default: trainsim-out)\n"
    "  --ignore-memory            simulate even when a rank's memory exceeds its HBM\n"
    "  --timeline                 also write timeline.json (Chrome trace format: open it in\n"
    "                             ui.perfetto.dev or chrome://tracing)\n"
    "  --timeline-ranks WHICH     ranks in the timeline: pipeline (default: tp 0 of data-\n"
    "                             parallel replica 0, every stage), replica (all of replica\n"
    "                             0), all, or a list of ranks and nodes such as\n"
    "                             0,8,node:3 (node:N = every rank placed on node N)\n"
    "  --timeline-window T0:T1    only spans that overlap simulated times T0 to T1, e.g.\n"
    "                             10s:12.5s or 0s:500ms (default: the whole iteration)\n"
    "  --report                   also write report.html: summary, time breakdown, a Gantt\n"
    "                             chart of the pipeline of replica 0, memory per stage and\n"
    "                             the definitions (self-contained: open it in a browser),\n"
    "                             and pipeline.svg, the Gantt chart alone\n"
    "  --explain                  then explain the result (trainsim explain DIR): the\n"
    "                             largest losses, why, and the changes that cut them most,\n"
    "                             each re-simulated\n"
    "  --placement contiguous|spread|random\n"
    "                             which nodes the job gets: the first ones (default), round\n"
    "                             robin over the network's units (dragonfly groups, fat-tree\n"
    "                             leaves or rail units), or drawn at random (a busy\n"
    "                             machine; --seed N, default 1)\n"
    "  --quiet                    no progress line on stderr (shown only when stderr is a\n"
    "                             terminal: events played, simulated time, ETA)\n"
    "  --force                    run even when the job looks too big for this machine\n"
    "                             (over an hour: more than 5e9 events at hybrid, 1e9 at\n"
    "                             aggregate and flow, 1e11 analytic)\n"
    "  --play-every-rank          hybrid: one actor per rank, even where a node's tensor-\n"
    "                             parallel ranks could play as one (node play, 8x fewer\n"
    "                             actors and transfers on Frontier; docs/performance.md)\n"
    "  -h, --help                 show this help\n";

/* Besides ts_args_override's options, which every simulating command takes. */
static const char *const run_options[] = {
    "--platform",       "--gpus",      "--dp",   "--fidelity",        "--out",
    "--timeline-ranks", "--placement", "--seed", "--timeline-window", "--overlap-slowdown",
    "--collectives",    NULL};
static const char *const run_switches[] = {"--ignore-memory",   "--force", "--timeline",
                                           "--report",          "--quiet", "--explain",
                                           "--play-every-rank", NULL};
/* The options that shape only the outputs: left out of the arguments result.json records. */
static const char *const output_flags[] = {
    "--out",    "--timeline-ranks", "--timeline-window", "--quiet",
    "--report", "--timeline",       "--explain",         NULL};

/* --timeline-window T0:T1, two times (units.h) with T0 < T1. */
static int parse_window(const char *text, ts_run_args *a, ts_err *err) {
  ts_loc flag = {NULL, 0, 0, "--timeline-window"};
  char copy[256];
  snprintf(copy, sizeof copy, "%s", text);
  char *colon = strchr(copy, ':');
  double t0 = 0, t1 = 0;
  if (colon != NULL)
    *colon = '\0';
  if (colon == NULL || ts_units_parse(copy, TS_UNITS_TIME, &t0, NULL) != 0 ||
      ts_units_parse(colon + 1, TS_UNITS_TIME, &t1, NULL) != 0 || !(t1 > t0))
    return ts_err_at(err, flag,
                     "expected two times T0:T1 with T0 < T1 such as 10s:12.5s or 0s:500ms, "
                     "found '%s'",
                     text);
  a->window_start_s = t0;
  a->window_end_s = t1;
  return 0;
}

/* Parses the arguments of `run` (or `memory`, which takes the same); returns 1 when help was
 * printed, 0 to go on, -1 on error. */
int ts_run_parse(int argc, char **argv, const char *command, const char *const *usage_text,
                 const char *const *options, const char *const *switches, ts_run_args *a,
                 ts_err *err) {
  memset(a, 0, sizeof *a);
  a->out_dir = "trainsim-out";
  a->fidelity = TS_FIDELITY_HYBRID;
  a->seed = 1;
  a->window_end_s = INFINITY;
  a->overlap_slowdown = -1; /* the platform's */
  ts_overrides *ov = &a->ov;
  bool is_window_set = false, is_seed_set = false;
  ts_args cli = {argc, argv, 0, command, options, switches, true, false, false};
  const char *flag = NULL, *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, err)) != TS_ARGS_END;) {
    if (item < 0)
      return -1;
    if (item == TS_ARGS_ARGUMENT) {
      if (a->workload != NULL)
        return ts_err_plain(err, "%s takes one WORKLOAD file, found a second one: '%s'", command,
                            value);
      a->workload = value;
      continue;
    }
    int choice = 0, rc = ts_args_override(flag, value, ov, err);
    if (rc != 0) {
      if (rc < 0)
        return -1;
      continue;
    }
    if (strcmp(flag, "--help") == 0) {
      for (const char *const *part = usage_text; *part != NULL; part++)
        fputs(*part, stdout);
      return 1;
    } else if (strcmp(flag, "--ignore-memory") == 0) {
      a->ignore_memory = true;
    } else if (strcmp(flag, "--force") == 0) {
      a->is_forced = true;
    } else if (strcmp(flag, "--play-every-rank") == 0) {
      a->is_playing_every_rank = true;
    } else if (strcmp(flag, "--quiet") == 0) {
      a->is_quiet = true;
    } else if (strcmp(flag, "--timeline") == 0) {
      a->is_timeline = true;
    } else if (strcmp(flag, "--report") == 0) {
      a->is_report = true;
    } else if (strcmp(flag, "--explain") == 0) {
      a->is_explain = true;
    } else if (strcmp(flag, "--timeline-ranks") == 0) {
      a->timeline_ranks = value;
    } else if (strcmp(flag, "--timeline-window") == 0) {
      rc = parse_window(value, a, err);
      is_window_set = true;
    } else if (strcmp(flag, "--collectives") == 0) {
      rc = ts_args_choice(flag, value, ts_coll_algo_names, &choice, err);
      a->collectives = (ts_coll_algo)choice;
    } else if (strcmp(flag, "--overlap-slowdown") == 0) {
      if (ts_parse_double(value, &a->overlap_slowdown) != 0 || !(a->overlap_slowdown >= 0) ||
          a->overlap_slowdown > 10) {
        ts_loc loc = {NULL, 0, 0, flag};
        rc = ts_err_at(err, loc, "expected a fraction from 0 to 10 such as 0.1, found '%s'", value);
      }
    } else if (strcmp(flag, "--placement") == 0) {
      rc = ts_args_choice(flag, value, ts_placement_names, &choice, err);
      a->placement = (ts_placement)choice;
    } else if (strcmp(flag, "--seed") == 0) {
      rc = ts_args_count(flag, value, 0, TS_ARGS_MAX_COUNT, &a->seed, err);
      is_seed_set = true;
    } else if (strcmp(flag, "--platform") == 0) {
      a->platform = value;
    } else if (strcmp(flag, "--out") == 0) {
      a->out_dir = value;
    } else if (strcmp(flag, "--gpus") == 0) {
      rc = ts_args_count(flag, value, 1, TS_ARGS_MAX_COUNT, &ov->gpus, err);
      ov->is_gpus_set = true;
    } else if (strcmp(flag, "--dp") == 0) {
      rc = ts_args_count(flag, value, 1, TS_ARGS_MAX_COUNT, &ov->dp, err);
      ov->is_dp_set = true;
    } else if (strcmp(flag, "--fidelity") == 0) {
      rc = ts_args_choice(flag, value, ts_fidelity_names, &choice, err);
      a->fidelity = (ts_fidelity)choice;
    }
    if (rc != 0)
      return -1;
  }
  if (a->workload == NULL)
    return ts_err_plain(err, "%s needs a WORKLOAD file (see 'trainsim %s --help')", command,
                        command);
  /* Flags that only mean something beside another: an error, never silently ignored. */
  ts_loc at = {NULL, 0, 0, NULL};
  if (!a->is_timeline && (a->timeline_ranks != NULL || is_window_set)) {
    at.flag = a->timeline_ranks != NULL ? "--timeline-ranks" : "--timeline-window";
    return ts_err_at(err, at, "needs --timeline (it selects what the timeline holds)");
  }
  if (a->timeline_ranks != NULL && a->timeline_ranks[0] == '\0') {
    at.flag = "--timeline-ranks";
    return ts_err_at(err, at, "expected pipeline, replica, all, or a list of ranks, found ''");
  }
  if (is_seed_set && a->placement != TS_PLACEMENT_RANDOM) {
    at.flag = "--seed";
    return ts_err_at(err, at, "needs --placement random (only a random placement draws)");
  }
  return 0;
}

int ts_run_parse_recorded(int n, char **arguments, ts_run_args *a, ts_err *err) {
  static const char *const help[] = {run_usage, run_usage_output, NULL};
  return ts_run_parse(n, arguments, "run", help, run_options, run_switches, a, err);
}

static bool is_output_flag(const char *flag) {
  for (const char *const *o = output_flags; *o != NULL; o++)
    if (strcmp(*o, flag) == 0)
      return true;
  return false;
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
  char **out = calloc((size_t)(2 * argc + 2 * n_sets + 1), sizeof *out);
  TS_ASSERT(out != NULL);
  int k = 0;
  ts_err unused = {0};
  ts_args cli = {argc, argv, 0, "run", run_options, run_switches, true, false, true};
  const char *flag = NULL, *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &unused)) > TS_ARGS_END;) {
    if (item == TS_ARGS_ARGUMENT) {
      out[k++] = absolute_path(value);
    } else if (!is_output_flag(flag)) {
      out[k++] = strdup(flag);
      if (value != NULL)
        out[k++] = strcmp(flag, "--platform") == 0 ? absolute_path(value) : strdup(value);
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

int ts_run_load_layout(int argc, char **argv, const char *command, const char *usage_text,
                       ts_platform *pf, ts_workload *wl) {
  ts_err err = {0};
  ts_run_args a;
  static const char *const options[] = {"--platform", "--gpus", "--dp", NULL};
  const char *const help[] = {usage_text, NULL};
  int rc = ts_run_parse(argc, argv, command, help, options, NULL, &a, &err);
  if (rc == 1)
    return -1;
  if (rc != 0 || ts_run_load_inputs(&a, pf, wl, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    return TS_ARGS_EXIT_INPUT;
  }
  return 0;
}

ts_simulate_opts ts_run_simulate_opts(const ts_run_args *a) {
  ts_simulate_opts o = ts_simulate_defaults();
  o.engine.fidelity = a->fidelity;
  o.engine.collectives = a->collectives;
  o.engine.is_playing_every_rank = a->is_playing_every_rank;
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
  static const char *const help[] = {run_usage, run_usage_output, NULL};
  int rc = ts_run_parse(argc, argv, "run", help, run_options, run_switches, &a, &err);
  if (rc == 1)
    return 0;
  static ts_platform pf;
  ts_workload wl;
  if (rc != 0 || ts_run_load_inputs(&a, &pf, &wl, &err) != 0 ||
      ts_report_prepare_dir(a.out_dir, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
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
    fprintf(stderr, "%s\n", err.msg);
    if (rc == TS_SIMULATE_NO_FIT) {
      ts_metrics mem;
      ts_metrics_memory(&wl, pf.gpu.hbm_bytes, &mem);
      ts_report_memory(stderr, &wl, &mem);
      ts_metrics_fini(&mem);
    }
    return TS_ARGS_EXIT_INPUT;
  }
  const ts_sim_result *sim = &run.result;
  ts_metrics m;
  ts_metrics_compute(&wl, pf.gpu.peak_flops_per_s[wl.precision], pf.gpu.hbm_bytes, pf.gpu.power_w,
                     sim, &m);
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
                      .n_ring_collectives = sim->n_ring_collectives,
                      .n_hierarchical_collectives = sim->n_hierarchical_collectives,
                      .n_tree_collectives = sim->n_tree_collectives,
                      .overlap_slowdown = run.overlap_slowdown};
  ts_cost_kernel_sources(&wl, &pf.gpu, info.n_kernels_by_source);
  char files_digest[17], binary_digest[17];
  ts_digest d;
  ts_digest_init(&d);
  ts_run_digest_inputs(&a, &pf, &d);
  snprintf(files_digest, sizeof files_digest, "%016llx", (unsigned long long)d.h);
  ts_digest_init(&d);
  ts_digest_file(&d, "/proc/self/exe");
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
    fprintf(stderr, "%s\n", err.msg);
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
    execv("/proc/self/exe", explain);
    fprintf(stderr, "trainsim: error: --explain: cannot start 'trainsim explain %s'\n", a.out_dir);
    return 1;
  }
  return rc == 0 ? 0 : 1;
}
