/* End to end: the binary runs a small configuration across nodes; result.json parses, its
 * fields agree with each other, and a second run writes the same bytes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "spawn.h"

#define assert_rel(a, b, tol)                                                                      \
  do {                                                                                             \
    double a_ = (a), b_ = (b);                                                                     \
    if (!(fabs(a_ - b_) <= (tol)*fmax(fabs(a_), fabs(b_))))                                        \
      fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                                          \
  } while (0)

/* Writes platforms/NAME.yaml into dir (its kernel table path made absolute), with its
 * collectives section replaced by `collectives` when that is not NULL; the copy's path goes to
 * out. */
static void platform_copy(const char *dir, const char *name, const char *collectives, char *out,
                          size_t size) {
  char src[512];
  snprintf(src, sizeof src, "%s/platforms/%s.yaml", TS_SOURCE_DIR, name);
  char *text = read_file(src, NULL);
  assert_non_null(text);
  char *at = strstr(text, "kernel_table: kernels/");
  assert_non_null(at);
  char *cut = collectives != NULL ? strstr(text, "\ncollectives:") : NULL;
  if (cut != NULL)
    cut[1] = '\0';
  snprintf(out, size, "%s/%s.yaml", dir, name);
  FILE *f = fopen(out, "w");
  assert_non_null(f);
  fprintf(f, "%.*skernel_table: %s/platforms/kernels/%s%s", (int)(at - text), text, TS_SOURCE_DIR,
          at + strlen("kernel_table: kernels/"), collectives != NULL ? collectives : "");
  fclose(f);
  free(text);
}

/* DIR/result.json, parsed (free with json_free). */
static json *read_result(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/result.json", dir);
  char *text = read_file(path, NULL);
  assert_non_null(text);
  json *j = json_parse(text);
  assert_non_null(j);
  free(text);
  return j;
}

static char *run_tiny(const char *out_dir, const char *extra) {
  char args[512];
  snprintf(args, sizeof args, "run tests/data/good/tiny.yaml --gpus 32 --out %s %s", out_dir,
           extra);
  spawn_result r = spawn_trainsim_ok(args);
  assert_non_null(strstr(r.out, "iteration time"));
  spawn_free(&r);
  char path[512];
  snprintf(path, sizeof path, "%s/result.json", out_dir);
  char *text = read_file(path, NULL);
  assert_non_null(text);
  return text;
}

static void test_result_consistent(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *text = run_tiny(dir, "");
  json *j = json_parse(text);
  assert_non_null(j);
  assert_int_equal((int)json_num(j, "schema_version"), 1);
  double t = json_num(j, "metrics.iteration_s");
  assert_true(t > 0);
  double peak = json_num(j, "metrics.peak_flops_per_s_per_gpu");
  assert_rel(peak, 191.5e12, 1e-12);
  assert_rel(json_num(j, "metrics.mfu"), json_num(j, "metrics.model_tflops_per_gpu") * 1e12 / peak,
             1e-9);
  assert_rel(json_num(j, "metrics.hfu"),
             json_num(j, "metrics.hardware_tflops_per_gpu") * 1e12 / peak, 1e-9);
  assert_rel(json_num(j, "metrics.tokens_per_s"), 32.0 * 512.0 / t, 1e-9);
  assert_rel(json_num(j, "metrics.model_tflops_per_gpu"),
             json_num(j, "metrics.model_flops_per_iteration") / t / 32 / 1e12, 1e-9);
  /* Full recompute: what was executed is Megatron-DeepSpeed's count. */
  assert_rel(json_num(j, "metrics.hardware_flops_per_iteration"),
             json_num(j, "metrics.megatron_flops_per_iteration"), 1e-9);
  /* Every rank's time is split into categories that add up to the iteration. */
  static const char *const cats[] = {"compute", "recompute", "optimizer", "tp_comm",
                                     "pp_comm", "dp_comm",   "bubble",    "idle"};
  double sum = 0;
  for (int c = 0; c < 8; c++) {
    char path[64];
    snprintf(path, sizeof path, "breakdown_s.%s", cats[c]);
    double v = json_num(j, path);
    assert_true(v >= 0);
    sum += v;
  }
  assert_rel(sum, t, 1e-9);
  assert_true(json_num(j, "breakdown_s.recompute") > 0);
  assert_true(json_num(j, "breakdown_s.pp_comm") > 0);
  assert_true(json_num(j, "breakdown_s.dp_comm") > 0);
  assert_int_equal((int)json_num(j, "layout.data"), 4);
  assert_int_equal((int)json_num(j, "stages.3.stage"), 3);
  assert_int_equal((int)json_num(j, "stages.0.microbatches_in_flight"), 4);
  const json *fits = json_at(j, "memory.fits");
  assert_true(fits != NULL && fits->type == JSON_BOOL && fits->number == 1);
  json_free(j);

  /* Determinism: the same inputs give the same bytes. */
  char *again = run_tiny(dir, "");
  assert_string_equal(text, again);
  free(again);
  free(text);
  assert_int_equal(remove_dir(dir), 0);
}

static void test_flow_close_to_aggregate(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *agg = run_tiny(dir, "--fidelity aggregate");
  char *flow = run_tiny(dir, "--fidelity flow");
  json *a = json_parse(agg), *f = json_parse(flow);
  assert_non_null(a);
  assert_non_null(f);
  const json *fid = json_at(f, "fidelity");
  assert_string_equal(fid->string, "flow");
  /* Same events; the two differ only where rings share links with other traffic. */
  assert_rel(json_num(a, "metrics.iteration_s"), json_num(f, "metrics.iteration_s"), 0.05);
  assert_true(json_num(f, "simulation.transfers") > json_num(a, "simulation.transfers"));
  /* Analytic plays the same events with nothing shared and eager pipeline messages: never
   * slower than the simulation (optimistic), with no SimGrid transfer at all. */
  char *quick = run_tiny(dir, "--fidelity analytic");
  json *q = json_parse(quick);
  assert_non_null(q);
  assert_true(json_num(q, "simulation.events") == json_num(a, "simulation.events"));
  assert_true(json_num(q, "simulation.transfers") == 0);
  assert_true(json_num(q, "metrics.iteration_s") <=
              json_num(a, "metrics.iteration_s") * (1 + 1e-9));
  json_free(q);
  free(quick);
  /* Hybrid (the default) prices tiny's in-node collectives instead of playing them: fewer
   * transfers, the same events, most of them merged into steps. Its TP pairs' link to the NIC
   * also carries pipeline sends, which playing shares and pricing does not: within 0.1%
   * here, exactly equal where the calls are short enough not to meet them (the ideal library,
   * below). */
  char *mixed = run_tiny(dir, "");
  json *h = json_parse(mixed);
  assert_non_null(h);
  assert_string_equal(json_at(h, "fidelity")->string, "hybrid");
  assert_true(json_num(h, "simulation.events") == json_num(a, "simulation.events"));
  assert_true(json_num(h, "simulation.transfers") < json_num(a, "simulation.transfers"));
  assert_true(json_num(h, "simulation.merged_events") > json_num(h, "simulation.events") / 2);
  assert_true(json_num(a, "simulation.merged_events") == 0);
  assert_rel(json_num(h, "metrics.iteration_s"), json_num(a, "metrics.iteration_s"), 1e-3);
  json_free(h);
  free(mixed);
  char ideal[600], extra[800];
  platform_copy(dir, "frontier", "collectives: {library: ideal}\n", ideal, sizeof ideal);
  snprintf(extra, sizeof extra, "--platform %s", ideal);
  mixed = run_tiny(dir, extra);
  h = json_parse(mixed);
  snprintf(extra, sizeof extra, "--platform %s --fidelity aggregate", ideal);
  char *played = run_tiny(dir, extra);
  json *p = json_parse(played);
  assert_true(h != NULL && p != NULL);
  assert_rel(json_num(h, "metrics.iteration_s"), json_num(p, "metrics.iteration_s"), 1e-9);
  json_free(h);
  json_free(p);
  free(mixed);
  free(played);
  json_free(a);
  json_free(f);
  free(agg);
  free(flow);
  assert_int_equal(remove_dir(dir), 0);
}

static void test_help_lists_every_flag(void **state) {
  (void)state;
  spawn_result r = spawn_trainsim("run --help");
  assert_int_equal(r.status, 0);
  static const char *const flags[] = {"--platform",
                                      "--gpus",
                                      "--tp",
                                      "--pp",
                                      "--dp",
                                      "--micro-batch-size",
                                      "--global-batch-size",
                                      "--schedule",
                                      "--recompute",
                                      "--zero-stage",
                                      "--fidelity",
                                      "--out",
                                      "--ignore-memory",
                                      "--force",
                                      "--play-every-rank",
                                      "--timeline",
                                      "--timeline-ranks",
                                      "--timeline-window",
                                      "--report",
                                      "--sequence-parallel",
                                      "--virtual-stages",
                                      "--fsdp",
                                      "--dp-bucket-size",
                                      "--overlap-slowdown",
                                      "--scatter-gather",
                                      "--first-stage-layers",
                                      "--last-stage-layers",
                                      "--collectives",
                                      "--placement",
                                      "--seed"};
  for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
    if (strstr(r.out, flags[i]) == NULL)
      fail_msg("run --help does not document %s", flags[i]);
  spawn_free(&r);
  r = spawn_trainsim("--help");
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "run WORKLOAD"));
  spawn_free(&r);
}

