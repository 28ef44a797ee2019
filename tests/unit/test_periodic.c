/* Periodic play (sim/simulate.h; by default where the steady state repeats, run's --periodic
 * whatever it does): p + 16 microbatches played and each rank carried on at its steady state's
 * rate give what playing every microbatch gives, where the steady state repeats exactly;
 * elsewhere every microbatch plays, and the run says so. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "json.h"
#include "spawn.h"

/* `trainsim run ARGS`, its result.json parsed, and its stderr in *err (when not NULL). */
static json *run(const char *args, char **err) {
  char dir[] = "/tmp/trainsim-periodic-XXXXXX", cmd[2048], path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(cmd, sizeof cmd, "run %s --quiet --out %s", args, dir);
  spawn_result r = spawn_trainsim_ok(cmd);
  if (err != NULL)
    *err = strdup(r.err);
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/result.json", dir);
  char *text = read_file(path, NULL);
  assert_non_null(text);
  json *out = json_parse(text);
  assert_non_null(out);
  free(text);
  assert_int_equal(remove_dir(dir), 0);
  return out;
}

/* Every stage's categories and the iteration agree to `tol` of the iteration. */
static void assert_close(const json *a, const json *b, int stages, double tol) {
  double t = json_num(b, "metrics.iteration_s");
  assert_rel(json_num(a, "metrics.iteration_s"), t, tol);
  const char *categories[] = {"compute", "recompute", "optimizer", "tp_comm", "pp_comm",
                              "dp_comm", "ep_comm",   "cp_comm",   "bubble",  "idle"};
  for (int s = 0; s < stages; s++)
    for (size_t c = 0; c < sizeof categories / sizeof *categories; c++) {
      char key[128];
      snprintf(key, sizeof key, "stages.%d.breakdown_s.%s", s, categories[c]);
      double x = json_num(a, key), y = json_num(b, key);
      if (fabs(x - y) > tol * t)
        fail_msg("%s: periodic %.17g, every microbatch %.17g", key, x, y);
    }
  assert_rel(json_num(a, "metrics.hardware_tflops_per_gpu"),
             json_num(b, "metrics.hardware_tflops_per_gpu"), tol);
}

/* GPT-22B on 8 Frontier nodes, 40 microbatches (20 played): its steady state repeats exactly,
 * with every rank playing (TP 2), with node play (TP 8) and with gradients reduced in buckets
 * on the communication stream. */
static void test_exact_where_periodic(void **state) {
  (void)state;
  const char *layouts[] = {"workloads/gpt-22b.yaml --gpus 64 --global-batch-size 320",
                           "workloads/gpt-22b.yaml --gpus 64 --tp 8 --pp 4 --global-batch-size 80",
                           "workloads/gpt-22b.yaml --gpus 64 --tp 8 --pp 4 --global-batch-size 80 "
                           "--dp-bucket-size 40MB"};
  for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
    char args[1024];
    snprintf(args, sizeof args, "%s --periodic", layouts[i]);
    json *periodic = run(args, NULL);
    snprintf(args, sizeof args, "%s --play-every-microbatch", layouts[i]);
    json *every = run(args, NULL);
    assert_int_equal((long)json_num(periodic, "simulation.played_microbatches"), 20);
    assert_null(json_at(every, "simulation.played_microbatches"));
    double t = json_num(every, "metrics.iteration_s");
    assert_true(json_num(periodic, "simulation.periodic_error_s") <= 1e-9 * t);
    assert_close(periodic, every, 4, 1e-9);
    /* fewer events played: 20 of 40 microbatches and the epilogue */
    assert_true(json_num(periodic, "simulation.events") <
                0.6 * json_num(every, "simulation.events"));
    json_free(periodic);
    json_free(every);
  }
}

/* By default: tried where the microbatches are at least four times those played, and kept
 * where the steady state repeats (22B on 64 GCDs, 80 microbatches); where the replicas' periods
 * drift (22B on 512 GCDs placed at random, so that replicas' hops differ and their periods with
 * them, over global links slowed to 1 GB/s, so that replicas at different periods share bound
 * links; as on 3,072 GCDs of the real dragonfly, docs/performance.md) every microbatch plays,
 * exactly as asked for, and result.json says why. */
static void test_default(void **state) {
  (void)state;
  const char *repeats = "workloads/gpt-22b.yaml --gpus 64 --global-batch-size 640";
  char args[1024];
  json *periodic = run(repeats, NULL);
  snprintf(args, sizeof args, "%s --play-every-microbatch", repeats);
  json *every = run(args, NULL);
  assert_int_equal((long)json_num(periodic, "simulation.played_microbatches"), 20);
  assert_null(json_at(every, "simulation.played_microbatches"));
  assert_null(json_at(every, "simulation.periodic_declined_error_s"));
  assert_close(periodic, every, 4, 1e-9);
  json_free(periodic);
  json_free(every);

  const char *drifts = "workloads/gpt-22b.yaml --gpus 512 --global-batch-size 5120 --placement "
                       "random --set network.global_link.bandwidth=1GBps";
  json *declined = run(drifts, NULL);
  snprintf(args, sizeof args, "%s --play-every-microbatch", drifts);
  every = run(args, NULL);
  assert_null(json_at(declined, "simulation.played_microbatches"));
  double t = json_num(every, "metrics.iteration_s");
  assert_true(json_num(declined, "simulation.periodic_declined_error_s") > 1e-6 * t);
  assert_true(json_num(declined, "simulation.periodic_declined_iteration_s") > 0);
  assert_true(json_num(declined, "metrics.iteration_s") == t);
  assert_close(declined, every, 4, 0);
  json_free(declined);
  json_free(every);

  const char *both = "workloads/gpt-22b.yaml --periodic --play-every-microbatch";
  snprintf(args, sizeof args, "run %s --quiet --out /tmp/trainsim-periodic-unused", both);
  spawn_result r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "--play-every-microbatch"));
  spawn_free(&r);
}

/* Where it does not apply (another schedule, a timeline, too few microbatches) every microbatch
 * plays and stderr says why. */
static void test_declined(void **state) {
  (void)state;
  const char *layouts[] = {"workloads/gpt-22b.yaml --gpus 64 --global-batch-size 320 --schedule "
                           "gpipe --periodic",
                           "workloads/gpt-22b.yaml --gpus 64 --global-batch-size 320 --timeline "
                           "--periodic",
                           "workloads/gpt-22b.yaml --gpus 64 --global-batch-size 160 --periodic"};
  for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
    char *err = NULL;
    json *r = run(layouts[i], &err);
    assert_null(json_at(r, "simulation.played_microbatches"));
    assert_non_null(strstr(err, "--periodic does not apply to this run"));
    free(err);
    json_free(r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_exact_where_periodic),
                                     cmocka_unit_test(test_default),
                                     cmocka_unit_test(test_declined)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
