/* analytic: one representative pipeline played for the whole job (search's estimate,
 * sim/search.c) against every rank played. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>

#include "../../sim/engine/analytic.h"
#include "../../workloads/layout.h"
#include "fixtures.h"

/* Two nodes of 4 GPUs, every pair linked alike, a NIC per GPU, both nodes on one switch: every
 * tensor rank and replica of a job placed on it runs alike. */
static const char symmetric[] =
    "name: symmetric\n"
    "gpu: {model: test, peak: {bf16: 100Tf}, hbm_capacity: 64GiB, hbm_bandwidth: 1TBps,\n"
    "      gemm_ceiling: 0.8, gemm_tile: {m: 128, n: 128}, compute_units: 100, kernel_launch: "
    "2us}\n"
    "node:\n"
    "  gpus: 4\n"
    "  links:\n"
    "    - {gpus: [0, 1], bandwidth: 100GBps, latency: 1us}\n"
    "    - {gpus: [0, 2], bandwidth: 100GBps, latency: 1us}\n"
    "    - {gpus: [0, 3], bandwidth: 100GBps, latency: 1us}\n"
    "    - {gpus: [1, 2], bandwidth: 100GBps, latency: 1us}\n"
    "    - {gpus: [1, 3], bandwidth: 100GBps, latency: 1us}\n"
    "    - {gpus: [2, 3], bandwidth: 100GBps, latency: 1us}\n"
    "  nics:\n"
    "    - {gpu: 0, bandwidth: 200Gbps, latency: 1us, pcie_bandwidth: 50GBps, pcie_latency: 1us}\n"
    "    - {gpu: 1, bandwidth: 200Gbps, latency: 1us, pcie_bandwidth: 50GBps, pcie_latency: 1us}\n"
    "    - {gpu: 2, bandwidth: 200Gbps, latency: 1us, pcie_bandwidth: 50GBps, pcie_latency: 1us}\n"
    "    - {gpu: 3, bandwidth: 200Gbps, latency: 1us, pcie_bandwidth: 50GBps, pcie_latency: 1us}\n"
    "network: {topology: dragonfly, groups: 1, switches_per_group: 1, nodes_per_switch: 2,\n"
    "          global_links_per_group_pair: 1, local_link: {bandwidth: 200Gbps, latency: 1us},\n"
    "          global_link: {bandwidth: 200Gbps, latency: 1us}}\n"
    "nodes: 2\n";

/* Plays wl's job with every rank and with its representative pipeline (tensor rank 0 of
 * replica 0); checks the iteration and every rank's FLOPs, and with is_symmetric every rank's
 * times. */
static void compare(const ts_platform *pf, const ts_workload *wl, bool is_symmetric) {
  ts_err err = {0};
  ts_job job;
  assert_int_equal(ts_schedule_build(wl, &pf->gpu, &job, &err), 0);
  long *rep = malloc((size_t)job.n_ranks * sizeof *rep);
  assert_non_null(rep);
  for (long r = 0; r < job.n_ranks; r++)
    rep[r] = ts_layout_rank(wl, (ts_coords){0, 0, ts_layout_coords(wl, r).pp});
  ts_engine_opts all = {.fidelity = TS_FIDELITY_ANALYTIC};
  ts_engine_opts one = {.fidelity = TS_FIDELITY_ANALYTIC, .representative = rep};
  ts_sim_result a, b;
  assert_int_equal(ts_analytic_run(pf, &job, &all, &a, &err), 0);
  assert_int_equal(ts_analytic_run(pf, &job, &one, &b, &err), 0);
  assert_rel(b.iteration_s, a.iteration_s, 1e-12);
  for (long r = 0; r < job.n_ranks; r++) {
    assert_rel(b.ranks[r].flops, a.ranks[r].flops, 1e-15);
    for (int k = 0; is_symmetric && k < TS_CAT_COUNT; k++)
      assert_true(fabs(b.ranks[r].time_s[k] - a.ranks[r].time_s[k]) <= 1e-12 * a.iteration_s);
  }
  /* Only one rank per stage played: tp x dp times fewer events. */
  assert_int_equal(b.n_events * wl->tp * wl->dp, a.n_events);
  ts_sim_result_fini(&a);
  ts_sim_result_fini(&b);
  ts_job_fini(&job);
  free(rep);
}

/* On a symmetric machine the representative's timeline is every rank's. */
static void test_symmetric_machine(void **state) {
  (void)state;
  static ts_platform pf;
  ts_err err = {0};
  if (ts_platform_load_string("symmetric.yaml", symmetric, &pf, &err) != 0)
    fail_msg("%s", err.msg);
  for (int zero = 0; zero <= 1; zero++) { /* all-reduce, or reduce-scatter on the stream */
    ts_workload wl = test_workload(8, 1024, 16, 1024, 32000, 2, 2, 2, 16, 1);
    wl.zero_stage = zero;
    compare(&pf, &wl, true);
  }
}

/* GPT-22B on 64 Frontier GCDs in layout (tp, pp, zero, virtual stages). Frontier is not quite
 * symmetric: each NIC hangs off an odd GCD, so an even GCD's messages and ring steps cross up
 * to two more 1 us links, and an odd rank's times differ from the representative's (tensor
 * rank 0, an even GCD) by microseconds a message or collective: 256 us of 1.19 s of tensor-
 * parallel time in the preset's layout, 124 us sooner done with ZeRO-3. The iteration does not
 * differ: it is the slowest rank's, and the representative is the slower GCD. */
static void check_frontier(const ts_platform *pf, long tp, long pp, int zero, long v) {
  ts_err err = {0};
  ts_workload wl;
  if (ts_workload_load_file(TS_SOURCE_DIR "/workloads/gpt-22b.yaml", &wl, &err) != 0)
    fail_msg("%s", err.msg);
  ts_overrides ov = {.gpus = 64,
                     .tp = tp,
                     .pp = pp,
                     .zero_stage = zero,
                     .virtual_stages = v,
                     .schedule = v > 1 ? TS_SCHED_INTERLEAVED : TS_SCHED_1F1B,
                     .is_gpus_set = true,
                     .is_tp_set = true,
                     .is_pp_set = true,
                     .is_zero_stage_set = true,
                     .is_virtual_stages_set = true,
                     .is_schedule_set = true};
  if (ts_workload_resolve(&wl, &ov, &err) != 0)
    fail_msg("%s", err.msg);
  compare(pf, &wl, false);
}

static void test_frontier(void **state) {
  (void)state;
  static ts_platform pf;
  load_frontier(&pf);
  check_frontier(&pf, 2, 4, 1, 1); /* the preset's layout: TP2 PP4 DP8, ZeRO-1 */
  check_frontier(&pf, 2, 4, 1, 2); /* interleaved, two virtual stages */
  check_frontier(&pf, 8, 8, 1, 1); /* a whole node per tensor group, no data parallelism */
  check_frontier(&pf, 2, 1, 3, 1); /* ZeRO-3 over 32 replicas: collectives on the stream */
  check_frontier(&pf, 16, 1, 0, 1); /* tensor parallelism across two nodes */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_symmetric_machine),
                                     cmocka_unit_test(test_frontier)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