/* The last row of a bench table (a collective's in nccl-tests' columns, or a network pattern's;
 * '#' lines are comments): size and time in microseconds. */
static void bench_last_row(const char *args, double *size, double *time_us) {
  spawn_result r = spawn_trainsim_ok(args);
  char *last = NULL;
  for (char *line = r.out; *line != '\0';) {
    if (*line != '#' && *line != '\n')
      last = line;
    char *nl = strchr(line, '\n');
    if (nl == NULL)
      break;
    line = nl + 1;
  }
  assert_non_null(last);
  double count = 0, root = 0;
  char type[16], redop[16];
  if (sscanf(last, "%lf %lf %15s %15s %lf %lf", size, &count, type, redop, &root, time_us) != 6)
    assert_int_equal(sscanf(last, "%lf %lf", size, time_us), 2); /* a network pattern's row */
  spawn_free(&r);
}

/* Expected values come from the link graph (REFERENCE.md section 2), not from the simulator:
 * an 8-GCD ring on one node can use only direct Infinity Fabric links, the slowest being a
 * single 50 GB/s link with 1 us latency, and the node's links carry four such rings at once
 * (two rings, each both ways, crossing every single link between packages once each way, as
 * RCCL's rings for this node do: rome_model_63); two nodes talk through one 25 GB/s NIC. The
 * table prints times to the nanosecond, about 3e-8 of these times: the tolerance. */
static void test_bench_against_link_graph(void **state) {
  (void)state;
  /* The wire alone: the platforms with the ideal library (links at their datasheet rate, a
   * route latency per step); test_bench_library checks the libraries on top of it. */
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", frontier[600], h100_file[600], args[1400], cmd[1400];
  assert_non_null(mkdtemp(dir));
  platform_copy(dir, "frontier", "collectives: {library: ideal}\n", frontier, sizeof frontier);
  platform_copy(dir, "dgx-h100", "collectives: {library: ideal}\n", h100_file, sizeof h100_file);
  double n = 0, t_us = 0;
  snprintf(cmd, sizeof cmd,
           "bench allreduce --gpus 8 --min-bytes 1GiB --max-bytes 1GiB --platform %s", frontier);
  bench_last_row(cmd, &n, &t_us);
  assert_rel(n, 1073741824.0, 1e-15);
  assert_rel(t_us * 1e-6, 2 * 7 * (1e-6 + n / 4 / (8 * 50e9)), 1e-7);
  snprintf(cmd, sizeof cmd,
           "bench reducescatter --gpus 8 --min-bytes 1GiB --max-bytes 1GiB --fidelity flow "
           "--platform %s",
           frontier);
  bench_last_row(cmd, &n, &t_us);
  assert_rel(t_us * 1e-6, 7 * (1e-6 + n / 4 / (8 * 50e9)), 2e-7); /* 4.7 ms to the nanosecond */
  /* GCD 0 of node 0 to GCD 0 of node 1: IF 0-1 (1 us), PCIe (0.5 us), NIC (1 us) on each side,
   * no switch hop (same switch); the NIC's 25 GB/s is the bottleneck. */
  snprintf(cmd, sizeof cmd,
           "bench p2p --from 0 --to 8 --min-bytes 1GiB --max-bytes 1GiB --platform %s", frontier);
  bench_last_row(cmd, &n, &t_us);
  assert_rel(t_us * 1e-6, 2 * (1e-6 + 0.5e-6 + 1e-6) + n / 25e9, 1e-7);
  /* Frontier across 2, 16 and 128 nodes: 4 rings of n/4 each, each crossing every node along
   * one of the node's four rings (two cycles of single links between packages, each both ways,
   * as RCCL's rome_model_63 rings), opened so that it enters a node at a GCD holding a NIC and
   * leaves it at another, every NIC carrying one ring each way. Inside a node a ring's slowest
   * hop is a 50 GB/s link it has to itself; between nodes, its NIC's 25 GB/s: a ring's 2(p-1)
   * steps move 2(p-1) (n/4) / p bytes at 25 GB/s on the NIC hops, each step costing the
   * slowest hop's latency between nodes: 3 us (PCIe, NIC out, NIC, PCIe), 3.7 us once nodes
   * sit on different switches of the group (its fabric, 0.35 us each way). */
  for (int nodes = 2; nodes <= 128; nodes *= 8) {
    int p = 8 * nodes;
    double steps = 2.0 * (p - 1), hop_s = nodes > 4 ? 3.7e-6 : 3e-6;
    snprintf(args, sizeof args,
             "bench allreduce --gpus %d --collectives ring --min-bytes 1GiB --max-bytes 1GiB "
             "--platform %s",
             p, frontier);
    bench_last_row(args, &n, &t_us);
    assert_rel(t_us * 1e-6, steps * (n / 4) / p / 25e9 + steps * hop_s, 1e-7);
  }
  /* DGX H100 (platforms/dgx-h100.yaml): inside a node every hop is a GPU's NVSwitch uplink and
   * another's downlink, 450 GB/s and 2 x 1 us. Across two nodes, 8 rings (one per NIC) carry
   * n/8 each; ring r's hop between the nodes leaves through GPU r-1's NIC and enters through
   * GPU r's (0.5 + 1 + 0.5 + 0.5 + 1 + 0.5 us: PCIe, NIC, leaf up and down across rails, NIC,
   * PCIe) at 50 GB/s, each NIC carrying one ring, while the NVSwitch hops share a GPU's
   * uplink 7 ways (64 GB/s each): the ring's 30 steps move 30 n / (8 x 16) bytes at 50 GB/s,
   * then 29 latency terms of the slowest hop. busbw = 8 x 50 GB/s at large sizes. */
  char h100[700];
  snprintf(h100, sizeof h100, "--platform %s --min-bytes 1GiB --max-bytes 1GiB", h100_file);
  snprintf(args, sizeof args, "bench allreduce --gpus 8 %s", h100);
  bench_last_row(args, &n, &t_us);
  assert_rel(t_us * 1e-6, 2 * 7 * (2e-6 + n / (8 * 450e9)), 1e-7);
  snprintf(args, sizeof args, "bench allreduce --gpus 16 %s", h100);
  bench_last_row(args, &n, &t_us);
  assert_rel(t_us * 1e-6, 4e-6 + 30 * n / (8 * 16 * 50e9) + 29 * 4e-6, 1e-7);
  /* The same rings over 16 and 64 nodes (128 and 512 GPUs, two units of 32 nodes): a hop
   * between units also crosses rails through the spines at 4 us, and each leaf's 32 uplinks
   * carry exactly its 32 nodes' ring hops, so the NICs still bound it. */
  for (int p = 128; p <= 512; p *= 4) {
    snprintf(args, sizeof args, "bench allreduce --gpus %d --collectives ring %s", p, h100);
    bench_last_row(args, &n, &t_us);
    assert_rel(t_us * 1e-6, 4e-6 + 2 * (p - 1) * n / (8.0 * p * 50e9) + (2 * (p - 1) - 1) * 4e-6,
               1e-7);
  }
  /* Hierarchical: reduce-scatter in each node (7 steps of n/8 on the NVSwitch, 2 us a hop),
   * all-reduce of the n/8 shards across the 2 nodes (2 steps of n/16 between same-rail NICs,
   * 0.5 + 1 + 1 + 0.5 us), all-gather in each node. */
  snprintf(args, sizeof args, "bench allreduce --gpus 16 --collectives hierarchical %s", h100);
  bench_last_row(args, &n, &t_us);
  assert_rel(t_us * 1e-6,
             2 * (2e-6 + 7 * n / (8 * 450e9) + 6 * 2e-6) + (3e-6 + n / (8 * 50e9) + 3e-6), 1e-7);
  /* Double binary tree on 3 GPUs: tree 0 is 1, 2 -> 0 and tree 1 is 0, 1 -> 2; going up,
   * GPU 1 sends n/2 on both trees and GPUs 0 and 2 each receive two halves, going down the
   * mirror: every busy NVSwitch link carries two halves (225 GB/s each), one 2 us hop per
   * phase. */
  snprintf(args, sizeof args, "bench allreduce --gpus 3 --collectives tree %s", h100);
  bench_last_row(args, &n, &t_us);
  assert_rel(t_us * 1e-6, 2 * (n / 450e9 + 2e-6), 1e-7);
  /* All-to-all by pairwise steps: in each of 7 steps every GPU sends n/8 through its own
   * NVSwitch uplink to a GPU that receives only that. 2.1 ms printed to the nanosecond: the
   * tolerance is that rounding, 2.4e-7. */
  snprintf(args, sizeof args, "bench alltoall --gpus 8 --fidelity flow %s", h100);
  bench_last_row(args, &n, &t_us);
  assert_rel(t_us * 1e-6, 7 * (2e-6 + n / (8 * 450e9)), 2.5e-7);
  assert_int_equal(remove_dir(dir), 0);
}

