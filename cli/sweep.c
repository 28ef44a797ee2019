/* sweep: see sweep.h. */
#define _DEFAULT_SOURCE /* realpath */
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analysis/html.h"
#include "../analysis/report.h"
#include "../workloads/doc.h"
#include "../workloads/text.h"
#include "args.h"
#include "digest.h"
#include "progress.h"
#include "run.h"
#include "study.h"

#define MAX_AXES 16
#define MAX_POINTS 10000
#define MAX_VALUE 256

/* The flags of `run` a sweep axis may set, by axis name. */
static const struct {
  const char *axis, *flag;
} layout_axes[] = {
    {"gpus", "--gpus"},
    {"tp", "--tp"},
    {"pp", "--pp"},
    {"dp", "--dp"},
    {"cp", "--cp"},
    {"ep", "--ep"},
    {"etp", "--etp"},
    {"micro_batch_size", "--micro-batch-size"},
    {"global_batch_size", "--global-batch-size"},
    {"schedule", "--schedule"},
    {"virtual_stages", "--virtual-stages"},
    {"recompute", "--recompute"},
    {"zero_stage", "--zero-stage"},
    {"sequence_parallel", "--sequence-parallel"},
};
enum { N_LAYOUT_AXES = sizeof layout_axes / sizeof layout_axes[0] };

typedef struct point {
  char values[MAX_AXES][MAX_VALUE]; /* "" where the axis does not apply */
  ts_loc loc; /* where the spec sets it (its list entry, or the grid) */
  uint64_t digest;
  bool is_done, is_ok;
  ts_scaling_point result;
  char error[512];
} point;

typedef struct sweep {
  const char *spec_path, *out_dir;
  char name[128];
  char workload[4096], platform[4096]; /* the spec's defaults ("" platform: the built-in) */
  ts_fidelity fidelity;
  int n_axes, n_fixed;
  char axes[MAX_AXES][64];
  char fixed_names[MAX_AXES][64], fixed_values[MAX_AXES][MAX_VALUE];
  int n_points;
  point *points;
  long jobs;
  bool is_report, is_quiet;
  /* Beyond one machine: write a Slurm job-array script (--slurm), run one array task's share
   * of the points (--array-task I --array-tasks K: points i with i mod K = I), or merge what
   * the tasks finished (--collect). */
  bool is_slurm, is_collect;
  long array_task, array_tasks; /* array_tasks 0: not an array task */
  const char *account, *partition, *time_limit;
  int n_done;
  ts_progress progress;
} sweep;

static const ts_flag sweep_flags[] = {
    {.name = "--jobs",
     .value = "N",
     .alias = "-j",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(sweep, jobs),
     .lo = 1,
     .hi = 4096,
     .help = "points simulated at once (default: the machine's cores)"},
    {.name = "--out",
     .value = "DIR",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(sweep, out_dir),
     .help = "where sweep.csv and points/ go (default trainsim-out)"},
    {.name = "--report",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(sweep, is_report),
     .help = "also write report.html (the table, and a plot along each axis)"},
    {.name = "--quiet",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(sweep, is_quiet),
     .help = "no progress line on stderr (shown only when stderr is a terminal)"},
    {.name = NULL}};

static const ts_flag cluster_flags[] = {
    {.name = "--slurm",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(sweep, is_slurm),
     .help = "write DIR/sweep.slurm, a Slurm job array of one task per point (at most 1,000), "
             "with --account, --partition, --time as #SBATCH lines; submit it with sbatch (the "
             "tasks write DIR/points/ on a shared file system)"},
    {.name = "--account",
     .value = "A",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(sweep, account),
     .help = "the job array's Slurm account"},
    {.name = "--partition",
     .value = "P",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(sweep, partition),
     .help = "the job array's Slurm partition"},
    {.name = "--time",
     .value = "T",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(sweep, time_limit),
     .help = "each task's Slurm time limit, such as 02:00:00"},
    {.name = "--collect",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(sweep, is_collect),
     .help = "merge whatever points have finished into sweep.csv (no simulation): the same spec "
             "runs locally or on a cluster, and gives the same file"},
    {.name = "--array-task",
     .value = "I",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(sweep, array_task),
     .lo = 0,
     .hi = MAX_POINTS,
     .help = "run as task I of a job array (sweep.slurm passes Slurm's array index): the points "
             "i with i mod K = I"},
    {.name = "--array-tasks",
     .value = "K",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(sweep, array_tasks),
     .lo = 1,
     .hi = MAX_POINTS,
     .help = "the job array's task count"},
    {.name = NULL}};

static const ts_flag_group groups[] = {
    {"options", sweep_flags, 0}, {"beyond one machine", cluster_flags, 0}, {NULL, NULL, 0}};

const ts_command ts_sweep_command = {
    .name = "sweep",
    .synopsis = "SPEC.yaml [-j N] [--out DIR] [--report] [--quiet]\n"
                "SPEC.yaml --slurm [--account A] [--partition P] [--time T] [--out DIR]\n"
                "SPEC.yaml --collect [--out DIR] [--report]",
    .summary = "a what-if study over any axes, points in parallel, resumable (sweep.csv)",
    .description =
        "A what-if study: every point of SPEC simulated, N at a time in child processes.\n"
        "SPEC names a workload (and optionally a platform and a fidelity), values all points "
        "share\n"
        "(fixed) and the points: a grid whose axes are crossed, or a list of points. An axis is a\n"
        "layout flag of 'trainsim run' (gpus, tp, pp, dp, cp, ep, etp, micro_batch_size,\n"
        "global_batch_size, schedule, virtual_stages, recompute, zero_stage, sequence_parallel),\n"
        "workload or platform (a file), or a key of either file by its path (as --set KEY=VALUE):\n"
        "\n"
        "  name: nic-what-if\n"
        "  workload: workloads/gpt-22b.yaml\n"
        "  fixed: {gpus: 512}\n"
        "  grid: {tp: [2, 4], network.global_link.bandwidth: [25GBps, 50GBps]}\n"
        "\n"
        "Every point is checked before any runs. Finished points are kept in DIR/points/, named "
        "by\n"
        "a digest of everything they depend on: a rerun reuses them, and Ctrl-C loses only the\n"
        "points running. Points that do not fit in memory are rows with their reason.\n",
    .groups = groups,
    .main = ts_sweep_main};

