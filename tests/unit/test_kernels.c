/* kernels: loading kernel tables, lookups (grid points, log-space interpolation, misses) and
 * their errors; the cost model pricing a layer from a table. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../workloads/cost.h"
#include "../../workloads/kernels.h"
#include "../../workloads/memory.h"
#include "fixtures.h"

/* Writes text to a new file under /tmp; returns its path (static storage, one at a time). */
static const char *write_table(const char *text) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/trainsim-kernels-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return path;
}

/* gemm_fwd on m in {1, 4}, n in {1, 4}, k = 2: t = m n microseconds (a power law, which log
 * interpolation reproduces exactly); (4, 4) not measured in the second table. */
static const char table_text[] = "format: 1\n"
                                 "device: test\n"
                                 "framework: test\n"
                                 "software: {cpu_layer_forward_us: 120, cpu_layer_backward_us: "
                                 "250, kernels_per_layer_forward: 12, kernels_per_layer_backward: "
                                 "25, cpu_microbatch_us: 1000, cpu_iteration_us: 500}\n"
                                 "tables:\n"
                                 "  gemm_fwd:\n"
                                 "    axes: {m: [1, 4], n: [1, 4], k: [2]}\n"
                                 "    time_us: [1, 4, 4, 16]\n"
                                 "  grad_accum:\n"
                                 "    axes: {elements: [1, 4]}\n"
                                 "    time_us: [3, null]\n";

static void test_lookup(void **state) {
  (void)state;
  const char *path = write_table(table_text);
  const ts_kernel_table *t = NULL, *again = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(path, &t, &err), 0);
  assert_int_equal(ts_kernels_load(path, &again, &err), 0);
  assert_ptr_equal(t, again); /* loaded once per process */
  unlink(path);
  double time_s = -1;
  double exact[3] = {4, 1, 2}, mid[3] = {2, 2, 2}, outside[3] = {8, 1, 2}, between[3] = {2, 4, 2};
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_FWD, exact, &time_s), TS_KERNEL_SRC_TABLE);
  assert_true(fabs(time_s - 4e-6) < 1e-18);
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_FWD, mid, &time_s),
                   TS_KERNEL_SRC_INTERPOLATED);
  assert_true(fabs(time_s - 4e-6) < 1e-15); /* 2 x 2 us */
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_FWD, between, &time_s),
                   TS_KERNEL_SRC_INTERPOLATED);
  assert_true(fabs(time_s - 8e-6) < 1e-15);
  time_s = -1;
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_FWD, outside, &time_s), TS_KERNEL_SRC_MODEL);
  assert_true(time_s == -1); /* untouched */
  /* A table the file does not have, and a cell next to a point not measured. */
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_DGRAD, exact, &time_s), TS_KERNEL_SRC_MODEL);
  double half[1] = {0.5}, one[1] = {1}, two[1] = {2}, four[1] = {4}, eight[1] = {8};
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GRAD_ACCUM, one, &time_s), TS_KERNEL_SRC_TABLE);
  assert_true(fabs(time_s - 3e-6) < 1e-18);
  /* Elements count independent work: past the largest measured size (beside the point not
   * measured, or beyond the axis) the edge's time in proportion; below the grid, the model.
   * GEMM dimensions are not extrapolated (outside, above). */
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GRAD_ACCUM, two, &time_s),
                   TS_KERNEL_SRC_EXTRAPOLATED);
  assert_true(fabs(time_s - 6e-6) < 1e-18);
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GRAD_ACCUM, four, &time_s),
                   TS_KERNEL_SRC_EXTRAPOLATED);
  assert_true(fabs(time_s - 12e-6) < 1e-18);
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GRAD_ACCUM, eight, &time_s),
                   TS_KERNEL_SRC_EXTRAPOLATED);
  assert_true(fabs(time_s - 24e-6) < 1e-18);
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GRAD_ACCUM, half, &time_s), TS_KERNEL_SRC_MODEL);
  assert_int_equal(ts_kernels_time(NULL, TS_KERNEL_GEMM_FWD, exact, &time_s), TS_KERNEL_SRC_MODEL);
  ts_software sw = ts_kernels_software(t);
  assert_true(fabs(sw.cpu_layer_forward_s - 120e-6) < 1e-15);
  assert_int_equal(sw.kernels_per_layer_backward, 25);
  assert_true(fabs(sw.cpu_iteration_s - 500e-6) < 1e-15);
}

/* Each bad table gives one line naming the file, line, column and key. */
static void check_error(const char *text, int line, int col, const char *message) {
  const char *path = write_table(text);
  const ts_kernel_table *t = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(path, &t, &err), -1);
  char expected[512];
  snprintf(expected, sizeof expected, "%s:%d:%d: error: %s", path, line, col, message);
  assert_string_equal(err.msg, expected);
  unlink(path);
}

static void test_errors(void **state) {
  (void)state;
  check_error("format: 1\ntables:\n  gemm_fwd:\n    axes: {m: [1, 4], n: [1], k: [1]}\n"
              "    time_us: [1, 2, 3]\n",
              5, 14,
              "key 'time_us': expected a list of 2 times (the product of the axes' lengths), "
              "found 3");
  check_error("format: 1\ntables:\n  gemm_fwd:\n    axes: {m: [4, 1], n: [1], k: [1]}\n"
              "    time_us: [1, 2]\n",
              4, 19, "key 'm': expected increasing positive numbers, found '1'");
  check_error("format: 1\ntables:\n  gemm_fwd:\n    axes: {m: [1], n: [1], k: [1]}\n"
              "    time_us: [-2]\n",
              5, 15,
              "key 'time_us': expected a time in microseconds (0 to 1e12) or null, found '-2'");
  check_error("format: 1\ntables:\n  gemm_fwdd:\n    axes: {m: [1]}\n    time_us: [1]\n", 3, 3,
              "unknown key 'gemm_fwdd' in 'tables' (did you mean 'gemm_fwd'?)");
  check_error("format: 1\ntables:\n  gelu_fwd:\n    axes: {m: [1]}\n    time_us: [1]\n", 4, 12,
              "unknown key 'm' in 'axes'");
}

/* An H200 (the platform's figures) whose kernels come from the table at path. */
static ts_gpu h200_with(const char *path) {
  ts_gpu g = {.peak_flops_per_s = {989.4e12, 989.4e12, 66.9e12, 66.9e12},
              .peak_fp8_flops_per_s = 1978.9e12,
              .hbm_bytes = 141e9,
              .hbm_Bps = 4.2e12,
              .gemm_ceiling = 0.765,
              .gemm_tile_m = 128,
              .gemm_tile_n = 256,
              .n_compute_units = 132,
              .kernel_launch_s = 2e-6};
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(path, &g.kernels, &err), 0);
  return g;
}

/* h200_with a table written for the test, then removed. */
static ts_gpu h200_with_table(const char *path) {
  ts_gpu g = h200_with(path);
  unlink(path);
  return g;
}

/* An optimizer table whose wider row was not measured (the H100's adam_fused stops at hidden
 * 2,048): a model of hidden 2,560 is priced from the table as the same parameters in layers of
 * half the width, not by the roofline. Each operation's time here is c x layers x hidden^2, which
 * the lookup (log-linear) interpolates exactly. */
static void test_optimizer_missing_width(void **state) {
  (void)state;
  static const char *const ops[] = {"clip_grad_norm", "adam_fused", "master_copy",
                                    "zero_main_grad"};
  static const double c[] = {1e-6, 7e-6, 1.5e-6, 1e-6}; /* us per layer and hidden^2 */
  static char text[8192];
  int len = snprintf(text, sizeof text, "format: 1\ntables:\n");
  for (int i = 0; i < 4; i++) {
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "  %s:\n    axes: {hidden: [1024, 2048, 4096], layers: [8, 16, 32]}\n"
                    "    time_us: [",
                    ops[i]);
    for (int h = 1024; h <= 2048; h *= 2)
      for (int l = 8; l <= 32; l *= 2)
        len += snprintf(text + len, sizeof text - (size_t)len, "%.6g, ", c[i] * l * h * h);
    len += snprintf(text + len, sizeof text - (size_t)len, "null, null, null]\n");
  }
  const char *path = write_table(text);
  ts_gpu g = h200_with_table(path);
  ts_workload wl = test_workload(2, 2560, 20, 2048, 50257, 1, 1, 1, 1, 1);
  double h = 2560, n_params = 16 * (12 * h * h + 13 * h);
  ts_cost opt = ts_cost_optimizer(&wl, &g, n_params);
  assert_int_equal(opt.n_kernels, 4);
  assert_int_equal(opt.n_by_source[TS_KERNEL_SRC_INTERPOLATED], 4);
  double layers_at_1280 = n_params / (12 * 1280.0 * 1280 + 13 * 1280), expected = 0;
  for (int i = 0; i < 4; i++)
    expected += c[i] * layers_at_1280 * 1280 * 1280 * 1e-6;
  assert_true(fabs(opt.time_s / expected - 1) < 1e-6); /* the table's times have 6 digits */
}

/* An H200 whose table has only add_fwd, its time 1 ns an element (6 bytes in bf16). */
static ts_gpu h200_linear_add(void) {
  static ts_gpu g; /* loaded once: a process keeps a bounded number of tables */
  static bool loaded;
  if (!loaded)
    g = h200_with_table(write_table("format: 1\ntables:\n  add_fwd:\n"
                                    "    axes: {elements: [1000, 1000000000]}\n"
                                    "    time_us: [1, 1000000]\n"));
  loaded = true;
  return g;
}