/* DeepEP's dispatch (moe_token_dispatcher_type flex) on 16 H800s over two nodes, at every
 * fidelity: its all-to-alls expose less than NCCL's (a token crosses the network once per node
 * it reaches, its copies over NVLink, both stages at once), group-limited routing never more;
 * the analytic fidelity, which shares no link, is never slower than playing them. */
static void test_deepep_dispatch(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX";
  assert_non_null(mkdtemp(dir));
  static const char *const dispatch[] = {
      "alltoall", "flex", "flex, moe_router_num_groups: 8, moe_router_group_topk: 4"};
  static const char *const fidelity[] = {"analytic", "aggregate", "flow"};
  double ep[3][3];
  for (int d = 0; d < 3; d++) {
    char path[700], args[1600], out[800];
    snprintf(path, sizeof path, "%s/moe%d.yaml", dir, d);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "name: moe\nmodel: {num_layers: 2, hidden_size: 1024, num_attention_heads: 8, "
            "seq_length: 1024, vocab_size: 1000, num_experts: 64, moe_router_topk: 8, "
            "moe_ffn_hidden_size: 512, moe_grouped_gemm: true, moe_token_dispatcher_type: %s}\n"
            "training: {global_batch_size: 16, micro_batch_size: 1}\n"
            "parallelism: {tensor: 1, pipeline: 1, expert: 16}\n",
            dispatch[d]);
    fclose(f);
    for (int k = 0; k < 3; k++) {
      snprintf(out, sizeof out, "%s/out%d%d", dir, d, k);
      snprintf(args, sizeof args,
               "run %s --platform %s/platforms/h800.yaml --gpus 16 --fidelity %s --quiet --out %s",
               path, TS_SOURCE_DIR, fidelity[k], out);
      spawn_result r = spawn_trainsim_ok(args);
      spawn_free(&r);
      snprintf(path + strlen(dir), sizeof path - strlen(dir), "/out%d%d/result.json", d, k);
      char *text = read_file(path, NULL);
      json *j = json_parse(text);
      assert_non_null(j);
      ep[d][k] = json_num(j, "breakdown_s.ep_comm");
      json_free(j);
      free(text);
      assert_int_equal(remove_dir(out), 0);
      snprintf(path, sizeof path, "%s/moe%d.yaml", dir, d);
    }
  }
  for (int k = 0; k < 3; k++) {
    assert_true(ep[1][k] < ep[0][k]);
    assert_true(ep[2][k] <= ep[1][k] * (1 + 1e-9));
    assert_true(ep[1][0] <= ep[1][k] * (1 + 1e-9));
  }
  assert_int_equal(remove_dir(dir), 0);
}

/* The parameters of workload file `path` as `trainsim memory` counts them (gpus: "" for the
 * file's own layout). */
static double params_of(const char *path, const char *platform, const char *gpus) {
  char args[1400];
  snprintf(args, sizeof args, "memory %s --platform %s/platforms/%s %s", path, TS_SOURCE_DIR,
           platform, gpus);
  spawn_result r = spawn_trainsim_ok(args);
  const char *at = strstr(r.out, "model states for ");
  assert_non_null(at);
  double p = strtod(at + strlen("model states for "), NULL);
  spawn_free(&r);
  return p;
}

/* import hf writes a workload file from a Hugging Face config.json: DeepSeek-V3's and Llama 3
 * 8B's count exactly the parameters of the presets written by hand from their papers, Qwen1.5-
 * MoE-A2.7B's its published 14.3B (its Q/K/V biases not modelled); import megatron the same from
 * a launch line; the output is whole or nothing. */
static void test_import_hf(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX";
  assert_non_null(mkdtemp(dir));
  static const struct {
    const char *config, *preset;
    double published;
  } cases[] = {{"deepseek-v3", "deepseek-v3.yaml", 0},
               {"llama3-8b", "llama3-8b.yaml", 0},
               {"qwen1.5-moe-a2.7b", NULL, 14.3e9}};
  for (int i = 0; i < 3; i++) {
    char args[1400], path[700];
    snprintf(args, sizeof args, "import hf %s/tests/data/hf/%s.json", TS_SOURCE_DIR,
             cases[i].config);
    spawn_result r = spawn_trainsim_ok(args);
    snprintf(path, sizeof path, "%s/%s.yaml", dir, cases[i].config);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(r.out, f);
    fclose(f);
    spawn_free(&r);
    double got = params_of(path, "h800.yaml", "--gpus 1");
    if (cases[i].preset != NULL) {
      char preset[700];
      snprintf(preset, sizeof preset, "%s/workloads/%s", TS_SOURCE_DIR, cases[i].preset);
      assert_rel(got, params_of(preset, "h800.yaml", ""), 1e-12);
    } else {
      assert_true(fabs(got / cases[i].published - 1) < 0.005);
    }
    assert_int_equal(unlink(path), 0);
  }
  /* Megatron-Core's Mixtral 8x7B example launch line (megatron/core/transformer/moe/README.md,
   * with --grad-reduce-in-bf16 and the precision-aware optimizer's dtypes) counts the
   * preset's 46.7B parameters, and names the flags it did not read */
  char args[2048], path[700];
  snprintf(args, sizeof args,
           "import megatron --vocab-size 32000 -- --num-layers 32 --hidden-size 4096 "
           "--ffn-hidden-size 14336 --num-attention-heads 32 --seq-length 4096 "
           "--disable-bias-linear --position-embedding-type rope --swiglu "
           "--untie-embeddings-and-output-weights --group-query-attention --num-query-groups 8 "
           "--normalization RMSNorm --num-experts 8 --expert-model-parallel-size 8 "
           "--moe-router-topk 2 --moe-grouped-gemm --micro-batch-size 1 --global-batch-size 128 "
           "--lr 1e-4 --bf16 --pipeline-model-parallel-size 4 --use-distributed-optimizer "
           "--grad-reduce-in-bf16 --use-precision-aware-optimizer --main-params-dtype fp16 "
           "--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16");
  spawn_result meg = spawn_trainsim_ok(args);
  assert_non_null(strstr(meg.out, "grad_reduce_in_bf16: true"));
  assert_non_null(strstr(meg.out, "master_weights: fp16"));
  assert_non_null(strstr(meg.out, "exp_avg_dtype: bf16"));
  assert_non_null(strstr(meg.out, "exp_avg_sq_dtype: bf16"));
  assert_non_null(
      strstr(meg.out, "# not read (no bearing on the iteration, or not modelled): --lr"));
  snprintf(path, sizeof path, "%s/mixtral.yaml", dir);
  FILE *mf = fopen(path, "w");
  assert_non_null(mf);
  fputs(meg.out, mf);
  fclose(mf);
  spawn_free(&meg);
  char preset[700];
  snprintf(preset, sizeof preset, "%s/workloads/mixtral-8x7b.yaml", TS_SOURCE_DIR);
  assert_rel(params_of(path, "dgx-h100.yaml", "--gpus 32"), params_of(preset, "dgx-h100.yaml", ""),
             1e-12);
  assert_int_equal(unlink(path), 0);
  spawn_result bad = spawn_trainsim("import hf /nonexistent/config.json");
  assert_int_equal(bad.status, 2);
  assert_true(bad.out == NULL || bad.out[0] == '\0'); /* nothing on stdout */
  spawn_free(&bad);
  assert_int_equal(rmdir(dir), 0);
}

/* bench speaks nccl-tests: -b and -e with its sizes (K, M, G: powers of 1,024), -f the step
 * factor, its columns (size, count of floats, type, redop, root, time, algbw, busbw, #wrong)
 * and its closing "Avg bus bandwidth" line, the mean of the rows' busbw. */
static void test_bench_nccl_tests(void **state) {
  (void)state;
  spawn_result r = spawn_trainsim_ok("bench allreduce --gpus 8 -b 1M -e 64M -f 4 --quiet");
  double size[4] = {0}, busbw[4] = {0}, sum = 0;
  int n = 0;
  for (char *line = r.out; *line != '\0' && n < 4;) {
    double count = 0, root = 0, time_us = 0, algbw = 0;
    char type[16] = "", redop[16] = "", wrong[16] = "";
    if (*line != '#' && sscanf(line, "%lf %lf %15s %15s %lf %lf %lf %lf %15s", &size[n], &count,
                               type, redop, &root, &time_us, &algbw, &busbw[n], wrong) == 9) {
      assert_true(count == size[n] / 4);
      assert_string_equal(type, "float");
      assert_string_equal(redop, "sum");
      assert_true(root == -1);
      assert_string_equal(wrong, "N/A");
      assert_rel(algbw, size[n] / time_us / 1e3, 1e-3);
      sum += busbw[n++];
    }
    char *nl = strchr(line, '\n');
    if (nl == NULL)
      break;
    line = nl + 1;
  }
  assert_int_equal(n, 4); /* 1, 4, 16, 64 MiB */
  assert_true(size[0] == 1048576 && size[3] == 64.0 * 1048576);
  const char *avg = strstr(r.out, "# Avg bus bandwidth    : ");
  assert_non_null(avg);
  assert_rel(strtod(avg + strlen("# Avg bus bandwidth    : "), NULL), sum / 4, 1e-3);
  spawn_free(&r);
  /* all-gather reduces nothing; a size nccl-tests would not take is the usual error */
  r = spawn_trainsim_ok("bench allgather --gpus 8 -b 2G -e 2G --quiet");
  assert_non_null(strstr(r.out, "    none      -1 "));
  spawn_free(&r);
  spawn_result bad = spawn_trainsim("bench allreduce -b 1X");
  assert_int_equal(bad.status, 2);
  assert_non_null(strstr(bad.err, "--min-bytes: expected a size"));
  spawn_free(&bad);
}

