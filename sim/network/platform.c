/* platform: parsing and validation of platform files; see platform.h. */
#include "platform.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../workloads/doc.h"
#include "../../workloads/text.h"

static const char *const top_keys[] = {"name",        "description", "sources", "gpu",
                                       "node",        "network",     "nodes",   "collectives",
                                       "reliability", NULL};
static const char *const reliability_keys[] = {"failure_rates", "restart", "storage", NULL};
static const char *const rate_keys[] = {"gpu", "node", "nic_link", "switch", NULL};
static const char *const storage_keys[] = {"write_bandwidth", "read_bandwidth", "node_bandwidth",
                                           "host_bandwidth", NULL};
static const char *const ccl_keys[] = {
    "library",          "arch",   "tuning_model", "cpu", "channels", "node_link_efficiency",
    "overlap_slowdown", "launch", "fsdp_unit",    NULL};
static const char *const gpu_keys[] = {"model",
                                       "peak",
                                       "hbm_capacity",
                                       "hbm_bandwidth",
                                       "gemm_ceiling",
                                       "gemm_tile",
                                       "compute_units",
                                       "kernel_launch",
                                       "power",
                                       "kernel_table",
                                       "speed_spread",
                                       "runtime_memory",
                                       "power_limit",
                                       "attention_dropout",
                                       NULL};
static const char *const power_limit_keys[] = {"limit",          "idle", "exponent", "gemm_table",
                                               "fp8_gemm_table", "gemm", "sdpa",     "flash",
                                               "other",          NULL};
static const char *const power_class_keys[] = {"boost", "slowdown", NULL};
static const char *const dropout_keys[] = {"sdpa", "flash", NULL};
static const char *const dropout_pass_keys[] = {"forward_ps", "backward_ps", NULL};
static const char *const gemm_table_keys[] = {"time", "ratio", NULL};
static const char *const tile_keys[] = {"m", "n", NULL};
static const char *const node_keys[] = {"gpus", "links", "switch", "nics", NULL};
static const char *const link_keys[] = {"gpus", "bandwidth", "latency", NULL};
static const char *const nic_keys[] = {"gpu",          "bandwidth", "latency", "pcie_bandwidth",
                                       "pcie_latency", NULL};
static const char *const dragonfly_keys[] = {"topology",
                                             "groups",
                                             "switches_per_group",
                                             "nodes_per_switch",
                                             "global_links_per_group_pair",
                                             "local_link",
                                             "global_link",
                                             "routing",
                                             NULL};
static const char *const fat_tree_keys[] = {"topology",       "levels", "radix", "oversubscription",
                                            "rail_optimized", "link",   NULL};
static const char *const params_keys[] = {"bandwidth", "latency", NULL};
const char *const ts_topology_names[] = {"dragonfly", "fat-tree", NULL};
const char *const ts_routing_names[] = {"adaptive", "minimal", NULL};
const char *const ts_ccl_library_names[] = {"ideal", "nccl", "rccl", NULL};
const char *const ts_ccl_arch_names[] = {"volta", "ampere", "hopper", "blackwell", NULL};
const char *const ts_ccl_cpu_names[] = {"intel", "amd", NULL};

/* Reads a required key through a getter: absent is an error naming the mapping. */
#define REQUIRE(call, doc, map, what, key, err)                                                    \
  do {                                                                                             \
    int rc_ = (call);                                                                              \
    if (rc_ < 0)                                                                                   \
      return -1;                                                                                   \
    if (rc_ == 0)                                                                                  \
      return ts_doc_missing(doc, map, what, key, err);                                             \
  } while (0)

static int required_map(const ts_doc *doc, int parent, const char *what, const char *key,
                        const char *const *keys, int *out, ts_err *err) {
  int node = ts_doc_get(doc, parent, key);
  if (node == 0)
    return ts_doc_missing(doc, parent, what, key, err);
  if (ts_doc_check_map(doc, node, key, keys, err) != 0)
    return -1;
  *out = node;
  return 0;
}

/* gpu.kernel_table: a kernel table file, relative to the platform file's folder. */
static int load_kernel_table(const ts_doc *doc, int g, ts_gpu *gpu, ts_err *err) {
  const char *table = NULL;
  int rc = ts_doc_get_string(doc, g, "kernel_table", &table, err);
  if (rc <= 0)
    return rc;
  const char *name = ts_doc_name(doc), *slash = strrchr(name, '/');
  int dir = table[0] == '/' || slash == NULL ? 0 : (int)(slash - name) + 1;
  char path[1024];
  if ((size_t)snprintf(path, sizeof path, "%.*s%s", dir, name, table) >= sizeof path)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, g, "kernel_table")),
                     "key 'kernel_table': expected a path of under %zu bytes", sizeof path);
  /* The built-in platform's table is built in too, so that it works from any directory: used
   * when the file is not there. */
  bool is_builtin = strcmp(name, ts_platform_default_name) == 0 &&
                    strcmp(path, ts_kernels_default_name) == 0 && access(path, R_OK) != 0;
  if (!is_builtin && access(path, R_OK) != 0)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, g, "kernel_table")),
                     "key 'kernel_table': cannot read '%s': %s", path, strerror(errno));
  if ((is_builtin ? ts_kernels_load_string(path, ts_kernels_default_text, &gpu->kernels, err)
                  : ts_kernels_load(path, &gpu->kernels, err)) != 0)
    return -1;
  gpu->software = ts_kernels_software(gpu->kernels);
  /* A table time below what the GPU's peak allows contradicts the platform (its kernels are
   * bf16, or fp16 where the platform gives no bf16 peak). */
  double peak = gpu->peak_flops_per_s[TS_PREC_BF16] > 0 ? gpu->peak_flops_per_s[TS_PREC_BF16]
                                                        : gpu->peak_flops_per_s[TS_PREC_FP16];
  double x[3] = {0}, time_s = 0, fastest_s = 0;
  ts_kernel_kind k = ts_kernels_faster_than_peak(gpu->kernels, peak, gpu->peak_fp8_flops_per_s, x,
                                                 &time_s, &fastest_s);
  if (k != TS_KERNEL_COUNT) {
    char at[160];
    const char *const *axes = ts_kernel_axes(k);
    int n = 0;
    for (int a = 0; axes[a] != NULL && n < (int)sizeof at; a++)
      n += snprintf(at + n, sizeof at - (size_t)n, "%s%s %.0f", a ? ", " : "", axes[a], x[a]);
    bool fp8 = ts_kernel_is_fp8(k);
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, g, "kernel_table")),
                     "key 'kernel_table': table '%s' of '%s' takes %.4g us at %s, faster than "
                     "gpu.peak.%s (%.4g TFLOPS) allows for its FLOPs (%.4g us at least): the "
                     "table and the peak contradict each other",
                     ts_kernel_names[k], path, time_s * 1e6, at,
                     fp8                                       ? "fp8"
                     : gpu->peak_flops_per_s[TS_PREC_BF16] > 0 ? "bf16"
                                                               : "fp16",
                     (fp8 ? gpu->peak_fp8_flops_per_s : peak) / 1e12, fastest_s * 1e6);
  }
  return 0;
}