/* training.autocast's casts and adds are priced from add_fwd at the elements moving as many
 * bytes; the gradient's cast back (bf16 -> fp32) at the measured 0.65 of that rate. add_fwd's
 * time here is proportional to its elements, so each kernel's time is its bytes' share. */
static void test_autocast_from_add(void **state) {
  (void)state;
  ts_gpu g = h200_linear_add();
  ts_workload wl = test_workload(2, 1024, 16, 2048, 50257, 1, 1, 1, 1, 1);
  wl.is_autocast = true;
  wl.fusions &= ~(1u << TS_FUSE_GRADIENT_ACCUMULATION);
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &g, &log);
  double weights = 1024.0 * 4096, us_per_elem = 1e-3; /* add_fwd: 6 bytes an element */
  int seen = 0;
  for (int i = 0; i < log.n; i++) {
    const ts_kernel_row *r = &log.rows[i];
    if (strcmp(r->piece, "fc1") != 0 || r->bytes < weights)
      continue; /* the weight's kernels, not the bias's */
    double like = 0;
    if (strcmp(r->kernel, "autocast_weight_cast") == 0)
      like = (weights + 4096) * 6 / 6.0;
    else if (strcmp(r->kernel, "autocast_grad_cast") == 0)
      like = weights * 6 / 6.0 / 0.65;
    else if (strcmp(r->kernel, "autocast_grad_add") == 0)
      like = weights * 12 / 6.0;
    else
      continue;
    assert_true(fabs(r->time_s / (like * us_per_elem * 1e-6) - 1) < 1e-9);
    seen++;
  }
  assert_int_equal(seen, 3);
  free(log.rows);
}

/* flash-attn's fused layer norm streams its bytes at the rates measured for it against the add
 * (workloads/cost.c: 0.72 forward, 0.84 backward): 13 and 17 bytes a value in bf16 with dropout,
 * priced from add_fwd at the elements moving as many bytes over that rate. */
static void test_fused_layer_norm_rates(void **state) {
  (void)state;
  ts_gpu g = h200_linear_add();
  ts_workload wl = test_workload(2, 1024, 16, 2048, 50304, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = 1u << TS_FUSE_DROPOUT_ADD_LAYER_NORM;
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &g, &log);
  double values = 2048.0 * 1024, us_per_elem = 1e-3; /* add_fwd: 6 bytes an element */
  int seen = 0;
  for (int i = 0; i < log.n; i++) {
    const ts_kernel_row *r = &log.rows[i];
    bool bwd = strcmp(r->kernel, "dropout_add_layer_norm_bwd") == 0;
    if (!bwd && strcmp(r->kernel, "dropout_add_layer_norm") != 0)
      continue;
    double like = values * (bwd ? 17.0 : 13.0) / 6.0 / (bwd ? 0.84 : 0.72);
    assert_true(fabs(r->time_s / (like * us_per_elem * 1e-6) - 1) < 1e-9);
    seen++;
  }
  assert_int_equal(seen, 2);
  free(log.rows);
}

/* Attention without flash: a head dimension off 16 bytes (86 in bf16, FORGE-S's) prices its
 * batched GEMMs at cuBLAS's measured slowdowns (workloads/cost.c: H200, 86 against 88), listed
 * as misaligned, on a table measured on an NVIDIA GPU; 88 is aligned and takes the table's time,
 * and so does 86 on another vendor's. The table's time does not depend on the head dimension
 * here, so the ratio is the slowdown alone. */
static void test_misaligned_head_dim(void **state) {
  (void)state;
  const double slow_qk = 1692.256 / 592.384, slow_av = 818.528 / 456.352;
  for (int nvidia = 0; nvidia <= 1; nvidia++) {
    char text[512];
    snprintf(text, sizeof text,
             "format: 1\ndevice: %s\ntables:\n"
             "  bgemm_qk:\n"
             "    axes: {batch: [24], seq: [2048], head_dim: [64, 128]}\n"
             "    time_us: [100, 100]\n"
             "  bgemm_av:\n"
             "    axes: {batch: [24], seq: [2048], head_dim: [64, 128]}\n"
             "    time_us: [50, 50]\n",
             nvidia ? "NVIDIA H200" : "AMD Instinct MI250X GCD");
    ts_gpu g = h200_with_table(write_table(text));
    for (long d = 86; d <= 88; d += 2) {
      ts_workload wl = test_workload(2, 24 * d, 24, 2048, 50304, 1, 1, 1, 1, 1);
      wl.flash_attention = false;
      bool slow = nvidia && d == 86;
      ts_kernel_log log = {0};
      ts_cost_layer_kernels(&wl, &g, &log);
      int qk = 0, av = 0;
      for (int i = 0; i < log.n; i++) {
        const ts_kernel_row *r = &log.rows[i];
        if (strncmp(r->kernel, "bgemm_qk", 8) == 0) {
          assert_string_equal(r->kernel, slow ? "bgemm_qk misaligned" : "bgemm_qk");
          assert_rel(r->time_s, 100e-6 * (slow ? slow_qk : 1), 1e-9);
          qk++;
        } else if (strncmp(r->kernel, "bgemm_av", 8) == 0) {
          assert_string_equal(r->kernel, slow ? "bgemm_av misaligned" : "bgemm_av");
          assert_rel(r->time_s, 50e-6 * (slow ? slow_av : 1), 1e-9);
          av++;
        }
      }
      assert_int_equal(qk, 2); /* Q K^T, and dQ or dK's product of its shape */
      assert_int_equal(av, 2);
      free(log.rows);
    }
  }
}

/* The output layer of plain PyTorch at GPT-2's vocabulary: no padding (50,257; shards of
 * ceil(vocab / tp)), so its GEMMs' logits rows are off 16 bytes and run at the fallback's
 * measured rates (workloads/cost.c, H100: 99.9, 145.15 and 151.28 TFLOP/s of 989.4) on a table
 * measured on an NVIDIA GPU; on another vendor's, at a vocabulary a multiple of 8, and under
 * Megatron's padding (50,304) they take the table's time (1 us everywhere here). The
 * difference from the other vendor's table is the fallback's time less the table's. */
/* A kernel's power class as the cost model files it (workloads/power.h), by its listed name. */
static ts_power_class listed_class(const char *kernel) {
  if (strncmp(kernel, "gemm", 4) == 0 || strncmp(kernel, "bgemm", 5) == 0)
    return TS_POWER_GEMM;
  if (strncmp(kernel, "sdpa", 4) == 0)
    return TS_POWER_SDPA;
  if (strncmp(kernel, "flash", 5) == 0)
    return TS_POWER_FLASH;
  return TS_POWER_OTHER;
}

/* The power limit over a layer (plain PyTorch, cuDNN's attention, 8,192 tokens, the H200's
 * measured table): every kernel is its table time, brought to the boost clock where it is a
 * dense GEMM point, times its class's stretch at the one clock the layer's mix meets the limit
 * at; a limit the mix never reaches leaves the boost clock. */