/* Inside a Frontier node the fidelities agree (issue 30): RCCL's tree runs as pipelined chains
 * along the node's four rings at every fidelity, and the call takes the longer of the tuner's
 * time and what the chains' links carry, so bus bandwidth grows with size to a plateau (it fell
 * and rose with the tuner's size corrections before), and the flow fidelity, which played a
 * level-by-level binary tree over multi-hop routes, is no longer 3x slower. */
static void test_fidelities_agree_in_node(void **state) {
  (void)state;
  double n = 0, t[3] = {0};
  static const char *const fidelities[] = {"hybrid", "aggregate", "flow"};
  for (int f = 0; f < 3; f++) {
    char args[256];
    snprintf(args, sizeof args,
             "bench allreduce --gpus 8 --min-bytes 256MiB --max-bytes 256MiB --fidelity %s",
             fidelities[f]);
    bench_last_row(args, &n, &t[f]);
  }
  assert_rel(t[1], t[0], 1e-6);
  assert_rel(t[2], t[0], 1e-6);
  spawn_result r = spawn_trainsim_ok("bench allreduce --gpus 8 --min-bytes 1MiB --max-bytes 1GiB");
  assert_non_null(strstr(r.out, "4 rings"));
  double prev = 0;
  int rows = 0;
  for (const char *line = strchr(r.out, '\n'); line != NULL; line = strchr(line + 1, '\n')) {
    double size = 0, count = 0, root = 0, us = 0, algbw = 0, busbw = 0;
    char type[16], redop[16];
    if (sscanf(line + 1, "%lf %lf %15s %15s %lf %lf %lf %lf", &size, &count, type, redop, &root,
               &us, &algbw, &busbw) != 8)
      continue;
    assert_true(busbw >= prev);
    prev = busbw;
    rows++;
  }
  assert_int_equal(rows, 11);
  spawn_free(&r);
  /* A whole iteration with TP 8 inside each node: hybrid, aggregate and flow within 0.1%. */
  double it[3] = {0};
  for (int f = 0; f < 3; f++) {
    char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[512];
    assert_non_null(mkdtemp(dir));
    snprintf(args, sizeof args,
             "run tests/data/good/tiny.yaml --gpus 16 --tp 8 --pp 2 --fidelity %s --out %s",
             fidelities[f], dir);
    spawn_result run = spawn_trainsim_ok(args);
    spawn_free(&run);
    json *j = read_result(dir);
    it[f] = json_at(j, "metrics.iteration_s")->number;
    json_free(j);
    assert_int_equal(remove_dir(dir), 0);
  }
  assert_rel(it[1], it[0], 1e-3);
  assert_rel(it[2], it[0], 1e-3);
}

/* With a library, a call nothing else slows takes exactly the library model's time (sim/engine/
 * ccl.h), worked by hand here from NCCL's and RCCL's constants on the platforms' figures. */
static void test_bench_library(void **state) {
  (void)state;
  double n = 0, t_us = 0;
  /* DGX H100, 8 GPUs, 1 GiB: ring Simple, 8.4 + 14 x 3.4 us, bus 450 x 0.824 GB/s. */
  bench_last_row("bench allreduce --gpus 8 --min-bytes 1GiB --max-bytes 1GiB --platform "
                 "platforms/dgx-h100.yaml",
                 &n, &t_us);
  assert_rel(t_us * 1e-6, 56.0e-6 + n * 14 / (8 * 450e9 * 0.824), 1e-7);
  /* 8 nodes, 512 MiB: NCCL's tree, 8.4 + 2 (7 x 4.0 + 3 x 14) us, half of 0.92 x 8 NICs x
   * 50 GB/s; inside each node the members exchange their shares over NVLink meanwhile. */
  bench_last_row("bench allreduce --gpus 64 --min-bytes 512MiB --max-bytes 512MiB --platform "
                 "platforms/dgx-h100.yaml",
                 &n, &t_us);
  assert_rel(t_us * 1e-6, 148.4e-6 + n / (0.92 * 400e9 / 2), 1e-7);
  /* A Frontier node, all-gather of 1 GiB: RCCL's ring Simple, 17 + 7 x 3.6 us, bus bandwidth
   * its four rings' (rome_model_63's, each both ways) slowest hop, one xGMI link of 50 x 0.72
   * GB/s, x 8 / 7. */
  bench_last_row("bench allgather --gpus 8 --min-bytes 1GiB --max-bytes 1GiB", &n, &t_us);
  assert_rel(t_us * 1e-6, 42.2e-6 + n * 7 / (8 * 4 * 36e9), 1e-7);
  /* Across 4 Frontier nodes, all-gather of 256 KiB: RCCL's ring with LL, whose bus bandwidth
   * is far below the links'. Each ring transfer runs at the library's rate, so the call takes
   * the analytic fidelity's time (the library's formula) when played out too. */
  double t_played = 0, t_formula = 0;
  bench_last_row("bench allgather --gpus 32 --min-bytes 256KiB --max-bytes 256KiB", &n, &t_played);
  bench_last_row("bench allgather --gpus 32 --min-bytes 256KiB --max-bytes 256KiB --fidelity "
                 "analytic",
                 &n, &t_formula);
  assert_rel(t_played, t_formula, 1e-7);
  /* The table names the library's choice. */
  spawn_result r = spawn_trainsim("bench allreduce --gpus 8 --min-bytes 8 --max-bytes 1GiB "
                                  "--platform platforms/dgx-h100.yaml");
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "ring/LL\n"));
  assert_non_null(strstr(r.out, "ring/LL128\n"));
  assert_non_null(strstr(r.out, "ring/Simple\n"));
  spawn_free(&r);
}

/* SimGrid 3.32's max-min solver crashed on an all-to-all of 256 GPUs (65,280 flows at once)
 * at its default precision (sim/engine/engine.c, init_simgrid): it must finish. */
static void test_bench_many_flows(void **state) {
  (void)state;
  double n = 0, t_us = 0;
  bench_last_row("bench alltoall --gpus 256 --min-bytes 64KiB --max-bytes 64KiB --quiet", &n,
                 &t_us);
  assert_rel(n, 65536, 0);
  assert_true(t_us > 17 && t_us < 1000); /* RCCL's base latency, then 256 B per pair */
}

/* Network patterns on two Frontier groups (256 nodes, 64 MiB per GPU) against the routing
 * model's figures (sim/network/route.h): shifting every node of group 0 to group 1 (and back)
 * runs at the pair link of adaptive routing, 4 direct cables + half of the 288 others, 148 x
 * 25 GB/s shared by 128 nodes x 8 GPUs; minimal routing holds it to the 4 direct cables, at
 * least 37 times slower (its hash may load one cable more than another). The route latencies,
 * under 10 us of 18.6 ms, are the tolerance. */
static void test_bench_network_patterns(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", minimal[600], args[1400];
  assert_non_null(mkdtemp(dir));
  platform_copy(dir, "frontier", NULL, minimal, sizeof minimal);
  char *text = read_file(minimal, NULL);
  char *at = strstr(text, "routing: adaptive");
  assert_non_null(at);
  memcpy(at, "routing: minimal ", strlen("routing: minimal "));
  FILE *f = fopen(minimal, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(text);
  double n = 0, t_adaptive = 0, t_minimal = 0;
  bench_last_row("bench shift --gpus 2048 --min-bytes 64MiB --max-bytes 64MiB --quiet", &n,
                 &t_adaptive);
  assert_rel(t_adaptive * 1e-6, n / (148 * 25e9 / 1024), 1e-3);
  snprintf(args, sizeof args,
           "bench shift --gpus 2048 --min-bytes 64MiB --max-bytes 64MiB --quiet --platform %s",
           minimal);
  bench_last_row(args, &n, &t_minimal);
  assert_true(t_minimal >= 37 * t_adaptive);
  /* Uniform traffic over 16 groups is held by the groups' global cables (the global taper of
   * 1.75: 12.8 TB/s injected per group into 7.3 TB/s of cables), not by the nodes' 100 GB/s:
   * with 15/16 of it leaving its group, at most 16 x 7.3 x 16/15 TB/s in total, and the random
   * permutation loads some groups a little more than others. */
  spawn_result r =
      spawn_trainsim("bench uniform --gpus 16384 --min-bytes 16MiB --max-bytes 16MiB --quiet");
  assert_int_equal(r.status, 0);
  double size, t_us, per_gpu, per_node, total;
  char *last = strrchr(r.out, '\n');
  while (last > r.out && last[-1] != '\n')
    last--;
  assert_int_equal(sscanf(last, "%lf %lf %lf %lf %lf", &size, &t_us, &per_gpu, &per_node, &total),
                   5);
  double bound = 16 * 292 * 25e9 * 16 / 15 / 1e12;
  assert_true(total <= bound * 1.001 && total > bound * 0.9 && per_node < 100);
  spawn_free(&r);
  /* Patterns take whole nodes. */
  r = spawn_trainsim("bench bisection --gpus 12");
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "--gpus"));
  spawn_free(&r);
  assert_int_equal(remove_dir(dir), 0);
}

