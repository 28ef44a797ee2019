/* kernels: kernel tables; see kernels.h. */
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"

#define MAX_AXES 4
#define MAX_AXIS_VALUES 64
#define MAX_TABLES 16 /* distinct kernel-table files one process loads */

const char *const ts_kernel_names[] = {"gemm_fwd",
                                       "gemm_dgrad",
                                       "gemm_wgrad",
                                       "flash_fwd_causal",
                                       "flash_bwd_causal",
                                       "flash_fwd",
                                       "flash_bwd",
                                       "bgemm_qk",
                                       "bgemm_av",
                                       "softmax_fwd",
                                       "softmax_bwd",
                                       "layer_norm_fwd",
                                       "layer_norm_bwd",
                                       "gelu_fwd",
                                       "gelu_bwd",
                                       "dropout_add_fwd",
                                       "dropout_add_bwd",
                                       "add_fwd",
                                       "cross_entropy_fwd",
                                       "cross_entropy_bwd",
                                       "embedding_fwd",
                                       "embedding_bwd",
                                       "grad_accum",
                                       "clip_grad_norm",
                                       "adam_fused",
                                       "master_copy",
                                       "zero_main_grad",
                                       "adam_foreach",
                                       "amp_unscale",
                                       "rms_norm_fwd",
                                       "rms_norm_bwd",
                                       "swiglu_fwd",
                                       "swiglu_bwd",
                                       "rope_fwd",
                                       "rope_bwd",
                                       "gemm_fp8_fwd",
                                       "gemm_fp8_bwd",
                                       "attention_mask_fwd",
                                       "attention_mask_bwd",
                                       "sdpa_fwd_causal",
                                       "sdpa_bwd_causal",
                                       "grouped_mm_fwd",
                                       "grouped_mm_dgrad",
                                       "grouped_mm_wgrad",
                                       "moe_router_fwd",
                                       "moe_router_bwd",
                                       "moe_permute_fwd",
                                       "moe_permute_bwd",
                                       "moe_unpermute_fwd",
                                       "moe_unpermute_bwd",
                                       "sdpa_mla_fwd_causal",
                                       "sdpa_mla_bwd_causal",
                                       "gemm_fp8_block_fwd",
                                       "gemm_fp8_block_wgrad",
                                       "rms_norm_fp32_fwd",
                                       "rms_norm_fp32_bwd",
                                       "rope_complex_fwd",
                                       "rope_complex_bwd",
                                       "swiglu_split_bwd",
                                       "softmax_fp32_fwd",
                                       NULL};

const char *const ts_kernel_source_names[] = {"table", "interpolated", "model", "extrapolated",
                                              NULL};

bool ts_kernel_is_fp8(ts_kernel_kind kind) {
  return kind == TS_KERNEL_GEMM_FP8_FWD || kind == TS_KERNEL_GEMM_FP8_BWD ||
         kind == TS_KERNEL_GEMM_FP8_BLOCK_FWD || kind == TS_KERNEL_GEMM_FP8_BLOCK_WGRAD;
}

/* A dense GEMM's table: axes (m, n, k), 2 m n k matrix FLOPs. */
static bool is_dense_gemm(ts_kernel_kind kind) {
  switch (kind) {
  case TS_KERNEL_GEMM_FWD:
  case TS_KERNEL_GEMM_DGRAD:
  case TS_KERNEL_GEMM_WGRAD:
  case TS_KERNEL_GEMM_FP8_FWD:
  case TS_KERNEL_GEMM_FP8_BWD:
  case TS_KERNEL_GEMM_FP8_BLOCK_FWD:
  case TS_KERNEL_GEMM_FP8_BLOCK_WGRAD:
    return true;
  default:
    return false;
  }
}

