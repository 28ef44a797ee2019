/* Node and rail play (sim/engine/engine.h): one actor per node plays for its ranks where the
 * engine finds that exact, and its results are those of playing every rank. */
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

/* GPT-22B on 4 Frontier nodes: TP 8 (a node each), 2 stages, 2 replicas, 4 microbatches. */
#define LAYOUT "workloads/gpt-22b.yaml --gpus 32 --tp 8 --pp 2 --global-batch-size 8"
/* Frontier with every GCD as far from its NIC as its neighbour: the Infinity Fabric hop of
 * the GCDs without a NIC of their own takes no time. */
#define ALIKE "--set node.links[*].latency=0us"

typedef struct run_out {
  json *result;
  char *timeline; /* timeline.json when asked for, else NULL */
} run_out;

/* `trainsim run ARGS` into a fresh directory; its result.json parsed. */
static run_out run(const char *args, bool with_timeline) {
  char dir[] = "/tmp/trainsim-nodeplay-XXXXXX", cmd[2048], path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(cmd, sizeof cmd, "run %s --quiet --out %s%s", args, dir,
           with_timeline ? " --timeline --timeline-ranks 1,9,17" : "");
  spawn_result r = spawn_trainsim_ok(cmd);
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/result.json", dir);
  char *text = read_file(path, NULL);
  assert_non_null(text);
  run_out out = {json_parse(text), NULL};
  assert_non_null(out.result);
  free(text);
  if (with_timeline) {
    snprintf(path, sizeof path, "%s/timeline.json", dir);
    out.timeline = read_file(path, NULL);
    assert_non_null(out.timeline);
  }
  assert_int_equal(remove_dir(dir), 0);
  return out;
}

static void run_free(run_out *o) {
  json_free(o->result);
  free(o->timeline);
}

static long played(const run_out *o) {
  return (long)json_num(o->result, "simulation.played_ranks");
}

/* Node play against every rank playing: the same iteration, every stage's time in each
 * category, the same collectives counted (to 1e-12: sums taken in another order). */
static void assert_same_results(const run_out *node, const run_out *every) {
  assert_rel(json_num(node->result, "metrics.iteration_s"),
             json_num(every->result, "metrics.iteration_s"), 1e-12);
  const char *categories[] = {"compute", "recompute", "optimizer", "tp_comm", "pp_comm",
                              "dp_comm", "ep_comm",   "cp_comm",   "bubble",  "idle"};
  for (int s = 0; s < (int)json_num(every->result, "layout.pipeline"); s++)
    for (size_t c = 0; c < sizeof categories / sizeof *categories; c++) {
      char key[128];
      snprintf(key, sizeof key, "stages.%d.breakdown_s.%s", s, categories[c]);
      double a = json_num(node->result, key), b = json_num(every->result, key);
      if (!rel_close(a, b, 1e-12) && fabs(a - b) > 1e-12) /* zero categories: absolute */
        fail_msg("%s: node play %.17g, every rank %.17g", key, a, b);
    }
  const char *counts[] = {"simulation.events", "simulation.merged_events",
                          "simulation.ring_collectives", "simulation.tree_collectives"};
  for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
    assert_int_equal((long)json_num(node->result, counts[k]),
                     (long)json_num(every->result, counts[k]));
}

static void test_equal_where_members_alike(void **state) {
  (void)state;
  const char *layouts[] = {LAYOUT " " ALIKE,
                           /* gradients in buckets: the communication stream plays too */
                           LAYOUT " " ALIKE " --dp-bucket-size 40MB",
                           /* a DGX H100 unit: a NIC per GPU, rails on one leaf switch */
                           "workloads/gpt-22b.yaml --platform platforms/dgx-h100.yaml --gpus 64 "
                           "--tp 8 --pp 2 --global-batch-size 16",
                           /* experts across nodes (all-to-alls), expert TP on the TP ranks */
                           "workloads/mixtral-8x7b.yaml --platform platforms/dgx-h100.yaml --gpus "
                           "128 --tp 8 --pp 2 --ep 8 --global-batch-size 32"};
  for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
    char every_args[1024];
    snprintf(every_args, sizeof every_args, "%s --play-every-rank", layouts[i]);
    run_out node = run(layouts[i], true), every = run(every_args, true);
    long ranks = (long)json_num(every.result, "layout.gpus");
    assert_int_equal(played(&node), ranks / 8);
    assert_int_equal(played(&every), ranks);
    assert_same_results(&node, &every);
    /* A rank that did not play (1, 9, 17: TP rank 1 of three nodes) has the timeline its own
     * actor gives it. */
    assert_string_equal(node.timeline, every.timeline);
    run_free(&node);
    run_free(&every);
  }
}