/* tp_comm_overlap hides sequence parallelism's all-gathers and reduce-scatters under GEMMs:
 * less exposed TP time and a shorter iteration, the same FLOPs, and the fidelities agree as
 * they do without it. */
static void test_tp_comm_overlap_runs(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", path[600], args[1400];
  assert_non_null(mkdtemp(dir));
  double iter[2][2], tp[2], flops[2];
  for (int overlap = 0; overlap < 2; overlap++) {
    snprintf(path, sizeof path, "%s/w%d.yaml", dir, overlap);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "name: tiny\nmodel: {num_layers: 8, hidden_size: 1024, num_attention_heads: 16, "
            "seq_length: 512, vocab_size: 50257}\ntraining: {global_batch_size: 32, "
            "micro_batch_size: 2, precision: bf16}\nparallelism: {tensor: 4, pipeline: 2, "
            "data: 4, zero_stage: 1, sequence_parallel: true, tp_comm_overlap: %s}\n",
            overlap ? "true" : "false");
    fclose(f);
    for (int fid = 0; fid < 2; fid++) {
      snprintf(args, sizeof args, "run %s --gpus 32 --quiet --fidelity %s --out %s", path,
               fid ? "aggregate" : "hybrid", dir);
      spawn_result r = spawn_trainsim(args);
      assert_int_equal(r.status, 0);
      spawn_free(&r);
      snprintf(path + strlen(dir), sizeof path - strlen(dir), "/result.json");
      char *text = read_file(path, NULL);
      json *j = json_parse(text);
      assert_non_null(j);
      iter[overlap][fid] = json_num(j, "metrics.iteration_s");
      tp[overlap] = json_num(j, "breakdown_s.tp_comm");
      flops[overlap] = json_num(j, "metrics.hardware_flops_per_iteration");
      json_free(j);
      free(text);
      snprintf(path, sizeof path, "%s/w%d.yaml", dir, overlap);
    }
  }
  assert_true(iter[1][0] < iter[0][0] && tp[1] < tp[0]);
  assert_rel(flops[1], flops[0], 1e-12);
  assert_rel(iter[1][0], iter[1][1], 1e-3); /* hybrid prices the in-node TP groups */
  assert_int_equal(remove_dir(dir), 0);
}

/* timeline.json is valid JSON in the Chrome trace format: slices with names, non-negative
 * times, one thread per stream, and flows whose ends match. */
static void test_timeline(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX";
  assert_non_null(mkdtemp(dir));
  free(run_tiny(dir, "--timeline --timeline-ranks all"));
  char path[600];
  snprintf(path, sizeof path, "%s/timeline.json", dir);
  char *text = read_file(path, NULL);
  assert_non_null(text);
  json *j = json_parse(text);
  assert_non_null(j);
  const json *events = json_at(j, "traceEvents");
  assert_true(events != NULL && events->type == JSON_ARRAY && events->n > 100);
  long slices = 0, flows_out = 0, flows_in = 0, threads = 0, sends = 0;
  double bind_sum_out = 0, bind_sum_in = 0;
  for (size_t i = 0; i < events->n; i++) {
    const json *e = events->items[i];
    const json *ph = json_at(e, "ph");
    assert_true(ph != NULL && ph->type == JSON_STRING);
    if (strcmp(ph->string, "M") == 0) {
      threads += strcmp(json_at(e, "name")->string, "thread_name") == 0;
      continue;
    }
    assert_string_equal(ph->string, "X");
    slices++;
    assert_true(json_num(e, "ts") >= 0 && json_num(e, "dur") >= 0);
    assert_true(json_num(e, "pid") >= 0 && json_num(e, "tid") >= 0);
    assert_true(json_at(e, "name")->string[0] != '\0');
    if (json_at(e, "flow_out") != NULL) {
      flows_out++;
      bind_sum_out += json_num(e, "bind_id");
    }
    if (json_at(e, "flow_in") != NULL) {
      flows_in++;
      bind_sum_in += json_num(e, "bind_id");
    }
    sends += strstr(json_at(e, "name")->string, " send ") != NULL;
  }
  /* 32 ranks x 4 streams; tiny runs 4 microbatches on 4 stages: each of the 24 ranks of
   * stages 1-3 receives 4 activations, each of stages 0-2 receives 4 gradients. */
  assert_int_equal(threads, 32 * 4);
  assert_int_equal(flows_out, 2 * 24 * 4);
  assert_int_equal(flows_in, flows_out);
  assert_int_equal(sends, flows_out);
  assert_true(bind_sum_out == bind_sum_in);
  assert_true(slices > 1000);
  json_free(j);
  free(text);
  unlink(path);
  assert_int_equal(remove_dir(dir), 0);
}

static void test_memory_command(void **state) {
  (void)state;
  spawn_result r = spawn_trainsim("memory workloads/gpt-1t.yaml");
  assert_int_equal(r.status, 0);
  /* The preset runs Megatron-DeepSpeed: DeepSpeed's ZeRO-1 keeps bf16 gradients and shards
   * an fp32 copy of them with the optimizer states (workloads/memory.h). */
  assert_non_null(strstr(r.out, "one copy: 20 B/parameter (2 weight + 2 low-precision gradient"));
  assert_non_null(strstr(r.out, "fewest GPUs that fit (64.0 GiB each): TP 8 x PP 64 x DP 1 = 512"));
  spawn_free(&r);
}

/* Plain PyTorch keeps GPT-2's 50,257 tokens unpadded (shards of 25,129 at TP 2): on an H100 the
 * output layer's GEMMs run cuBLAS's fallback (workloads/cost.c), the iteration is longer than at
 * 50,304, and run (on stderr) and profile say why; Megatron pads 50,257 to 50,432 and neither
 * says anything. */
static void test_unpadded_vocab(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[512];
  assert_non_null(mkdtemp(dir));
  const char *cases[] = {"--set stack.framework=pytorch --set model.vocab_size=50257",
                         "--set stack.framework=pytorch --set model.vocab_size=50304",
                         "--set model.vocab_size=50257"};
  double iteration[3];
  for (int i = 0; i < 3; i++) {
    snprintf(args, sizeof args,
             "run tests/data/good/tiny.yaml --platform platforms/dgx-h100.yaml --gpus 8 %s "
             "--quiet --out %s",
             cases[i], dir);
    spawn_result r = spawn_trainsim_ok(args);
    bool noted =
        strstr(r.err, "a vocabulary of 50257 (framework pytorch keeps it unpadded)") != NULL;
    assert_true(noted == (i == 0));
    spawn_free(&r);
    json *j = read_result(dir);
    iteration[i] = json_num(j, "metrics.iteration_s");
    const long padded[] = {50258, 50304, 50432};
    assert_int_equal((long)json_num(j, "model.padded_vocab_size"), padded[i]);
    json_free(j);
  }
  assert_true(iteration[0] > 1.1 * iteration[1]);
  assert_int_equal(remove_dir(dir), 0);
  for (int i = 0; i < 3; i++) { /* profile says so too */
    snprintf(args, sizeof args,
             "profile tests/data/good/tiny.yaml --platform platforms/dgx-h100.yaml --gpus 8 %s",
             cases[i]);
    spawn_result r = spawn_trainsim_ok(args);
    assert_true((strstr(r.out, "output layer (not listed): the vocabulary, 50257 unpadded") !=
                 NULL) == (i == 0));
    spawn_free(&r);
  }
}

/* profile names FSDP's own copies beside the layer's kernels: FSDP2's on the compute stream,
 * FSDP1's side-stream work; nothing without FSDP's sharding. */
static void test_profile_fsdp_copies(void **state) {
  (void)state;
  const char *cases[] = {"--set parallelism.zero_stage=3",
                         "--set parallelism.zero_stage=3 --set stack.fsdp_version=1", ""};
  const char *says[] = {"FSDP2 (not listed, on the compute stream)", "FSDP1 (not listed)"};
  char args[512];
  for (int i = 0; i < 3; i++) {
    snprintf(args, sizeof args,
             "profile tests/data/good/tiny.yaml --platform platforms/dgx-h100.yaml --gpus 8 --tp 1 "
             "--pp 1 --set stack.framework=pytorch %s",
             cases[i]);
    spawn_result r = spawn_trainsim_ok(args);
    for (int k = 0; k < 2; k++)
      assert_true((strstr(r.out, says[k]) != NULL) == (i == k));
    spawn_free(&r);
  }
}

/* Context parallelism under framework pytorch plays PyTorch's ring attention, named on the
 * stack line and in result.json; Transformer Engine's, asked for, is faster (no eager merges,
 * its gradients in bf16). */