/* One anchor list of power_limit.gemm_table: item i of its `key` list, a duration (time) or a
 * ratio 0.5-2. */
static int gemm_table_item(const ts_doc *doc, int list, const char *key, int i, double *out,
                           ts_err *err) {
  int item = ts_doc_seq_item(doc, list, i);
  const char *text = ts_doc_scalar(doc, item), *expected = "a ratio from 0.5 to 2";
  bool time = strcmp(key, "time") == 0;
  if (text != NULL && (time ? ts_units_parse(text, TS_UNITS_TIME, out, &expected) == 0 && *out > 0
                            : ts_parse_double(text, out) == 0 && *out >= 0.5 && *out <= 2))
    return 0;
  return ts_err_at(err, ts_doc_loc(doc, item), "key '%s': expected %s, found '%s'", key,
                   time ? "a duration above 0 such as '150us'" : expected,
                   text ? text : "a non-scalar");
}

/* power_limit.gemm_table or fp8_gemm_table (key): {time: [...], ratio: [...]}, as many of each
 * (1 to TS_POWER_GEMM_TABLE_MAX), times increasing. */
static int load_gemm_table(const ts_doc *doc, int node, const char *key, ts_power_anchors *a,
                           ts_err *err) {
  int t = ts_doc_get(doc, node, key);
  if (t == 0)
    return 0;
  if (ts_doc_check_map(doc, t, key, gemm_table_keys, err) != 0)
    return -1;
  int time = ts_doc_get(doc, t, "time"), ratio = ts_doc_get(doc, t, "ratio");
  if (time == 0)
    return ts_doc_missing(doc, t, key, "time", err);
  if (ratio == 0)
    return ts_doc_missing(doc, t, key, "ratio", err);
  int n = ts_doc_is_seq(doc, time) ? ts_doc_seq_len(doc, time) : -1;
  if (n < 1 || n > TS_POWER_GEMM_TABLE_MAX)
    return ts_err_at(err, ts_doc_loc(doc, time), "key 'time': expected a list of 1 to %d durations",
                     TS_POWER_GEMM_TABLE_MAX);
  if (!ts_doc_is_seq(doc, ratio) || ts_doc_seq_len(doc, ratio) != n)
    return ts_err_at(err, ts_doc_loc(doc, ratio),
                     "key 'ratio': expected a list of %d ratios, one a time", n);
  for (int i = 0; i < n; i++) {
    if (gemm_table_item(doc, time, "time", i, &a->time_s[i], err) != 0 ||
        gemm_table_item(doc, ratio, "ratio", i, &a->ratio[i], err) != 0)
      return -1;
    if (i > 0 && !(a->time_s[i] > a->time_s[i - 1]))
      return ts_err_at(err, ts_doc_loc(doc, ts_doc_seq_item(doc, time, i)),
                       "key 'time': expected times in increasing order");
  }
  a->n = n;
  return 0;
}

/* gpu.power_limit (workloads/power.h): the limit, the idle draw, the exponent, the dense GEMM
 * tables' stretch by their time (none: 1), and each power class's boost draw and slowdown. */
static int load_power_limit(const ts_doc *doc, int g, ts_power_model *m, ts_err *err) {
  int node = ts_doc_get(doc, g, "power_limit");
  if (node == 0)
    return 0;
  if (ts_doc_check_map(doc, node, "power_limit", power_limit_keys, err) != 0)
    return -1;
  REQUIRE(ts_doc_get_unit(doc, node, "limit", TS_UNITS_POWER, false, &m->limit_w, err), doc, node,
          "power_limit", "limit", err);
  REQUIRE(ts_doc_get_unit(doc, node, "idle", TS_UNITS_POWER, false, &m->idle_w, err), doc, node,
          "power_limit", "idle", err);
  REQUIRE(ts_doc_get_double(doc, node, "exponent", 0.1, 10, &m->exponent, err), doc, node,
          "power_limit", "exponent", err);
  if (m->idle_w >= m->limit_w)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, node, "idle")),
                     "key 'idle': expected less than the limit (%.0f W), found %.0f W", m->limit_w,
                     m->idle_w);
  for (int c = 0; c < TS_POWER_CLASS_COUNT; c++) {
    const char *name = ts_power_class_names[c];
    int k = 0;
    if (required_map(doc, node, "power_limit", name, power_class_keys, &k, err) != 0)
      return -1;
    REQUIRE(ts_doc_get_unit(doc, k, "boost", TS_UNITS_POWER, false, &m->boost_w[c], err), doc, k,
            name, "boost", err);
    if (m->boost_w[c] < m->idle_w)
      return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, k, "boost")),
                       "key 'boost': expected at least power_limit.idle (%.0f W), found %.0f W",
                       m->idle_w, m->boost_w[c]);
    REQUIRE(ts_doc_get_double(doc, k, "slowdown", 0, 2, &m->slowdown[c], err), doc, k, name,
            "slowdown", err);
  }
  if (load_gemm_table(doc, node, "gemm_table", &m->gemm_table, err) != 0)
    return -1;
  return load_gemm_table(doc, node, "fp8_gemm_table", &m->fp8_gemm_table, err);
}