/* Each kind's axes, NULL-terminated. */
static const char *const *axes_of(ts_kernel_kind kind) {
  static const char *const gemm[] = {"m", "n", "k", NULL};
  static const char *const flash[] = {"batch_heads", "seq", "head_dim", NULL};
  static const char *const bgemm[] = {"batch", "seq", "head_dim", NULL};
  static const char *const rows_cols[] = {"rows", "cols", NULL};
  static const char *const elements[] = {"elements", NULL};
  static const char *const rows_vocab[] = {"rows", "vocab", NULL};
  static const char *const tokens_hidden[] = {"tokens", "hidden", NULL};
  static const char *const hidden_layers[] = {"hidden", "layers", NULL};
  static const char *const grouped[] = {"experts", "tokens", "n", "k", NULL};
  static const char *const router[] = {"tokens", "experts", "topk", NULL};
  static const char *const rows_hidden[] = {"rows", "hidden", NULL};
  static const char *const heads_seq[] = {"batch_heads", "seq", NULL};
  if (is_dense_gemm(kind))
    return gemm;
  switch (kind) {
  case TS_KERNEL_SDPA_MLA_FWD_CAUSAL:
  case TS_KERNEL_SDPA_MLA_BWD_CAUSAL:
    return heads_seq;
  case TS_KERNEL_GROUPED_MM_FWD:
  case TS_KERNEL_GROUPED_MM_DGRAD:
  case TS_KERNEL_GROUPED_MM_WGRAD:
    return grouped;
  case TS_KERNEL_MOE_ROUTER_FWD:
  case TS_KERNEL_MOE_ROUTER_BWD:
    return router;
  case TS_KERNEL_MOE_PERMUTE_FWD:
  case TS_KERNEL_MOE_PERMUTE_BWD:
  case TS_KERNEL_MOE_UNPERMUTE_FWD:
  case TS_KERNEL_MOE_UNPERMUTE_BWD:
    return rows_hidden;
  case TS_KERNEL_FLASH_FWD_CAUSAL:
  case TS_KERNEL_FLASH_BWD_CAUSAL:
  case TS_KERNEL_FLASH_FWD:
  case TS_KERNEL_FLASH_BWD:
  case TS_KERNEL_SDPA_FWD_CAUSAL:
  case TS_KERNEL_SDPA_BWD_CAUSAL:
    return flash;
  case TS_KERNEL_BGEMM_QK:
  case TS_KERNEL_BGEMM_AV:
    return bgemm;
  case TS_KERNEL_SOFTMAX_FWD:
  case TS_KERNEL_SOFTMAX_BWD:
  case TS_KERNEL_SOFTMAX_FP32_FWD:
  case TS_KERNEL_LAYER_NORM_FWD:
  case TS_KERNEL_LAYER_NORM_BWD:
  case TS_KERNEL_RMS_NORM_FWD:
  case TS_KERNEL_RMS_NORM_BWD:
  case TS_KERNEL_RMS_NORM_FP32_FWD:
  case TS_KERNEL_RMS_NORM_FP32_BWD:
  case TS_KERNEL_ATTENTION_MASK_FWD:
  case TS_KERNEL_ATTENTION_MASK_BWD:
    return rows_cols;
  case TS_KERNEL_CROSS_ENTROPY_FWD:
  case TS_KERNEL_CROSS_ENTROPY_BWD:
    return rows_vocab;
  case TS_KERNEL_EMBEDDING_FWD:
  case TS_KERNEL_EMBEDDING_BWD:
    return tokens_hidden;
  case TS_KERNEL_CLIP_GRAD_NORM:
  case TS_KERNEL_ADAM_FUSED:
  case TS_KERNEL_MASTER_COPY:
  case TS_KERNEL_ZERO_MAIN_GRAD:
  case TS_KERNEL_ADAM_FOREACH:
  case TS_KERNEL_AMP_UNSCALE:
    return hidden_layers;
  default:
    return elements;
  }
}

int ts_kernel_n_axes(ts_kernel_kind kind) {
  int n = 0;
  for (const char *const *a = axes_of(kind); *a != NULL; a++)
    n++;
  return n;
}

const char *const *ts_kernel_axes(ts_kernel_kind kind) {
  return axes_of(kind);
}

typedef struct grid {
  bool is_present;
  int n_values[MAX_AXES];
  double log_axis[MAX_AXES][MAX_AXIS_VALUES];
  double *log_time_s; /* row-major over the axes, first slowest; NAN where not measured */
} grid;

