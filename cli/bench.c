/* bench: see bench.h. */
#include "bench.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/benchmark.h"
#include "../sim/engine/coll.h"
#include "../sim/network/route.h"
#include "../sim/simulate.h"
#include "../workloads/alloc.h"
#include "args.h"
#include "progress.h"

#define MAX_SIZES 64

typedef struct bench_args {
  ts_benchmark_op op;
  long n_gpus, from, to;
  const char *platform, *ccl_version;
  ts_fidelity fidelity;
  ts_coll_algo collectives;
  double min_bytes, max_bytes;
  long step_factor; /* sizes grow by this factor (nccl-tests' -f) */
  bool is_quiet; /* no progress line */
  bool is_from_set, is_to_set, is_gpus_set;
} bench_args;

/* A size as nccl-tests' -b and -e take it (a whole number, or with K, M or G: powers of 1,024,
 * its parsesize) or as trainsim's other size flags do (64KiB, 1GB). */
static int parse_size(void *group, const char *flag, const char *value, ts_err *err) {
  double *out = (double *)((char *)group + (strcmp(flag, "--max-bytes") == 0
                                                ? offsetof(bench_args, max_bytes)
                                                : offsetof(bench_args, min_bytes)));
  static const char units[] = "KMG";
  size_t n = strlen(value);
  char last = n > 1 ? (char)toupper((unsigned char)value[n - 1]) : '\0';
  const char *unit = last != '\0' ? strchr(units, last) : NULL;
  if (unit != NULL && n < 32) {
    char digits[32];
    memcpy(digits, value, n - 1);
    digits[n - 1] = '\0';
    char *end = NULL;
    long long whole = strtoll(digits, &end, 10);
    if (isdigit((unsigned char)digits[0]) && *end == '\0' && whole > 0 && whole <= 1LL << 40) {
      *out = (double)whole * pow(1024.0, (double)(unit - units + 1));
      return 0;
    }
  }
  return ts_args_bytes(flag, value, out, err);
}

static const ts_flag bench_flags[] = {
    {.name = "--gpus",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(bench_args, n_gpus),
     .set_offset = TS_FLAG_SET(bench_args, is_gpus_set),
     .lo = 2,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "GPUs taking part, the machine's first N (default 8; the network patterns: the "
             "whole machine)"},
    {.name = "--from",
     .value = "GPU",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(bench_args, from),
     .set_offset = TS_FLAG_SET(bench_args, is_from_set),
     .lo = 0,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "p2p: the sending GPU (a global index: node x GPUs per node + local)"},
    {.name = "--to",
     .value = "GPU",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(bench_args, to),
     .set_offset = TS_FLAG_SET(bench_args, is_to_set),
     .lo = 0,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "p2p: the receiving GPU"},
    {.name = "--platform",
     .value = "FILE",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(bench_args, platform),
     .help = "platform file (default: the built-in platforms/frontier.yaml)"},
    {.name = "--collectives",
     .value = "auto|ring|hierarchical|tree",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(bench_args, collectives),
     .choices = ts_coll_algo_names,
     .help = "all-reduce algorithm (default auto: the one the platform's library (NCCL, RCCL) "
             "picks per size by its own model, with the protocol; the table says which ran as "
             "algorithm/protocol)"},
    {.name = "--ccl-version",
     .value = "X.Y.Z",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(bench_args, ccl_version),
     .help = "the release of the platform's collective library whose tuning constants apply "
             "(default: the newest modelled; e.g. 2.12.12 for the RCCL of ROCm 5.2.3, as a "
             "workload's stack.rccl_version)"},
    {.name = "--fidelity",
     .value = "aggregate|flow|analytic|hybrid",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(bench_args, fidelity),
     .choices = ts_fidelity_names,
     .help = "collective transfers per rank: one (default) or one per ring step"},
    {.name = "--min-bytes",
     .alias = "-b",
     .value = "SIZE",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_size,
     .offset = offsetof(bench_args, min_bytes),
     .help = "smallest size (default 8): 64KiB, or nccl-tests' 64K (K, M, G: powers of 1,024)"},
    {.name = "--max-bytes",
     .alias = "-e",
     .value = "SIZE",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_size,
     .offset = offsetof(bench_args, max_bytes),
     .help = "largest size (default 8GiB), as --min-bytes"},
    {.name = "--step-factor",
     .alias = "-f",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(bench_args, step_factor),
     .lo = 2,
     .hi = 1024,
     .help = "each size this many times the one before (default 2, as nccl-tests' -f)"},
    {.name = "--quiet",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(bench_args, is_quiet),
     .help = "no progress line on stderr (shown only when it is a terminal)"},
    {.name = NULL}};