/* gpu.attention_dropout: what the mask adds per score inside fused attention, in ps, for
 * PyTorch's SDPA choice (cuDNN's) and for the flash kernels, forward and backward. */
static int load_attention_dropout(const ts_doc *doc, int g, ts_gpu *gpu, ts_err *err) {
  int node = ts_doc_get(doc, g, "attention_dropout");
  if (node == 0)
    return 0;
  if (ts_doc_check_map(doc, node, "attention_dropout", dropout_keys, err) != 0)
    return -1;
  for (int b = 0; b < 2; b++) {
    int k = 0;
    if (required_map(doc, node, "attention_dropout", dropout_keys[b], dropout_pass_keys, &k, err) !=
        0)
      return -1;
    for (int pass = 0; pass < 2; pass++) {
      double ps = 0;
      REQUIRE(ts_doc_get_double(doc, k, dropout_pass_keys[pass], 0, 1000, &ps, err), doc, k,
              dropout_keys[b], dropout_pass_keys[pass], err);
      gpu->attention_dropout_s[b][pass] = ps * 1e-12;
    }
  }
  gpu->has_attention_dropout = true;
  return 0;
}

static int load_gpu(const ts_doc *doc, int root, ts_gpu *gpu, ts_err *err) {
  int g = 0;
  if (required_map(doc, root, "platform", "gpu", gpu_keys, &g, err) != 0)
    return -1;
  const char *model = NULL;
  REQUIRE(ts_doc_get_string(doc, g, "model", &model, err), doc, g, "gpu", "model", err);
  ts_text_copy(gpu->model, sizeof gpu->model, model);

  int peak = ts_doc_get(doc, g, "peak");
  if (peak == 0)
    return ts_doc_missing(doc, g, "gpu", "peak", err);
  static const char *const peak_keys[] = {"bf16", "fp16", "fp32", "fp64", "fp8", NULL};
  if (ts_doc_check_map(doc, peak, "peak", peak_keys, err) != 0 ||
      ts_doc_get_unit(doc, peak, "fp8", TS_UNITS_FLOP_RATE, false, &gpu->peak_fp8_flops_per_s,
                      err) < 0)
    return -1;
  bool any = false;
  for (int p = 0; p < TS_PREC_COUNT; p++) {
    int rc = ts_doc_get_unit(doc, peak, ts_precision_names[p], TS_UNITS_FLOP_RATE, false,
                             &gpu->peak_flops_per_s[p], err);
    if (rc < 0)
      return -1;
    any = any || rc == 1;
  }
  if (!any)
    return ts_err_at(err, ts_doc_loc(doc, peak), "'peak': expected at least one precision");
  /* FP8's tensor rate is twice BF16's and FP16's on every GPU that has one (H100, MI300X, B200
   * datasheets): a lower figure contradicts the rest, and the MFU of an FP8 run, taken against
   * it, could pass 100%. */
  for (int p = TS_PREC_BF16; gpu->peak_fp8_flops_per_s > 0 && p <= TS_PREC_FP16; p++)
    if (gpu->peak_fp8_flops_per_s < gpu->peak_flops_per_s[p])
      return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, peak, "fp8")),
                       "key 'fp8': expected at least the %s peak (%.1f TFLOPS), found %.1f TFLOPS",
                       ts_precision_names[p], gpu->peak_flops_per_s[p] / 1e12,
                       gpu->peak_fp8_flops_per_s / 1e12);

  REQUIRE(ts_doc_get_unit(doc, g, "hbm_capacity", TS_UNITS_BYTES, false, &gpu->hbm_bytes, err), doc,
          g, "gpu", "hbm_capacity", err);
  if (ts_doc_get_unit(doc, g, "runtime_memory", TS_UNITS_BYTES, true, &gpu->runtime_bytes, err) < 0)
    return -1;
  if (gpu->runtime_bytes >= gpu->hbm_bytes)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, g, "runtime_memory")),
                     "key 'runtime_memory': expected less than hbm_capacity (%.2f GiB), found "
                     "%.2f GiB",
                     gpu->hbm_bytes / 1073741824.0, gpu->runtime_bytes / 1073741824.0);
  REQUIRE(ts_doc_get_unit(doc, g, "hbm_bandwidth", TS_UNITS_BANDWIDTH, false, &gpu->hbm_Bps, err),
          doc, g, "gpu", "hbm_bandwidth", err);
  REQUIRE(ts_doc_get_double(doc, g, "gemm_ceiling", 0.01, 1.0, &gpu->gemm_ceiling, err), doc, g,
          "gpu", "gemm_ceiling", err);
  int tile = 0;
  if (required_map(doc, g, "gpu", "gemm_tile", tile_keys, &tile, err) != 0)
    return -1;
  REQUIRE(ts_doc_get_long(doc, tile, "m", 1, 4096, &gpu->gemm_tile_m, err), doc, tile, "gemm_tile",
          "m", err);
  REQUIRE(ts_doc_get_long(doc, tile, "n", 1, 4096, &gpu->gemm_tile_n, err), doc, tile, "gemm_tile",
          "n", err);
  REQUIRE(ts_doc_get_long(doc, g, "compute_units", 1, 1000000, &gpu->n_compute_units, err), doc, g,
          "gpu", "compute_units", err);
  REQUIRE(ts_doc_get_unit(doc, g, "kernel_launch", TS_UNITS_TIME, true, &gpu->kernel_launch_s, err),
          doc, g, "gpu", "kernel_launch", err);
  if (ts_doc_get_unit(doc, g, "power", TS_UNITS_POWER, false, &gpu->power_w, err) < 0)
    return -1;
  if (ts_doc_get_double(doc, g, "speed_spread", 0, 0.5, &gpu->speed_spread, err) < 0)
    return -1;
  if (load_power_limit(doc, g, &gpu->power_limit, err) != 0 ||
      load_attention_dropout(doc, g, gpu, err) != 0)
    return -1;
  return load_kernel_table(doc, g, gpu, err);
}