static bool is_layout_axis(const char *name) {
  for (int i = 0; i < N_LAYOUT_AXES; i++)
    if (strcmp(layout_axes[i].axis, name) == 0)
      return true;
  return false;
}

/* An axis name is a layout flag, workload, platform, or a file key's path (with a dot). */
static int check_axis(const ts_doc *doc, int node, const char *name, ts_err *err) {
  if (name == NULL)
    return ts_err_at(err, ts_doc_loc(doc, node), "expected an axis name, found a list or mapping");
  if (is_layout_axis(name) || strcmp(name, "workload") == 0 || strcmp(name, "platform") == 0 ||
      strchr(name, '.') != NULL)
    return 0;
  return ts_err_at(err, ts_doc_loc(doc, node),
                   "'%s' is not an axis: expected a layout flag (gpus, tp, pp, dp, cp, ep, etp, "
                   "micro_batch_size, global_batch_size, schedule, virtual_stages, recompute, "
                   "zero_stage, sequence_parallel), workload, platform, or a file key's path such "
                   "as network.link.bandwidth",
                   name);
}

static int axis_index(const sweep *s, const char *name) {
  for (int i = 0; i < s->n_axes; i++)
    if (strcmp(s->axes[i], name) == 0)
      return i;
  return -1;
}

/* A scalar value, copied; anything else is an error at its node. */
static int scalar(const ts_doc *doc, int node, const char *what, char *out, ts_err *err) {
  const char *v = ts_doc_scalar(doc, node);
  if (v == NULL || strlen(v) >= MAX_VALUE)
    return ts_err_at(err, ts_doc_loc(doc, node),
                     "%s: expected a value (a number, a word or a path, "
                     "under %d characters)",
                     what, MAX_VALUE);
  snprintf(out, MAX_VALUE, "%s", v);
  return 0;
}

/* The mapping `key` of the spec's keys (names and scalar values); 0 when absent. */
static int fixed_values(sweep *s, const ts_doc *doc, int root, ts_err *err) {
  int map = ts_doc_get(doc, root, "fixed");
  if (map == 0)
    return 0;
  if (!ts_doc_is_map(doc, map))
    return ts_err_at(err, ts_doc_loc(doc, map),
                     "key 'fixed': expected a mapping of axes to values");
  for (int i = 0;; i++) {
    int key = 0, value = 0;
    if (ts_doc_map_item(doc, map, i, &key, &value) != 0)
      break;
    const char *name = ts_doc_scalar(doc, key);
    for (int f = 0; name != NULL && f < s->n_fixed; f++)
      if (strcmp(s->fixed_names[f], name) == 0)
        return ts_err_at(err, ts_doc_loc(doc, key), "fixed axis '%s' given twice", name);
    if (s->n_fixed == MAX_AXES || check_axis(doc, key, name, err) != 0)
      return s->n_fixed == MAX_AXES
                 ? ts_err_at(err, ts_doc_loc(doc, key), "more than %d axes", MAX_AXES)
                 : -1;
    snprintf(s->fixed_names[s->n_fixed], sizeof s->fixed_names[0], "%s", name);
    if (scalar(doc, value, name, s->fixed_values[s->n_fixed], err) != 0)
      return -1;
    s->n_fixed++;
  }
  return 0;
}

static int add_axis(sweep *s, const ts_doc *doc, int key, ts_err *err) {
  const char *name = ts_doc_scalar(doc, key);
  if (check_axis(doc, key, name, err) != 0)
    return -1;
  for (int f = 0; f < s->n_fixed; f++)
    if (strcmp(s->fixed_names[f], name) == 0)
      return ts_err_at(err, ts_doc_loc(doc, key), "'%s' is both fixed and an axis", name);
  if (axis_index(s, name) >= 0)
    return axis_index(s, name);
  if (s->n_axes == MAX_AXES)
    return ts_err_at(err, ts_doc_loc(doc, key), "more than %d axes", MAX_AXES);
  snprintf(s->axes[s->n_axes], sizeof s->axes[0], "%s", name);
  return s->n_axes++;
}

static point *new_point(sweep *s, ts_loc loc, ts_err *err) {
  if (s->n_points == MAX_POINTS) {
    ts_err_at(err, loc, "more than %d points", MAX_POINTS);
    return NULL;
  }
  s->points = realloc(s->points, (size_t)(s->n_points + 1) * sizeof *s->points);
  TS_ASSERT(s->points != NULL);
  point *p = &s->points[s->n_points++];
  memset(p, 0, sizeof *p);
  p->loc = loc;
  return p;
}