struct ts_kernel_table {
  char path[512];
  char device[128], framework[128];
  ts_kernel_provenance provenance;
  ts_software software;
  grid grids[TS_KERNEL_COUNT];
};

static ts_kernel_table *loaded[MAX_TABLES];
static int n_loaded;

static int parse_axes(const ts_doc *doc, int axes, ts_kernel_kind kind, grid *g, long *n_points,
                      ts_err *err) {
  const char *const *names = axes_of(kind);
  if (ts_doc_check_map(doc, axes, "axes", names, err) != 0)
    return -1;
  *n_points = 1;
  for (int i = 0; names[i] != NULL; i++) {
    int seq = ts_doc_get(doc, axes, names[i]);
    if (seq == 0)
      return ts_doc_missing(doc, axes, "axes", names[i], err);
    int n = ts_doc_is_seq(doc, seq) ? ts_doc_seq_len(doc, seq) : -1;
    if (n < 1 || n > MAX_AXIS_VALUES)
      return ts_err_at(err, ts_doc_loc(doc, seq),
                       "key '%s': expected a list of 1 to %d increasing positive numbers", names[i],
                       MAX_AXIS_VALUES);
    for (int j = 0; j < n; j++) {
      int item = ts_doc_seq_item(doc, seq, j);
      const char *s = ts_doc_scalar(doc, item);
      double v = 0;
      if (s == NULL || ts_parse_double(s, &v) != 0 || !(v > 0) || !isfinite(v) ||
          (j > 0 && !(log(v) > g->log_axis[i][j - 1])))
        return ts_err_at(err, ts_doc_loc(doc, item),
                         "key '%s': expected increasing positive numbers, found '%s'", names[i],
                         s != NULL ? s : "a non-number");
      g->log_axis[i][j] = log(v);
    }
    g->n_values[i] = n;
    *n_points *= n;
  }
  return 0;
}

static int parse_table(const ts_doc *doc, int node, ts_kernel_kind kind, grid *g, ts_err *err) {
  static const char *const keys[] = {"what", "axes", "time_us", NULL};
  const char *name = ts_kernel_names[kind];
  if (ts_doc_check_map(doc, node, name, keys, err) != 0)
    return -1;
  int axes = ts_doc_get(doc, node, "axes");
  if (axes == 0)
    return ts_doc_missing(doc, node, name, "axes", err);
  long n_points = 0;
  if (parse_axes(doc, axes, kind, g, &n_points, err) != 0)
    return -1;
  int times = ts_doc_get(doc, node, "time_us");
  if (times == 0)
    return ts_doc_missing(doc, node, name, "time_us", err);
  if (!ts_doc_is_seq(doc, times) || ts_doc_seq_len(doc, times) != n_points)
    return ts_err_at(err, ts_doc_loc(doc, times),
                     "key 'time_us': expected a list of %ld times (the product of the axes' "
                     "lengths), found %d",
                     n_points, ts_doc_is_seq(doc, times) ? ts_doc_seq_len(doc, times) : 0);
  g->log_time_s = malloc((size_t)n_points * sizeof *g->log_time_s);
  TS_ASSERT(g->log_time_s != NULL);
  for (long i = 0; i < n_points; i++) {
    int item = ts_doc_seq_item(doc, times, (int)i);
    const char *s = ts_doc_scalar(doc, item);
    double us = 0;
    if (s != NULL && (strcmp(s, "null") == 0 || strcmp(s, "~") == 0)) {
      g->log_time_s[i] = NAN;
      continue;
    }
    if (s == NULL || ts_parse_double(s, &us) != 0 || !(us > 0) || us > 1e12) {
      free(g->log_time_s);
      g->log_time_s = NULL;
      return ts_err_at(err, ts_doc_loc(doc, item),
                       "key 'time_us': expected a time in microseconds (0 to 1e12) or null, "
                       "found '%s'",
                       s != NULL ? s : "a non-number");
    }
    g->log_time_s[i] = log(us * 1e-6);
  }
  g->is_present = true;
  return 0;
}