static void test_power_limit(void **state) {
  (void)state;
  ts_gpu g = h200_with(TS_SOURCE_DIR "/platforms/kernels/h200.yaml");
  ts_workload wl = test_workload(2, 2048, 16, 8192, 50304, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
  wl.attention = TS_ATTENTION_SDPA;
  ts_kernel_log cool = {0};
  ts_cost_layer_kernels(&wl, &g, &cool);
  double x = -1, stretch[TS_POWER_CLASS_COUNT];
  assert_false(ts_cost_power_limit(&wl, &g, &x, stretch));
  for (int binding = 0; binding <= 1; binding++) {
    g.power_limit = (ts_power_model){binding ? 690 : 5000,
                                     123,
                                     1.665,
                                     {1070, 822, 650, 514},
                                     {0.368, 0.819, 0.778, 0.156},
                                     {2, {150e-6, 3e-3}, {1.01, 1.14}},
                                     {0}};
    assert_true(ts_cost_power_limit(&wl, &g, &x, stretch));
    assert_true(binding ? x > 0.05 : x == 0);
    ts_kernel_log hot = {0};
    ts_cost_layer_kernels(&wl, &g, &hot);
    assert_int_equal(hot.n, cool.n);
    int sdpa = 0;
    for (int i = 0; i < cool.n; i++) {
      const ts_kernel_row *c = &cool.rows[i], *h = &hot.rows[i];
      ts_power_class k = listed_class(c->kernel);
      bool point = strncmp(c->kernel, "gemm", 4) == 0 && c->source != TS_KERNEL_SRC_MODEL;
      double boost =
          c->time_s / (point ? ts_power_table_ratio(&g.power_limit.gemm_table, c->time_s) : 1);
      assert_true(!point || boost <= c->time_s / 1.01 * (1 + 1e-12));
      assert_rel(h->time_s, boost * stretch[k], 1e-9);
      sdpa += k == TS_POWER_SDPA;
    }
    assert_int_equal(sdpa, 2);
    /* The clock is the one at which the window's mean power is the limit: a microbatch's layers
     * (forward, backward), the embedding and output layer, and the optimizer over the
     * iteration's microbatch (one), each kernel back at its boost-clock time, host gaps idle. */
    ts_layer_cost l;
    ts_edge_cost e;
    ts_cost_layer(&wl, &g, &l);
    ts_cost_edges(&wl, &g, &e);
    ts_cost opt = ts_cost_optimizer(&wl, &g, ts_cost_stage_params(&wl, 0));
    const ts_cost *per_layer[] = {&l.ln1,      &l.attn,    &l.bda1,    &l.ln2,
                                  &l.mlp,      &l.bda2,    &l.ln1_bwd, &l.attn_bwd,
                                  &l.bda1_bwd, &l.ln2_bwd, &l.mlp_bwd, &l.bda2_bwd};
    const ts_cost *once[] = {&e.embed_fwd, &e.embed_bwd, &e.head_fwd, &e.head_bwd};
    double t = 0, energy = 0;
    for (int i = 0; i < 12 + 4 + 1; i++) {
      const ts_cost *c = i < 12 ? per_layer[i] : i < 16 ? once[i - 12] : &opt;
      double n = i < 12 ? 2 : 1, kernels_s = 0; /* 2 layers */
      for (int k = 0; k < TS_POWER_CLASS_COUNT; k++) {
        /* at the limit's clock: the layers and edges are priced there; the optimizer, left at
         * its table's times, is in the window at them */
        double tk = c->class_s[k] * (c == &opt ? stretch[k] : 1);
        kernels_s += c->class_s[k];
        t += n * tk;
        energy += n * tk * (123 + (g.power_limit.boost_w[k] - 123) * pow(1 + x, -1.665));
      }
      t += n * (c->time_s - kernels_s);
      energy += n * (c->time_s - kernels_s) * 123;
    }
    if (binding)
      assert_rel(energy / t, 690, 1e-6);
    free(hot.rows);
  }
  free(cool.rows);
}

static void test_misaligned_vocab(void **state) {
  (void)state;
  ts_workload wl = test_workload(2, 1024, 16, 1024, 50257, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
  assert_int_equal(ts_workload_padded_vocab(&wl), 50257);
  wl.tp = 2;
  assert_int_equal(ts_workload_padded_vocab(&wl), 50258);
  wl.framework = TS_FRAMEWORK_MEGATRON;
  assert_int_equal(ts_workload_padded_vocab(&wl), 50432); /* 128 x 2 */
  wl.tp = 1;
  ts_edge_cost edges[2][3]; /* [nvidia][pytorch 50257, pytorch 50264, megatron 50257] */
  ts_gpu gpus[2];
  for (int nvidia = 0; nvidia <= 1; nvidia++) {
    char text[1024];
    int len = snprintf(text, sizeof text, "format: 1\ndevice: %s\ntables:\n",
                       nvidia ? "NVIDIA H100 80GB HBM3" : "AMD Instinct MI250X GCD");
    for (int pass = 0; pass < 3; pass++)
      len += snprintf(text + len, sizeof text - (size_t)len,
                      "  %s:\n    axes: {m: [512, 65536], n: [512, 65536], k: [512, 65536]}\n"
                      "    time_us: [1, 1, 1, 1, 1, 1, 1, 1]\n",
                      (const char *[]){"gemm_fwd", "gemm_dgrad", "gemm_wgrad"}[pass]);
    gpus[nvidia] = h200_with_table(write_table(text));
    for (int c = 0; c < 3; c++) {
      wl.framework = c < 2 ? TS_FRAMEWORK_PYTORCH : TS_FRAMEWORK_MEGATRON;
      wl.fusions = ts_framework_default_fusions(wl.framework);
      wl.model.vocab = c == 1 ? 50264 : 50257;
      ts_cost_edges(&wl, &gpus[nvidia], &edges[nvidia][c]);
    }
  }
  double flops = 2.0 * 1024 * 1024 * 50257, peak = 989.4e12;
  double fwd = flops / (99.9 / 989.4 * peak) - 1e-6;
  double bwd = flops / (145.15 / 989.4 * peak) + flops / (151.28 / 989.4 * peak) - 2e-6;
  assert_rel(edges[1][0].head_fwd.time_s - edges[0][0].head_fwd.time_s, fwd, 1e-9);
  assert_rel(edges[1][0].head_bwd.time_s - edges[0][0].head_bwd.time_s, bwd, 1e-9);
  for (int c = 1; c < 3; c++) {
    assert_rel(edges[1][c].head_fwd.time_s, edges[0][c].head_fwd.time_s, 1e-12);
    assert_rel(edges[1][c].head_bwd.time_s, edges[0][c].head_bwd.time_s, 1e-12);
  }
  /* fp16, at bf16's peak, is priced from the same table and takes the same fallback */
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = ts_framework_default_fusions(wl.framework);
  wl.precision = TS_PREC_FP16;
  for (int nvidia = 0; nvidia <= 1; nvidia++)
    for (int c = 0; c < 2; c++) {
      wl.model.vocab = c == 1 ? 50264 : 50257;
      ts_edge_cost fp16;
      ts_cost_edges(&wl, &gpus[nvidia], &fp16);
      assert_rel(fp16.head_fwd.time_s, edges[nvidia][c].head_fwd.time_s, 1e-12);
      assert_rel(fp16.head_bwd.time_s, edges[nvidia][c].head_bwd.time_s, 1e-12);
    }
  assert_ptr_equal(ts_gpu_kernels_for(&gpus[1], TS_PREC_FP16), gpus[1].kernels);
  gpus[1].peak_flops_per_s[TS_PREC_FP16] *= 2; /* fp16 faster than bf16: not the same kernels */
  assert_null(ts_gpu_kernels_for(&gpus[1], TS_PREC_FP16));
  assert_null(ts_gpu_kernels_for(&gpus[1], TS_PREC_FP32));
}

/* An H200 whose table has only a forward GEMM: every other kernel priced by its bytes, and no
 * host measurement (the launch time stands for the host's per-kernel time). */
static ts_gpu h200_gemm_only(void) {
  /* loaded once: a process keeps a bounded number of tables (kernels.c, MAX_TABLES) */
  static ts_gpu g;
  static bool loaded;
  if (!loaded)
    g = h200_with_table(write_table("format: 1\ndevice: NVIDIA H200\ntables:\n"
                                    "  gemm_fwd:\n    axes: {m: [512, 65536], n: [512, 65536], "
                                    "k: [512, 65536]}\n    time_us: [1, 1, 1, 1, 1, 1, 1, 1]\n"));
  loaded = true;
  return g;
}

/* flash-attn's fused cross-entropy (fused_kernels: cross_entropy) on plain PyTorch: its bf16
 * logits read forward (2 B a logit), read and their gradient written backward (4), against
 * F.cross_entropy's fp32 passes (2 + 16 forward, 20 + 2 backward); a GPU whose table has no
 * cross-entropy rows prices both by their bytes, so the heads differ by exactly those bytes. */
static void test_fused_cross_entropy_cost(void **state) {
  (void)state;
  ts_workload wl = test_workload(2, 1024, 16, 1024, 50368, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
  ts_gpu g = h200_gemm_only();
  ts_edge_cost plain, fused;
  ts_cost_edges(&wl, &g, &plain);
  wl.fusions |= 1u << TS_FUSE_CROSS_ENTROPY;
  ts_cost_edges(&wl, &g, &fused);
  double logits = 1024.0 * 50368;
  assert_rel(plain.head_fwd.time_s - fused.head_fwd.time_s, 16 * logits / g.hbm_Bps, 1e-9);
  assert_rel(plain.head_bwd.time_s - fused.head_bwd.time_s, (22 - 4) * logits / g.hbm_Bps, 1e-9);
}

/* flash-attn's fused_dropout_add_ln (fused_kernels: dropout_add_layer_norm): each norm is one
 * kernel moving 2 + 4 bytes in and 2 + 4 + 1 out a value (bf16 branch and output, fp32 residual,
 * the mask), its backward 2 + 4 + 4 + 1 in and 2 + 4 out; the dropouts and residual adds run
 * inside it, no kernels of their own. fused_dense_gelu_dense (dense_gelu_dense): no GeLU kernels,
 * the pre-activation written by FC1's epilogue (2 bytes a value of the intermediate) and read
 * by FC2's data gradient's (2) in their place. On a GPU whose table prices only forward GEMMs,
 * every other kernel by its bytes. */
static void test_flash_attn_layer_kernels(void **state) {
  (void)state;
  ts_workload wl = test_workload(2, 1024, 16, 1024, 50368, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
  ts_gpu g = h200_gemm_only();
  ts_layer_cost plain, fused;
  ts_cost_layer(&wl, &g, &plain);
  wl.fusions |= 1u << TS_FUSE_DROPOUT_ADD_LAYER_NORM | 1u << TS_FUSE_DENSE_GELU_DENSE;
  ts_cost_layer(&wl, &g, &fused);
  double values = 1024.0 * 1024, inter = 4 * values;
  assert_rel(fused.ln1.bytes, 13 * values, 1e-12);
  assert_rel(fused.ln2.bytes, 13 * values, 1e-12);
  assert_int_equal(fused.ln1.n_kernels, 1);
  assert_int_equal(fused.bda1.n_kernels + fused.bda2.n_kernels, 0);
  assert_int_equal(fused.bda1_bwd.n_kernels + fused.bda2_bwd.n_kernels, 0);
  assert_true(fused.bda1.time_s == 0 && fused.bda2_bwd.time_s == 0);
  /* the backward kernel and the weight gradients' accumulations, as the plain norm's */
  double plain_weights = plain.ln1_bwd.bytes - 4 * 2 * values;
  assert_rel(fused.ln1_bwd.bytes, 17 * values + plain_weights, 1e-12);
  assert_int_equal(fused.ln1_bwd.n_kernels, plain.ln1_bwd.n_kernels);
  assert_int_equal(fused.mlp.n_kernels, plain.mlp.n_kernels - 1);
  assert_int_equal(fused.mlp_bwd.n_kernels, plain.mlp_bwd.n_kernels - 1);
  assert_rel(plain.mlp.bytes - fused.mlp.bytes, (4 - 2) * inter, 1e-12);
  assert_rel(plain.mlp_bwd.bytes - fused.mlp_bwd.bytes, (6 - 2) * inter, 1e-12);
  assert_true(fused.mlp.time_s < plain.mlp.time_s && fused.mlp_bwd.time_s < plain.mlp_bwd.time_s);
}

/* Attention without flash under autocast (ts_workload_softmax_fp32): the softmax in fp32, as
 * ATen runs softmax(dtype=float). bf16 scores: a widening cast (2 + 4 bytes a score), the fp32
 * softmax (8) and the cast back down (6), against bf16's softmax (4); backward the gradient cast
 * up (6), the fp32 backward (12) and the cast down (6), against 6. fp16 scores: one kernel
 * writing fp32 (6) and the cast down (6); backward the cast up (6) and one kernel writing fp16
 * (10). Priced by those bytes on a GPU whose table has no softmax or add; memory keeps the fp32
 * probabilities and their bf16 copy (6 bytes a score against the fused softmax's 2, no
 * dropout). */
static void test_autocast_softmax_fp32(void **state) {
  (void)state;
  ts_gpu g = h200_gemm_only();
  for (int half = 0; half <= 1; half++) {
    ts_workload wl = test_workload(2, 1024, 16, 1024, 50368, 1, 1, 1, 1, 1);
    wl.framework = TS_FRAMEWORK_PYTORCH;
    wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
    wl.flash_attention = false;
    wl.model.attention_dropout = 0;
    wl.precision = half ? TS_PREC_FP16 : TS_PREC_BF16;
    ts_layer_cost plain, autocast;
    ts_cost_layer(&wl, &g, &plain);
    wl.is_autocast = true;
    assert_true(ts_workload_softmax_fp32(&wl));
    ts_cost_layer(&wl, &g, &autocast);
    double scores = 16.0 * 1024 * 1024;
    assert_rel(autocast.attn_core_fwd.bytes - plain.attn_core_fwd.bytes,
               (half ? 12.0 - 4 : 20.0 - 4) * scores, 1e-12);
    assert_rel(autocast.attn_core_bwd.bytes - plain.attn_core_bwd.bytes,
               (half ? 16.0 - 6 : 24.0 - 6) * scores, 1e-12);
    double kept = ts_memory_layer_activations(&wl);
    wl.fusions |= 1u << TS_FUSE_MASKED_SOFTMAX; /* Megatron's fused kernel: outside autocast */
    assert_false(ts_workload_softmax_fp32(&wl));
    assert_rel(kept - ts_memory_layer_activations(&wl), (6.0 - 2) * scores, 1e-12);
  }
}

/* Two layers of 1,024 wide, 16 heads, sequence 1,024, in bf16, as plain PyTorch runs them. */
static ts_workload plain_pytorch_workload(void) {
  ts_workload wl = test_workload(2, 1024, 16, 1024, 50368, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
  return wl;
}

/* Hugging Face's GPT-2 eager code (stack.gelu eager_tanh, stack.score_divisions): gelu_new as
 * 8 kernels forward (18 eb an element) and 11 backward (28 eb) in place of F.gelu's one each
 * (2 and 3 eb), keeping three more tensors of the MLP's width (in fp32 from pow on under
 * autocast: below); each division of the scores one kernel each way reading and writing them
 * (2 eb a score). */
static void test_hf_eager_gelu_and_score_divisions(void **state) {
  (void)state;
  ts_gpu g = h200_gemm_only();
  ts_workload wl = plain_pytorch_workload();
  wl.attention = TS_ATTENTION_UNFUSED;
  wl.flash_attention = false;
  ts_layer_cost plain, hf;
  ts_cost_layer(&wl, &g, &plain);
  double kept = ts_memory_layer_activations(&wl);
  wl.gelu_impl = TS_GELU_EAGER_TANH;
  wl.score_divisions = 2;
  ts_cost_layer(&wl, &g, &hf);
  double n = 1024.0 * (double)wl.model.ffn_hidden, scores = 16.0 * 1024 * 1024;
  assert_rel(hf.mlp.bytes - plain.mlp.bytes, (18.0 - 2) * 2 * n, 1e-12);
  assert_rel(hf.mlp_bwd.bytes - plain.mlp_bwd.bytes, (28.0 - 3) * 2 * n, 1e-12);
  assert_int_equal(hf.mlp.n_kernels - plain.mlp.n_kernels, 8 - 1);
  assert_int_equal(hf.mlp_bwd.n_kernels - plain.mlp_bwd.n_kernels, 11 - 1);
  assert_true(hf.mlp.time_s - plain.mlp.time_s >= 16.0 * 2 * n / g.hbm_Bps);
  assert_rel(hf.attn_core_fwd.bytes - plain.attn_core_fwd.bytes, 2 * 2 * 2 * scores, 1e-12);
  assert_rel(hf.attn_core_bwd.bytes - plain.attn_core_bwd.bytes, 2 * 2 * 2 * scores, 1e-12);
  assert_int_equal(hf.attn_core_fwd.n_kernels - plain.attn_core_fwd.n_kernels, 2);
  assert_rel(ts_memory_layer_activations(&wl) - kept, 6.0 * n, 1e-12);
  /* under autocast pow runs in fp32 and the chain with it: 76 bytes an element forward in 10
   * kernels, 118 backward in 15, 12 bytes more kept (cost.c, activation) */
  wl.is_autocast = true;
  ts_layer_cost ac_plain, ac_hf;
  ts_cost_layer(&wl, &g, &ac_hf);
  kept = ts_memory_layer_activations(&wl);
  wl.gelu_impl = TS_GELU_FUNCTIONAL;
  ts_cost_layer(&wl, &g, &ac_plain);
  assert_rel(ac_hf.mlp.bytes - ac_plain.mlp.bytes, (76.0 - 4) * n, 1e-12);
  assert_rel(ac_hf.mlp_bwd.bytes - ac_plain.mlp_bwd.bytes, (118.0 - 6) * n, 1e-12);
  assert_int_equal(ac_hf.mlp.n_kernels - ac_plain.mlp.n_kernels, 10 - 1);
  assert_int_equal(ac_hf.mlp_bwd.n_kernels - ac_plain.mlp_bwd.n_kernels, 15 - 1);
  assert_rel(kept - ts_memory_layer_activations(&wl), 12.0 * n, 1e-12);
  wl.is_autocast = false;
  wl.gelu_impl = TS_GELU_EAGER_TANH;
  wl.is_compiled = true; /* Inductor fuses gelu_new into one kernel: priced as F.gelu's */
  wl.score_divisions = 0;
  ts_cost_layer(&wl, &g, &hf);
  assert_rel(hf.mlp.bytes, plain.mlp.bytes, 1e-12);
}

/* A plain PyTorch GPT's eager attention (ts_workload_eager_heads; cost.c, eager_head_copies),
 * 2 eb a value a copy. stack.eager_attention matmul: the merged heads forward, q's and v's
 * gradients and the split's concatenation of all three backward; past one sequence a
 * microbatch torch.matmul's folds of q, k (transposed) and v forward and of the output's
 * gradient backward. baddbmm: the merge forward, unbind's stacking of the three gradients and
 * baddbmm's alpha on q's and k's backward; the folds alike past one sequence. Each copy at its
 * measured fraction of the HBM bandwidth (0.40; the transposed k 0.16, the concatenation 0.31,
 * the stack 0.28). Rotary models, compile and other frameworks copy none. stack.causal_mask
 * where: one kernel each way, 2 eb a score at 0.51 of the add's rate. */
static void test_eager_head_copies_and_where(void **state) {
  (void)state;
  ts_gpu g = h200_linear_add();
  for (int code = 0; code < 2; code++)
    for (long mb = 1; mb <= 2; mb++) {
      bool matmul = code == TS_EAGER_ATTENTION_MATMUL;
      ts_workload wl = test_workload(2, 1024, 16, 1024, 50304, 1, 1, 1, mb, mb);
      wl.framework = TS_FRAMEWORK_PYTORCH;
      wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
      wl.attention = TS_ATTENTION_UNFUSED;
      wl.flash_attention = false;
      wl.causal_mask = TS_CAUSAL_MASK_WHERE;
      wl.eager_attention = (ts_eager_attention)code;
      assert_true(ts_workload_eager_heads(&wl));
      ts_kernel_log log = {0};
      ts_cost_layer_kernels(&wl, &g, &log);
      double values = 1024.0 * 1024 * (double)mb, scores = 16.0 * values, copied = 0;
      int copies = 0, wheres = 0, alphas = 0;
      for (int i = 0; i < log.n; i++) {
        const ts_kernel_row *r = &log.rows[i];
        if (strncmp(r->kernel, "heads_", 6) == 0 || strncmp(r->kernel, "qkv_", 4) == 0) {
          copies += r->count;
          copied += r->count * r->bytes;
          double fraction = strstr(r->kernel, "transpose") ? 0.16
                            : strstr(r->kernel, "cat")     ? 0.31
                            : strstr(r->kernel, "stack")   ? 0.28
                                                           : 0.40;
          assert_rel(r->time_s, g.kernel_launch_s + r->bytes / fraction / g.hbm_Bps, 1e-9);
        } else if (strcmp(r->kernel, "baddbmm_alpha_grad") == 0) {
          alphas += r->count;
          assert_rel(r->bytes, 4 * values, 1e-12);
        } else if (strncmp(r->kernel, "causal_mask_where", 17) == 0) {
          wheres++;
          assert_rel(r->bytes, 4 * scores, 1e-12);
          assert_rel(r->time_s, scores * 4 / 6.0 / 0.51 * 1e-9, 1e-9); /* add_fwd: 1 ns a value */
        } else {
          assert_null(strstr(r->kernel, "attention_mask")); /* where replaces masked_fill */
        }
      }
      free(log.rows);
      assert_int_equal(wheres, 2);
      assert_int_equal(alphas, matmul ? 0 : 2);
      assert_int_equal(copies, (matmul ? 4 : 2) + (mb > 1 ? 4 : 0));
      assert_rel(copied, 2 * 2 * values * ((matmul ? 6 : 4) + (mb > 1 ? 4 : 0)), 1e-12);
      wl.model.rope = true;
      assert_false(ts_workload_eager_heads(&wl));
      wl.model.rope = false;
      wl.is_compiled = true;
      assert_false(ts_workload_eager_heads(&wl));
      wl.is_compiled = false;
      wl.framework = TS_FRAMEWORK_MEGATRON;
      assert_false(ts_workload_eager_heads(&wl));
    }
}

/* A table whose add is 100x faster per element at 10^6 elements than from 10^8 on (the L2-hot
 * points of a measured table), with fp32 softmax rows at one point; loaded once. */
static ts_gpu h200_l2_hot_add(void) {
  static ts_gpu g;
  static bool loaded;
  if (!loaded)
    g = h200_with_table(
        write_table("format: 1\ntables:\n  add_fwd:\n"
                    "    axes: {elements: [1000, 1000000, 100000000, 1000000000]}\n"
                    "    time_us: [1, 10, 100000, 1000000]\n"
                    "  softmax_fp32_fwd:\n"
                    "    axes: {rows: [16384], cols: [1024]}\n    time_us: [100]\n"));
  loaded = true;
  return g;
}

/* An element-wise kernel streamed against the add is priced no faster than the add's rate per
 * element at 2^28 elements (cost.c, ADD_PAST_L2_ELEMS): the table's small points, timed with
 * their operands in L2, would price it faster than the step runs it. Here the add takes 1 ns an
 * element from 10^8 elements on, and 10 us at 10^6 (100x faster): torch.where's 21.9M
 * add-equivalent elements over 16.8M scores take 21.9 ms, not the 4.8 ms the small points give. */
static void test_streamed_past_l2(void **state) {
  (void)state;
  ts_gpu g = h200_l2_hot_add();
  ts_workload wl = plain_pytorch_workload();
  wl.attention = TS_ATTENTION_UNFUSED;
  wl.flash_attention = false;
  wl.causal_mask = TS_CAUSAL_MASK_WHERE;
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &g, &log);
  double scores = 16.0 * 1024 * 1024, like = scores * 4 / (6 * 0.51);
  int seen = 0;
  for (int i = 0; i < log.n; i++)
    if (strcmp(log.rows[i].kernel, "causal_mask_where") == 0) {
      assert_rel(log.rows[i].time_s, like * 1e-9, 1e-9);
      seen++;
    }
  free(log.rows);
  assert_int_equal(seen, 1);
}

/* Under autocast bf16 scores' softmax runs in fp32 (8 bytes a score forward): priced from the
 * table's softmax_fp32_fwd rows at (batch x heads x seq, seq) where the table has them, else as
 * the bf16 softmax of as many bytes (softmax_fwd; the roofline where the table lacks that too). */
static void test_softmax_fp32_rows(void **state) {
  (void)state;
  ts_gpu tables[] = {h200_l2_hot_add(), h200_linear_add()};
  for (int i = 0; i < 2; i++) {
    ts_workload wl = plain_pytorch_workload();
    wl.attention = TS_ATTENTION_UNFUSED;
    wl.flash_attention = false;
    wl.is_autocast = true;
    ts_kernel_log log = {0};
    ts_cost_layer_kernels(&wl, &tables[i], &log);
    int seen = 0;
    for (int r = 0; r < log.n; r++) {
      const ts_kernel_row *k = &log.rows[r];
      if (strcmp(k->kernel, i == 0 ? "softmax_fp32_fwd" : "softmax_fwd") == 0) {
        assert_rel(k->bytes, 8.0 * 16 * 1024 * 1024, 1e-12);
        if (i == 0)
          assert_rel(k->time_s, 100e-6, 1e-9);
        seen++;
      }
    }
    free(log.rows);
    assert_int_equal(seen, 1);
  }
}

/* Under autocast a plain PyTorch model's LayerNorm writes fp32 and its residual stream is fp32
 * (ts_workload_residual_fp32): each norm reads and writes 4 bytes a value and the next linear
 * casts its input down (4 + 2: 10 bytes a value more than bf16's 2 + 2); each residual add reads
 * 2 + 4 and writes 4 (4 more than 3 x 2); backward the residual's gradients add in fp32 (12, not
 * 6) and the branch's is cast down (6); each norm keeps its fp32 input (2 bytes more). */
static void test_autocast_residual_fp32(void **state) {
  (void)state;
  ts_gpu g = h200_gemm_only();
  ts_workload wl = plain_pytorch_workload();
  assert_false(ts_workload_residual_fp32(&wl));
  ts_layer_cost plain, fp32;
  ts_cost_layer(&wl, &g, &plain);
  double kept = ts_memory_layer_activations(&wl);
  wl.is_autocast = true;
  assert_true(ts_workload_residual_fp32(&wl));
  ts_cost_layer(&wl, &g, &fp32);
  double shard = 1024.0 * 1024;
  assert_rel(fp32.ln1.bytes - plain.ln1.bytes, 10 * shard, 1e-12);
  assert_rel(fp32.bda1.bytes - plain.bda1.bytes, 4 * shard, 1e-12);
  assert_rel(fp32.bda1_bwd.bytes - plain.bda1_bwd.bytes, 12 * shard, 1e-12);
  assert_rel(ts_memory_layer_activations(&wl) - kept, 4 * shard + 2 * ts_cost_layer_params(&wl),
             1e-12);
  wl.model.rms_norm = true; /* F.rms_norm of the fp32 residual with an fp32 weight is fp32 too */
  assert_true(ts_workload_residual_fp32(&wl));
  wl.rms_norm_impl = TS_RMS_NORM_EAGER_FP32; /* priced as its own fp32 operations */
  assert_false(ts_workload_residual_fp32(&wl));
  wl.rms_norm_impl = TS_RMS_NORM_FUNCTIONAL;
  wl.model.rms_norm = false;
  wl.fusions |= 1u << TS_FUSE_DROPOUT_ADD_LAYER_NORM; /* its own fp32 residual */
  assert_false(ts_workload_residual_fp32(&wl));
}

/* A host-bound layer: the measured layer's CPU time per kernel for as many kernels as it issued
 * (12 forward, 25 backward), each kernel past those one eager operation's time scaled for autograd
 * (cost.c, layer_host_s: forward 10.18 / 6.42, backward 13.23 / 6.42 of eager_op_us). */
static void test_host_extra_kernels(void **state) {
  (void)state;
  static const char text[] = "format: 1\ndevice: NVIDIA test\nsoftware: {eager_op_us: 10, "
                             "cpu_layer_forward_us: 120, cpu_layer_backward_us: 250, "
                             "kernels_per_layer_forward: 12, kernels_per_layer_backward: 25, "
                             "cpu_microbatch_us: 1000, cpu_iteration_us: 500}\ntables:\n"
                             "  gemm_fwd:\n    axes: {m: [1, 4], n: [1, 4], k: [2]}\n"
                             "    time_us: [1, 4, 4, 16]\n";
  ts_kernel_table *t = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_parse_string("host", text, &t, &err), 0);
  ts_gpu g = h200_gemm_only();
  g.kernels = t;
  g.software = ts_kernels_software(t);
  ts_workload wl = test_workload(2, 64, 4, 16, 512, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_PYTORCH);
  wl.attention = TS_ATTENTION_UNFUSED;
  wl.flash_attention = false;
  ts_layer_cost l;
  ts_cost_layer(&wl, &g, &l);
  const ts_cost *f[] = {&l.ln1, &l.attn, &l.bda1, &l.ln2, &l.mlp, &l.bda2};
  const ts_cost *b[] = {&l.ln1_bwd, &l.attn_bwd, &l.bda1_bwd, &l.ln2_bwd, &l.mlp_bwd, &l.bda2_bwd};
  double tf = 0, tb = 0;
  int nf = 0, nb = 0;
  for (int i = 0; i < 6; i++) {
    tf += f[i]->time_s;
    nf += f[i]->n_kernels;
    tb += b[i]->time_s;
    nb += b[i]->n_kernels;
  }
  assert_true(nf > 12 && nb > 25);
  assert_rel(tf, 120e-6 + (nf - 12) * 10e-6 * 10.18 / 6.42, 1e-9);
  assert_rel(tb, 250e-6 + (nb - 25) * 10e-6 * 13.23 / 6.42, 1e-9);
  ts_kernels_free(t);
}

/* flash-attn's unpad_input and pad_input (stack.unpad_input) on a GPU without a host measurement:
 * forward, three gathers (2 B a value read and written, bf16) of Q, K and V, five small kernels
 * each, the output's zero fill and index_put (3 moves), and the host's idle time issuing six
 * kernels an unpad at the launch time; backward, three zero-filled scatters (3 moves) and the
 * output gradient's gather (2). */
static void test_unpad_input_cost(void **state) {
  (void)state;
  ts_workload wl = test_workload(2, 1024, 8, 2048, 50368, 1, 1, 1, 2, 2);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.attention = TS_ATTENTION_FLASH2;
  wl.model.n_query_groups = 2;
  ts_gpu g = h200_gemm_only();
  ts_layer_cost plain, unpad;
  ts_cost_layer(&wl, &g, &plain);
  wl.is_unpad_input = true;
  ts_cost_layer(&wl, &g, &unpad);
  double tokens = 2.0 * 2048, q = tokens * 1024, kv = tokens * 256, bw = g.hbm_Bps,
         launch = g.kernel_launch_s;
  double fwd = 2 * 2 * (q + 2 * kv) / bw + 3 * 2 * q / bw + (3 + 15 + 1) * launch + 18 * launch;
  double bwd = 3 * 2 * (q + 2 * kv) / bw + 2 * 2 * q / bw + 4 * launch;
  assert_rel(unpad.attn.time_s - plain.attn.time_s, fwd, 1e-9);
  assert_rel(unpad.attn_bwd.time_s - plain.attn_bwd.time_s, bwd, 1e-9);
  assert_int_equal(unpad.attn.n_kernels - plain.attn.n_kernels, 3 + 15 + 1);
}

/* torchtitan's op policy re-runs wk, wo and w3 of its layer's seven GEMMs (with the norms, the
 * rotary embedding, repeat_kv, the first residual add and SwiGLU, which move bytes only), and
 * a plain PyTorch model's full recomputation stops at FC2's input: its MLP re-runs FC1 and the
 * activation, not FC2; with hidden dropout after FC2 (a mask to keep), FC2 runs too. */
static void test_op_and_early_stop_recompute(void **state) {
  (void)state;
  ts_workload wl = test_workload(2, 1024, 8, 2048, 50368, 1, 1, 1, 2, 2);
  titan_llama(&wl, 2, 2816);
  wl.recompute = TS_RECOMPUTE_OP;
  ts_gpu g = h200_gemm_only();
  ts_layer_cost c;
  ts_cost_layer(&wl, &g, &c);
  double tokens = 2.0 * 2048;
  assert_rel(c.op_recompute_fwd.flops, 2 * tokens * 1024 * (256 + 1024 + 2816), 1e-12);
  assert_rel(c.mlp_recompute_fwd.flops, 2 * tokens * 1024 * 2 * 2816, 1e-12);
  assert_true(ts_workload_recompute_stops_early(&wl));
  wl.model.hidden_dropout = 0.1;
  assert_false(ts_workload_recompute_stops_early(&wl));
  wl.model.hidden_dropout = 0;
  wl.framework = TS_FRAMEWORK_MEGATRON; /* its reentrant checkpoint re-runs the whole layer */
  assert_false(ts_workload_recompute_stops_early(&wl));
}

/* Squared ReLU (Nemotron's MLP) on a GPU without its kernels in the table: relu and pow
 * forward, 2 bf16 bytes an element each; backward, pow's derivative as a copy, a scalar
 * product and a product, then relu's (2 + 2 + 3 + 3); and rotary_percent 0.5 turns half of
 * each head: the rope's bytes halve. */
static void test_squared_relu_and_partial_rope(void **state) {
  (void)state;
  ts_workload wl = test_workload(2, 1024, 8, 2048, 50368, 1, 1, 1, 2, 2);
  wl.model.squared_relu = true;
  wl.model.bias = false;
  ts_gpu g = h200_gemm_only();
  ts_layer_cost c;
  ts_cost_layer(&wl, &g, &c);
  double n = 2.0 * 2048 * 4096, bw = g.hbm_Bps, launch = g.kernel_launch_s;
  wl.model.squared_relu = false;
  ts_layer_cost gelu;
  ts_cost_layer(&wl, &g, &gelu);
  /* GeLU (no bias: no bias add) is priced by the roofline too: 2 eb forward, 3 eb backward
   * (bytes: 8 against 4 forward, 20 against 6 backward) */
  assert_rel(c.mlp.time_s - gelu.mlp.time_s, (8 - 4) * n / bw + launch, 1e-9);
  assert_rel(c.mlp_bwd.time_s - gelu.mlp_bwd.time_s, (20 - 6) * n / bw + 3 * launch, 1e-9);
  wl.model.rope = true;
  wl.fusions |= 1u << TS_FUSE_ROPE;
  ts_cost_layer(&wl, &g, &c);
  double full = c.rope_fwd.bytes;
  wl.model.rotary_percent = 0.5;
  ts_cost_layer(&wl, &g, &c);
  assert_rel(c.rope_fwd.bytes, full / 2, 1e-12);
}

/* A layer priced from a table: the forward QKV GEMM takes the table's time; the projection's
 * (n 1024, below the grid's 3072) the table's edge scaled by the model's shape dependence; a
 * GEMM beyond the grid keeps the model's; and the counts by source add up to the kernels. */
static void test_layer_from_table(void **state) {
  (void)state;
  static char text[4096];
  /* QKV of h 1024, tokens 2048 (micro-batch 1 x seq 2048): m 2048, n 3072, k 1024. */
  snprintf(text, sizeof text,
           "format: 1\ntables:\n  gemm_fwd:\n    axes: {m: [2048], n: [3072], k: [1024]}\n"
           "    time_us: [77]\n");
  const char *path = write_table(text);
  ts_gpu g = h200_with_table(path);
  ts_workload wl = test_workload(2, 1024, 16, 2048, 50257, 1, 1, 1, 1, 1);
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &g, &log);
  bool seen = false;
  for (int i = 0; i < log.n; i++) {
    const ts_kernel_row *r = &log.rows[i];
    if (strcmp(r->piece, "qkv") == 0 && strcmp(r->kernel, "gemm_fwd") == 0) {
      seen = true;
      assert_int_equal(r->source, TS_KERNEL_SRC_TABLE);
      assert_true(fabs(r->time_s - 77e-6) < 1e-15);
    } else if (strcmp(r->piece, "proj") == 0 && strcmp(r->kernel, "gemm_fwd") == 0) {
      assert_int_equal(r->source, TS_KERNEL_SRC_EXTRAPOLATED);
      double ratio = ts_cost_gemm(&g, 989.4e12, 1, 2048, 1024, 1024, 2).time_s /
                     ts_cost_gemm(&g, 989.4e12, 1, 2048, 3072, 1024, 2).time_s;
      assert_true(fabs(r->time_s - 77e-6 * ratio) < 1e-15);
      assert_true(r->time_s < 77e-6);
    } else {
      assert_int_equal(r->source, TS_KERNEL_SRC_MODEL);
    }
  }
  assert_true(seen);
  free(log.rows);
  long by_source[TS_KERNEL_SRC_COUNT];
  ts_cost_kernel_sources(&wl, &g, by_source);
  assert_int_equal(by_source[TS_KERNEL_SRC_TABLE], 1);
  assert_int_equal(by_source[TS_KERNEL_SRC_INTERPOLATED], 0);
  assert_int_equal(by_source[TS_KERNEL_SRC_EXTRAPOLATED], 1);
  /* fp32 training does not use the (bf16) table. */
  wl.precision = TS_PREC_FP32;
  ts_cost_kernel_sources(&wl, &g, by_source);
  assert_int_equal(by_source[TS_KERNEL_SRC_TABLE], 0);
}

/* FP8 recipes (training.fp8_recipe) on FC1 (m 2048 tokens, n 4096, k 1024): delayed and
 * tensorwise scaling price the GEMMs from the per-tensor tables, blockwise from the block tables
 * (its input gradient from the forward's, listed in the backward pass); tensorwise's casts read
 * the tensor once more for its amax, blockwise's write a 4-byte scale per 128 values; only
 * delayed scaling updates an amax history. */
static void test_fp8_recipes(void **state) {
  (void)state;
  const char *path = write_table(
      "format: 1\ntables:\n"
      "  gemm_fp8_fwd:\n    axes: {m: [2048], n: [4096], k: [1024]}\n    time_us: [10]\n"
      "  gemm_fp8_block_fwd:\n    axes: {m: [2048], n: [1024, 4096], k: [1024, 4096]}\n"
      "    time_us: [5, 13, 12, 40]\n"
      "  gemm_fp8_block_wgrad:\n    axes: {m: [1024], n: [4096], k: [2048]}\n"
      "    time_us: [14]\n");
  ts_gpu g = h200_with_table(path);
  ts_workload wl = test_workload(2, 1024, 16, 2048, 50257, 1, 1, 1, 1, 1);
  wl.fp8 = TS_FP8_E4M3;
  double cast_bytes[] = {4, 6, 2 + 2 * (1 + 4.0 / 128)};
  for (int recipe = TS_FP8_RECIPE_DELAYED; recipe <= TS_FP8_RECIPE_BLOCKWISE; recipe++) {
    wl.fp8_recipe = (ts_fp8_recipe)recipe;
    bool block = recipe == TS_FP8_RECIPE_BLOCKWISE;
    ts_kernel_log log = {0};
    ts_cost_layer_kernels(&wl, &g, &log);
    int gemms = 0, casts = 0, scale_updates = 0;
    for (int i = 0; i < log.n; i++) {
      const ts_kernel_row *r = &log.rows[i];
      scale_updates += strncmp(r->kernel, "fp8_scale_update", 16) == 0;
      if (strcmp(r->piece, "fc1") != 0)
        continue;
      if (strcmp(r->kernel, "fp8_cast_transpose") == 0) {
        assert_rel(r->bytes, cast_bytes[recipe] * 2048 * 1024, 1e-12);
        casts++;
      }
      if (strncmp(r->kernel, "gemm_fp8", 8) != 0)
        continue;
      gemms++;
      assert_true((strstr(r->kernel, "block") != NULL) == block);
      if (strcmp(r->kernel, "gemm_fp8_fwd") == 0 && r->shape[1] == 4096) {
        assert_int_equal(r->source, TS_KERNEL_SRC_TABLE);
        assert_true(fabs(r->time_s - 10e-6) < 1e-15);
      }
      if (strcmp(r->kernel, "gemm_fp8_block_fwd") == 0) {
        bool dgrad = r->shape[1] == 1024; /* (m, k, n): the input gradient */
        assert_int_equal(r->source, TS_KERNEL_SRC_TABLE);
        assert_true(fabs(r->time_s - (dgrad ? 13e-6 : 12e-6)) < 1e-15);
        assert_true(r->is_other_pass == dgrad);
      }
      if (strcmp(r->kernel, "gemm_fp8_block_wgrad") == 0) {
        assert_int_equal(r->source, TS_KERNEL_SRC_TABLE);
        assert_true(fabs(r->time_s - 14e-6) < 1e-15);
      }
    }
    assert_int_equal(gemms, 3);
    assert_int_equal(casts, 1);
    assert_true((scale_updates > 0) == (recipe == TS_FP8_RECIPE_DELAYED));
    free(log.rows);
  }
  /* Under a power model the FP8 table's points are first brought to the boost clock by
   * fp8_gemm_table, as the dense GEMMs' by gemm_table (a limit that never binds: only that) */
  g.power_limit = (ts_power_model){5000,
                                   123,
                                   1.665,
                                   {1070, 822, 650, 514},
                                   {0.368, 0.819, 0.778, 0.156},
                                   {0},
                                   {1, {1e-6}, {1.25}}};
  wl.fp8_recipe = TS_FP8_RECIPE_DELAYED;
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &g, &log);
  int seen = 0;
  for (int i = 0; i < log.n; i++) {
    const ts_kernel_row *r = &log.rows[i];
    if (strcmp(r->piece, "fc1") == 0 && strcmp(r->kernel, "gemm_fp8_fwd") == 0 &&
        r->shape[1] == 4096) {
      assert_rel(r->time_s, 10e-6 / 1.25, 1e-12);
      seen++;
    }
  }
  free(log.rows);
  assert_int_equal(seen, 1);
}

/* torchao's float8 linears (stack.fp8_linear torchao): every cast an amax pass and a cast (5
 * bytes a bf16 element), the weight's at every microbatch where Transformer Engine's is cached
 * for the iteration (1 / m of its cast-transpose's 6 bytes); the backward casts the output
 * gradient to both layouts (6 bytes) and the input and weight again; w3 shares w1's input and
 * so its casts. */
static void test_torchao_float8_casts(void **state) {
  (void)state;
  ts_gpu g = h200_with_table(
      write_table("format: 1\ntables:\n  gemm_fp8_fwd:\n    axes: {m: [2048], n: [4096], k: "
                  "[1024]}\n    time_us: [10]\n"));
  ts_workload wl = test_workload(2, 1024, 16, 2048, 50257, 1, 1, 1, 4, 1);
  wl.model.swiglu = true;
  wl.model.ffn_hidden = 4096;
  wl.gate_up = TS_GATE_UP_SEPARATE;
  wl.fp8 = TS_FP8_HYBRID;
  wl.fp8_recipe = TS_FP8_RECIPE_TENSORWISE;
  double M = 2048, K = 1024, N = 4096;
  for (int lib = TS_FP8_LINEAR_TE; lib <= TS_FP8_LINEAR_TORCHAO; lib++) {
    wl.fp8_linear = (ts_fp8_linear)lib;
    bool torchao = lib == TS_FP8_LINEAR_TORCHAO;
    ts_kernel_log log = {0};
    ts_cost_layer_kernels(&wl, &g, &log);
    int seen = 0;
    for (int i = 0; i < log.n; i++) {
      const ts_kernel_row *r = &log.rows[i];
      bool fc1 = strcmp(r->piece, "fc1") == 0, up = strcmp(r->piece, "fc1 (up)") == 0;
      if (!fc1 && !up)
        continue;
      if (strcmp(r->kernel, "fp8_cast_weight") == 0) {
        assert_rel(r->bytes, torchao ? 5 * K * N : 6 * K * N / 4, 1e-12);
        seen++;
      }
      if (strncmp(r->kernel, "fp8_cast_input", 14) == 0) {
        assert_true(torchao && fc1);
        assert_rel(r->bytes, 5 * M * K, 1e-12);
        seen++;
      }
      if (strcmp(r->kernel, "fp8_cast_grad_output") == 0) {
        assert_rel(r->bytes, 6 * M * N, 1e-12);
        seen++;
      }
    }
    /* two weights each; torchao: w1's input cast forward and backward, both grad outputs */
    assert_int_equal(seen, torchao ? 6 : 2);
    free(log.rows);
  }
}

/* Multi-head latent attention (queries and keys of 128 + 64, values of 128): FlashAttention-2
 * cannot take unequal head widths, so under any fused attention the core is priced from the
 * cuDNN tables of DeepSeek's shape; attention without flash keeps its batched GEMMs. */
static void test_mla_core_from_table(void **state) {
  (void)state;
  const char *path = write_table(
      "format: 1\ntables:\n"
      "  sdpa_mla_fwd_causal:\n    axes: {batch_heads: [16], seq: [2048]}\n    time_us: [300]\n"
      "  sdpa_mla_bwd_causal:\n    axes: {batch_heads: [16], seq: [2048]}\n    time_us: [900]\n");
  ts_gpu g = h200_with_table(path);
  ts_workload wl = test_workload(2, 2048, 16, 2048, 50257, 1, 1, 1, 1, 1);
  wl.model.mla = true;
  wl.model.q_lora_rank = 512;
  wl.model.kv_lora_rank = 256;
  wl.model.qk_head_dim = 128;
  wl.model.qk_pos_emb_head_dim = 64;
  wl.model.v_head_dim = 128;
  ts_attention kinds[] = {TS_ATTENTION_FLASH2, TS_ATTENTION_SDPA};
  for (int i = 0; i < 2; i++) {
    wl.attention = kinds[i];
    ts_layer_cost c;
    ts_cost_layer(&wl, &g, &c);
    assert_true(fabs(c.attn_core_fwd.time_s - 300e-6) < 1e-12);
    assert_true(fabs(c.attn_core_bwd.time_s - 900e-6) < 1e-12);
  }
}

/* A grouped GEMM's table has four axes (experts, tokens per expert, n, k): between two expert
 * counts the time interpolates in log space (a time proportional to the experts stays so), and
 * past the largest it grows in proportion (the GPU is full). */
static void test_grouped_gemm_axes(void **state) {
  (void)state;
  const char *path =
      write_table("format: 1\ntables:\n  grouped_mm_fwd:\n"
                  "    axes: {experts: [4, 16], tokens: [256], n: [1024], k: [2048]}\n"
                  "    time_us: [100, 400]\n");
  const ts_kernel_table *t = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(path, &t, &err), 0);
  unlink(path);
  double s = 0;
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GROUPED_MM_FWD, (double[]){8, 256, 1024, 2048}, &s),
                   TS_KERNEL_SRC_INTERPOLATED);
  assert_true(fabs(s - 200e-6) < 1e-12);
  assert_int_equal(
      ts_kernels_time(t, TS_KERNEL_GROUPED_MM_FWD, (double[]){64, 256, 1024, 2048}, &s),
      TS_KERNEL_SRC_EXTRAPOLATED);
  assert_true(fabs(s - 1600e-6) < 1e-12);
  /* another n is off the grid: the model prices it */
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GROUPED_MM_FWD, (double[]){8, 256, 2048, 2048}, &s),
                   TS_KERNEL_SRC_MODEL);
}