/* grid: {axis: [values], ...}: every combination, the first axis slowest. */
static int expand_grid(sweep *s, const ts_doc *doc, int grid, ts_err *err) {
  int cols[MAX_AXES], lists[MAX_AXES], sizes[MAX_AXES], n = 0;
  long total = 1;
  for (int i = 0;; i++) {
    int key = 0, value = 0;
    if (ts_doc_map_item(doc, grid, i, &key, &value) != 0)
      break;
    int before = s->n_axes, col = add_axis(s, doc, key, err);
    if (col < 0)
      return -1;
    if (col < before)
      return ts_err_at(err, ts_doc_loc(doc, key), "grid axis '%s' given twice", s->axes[col]);
    if (!ts_doc_is_seq(doc, value) || ts_doc_seq_len(doc, value) == 0)
      return ts_err_at(err, ts_doc_loc(doc, value), "grid axis '%s': expected a list of values",
                       s->axes[col]);
    cols[n] = col;
    lists[n] = value;
    sizes[n] = ts_doc_seq_len(doc, value);
    total *= sizes[n++];
    if (total > MAX_POINTS)
      return ts_err_at(err, ts_doc_loc(doc, grid), "the grid has more than %d points", MAX_POINTS);
  }
  if (n == 0)
    return ts_err_at(err, ts_doc_loc(doc, grid), "key 'grid': expected at least one axis");
  for (long k = 0; k < total; k++) {
    point *p = new_point(s, ts_doc_loc(doc, grid), err);
    if (p == NULL)
      return -1;
    long rest = k;
    for (int a = n - 1; a >= 0; a--) { /* the last axis fastest */
      int item = ts_doc_seq_item(doc, lists[a], (int)(rest % sizes[a]));
      rest /= sizes[a];
      if (scalar(doc, item, s->axes[cols[a]], p->values[cols[a]], err) != 0)
        return -1;
    }
  }
  return 0;
}

/* points: [{axis: value, ...}, ...]. */
static int expand_points(sweep *s, const ts_doc *doc, int list, ts_err *err) {
  if (!ts_doc_is_seq(doc, list) || ts_doc_seq_len(doc, list) == 0)
    return ts_err_at(err, ts_doc_loc(doc, list), "key 'points': expected a list of mappings");
  for (int i = 0; i < ts_doc_seq_len(doc, list); i++) {
    int map = ts_doc_seq_item(doc, list, i);
    if (!ts_doc_is_map(doc, map))
      return ts_err_at(err, ts_doc_loc(doc, map), "point %d: expected a mapping of axes to values",
                       i + 1);
    point *p = new_point(s, ts_doc_loc(doc, map), err);
    if (p == NULL)
      return -1;
    for (int j = 0;; j++) {
      int key = 0, value = 0;
      if (ts_doc_map_item(doc, map, j, &key, &value) != 0)
        break;
      int col = add_axis(s, doc, key, err);
      if (col < 0)
        return -1;
      if (p->values[col][0] != '\0')
        return ts_err_at(err, ts_doc_loc(doc, key), "point %d: axis '%s' given twice", i + 1,
                         s->axes[col]);
      if (scalar(doc, value, s->axes[col], p->values[col], err) != 0)
        return -1;
    }
  }
  return 0;
}

static int read_spec(sweep *s, ts_err *err) {
  static const char *const keys[] = {"name",  "description", "workload", "platform", "fidelity",
                                     "fixed", "grid",        "points",   NULL};
  ts_doc *doc = NULL;
  if (ts_doc_load_file(s->spec_path, &doc, err) != 0)
    return -1;
  int root = ts_doc_root(doc), rc = -1;
  const char *name = NULL, *workload = NULL, *platform = NULL;
  int fidelity = TS_FIDELITY_HYBRID;
  if (root == 0) {
    ts_err_at(err, (ts_loc){s->spec_path, 0, 0, NULL, NULL},
              "empty sweep spec: expected a mapping with 'workload' and 'grid' or 'points'");
    goto done;
  }
  if (ts_doc_check_map(doc, root, "sweep", keys, err) != 0 ||
      ts_doc_get_string(doc, root, "name", &name, err) < 0 ||
      ts_doc_get_string(doc, root, "workload", &workload, err) < 0 ||
      ts_doc_get_string(doc, root, "platform", &platform, err) < 0 ||
      ts_doc_get_enum(doc, root, "fidelity", ts_fidelity_names, &fidelity, err) < 0 ||
      fixed_values(s, doc, root, err) != 0)
    goto done;
  s->fidelity = (ts_fidelity)fidelity;
  ts_text_copy(s->name, sizeof s->name, name != NULL ? name : s->spec_path);
  snprintf(s->workload, sizeof s->workload, "%s", workload != NULL ? workload : "");
  snprintf(s->platform, sizeof s->platform, "%s", platform != NULL ? platform : "");
  int grid = ts_doc_get(doc, root, "grid"), list = ts_doc_get(doc, root, "points");
  if ((grid == 0) == (list == 0)) {
    ts_err_at(err, ts_doc_loc(doc, root), "a sweep spec has either 'grid' or 'points', found %s",
              grid == 0 ? "neither" : "both");
    goto done;
  }
  if (grid != 0 && !ts_doc_is_map(doc, grid)) {
    ts_err_at(err, ts_doc_loc(doc, grid), "key 'grid': expected a mapping of axes to lists");
    goto done;
  }
  rc = grid != 0 ? expand_grid(s, doc, grid, err) : expand_points(s, doc, list, err);
  /* Locations must outlive the document: keep the spec's path and the line only. */
  for (int i = 0; i < s->n_points; i++)
    s->points[i].loc.file = s->spec_path;
done:
  ts_doc_free(doc);
  return rc;
}

/* The value of axis `name` at point p: its own, else fixed, else NULL. */
static const char *value_of(const sweep *s, const point *p, const char *name) {
  int col = axis_index(s, name);
  if (col >= 0 && p->values[col][0] != '\0')
    return p->values[col];
  for (int f = 0; f < s->n_fixed; f++)
    if (strcmp(s->fixed_names[f], name) == 0)
      return s->fixed_values[f];
  return NULL;
}