static int parse_software(const ts_doc *doc, int node, ts_software *sw, ts_err *err) {
  static const char *const keys[] = {"eager_op_us",
                                     "graph_kernel_us",
                                     "cpu_layer_forward_us",
                                     "cpu_layer_backward_us",
                                     "cpu_microbatch_us",
                                     "cpu_iteration_us",
                                     "kernels_per_layer_forward",
                                     "kernels_per_layer_backward",
                                     "cpu_moe_layer_forward_us",
                                     "cpu_moe_layer_backward_us",
                                     "cpu_moe_expert_forward_us",
                                     "cpu_moe_expert_backward_us",
                                     NULL};
  if (ts_doc_check_map(doc, node, "software", keys, err) != 0)
    return -1;
  enum { N_TIMED = 9 };
  double us[N_TIMED] = {0};
  const char *const timed[N_TIMED] = {
      "cpu_layer_forward_us",      "cpu_layer_backward_us",      "cpu_microbatch_us",
      "cpu_iteration_us",          "cpu_moe_layer_forward_us",   "cpu_moe_layer_backward_us",
      "cpu_moe_expert_forward_us", "cpu_moe_expert_backward_us", "eager_op_us"};
  for (int i = 0; i < N_TIMED; i++)
    if (ts_doc_get_double(doc, node, timed[i], 0, 1e6, &us[i], err) < 0)
      return -1;
  long kf = 0, kb = 0;
  if (ts_doc_get_long(doc, node, "kernels_per_layer_forward", 1, 100000, &kf, err) < 0 ||
      ts_doc_get_long(doc, node, "kernels_per_layer_backward", 1, 100000, &kb, err) < 0)
    return -1;
  if ((us[0] > 0 && kf == 0) || (us[1] > 0 && kb == 0))
    return ts_err_at(err, ts_doc_loc(doc, node),
                     "'software': cpu_layer_forward_us and cpu_layer_backward_us need "
                     "kernels_per_layer_forward and kernels_per_layer_backward");
  *sw = (ts_software){us[0] * 1e-6, us[1] * 1e-6, (int)kf,      (int)kb,
                      us[2] * 1e-6, us[3] * 1e-6, us[4] * 1e-6, us[5] * 1e-6,
                      us[6] * 1e-6, us[7] * 1e-6, us[8] * 1e-6};
  return 0;
}

static void table_free(ts_kernel_table *t) {
  for (int k = 0; t != NULL && k < TS_KERNEL_COUNT; k++)
    free(t->grids[k].log_time_s);
  free(t);
}

static int parse(const ts_doc *doc, ts_kernel_table *t, ts_err *err) {
  static const char *const keys[] = {"format",   "device",           "framework", "provenance",
                                     "software", "software_details", "tables",    NULL};
  int root = ts_doc_root(doc);
  if (root == 0 || !ts_doc_is_map(doc, root)) {
    ts_loc loc = {ts_doc_name(doc), 0, 0, NULL, NULL};
    return ts_err_at(err, loc, "expected a kernel table (a mapping with 'format' and 'tables')");
  }
  if (ts_doc_check_map(doc, root, "kernel table", keys, err) != 0)
    return -1;
  long format = 0;
  int rc = ts_doc_get_long(doc, root, "format", 1, 1, &format, err);
  if (rc <= 0)
    return rc < 0 ? -1 : ts_doc_missing(doc, root, "kernel table", "format", err);
  const char *s = NULL;
  if (ts_doc_get_string(doc, root, "device", &s, err) < 0)
    return -1;
  snprintf(t->device, sizeof t->device, "%s", s != NULL ? s : "");
  s = NULL;
  if (ts_doc_get_string(doc, root, "framework", &s, err) < 0)
    return -1;
  snprintf(t->framework, sizeof t->framework, "%s", s != NULL ? s : "");
  int provenance = TS_KERNELS_MEASURED;
  if (ts_doc_get_enum(doc, root, "provenance", ts_kernel_provenance_names, &provenance, err) < 0)
    return -1;
  t->provenance = (ts_kernel_provenance)provenance;
  int sw = ts_doc_get(doc, root, "software");
  if (sw != 0 && parse_software(doc, sw, &t->software, err) != 0)
    return -1;
  int tables = ts_doc_get(doc, root, "tables");
  if (tables == 0)
    return ts_doc_missing(doc, root, "kernel table", "tables", err);
  if (ts_doc_check_map(doc, tables, "tables", ts_kernel_names, err) != 0)
    return -1;
  for (int k = 0; k < TS_KERNEL_COUNT; k++) {
    int node = ts_doc_get(doc, tables, ts_kernel_names[k]);
    if (node != 0 && parse_table(doc, node, (ts_kernel_kind)k, &t->grids[k], err) != 0)
      return -1;
  }
  return 0;
}