static void test_pytorch_ring_reported(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[512];
  assert_non_null(mkdtemp(dir));
  const char *rings[] = {"pytorch", "transformer_engine"};
  const char *says[] = {"ring attention as PyTorch's context_parallel runs it",
                        "ring attention as Transformer Engine runs it"};
  double t[2];
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args,
             "run tests/data/good/tiny.yaml --platform platforms/dgx-h100.yaml --gpus 8 --tp 1 "
             "--pp 1 --cp 2 --set stack.framework=pytorch%s --fidelity analytic --out %s",
             i ? " --set stack.cp_attention=transformer_engine" : "", dir);
    spawn_result r = spawn_trainsim_ok(args);
    assert_non_null(strstr(r.out, says[i]));
    spawn_free(&r);
    json *j = read_result(dir);
    t[i] = json_num(j, "metrics.iteration_s");
    json_free(j);
    char path[600], want[64];
    snprintf(path, sizeof path, "%s/result.json", dir);
    snprintf(want, sizeof want, "\"cp_attention\": \"%s\"", rings[i]);
    char *text = read_file(path, NULL);
    assert_non_null(strstr(text, want));
    free(text);
  }
  assert_true(t[0] > t[1]);
  assert_int_equal(remove_dir(dir), 0);
}

/* The power limit's clock (workloads/power.h) where the platform models it (the H100's), in
 * result.json, the summary and profile; nothing of it where the platform has none (Frontier's). */
static void test_power_limit_reported(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[512];
  assert_non_null(mkdtemp(dir));
  const char *platforms[] = {"--platform platforms/dgx-h100.yaml", ""};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, "run tests/data/good/tiny.yaml %s --gpus 8 --out %s", platforms[i],
             dir);
    spawn_result r = spawn_trainsim_ok(args);
    assert_true((strstr(r.out, "clock under the power limit") != NULL) == (i == 0));
    spawn_free(&r);
    json *j = read_result(dir);
    const json *clock = json_at(j, "simulation.power_limit_clock");
    assert_true((clock != NULL) == (i == 0));
    if (clock != NULL)
      assert_true(clock->number > 0.5 && clock->number <= 1);
    json_free(j);
    snprintf(args, sizeof args, "profile tests/data/good/tiny.yaml %s --gpus 8", platforms[i]);
    r = spawn_trainsim_ok(args);
    assert_true((strstr(r.out, "power limit: the GPU's work") != NULL) == (i == 0));
    spawn_free(&r);
  }
  assert_int_equal(remove_dir(dir), 0);
}

/* A study's point is what `run` gives for the same layout, overlap included: the study applies
 * the platform's overlap slowdown as run does (with gradient buckets, compute overlaps the
 * data-parallel reduction). */
static void test_study_point_is_run(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[512], path[600];
  assert_non_null(mkdtemp(dir));
  const char *layout =
      "tests/data/good/tiny.yaml --gpus 32 --dp-bucket-size 4MB --sequence-parallel "
      "--set parallelism.tp_comm_overlap=true";
  snprintf(args, sizeof args, "scale %s --weak --quiet --out %s", layout, dir);
  spawn_result r = spawn_trainsim_ok(args);
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/scale.csv", dir);
  char *csv = read_file(path, NULL);
  assert_non_null(csv);
  char *line = strchr(strchr(csv, '\n') + 1, '\n') + 1; /* past the comment and the header */
  long gpus = 0, tp, pp, dp, batch;
  double scaled = 0;
  assert_int_equal(
      sscanf(line, "\"tiny\",%ld,%ld,%ld,%ld,%ld,%lf", &gpus, &tp, &pp, &dp, &batch, &scaled), 6);
  free(csv);
  snprintf(args, sizeof args, "run %s --quiet --out %s", layout, dir);
  r = spawn_trainsim_ok(args);
  spawn_free(&r);
  json *j = read_result(dir);
  assert_rel(scaled, json_num(j, "metrics.iteration_s"), 1e-12);
  assert_true(json_num(j, "simulation.overlap_slowdown") > 0);
  json_free(j);
  assert_int_equal(remove_dir(dir), 0);
}

/* A strong-scaling study: scale.csv has one row per point, the batch stays, efficiency is
 * computed from the rows' own times; a rerun reuses the points and writes the same file. */
static void test_scale(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[256], path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(args, sizeof args, "scale tests/data/good/tiny.yaml --gpus 8,16,32 --strong --out %s",
           dir);
  spawn_result r = spawn_trainsim_ok(args);
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/scale.csv", dir);
  char *csv = read_file(path, NULL);
  assert_non_null(csv);
  long gpus[3], batch[3];
  double t[3], eff[3];
  char *line = strchr(strchr(csv, '\n') + 1, '\n') + 1; /* past the comment and the header */
  for (int i = 0; i < 3; i++) {
    long tp, pp, dp;
    double tok, tf, mp, mfu, gib;
    assert_int_equal(sscanf(line, "\"tiny\",%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf,%lf,%lf,%lf,%lf",
                            &gpus[i], &tp, &pp, &dp, &batch[i], &t[i], &tok, &tf, &mp, &mfu,
                            &eff[i], &gib),
                     12);
    assert_int_equal(gpus[i], 8L << i);
    assert_int_equal(batch[i], 32);
    assert_rel(eff[i], (t[0] * 8) / (t[i] * (double)gpus[i]), 1e-9);
    line = strchr(line, '\n') + 1;
  }
  assert_true(t[2] < t[0]); /* more GPUs, same batch: faster */
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  char *again = read_file(path, NULL);
  assert_string_equal(csv, again);
  free(again);
  /* A different study (no recomputation) must not reuse those points. */
  snprintf(args, sizeof args,
           "scale tests/data/good/tiny.yaml --gpus 8,16,32 --strong --recompute none --out %s",
           dir);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  char *other = read_file(path, NULL);
  double t0_other = 0;
  char *row = strchr(strchr(other, '\n') + 1, '\n') + 1;
  assert_int_equal(sscanf(row, "\"tiny\",%*d,%*d,%*d,%*d,%*d,%lf", &t0_other), 1);
  assert_true(t0_other < t[0]); /* no recomputation: a faster iteration */
  free(other);
  free(csv);
  assert_int_equal(remove_dir(dir), 0);
}

/* The first point's iteration time in dir/scale.csv. */
static double first_iteration(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/scale.csv", dir);
  char *csv = read_file(path, NULL);
  assert_non_null(csv);
  double t = 0;
  char *row = strchr(strchr(csv, '\n') + 1, '\n') + 1;
  assert_int_equal(sscanf(row, "\"tiny\",%*d,%*d,%*d,%*d,%*d,%lf", &t), 1);
  free(csv);
  return t;
}

/* Rewrites the first point's iteration time in dir/scale.csv to `value`. */
static void tamper(const char *dir, const char *value) {
  char path[600];
  snprintf(path, sizeof path, "%s/scale.csv", dir);
  char *csv = read_file(path, NULL);
  assert_non_null(csv);
  char *row = strchr(strchr(csv, '\n') + 1, '\n') + 1, *field = row;
  for (int i = 0; i < 6; i++)
    field = strchr(field, ',') + 1;
  char *end = strchr(field, ',');
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "%.*s%s%s", (int)(field - csv), csv, value, end);
  fclose(f);
  free(csv);
}

/* Reuse is keyed on the inputs' contents: a point is reused while nothing changed (the
 * tampered figure survives), recomputed when the platform file changes under the same name,
 * and never taken back when its figures are not ones a simulation produces (nan). */
static void test_scale_reuse_keyed(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[1400], platform[600];
  assert_non_null(mkdtemp(dir));
  platform_copy(dir, "frontier", NULL, platform, sizeof platform);
  snprintf(args, sizeof args,
           "scale tests/data/good/tiny.yaml --gpus 8,16 --strong --platform %s --out %s", platform,
           dir);
  spawn_result r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  double t = first_iteration(dir);
  tamper(dir, "12345");
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  assert_rel(first_iteration(dir), 12345, 1e-12); /* same inputs: reused */
  tamper(dir, "nan");
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  assert_rel(first_iteration(dir), t, 1e-12); /* not a simulated figure: recomputed */
  tamper(dir, "12345");
  char *text = read_file(platform, NULL);
  char *at = strstr(text, "hbm_bandwidth: 1.35TBps");
  assert_non_null(at);
  at[strlen("hbm_bandwidth: ")] = '0'; /* 0.35TBps: the same name, other contents */
  FILE *f = fopen(platform, "w");
  fputs(text, f);
  fclose(f);
  free(text);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  double slower = first_iteration(dir);
  assert_true(slower != 12345 && slower > t);
  assert_int_equal(remove_dir(dir), 0);
}

/* A node's ranks in a time window: only node 1's threads, only slices overlapping the window. */
static void test_timeline_subset(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", extra[256], path[600];
  assert_non_null(mkdtemp(dir));
  char *text = run_tiny(dir, "");
  json *res = json_parse(text);
  double t = json_num(res, "metrics.iteration_s");
  json_free(res);
  free(text);
  double w0 = 0.3 * t, w1 = 0.5 * t;
  snprintf(extra, sizeof extra, "--timeline --timeline-ranks node:1 --timeline-window %.9fs:%.9fs",
           w0, w1);
  free(run_tiny(dir, extra));
  snprintf(path, sizeof path, "%s/timeline.json", dir);
  text = read_file(path, NULL);
  json *j = json_parse(text);
  assert_non_null(j);
  const json *events = json_at(j, "traceEvents");
  long threads = 0, slices = 0;
  for (size_t i = 0; i < events->n; i++) {
    const json *e = events->items[i];
    assert_true(json_num(e, "pid") == 1); /* contiguous placement: ranks 8-15 on node 1 */
    if (strcmp(json_at(e, "ph")->string, "M") == 0) {
      threads += strcmp(json_at(e, "name")->string, "thread_name") == 0;
      continue;
    }
    slices++;
    double ts = json_num(e, "ts") * 1e-6, end = ts + json_num(e, "dur") * 1e-6;
    assert_true(end >= w0 - 1e-9 && ts <= w1 + 1e-9);
  }
  assert_int_equal(threads, 8 * 4);
  assert_true(slices > 100);
  json_free(j);
  free(text);
  unlink(path);
  assert_int_equal(remove_dir(dir), 0);
}

