/* scale: see scale.h. */
#include "scale.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analysis/report.h"
#include "../analysis/scaling.h"
#include "../workloads/doc.h"
#include "cli.h"
#include "study.h"

#define EXIT_INPUT 2
#define MAX_POINTS 64

static const char usage[] =
    "usage: trainsim scale WORKLOAD --gpus N1,N2,... --weak|--strong [options]\n"
    "\n"
    "A scaling study: one simulated iteration per GPU count, each in its own process.\n"
    "  --weak                 the global batch grows with the GPUs (batch x N / N1)\n"
    "  --strong               the global batch stays\n"
    "Efficiency: weak = tokens/s per GPU at N / at N1; strong = T(N1) N1 / (T(N) N).\n"
    "Prints a table and writes scale.csv into --out after every point; rerunning the same\n"
    "study reuses the points already in scale.csv.\n"
    "\n"
    "options (as for 'trainsim run'): --platform FILE, --tp N, --pp N, --micro-batch-size N,\n"
    "--global-batch-size N (at N1), --schedule, --recompute, --zero-stage, --sequence-parallel,\n"
    "--fidelity, --out DIR (default trainsim-out)\n";

typedef struct scale_args {
  const char *workload, *platform, *out_dir;
  long gpus[MAX_POINTS];
  int n_points;
  int is_weak; /* -1 until --weak or --strong */
  ts_fidelity fidelity;
  ts_overrides ov;
} scale_args;

/* Besides ts_cli_override's options. */
static const char *const options[] = {"--gpus", "--platform", "--fidelity", "--out", NULL};
static const char *const switches[] = {"--weak", "--strong", NULL};

static int parse_gpus(const char *text, scale_args *a, ts_err *err) {
  ts_loc flag = {NULL, 0, 0, "--gpus"};
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", text);
  a->n_points = 0;
  for (char *tok = strtok(copy, ","); tok != NULL; tok = strtok(NULL, ",")) {
    long n = 0;
    if (ts_parse_long(tok, &n) != 0 || n < 1 || n > 100000000 || a->n_points == MAX_POINTS)
      return ts_err_at(err, flag, "expected up to %d GPU counts separated by commas, found '%s'",
                       MAX_POINTS, tok);
    if (a->n_points > 0 && n <= a->gpus[a->n_points - 1])
      return ts_err_at(err, flag, "expected increasing GPU counts, found %ld after %ld", n,
                       a->gpus[a->n_points - 1]);
    a->gpus[a->n_points++] = n;
  }
  if (a->n_points == 0)
    return ts_err_at(err, flag, "expected GPU counts such as 128,256,512, found '%s'", text);
  return 0;
}

static int parse(int argc, char **argv, scale_args *a, ts_err *err) {
  memset(a, 0, sizeof *a);
  a->out_dir = "trainsim-out";
  a->is_weak = -1;
  ts_cli cli = {argc, argv, 0, "scale", options, switches, true};
  const char *flag = NULL, *value = NULL;
  ts_overrides *ov = &a->ov;
  for (int item; (item = ts_cli_next(&cli, &flag, &value, err)) != TS_CLI_END;) {
    if (item < 0)
      return -1;
    int rc = 0, choice = 0;
    if (item == TS_CLI_ARGUMENT) {
      if (a->workload != NULL)
        return ts_err_plain(err, "scale takes one WORKLOAD file, found a second one: '%s'", value);
      a->workload = value;
    } else if (strcmp(flag, "--help") == 0) {
      fputs(usage, stdout);
      return 1;
    } else if (strcmp(flag, "--weak") == 0 || strcmp(flag, "--strong") == 0) {
      int weak = strcmp(flag, "--weak") == 0;
      if (a->is_weak >= 0 && a->is_weak != weak)
        return ts_err_plain(err, "give one of --weak and --strong, not both");
      a->is_weak = weak;
    } else if (strcmp(flag, "--gpus") == 0) {
      rc = parse_gpus(value, a, err);
    } else if (strcmp(flag, "--platform") == 0) {
      a->platform = value;
    } else if (strcmp(flag, "--out") == 0) {
      a->out_dir = value;
    } else if ((rc = ts_cli_override(flag, value, ov, err)) != 0) {
      rc = rc < 0 ? -1 : 0;
    } else if (strcmp(flag, "--fidelity") == 0) {
      rc = ts_cli_choice(flag, value, ts_fidelity_names, &choice, err);
      a->fidelity = (ts_fidelity)choice;
    }
    if (rc != 0)
      return -1;
  }
  if (a->workload == NULL)
    return ts_err_plain(err, "scale needs a WORKLOAD file (see 'trainsim scale --help')");
  if (a->n_points == 0)
    return ts_err_plain(err, "scale needs --gpus N1,N2,...");
  if (a->is_weak < 0)
    return ts_err_plain(err, "scale needs --weak or --strong");
  return 0;
}