/* Loads path's table from text (NULL: read the file), or returns the one loaded before. */
/* A new table from text (or the file at path when text is NULL), owned by the caller. */
static int parse_new(const char *path, const char *text, ts_kernel_table **out, ts_err *err) {
  ts_doc *doc = NULL;
  if ((text != NULL ? ts_doc_parse(path, text, strlen(text), &doc, err)
                    : ts_doc_load_file(path, &doc, err)) != 0)
    return -1;
  ts_kernel_table *t = calloc(1, sizeof *t);
  TS_ASSERT(t != NULL);
  snprintf(t->path, sizeof t->path, "%s", path);
  int rc = parse(doc, t, err);
  ts_doc_free(doc);
  if (rc != 0) {
    table_free(t);
    return -1;
  }
  *out = t;
  return 0;
}

static int load(const char *path, const char *text, const ts_kernel_table **out, ts_err *err) {
  for (int i = 0; i < n_loaded; i++)
    if (strcmp(loaded[i]->path, path) == 0) {
      *out = loaded[i];
      return 0;
    }
  if (n_loaded == MAX_TABLES)
    return ts_err_plain(err, "%s: more than %d kernel tables in one run", path, MAX_TABLES);
  ts_kernel_table *t = NULL;
  if (parse_new(path, text, &t, err) != 0)
    return -1;
  loaded[n_loaded++] = t;
  *out = t;
  return 0;
}

int ts_kernels_parse_string(const char *name, const char *text, ts_kernel_table **out,
                            ts_err *err) {
  return parse_new(name, text, out, err);
}

void ts_kernels_free(ts_kernel_table *t) {
  table_free(t);
}

int ts_kernels_load(const char *path, const ts_kernel_table **out, ts_err *err) {
  return load(path, NULL, out, err);
}

int ts_kernels_load_string(const char *name, const char *text, const ts_kernel_table **out,
                           ts_err *err) {
  return load(name, text, out, err);
}

/* Matrix FLOPs of kind at point (0: not a compute-bound table). */
static double matrix_flops(ts_kernel_kind kind, const double *x) {
  if (is_dense_gemm(kind))
    return 2 * x[0] * x[1] * x[2];
  switch (kind) {
  case TS_KERNEL_GROUPED_MM_FWD:
  case TS_KERNEL_GROUPED_MM_DGRAD:
  case TS_KERNEL_GROUPED_MM_WGRAD:
    return 2 * x[0] * x[1] * x[2] * x[3];
  case TS_KERNEL_BGEMM_QK:
  case TS_KERNEL_BGEMM_AV:
    return 2 * x[0] * x[1] * x[1] * x[2];
  case TS_KERNEL_FLASH_FWD:
    return 4 * x[0] * x[1] * x[1] * x[2];
  case TS_KERNEL_FLASH_BWD:
    return 8 * x[0] * x[1] * x[1] * x[2];
  case TS_KERNEL_FLASH_FWD_CAUSAL:
  case TS_KERNEL_SDPA_FWD_CAUSAL:
    return 2 * x[0] * x[1] * x[1] * x[2];
  case TS_KERNEL_FLASH_BWD_CAUSAL:
  case TS_KERNEL_SDPA_BWD_CAUSAL:
    return 4 * x[0] * x[1] * x[1] * x[2];
  case TS_KERNEL_SDPA_MLA_FWD_CAUSAL: /* causal: half of Q K^T (192) and P V (128) */
    return x[0] * x[1] * x[1] * (192 + 128);
  case TS_KERNEL_SDPA_MLA_BWD_CAUSAL:
    return 2 * x[0] * x[1] * x[1] * (192 + 128);
  default:
    return 0;
  }
}