/* A dense GEMM past its grid's top (16,384 and more) in one or more dimensions: the edge's time
 * scaled by each (the weight gradient's reduction over 65,536 tokens: 2 x the edge); below
 * that size the grid's edge is not a full GPU, so the model prices it. */
static void test_gemm_past_grid(void **state) {
  (void)state;
  const char *path =
      write_table("format: 1\ndevice: test\nframework: test\ntables:\n"
                  "  gemm_wgrad:\n"
                  "    axes: {m: [1024, 2048], n: [1024, 16384], k: [16384, 32768]}\n"
                  "    time_us: [10, 20, 100, 200, 20, 40, 200, 400]\n"
                  "  gemm_fwd:\n"
                  "    axes: {m: [1024, 4096], n: [1024], k: [1024]}\n"
                  "    time_us: [5, 20]\n");
  const ts_kernel_table *t = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(path, &t, &err), 0);
  unlink(path);
  double time_s = -1;
  double tokens[3] = {1024, 1024, 65536}, both[3] = {2048, 32768, 131072};
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_WGRAD, tokens, &time_s),
                   TS_KERNEL_SRC_EXTRAPOLATED);
  assert_true(fabs(time_s - 40e-6) < 1e-15);
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_WGRAD, both, &time_s),
                   TS_KERNEL_SRC_EXTRAPOLATED);
  assert_true(fabs(time_s - 400e-6 * 2 * 4) < 1e-15);
  double small_edge[3] = {8192, 1024, 1024};
  time_s = -1;
  assert_int_equal(ts_kernels_time(t, TS_KERNEL_GEMM_FWD, small_edge, &time_s),
                   TS_KERNEL_SRC_MODEL);
  assert_true(time_s == -1);
}