static const ts_flag_group groups[] = {{"options", bench_flags, 0}, {NULL, NULL, 0}};

const ts_command ts_bench_command = {
    .name = "bench",
    .synopsis = "allreduce|allgather|reducescatter|alltoall|sendrecv [options]\n"
                "p2p --from GPU --to GPU [options]\n"
                "shift|uniform|bisection [options]",
    .summary = "simulated nccl-tests-style collective and p2p benchmarks; network patterns",
    .description =
        "Simulated collective and point-to-point benchmarks, printed as nccl-tests/rccl-tests\n"
        "print them: size, count (of floats), type, redop, root, time, algbw = size / time and\n"
        "busbw (algbw x 2(n-1)/n for all-reduce, x (n-1)/n for all-gather, reduce-scatter and\n"
        "all-to-all, x 1 for sendrecv and p2p), #wrong (N/A: no data are checked), then the\n"
        "algorithm that ran, and nccl-tests' closing '# Avg bus bandwidth' line. Sizes go from\n"
        "--min-bytes (-b) to --max-bytes (-e) by --step-factor (-f); for all-to-all a size is\n"
        "what each GPU sends in all. Each row is printed as soon as its size has run (the\n"
        "analytic fidelity: at the end).\n"
        "\n"
        "Network patterns: every GPU sends a size to the GPU of the same local index on a partner\n"
        "node and receives as much, all at once; the table gives the rate per GPU, per node and\n"
        "in total. shift: node i sends to node i + a group's nodes (a dragonfly group; a fat\n"
        "tree's leaf unit), the adversarial group-to-group pattern; uniform: to a random\n"
        "permutation of the nodes (fixed seed, no node to itself); bisection: the first half of\n"
        "the nodes exchanges with the second, pairwise. --gpus defaults to the whole machine.\n",
    .groups = groups,
    .reads_no_workload = true,
    .main = ts_bench_main};