static int local_gpu(const ts_doc *doc, int node, const char *key, int n_gpus, int *out,
                     ts_err *err) {
  const char *s = ts_doc_scalar(doc, node);
  long v = 0;
  if (s == NULL || ts_parse_long(s, &v) != 0 || v < 0 || v >= n_gpus)
    return ts_err_at(err, ts_doc_loc(doc, node),
                     "key '%s': expected a GPU index from 0 to %d, found '%s'", key, n_gpus - 1,
                     s ? s : "a non-scalar");
  *out = (int)v;
  return 0;
}

static int load_link(const ts_doc *doc, int item, int n_gpus, ts_node_link *out, ts_err *err) {
  if (ts_doc_check_map(doc, item, "links", link_keys, err) != 0)
    return -1;
  int pair = ts_doc_get(doc, item, "gpus");
  if (pair == 0)
    return ts_doc_missing(doc, item, "links", "gpus", err);
  if (!ts_doc_is_seq(doc, pair) || ts_doc_seq_len(doc, pair) != 2)
    return ts_err_at(err, ts_doc_loc(doc, pair), "key 'gpus': expected a pair such as [0, 1]");
  int a = 0, b = 0;
  if (local_gpu(doc, ts_doc_seq_item(doc, pair, 0), "gpus", n_gpus, &a, err) != 0 ||
      local_gpu(doc, ts_doc_seq_item(doc, pair, 1), "gpus", n_gpus, &b, err) != 0)
    return -1;
  if (a == b)
    return ts_err_at(err, ts_doc_loc(doc, pair),
                     "key 'gpus': a link joins two different GPUs, found [%d, %d]", a, b);
  out->gpu_a = a < b ? a : b;
  out->gpu_b = a < b ? b : a;
  REQUIRE(ts_doc_get_unit(doc, item, "bandwidth", TS_UNITS_BANDWIDTH, false, &out->bw_Bps, err),
          doc, item, "links", "bandwidth", err);
  REQUIRE(ts_doc_get_unit(doc, item, "latency", TS_UNITS_TIME, true, &out->lat_s, err), doc, item,
          "links", "latency", err);
  return 0;
}

static int load_nic(const ts_doc *doc, int item, int n_gpus, ts_nic *out, ts_err *err) {
  if (ts_doc_check_map(doc, item, "nics", nic_keys, err) != 0)
    return -1;
  int g = ts_doc_get(doc, item, "gpu");
  if (g == 0)
    return ts_doc_missing(doc, item, "nics", "gpu", err);
  if (local_gpu(doc, g, "gpu", n_gpus, &out->gpu, err) != 0)
    return -1;
  REQUIRE(ts_doc_get_unit(doc, item, "bandwidth", TS_UNITS_BANDWIDTH, false, &out->bw_Bps, err),
          doc, item, "nics", "bandwidth", err);
  REQUIRE(ts_doc_get_unit(doc, item, "latency", TS_UNITS_TIME, true, &out->lat_s, err), doc, item,
          "nics", "latency", err);
  REQUIRE(
      ts_doc_get_unit(doc, item, "pcie_bandwidth", TS_UNITS_BANDWIDTH, false, &out->pcie_Bps, err),
      doc, item, "nics", "pcie_bandwidth", err);
  REQUIRE(ts_doc_get_unit(doc, item, "pcie_latency", TS_UNITS_TIME, true, &out->pcie_lat_s, err),
          doc, item, "nics", "pcie_latency", err);
  return 0;
}

static int load_params(const ts_doc *doc, int map, const char *what, const char *key,
                       ts_link_params *out, ts_err *err);