/* "tp=2, network.link.bandwidth=50GBps": the point's axis values, for messages. */
static void describe(const sweep *s, const point *p, char *out, size_t size) {
  size_t n = 0;
  out[0] = '\0';
  for (int a = 0; a < s->n_axes && n < size; a++)
    if (p->values[a][0] != '\0')
      n += (size_t)snprintf(out + n, size - n, "%s%s=%s", n > 0 ? ", " : "", s->axes[a],
                            p->values[a]);
}

/* Applies point i's values: --set overrides into the process's registry, layout flags into
 * *a; the workload and platform files. */
static int point_args(const sweep *s, int i, ts_run_args *a, ts_err *err) {
  const point *p = &s->points[i];
  memset(a, 0, sizeof *a);
  const char *wl = value_of(s, p, "workload"), *pf = value_of(s, p, "platform");
  a->workload = wl != NULL ? wl : s->workload;
  a->platform = pf != NULL ? pf : (s->platform[0] != '\0' ? s->platform : NULL);
  if (a->workload[0] == '\0')
    return ts_err_plain(err, "no workload: give the spec's 'workload' or a workload axis");
  ts_doc_overrides_clear();
  for (int k = 0; k < s->n_fixed + s->n_axes; k++) {
    const char *name = k < s->n_fixed ? s->fixed_names[k] : s->axes[k - s->n_fixed];
    const char *v = value_of(s, p, name);
    if (v == NULL || strcmp(name, "workload") == 0 || strcmp(name, "platform") == 0)
      continue;
    if (strchr(name, '.') != NULL) {
      char kv[512];
      snprintf(kv, sizeof kv, "%s=%s", name, v);
      if (ts_doc_override_add(kv, err) != 0)
        return -1;
      continue;
    }
    for (int f = 0; f < N_LAYOUT_AXES; f++) {
      if (strcmp(layout_axes[f].axis, name) != 0)
        continue;
      if (strcmp(name, "sequence_parallel") == 0) { /* a switch: true or false */
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
          return ts_err_plain(err, "sequence_parallel: expected true or false, found '%s'", v);
        if (strcmp(v, "false") == 0)
          continue;
        v = NULL;
      }
      if (ts_args_apply(&ts_run_command, a, layout_axes[f].flag, v, err) != 0)
        return -1;
    }
  }
  return 0;
}

/* The inputs of point i, loaded and checked (in the parent first, to refuse a bad spec before
 * anything runs; then in the point's process). */
static int load_point(void *ctx, int i, ts_platform *pf, ts_workload *wl, ts_simulate_opts *opts,
                      ts_err *err) {
  const sweep *s = ctx;
  ts_run_args a;
  opts->engine.fidelity = s->fidelity;
  return point_args(s, i, &a, err) != 0 ? -1 : ts_run_load_inputs(&a, pf, wl, err);
}

/* Everything point i's result depends on: the binary and the fidelity (digested once, in
 * *base), its values, its files. */
static uint64_t point_digest(const sweep *s, int i, const ts_platform *pf, const ts_digest *base) {
  ts_digest d = *base;
  const point *p = &s->points[i];
  for (int k = 0; k < s->n_fixed + s->n_axes; k++) {
    const char *name = k < s->n_fixed ? s->fixed_names[k] : s->axes[k - s->n_fixed];
    const char *v = value_of(s, p, name);
    ts_digest_str(&d, name);
    ts_digest_str(&d, v != NULL ? v : "");
  }
  ts_run_args a;
  ts_err unused = {0};
  point_args(s, i, &a, &unused);
  ts_run_digest_inputs(&a, pf, &d);
  return d.h;
}

/* ---- finished points: DIR/points/<digest>.csv, one line ---- */

static void record_path(const sweep *s, const point *p, char *out, size_t size) {
  snprintf(out, size, "%s/points/%016llx.csv", s->out_dir, (unsigned long long)p->digest);
}

static void write_record(FILE *f, const void *ctx) {
  const point *p = ctx;
  const ts_scaling_point *r = &p->result;
  if (!p->is_ok) {
    fprintf(f, "error,%s\n", p->error);
    return;
  }
  fprintf(f, "ok,%ld,%ld,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", r->gpus, r->tp, r->pp,
          r->dp, r->global_batch, r->iteration_s, r->tokens_per_s, r->model_tflops_per_gpu,
          r->megatron_percent, r->mfu_percent, r->peak_memory_gib);
  for (int c = 0; c < TS_CAT_COUNT; c++)
    fprintf(f, ",%.17g", r->breakdown_s[c]);
  fprintf(f, ",%.17g\n", r->goodput); /* -1: the platform models no failures */
}

/* Whether a record's figures are ones a simulation can give: whole counts, finite times that
 * are not negative and add up to the iteration, percentages of peak no more than 100. */
static bool is_possible(const ts_scaling_point *r) {
  double sum = 0;
  bool ok = r->gpus >= 1 && r->tp >= 1 && r->pp >= 1 && r->dp >= 1 && r->global_batch >= 1 &&
            isfinite(r->iteration_s) && r->iteration_s > 0 && isfinite(r->tokens_per_s) &&
            r->tokens_per_s > 0 && isfinite(r->model_tflops_per_gpu) &&
            r->model_tflops_per_gpu >= 0 && r->megatron_percent >= 0 &&
            r->megatron_percent <= 100 && r->mfu_percent >= 0 && r->mfu_percent <= 100 &&
            isfinite(r->peak_memory_gib) && r->peak_memory_gib >= 0;
  for (int c = 0; c < TS_CAT_COUNT; c++) {
    ok = ok && isfinite(r->breakdown_s[c]) && r->breakdown_s[c] >= 0;
    sum += r->breakdown_s[c];
  }
  return ok && fabs(sum - r->iteration_s) <= 1e-6 * r->iteration_s;
}