typedef struct row {
  long gpus, tp, pp, dp, global_batch;
  ts_point point;
  double megatron_pct, mfu_pct, peak_gib; /* as written to (and read from) scale.csv */
  double efficiency;
  bool is_done;
} row;

typedef struct table {
  const char *study; /* first line of scale.csv: which study the rows belong to */
  row rows[MAX_POINTS];
  int n_rows;
} table;

static const char csv_header[] =
    "gpus,tp,pp,dp,global_batch,iteration_s,tokens_per_s,model_tflops_per_gpu,"
    "megatron_percent_of_peak,mfu_percent,efficiency,peak_memory_gib";

/* Numbers print with 17 digits so that a resumed study reads back exactly what it wrote. */
static void write_csv(FILE *f, const void *ctx) {
  const table *t = ctx;
  fprintf(f, "# %s\n%s\n", t->study, csv_header);
  for (int i = 0; i < t->n_rows; i++) {
    const row *r = &t->rows[i];
    if (!r->is_done)
      continue;
    fprintf(f, "%ld,%ld,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r->gpus, r->tp,
            r->pp, r->dp, r->global_batch, r->point.iteration_s, r->point.tokens_per_s,
            r->point.model_tflops_per_gpu, r->megatron_pct, r->mfu_pct, r->efficiency, r->peak_gib);
  }
}

/* Points a previous run of the same study left in dir/scale.csv. */
static void reuse_points(const char *dir, table *t) {
  char path[4096], line[2048];
  snprintf(path, sizeof path, "%s/scale.csv", dir);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return;
  char first[2048];
  snprintf(first, sizeof first, "# %s\n", t->study);
  if (fgets(line, sizeof line, f) == NULL || strcmp(line, first) != 0 ||
      fgets(line, sizeof line, f) == NULL) {
    fclose(f);
    return;
  }
  while (fgets(line, sizeof line, f) != NULL) {
    row r;
    if (sscanf(line, "%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &r.gpus, &r.tp, &r.pp,
               &r.dp, &r.global_batch, &r.point.iteration_s, &r.point.tokens_per_s,
               &r.point.model_tflops_per_gpu, &r.megatron_pct, &r.mfu_pct, &r.efficiency,
               &r.peak_gib) != 12)
      continue;
    for (int i = 0; i < t->n_rows; i++) {
      row *want = &t->rows[i];
      if (want->gpus == r.gpus && want->tp == r.tp && want->pp == r.pp && want->dp == r.dp &&
          want->global_batch == r.global_batch) {
        *want = r;
        want->is_done = true;
      }
    }
  }
  fclose(f);
}