static int load_node(const ts_doc *doc, int root, ts_platform *pf, ts_err *err) {
  int n = 0;
  if (required_map(doc, root, "platform", "node", node_keys, &n, err) != 0)
    return -1;
  long gpus = 0;
  REQUIRE(ts_doc_get_long(doc, n, "gpus", 1, TS_PLATFORM_MAX_GPUS_PER_NODE, &gpus, err), doc, n,
          "node", "gpus", err);
  pf->gpus_per_node = (int)gpus;

  int links = ts_doc_get(doc, n, "links");
  if (links != 0 && !ts_doc_is_seq(doc, links))
    return ts_err_at(err, ts_doc_loc(doc, links), "key 'links': expected a list of links");
  int n_links = ts_doc_seq_len(doc, links);
  if (n_links > TS_PLATFORM_MAX_NODE_LINKS)
    return ts_err_at(err, ts_doc_loc(doc, links), "key 'links': at most %d links, found %d",
                     TS_PLATFORM_MAX_NODE_LINKS, n_links);
  for (int i = 0; i < n_links; i++) {
    int item = ts_doc_seq_item(doc, links, i);
    ts_node_link *l = &pf->node_links[i];
    if (load_link(doc, item, pf->gpus_per_node, l, err) != 0)
      return -1;
    for (int j = 0; j < i; j++)
      if (pf->node_links[j].gpu_a == l->gpu_a && pf->node_links[j].gpu_b == l->gpu_b)
        return ts_err_at(err, ts_doc_loc(doc, item),
                         "duplicate link between GPUs %d and %d (list its bandwidth once, "
                         "summed over parallel links)",
                         l->gpu_a, l->gpu_b);
  }
  pf->n_node_links = n_links;
  int sw = ts_doc_get(doc, n, "switch");
  if (sw != 0) {
    if (n_links > 0)
      return ts_err_at(err, ts_doc_loc(doc, sw),
                       "key 'switch': a node has either links between GPUs or a switch, found "
                       "both");
    if (load_params(doc, n, "node", "switch", &pf->node_switch, err) != 0)
      return -1;
    pf->has_node_switch = true;
  }

  int nics = ts_doc_get(doc, n, "nics");
  if (nics != 0 && !ts_doc_is_seq(doc, nics))
    return ts_err_at(err, ts_doc_loc(doc, nics), "key 'nics': expected a list of NICs");
  int n_nics = ts_doc_seq_len(doc, nics);
  if (n_nics > TS_PLATFORM_MAX_NICS)
    return ts_err_at(err, ts_doc_loc(doc, nics), "key 'nics': at most %d NICs, found %d",
                     TS_PLATFORM_MAX_NICS, n_nics);
  for (int i = 0; i < n_nics; i++)
    if (load_nic(doc, ts_doc_seq_item(doc, nics, i), pf->gpus_per_node, &pf->nics[i], err) != 0)
      return -1;
  pf->n_nics = n_nics;

  /* Every GPU must reach every other inside the node. */
  for (int a = 0; a < pf->gpus_per_node; a++)
    for (int b = 0; b < pf->gpus_per_node; b++)
      if (a != b && ts_platform_node_hops(pf, a, b) < 0)
        return ts_err_at(err, ts_doc_loc(doc, n),
                         "'node': GPUs %d and %d are not connected by any path of links", a, b);
  return 0;
}

static int load_params(const ts_doc *doc, int map, const char *what, const char *key,
                       ts_link_params *out, ts_err *err) {
  int m = 0;
  if (required_map(doc, map, what, key, params_keys, &m, err) != 0)
    return -1;
  REQUIRE(ts_doc_get_unit(doc, m, "bandwidth", TS_UNITS_BANDWIDTH, false, &out->bw_Bps, err), doc,
          m, key, "bandwidth", err);
  REQUIRE(ts_doc_get_unit(doc, m, "latency", TS_UNITS_TIME, true, &out->lat_s, err), doc, m, key,
          "latency", err);
  return 0;
}

static int load_dragonfly(const ts_doc *doc, int net, ts_dragonfly *d, ts_err *err) {
  if (ts_doc_check_map(doc, net, "network", dragonfly_keys, err) != 0)
    return -1;
  REQUIRE(ts_doc_get_long(doc, net, "groups", 1, 4096, &d->n_groups, err), doc, net, "network",
          "groups", err);
  REQUIRE(ts_doc_get_long(doc, net, "switches_per_group", 1, 1024, &d->switches_per_group, err),
          doc, net, "network", "switches_per_group", err);
  REQUIRE(ts_doc_get_long(doc, net, "nodes_per_switch", 1, 1024, &d->nodes_per_switch, err), doc,
          net, "network", "nodes_per_switch", err);
  REQUIRE(ts_doc_get_long(doc, net, "global_links_per_group_pair", 1, 64, &d->global_links_per_pair,
                          err),
          doc, net, "network", "global_links_per_group_pair", err);
  if (load_params(doc, net, "network", "local_link", &d->local, err) != 0 ||
      load_params(doc, net, "network", "global_link", &d->global, err) != 0)
    return -1;
  int routing = TS_ROUTING_ADAPTIVE;
  if (ts_doc_get_enum(doc, net, "routing", ts_routing_names, &routing, err) < 0)
    return -1;
  d->routing = (ts_routing)routing;
  return 0;
}

static int load_fat_tree(const ts_doc *doc, int net, ts_fat_tree *ft, ts_err *err) {
  if (ts_doc_check_map(doc, net, "network", fat_tree_keys, err) != 0)
    return -1;
  long levels = 2;
  if (ts_doc_get_long(doc, net, "levels", 2, 3, &levels, err) < 0)
    return -1;
  ft->levels = (int)levels;
  REQUIRE(ts_doc_get_long(doc, net, "radix", 2, 4096, &ft->radix, err), doc, net, "network",
          "radix", err);
  ft->oversubscription = 1;
  if (ts_doc_get_double(doc, net, "oversubscription", 1, 64, &ft->oversubscription, err) < 0 ||
      ts_doc_get_bool(doc, net, "rail_optimized", &ft->is_rail_optimized, err) < 0 ||
      load_params(doc, net, "network", "link", &ft->link, err) != 0)
    return -1;
  /* down : up = oversubscription : 1, at least one port each way */
  ft->down_ports = (long)((double)ft->radix * ft->oversubscription / (ft->oversubscription + 1));
  if (ft->down_ports < 1 || ft->down_ports >= ft->radix)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, net, "radix")),
                     "key 'radix': %ld ports leave no port %s at oversubscription %g", ft->radix,
                     ft->down_ports < 1 ? "down" : "up", ft->oversubscription);
  ft->up_ports = ft->radix - ft->down_ports;
  ft->leaves_per_pod = ft->levels == 3 ? ft->radix / 2 : ft->radix;
  return 0;
}

