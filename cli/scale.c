/* scale: see scale.h. */
#include "scale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/html.h"
#include "../analysis/report.h"
#include "../analysis/scaling.h"
#include "../workloads/doc.h"
#include "../workloads/text.h"
#include "args.h"
#include "digest.h"
#include "study.h"

#define MAX_POINTS 64

typedef struct scale_args {
  const char *workloads[MAX_POINTS], *platform, *out_dir;
  int n_workloads;
  long gpus[MAX_POINTS];
  int n_points;
  int is_weak; /* -1 until --weak or --strong */
  bool is_report;
  bool is_quiet; /* no progress line */
  long jobs; /* points simulated at once (--jobs) */
  ts_fidelity fidelity;
  ts_overrides ov;
} scale_args;

/* --gpus N1,N2,...: increasing GPU counts. */
static int parse_gpus(void *group, const char *flag, const char *text, ts_err *err) {
  scale_args *a = group;
  ts_loc at = {NULL, 0, 0, flag, NULL};
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", text);
  a->n_points = 0;
  for (char *tok = strtok(copy, ","); tok != NULL; tok = strtok(NULL, ",")) {
    long n = 0;
    if (ts_parse_long(tok, &n) != 0)
      return ts_err_at(err, at, "expected GPU counts separated by commas, found '%s'", tok);
    if (n < 1 || n > TS_ARGS_MAX_COUNT)
      return ts_err_at(err, at, "the GPU count %ld is out of range (1 to %ld)", n,
                       TS_ARGS_MAX_COUNT);
    if (a->n_points == MAX_POINTS)
      return ts_err_at(err, at, "expected at most %d GPU counts, found more", MAX_POINTS);
    if (a->n_points > 0 && n <= a->gpus[a->n_points - 1])
      return ts_err_at(err, at, "expected increasing GPU counts, found %ld after %ld", n,
                       a->gpus[a->n_points - 1]);
    a->gpus[a->n_points++] = n;
  }
  if (a->n_points == 0)
    return ts_err_at(err, at, "expected GPU counts such as 128,256,512, found '%s'", text);
  return 0;
}

/* --weak and --strong: one of them. */
static int parse_kind(void *group, const char *flag, const char *value, ts_err *err) {
  (void)value;
  scale_args *a = group;
  int weak = strcmp(flag, "--weak") == 0;
  if (a->is_weak >= 0 && a->is_weak != weak)
    return ts_err_plain(err, "give one of --weak and --strong, not both");
  a->is_weak = weak;
  return 0;
}

static const ts_flag study_flags[] = {
    {.name = "--gpus",
     .value = "N1,N2,...",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_gpus,
     .help = "the GPU counts, increasing (at most 64)"},
    {.name = "--weak",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_kind,
     .help = "the global batch grows with the GPUs (batch x N / N1); or, given one WORKLOAD per "
             "GPU count, the model grows instead (each file keeps its own batch and layout)"},
    {.name = "--strong",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_kind,
     .help = "the global batch stays"},
    {.name = "--platform",
     .value = "FILE",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(scale_args, platform),
     .help = "platform file (default: the built-in platforms/frontier.yaml)"},
    {.name = "--fidelity",
     .value = "hybrid|aggregate|flow|analytic",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(scale_args, fidelity),
     .choices = ts_fidelity_names,
     .help = "as for 'trainsim run' (default hybrid)"},
    {.name = "--jobs",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(scale_args, jobs),
     .lo = 1,
     .hi = 4096,
     .is_output = true,
     .help = "points simulated at once, in child processes (default 1: a full-scale point can "
             "take GiBs)"},
    {.name = "--out",
     .value = "DIR",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(scale_args, out_dir),
     .is_output = true,
     .help = "output directory (default: trainsim-out)"},
    {.name = "--report",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(scale_args, is_report),
     .is_output = true,
     .help = "also write report.html (scaling curve, time breakdown per point)"},
    {.name = "--quiet",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(scale_args, is_quiet),
     .is_output = true,
     .help = "no progress line on stderr (it is shown only when stderr is a terminal)"},
    {.name = NULL}};