/* Attention's batch x heads are independent problems: past the H200 table's 256 (a micro-batch
 * of 32 with 16 heads), the edge's time in proportion, for the flash and the SDPA tables. */
static void test_attention_past_batch_heads(void **state) {
  (void)state;
  const ts_kernel_table *t = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(TS_SOURCE_DIR "/platforms/kernels/h200.yaml", &t, &err), 0);
  ts_kernel_kind kinds[] = {TS_KERNEL_FLASH_FWD_CAUSAL, TS_KERNEL_SDPA_BWD_CAUSAL};
  for (int i = 0; i < 2; i++) {
    double edge[3] = {256, 2048, 64}, past[3] = {512, 2048, 64}, edge_s = 0, past_s = 0;
    assert_int_equal(ts_kernels_time(t, kinds[i], edge, &edge_s), TS_KERNEL_SRC_TABLE);
    assert_int_equal(ts_kernels_time(t, kinds[i], past, &past_s), TS_KERNEL_SRC_EXTRAPOLATED);
    assert_true(fabs(past_s - 2 * edge_s) < 1e-12 * edge_s);
  }
}

/* Past the longest measured sequence (32,768 on the H200) attention's work grows with the
 * sequence's square at the edge's rate, also where batch x heads are past the measured ones. */
static void test_attention_past_seq(void **state) {
  (void)state;
  const ts_kernel_table *t = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(TS_SOURCE_DIR "/platforms/kernels/h200.yaml", &t, &err), 0);
  ts_kernel_kind kinds[] = {TS_KERNEL_FLASH_FWD_CAUSAL, TS_KERNEL_FLASH_BWD,
                            TS_KERNEL_SDPA_BWD_CAUSAL};
  for (int i = 0; i < 3; i++) {
    double edge[3] = {32, 32768, 128}, past[3] = {32, 65536, 128}, both[3] = {512, 98304, 128};
    double edge_s = 0, past_s = 0, both_s = 0, wide_s = 0;
    assert_int_equal(ts_kernels_time(t, kinds[i], edge, &edge_s), TS_KERNEL_SRC_TABLE);
    assert_int_equal(ts_kernels_time(t, kinds[i], past, &past_s), TS_KERNEL_SRC_EXTRAPOLATED);
    assert_true(fabs(past_s - 4 * edge_s) < 1e-12 * edge_s);
    /* 512 x 32,768 was not measured: the first axis' extrapolation prices it */
    assert_int_equal(ts_kernels_time(t, kinds[i], (double[]){512, 32768, 128}, &wide_s),
                     TS_KERNEL_SRC_EXTRAPOLATED);
    assert_int_equal(ts_kernels_time(t, kinds[i], both, &both_s), TS_KERNEL_SRC_EXTRAPOLATED);
    assert_true(fabs(both_s - 9 * wide_s) < 1e-12 * both_s);
  }
}