static int parse(int argc, char **argv, bench_args *a, ts_err *err) {
  memset(a, 0, sizeof *a);
  a->n_gpus = 8;
  a->min_bytes = 8;
  a->max_bytes = 8.0 * 1073741824.0;
  a->step_factor = 2;
  bool has_op = false;
  ts_args cli = {&ts_bench_command, argc, argv, 0, a, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, err)) != TS_ARGS_END;) {
    if (item < 0)
      return -1;
    if (item == TS_ARGS_HELP) {
      ts_args_usage(stdout, &ts_bench_command);
      return 1;
    }
    if (item != TS_ARGS_ARGUMENT)
      continue;
    if (has_op)
      return ts_err_plain(err, "bench takes one operation, found a second one: '%s'", value);
    int choice = 0;
    ts_loc loc = {NULL, 0, 0, "bench", NULL};
    if (ts_args_choice("bench", value, ts_benchmark_op_names, &choice, err) != 0) {
      err->is_set = false;
      return ts_err_at(err, loc,
                       "unknown operation '%s' (one of allreduce, allgather, "
                       "reducescatter, alltoall, sendrecv, p2p, shift, uniform, bisection)",
                       value);
    }
    a->op = (ts_benchmark_op)choice;
    has_op = true;
  }
  if (!has_op)
    return ts_err_plain(err, "bench needs an operation (see 'trainsim bench --help')");
  if (a->op != TS_BENCHMARK_P2P && (a->is_from_set || a->is_to_set)) {
    ts_loc loc = {NULL, 0, 0, a->is_from_set ? "--from" : "--to", NULL};
    return ts_err_at(err, loc, "only 'bench p2p' takes it ('bench %s' uses --gpus)",
                     ts_benchmark_op_names[a->op]);
  }
  if (a->op == TS_BENCHMARK_P2P && a->is_gpus_set) {
    ts_loc loc = {NULL, 0, 0, "--gpus", NULL};
    return ts_err_at(err, loc, "'bench p2p' takes --from and --to, not --gpus");
  }
  if (a->op == TS_BENCHMARK_P2P && (!a->is_from_set || !a->is_to_set))
    return ts_err_plain(err, "bench p2p needs --from GPU and --to GPU");
  if (a->op == TS_BENCHMARK_P2P && a->from == a->to) {
    ts_loc loc = {NULL, 0, 0, "--to", NULL};
    return ts_err_at(err, loc, "expected a GPU other than --from (%ld)", a->from);
  }
  if (a->min_bytes > a->max_bytes) {
    ts_loc loc = {NULL, 0, 0, "--max-bytes", NULL};
    return ts_err_at(err, loc, "expected at least --min-bytes (%.0f), found %.0f", a->min_bytes,
                     a->max_bytes);
  }
  return 0;
}

static void print_header(const bench_args *a, const ts_platform *pf) {
  if (a->op >= TS_BENCHMARK_SHIFT) {
    long nodes = a->n_gpus / pf->gpus_per_node;
    printf("# trainsim bench %s on %s: %ld nodes x %ld GPUs, routing %s, fidelity %s\n",
           ts_benchmark_op_names[a->op], pf->name, nodes, (long)pf->gpus_per_node,
           pf->topology == TS_TOPO_DRAGONFLY ? ts_routing_names[pf->net.routing] : "fat tree",
           ts_fidelity_names[a->fidelity]);
    printf("# %14s %14s %12s %12s %12s\n", "size(B)", "time(us)", "GB/s/GPU", "GB/s/node",
           "TB/s total");
    return;
  }
  if (a->op == TS_BENCHMARK_P2P) {
    ts_route r;
    ts_route_between(pf, a->from, a->to, &r);
    printf("# trainsim bench p2p on %s: GPU %ld (node %ld, local %ld) -> GPU %ld (node %ld, "
           "local %ld)\n",
           pf->name, a->from, a->from / pf->gpus_per_node, a->from % pf->gpus_per_node, a->to,
           a->to / pf->gpus_per_node, a->to % pf->gpus_per_node);
    printf("# route: %d links, bottleneck %.1f GB/s, latency %.3f us:", r.n_links, r.bw_Bps / 1e9,
           r.lat_s * 1e6);
    for (int i = 0; i < r.n_links; i++) {
      double bw, lat;
      char name[64];
      ts_route_link_info(pf, r.links[i], &bw, &lat, name, sizeof name);
      printf(" %s", name);
    }
    printf("\n");
  } else {
    /* The job's ranks are GPUs 0 .. n-1, so ring indices are GPUs. */
    long *gpus = calloc((size_t)a->n_gpus, sizeof(long));
    int *ring = calloc((size_t)a->n_gpus * TS_COLL_MAX_RINGS, sizeof(int));
    TS_ASSERT(gpus != NULL && ring != NULL);
    for (long i = 0; i < a->n_gpus; i++)
      gpus[i] = i;
    int n_rings = ts_coll_rings(pf, gpus, (int)a->n_gpus, ring);
    printf("# trainsim bench %s on %s: %ld x %s, %d ring%s, fidelity %s\n",
           ts_benchmark_op_names[a->op], pf->name, a->n_gpus, pf->gpu.model, n_rings,
           n_rings > 1 ? "s" : "", ts_fidelity_names[a->fidelity]);
    double width = 1e300;
    for (long i = 0; i < a->n_gpus; i++) {
      ts_route r;
      ts_route_between(pf, ring[i], ring[(i + 1) % a->n_gpus], &r);
      width = r.bw_Bps < width ? r.bw_Bps : width;
    }
    printf("# ring 0 order (GPUs):");
    for (long i = 0; i < a->n_gpus && i < 64; i++)
      printf(" %d", ring[i]);
    printf("%s; slowest hop %.1f GB/s\n", a->n_gpus > 64 ? " ..." : "", width / 1e9);
    free(gpus);
    free(ring);
  }
  /* nccl-tests' columns (one pass, out of place; the data are not checked: #wrong N/A, as
   * nccl-tests prints with -c 0), then the algorithm and protocol that ran */
  printf("# %10s %13s %9s %7s %7s %12s %10s %10s %7s  %s\n", "size", "count", "type", "redop",
         "root", "time", "algbw", "busbw", "#wrong", "algorithm");
  printf("# %10s %13s %9s %7s %7s %12s %10s %10s\n", "(B)", "(elements)", "", "", "", "(us)",
         "(GB/s)", "(GB/s)");
}