static const ts_flag_group groups[] = {
    {"the study", study_flags, 0},
    {"layout, for every point (each overrides the workload file; --global-batch-size at N1)",
     ts_args_override_flags, offsetof(scale_args, ov)},
    {NULL, NULL, 0}};

const ts_command ts_scale_command = {
    .name = "scale",
    .synopsis = "WORKLOAD [WORKLOAD...] --gpus N1,N2,... --weak|--strong [options]",
    .summary = "a scaling study with efficiencies (scale.csv)",
    .description =
        "A scaling study: one simulated iteration per GPU count, each in its own process.\n"
        "Efficiency: weak = model FLOP/s per GPU at N / at N1 (for one model: tokens/s per GPU);\n"
        "strong = T(N1) N1 / (T(N) N). Prints a table and writes scale.csv into --out after every\n"
        "point; rerunning the same study reuses the points already in scale.csv.\n",
    .groups = groups,
    .main = ts_scale_main};

static int parse(int argc, char **argv, scale_args *a, ts_err *err) {
  memset(a, 0, sizeof *a);
  a->out_dir = "trainsim-out";
  a->is_weak = -1;
  a->fidelity = TS_FIDELITY_HYBRID; /* as run and search */
  a->jobs = 1; /* full-scale points can take GiBs each: one at a time unless asked */
  ts_args cli = {&ts_scale_command, argc, argv, 0, a, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, err)) != TS_ARGS_END;) {
    if (item < 0)
      return -1;
    if (item == TS_ARGS_HELP) {
      ts_args_usage(stdout, &ts_scale_command);
      return 1;
    }
    if (item == TS_ARGS_ARGUMENT) {
      if (a->n_workloads == MAX_POINTS)
        return ts_err_plain(err, "scale takes at most %d WORKLOAD files", MAX_POINTS);
      a->workloads[a->n_workloads++] = value;
    }
  }
  if (a->n_workloads == 0)
    return ts_err_plain(err, "scale needs a WORKLOAD file (see 'trainsim scale --help')");
  if (a->n_points == 0)
    return ts_err_plain(err, "scale needs --gpus N1,N2,...");
  if (a->is_weak < 0)
    return ts_err_plain(err, "scale needs --weak or --strong");
  if (a->n_workloads > 1 && (!a->is_weak || a->n_workloads != a->n_points))
    return ts_err_plain(err,
                        "scale with several WORKLOAD files is weak scaling by model size: it "
                        "needs --weak and one file per GPU count (%d files, %d GPU counts)",
                        a->n_workloads, a->n_points);
  return 0;
}

typedef struct row {
  ts_scaling_point p;
  bool is_done;
} row;

typedef struct table {
  const char *study; /* first line of scale.csv: which study the rows belong to */
  row rows[MAX_POINTS];
  int n_rows;
} table;

static const char csv_header[] =
    "workload,gpus,tp,pp,dp,global_batch,iteration_s,tokens_per_s,model_tflops_per_gpu,"
    "megatron_percent,mfu_percent,efficiency,peak_memory_gib";

/* Numbers print with 17 digits so that a resumed study reads back exactly what it wrote; the
 * workload name is a quoted CSV field (RFC 4180). */
static void write_csv(FILE *f, const void *ctx) {
  const table *t = ctx;
  fprintf(f, "# %s\n%s", t->study, csv_header);
  for (int c = 0; c < TS_CAT_COUNT; c++)
    fprintf(f, ",%s_s", ts_category_names[c]);
  fputs(",goodput\n", f);
  for (int i = 0; i < t->n_rows; i++) {
    const ts_scaling_point *p = &t->rows[i].p;
    if (!t->rows[i].is_done)
      continue;
    ts_text_csv_field(f, p->workload, true);
    fprintf(f, ",%ld,%ld,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", p->gpus, p->tp,
            p->pp, p->dp, p->global_batch, p->iteration_s, p->tokens_per_s, p->model_tflops_per_gpu,
            p->megatron_percent, p->mfu_percent, p->efficiency, p->peak_memory_gib);
    for (int c = 0; c < TS_CAT_COUNT; c++)
      fprintf(f, ",%.17g", p->breakdown_s[c]);
    if (p->goodput >= 0) /* empty where the platform does not model failures */
      fprintf(f, ",%.17g\n", p->goodput);
    else
      fputs(",\n", f);
  }
}