/* A record a previous run left: 1 when whole, 0 when there is none or it is damaged or not the
 * point's layout (the point runs again), -1 when something else than a file of trainsim's has
 * its name. A failed point's record is taken only to collect a job array's points: a run tries
 * the point again (failures are input errors, found before anything is simulated). */
static int read_record(const sweep *s, point *p, const ts_workload *wl, ts_err *err) {
  char path[4200], line[4096];
  record_path(s, p, path, sizeof path);
  struct stat st;
  if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
    return ts_err_plain(err,
                        "--out: '%s' is not a regular file: trainsim keeps a point's record "
                        "there; move it away or choose another directory",
                        path);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  bool ok = fgets(line, sizeof line, f) != NULL && strchr(line, '\n') != NULL;
  fclose(f);
  if (!ok)
    return 0;
  line[strcspn(line, "\n")] = '\0';
  if (strncmp(line, "error,", 6) == 0) {
    if (!s->is_collect)
      return 0;
    ts_text_copy(p->error, sizeof p->error, line + 6);
    p->is_ok = false;
    return 1;
  }
  ts_scaling_point *r = &p->result;
  int used = 0;
  if (sscanf(line, "ok,%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf,%lf,%lf,%lf%n", &r->gpus, &r->tp, &r->pp,
             &r->dp, &r->global_batch, &r->iteration_s, &r->tokens_per_s, &r->model_tflops_per_gpu,
             &r->megatron_percent, &r->mfu_percent, &r->peak_memory_gib, &used) != 11)
    return 0;
  const char *c = line + used;
  for (int k = 0; k < TS_CAT_COUNT; k++) {
    int n = 0;
    if (sscanf(c, ",%lf%n", &r->breakdown_s[k], &n) != 1)
      return 0;
    c += n;
  }
  int n = 0;
  if (sscanf(c, ",%lf%n", &r->goodput, &n) != 1 ||
      !(r->goodput == -1 || (r->goodput >= 0 && r->goodput <= 1)))
    return 0;
  c += n;
  p->is_ok = *c == '\0' && is_possible(r) && r->gpus == wl->n_gpus && r->tp == wl->tp &&
             r->pp == wl->pp && r->global_batch == wl->global_batch;
  return p->is_ok;
}

/* ---- sweep.csv ---- */

static void write_csv(FILE *f, const void *ctx) {
  const sweep *s = ctx;
  fputs("point", f);
  for (int a = 0; a < s->n_axes; a++) {
    fputc(',', f);
    ts_text_csv_field(f, s->axes[a], false);
  }
  fputs(",status,layout_gpus,layout_tp,layout_pp,layout_dp,layout_global_batch,iteration_s,"
        "tokens_per_s,tokens_per_s_per_gpu,"
        "model_tflops_per_gpu,mfu_percent,megatron_percent,peak_memory_gib",
        f);
  for (int c = 0; c < TS_CAT_COUNT; c++)
    fprintf(f, ",%s_s", ts_category_names[c]);
  fputs(",goodput,error\n", f);
  for (int i = 0; i < s->n_points; i++) {
    const point *p = &s->points[i];
    fprintf(f, "%d", i + 1);
    for (int a = 0; a < s->n_axes; a++) {
      fputc(',', f);
      const char *v = value_of(s, p, s->axes[a]);
      ts_text_csv_field(f, v != NULL ? v : "", false);
    }
    const ts_scaling_point *r = &p->result;
    if (!p->is_done) {
      fputs(",not run", f);
    } else if (!p->is_ok) {
      fputs(",failed", f);
    } else {
      fprintf(f, ",ok,%ld,%ld,%ld,%ld,%ld,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.4g", r->gpus, r->tp,
              r->pp, r->dp, r->global_batch, r->iteration_s, r->tokens_per_s,
              r->tokens_per_s / (double)r->gpus, r->model_tflops_per_gpu, r->mfu_percent,
              r->megatron_percent, r->peak_memory_gib);
      for (int c = 0; c < TS_CAT_COUNT; c++)
        fprintf(f, ",%.6g", r->breakdown_s[c]);
      if (r->goodput >= 0) /* empty where the platform models no failures */
        fprintf(f, ",%.6g", r->goodput);
      else
        fputc(',', f);
    }
    if (p->is_done && !p->is_ok) {
      for (int c = 0; c < 13 + TS_CAT_COUNT; c++)
        fputc(',', f);
      ts_text_csv_field(f, p->error, false);
    } else if (!p->is_done) {
      for (int c = 0; c < 14 + TS_CAT_COUNT; c++)
        fputc(',', f);
    } else {
      fputc(',', f);
    }
    fputc('\n', f);
  }
}

/* One line for messages and records: the error without its "error: " (a record keeps the
 * rest of its line, commas included). */
static void error_text(const ts_err *err, char *out, size_t size) {
  const char *m = err->msg, *prefix = "trainsim: error: ", *located = strstr(m, ": error: ");
  if (strncmp(m, prefix, strlen(prefix)) == 0)
    m += strlen(prefix);
  else if (located != NULL) /* "file:line:col: error: why" -> "file:line:col: why" */
    snprintf(out, size, "%.*s: %s", (int)(located - m), m, located + strlen(": error: "));
  if (m != err->msg || located == NULL)
    snprintf(out, size, "%s", m);
  for (char *c = out; *c != '\0'; c++)
    if (*c == '\n')
      *c = ' ';
}