/* Off the measured head dimensions (64 to 128 on the H200): past the widest, its time in
 * proportion; below the narrowest, its time. */
static void test_attention_off_head_dims(void **state) {
  (void)state;
  const ts_kernel_table *t = NULL;
  ts_err err = {0};
  assert_int_equal(ts_kernels_load(TS_SOURCE_DIR "/platforms/kernels/h200.yaml", &t, &err), 0);
  ts_kernel_kind kinds[] = {TS_KERNEL_FLASH_FWD_CAUSAL, TS_KERNEL_FLASH_BWD,
                            TS_KERNEL_SDPA_BWD_CAUSAL, TS_KERNEL_BGEMM_QK};
  for (int i = 0; i < 4; i++) {
    double d64 = 0, d128 = 0, d32 = 0, d256 = 0;
    assert_int_equal(ts_kernels_time(t, kinds[i], (double[]){16, 2048, 64}, &d64),
                     TS_KERNEL_SRC_TABLE);
    assert_int_equal(ts_kernels_time(t, kinds[i], (double[]){16, 2048, 128}, &d128),
                     TS_KERNEL_SRC_TABLE);
    assert_int_equal(ts_kernels_time(t, kinds[i], (double[]){16, 2048, 32}, &d32),
                     TS_KERNEL_SRC_EXTRAPOLATED);
    assert_int_equal(ts_kernels_time(t, kinds[i], (double[]){16, 2048, 256}, &d256),
                     TS_KERNEL_SRC_EXTRAPOLATED);
    assert_true(fabs(d32 - d64) < 1e-12 * d64);
    assert_true(fabs(d256 - 2 * d128) < 1e-12 * d256);
  }
}