/* One data line of scale.csv; false when it is not one write_csv wrote. */
static bool read_csv_row(const char *line, ts_scaling_point *p) {
  memset(p, 0, sizeof *p);
  if (*line++ != '"')
    return false;
  size_t n = 0;
  for (; *line != '\0'; line++) {
    if (*line == '"' && line[1] != '"')
      break;
    if (*line == '"')
      line++;
    if (n + 1 == sizeof p->workload)
      return false;
    p->workload[n++] = *line;
  }
  if (*line++ != '"' || *line++ != ',')
    return false;
  int used = 0;
  if (sscanf(line, "%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf,%lf,%lf,%lf,%lf%n", &p->gpus, &p->tp, &p->pp,
             &p->dp, &p->global_batch, &p->iteration_s, &p->tokens_per_s, &p->model_tflops_per_gpu,
             &p->megatron_percent, &p->mfu_percent, &p->efficiency, &p->peak_memory_gib,
             &used) != 12)
    return false;
  line += used;
  for (int c = 0; c < TS_CAT_COUNT; c++) {
    if (sscanf(line, ",%lf%n", &p->breakdown_s[c], &used) != 1)
      return false;
    line += used;
  }
  p->goodput = -1;
  if (*line++ != ',')
    return false;
  if (*line != '\n' && *line != '\0') {
    if (sscanf(line, "%lf%n", &p->goodput, &used) != 1 || !(p->goodput >= 0 && p->goodput <= 1))
      return false;
    line += used;
  }
  if (*line != '\n' && *line != '\0')
    return false;
  /* A row is reused only if every figure is one a simulation could have produced. */
  bool ok = p->gpus > 0 && p->tp > 0 && p->pp > 0 && p->dp > 0 && p->global_batch > 0 &&
            p->iteration_s > 0 && isfinite(p->iteration_s) && p->tokens_per_s > 0 &&
            isfinite(p->tokens_per_s) && p->model_tflops_per_gpu >= 0 &&
            isfinite(p->model_tflops_per_gpu) && p->megatron_percent >= 0 &&
            p->megatron_percent <= 1000 && p->mfu_percent >= 0 && p->mfu_percent <= 1000 &&
            p->efficiency >= 0 && isfinite(p->efficiency) && p->peak_memory_gib >= 0 &&
            isfinite(p->peak_memory_gib);
  for (int c = 0; c < TS_CAT_COUNT; c++)
    ok = ok && p->breakdown_s[c] >= 0 && isfinite(p->breakdown_s[c]);
  return ok;
}

#define CSV_LINE 16384

/* Points a previous run of the same study left in dir/scale.csv. */
static void reuse_points(const char *dir, table *t) {
  char path[4096];
  static char line[CSV_LINE], first[CSV_LINE];
  snprintf(path, sizeof path, "%s/scale.csv", dir);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return;
  snprintf(first, sizeof first, "# %s\n", t->study);
  if (fgets(line, sizeof line, f) == NULL || strcmp(line, first) != 0 ||
      fgets(line, sizeof line, f) == NULL) {
    fclose(f);
    return;
  }
  while (fgets(line, sizeof line, f) != NULL) {
    ts_scaling_point p;
    if (!read_csv_row(line, &p))
      continue;
    for (int i = 0; i < t->n_rows; i++) {
      row *want = &t->rows[i];
      if (strcmp(want->p.workload, p.workload) == 0 && want->p.gpus == p.gpus &&
          want->p.tp == p.tp && want->p.pp == p.pp && want->p.dp == p.dp &&
          want->p.global_batch == p.global_batch) {
        want->p = p;
        want->is_done = true;
      }
    }
  }
  fclose(f);
}