int ts_scale_main(int argc, char **argv) {
  ts_err err = {0};
  scale_args a;
  int rc = parse(argc, argv, &a, &err);
  if (rc == 1)
    return 0;
  static ts_platform pf;
  ts_workload base;
  if (rc != 0 || ts_cli_load_platform(a.platform, &pf, &err) != 0 ||
      ts_workload_load_file(a.workload, &base, &err) != 0 ||
      ts_report_prepare_dir(a.out_dir, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    return EXIT_INPUT;
  }
  /* Resolve every point first: a bad point is an input error before any simulation. */
  static ts_workload points[MAX_POINTS];
  static table t;
  long gb0 = a.ov.is_global_batch_set ? a.ov.global_batch : base.global_batch;
  for (int i = 0; i < a.n_points; i++) {
    ts_overrides ov = a.ov;
    ov.gpus = a.gpus[i];
    ov.is_gpus_set = true;
    ov.is_global_batch_set = true;
    ov.global_batch = gb0;
    if (a.is_weak) {
      if (gb0 * a.gpus[i] % a.gpus[0] != 0) {
        fprintf(stderr,
                "trainsim: error: --gpus: weak scaling needs the global batch (%ld) x %ld / "
                "%ld to be a whole number\n",
                gb0, a.gpus[i], a.gpus[0]);
        return EXIT_INPUT;
      }
      ov.global_batch = gb0 * a.gpus[i] / a.gpus[0];
    }
    points[i] = base;
    if (ts_workload_resolve(&points[i], &ov, &err) != 0) {
      fprintf(stderr, "%s (at %ld GPUs)\n", err.msg, a.gpus[i]);
      return EXIT_INPUT;
    }
    if (points[i].n_gpus > ts_platform_n_gpus(&pf)) {
      fprintf(stderr, "trainsim: error: --gpus: platform '%s' has %ld GPUs, found %ld\n", pf.name,
              ts_platform_n_gpus(&pf), points[i].n_gpus);
      return EXIT_INPUT;
    }
    t.rows[i] = (row){.gpus = points[i].n_gpus,
                      .tp = points[i].tp,
                      .pp = points[i].pp,
                      .dp = points[i].dp,
                      .global_batch = points[i].global_batch};
  }
  t.n_rows = a.n_points;
  char study[1024];
  /* Everything a point's result depends on besides its row, so a rerun reuses only points of
   * the same study. */
  const ts_workload *w = &points[0];
  const ts_model *md = &w->model;
  snprintf(study, sizeof study,
           "trainsim scale %s %s on %s, fidelity %s, model %ld/%ld/%ld/%ld/%ld/%ld/%ld, %s, "
           "micro-batch %ld, %s, recompute %s, ZeRO-%d, sequence parallel %d, flash %d",
           base.name, a.is_weak ? "weak" : "strong", pf.name, ts_fidelity_names[a.fidelity],
           md->n_layers, md->hidden, md->n_heads, md->n_query_groups, md->seq, md->vocab,
           md->ffn_hidden, ts_precision_names[w->precision], w->micro_batch,
           ts_schedule_names[w->schedule], ts_recompute_names[w->recompute], w->zero_stage,
           w->sequence_parallel, w->flash_attention);
  t.study = study;
  reuse_points(a.out_dir, &t);

  printf("%s scaling of %s on %s\n\n", a.is_weak ? "weak" : "strong", base.name, pf.name);
  printf("  %8s %14s %8s %13s %14s %12s %9s %10s\n", "GPUs", "TPxPPxDP", "batch", "iteration_s",
         "tokens/s", "TFLOPS/GPU", "% peak", "efficiency");
  bool tty = isatty(2);
  for (int i = 0; i < t.n_rows; i++) {
    row *r = &t.rows[i];
    if (!r->is_done) {
      if (tty)
        fprintf(stderr, "[%d/%d] simulating %ld GPUs...\r", i + 1, t.n_rows, r->gpus);
      if (ts_study_point(&pf, &points[i], a.fidelity, &r->point, &err) != 0) {
        fprintf(stderr, "%s (at %ld GPUs)\n", err.msg, r->gpus);
        return EXIT_INPUT;
      }
      r->megatron_pct = 100 * r->point.megatron_fraction_of_peak;
      r->mfu_pct = 100 * r->point.mfu;
      r->peak_gib = r->point.peak_memory_bytes / 1073741824.0;
      r->is_done = true;
    }
    const row *r0 = &t.rows[0];
    r->efficiency = a.is_weak ? ts_scaling_weak_efficiency(r0->point.tokens_per_s, r0->gpus,
                                                           r->point.tokens_per_s, r->gpus)
                              : ts_scaling_strong_efficiency(r0->point.iteration_s, r0->gpus,
                                                             r->point.iteration_s, r->gpus);
    if (ts_report_write_file(a.out_dir, "scale.csv", write_csv, &t, &err) != 0) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
    char layout[64];
    snprintf(layout, sizeof layout, "%ldx%ldx%ld", r->tp, r->pp, r->dp);
    printf("  %8ld %14s %8ld %13.4f %14.0f %12.1f %8.2f%% %9.2f%%\n", r->gpus, layout,
           r->global_batch, r->point.iteration_s, r->point.tokens_per_s,
           r->point.model_tflops_per_gpu, r->megatron_pct, 100 * r->efficiency);
    fflush(stdout);
  }
  printf("\nresults: %s/scale.csv (TFLOPS/GPU: model FLOPs; %% peak: Megatron-DeepSpeed's "
         "formula)\n",
         a.out_dir);
  return 0;
}