/* stack.attention flash1: the flash tables' time at FlashAttention-1's published speed against
 * FlashAttention-2's on the GPU's figure (the H100's for an H200): causal, head dimension 128,
 * 2,048 tokens, 265 / 108 TFLOPS, forward and backward alike; past 16,384 tokens the 16,384
 * ratio. A head of 96 runs FlashAttention-1's 128-wide kernel: the time of a head of 128 (the
 * flash-2 table's at 128, at 128's ratio). A GPU without a figure cannot price it. */
static void test_flash1_published_ratio(void **state) {
  (void)state;
  ts_gpu g = h200_with(TS_SOURCE_DIR "/platforms/kernels/h200.yaml");
  snprintf(g.model, sizeof g.model, "NVIDIA H200");
  assert_true(ts_cost_flash1_priced(&g));
  struct {
    long hidden, heads, seq, kernel_hidden; /* kernel_hidden: the flash-2 run it is priced as */
    double ratio;
  } cases[] = {{2048, 16, 2048, 2048, 265.0 / 108},
               {1536, 16, 2048, 2048, 265.0 / 108},
               {2048, 16, 65536, 2048, 328.0 / 137}};
  for (int i = 0; i < 3; i++) {
    ts_workload wl = test_workload(2, cases[i].kernel_hidden, cases[i].heads, cases[i].seq, 50257,
                                   1, 1, 1, 1, 1);
    ts_layer_cost fa2, fa1;
    wl.attention = TS_ATTENTION_FLASH2;
    ts_cost_layer(&wl, &g, &fa2);
    wl = test_workload(2, cases[i].hidden, cases[i].heads, cases[i].seq, 50257, 1, 1, 1, 1, 1);
    wl.attention = TS_ATTENTION_FLASH1;
    ts_cost_layer(&wl, &g, &fa1);
    assert_rel(fa1.attn_core_fwd.time_s, cases[i].ratio * fa2.attn_core_fwd.time_s, 1e-9);
    assert_rel(fa1.attn_core_bwd.time_s, cases[i].ratio * fa2.attn_core_bwd.time_s, 1e-9);
  }
  snprintf(g.model, sizeof g.model, "AMD Instinct MI250X GCD");
  assert_false(ts_cost_flash1_priced(&g));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookup),
      cmocka_unit_test(test_gemm_past_grid),
      cmocka_unit_test(test_attention_past_batch_heads),
      cmocka_unit_test(test_attention_past_seq),
      cmocka_unit_test(test_attention_off_head_dims),
      cmocka_unit_test(test_flash1_published_ratio),
      cmocka_unit_test(test_grouped_gemm_axes),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_layer_from_table),
      cmocka_unit_test(test_optimizer_missing_width),
      cmocka_unit_test(test_autocast_from_add),
      cmocka_unit_test(test_misaligned_head_dim),
      cmocka_unit_test(test_misaligned_vocab),
      cmocka_unit_test(test_fused_cross_entropy_cost),
      cmocka_unit_test(test_flash_attn_layer_kernels),
      cmocka_unit_test(test_autocast_softmax_fp32),
      cmocka_unit_test(test_fused_layer_norm_rates),
      cmocka_unit_test(test_unpad_input_cost),
      cmocka_unit_test(test_op_and_early_stop_recompute),
      cmocka_unit_test(test_squared_relu_and_partial_rope),
      cmocka_unit_test(test_hf_eager_gelu_and_score_divisions),
      cmocka_unit_test(test_eager_head_copies_and_where),
      cmocka_unit_test(test_streamed_past_l2),
      cmocka_unit_test(test_softmax_fp32_rows),
      cmocka_unit_test(test_autocast_residual_fp32),
      cmocka_unit_test(test_host_extra_kernels),
      cmocka_unit_test(test_power_limit),
      cmocka_unit_test(test_fp8_recipes),
      cmocka_unit_test(test_torchao_float8_casts),
      cmocka_unit_test(test_mla_core_from_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