static void point_done(void *ctx, int i, int rc, const ts_scaling_point *result,
                       const ts_err *err) {
  sweep *s = ctx;
  point *p = &s->points[i];
  p->is_done = true;
  p->is_ok = rc == 0;
  if (rc == 0)
    p->result = *result;
  else
    error_text(err, p->error, sizeof p->error);
  char dir[4200], name[64];
  snprintf(dir, sizeof dir, "%s/points", s->out_dir);
  snprintf(name, sizeof name, "%016llx.csv", (unsigned long long)p->digest);
  ts_err werr = {0};
  if (ts_report_write_file(dir, name, write_record, p, &werr) != 0 ||
      (s->array_tasks == 0 && /* array tasks leave sweep.csv to --collect */
       ts_report_write_file(s->out_dir, "sweep.csv", write_csv, s, &werr) != 0))
    ts_args_report(&werr, NULL);
  s->n_done++;
  char what[96];
  snprintf(what, sizeof what, "%d of %d points done", s->n_done, s->n_points);
  ts_progress_show(&s->progress, (double)s->n_done, (double)s->n_points, what);
}

/* What Slurm's account and partition names hold; an #SBATCH line is split into words by sbatch,
 * so anything else (a space, a quote) could add options of its own. */
static bool is_slurm_name(const char *text) {
  if (*text == '\0' || strlen(text) > 64)
    return false;
  for (const char *c = text; *c != '\0'; c++)
    if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
      return false;
  return true;
}

/* sbatch's --time formats (its manual): minutes, minutes:seconds, hours:minutes:seconds,
 * days-hours, days-hours:minutes, days-hours:minutes:seconds; or UNLIMITED / INFINITE. */
static bool is_slurm_time(const char *text) {
  if (strcmp(text, "UNLIMITED") == 0 || strcmp(text, "INFINITE") == 0)
    return true;
  const char *c = text, *dash = strchr(text, '-');
  int fields = 0;
  if (dash != NULL) { /* days- */
    if (dash == text || strspn(text, "0123456789") != (size_t)(dash - text))
      return false;
    c = dash + 1;
  }
  for (;;) {
    size_t digits = strspn(c, "0123456789");
    if (digits == 0 || digits > 9 || ++fields > 3)
      return false;
    c += digits;
    if (*c == '\0')
      return true;
    if (*c++ != ':')
      return false;
  }
}

