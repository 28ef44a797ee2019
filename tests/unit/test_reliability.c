/* reliability: Daly's interval against his paper's figures, the closed-form goodput against a
 * seeded discrete-event run, and a job's parts, checkpoint and goodput on Frontier. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../sim/network/placement.h"
#include "../../workloads/cost.h"
#include "../../workloads/reliability.h"
#include "fixtures.h"

/* Daly (FGCS 2006), figure captions: checkpoint 5 min, restart 10 min; the optimum interval is
 * "117 min" at an MTBF of 24 h, "57 min" at 6 h and "9.1 min" at 15 min. */
static void test_daly_interval(void **state) {
  (void)state;
  assert_rel(ts_reliability_daly_interval_s(300, 86400), 117 * 60.0, 0.005);
  assert_rel(ts_reliability_daly_interval_s(300, 21600), 57 * 60.0, 0.006);
  assert_rel(ts_reliability_daly_interval_s(300, 900), 9.1 * 60, 0.006);
  /* Young's sqrt(2 delta M) when the checkpoint is short against the MTBF */
  assert_rel(ts_reliability_daly_interval_s(1, 1e8), sqrt(2e8), 1e-3);
  /* past delta >= 2M Daly checkpoints every M */
  assert_true(ts_reliability_daly_interval_s(1000, 400) == 400);
}

/* The closed form's goodput is the mean of seeded discrete-event runs, within their 99.9%
 * confidence interval; the interval is narrow enough (under 1.5% of the goodput) that a
 * wrong formula (such as the first-order one, 1 - delta/tau - (tau/2 + R)/M) is caught. */
static void test_goodput_against_sampled_runs(void **state) {
  (void)state;
  const struct {
    double tau, delta, restart, mtbf;
  } cases[] = {{3600, 300, 600, 21600}, {600, 30, 900, 1800}, {7200, 60, 300, 86400}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double tau = cases[c].tau, delta = cases[c].delta, r = cases[c].restart, m = cases[c].mtbf;
    double closed = 1 / ts_reliability_wall_per_useful(tau, delta, r, m);
    enum { RUNS = 40 };
    double useful = 400 * m, sum = 0, sum2 = 0;
    for (int s = 0; s < RUNS; s++) {
      double g =
          useful / ts_reliability_sample_wall_s(useful, tau, delta, r, m, (uint64_t)(1000 + s));
      sum += g;
      sum2 += g * g;
    }
    double mean = sum / RUNS, sd = sqrt((sum2 - RUNS * mean * mean) / (RUNS - 1));
    double half = 3.29 * sd / sqrt(RUNS);
    assert_true(half < 0.015 * closed);
    if (fabs(mean - closed) > half)
      fail_msg("case %zu: sampled goodput %.5f +- %.5f, closed form %.5f", c, mean, half, closed);
    double first_order = 1 - delta / tau - (tau / 2 + r) / m;
    assert_true(fabs(first_order - closed) > half || c == 2);
  }
  /* the same seed, the same run */
  assert_true(ts_reliability_sample_wall_s(1e6, 3600, 300, 600, 21600, 7) ==
              ts_reliability_sample_wall_s(1e6, 3600, 300, 600, 21600, 7));
}

/* 64 GCDs of Frontier: 8 nodes, 32 NIC links, the 2 switches they hang off. */
static void test_frontier_job(void **state) {
  (void)state;
  static ts_platform pf;
  load_frontier(&pf);
  assert_true(pf.reliability.is_set);
  ts_workload wl = test_workload(32, 4096, 32, 2048, 51200, 8, 2, 4, 256, 1);
  wl.zero_stage = 1;
  long parts[TS_PART_COUNT];
  ts_placement_parts(&pf, NULL, wl.n_gpus, parts);
  assert_int_equal(parts[TS_PART_GPU], 64);
  assert_int_equal(parts[TS_PART_NODE], 8);
  assert_int_equal(parts[TS_PART_LINK], 32);
  assert_int_equal(parts[TS_PART_SWITCH], 2);
  ts_reliability r;
  ts_reliability_compute(&pf.reliability, &wl, parts, NULL, pf.gpus_per_node, 10.0, 0, &r);
  assert_true(r.is_modelled);
  const ts_reliability_config *c = &pf.reliability;
  double lambda = 64 * c->gpu_rate + 8 * c->node_rate + 32 * c->link_rate + 2 * c->switch_rate;
  assert_rel(r.mtbf_s, 1 / lambda, 1e-12);
  assert_rel(r.interruptions_per_day, 86400 * lambda, 1e-12);
  /* bf16 weights and fp32 master weights and moments: 14 bytes a parameter */
  assert_rel(r.checkpoint_bytes, 14 * ts_cost_model_params(&wl), 1e-12);
  assert_int_equal(r.writer_nodes, 8);
  assert_rel(r.checkpoint_write_s, r.checkpoint_bytes / fmin(c->write_Bps, 8 * c->node_Bps), 1e-12);
  assert_true(r.goodput > 0 && r.goodput < 1);
  assert_rel(r.lost_checkpoints + r.lost_rework + r.lost_restarts, 1 - r.goodput, 1e-9);
  /* Daly's whole number of iterations is at least as good as its neighbours */
  long k = r.checkpoint_interval_iterations;
  double best = 1 / ts_reliability_wall_per_useful(10.0 * (double)k, r.checkpoint_blocking_s,
                                                   c->restart_s + r.checkpoint_read_s, r.mtbf_s);
  for (long j = k - 1; j <= k + 1; j += 2)
    if (j >= 1)
      assert_true(1 / ts_reliability_wall_per_useful(10.0 * (double)j, r.checkpoint_blocking_s,
                                                     c->restart_s + r.checkpoint_read_s,
                                                     r.mtbf_s) <=
                  best);

  /* Without ZeRO only the first data-parallel replica writes (TP8 x PP2 = 2 nodes). */
  wl.zero_stage = 0;
  ts_reliability_compute(&pf.reliability, &wl, parts, NULL, pf.gpus_per_node, 10.0, 0, &r);
  assert_int_equal(r.writer_nodes, 2);
  /* A given interval is kept; asynchronous writes block only for the copy to the host. */
  wl.checkpoint_interval = 50;
  wl.is_checkpoint_async = true;
  ts_reliability_compute(&pf.reliability, &wl, parts, NULL, pf.gpus_per_node, 10.0, 86400, &r);
  assert_int_equal(r.checkpoint_interval_iterations, 50);
  assert_rel(r.checkpoint_blocking_s, r.checkpoint_bytes / 64 / c->host_Bps, 1e-12);
  assert_rel(r.train_s, 86400 / r.goodput, 1e-12);
  /* interruptions far faster than an interval: goodput 0, every figure still a number */
  ts_reliability_config storm = *c;
  storm.gpu_rate = 1.0 / 60;
  ts_reliability_compute(&storm, &wl, parts, NULL, pf.gpus_per_node, 10.0, 86400, &r);
  assert_true(r.goodput == 0);
  assert_true(isfinite(r.lost_rework) && isfinite(r.lost_restarts) && isfinite(r.lost_checkpoints));
  assert_rel(r.lost_checkpoints + r.lost_rework + r.lost_restarts, 1, 1e-9);
  /* no reliability section: not modelled */
  ts_reliability_config none = {0};
  ts_reliability_compute(&none, &wl, parts, NULL, pf.gpus_per_node, 10.0, 0, &r);
  assert_false(r.is_modelled);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_daly_interval),
                                     cmocka_unit_test(test_goodput_against_sampled_runs),
                                     cmocka_unit_test(test_frontier_job)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
