/* plots: the pipeline Gantt chart of a hand-made GPipe iteration (bars, bubbles, labels), the
 * scaling curve's ideal line and labels, and the memory bars. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../analysis/plots.h"
#include "fixtures.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct capture {
  char *buf;
  size_t len;
  FILE *f;
} capture;

static void capture_open(capture *c) {
  c->buf = NULL;
  c->len = 0;
  c->f = open_memstream(&c->buf, &c->len);
  assert_non_null(c->f);
}

static char *capture_close(capture *c) {
  fclose(c->f);
  return c->buf;
}

static void assert_contains(const char *text, const char *want) {
  if (strstr(text, want) == NULL)
    fail_msg("figure lacks '%s'", want);
}

static long count(const char *text, const char *what) {
  long n = 0;
  for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what))
    n++;
  return n;
}

/* GPipe, 2 stages, 2 microbatches, forward 1 s, backward 1.5 s of which 0.45 s is
 * recomputation, then the optimizer; iteration 8 s drawn on 800 columns of 0.01 s:
 *   stage 0 |F0 F1|        bubble      |R B0 |R B1 |opt|
 *   stage 1 |     |F0 F1|R B0 |R B1 |opt|
 */
static void test_gantt(void **state) {
  (void)state;
  ts_workload wl = test_workload(2, 1024, 8, 512, 1000, 1, 2, 1, 2, 1);
  wl.schedule = TS_SCHED_GPIPE;
  ts_job job;
  ts_job_init(&job, 2);
  ts_event fwd = {.kind = TS_EV_COMPUTE, .category = TS_CAT_COMPUTE, .time_s = 1};
  ts_event bwd[2] = {{.kind = TS_EV_COMPUTE, .category = TS_CAT_RECOMPUTE, .time_s = 0.45},
                     {.kind = TS_EV_COMPUTE, .category = TS_CAT_COMPUTE, .time_s = 1.05}};
  ts_event opt = {.kind = TS_EV_COMPUTE, .category = TS_CAT_OPTIMIZER, .time_s = 0.5};
  long f = ts_job_add_template(&job, &fwd, 1), b = ts_job_add_template(&job, bwd, 2),
       o = ts_job_add_template(&job, &opt, 1);
  long blocks[5] = {f, f, b, b, o};
  ts_job_set_blocks(&job, 0, blocks, 5);
  ts_job_set_blocks(&job, 1, blocks, 5);
  /* [rank][k]: start of the forwards, backwards and optimizer */
  static const double fwd_start[2][2] = {{0, 1}, {1, 2}}, bwd_start[2][2] = {{4.5, 6}, {3, 4.5}};
  static const double opt_start[2] = {7.5, 6};
  ts_rank_result ranks[2];
  memset(ranks, 0, sizeof ranks);
  ts_span spans[2][7];
  for (int r = 0; r < 2; r++) {
    int n = 0;
    for (int k = 0; k < 2; k++)
      spans[r][n++] = (ts_span){fwd_start[r][k], fwd_start[r][k] + 1, 0, k, 0, 0};
    for (int k = 0; k < 2; k++) {
      double t = bwd_start[r][k];
      spans[r][n++] = (ts_span){t, t + 0.45, 0, 2 + k, 0, 0};
      spans[r][n++] = (ts_span){t + 0.45, t + 1.5, 0, 2 + k, 1, 0};
    }
    spans[r][n++] = (ts_span){opt_start[r], opt_start[r] + 0.5, 0, 4, 0, 0};
    ranks[r].spans = spans[r];
    ranks[r].n_spans = n;
  }
  ts_sim_result sim = {.iteration_s = 8, .n_ranks = 2, .ranks = ranks};
  capture c;
  capture_open(&c);
  ts_plot_gantt(c.f, &wl, &job, &sim);
  char *svg = capture_close(&c);
  /* Consecutive forwards merge into one bar; the bubble is a gap; recomputation shows. */
  assert_contains(svg, "<title>stage 0 F0..F1 forward, 0-2 s</title>");
  assert_contains(svg, "<title>stage 0 B0 recomputation, 4.5-4.95 s</title>");
  assert_contains(svg, "<title>stage 0 B0 backward, 4.95-6 s</title>");
  assert_contains(svg, "<title>stage 0 sync optimizer, 7.5-8 s</title>");
  assert_contains(svg, "<title>stage 1 F0..F1 forward, 1-3 s</title>");
  assert_contains(svg, "<title>stage 1 B1 backward, 4.95-6 s</title>");
  assert_contains(svg, "<title>stage 1 sync optimizer, 6-6.5 s</title>");
  /* Bars per row: stage 0 forward, 2 x (recomputation, backward), optimizer = 6; stage 1 the
   * same; nothing else (stage 1's bubble before t = 1 s has no bar). */
  assert_int_equal(count(svg, "<title>stage 0 "), 6);
  assert_int_equal(count(svg, "<title>stage 1 "), 6);
  assert_contains(svg, ">B0</text>"); /* a wide bar of one microbatch is labelled */
  assert_contains(svg, ">stage 1 (rank 1)</text>");
  free(svg);
  ts_job_fini(&job);
}

static void test_scaling(void **state) {
  (void)state;
  long gpus[3] = {128, 256, 1024};
  double speedup[3] = {1, 1.9, 7.2}, eff[3] = {1, 0.95, 0.9};
  capture c;
  capture_open(&c);
  ts_plot_scaling(c.f, true, 3, gpus, speedup, eff);
  char *svg = capture_close(&c);
  assert_contains(svg, ">95.0%</text>");
  assert_contains(svg, ">90.0%</text>");
  assert_contains(svg, "<title>1024 GPUs: x7.200</title>");
  assert_int_equal(count(svg, "stroke-dasharray"), 1); /* the ideal line */
  assert_int_equal(count(svg, "<circle"), 3);
  free(svg);
}

static void test_memory(void **state) {
  (void)state;
  ts_memory mem[2];
  memset(mem, 0, sizeof mem);
  for (int s = 0; s < 2; s++) {
    mem[s].bytes[TS_MEM_WEIGHTS] = 2 * GIB;
    mem[s].bytes[TS_MEM_GRADIENTS] = 4 * GIB;
    mem[s].bytes[TS_MEM_OPTIMIZER] = 3 * GIB;
    mem[s].bytes[TS_MEM_ACTIVATIONS] = (1 + s) * GIB;
    mem[s].total_bytes = (10 + s) * GIB;
  }
  capture c;
  capture_open(&c);
  ts_plot_memory(c.f, 2, mem, 64 * GIB);
  char *svg = capture_close(&c);
  assert_contains(svg, "<title>stage 1: activations 2.00 GiB (total 11.00 GiB)</title>");
  assert_int_equal(count(svg, "stroke-dasharray"), 1); /* HBM */
  free(svg);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_gantt), cmocka_unit_test(test_scaling),
                                     cmocka_unit_test(test_memory)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