/* The table's rows, printed in order as soon as every rank is through a size's block (SimGrid
 * fidelities), or all at the end (analytic): a failure late in a long bench keeps the rows
 * already measured. */
typedef struct rows {
  ts_progress *progress; /* cleared before a row is printed, so rows do not land on it */
  const bench_args *a;
  const ts_platform *pf;
  const double *sizes;
  int n_sizes, next;
  long n_ranks, *gpus;
  int *done; /* [size]: ranks through its block */
  double *end_s; /* [size]: the last of them */
  double prev_s;
  double busbw_sum; /* over the collective rows printed, for nccl-tests' closing line */
  int n_printed;
} rows;

static void print_row(rows *w, int k) {
  const bench_args *a = w->a;
  ts_progress_clear(w->progress);
  double t = w->end_s[k] - w->prev_s;
  w->prev_s = w->end_s[k];
  double algbw = w->sizes[k] / t;
  if (a->op >= TS_BENCHMARK_SHIFT) {
    double node = algbw * (double)w->pf->gpus_per_node;
    printf("  %14.0f %14.3f %12.3f %12.3f %12.3f\n", w->sizes[k], t * 1e6, algbw / 1e9, node / 1e9,
           algbw * (double)w->n_ranks / 1e12);
    fflush(stdout);
    return;
  }
  char algo[32] = "p2p";
  if (a->op <= TS_BENCHMARK_ALLTOALL) {
    ts_coll_call call = ts_coll_decide_for(w->pf, w->gpus, (int)w->n_ranks, a->collectives,
                                           ts_benchmark_coll(a->op), w->sizes[k]);
    if (a->op == TS_BENCHMARK_ALLTOALL)
      snprintf(algo, sizeof algo, call.is_pxn ? "pxn" : "pairwise");
    else if (call.is_ideal)
      snprintf(algo, sizeof algo, "%s", ts_coll_algo_names[call.algo]);
    else
      snprintf(algo, sizeof algo, "%s/%s", ts_ccl_algo_names[call.lib.algo],
               ts_ccl_proto_names[call.lib.proto]);
  }
  /* sizes in float elements (nccl-tests' default -d float); the reductions sum */
  bool reduces = a->op == TS_BENCHMARK_ALLREDUCE || a->op == TS_BENCHMARK_REDUCESCATTER;
  double busbw = algbw * ts_benchmark_busbw_factor(a->op, w->n_ranks);
  printf("  %10.0f %13.0f %9s %7s %7d %12.3f %10.3f %10.3f %7s  %s\n", w->sizes[k], w->sizes[k] / 4,
         "float", reduces ? "sum" : "none", -1, t * 1e6, algbw / 1e9, busbw / 1e9, "N/A", algo);
  w->busbw_sum += busbw;
  w->n_printed++;
  fflush(stdout);
}