static int load_network(const ts_doc *doc, int root, ts_platform *pf, ts_err *err) {
  int net = ts_doc_get(doc, root, "network");
  if (net == 0)
    return ts_doc_missing(doc, root, "platform", "network", err);
  if (!ts_doc_is_map(doc, net))
    return ts_err_at(err, ts_doc_loc(doc, net), "key 'network': expected a mapping");
  int topo = 0;
  REQUIRE(ts_doc_get_enum(doc, net, "topology", ts_topology_names, &topo, err), doc, net, "network",
          "topology", err);
  pf->topology = (ts_topology)topo;
  return pf->topology == TS_TOPO_DRAGONFLY ? load_dragonfly(doc, net, &pf->net, err)
                                           : load_fat_tree(doc, net, &pf->ft, err);
}

/* collectives: the library and what its tuning model needs to know of the machine. Absent:
 * the ideal library (link rate, route latencies). */
static int load_collectives(const ts_doc *doc, int root, ts_platform *pf, ts_err *err) {
  ts_ccl_config *c = &pf->ccl;
  *c = (ts_ccl_config){.library = TS_CCL_IDEAL, .channels = 1, .node_link_efficiency = 1};
  int m = ts_doc_get(doc, root, "collectives");
  if (m == 0)
    return 0;
  if (ts_doc_check_map(doc, m, "collectives", ccl_keys, err) != 0)
    return -1;
  int library = 0, arch = 0, cpu = 0;
  long tuning = 0, channels = 0;
  REQUIRE(ts_doc_get_enum(doc, m, "library", ts_ccl_library_names, &library, err), doc, m,
          "collectives", "library", err);
  c->library = (ts_ccl_library)library;
  for (int i = 1; c->library == TS_CCL_IDEAL && ccl_keys[i] != NULL; i++)
    if (ts_doc_get(doc, m, ccl_keys[i]) != 0)
      return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, m, ccl_keys[i])),
                       "key '%s': library ideal has no tuning model and takes only 'library'",
                       ccl_keys[i]);
  if (c->library == TS_CCL_IDEAL)
    return 0;
  /* NCCL's constants are per architecture and per channel; RCCL's per tuning model. */
  static const char *const nccl_only[] = {"arch", "channels", NULL}, *const rccl_only[] = {
                                                                         "tuning_model", NULL};
  const char *const *other = c->library == TS_CCL_NCCL ? rccl_only : nccl_only;
  for (int i = 0; other[i] != NULL; i++)
    if (ts_doc_get(doc, m, other[i]) != 0)
      return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, m, other[i])),
                       "key '%s': only for library %s, found library %s", other[i],
                       c->library == TS_CCL_NCCL ? "rccl" : "nccl", ts_ccl_library_names[library]);
  if (c->library == TS_CCL_NCCL) {
    REQUIRE(ts_doc_get_enum(doc, m, "arch", ts_ccl_arch_names, &arch, err), doc, m, "collectives",
            "arch", err);
    REQUIRE(ts_doc_get_long(doc, m, "channels", 1, 64, &channels, err), doc, m, "collectives",
            "channels", err);
  } else {
    REQUIRE(ts_doc_get_long(doc, m, "tuning_model", 0, 5, &tuning, err), doc, m, "collectives",
            "tuning_model", err);
  }
  REQUIRE(ts_doc_get_enum(doc, m, "cpu", ts_ccl_cpu_names, &cpu, err), doc, m, "collectives", "cpu",
          err);
  REQUIRE(ts_doc_get_double(doc, m, "node_link_efficiency", 0.05, 1, &c->node_link_efficiency, err),
          doc, m, "collectives", "node_link_efficiency", err);
  REQUIRE(ts_doc_get_double(doc, m, "overlap_slowdown", 0, 1, &c->overlap_slowdown, err), doc, m,
          "collectives", "overlap_slowdown", err);
  REQUIRE(ts_doc_get_unit(doc, m, "launch", TS_UNITS_TIME, true, &pf->gpu.collective_launch_s, err),
          doc, m, "collectives", "launch", err);
  REQUIRE(ts_doc_get_unit(doc, m, "fsdp_unit", TS_UNITS_TIME, true, &pf->gpu.fsdp_unit_s, err), doc,
          m, "collectives", "fsdp_unit", err);
  c->arch = (ts_ccl_arch)arch;
  c->tuning_model = (int)tuning;
  c->version = c->library == TS_CCL_NCCL ? TS_NCCL_VERSION : TS_RCCL_VERSION;
  c->cpu = (ts_ccl_cpu)cpu;
  c->channels = channels > 0 ? (int)channels : 1;
  for (int i = 0; i < pf->n_node_links; i++)
    pf->node_links[i].bw_Bps *= c->node_link_efficiency;
  pf->node_switch.bw_Bps *= c->node_link_efficiency;
  return 0;
}

