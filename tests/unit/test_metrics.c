/* metrics and report: definitions on a synthetic result, and result.json as JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../analysis/metrics.h"
#include "../../analysis/report.h"
#include "../../workloads/cost.h"
#include "fixtures.h"
#include "json.h"
#include "spawn.h"

/* 2 stages x 2 TP ranks, 2 s iterations: rank r computes 1.5 s and waits 0.5 s (in TP, PP, DP
 * and bubble). */
static void synthetic(ts_workload *wl, ts_sim_result *sim) {
  *wl = test_workload(4, 1024, 16, 512, 1000, 2, 2, 1, 8, 1);
  memset(sim, 0, sizeof *sim);
  sim->n_ranks = 4;
  sim->iteration_s = 2.0;
  sim->ranks = calloc(4, sizeof *sim->ranks);
  for (int r = 0; r < 4; r++) {
    sim->ranks[r].time_s[TS_CAT_COMPUTE] = 1.5;
    static const ts_category waits[] = {TS_CAT_TP, TS_CAT_PP, TS_CAT_DP, TS_CAT_BUBBLE};
    sim->ranks[r].time_s[waits[r]] = 0.5;
    sim->ranks[r].finish_s = 2.0;
    sim->ranks[r].flops = 1e12 * (r + 1);
  }
}

static void test_definitions(void **state) {
  (void)state;
  ts_workload wl;
  ts_sim_result sim;
  synthetic(&wl, &sim);
  ts_gpu gpu = {.hbm_bytes = 64e9, .power_w = 300};
  gpu.peak_flops_per_s[wl.precision] = 100e12;
  ts_metrics m;
  ts_metrics_compute(&wl, &gpu, &sim, &m);
  assert_rel(m.tokens_per_s, 8.0 * 512 / 2.0, 1e-15);
  assert_rel(m.model_tflops_per_gpu, ts_cost_model_flops(&wl) / 2.0 / 4 / 1e12, 1e-15);
  assert_rel(m.mfu, m.model_tflops_per_gpu * 1e12 / 100e12, 1e-15);
  assert_rel(m.hardware_flops, 10e12, 1e-15);
  assert_rel(m.hfu, 10e12 / 2.0 / 4 / 100e12, 1e-15);
  assert_rel(m.breakdown_s[TS_CAT_COMPUTE], 1.5, 1e-15);
  assert_rel(m.breakdown_s[TS_CAT_TP], 0.125, 1e-15); /* one rank of four */
  /* tp-dp-pp: ranks 0, 1 are stage 0 (TP and PP waits), ranks 2, 3 stage 1 (DP, bubble). */
  assert_rel(m.stage_breakdown_s[0 * TS_CAT_COUNT + TS_CAT_TP], 0.25, 1e-15);
  assert_rel(m.stage_breakdown_s[1 * TS_CAT_COUNT + TS_CAT_BUBBLE], 0.25, 1e-15);
  assert_true(m.is_memory_ok);
  assert_true(m.train_s == 0); /* no train_tokens: no time to train */
  /* the verdict is taken against what the runtime leaves the framework, not the capacity */
  double peak = m.stage_memory[m.peak_memory_stage].total_bytes;
  ts_metrics_fini(&m);
  gpu.runtime_bytes = gpu.hbm_bytes - peak * 0.999;
  ts_metrics_memory(&wl, &gpu, &m);
  assert_false(m.is_memory_ok);
  assert_rel(m.hbm_bytes, 64e9, 1e-15);
  assert_rel(m.usable_bytes, peak * 0.999, 1e-12);
  ts_metrics_fini(&m);
  gpu.runtime_bytes = 0;
  wl.train_tokens = 4096e6; /* 1e6 iterations of 8 x 512 tokens, 2 s each */
  ts_metrics_compute(&wl, &gpu, &sim, &m);
  assert_rel(m.train_s, 2e6, 1e-15);
  assert_rel(m.train_gpu_hours, 2e6 / 3600 * 4, 1e-15);
  assert_rel(m.iteration_energy_j, 4 * 300 * 2.0, 1e-15); /* 4 GPUs x 300 W x 2 s */
  assert_rel(m.train_energy_j, 4 * 300 * 2e6, 1e-15);

  char dir[] = "/tmp/trainsim-metrics-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *arguments[] = {(char *)"/w.yaml", (char *)"--set", (char *)"model.name=\"q\""};
  ts_run_info info = {"plat\"form",
                      "gpu",
                      "aggregate",
                      "contiguous",
                      -1,
                      1,
                      8,
                      2,
                      3,
                      4,
                      16,
                      2,
                      "node play",
                      5,
                      6,
                      7,
                      0.25,
                      1.0625,
                      0.02,
                      "rccl 2.17.1",
                      {9, 10, 11},
                      TS_KERNELS_DERIVED,
                      "kernels/h100.yaml",
                      3,
                      arguments,
                      "0123456789abcdef",
                      "fedcba9876543210",
                      0,
                      0,
                      0,
                      0,
                      0.84,
                      {1.07, 1.15, 1.14, 1.03},
                      false};
  ts_err err = {0};
  assert_int_equal(ts_report_write_json(dir, &wl, &info, &m, &err), 0);
  char path[600];
  snprintf(path, sizeof path, "%s/result.json", dir);
  char *text = read_file(path, NULL);
  json *j = json_parse(text);
  assert_non_null(j);
  assert_string_equal(json_at(j, "platform")->string, "plat\"form");
  assert_string_equal(json_at(j, "inputs.arguments.2")->string, "model.name=\"q\"");
  assert_string_equal(json_at(j, "inputs.files_digest")->string, "0123456789abcdef");
  assert_rel(json_num(j, "metrics.mfu"), m.mfu, 1e-11);
  assert_rel(json_num(j, "stages.1.breakdown_s.bubble"), 0.25, 1e-12);
  assert_int_equal((int)json_num(j, "simulation.routes"), 4);
  assert_int_equal((int)json_num(j, "simulation.played_ranks"), 2);
  assert_int_equal((int)json_num(j, "simulation.merged_events"), 8);
  assert_rel(json_num(j, "simulation.slowest_gpu_slowdown"), 1.0625, 1e-12);
  assert_rel(json_num(j, "simulation.power_limit_clock"), 0.84, 1e-12);
  assert_int_equal((int)json_num(j, "kernel_sources.table"), 9);
  assert_int_equal((int)json_num(j, "kernel_sources.interpolated"), 10);
  assert_int_equal((int)json_num(j, "kernel_sources.model"), 11);
  assert_rel(json_num(j, "metrics.time_to_train_s"), 2e6, 1e-11);
  /* the kernel table's provenance, and the warning it brings */
  assert_string_equal(json_at(j, "kernel_table_provenance")->string, "derived");
  const json *warnings = json_at(j, "warnings");
  assert_non_null(warnings);
  assert_int_equal(warnings->type, JSON_ARRAY);
  assert_true(warnings->n >= 1);
  assert_non_null(strstr(warnings->items[warnings->n - 1]->string,
                         "derived from another GPU's measured table"));
  json_free(j);
  free(text);
  unlink(path);
  rmdir(dir);
  ts_metrics_fini(&m);
  ts_sim_result_fini(&sim);
}