static void on_block(void *ctx, long rank, int block, double end_s) {
  (void)rank;
  rows *w = ctx;
  w->done[block]++;
  w->end_s[block] = fmax(w->end_s[block], end_s);
  for (; w->next < w->n_sizes && w->done[w->next] == w->n_ranks; w->next++)
    print_row(w, w->next);
}

/* Benchmarks whose transfers SimGrid would not play within about an hour on one core are
 * refused up front (the limit named), not left to run silently. Measured here (2026-12-04,
 * Frontier): an all-to-all sends every pair at once, and its shared-link solve grows with
 * them: 1,024 GCDs, 1.05 million transfers, took 8 minutes a size; a ring at the flow fidelity
 * plays its steps one after another: 1,024 GCDs, 16 rings, 33.5 million transfers, 54 s. */
static int too_much_work(const bench_args *a, int n_sizes, ts_err *err) {
  double n = (double)a->n_gpus, per_size = 0, limit = 0;
  const char *what = "";
  if (a->op == TS_BENCHMARK_ALLTOALL) {
    per_size = n * (n - 1), limit = 7e6, what = "pairs at once";
  } else if (a->op <= TS_BENCHMARK_REDUCESCATTER && a->fidelity == TS_FIDELITY_FLOW) {
    double steps = a->op == TS_BENCHMARK_ALLREDUCE ? 2 * (n - 1) : n - 1;
    per_size = n * steps * TS_COLL_MAX_RINGS, limit = 2e9, what = "ring steps";
  }
  if (per_size * n_sizes <= limit || limit == 0)
    return 0;
  ts_loc loc = {NULL, 0, 0, "--gpus", NULL};
  return ts_err_at(err, loc,
                   "bench %s of %ld GPUs plays about %.3g transfers a size (%s), %.3g over its %d "
                   "sizes, more than the %.3g that finish within about an hour: take fewer "
                   "GPUs, fewer sizes (--min-bytes, --max-bytes)%s",
                   ts_benchmark_op_names[a->op], a->n_gpus, per_size, what, per_size * n_sizes,
                   n_sizes, limit,
                   a->op == TS_BENCHMARK_ALLTOALL ? "" : " or the default fidelity");
}