static int parse(int argc, char **argv, sweep *s, ts_err *err) {
  ts_args cli = {&ts_sweep_command, argc, argv, 0, s, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  s->out_dir = "trainsim-out";
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  s->jobs = cores > 0 ? cores : 1;
  for (int item; (item = ts_args_next(&cli, &flag, &value, err)) != TS_ARGS_END;) {
    if (item < 0)
      return -1;
    if (item == TS_ARGS_HELP) {
      ts_args_usage(stdout, &ts_sweep_command);
      return 1;
    }
    if (item == TS_ARGS_ARGUMENT) {
      if (s->spec_path != NULL)
        return ts_err_plain(err, "sweep takes one SPEC file, found a second one: '%s'", value);
      s->spec_path = value;
    }
  }
  if (s->is_slurm + s->is_collect + (s->array_tasks > 0) > 1)
    return ts_err_plain(err, "--slurm, --collect and --array-tasks are different uses of sweep: "
                             "give one");
  if (s->array_tasks > 0 && s->array_task >= s->array_tasks)
    return ts_err_plain(err, "--array-task: expected a task from 0 to %ld, found %ld",
                        s->array_tasks - 1, s->array_task);
  if (!s->is_slurm && (s->account != NULL || s->partition != NULL || s->time_limit != NULL))
    return ts_err_plain(err, "--account, --partition and --time go with --slurm");
  if ((s->account != NULL && !is_slurm_name(s->account)) ||
      (s->partition != NULL && !is_slurm_name(s->partition)))
    return ts_err_plain(
        err, "--%s: expected a Slurm name (letters, digits, '.', '_', '-'), found '%s'",
        s->account != NULL && !is_slurm_name(s->account) ? "account" : "partition",
        s->account != NULL && !is_slurm_name(s->account) ? s->account : s->partition);
  if (s->time_limit != NULL && !is_slurm_time(s->time_limit))
    return ts_err_plain(err,
                        "--time: expected a Slurm time limit (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S "
                        "or UNLIMITED), found '%s'",
                        s->time_limit);
  if (s->spec_path == NULL)
    return ts_err_plain(err, "sweep needs a SPEC file (see 'trainsim sweep --help')");
  return 0;
}

/* Checks every point in this process (an input error stops the sweep at the spec's line),
 * takes its digest and any finished record. */
static int prepare(sweep *s, ts_err *err) {
  static ts_platform pf;
  char points[4200];
  struct stat st;
  snprintf(points, sizeof points, "%s/points", s->out_dir);
  if (lstat(points, &st) == 0 && !S_ISDIR(st.st_mode)) /* a link or a file: not trainsim's */
    return ts_err_plain(err,
                        "--out: '%s' is not a directory (a link or a file): trainsim keeps "
                        "finished points there; move it away or choose another directory",
                        points);
  ts_digest base;
  ts_digest_init(&base);
  ts_digest_file(&base, ts_args_program());
  ts_digest_str(&base, ts_fidelity_names[s->fidelity]);
  for (int i = 0; i < s->n_points; i++) {
    point *p = &s->points[i];
    ts_workload wl;
    ts_simulate_opts opts = ts_simulate_defaults();
    ts_err e = {0};
    if (load_point(s, i, &pf, &wl, &opts, &e) != 0) {
      char what[512], why[1024];
      describe(s, p, what, sizeof what);
      error_text(&e, why, sizeof why);
      return ts_err_at(err, p->loc, "point %d (%s): %s", i + 1, what, why);
    }
    p->digest = point_digest(s, i, &pf, &base);
    for (int j = 0; j < i; j++) /* the same inputs twice: one row would say it twice */
      if (s->points[j].digest == p->digest) {
        char what[512];
        describe(s, p, what, sizeof what);
        return ts_err_at(err, p->loc, "point %d (%s) is point %d again: expected each point once",
                         i + 1, what, j + 1);
      }
    int done = read_record(s, p, &wl, err);
    if (done < 0)
      return -1;
    p->is_done = done == 1;
  }
  ts_doc_overrides_clear();
  return 0;
}

static void print_table(const sweep *s) {
  printf("sweep: %s, %d points, fidelity %s\n\n", s->name, s->n_points,
         ts_fidelity_names[s->fidelity]);
  printf("  %5s  %-40s %12s %12s %7s %11s %8s\n", "point", "values", "iteration_s", "tok/s/GPU",
         "MFU", "Megatron %", "GiB");
  for (int i = 0; i < s->n_points; i++) {
    const point *p = &s->points[i];
    char what[512];
    describe(s, p, what, sizeof what);
    if (p->is_ok)
      printf("  %5d  %-40s %12.4f %12.1f %6.2f%% %10.2f%% %8.2f\n", i + 1, what,
             p->result.iteration_s, p->result.tokens_per_s / (double)p->result.gpus,
             p->result.mfu_percent, p->result.megatron_percent, p->result.peak_memory_gib);
    else
      printf("  %5d  %-40s %s\n", i + 1, what, p->is_done ? p->error : "not run");
  }
}

/* report.html: the points and a plot along each axis (html.h). */
static int write_report(const sweep *s, ts_err *err) {
  size_t n = (size_t)s->n_points;
  const char **values = calloc(n * (size_t)s->n_axes + 1, sizeof *values);
  const char **errors = calloc(n + 1, sizeof *errors);
  ts_scaling_point *results = calloc(n + 1, sizeof *results);
  bool *is_ok = calloc(n + 1, sizeof *is_ok);
  const char *axes[MAX_AXES];
  TS_ASSERT(values != NULL && errors != NULL && results != NULL && is_ok != NULL);
  for (int a = 0; a < s->n_axes; a++)
    axes[a] = s->axes[a];
  for (int i = 0; i < s->n_points; i++) {
    const point *p = &s->points[i];
    for (int a = 0; a < s->n_axes; a++) {
      const char *v = value_of(s, p, s->axes[a]);
      values[i * s->n_axes + a] = v != NULL ? v : "";
    }
    results[i] = p->result;
    is_ok[i] = p->is_done && p->is_ok;
    errors[i] = p->is_done && !p->is_ok ? p->error : NULL;
  }
  char title[192], subtitle[256];
  snprintf(title, sizeof title, "trainsim: sweep %s", s->name);
  snprintf(subtitle, sizeof subtitle, "%d points from %s, fidelity %s", s->n_points, s->spec_path,
           ts_fidelity_names[s->fidelity]);
  ts_html_sweep h = {title, subtitle, s->n_axes, s->n_points, axes, values, results, is_ok, errors};
  int rc = ts_html_sweep_report(s->out_dir, &h, err);
  free(values);
  free(errors);
  free(results);
  free(is_ok);
  return rc;
}

/* A file's absolute path (it must exist). */
static int absolute(const char *path, char *out, ts_err *err) {
  if (realpath(path, out) == NULL)
    return ts_err_plain(err, "cannot resolve '%s': %s", path, strerror(errno));
  return 0;
}

/* The script's text: one array task per point (at most 1,000: Slurm's default MaxArraySize
 * is 1,001), each running its share of the points with this binary, in this directory. */
typedef struct slurm_ctx {
  const sweep *s;
  const char *exe, *spec, *out, *cwd;
  long tasks;
} slurm_ctx;

static void write_slurm(FILE *f, const void *ctx) {
  const slurm_ctx *c = ctx;
  const sweep *s = c->s;
  fprintf(f,
          "#!/bin/bash\n"
          "# trainsim sweep %s: %d points as a Slurm job array of %ld tasks. Written by\n"
          "#   trainsim sweep '%s' --slurm --out '%s'\n"
          "# Submit it with sbatch; when the tasks are done (or to see how far they got), merge\n"
          "# their points with\n"
          "#   '%s' sweep '%s' --collect --out '%s'\n"
          "#SBATCH --job-name=trainsim-sweep\n"
          "#SBATCH --array=0-%ld\n"
          "#SBATCH --ntasks=1\n"
          "#SBATCH --cpus-per-task=1\n"
          "#SBATCH --output=%s/slurm/%%A_%%a.out\n",
          s->name, s->n_points, c->tasks, c->spec, c->out, c->exe, c->spec, c->out, c->tasks - 1,
          c->out);
  if (s->account != NULL)
    fprintf(f, "#SBATCH --account=%s\n", s->account);
  if (s->partition != NULL)
    fprintf(f, "#SBATCH --partition=%s\n", s->partition);
  if (s->time_limit != NULL)
    fprintf(f, "#SBATCH --time=%s\n", s->time_limit);
  fprintf(f,
          "cd '%s' || exit 1\n"
          "exec '%s' sweep '%s' --out '%s' --array-task \"$SLURM_ARRAY_TASK_ID\" "
          "--array-tasks %ld --jobs 1 --quiet\n",
          c->cwd, c->exe, c->spec, c->out, c->tasks);
}

/* Names that go into the script between single quotes: no quote, newline or percent sign; and
 * --out, which also goes into an #SBATCH line (sbatch splits those into words, so a space
 * there would add options of its own), no blank either. */
static int scriptable(const char *what, const char *text, ts_err *err) {
  bool is_out = strcmp(what, "--out") == 0;
  if (strpbrk(text, is_out ? "'\n% \t\r\v\f\\\"" : "'\n%") != NULL)
    return ts_err_plain(err, "--slurm: %s '%s' holds %s, which the script cannot carry", what, text,
                        is_out ? "a quote, a blank, a backslash, a newline or '%' (it goes into an "
                                 "#SBATCH line)"
                               : "a quote, a newline or '%'");
  return 0;
}

/* The paths the script will hold, checked before anything is written (their absolute forms are
 * checked again when it is). */
static int slurm_paths_scriptable(const sweep *s, ts_err *err) {
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == NULL)
    return ts_err_plain(err, "--slurm: cannot find the working directory");
  return scriptable("SPEC", s->spec_path, err) != 0 || scriptable("--out", s->out_dir, err) != 0 ||
                 scriptable("the working directory", cwd, err) != 0
             ? -1
             : 0;
}