/* The warnings: fewer microbatches per pipeline than stages, with the bubble's share
 * (p - 1) / (v m + p - 1); a measured kernel table brings none; unpriced attention dropout. */
static void test_warnings(void **state) {
  (void)state;
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 4, 1, 2, 1); /* 2 microbatches */
  ts_run_info info = {
      .gpu_model = "gpu", .kernels_path = "k.yaml", .kernels_provenance = TS_KERNELS_MEASURED};
  char w[4][TS_REPORT_WARNING_SIZE];
  assert_int_equal(ts_report_warnings(&wl, &info, w, 4), 1);
  assert_non_null(strstr(w[0], "2 microbatches per pipeline for 4 stages"));
  assert_non_null(strstr(w[0], "about 60% of the iteration")); /* 3 / (2 + 3) */
  wl.global_batch = 4;
  info.kernels_provenance = TS_KERNELS_MODELLED;
  assert_int_equal(ts_report_warnings(&wl, &info, w, 4), 1);
  assert_non_null(strstr(w[0], "modelled from its architecture"));
  /* attention dropout the platform does not price: said, with its rate */
  info.kernels_provenance = TS_KERNELS_MEASURED;
  info.attention_dropout_unpriced = true;
  wl.model.attention_dropout = 0.1;
  assert_int_equal(ts_report_warnings(&wl, &info, w, 4), 1);
  assert_non_null(strstr(w[0], "attention dropout 0.1 inside fused attention is not priced"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_definitions),
                                     cmocka_unit_test(test_warnings)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