ts_kernel_kind ts_kernels_faster_than_peak(const ts_kernel_table *t, double peak_flops_per_s,
                                           double peak_fp8_flops_per_s, double *point,
                                           double *time_s, double *fastest_s) {
  for (int k = 0; t != NULL && k < TS_KERNEL_COUNT; k++) {
    const grid *g = &t->grids[k];
    double peak = ts_kernel_is_fp8((ts_kernel_kind)k) ? peak_fp8_flops_per_s : peak_flops_per_s;
    if (!g->is_present || peak <= 0 ||
        matrix_flops((ts_kernel_kind)k, (double[MAX_AXES]){1, 1, 1, 1}) == 0)
      continue;
    int n_axes = ts_kernel_n_axes((ts_kernel_kind)k);
    long n = 1;
    for (int a = 0; a < n_axes; a++)
      n *= g->n_values[a];
    for (long i = 0; i < n; i++) {
      if (isnan(g->log_time_s[i]))
        continue;
      double x[MAX_AXES];
      for (long a = n_axes - 1, rest = i; a >= 0; a--) { /* row-major, the first axis slowest */
        x[a] = exp(g->log_axis[a][rest % g->n_values[a]]);
        rest /= g->n_values[a];
      }
      double fastest = matrix_flops((ts_kernel_kind)k, x) / peak, time = exp(g->log_time_s[i]);
      if (time < fastest * (1 - 1e-6)) {
        memcpy(point, x, sizeof(double) * (size_t)n_axes);
        *time_s = time;
        *fastest_s = fastest;
        return (ts_kernel_kind)k;
      }
    }
  }
  return TS_KERNEL_COUNT;
}

bool ts_kernels_has(const ts_kernel_table *t, ts_kernel_kind kind) {
  return t != NULL && t->grids[kind].is_present;
}

static ts_kernel_source lookup(const ts_kernel_table *t, ts_kernel_kind kind, const double *point,
                               double *time_s) {
  const grid *g = &t->grids[kind];
  int n_axes = ts_kernel_n_axes(kind);
  int lo[MAX_AXES];
  double frac[MAX_AXES];
  bool is_exact = true;
  for (int i = 0; i < n_axes; i++) {
    if (!(point[i] > 0))
      return TS_KERNEL_SRC_MODEL;
    double x = log(point[i]);
    const double *a = g->log_axis[i];
    int n = g->n_values[i];
    /* A value within rounding of a grid point is that point. */
    const double eps = 1e-9;
    if (x < a[0] - eps || x > a[n - 1] + eps)
      return TS_KERNEL_SRC_MODEL;
    int j = 0;
    while (j + 1 < n - 1 && x > a[j + 1] + eps)
      j++;
    lo[i] = j;
    if (n == 1 || fabs(x - a[j]) <= eps) {
      frac[i] = 0;
    } else if (fabs(x - a[j + 1]) <= eps) {
      frac[i] = 1;
    } else {
      frac[i] = (x - a[j]) / (a[j + 1] - a[j]);
      is_exact = false;
    }
  }
  double sum = 0;
  for (int corner = 0; corner < (1 << n_axes); corner++) {
    double w = 1;
    long index = 0;
    for (int i = 0; i < n_axes; i++) {
      int up = (corner >> i) & 1;
      w *= up ? frac[i] : 1 - frac[i];
      index = index * g->n_values[i] + lo[i] + up;
    }
    if (w == 0)
      continue;
    if (isnan(g->log_time_s[index]))
      return TS_KERNEL_SRC_MODEL;
    sum += w * g->log_time_s[index];
  }
  *time_s = exp(sum);
  return is_exact ? TS_KERNEL_SRC_TABLE : TS_KERNEL_SRC_INTERPOLATED;
}