static int slurm_script(const sweep *s, ts_err *err) {
  static char exe[4096], spec[4096], out[4096], cwd[4096];
  if (ts_args_executable() == NULL)
    return ts_err_plain(err, "--slurm writes a script that runs the trainsim executable: run "
                             "'trainsim sweep --slurm' from the command line");
  ssize_t n = readlink(ts_args_executable(), exe, sizeof exe - 1);
  if (n < 0 || getcwd(cwd, sizeof cwd) == NULL)
    return ts_err_plain(err, "--slurm: cannot find this binary or the working directory");
  exe[n] = '\0';
  char slurm_dir[4200];
  snprintf(slurm_dir, sizeof slurm_dir, "%s/slurm", s->out_dir);
  if (absolute(s->spec_path, spec, err) != 0 || absolute(s->out_dir, out, err) != 0 ||
      ts_report_prepare_dir(slurm_dir, err) != 0 || scriptable("the binary", exe, err) != 0 ||
      scriptable("SPEC", spec, err) != 0 || scriptable("--out", out, err) != 0 ||
      scriptable("the working directory", cwd, err) != 0 ||
      (s->account != NULL && scriptable("--account", s->account, err) != 0) ||
      (s->partition != NULL && scriptable("--partition", s->partition, err) != 0) ||
      (s->time_limit != NULL && scriptable("--time", s->time_limit, err) != 0))
    return -1;
  slurm_ctx c = {s, exe, spec, out, cwd, s->n_points < 1000 ? s->n_points : 1000};
  if (ts_report_write_file(s->out_dir, "sweep.slurm", write_slurm, &c, err) != 0)
    return -1;
  printf("sweep: %s: %d points as a job array of %ld tasks in %s/sweep.slurm\n"
         "submit:  sbatch '%s/sweep.slurm'\n"
         "collect: '%s' sweep '%s' --collect --out '%s'\n",
         s->name, s->n_points, c.tasks, out, out, exe, spec, out);
  return 0;
}

int ts_sweep_main(int argc, char **argv) {
  static sweep s;
  memset(&s, 0, sizeof s);
  ts_err err = {0};
  int rc = parse(argc, argv, &s, &err);
  if (rc == 1)
    return 0;
  if (rc != 0 || read_spec(&s, &err) != 0 || prepare(&s, &err) != 0 ||
      (s.is_slurm && slurm_paths_scriptable(&s, &err) != 0) ||
      ts_report_prepare_dir(s.out_dir, &err) != 0 ||
      ts_report_check_outputs(s.out_dir,
                              (const char *const[]){s.is_slurm ? "sweep.slurm" : "sweep.csv",
                                                    s.is_report ? "report.html" : NULL, NULL},
                              &err) != 0) {
    ts_args_report(&err, NULL);
    free(s.points);
    return TS_ARGS_EXIT_INPUT;
  }
  if (s.is_slurm) {
    rc = slurm_script(&s, &err);
    if (rc != 0)
      ts_args_report(&err, NULL);
    free(s.points);
    return rc != 0 ? TS_ARGS_EXIT_INPUT : 0;
  }
  int *pending = malloc((size_t)s.n_points * sizeof *pending), n_pending = 0;
  TS_ASSERT(pending != NULL);
  for (int i = 0; i < s.n_points; i++)
    if (!s.points[i].is_done && !s.is_collect &&
        (s.array_tasks == 0 || i % s.array_tasks == s.array_task))
      pending[n_pending++] = i;
    else
      s.n_done++;
  ts_progress_init(&s.progress, "sweep", s.is_quiet);
  int sig = ts_study_pool(n_pending, pending, (int)s.jobs, load_point, point_done, NULL, &s);
  ts_progress_clear(&s.progress);
  free(pending);
  if (s.array_tasks > 0 && sig == 0) { /* its points are in points/; --collect merges them */
    printf("sweep: array task %ld of %ld: %d points simulated\n", s.array_task, s.array_tasks,
           n_pending);
    free(s.points);
    return 0;
  }
  if (ts_report_write_file(s.out_dir, "sweep.csv", write_csv, &s, &err) != 0) {
    ts_args_report(&err, NULL);
    free(s.points);
    return 1;
  }
  if (sig != 0) {
    char what[64];
    snprintf(what, sizeof what, "sweep points (%d of %d done)", s.n_done, s.n_points);
    free(s.points);
    ts_study_stopped(sig, what);
  }
  print_table(&s);
  rc =
      s.is_report ? write_report(&s, &err) : ts_report_remove_stale(s.out_dir, "report.html", &err);
  if (rc != 0)
    ts_args_report(&err, NULL);
  int missing = 0;
  for (int i = 0; i < s.n_points; i++)
    missing += !s.points[i].is_done;
  printf("\n%d points simulated now, %d reused", n_pending, s.n_points - n_pending - missing);
  if (missing > 0)
    printf(", %d not run yet", missing);
  printf("; results: %s/sweep.csv%s\n", s.out_dir, s.is_report ? " and report.html" : "");
  free(s.points);
  return rc != 0 ? 1 : 0;
}