/* On Frontier itself the GCDs without a NIC of their own are one Infinity Fabric link (1 us)
 * further from it, and a node's transfer takes its slowest member's latency. On this small
 * layout only the NICs bind, so node play ends later by that spread on each transfer of the
 * critical path, far less than a transfer's own time. (Where the network binds, playing every
 * rank is sensitive to the order in which the GCDs' transfers start: docs/performance.md.) */
static void test_frontier(void **state) {
  (void)state;
  run_out node = run(LAYOUT, false), every = run(LAYOUT " --play-every-rank", false);
  assert_int_equal(played(&node), 4);
  double t_node = json_num(node.result, "metrics.iteration_s");
  double t_every = json_num(every.result, "metrics.iteration_s");
  /* 2 us per pipeline transfer (both ends), 2 x (m + p - 1) = 10 on the critical path, and
   * 2 us per ring step of the gradients' collectives (2 nodes: 2 steps each way, 2 calls). */
  assert_true(t_node >= t_every - 1e-9);
  assert_true(t_node - t_every <= (10 + 8) * 2e-6);
  run_free(&node);
  run_free(&every);
}

/* Where a condition fails every rank plays: a fidelity other than hybrid, routes that differ
 * beyond the nodes (a rail-optimised fat tree across its units: each rail's leaf has its own
 * uplinks), or --play-every-rank; and for the hand-over (test_handover): a data-parallel group
 * inside a node (TP 2, 4 stages, 4 replicas on 4 nodes). */
static void test_refused(void **state) {
  (void)state;
  const char *cases[] = {
      "workloads/gpt-22b.yaml --gpus 32 --global-batch-size 8", LAYOUT " --fidelity aggregate",
      "workloads/gpt-22b.yaml --platform platforms/dgx-h100.yaml --gpus 512 --tp 8 --pp 2 "
      "--global-batch-size 64",
      LAYOUT " --play-every-rank"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_out o = run(cases[i], false);
    assert_int_equal(played(&o), (long)json_num(o.result, "layout.gpus"));
    run_free(&o);
  }
}

/* DeepSeek-V3's kind of layout, cut down, on 16 H800 nodes of a rail-optimised fat tree made
 * small (2 units of 8 nodes: pipeline hops cross the spines) and slow (NICs at 5 GB/s, cables
 * at 10: the all-to-alls, the data-parallel rings and the pipeline share them): 2 stages, 64-way
 * ZeRO-1 data parallelism (rings through 8 nodes, each leaving a node on another rail), 16-way
 * expert parallelism over 2 nodes with DeepEP's dispatch, DualPipe. */
#define RAIL                                                                                       \
  "workloads/deepseek-v3.yaml --platform platforms/h800.yaml --gpus 128 --pp 2 --ep 16 "           \
  "--global-batch-size 256 --set model.num_layers=6 --set model.moe_layer_freq=([0]*1+[1]*5) "     \
  "--set parallelism.decoder_first_pipeline_num_layers=3 "                                         \
  "--set parallelism.decoder_last_pipeline_num_layers=3 --ignore-memory --set network.radix=16 "   \
  "--set nodes=16 --set node.nics[*].bandwidth=5GBps --set network.link.bandwidth=10GBps"

/* `trainsim run ARGS` with and without --play-every-rank: `players` actors, every rank's results
 * and timelines. */
static void assert_played_exactly(const char *args, long players) {
  char every_args[512];
  snprintf(every_args, sizeof every_args, "%s --play-every-rank", args);
  run_out node = run(args, true), every = run(every_args, true);
  assert_int_equal(played(&node), players);
  assert_same_results(&node, &every);
  assert_string_equal(node.timeline, every.timeline);
  run_free(&node);
  run_free(&every);
}

/* Rail play (engine.h): one actor per node, its local GPU 0 standing for all, gives every
 * rank's results; and DeepEP's in-node stage, priced at hybrid, what the aggregate fidelity's
 * transfers take. */
static void test_rail_play(void **state) {
  (void)state;
  run_out rail = run(RAIL, true), every = run(RAIL " --play-every-rank", true),
          aggregate = run(RAIL " --fidelity aggregate", false);
  assert_int_equal(played(&rail), 16);
  assert_int_equal(played(&every), 128);
  assert_same_results(&rail, &every);
  assert_string_equal(rail.timeline, every.timeline); /* ranks 1, 9, 17 did not play */
  assert_rel(json_num(rail.result, "metrics.iteration_s"),
             json_num(aggregate.result, "metrics.iteration_s"), 1e-12);
  run_free(&rail);
  run_free(&every);
  run_free(&aggregate);
  /* NCCL's all-to-all through PXN (coll.h, ts_coll_plan_pxn) runs as DeepEP's stages with every
   * copy sent: rail play too. */
  assert_played_exactly(RAIL " --set model.moe_token_dispatcher_type=alltoall", 16);
}