/* reliability: failure rates per part, restart time, checkpoint storage (platform.h). */
static int load_reliability(const ts_doc *doc, int root, ts_platform *pf, ts_err *err) {
  ts_reliability_config *c = &pf->reliability;
  *c = (ts_reliability_config){0};
  int m = ts_doc_get(doc, root, "reliability");
  if (m == 0)
    return 0;
  int rates = 0, storage = 0;
  if (ts_doc_check_map(doc, m, "reliability", reliability_keys, err) != 0 ||
      required_map(doc, m, "reliability", "failure_rates", rate_keys, &rates, err) != 0 ||
      required_map(doc, m, "reliability", "storage", storage_keys, &storage, err) != 0)
    return -1;
  double *rate[] = {&c->gpu_rate, &c->node_rate, &c->link_rate, &c->switch_rate};
  bool any = false;
  for (int i = 0; rate_keys[i] != NULL; i++) {
    int rc = ts_doc_get_unit(doc, rates, rate_keys[i], TS_UNITS_RATE, true, rate[i], err);
    if (rc < 0)
      return -1;
    any = any || *rate[i] > 0;
  }
  if (!any)
    return ts_err_at(err, ts_doc_loc(doc, rates),
                     "'failure_rates': expected a rate above zero for at least one of gpu, node, "
                     "nic_link, switch (the mean time between interruptions divides by their sum)");
  REQUIRE(ts_doc_get_unit(doc, m, "restart", TS_UNITS_SPAN, true, &c->restart_s, err), doc, m,
          "reliability", "restart", err);
  REQUIRE(ts_doc_get_unit(doc, storage, "write_bandwidth", TS_UNITS_BANDWIDTH, false, &c->write_Bps,
                          err),
          doc, storage, "storage", "write_bandwidth", err);
  REQUIRE(
      ts_doc_get_unit(doc, storage, "read_bandwidth", TS_UNITS_BANDWIDTH, false, &c->read_Bps, err),
      doc, storage, "storage", "read_bandwidth", err);
  REQUIRE(
      ts_doc_get_unit(doc, storage, "node_bandwidth", TS_UNITS_BANDWIDTH, false, &c->node_Bps, err),
      doc, storage, "storage", "node_bandwidth", err);
  if (ts_doc_get_unit(doc, storage, "host_bandwidth", TS_UNITS_BANDWIDTH, false, &c->host_Bps,
                      err) < 0)
    return -1;
  c->is_set = true;
  return 0;
}

/* Nodes the network can hold. */
static long network_capacity(const ts_platform *pf) {
  if (pf->topology == TS_TOPO_DRAGONFLY)
    return pf->net.n_groups * pf->net.switches_per_group * pf->net.nodes_per_switch;
  const ts_fat_tree *ft = &pf->ft;
  /* a spine has a port per leaf under it; 3 levels: a core has a port per pod */
  long leaves = ft->levels == 2 ? ft->radix : ft->radix * ft->leaves_per_pod;
  long nics = pf->n_nics > 0 ? pf->n_nics : 1;
  return ft->is_rail_optimized ? leaves / nics * ft->down_ports : leaves * (ft->down_ports / nics);
}

/* A NIC's bandwidth as NCCL's topology sees it from its GPU: the slower of the NIC and its PCIe
 * link (src/graph/paths.cc: a path's bandwidth is its narrowest link's; both keys required). */
static double nic_path_Bps(const ts_nic *nic) {
  return fmin(nic->bw_Bps, nic->pcie_Bps);
}

static int load_doc(const ts_doc *doc, ts_platform *pf, ts_err *err) {
  int root = ts_doc_root(doc);
  if (root == 0)
    return ts_err_at(err, ts_doc_loc(doc, 0),
                     "empty platform file: expected a mapping with "
                     "keys 'name', 'gpu', 'node', 'network', 'nodes'");
  if (ts_doc_check_map(doc, root, "platform", top_keys, err) != 0)
    return -1;
  const char *name = NULL;
  REQUIRE(ts_doc_get_string(doc, root, "name", &name, err), doc, root, "platform", "name", err);
  ts_text_copy(pf->name, sizeof pf->name, name);
  if (load_gpu(doc, root, &pf->gpu, err) != 0 || load_node(doc, root, pf, err) != 0 ||
      load_collectives(doc, root, pf, err) != 0 || load_reliability(doc, root, pf, err) != 0)
    return -1;
  REQUIRE(ts_doc_get_long(doc, root, "nodes", 1, 10000000, &pf->n_nodes, err), doc, root,
          "platform", "nodes", err);
  /* One node needs no network: it is then a one-switch fat tree nobody crosses. */
  if (pf->n_nodes == 1 && ts_doc_get(doc, root, "network") == 0) {
    pf->topology = TS_TOPO_FAT_TREE;
    pf->ft = (ts_fat_tree){.levels = 2,
                           .radix = 2,
                           .oversubscription = 1,
                           .down_ports = 1,
                           .up_ports = 1,
                           .leaves_per_pod = 2};
    pf->ft.link = (ts_link_params){1e9, 0};
  } else if (load_network(doc, root, pf, err) != 0) {
    return -1;
  }
  long capacity = network_capacity(pf);
  if (pf->n_nodes > capacity && pf->topology == TS_TOPO_DRAGONFLY)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, root, "nodes")),
                     "key 'nodes': %ld nodes do not fit the network's %ld groups x %ld switches "
                     "x %ld nodes per switch = %ld",
                     pf->n_nodes, pf->net.n_groups, pf->net.switches_per_group,
                     pf->net.nodes_per_switch, capacity);
  if (pf->n_nodes > capacity)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, root, "nodes")),
                     "key 'nodes': %ld nodes do not fit a %d-level fat tree of radix %ld with %ld "
                     "NICs per node (at most %ld)",
                     pf->n_nodes, pf->ft.levels, pf->ft.radix, (long)pf->n_nics, capacity);
  if (pf->topology == TS_TOPO_FAT_TREE && !pf->ft.is_rail_optimized && pf->n_nics > 0 &&
      pf->ft.down_ports < pf->n_nics)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, root, "network")),
                     "'network': a leaf's %ld down ports cannot take a node's %d NICs",
                     pf->ft.down_ports, pf->n_nics);
  if (pf->n_nodes > 1 && pf->n_nics == 0)
    return ts_err_at(err, ts_doc_loc(doc, ts_doc_get(doc, root, "node")),
                     "'node': a machine of %ld nodes needs at least one NIC per node", pf->n_nodes);
  for (int g = 0; g < pf->gpus_per_node; g++)
    pf->gpu_nic[g] = pf->n_nics > 0 ? ts_platform_nearest_nic(pf, g) : -1;
  /* NCCL reads with P2P on Ampere over NVLink (src/graph/paths.cc, every release since 2.8) */
  pf->gpu.ccl =
      (ts_ccl_site){.is_nccl = pf->ccl.library == TS_CCL_NCCL,
                    .version = pf->ccl.version,
                    .channels = pf->ccl.channels,
                    .gpus_per_node = pf->gpus_per_node,
                    .nics_per_node = pf->n_nics,
                    .nic_Bps = pf->n_nics > 0 ? nic_path_Bps(&pf->nics[pf->gpu_nic[0]]) : 0,
                    .is_p2p_read = pf->ccl.arch == TS_ARCH_AMPERE};
  return 0;
}