int ts_bench_main(int argc, char **argv) {
  ts_err err = {0};
  bench_args a;
  int rc = parse(argc, argv, &a, &err);
  if (rc == 1)
    return 0;
  static ts_platform pf;
  if (rc != 0 || ts_args_load_platform(a.platform, &pf, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  if (a.ccl_version != NULL) {
    ts_loc loc = {NULL, 0, 0, "--ccl-version", NULL};
    long version = ts_stack_parse_version(a.ccl_version);
    char why[320];
    if (version < 0)
      ts_err_at(&err, loc, "expected a release such as 2.17.1, found '%s'", a.ccl_version);
    else if (!ts_ccl_version_modelled(&pf.ccl, version, why, sizeof why))
      ts_err_at(&err, loc, "platform '%s' runs %s, and %s", pf.name,
                ts_ccl_library_names[pf.ccl.library], why);
    if (err.is_set) {
      ts_args_report(&err, NULL);
      return TS_ARGS_EXIT_INPUT;
    }
    pf.ccl.version = version;
  }
  long have = ts_platform_n_gpus(&pf);
  if (a.op >= TS_BENCHMARK_SHIFT) {
    if (!a.is_gpus_set)
      a.n_gpus = have;
    ts_loc loc = {NULL, 0, 0, "--gpus", NULL};
    if (a.n_gpus % pf.gpus_per_node != 0 || a.n_gpus < 2 * pf.gpus_per_node) {
      ts_err_at(&err, loc,
                "'bench %s' takes whole nodes: a multiple of %ld GPUs, at least 2 "
                "nodes, found %ld",
                ts_benchmark_op_names[a.op], (long)pf.gpus_per_node, a.n_gpus);
      ts_args_report(&err, NULL);
      return TS_ARGS_EXIT_INPUT;
    }
    long nodes = a.n_gpus / pf.gpus_per_node;
    if (a.op == TS_BENCHMARK_SHIFT &&
        ts_benchmark_shift_nodes(&pf) % nodes == 0) { /* each node its own partner */
      ts_err_at(&err, loc,
                "'bench shift' sends each node %ld nodes on (a %s), which among %ld nodes is "
                "the node itself: take more than %ld nodes",
                ts_benchmark_shift_nodes(&pf),
                pf.topology == TS_TOPO_DRAGONFLY ? "group" : "leaf unit", nodes,
                ts_benchmark_shift_nodes(&pf));
      ts_args_report(&err, NULL);
      return TS_ARGS_EXIT_INPUT;
    }
  }
  long need = a.op == TS_BENCHMARK_P2P ? (a.from > a.to ? a.from : a.to) + 1 : a.n_gpus;
  if (need > have) {
    ts_loc loc = {NULL, 0, 0,
                  a.op == TS_BENCHMARK_P2P ? (a.from > a.to ? "--from" : "--to") : "--gpus", NULL};
    ts_err_at(&err, loc, "platform '%s' has %ld GPUs (0 to %ld), found %ld", pf.name, have,
              have - 1, a.op == TS_BENCHMARK_P2P ? need - 1 : need);
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  double sizes[MAX_SIZES];
  int n_sizes = 0;
  for (double s = a.min_bytes; s <= a.max_bytes && n_sizes < MAX_SIZES; s *= (double)a.step_factor)
    sizes[n_sizes++] = s;
  if (too_much_work(&a, n_sizes, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }

  ts_job job;
  ts_benchmark_build(a.op, a.n_gpus, a.from, a.to, &pf, sizes, n_sizes, &job);
  ts_progress progress;
  ts_progress_init(&progress, "bench", a.is_quiet);
  ts_progress_engine progress_events = {&progress, 0};
  long n_ranks = job.n_ranks;
  rows w = {.progress = &progress,
            .a = &a,
            .pf = &pf,
            .sizes = sizes,
            .n_sizes = n_sizes,
            .n_ranks = n_ranks,
            .gpus = ts_alloc((size_t)n_ranks, sizeof(long)),
            .done = ts_alloc((size_t)n_sizes, sizeof(int)),
            .end_s = ts_alloc((size_t)n_sizes, sizeof(double))};
  for (long r = 0; r < n_ranks; r++)
    w.gpus[r] = ts_job_gpu(&job, r);
  ts_simulate_opts opts = ts_simulate_defaults();
  opts.engine = (ts_engine_opts){.fidelity = a.fidelity,
                                 .collectives = a.collectives,
                                 .is_recording_blocks = true,
                                 .on_block = on_block,
                                 .block_ctx = &w}; /* no compute to slow down: overlap 0 */
  ts_progress_follow(&progress_events, &opts);
  print_header(&a, &pf);
  fflush(stdout);
  ts_simulation sim;
  rc = ts_simulate_job(&pf, &job, &opts, &sim, &err);
  ts_progress_clear(&progress);
  if (rc != 0) {
    ts_args_report(&err, NULL);
    free(w.gpus);
    free(w.done);
    free(w.end_s);
    return TS_ARGS_EXIT_INPUT;
  }
  for (int k = w.next; k < n_sizes; k++) { /* the analytic fidelity reports at the end */
    for (long r = 0; r < sim.result.n_ranks; r++)
      w.end_s[k] = fmax(w.end_s[k], sim.result.ranks[r].block_end_s[k]);
    print_row(&w, k);
  }
  if (w.n_printed > 0) /* nccl-tests' closing line: the mean of the rows' bus bandwidths */
    printf("# Avg bus bandwidth    : %.3f \n", w.busbw_sum / w.n_printed / 1e9);
  free(w.gpus);
  free(w.done);
  free(w.end_s);
  ts_simulate_fini(&sim);
  return 0;
}