/* Rail play where turning a node's GPUs does not map the job onto itself: rails on one leaf
 * (not rail-optimised), an all-reduce on the data-parallel rings of whole nodes (ZeRO 0: the
 * library may run it as a tree). (NCCL's all-to-all runs through PXN here, which rail play
 * takes: test_rail_play; where PXN does not apply, every pair of GPUs: test_coll.) */
static void test_rail_play_refused(void **state) {
  (void)state;
  const char *cases[] = {RAIL " --set network.rail_optimized=false", RAIL " --zero-stage 0"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_out o = run(cases[i], false);
    assert_int_equal(played(&o), 128);
    run_free(&o);
  }
}

/* GPT-22B as the paper ran it, cut down to 8 Frontier nodes: TP 2 (a node holds four
 * replicas' pairs of one stage), 4 stages, 8 replicas, ZeRO-1's collectives after the pipeline
 * flush, 2 microbatches. */
#define HANDOVER "workloads/gpt-22b.yaml --gpus 64 --global-batch-size 16"

/* Node play with a hand-over (engine.h): one actor per node through the pipeline phase, then
 * every rank from its first collective across nodes. With every GCD as far from its NIC as its
 * neighbour, every rank's results and timelines (ranks 1, 9, 17 are no players: they play
 * only after the hand-over); on Frontier itself within 1e-4 of the iteration (the player's
 * transfers take their slowest member's latency). */
static void test_handover(void **state) {
  (void)state;
  run_out node = run(HANDOVER " " ALIKE, true),
          every = run(HANDOVER " " ALIKE " --play-every-rank", true);
  assert_int_equal(played(&node), 8);
  assert_int_equal(played(&every), 64);
  const json *shortcut = json_at(node.result, "simulation.shortcut");
  assert_true(shortcut != NULL && shortcut->type == JSON_STRING);
  assert_string_equal(shortcut->string, "node play, then every rank");
  assert_true(json_num(node.result, "simulation.transfers") <
              json_num(every.result, "simulation.transfers"));
  assert_same_results(&node, &every);
  assert_string_equal(node.timeline, every.timeline);
  run_free(&node);
  run_free(&every);
  /* Megatron's interleaved schedule on 2 stages: the last stage's chunk sends to the first,
   * whose ranks are also the embedding group's partners: the pair of players takes its node
   * route until the source hands over, then its ranks' own (sg_platform.h). */
  assert_played_exactly("workloads/gpt-22b.yaml --gpus 64 --pp 2 --global-batch-size 32 "
                        "--virtual-stages 2 --set stack.framework=megatron " ALIKE,
                        8);
  /* The mixed phase: on DGX H100 nodes of a fat tree that is not rail-optimised (4 nodes a leaf)
   * and slow (1 GB/s links), stages of 3 nodes straddle leaves, so the data-parallel rings of
   * the ranks that have handed over share leaf uplinks with the pipeline's aggregates still
   * flowing; each aggregate must count as its 8 members there (with weight 1 the iteration came
   * out 1.6% longer). */
  assert_played_exactly("workloads/gpt-22b.yaml --platform platforms/dgx-h100.yaml --gpus 96 "
                        "--global-batch-size 48 --set network.rail_optimized=false --set "
                        "network.link.bandwidth=1GBps",
                        12);
  node = run(HANDOVER, false);
  every = run(HANDOVER " --play-every-rank", false);
  assert_rel(json_num(node.result, "metrics.iteration_s"),
             json_num(every.result, "metrics.iteration_s"), 1e-4);
  run_free(&node);
  run_free(&every);
  /* Gradients reduced in buckets during the last backward pass (Megatron's
   * --overlap-grad-reduce): the node hands over at its first bucket, and its ranks then send
   * the pass's last pipeline message each on its own route, which the peer node's player
   * receives member by member; the rest of the pass's TP collectives meet at their groups'
   * member barriers. */
  assert_played_exactly(HANDOVER " " ALIKE " --dp-bucket-size 40MB", 8);
  assert_played_exactly("workloads/gpt-22b.yaml --gpus 128 --global-batch-size 64 "
                        "--dp-bucket-size 10MB --set stack.framework=megatron " ALIKE,
                        16);
  /* GPipe's backward passes receive after the first bucket: every rank plays. */
  node = run(HANDOVER " --dp-bucket-size 40MB --schedule gpipe", false);
  assert_int_equal(played(&node), 64);
  run_free(&node);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_equal_where_members_alike),
                                     cmocka_unit_test(test_frontier),
                                     cmocka_unit_test(test_refused),
                                     cmocka_unit_test(test_rail_play),
                                     cmocka_unit_test(test_rail_play_refused),
                                     cmocka_unit_test(test_handover)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