/* The pool's view of a study: its points, and the first that failed. */
typedef struct pool_ctx {
  const ts_platform *pf;
  const ts_workload *points;
  ts_fidelity fidelity;
  table *t;
  const char *out_dir;
  int failed; /* the first point (by index) that failed, or -1 */
  ts_err err;
} pool_ctx;

static int load_point(void *ctx, int i, ts_platform *pf, ts_workload *wl, ts_simulate_opts *opts,
                      ts_err *err) {
  (void)err;
  const pool_ctx *c = ctx;
  *pf = *c->pf;
  *wl = c->points[i];
  opts->engine.fidelity = c->fidelity;
  return 0;
}

static void write_csv(FILE *f, const void *ctx);

static void point_label(void *ctx, int i, char *out, size_t size) {
  const pool_ctx *c = ctx;
  snprintf(out, size, "scale: point %d of %d, %ld GPUs", i + 1, c->t->n_rows, c->points[i].n_gpus);
}

static void point_done(void *ctx, int i, int rc, const ts_scaling_point *point, const ts_err *err) {
  pool_ctx *c = ctx;
  if (rc != 0) {
    ts_study_keep_first_failure(i, err, &c->failed, &c->err);
    return;
  }
  c->t->rows[i].p = *point;
  c->t->rows[i].is_done = true;
  ts_err werr = {0};
  if (ts_report_write_file(c->out_dir, "scale.csv", write_csv, c->t, &werr) != 0)
    ts_args_report(&werr, NULL);
}

/* Everything a point's result depends on besides its row, so that a rerun reuses only points
 * of the same study: one clause per workload configuration, in point order. */
static void describe_study(const scale_args *a, const ts_platform *pf, const ts_workload *points,
                           char *out, size_t size) {
  size_t n =
      (size_t)snprintf(out, size, "trainsim scale %s on %s, fidelity %s",
                       a->is_weak ? "weak" : "strong", pf->name, ts_fidelity_names[a->fidelity]);
  char prev[512] = "", clause[512];
  for (int i = 0; i < a->n_points && n < size; i++) {
    const ts_workload *w = &points[i];
    const ts_model *md = &w->model;
    char schedule[64];
    ts_workload_schedule_label(w, schedule, sizeof schedule);
    snprintf(clause, sizeof clause,
             "; %.63s: model %ld/%ld/%ld/%ld/%ld/%ld/%ld, %s, micro-batch %ld, %s, recompute %s, "
             "ZeRO-%d, sequence parallel %d, attention %d, %s, fusions %#x",
             w->name, md->n_layers, md->hidden, md->n_heads, md->n_query_groups, md->seq, md->vocab,
             md->ffn_hidden, ts_precision_names[w->precision], w->micro_batch, schedule,
             ts_recompute_names[w->recompute], w->zero_stage, w->sequence_parallel,
             (int)w->attention, ts_framework_names[w->framework], w->fusions);
    if (strcmp(clause, prev) == 0)
      continue;
    n += (size_t)snprintf(out + n, size - n, "%s", clause);
    snprintf(prev, sizeof prev, "%s", clause);
  }
}

/* Everything else a point's result depends on, as a fingerprint: the binary, the platform
 * file and its kernel table (or the built-in ones), the workload files, and every argument but
 * the flags that change no result (args.h: is_output). */
static uint64_t inputs_digest(int argc, char **argv, const scale_args *a, const ts_platform *pf) {
  ts_digest d;
  ts_digest_init(&d);
  ts_digest_file(&d, ts_args_program());
  if (a->platform != NULL)
    ts_digest_file(&d, a->platform);
  else
    ts_digest_str(&d, ts_platform_default_text);
  const char *kernel_table = ts_kernels_path(pf->gpu.kernels);
  if (kernel_table[0] != '\0' && ts_digest_file(&d, kernel_table) != 0 &&
      strcmp(kernel_table, ts_kernels_default_name) == 0)
    ts_digest_str(&d, ts_kernels_default_text);
  for (int i = 0; i < a->n_workloads; i++)
    ts_digest_file(&d, a->workloads[i]);
  ts_err unused = {0};
  ts_args cli = {&ts_scale_command, argc, argv, 0, NULL, true}; /* --set: the registry's */
  const ts_flag *flag = NULL;
  const char *value = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &unused)) > TS_ARGS_END;) {
    if (item == TS_ARGS_OPTION && flag->is_output)
      continue;
    ts_digest_str(&d, item == TS_ARGS_OPTION ? flag->name : value);
    if (item == TS_ARGS_OPTION && value != NULL)
      ts_digest_str(&d, value);
  }
  for (int i = 0; ts_doc_override(i) != NULL; i++) {
    ts_digest_str(&d, "--set");
    ts_digest_str(&d, ts_doc_override(i));
  }
  return d.h;
}