static int load(const ts_doc *doc, ts_platform *out, ts_err *err) {
  ts_platform pf;
  memset(&pf, 0, sizeof pf);
  snprintf(pf.source_name, sizeof pf.source_name, "%s", ts_doc_name(doc));
  if (load_doc(doc, &pf, err) != 0)
    return -1;
  *out = pf;
  return 0;
}

int ts_platform_load_file(const char *path, ts_platform *out, ts_err *err) {
  ts_doc *doc = NULL;
  if (ts_doc_load_file(path, &doc, err) != 0)
    return -1;
  int rc = ts_doc_apply_overrides(doc, TS_DOC_PLATFORM, err) != 0 ? -1 : load(doc, out, err);
  ts_doc_free(doc);
  return rc;
}

int ts_platform_load_string(const char *name, const char *text, ts_platform *out, ts_err *err) {
  ts_doc *doc = NULL;
  if (ts_doc_parse(name, text, strlen(text), &doc, err) != 0)
    return -1;
  int rc = ts_doc_apply_overrides(doc, TS_DOC_PLATFORM, err) != 0 ? -1 : load(doc, out, err);
  ts_doc_free(doc);
  return rc;
}

long ts_platform_n_gpus(const ts_platform *pf) {
  return pf->n_nodes * pf->gpus_per_node;
}

long ts_platform_unit_nodes(const ts_platform *pf) {
  if (pf->topology == TS_TOPO_DRAGONFLY)
    return pf->net.switches_per_group * pf->net.nodes_per_switch;
  if (pf->ft.is_rail_optimized)
    return pf->ft.down_ports;
  return pf->ft.down_ports / (pf->n_nics > 0 ? pf->n_nics : 1);
}

long ts_platform_leaf(const ts_platform *pf, long node, int nic) {
  long unit = node / ts_platform_unit_nodes(pf);
  return pf->ft.is_rail_optimized ? unit * pf->n_nics + nic : unit;
}

int ts_platform_node_link(const ts_platform *pf, int a, int b) {
  int lo = a < b ? a : b, hi = a < b ? b : a;
  for (int i = 0; i < pf->n_node_links; i++)
    if (pf->node_links[i].gpu_a == lo && pf->node_links[i].gpu_b == hi)
      return i;
  return -1;
}

void ts_platform_node_paths(const ts_platform *pf, int from, int *hops, int *pred, double *width) {
  int n = pf->gpus_per_node;
  for (int v = 0; v < n; v++) {
    hops[v] = -1;
    pred[v] = -1;
    width[v] = 0;
  }
  hops[from] = 0;
  width[from] = 1e300;
  if (pf->has_node_switch) { /* one hop through the switch to every GPU */
    for (int v = 0; v < n; v++)
      if (v != from) {
        hops[v] = 1;
        pred[v] = from;
        width[v] = pf->node_switch.bw_Bps;
      }
    return;
  }
  for (int level = 0; level < n; level++)
    for (int u = 0; u < n; u++) {
      if (hops[u] != level)
        continue;
      for (int i = 0; i < pf->n_node_links; i++) {
        const ts_node_link *l = &pf->node_links[i];
        int v = l->gpu_a == u ? l->gpu_b : l->gpu_b == u ? l->gpu_a : -1;
        if (v < 0 || (hops[v] >= 0 && hops[v] <= level))
          continue;
        double w = width[u] < l->bw_Bps ? width[u] : l->bw_Bps;
        if (hops[v] < 0 || w > width[v]) { /* u ascends, so ties keep the lowest u */
          hops[v] = level + 1;
          pred[v] = u;
          width[v] = w;
        }
      }
    }
}

int ts_platform_node_hops(const ts_platform *pf, int a, int b) {
  int hops[TS_PLATFORM_MAX_GPUS_PER_NODE], pred[TS_PLATFORM_MAX_GPUS_PER_NODE];
  double width[TS_PLATFORM_MAX_GPUS_PER_NODE];
  ts_platform_node_paths(pf, a, hops, pred, width);
  return hops[b];
}

int ts_platform_nearest_nic(const ts_platform *pf, int gpu) {
  int hops[TS_PLATFORM_MAX_GPUS_PER_NODE], pred[TS_PLATFORM_MAX_GPUS_PER_NODE];
  double width[TS_PLATFORM_MAX_GPUS_PER_NODE];
  ts_platform_node_paths(pf, gpu, hops, pred, width);
  int best = -1;
  for (int i = 0; i < pf->n_nics; i++) {
    int g = pf->nics[i].gpu, b = best < 0 ? -1 : pf->nics[best].gpu;
    if (hops[g] < 0)
      continue;
    /* Then the NIC on the nearest GPU index: GPUs next to each other share a PCIe switch (and
     * its NIC) on the usual boards, and on a switched node this spreads the GPUs over the NICs
     * instead of sending them all through the first. */
    if (best < 0 || hops[g] < hops[b] ||
        (hops[g] == hops[b] &&
         (width[g] > width[b] || (width[g] == width[b] && abs(g - gpu) < abs(b - gpu)))))
      best = i;
  }
  return best;
}