/* Whether kind's first axis counts independent work, so that its time grows in proportion to
 * it once the GPU is full (not GEMM dimensions, sequences or parameter sets): attention's
 * batch x heads are independent problems too. */
static bool linear_in_first_axis(ts_kernel_kind kind) {
  const char *first = axes_of(kind)[0];
  return strcmp(first, "batch") == 0 || strcmp(first, "rows") == 0 ||
         strcmp(first, "elements") == 0 || strcmp(first, "tokens") == 0 ||
         strcmp(first, "batch_heads") == 0 || strcmp(first, "experts") == 0;
}

double ts_kernels_axis_min(const ts_kernel_table *t, ts_kernel_kind kind, int axis) {
  if (t == NULL || !t->grids[kind].is_present || axis < 0 || axis >= ts_kernel_n_axes(kind))
    return 0;
  return exp(t->grids[kind].log_axis[axis][0]);
}

/* A dense GEMM's table (m, n, k): its time grows in proportion to each dimension beyond the
 * grid's largest value where that is GEMM_FULL_DIM or more (the measured tables reach 32,768 and
 * up): twice the rows or columns are twice the tiles, and a dimension that large is at least
 * 128 tiles of 128, a wave of the GPU's units; twice the reduction is twice each tile's loop
 * (the library splits k when the tiles are few, so no shape is left to one wave). */
#define GEMM_FULL_DIM 16384.0

/* A GEMM point beyond the grid's top in some dimensions: the time at the top edge of each such
 * dimension, scaled by point / edge in each. */
static ts_kernel_source beyond_gemm_grid(const ts_kernel_table *t, ts_kernel_kind kind,
                                         const double *point, double *time_s) {
  const grid *g = &t->grids[kind];
  double at[MAX_AXES], scale = 1, edge_s = 0;
  bool beyond = false;
  for (int i = 0; i < 3; i++) {
    double top = exp(g->log_axis[i][g->n_values[i] - 1]);
    at[i] = point[i];
    if (point[i] > top * (1 + 1e-9)) {
      if (top < GEMM_FULL_DIM * (1 - 1e-9))
        return TS_KERNEL_SRC_MODEL;
      at[i] = top;
      scale *= point[i] / top;
      beyond = true;
    }
  }
  if (!beyond || lookup(t, kind, at, &edge_s) == TS_KERNEL_SRC_MODEL)
    return TS_KERNEL_SRC_MODEL;
  *time_s = edge_s * scale;
  return TS_KERNEL_SRC_EXTRAPOLATED;
}

/* Whether kind is attention's (flash, SDPA, the batched GEMMs of attention without flash): its
 * second axis is the sequence, and its work grows with the sequence's square (S x S scores a
 * problem, causal or not). */
static bool quadratic_in_seq(ts_kernel_kind kind) {
  const char *const *axes = axes_of(kind);
  return axes[0] != NULL && axes[1] != NULL && strcmp(axes[1], "seq") == 0;
}