/* Resolves point i: its workload file (or the only one), the GPU count and, for weak scaling
 * of one model, the grown batch. */
static int resolve_point(const scale_args *a, int i, const ts_workload *files, long gb0,
                         ts_workload *out, ts_err *err) {
  bool by_model = a->n_workloads > 1;
  ts_overrides ov = a->ov;
  ov.gpus = a->gpus[i];
  ov.is_gpus_set = true;
  if (!by_model) {
    ov.is_global_batch_set = true;
    ov.global_batch = gb0;
    if (a->is_weak) {
      if (gb0 * a->gpus[i] % a->gpus[0] != 0)
        return ts_err_plain(err,
                            "--gpus: weak scaling needs the global batch (%ld) x %ld / %ld to be "
                            "a whole number",
                            gb0, a->gpus[i], a->gpus[0]);
      ov.global_batch = gb0 * a->gpus[i] / a->gpus[0];
    }
  }
  *out = files[by_model ? i : 0];
  return ts_workload_resolve(out, &ov, err);
}

int ts_scale_main(int argc, char **argv) {
  ts_err err = {0};
  static scale_args a;
  int rc = parse(argc, argv, &a, &err);
  if (rc == 1)
    return 0;
  static ts_platform pf;
  static ts_workload files[MAX_POINTS], points[MAX_POINTS];
  if (rc != 0 || ts_args_load_platform(a.platform, &pf, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  for (int i = 0; i < a.n_workloads; i++) {
    if (ts_workload_load_file(a.workloads[i], &files[i], &err) != 0) {
      ts_args_report(&err, NULL);
      return TS_ARGS_EXIT_INPUT;
    }
  }
  const char *outputs[] = {"scale.csv", a.is_report ? "report.html" : NULL, NULL};
  if (ts_report_prepare_dir(a.out_dir, &err) != 0 ||
      ts_report_check_outputs(a.out_dir, outputs, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  /* Resolve every point first: a bad point is an input error before any simulation. */
  static table t;
  long gb0 = a.ov.is_global_batch_set ? a.ov.global_batch : files[0].global_batch;
  for (int i = 0; i < a.n_points; i++) {
    if (resolve_point(&a, i, files, gb0, &points[i], &err) != 0) {
      char note[48];
      snprintf(note, sizeof note, " (at %ld GPUs)", a.gpus[i]);
      ts_args_report(&err, note);
      return TS_ARGS_EXIT_INPUT;
    }
    if (points[i].n_gpus > ts_platform_n_gpus(&pf)) {
      fprintf(stderr, "trainsim: error: --gpus: platform '%s' has %ld GPUs, found %ld\n", pf.name,
              ts_platform_n_gpus(&pf), points[i].n_gpus);
      return TS_ARGS_EXIT_INPUT;
    }
    ts_scaling_point *p = &t.rows[i].p;
    snprintf(p->workload, sizeof p->workload, "%.63s", points[i].name);
    p->gpus = points[i].n_gpus;
    p->tp = points[i].tp;
    p->pp = points[i].pp;
    p->dp = points[i].dp;
    p->global_batch = points[i].global_batch;
  }
  t.n_rows = a.n_points;
  static char study[CSV_LINE - 8];
  describe_study(&a, &pf, points, study, sizeof study);
  size_t used = strlen(study);
  snprintf(study + used, sizeof study - used, "; inputs %016llx",
           (unsigned long long)inputs_digest(argc, argv, &a, &pf));
  t.study = study;
  reuse_points(a.out_dir, &t);

  bool by_model = a.n_workloads > 1;
  printf("%s scaling%s of %s on %s\n\n", a.is_weak ? "weak" : "strong",
         by_model ? " by model size" : "", by_model ? "several models" : files[0].name, pf.name);
  bool goodput = pf.reliability.is_set;
  printf("  %-16s %8s %14s %8s %13s %14s %11s %8s %11s %10s%s\n", "model", "GPUs", "TPxPPxDP",
         "batch", "iteration_s", "tokens/s", "TFLOPS/GPU", "MFU", "Megatron %", "efficiency",
         goodput ? "    goodput" : "");
  /* The points not reused, --jobs at a time (study.h's pool); each is kept in scale.csv as it
   * ends, so that a stopped study resumes. */
  int pending[MAX_POINTS], n_pending = 0;
  for (int i = 0; i < t.n_rows; i++)
    if (!t.rows[i].is_done)
      pending[n_pending++] = i;
  pool_ctx ctx = {.pf = &pf,
                  .points = points,
                  .fidelity = a.fidelity,
                  .t = &t,
                  .out_dir = a.out_dir,
                  .failed = -1};
  fflush(stdout);
  int sig = ts_study_pool(n_pending, pending, (int)a.jobs, load_point, point_done,
                          a.is_quiet ? NULL : point_label, &ctx);
  if (sig != 0) { /* points end in order with one job: the first unfinished one was running */
    int running = 0;
    while (running < t.n_rows - 1 && t.rows[running].is_done)
      running++;
    char what[64];
    snprintf(what, sizeof what, "%ld GPUs", points[running].n_gpus);
    ts_study_stopped(sig, what);
  }
  if (ctx.failed >= 0) {
    char note[48];
    snprintf(note, sizeof note, " (at %ld GPUs)", points[ctx.failed].n_gpus);
    ts_args_report(&ctx.err, note);
    return TS_ARGS_EXIT_INPUT;
  }
  static ts_scaling_point done[MAX_POINTS];
  for (int i = 0; i < t.n_rows; i++) {
    row *r = &t.rows[i];
    for (int j = 0; j <= i; j++)
      done[j] = t.rows[j].p;
    ts_scaling_fill(a.is_weak, i + 1, done);
    r->p.efficiency = done[i].efficiency;
    r->p.speedup = done[i].speedup;
    if (ts_report_write_file(a.out_dir, "scale.csv", write_csv, &t, &err) != 0) {
      ts_args_report(&err, NULL);
      return 1;
    }
    const ts_scaling_point *p = &r->p;
    char layout[64];
    snprintf(layout, sizeof layout, "%ldx%ldx%ld", p->tp, p->pp, p->dp);
    printf("  %-16s %8ld %14s %8ld %13.4f %14.0f %11.1f %7.2f%% %10.2f%% %9.2f%%", p->workload,
           p->gpus, layout, p->global_batch, p->iteration_s, p->tokens_per_s,
           p->model_tflops_per_gpu, p->mfu_percent, p->megatron_percent, 100 * p->efficiency);
    if (goodput)
      printf(" %9.2f%%", 100 * p->goodput);
    putchar('\n');
    fflush(stdout);
  }
  if (a.is_report &&
      ts_html_scale_report(a.out_dir, study, a.is_weak, pf.name, t.n_rows, done, &err) != 0) {
    ts_args_report(&err, NULL);
    return 1;
  }
  if (!a.is_report && ts_report_remove_stale(a.out_dir, "report.html", &err) != 0) {
    ts_args_report(&err, NULL);
    return 1;
  }
  printf("\nTFLOPS/GPU and MFU: model FLOPs; Megatron %%: Megatron-DeepSpeed's formula (the "
         "Frontier study's %% of peak).\nresults: %s/scale.csv%s\n",
         a.out_dir, a.is_report ? " and report.html" : "");
  return 0;
}