/* Weak scaling by model size: one workload file per GPU count, each keeps its batch; the
 * efficiency is the ratio of model TFLOPS per GPU; report.html is written. */
static void test_scale_by_model(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[256], path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(args, sizeof args,
           "scale tests/data/good/tiny.yaml tests/data/good/tiny-wide.yaml --gpus 32,64 --weak "
           "--report --out %s",
           dir);
  spawn_result r = spawn_trainsim_ok(args);
  assert_non_null(strstr(r.out, "weak scaling by model size"));
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/scale.csv", dir);
  char *csv = read_file(path, NULL);
  char *line = strchr(strchr(csv, '\n') + 1, '\n') + 1;
  long gpus[2], batch[2];
  double tf[2], eff[2];
  for (int i = 0; i < 2; i++) {
    char name[32];
    assert_int_equal(sscanf(line, "\"%31[^\"]\",%ld,%*d,%*d,%*d,%ld,%*f,%*f,%lf,%*f,%*f,%lf", name,
                            &gpus[i], &batch[i], &tf[i], &eff[i]),
                     5);
    assert_string_equal(name, i == 0 ? "tiny" : "tiny-wide");
    assert_int_equal(gpus[i], 32L << i);
    assert_int_equal(batch[i], 32); /* the model grew, not the batch */
    line = strchr(line, '\n') + 1;
  }
  assert_rel(eff[1], tf[1] / tf[0], 1e-12);
  free(csv);
  unlink(path);
  snprintf(path, sizeof path, "%s/report.html", dir);
  char *html = read_file(path, NULL);
  assert_non_null(html);
  assert_non_null(strstr(html, "weak scaling by model size"));
  free(html);
  assert_int_equal(remove_dir(dir), 0);
  /* Several files are weak scaling by model: one per GPU count, --weak only. */
  r = spawn_trainsim("scale tests/data/good/tiny.yaml tests/data/good/tiny-wide.yaml --gpus "
                     "32,64 --strong");
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "needs --weak and one file per GPU count"));
  spawn_free(&r);
}

/* The algorithm a collective ran is in result.json's counts and on its timeline span: data
 * parallelism over 32 GCDs on 4 nodes all-reduces hierarchically when asked, by ring when
 * asked, and auto picks one of the two. */
static void test_collective_algorithm(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", path[600];
  assert_non_null(mkdtemp(dir));
  const char *algos[] = {"hierarchical", "ring"};
  for (int i = 0; i < 2; i++) {
    char extra[256];
    snprintf(extra, sizeof extra,
             "--tp 1 --pp 1 --micro-batch-size 1 --zero-stage 0 --collectives %s --timeline "
             "--timeline-ranks 0",
             algos[i]);
    char *text = run_tiny(dir, extra);
    json *j = json_parse(text);
    assert_non_null(j);
    assert_true(json_num(j, "simulation.hierarchical_collectives") == (i == 0 ? 1 : 0));
    json_free(j);
    free(text);
    snprintf(path, sizeof path, "%s/timeline.json", dir);
    char *trace = read_file(path, NULL);
    char want[64];
    snprintf(want, sizeof want, "\"algorithm\":\"%s\"", algos[i]);
    assert_non_null(strstr(trace, want));
    free(trace);
    unlink(path);
  }
  assert_int_equal(remove_dir(dir), 0);
}

/* search: every estimated candidate fits in memory and is in search.csv, sorted by the
 * analytic estimate; the top ones were simulated (their figures of record the hybrid
 * fidelity's), and the simulation is never faster than the (contention-free) estimate; the
 * rest carry the estimate; a second search writes the same file. */
static void test_search(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[256], path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(args, sizeof args, "search tests/data/good/tiny.yaml --gpus 16 --top 2 --out %s", dir);
  spawn_result r = spawn_trainsim_ok(args);
  long tried = 0, estimated = 0;
  const char *summary = strstr(r.out, " candidates: ");
  assert_non_null(summary);
  while (summary > r.out && summary[-1] != '\n')
    summary--;
  assert_int_equal(sscanf(summary, "%ld candidates: %ld estimated", &tried, &estimated), 2);
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/search.csv", dir);
  char *csv = read_file(path, NULL);
  assert_non_null(csv);
  long rows = 0;
  double prev = 0;
  assert_true(strncmp(csv, "tp,pp,dp,", 9) == 0);
  assert_non_null(strstr(csv,
                         ",peak_memory_gib,fidelity,iteration_s,mfu_percent,megatron_percent,"
                         "analytic_iteration_s,analytic_mfu_percent,analytic_megatron_percent\n"));
  for (char *line = strchr(csv, '\n') + 1; *line != '\0'; line = strchr(line, '\n') + 1) {
    double est = 0, gib = 0, t = 0, mfu = 0, megatron = 0, est_mfu = 0, est_megatron = 0;
    char fidelity[16] = "";
    int got = sscanf(line,
                     "%*d,%*d,%*d,%*d,%*d,%*[a-z0-9-],%*[a-z],%*d,%*d,%*d,%*d,%lf,%15[a-z],%lf,%lf,"
                     "%lf,%lf,%lf,%lf",
                     &gib, fidelity, &t, &mfu, &megatron, &est, &est_mfu, &est_megatron);
    assert_int_equal(got, 8);
    assert_true(est >= prev && gib <= 64.0);
    assert_true(mfu > 0 && megatron > 0 && est_mfu > 0 && est_megatron > 0);
    if (rows < 2) {
      assert_string_equal(fidelity, "hybrid");
      assert_true(t >= est * (1 - 1e-9));
    } else {
      assert_string_equal(fidelity, "analytic");
      assert_true(t == est && mfu == est_mfu && megatron == est_megatron);
    }
    prev = est;
    rows++;
  }
  assert_int_equal(rows, estimated);
  assert_true(tried > estimated);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  char *again = read_file(path, NULL);
  assert_string_equal(csv, again);
  free(again);
  free(csv);
  /* When every candidate breaks a rule of the workload itself, the error names it. */
  snprintf(args, sizeof args,
           "search tests/data/good/tiny.yaml --gpus 16 --out %s --set stack.framework=pytorch "
           "--set stack.deepspeed_version=0.3.16",
           dir);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "no layout of 16 GPUs is feasible"));
  assert_non_null(strstr(r.err, "the first candidate refused: "));
  assert_non_null(strstr(r.err, "framework pytorch does not run DeepSpeed (its ZeRO-3 is FSDP)"));
  spawn_free(&r);
  assert_int_equal(remove_dir(dir), 0);
}

/* A search whose every layout the simulation refuses (here: FlashAttention-1 on an MI250X, which
 * no published figure prices) says why, with the first refusal's message, and exits 2. */
static void test_search_says_why_refused(void **state) {
  (void)state;
  spawn_result r =
      spawn_trainsim("search tests/data/bad/flash1-no-published-figure.yaml --gpus 8 --quiet");
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "are refused by the simulation"));
  assert_non_null(strstr(r.err, "the first candidate the simulation refused: "
                                "tests/data/bad/flash1-no-published-figure.yaml:7:40: error: "
                                "attention flash1"));
  spawn_free(&r);
}

/* search explores expert parallelism for a MoE model and context parallelism for 8k
 * sequences: search.csv's columns context and expert take values beyond 1. */
static void test_search_expert_context(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", args[256], path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(args, sizeof args,
           "search tests/data/good/tiny-moe.yaml --gpus 16 --top 1 --quiet --out %s", dir);
  spawn_result r = spawn_trainsim_ok(args);
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/search.csv", dir);
  char *csv = read_file(path, NULL);
  assert_non_null(csv);
  assert_non_null(strstr(csv, ",sequence_parallel,context,expert,"));
  long max_cp = 0, max_ep = 0;
  for (char *line = strchr(csv, '\n') + 1; *line != '\0'; line = strchr(line, '\n') + 1) {
    long cp = 0, ep = 0;
    assert_int_equal(
        sscanf(line, "%*d,%*d,%*d,%*d,%*d,%*[a-z0-9-],%*[a-z],%*d,%*d,%ld,%ld", &cp, &ep), 2);
    max_cp = cp > max_cp ? cp : max_cp;
    max_ep = ep > max_ep ? ep : max_ep;
  }
  assert_true(max_cp >= 2);
  assert_int_equal(max_ep, 8); /* up to one expert a rank */
  free(csv);
  assert_int_equal(remove_dir(dir), 0);
}