ts_kernel_source ts_kernels_time(const ts_kernel_table *t, ts_kernel_kind kind, const double *point,
                                 double *time_s) {
  if (t == NULL || !t->grids[kind].is_present)
    return TS_KERNEL_SRC_MODEL;
  /* Past the measured sequences: the longest one's time, scaled by the square of the ratio (its
   * rate held). Measured on an H100 (bench/device/attention_long_seq.py ->
   * h100_attention_long_seq.csv: flash causal and not, cuDNN's causal, forward and backward,
   * head dimensions 64 and 128, 4 and 16 batch x heads): at 65,536 and 131,072 tokens the times
   * are 0.78-1.18 of this rule's from 32,768 (mean 0.97; 18 of 24 within 6% at each length), the
   * rule slowest against causal forwards of few heads, whose rate still grows. */
  const grid *g = &t->grids[kind];
  double longest = quadratic_in_seq(kind) ? exp(g->log_axis[1][g->n_values[1] - 1]) : 0;
  if (quadratic_in_seq(kind) && point[1] > longest * (1 + 1e-9)) {
    double at[MAX_AXES], edge_s = 0;
    memcpy(at, point, sizeof(double) * (size_t)ts_kernel_n_axes(kind));
    at[1] = longest;
    if (ts_kernels_time(t, kind, at, &edge_s) == TS_KERNEL_SRC_MODEL)
      return TS_KERNEL_SRC_MODEL;
    *time_s = edge_s * (point[1] / longest) * (point[1] / longest);
    return TS_KERNEL_SRC_EXTRAPOLATED;
  }
  /* Off the measured head dimensions: past the widest, that one's time in proportion to the
   * head dimension (the rate held); below the narrowest, that one's time (the softmax's work a
   * score does not shrink with it). Measured on an H100 (bench/device/attention_head_dims.py ->
   * h100_attention_head_dims.csv: flash causal and not, cuDNN's causal, forward and backward,
   * 8 and 32 batch x heads, 2,048 and 8,192 tokens): at head dimension 256 0.64-1.20 of this
   * rule's time from 128 (mean 0.94), at 32 0.68-1.22 of it from 64 (mean 0.86). The roofline,
   * which priced them before, gave 32 about 0.3 of 64's time and 256's backward about 1.1 of
   * 128's (measured: 0.68-1.22 and 1.57-2.40). */
  if (quadratic_in_seq(kind) && ts_kernel_n_axes(kind) == 3) {
    double widest = exp(g->log_axis[2][g->n_values[2] - 1]), narrowest = exp(g->log_axis[2][0]);
    double d = point[2];
    if (d > widest * (1 + 1e-9) || d < narrowest * (1 - 1e-9)) {
      double at[MAX_AXES], edge_s = 0;
      memcpy(at, point, sizeof(double) * (size_t)ts_kernel_n_axes(kind));
      at[2] = d > widest ? widest : narrowest;
      if (ts_kernels_time(t, kind, at, &edge_s) == TS_KERNEL_SRC_MODEL)
        return TS_KERNEL_SRC_MODEL;
      *time_s = edge_s * (d > widest ? d / widest : 1.0);
      return TS_KERNEL_SRC_EXTRAPOLATED;
    }
  }
  ts_kernel_source src = lookup(t, kind, point, time_s);
  if (src == TS_KERNEL_SRC_MODEL && is_dense_gemm(kind))
    return beyond_gemm_grid(t, kind, point, time_s);
  if (src != TS_KERNEL_SRC_MODEL || !linear_in_first_axis(kind))
    return src;
  /* Past the measured edge along the first axis (or beside a point too large to measure): the
   * largest measured value below the point that prices, scaled. */
  for (int j = g->n_values[0] - 1; j >= 0; j--) {
    double edge = exp(g->log_axis[0][j]), at[MAX_AXES], edge_s = 0;
    if (!(edge < point[0]))
      continue;
    memcpy(at, point, sizeof(double) * (size_t)ts_kernel_n_axes(kind));
    at[0] = edge;
    if (lookup(t, kind, at, &edge_s) != TS_KERNEL_SRC_MODEL) {
      *time_s = edge_s * point[0] / edge;
      return TS_KERNEL_SRC_EXTRAPOLATED;
    }
  }
  return TS_KERNEL_SRC_MODEL;
}

ts_software ts_kernels_software(const ts_kernel_table *t) {
  ts_software none = {0};
  return t != NULL ? t->software : none;
}

const char *ts_kernels_path(const ts_kernel_table *t) {
  return t != NULL ? t->path : "";
}
const char *ts_kernels_device(const ts_kernel_table *t) {
  return t != NULL ? t->device : "";
}
const char *const ts_kernel_provenance_names[] = {"measured", "derived", "modelled", NULL};

ts_kernel_provenance ts_kernels_provenance(const ts_kernel_table *t) {
  return t != NULL ? t->provenance : TS_KERNELS_MEASURED;
}

const char *ts_kernels_framework(const ts_kernel_table *t) {
  return t != NULL ? t->framework : "";
}