/* sweep: the same spec at --jobs 1 and --jobs 2 writes the same sweep.csv; a rerun reuses every
 * finished point; a point whose record is damaged runs again, and the rest are reused. */
static void test_sweep(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", spec[600], out1[600], out2[600], args[2000];
  assert_non_null(mkdtemp(dir));
  snprintf(spec, sizeof spec, "%s/spec.yaml", dir);
  FILE *f = fopen(spec, "w");
  assert_non_null(f);
  fputs("name: e2e\nworkload: tests/data/good/tiny.yaml\nfixed: {gpus: 16}\n"
        "grid:\n  tp: [1, 2]\n  micro_batch_size: [1, 2]\n"
        "  network.global_link.bandwidth: [25GBps, 12.5GBps]\n",
        f);
  fclose(f);
  snprintf(out1, sizeof out1, "%s/j1", dir);
  snprintf(out2, sizeof out2, "%s/j2", dir);
  snprintf(args, sizeof args, "sweep %s --jobs 1 --quiet --out %s", spec, out1);
  spawn_result r = spawn_trainsim_ok(args);
  assert_non_null(strstr(r.out, "8 points simulated now, 0 reused"));
  spawn_free(&r);
  snprintf(args, sizeof args, "sweep %s --jobs 2 --quiet --out %s", spec, out2);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  spawn_free(&r);
  char path1[700], path2[700];
  snprintf(path1, sizeof path1, "%s/sweep.csv", out1);
  snprintf(path2, sizeof path2, "%s/sweep.csv", out2);
  char *a = read_file(path1, NULL), *b = read_file(path2, NULL);
  assert_non_null(a);
  assert_non_null(b);
  assert_string_equal(a, b);
  long rows = 0;
  for (const char *c = strchr(a, '\n') + 1; *c != '\0'; c = strchr(c, '\n') + 1)
    rows += strstr(c, ",ok,") != NULL && strstr(c, ",ok,") < strchr(c, '\n');
  assert_int_equal(rows, 8);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "0 points simulated now, 8 reused"));
  spawn_free(&r);
  /* Damage one record: that point runs again, with the same result. */
  char points[700], cmd[2400];
  snprintf(points, sizeof points, "%s/points", out2);
  snprintf(cmd, sizeof cmd, "f=$(ls %s | head -1) && printf 'ok,1,2' > %s/$f", points, points);
  assert_int_equal(system(cmd), 0);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "1 points simulated now, 7 reused"));
  spawn_free(&r);
  char *c = read_file(path2, NULL);
  assert_string_equal(a, c);
  /* A whole line of impossible figures (NaN, inf, negative, MFU above 100%): the same. */
  snprintf(cmd, sizeof cmd,
           "f=$(ls %s | head -1) && echo "
           "'ok,32,2,4,4,32,0.042,nan,-5,250,inf,-3,nan,0,0,0,0,0,0,0,0,0,0.5' > %s/$f",
           points, points);
  assert_int_equal(system(cmd), 0);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "1 points simulated now, 7 reused"));
  spawn_free(&r);
  char *d = read_file(path2, NULL);
  assert_string_equal(a, d);
  free(d);
  /* Something else under a record's name stops the sweep before it simulates. */
  snprintf(cmd, sizeof cmd, "f=$(ls %s | head -1) && rm %s/$f && mkdir %s/$f", points, points,
           points);
  assert_int_equal(system(cmd), 0);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "is not a regular file"));
  assert_null(strstr(r.out, "simulated now"));
  spawn_free(&r);
  /* points/ as a link to somewhere else: refused too (trainsim writes into what it made). */
  snprintf(cmd, sizeof cmd, "rm -rf %s && ln -s %s %s", points, dir, points);
  assert_int_equal(system(cmd), 0);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "is not a directory"));
  spawn_free(&r);
  free(a);
  free(b);
  free(c);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir); /* nested: points/ in each output */
  assert_int_equal(system(cmd), 0);
}

/* Determinism beyond result.json: a benchmark table, flow fidelity, across nodes. */
static void test_bench_deterministic(void **state) {
  (void)state;
  const char *args = "bench allgather --gpus 24 --max-bytes 64MiB --fidelity flow";
  spawn_result a = spawn_trainsim(args), b = spawn_trainsim(args);
  assert_int_equal(a.status, 0);
  assert_int_equal(b.status, 0);
  assert_string_equal(a.out, b.out);
  spawn_free(&a);
  spawn_free(&b);
}

/* Frontier's derived network figures against REFERENCE.md section 2: a global blocking factor
 * of about 1.75, and bisection = 37 x 37 group pairs x 4 cables x 25 GB/s. */
/* A rerun into the same --out removes what it does not write (an earlier run's timeline and
 * report would otherwise sit beside the new result.json). */
static void test_no_stale_outputs(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", path[600];
  assert_non_null(mkdtemp(dir));
  free(run_tiny(dir, "--timeline --report"));
  const char *extra[] = {"timeline.json", "report.html"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, extra[i]);
    assert_int_equal(access(path, F_OK), 0);
  }
  free(run_tiny(dir, ""));
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, extra[i]);
    assert_int_not_equal(access(path, F_OK), 0);
  }
  assert_int_equal(remove_dir(dir), 0);
}

/* A user's own files in --out survive: one of an output's name stops the run (exit 2, the file
 * untouched), another name the run would only remove stays, and a link is refused. */
static void test_user_files_survive(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-e2e-XXXXXX", path[600], args[700];
  assert_non_null(mkdtemp(dir));
  const char *mine = "my own notes\n";
  snprintf(path, sizeof path, "%s/report.html", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(mine, f);
  fclose(f);
  free(run_tiny(dir, "")); /* a run without --report would remove its own report.html */
  char *text = read_file(path, NULL);
  assert_non_null(text);
  assert_string_equal(text, mine);
  free(text);
  snprintf(args, sizeof args, "run tests/data/good/tiny.yaml --gpus 32 --out %s --report", dir);
  spawn_result r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "exists and trainsim did not write it there"));
  spawn_free(&r);
  text = read_file(path, NULL);
  assert_string_equal(text, mine);
  free(text);
  /* trainsim's own files are rewritten and removed as before */
  free(run_tiny(dir, "--timeline"));
  free(run_tiny(dir, ""));
  snprintf(path, sizeof path, "%s/timeline.json", dir);
  assert_int_not_equal(access(path, F_OK), 0);
  /* a link where an output goes */
  snprintf(path, sizeof path, "%s/timeline.json", dir);
  assert_int_equal(symlink("/etc/hostname", path), 0);
  snprintf(args, sizeof args, "run tests/data/good/tiny.yaml --gpus 32 --out %s --timeline", dir);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "is a symbolic link"));
  spawn_free(&r);
  unlink(path);
  assert_int_equal(remove_dir(dir), 0);
}

static void test_platform_show(void **state) {
  (void)state;
  spawn_result r = spawn_trainsim("platform show");
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "machine: 9408 nodes x 8 GPUs = 75264 GPUs"));
  assert_non_null(strstr(r.out, "global taper : 1.75"));
  assert_non_null(strstr(r.out, "bisection    : 136.9 TB/s"));
  assert_non_null(strstr(r.out, "injection    : 9408 nodes x 100.0 GB/s = 940.8 TB/s"));
  assert_non_null(strstr(r.out, "diameter     : 3 switch-to-switch hops"));
  spawn_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_result_consistent),
                                     cmocka_unit_test(test_flow_close_to_aggregate),
                                     cmocka_unit_test(test_help_lists_every_flag),
                                     cmocka_unit_test(test_bench_against_link_graph),
                                     cmocka_unit_test(test_bench_library),
                                     cmocka_unit_test(test_bench_nccl_tests),
                                     cmocka_unit_test(test_import_hf),
                                     cmocka_unit_test(test_deepep_dispatch),
                                     cmocka_unit_test(test_fidelities_agree_in_node),
                                     cmocka_unit_test(test_bench_many_flows),
                                     cmocka_unit_test(test_bench_network_patterns),
                                     cmocka_unit_test(test_tp_comm_overlap_runs),
                                     cmocka_unit_test(test_platform_show),
                                     cmocka_unit_test(test_bench_deterministic),
                                     cmocka_unit_test(test_study_point_is_run),
                                     cmocka_unit_test(test_timeline),
                                     cmocka_unit_test(test_memory_command),
                                     cmocka_unit_test(test_unpadded_vocab),
                                     cmocka_unit_test(test_power_limit_reported),
                                     cmocka_unit_test(test_profile_fsdp_copies),
                                     cmocka_unit_test(test_pytorch_ring_reported),
                                     cmocka_unit_test(test_scale),
                                     cmocka_unit_test(test_timeline_subset),
                                     cmocka_unit_test(test_scale_by_model),
                                     cmocka_unit_test(test_collective_algorithm),
                                     cmocka_unit_test(test_search),
                                     cmocka_unit_test(test_search_says_why_refused),
                                     cmocka_unit_test(test_search_expert_context),
                                     cmocka_unit_test(test_sweep),
                                     cmocka_unit_test(test_no_stale_outputs),
                                     cmocka_unit_test(test_user_files_survive),
                                     cmocka_unit_test(test_scale_reuse_keyed)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
