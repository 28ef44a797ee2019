/* engine: simulated times against closed forms. SimGrid runs once per process, so each case
 * simulates in a forked child that reports the iteration time through a pipe. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../sim/engine/engine.h"
#include "fixtures.h"

/* Four GPUs in a ring of 10 GB/s, 2 us links; nothing else. */
static const char ring4[] =
    "name: ring4\n"
    "gpu: {model: test, peak: {bf16: 100Tf}, hbm_capacity: 64GiB, hbm_bandwidth: 1TBps,\n"
    "      gemm_ceiling: 1, gemm_tile: {m: 128, n: 128}, compute_units: 100, kernel_launch: 0us}\n"
    "node:\n"
    "  gpus: 4\n"
    "  links:\n"
    "    - {gpus: [0, 1], bandwidth: 10GBps, latency: 2us}\n"
    "    - {gpus: [1, 2], bandwidth: 10GBps, latency: 2us}\n"
    "    - {gpus: [2, 3], bandwidth: 10GBps, latency: 2us}\n"
    "    - {gpus: [3, 0], bandwidth: 10GBps, latency: 2us}\n"
    "network: {topology: dragonfly, groups: 1, switches_per_group: 1, nodes_per_switch: 1,\n"
    "          global_links_per_group_pair: 1, local_link: {bandwidth: 1GBps, latency: 1us},\n"
    "          global_link: {bandwidth: 1GBps, latency: 1us}}\n"
    "nodes: 1\n";

typedef void (*build_fn)(ts_job *job);

/* Runs build's job on platform text in a child; returns the iteration time. */
/* Mean over ranks of the time spent waiting (bubble and idle) in the last simulate(). */
static double sim_waiting_s;
static double sim_overlap_slowdown; /* ts_engine_opts.overlap_slowdown of simulate() */
static long sim_merged_events; /* ts_sim_result.n_merged_events of the last simulate() */

static double simulate(const char *platform, build_fn build, ts_fidelity fidelity) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    static ts_platform pf;
    ts_err err = {0};
    double out[3] = {-1, 0, 0}; /* iteration, mean waiting, merged events */
    ts_job job;
    ts_sim_result res;
    ts_engine_opts opts = {.fidelity = fidelity, .overlap_slowdown = sim_overlap_slowdown};
    if (ts_platform_load_string("test.yaml", platform, &pf, &err) == 0) {
      build(&job);
      if (ts_engine_run(&pf, &job, &opts, &res, &err) == 0) {
        out[0] = res.iteration_s;
        out[2] = (double)res.n_merged_events;
        for (long r = 0; r < res.n_ranks; r++)
          out[1] += (res.ranks[r].time_s[TS_CAT_BUBBLE] + res.ranks[r].time_s[TS_CAT_IDLE]) /
                    (double)res.n_ranks;
      }
    }
    if (err.is_set)
      fprintf(stderr, "%s\n", err.msg);
    ssize_t n = write(fds[1], out, sizeof out);
    _exit(n == sizeof out ? 0 : 1);
  }
  close(fds[1]);
  double out[3] = {-1, 0, 0};
  assert_int_equal(read(fds[0], out, sizeof out), sizeof out);
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  double t = out[0];
  sim_waiting_s = out[1];
  sim_merged_events = (long)out[2];
  assert_true(t >= 0);
  return t;
}

static void one_event_each(ts_job *job, const ts_event *per_rank) {
  for (long r = 0; r < job->n_ranks; r++) {
    long tpl = ts_job_add_template(job, &per_rank[r], 1);
    ts_job_set_blocks(job, r, &tpl, 1);
  }
}

/* ---- one transfer over one link: latency + n / B ---- */

static void build_one_transfer(ts_job *job) {
  ts_job_init(job, 2);
  job->rank_peer[0 * TS_PEERS + TS_PEER_NEXT] = 1;
  job->rank_peer[1 * TS_PEERS + TS_PEER_PREV] = 0;
  ts_event ev[2] = {{.kind = TS_EV_SEND, .peer = TS_PEER_NEXT, .bytes = 3e8},
                    {.kind = TS_EV_RECV, .peer = TS_PEER_PREV, .bytes = 3e8}};
  one_event_each(job, ev);
}

static void test_one_transfer(void **state) {
  (void)state;
  assert_rel(simulate(ring4, build_one_transfer, TS_FIDELITY_AGGREGATE), 2e-6 + 3e8 / 10e9, 1e-9);
  assert_rel(simulate(ring4, build_one_transfer, TS_FIDELITY_ANALYTIC), 2e-6 + 3e8 / 10e9, 1e-9);
}

/* ---- two transfers sharing a link: each gets half ---- */

/* Ranks src[k] send 1e9 bytes to dst[k], k = 0, 1, on 4 ranks. */
static void two_transfers(ts_job *job, const long src[2], const long dst[2]) {
  ts_job_init(job, 4);
  ts_event ev[4];
  for (int k = 0; k < 2; k++) {
    job->rank_peer[src[k] * TS_PEERS + TS_PEER_NEXT] = dst[k];
    job->rank_peer[dst[k] * TS_PEERS + TS_PEER_PREV] = src[k];
    ev[src[k]] = (ts_event){.kind = TS_EV_SEND, .peer = TS_PEER_NEXT, .bytes = 1e9};
    ev[dst[k]] = (ts_event){.kind = TS_EV_RECV, .peer = TS_PEER_PREV, .bytes = 1e9};
  }
  one_event_each(job, ev);
}

static void build_shared_link(ts_job *job) {
  /* Shortest paths, lowest intermediate first: 0 -> 2 goes 0-1-2 and 3 -> 1 goes 3-0-1, so
   * both cross the 0->1 direction of the 0-1 link. */
  two_transfers(job, (const long[2]){0, 3}, (const long[2]){2, 1});
}

static void test_shared_link(void **state) {
  (void)state;
  /* Both routes have two 2 us links; sharing 10 GB/s, each moves 1e9 bytes at 5 GB/s. */
  assert_rel(simulate(ring4, build_shared_link, TS_FIDELITY_AGGREGATE), 4e-6 + 1e9 / 5e9, 1e-9);
  /* The analytic fidelity shares nothing: each transfer alone at 10 GB/s (optimistic). */
  assert_rel(simulate(ring4, build_shared_link, TS_FIDELITY_ANALYTIC), 4e-6 + 1e9 / 10e9, 1e-9);
}

/* ---- flows of different latencies share a link fairly ----
 * A chain 0 - 1 - 2 - 3 whose first link has 10 us: 0 -> 2 (12 us of latency) and 1 -> 3
 * (4 us) share the 1 -> 2 direction of 1 - 2. The second flows alone for 8 us (8e4 bytes at
 * 10 GB/s), then each gets 5 GB/s: it ends at 0.2 s - 4 us, and the first, alone again, at
 * 0.2 s + 4 us. CM02's own weighting (1 / latency, TCP's RTT-unfairness) would give the
 * shorter flow 3/4 of the link and end it at 0.133 s. */
static const char chain4[] =
    "name: chain4\n"
    "gpu: {model: test, peak: {bf16: 100Tf}, hbm_capacity: 64GiB, hbm_bandwidth: 1TBps,\n"
    "      gemm_ceiling: 1, gemm_tile: {m: 128, n: 128}, compute_units: 100, kernel_launch: 0us}\n"
    "node:\n"
    "  gpus: 4\n"
    "  links:\n"
    "    - {gpus: [0, 1], bandwidth: 10GBps, latency: 10us}\n"
    "    - {gpus: [1, 2], bandwidth: 10GBps, latency: 2us}\n"
    "    - {gpus: [2, 3], bandwidth: 10GBps, latency: 2us}\n"
    "network: {topology: dragonfly, groups: 1, switches_per_group: 1, nodes_per_switch: 1,\n"
    "          global_links_per_group_pair: 1, local_link: {bandwidth: 1GBps, latency: 1us},\n"
    "          global_link: {bandwidth: 1GBps, latency: 1us}}\n"
    "nodes: 1\n";

static void build_unequal_latencies(ts_job *job) {
  two_transfers(job, (const long[2]){0, 1}, (const long[2]){2, 3});
}

static void test_fair_share(void **state) {
  (void)state;
  assert_rel(simulate(chain4, build_unequal_latencies, TS_FIDELITY_AGGREGATE), 0.2 + 4e-6, 1e-9);
  /* Ranks 1 and 3 end 8 us before 0 and 2: idle 8 us for half the ranks. */
  assert_true(fabs(sim_waiting_s - 4e-6) < 1e-10);
}

/* ---- ring all-reduce: 2 (p - 1) (alpha + n / (p B)) per ring ----
 * ring4's links run both ways, so its collectives take two rings, one each way (coll.c:
 * node_rings, as NCCL and RCCL build their channels), each carrying half the bytes: 2 (p - 1)
 * (alpha + n / (2 p B)). */

static ts_coll_op ring_op = TS_COLL_ALLREDUCE;

static void build_ring(ts_job *job) {
  ts_job_init(job, 4);
  long members[4] = {0, 1, 2, 3};
  long g = ts_job_add_group(job, members, 4);
  for (long r = 0; r < 4; r++)
    job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_TP] = g;
  ts_event ev = {.kind = TS_EV_COLL,
                 .category = TS_CAT_TP,
                 .coll_op = (uint8_t)ring_op,
                 .group = TS_GROUP_TP,
                 .bytes = 4e8};
  ts_event all[4] = {ev, ev, ev, ev};
  one_event_each(job, all);
}

static void test_ring_allreduce(void **state) {
  (void)state;
  double p = 4, alpha = 2e-6, B = 10e9, n = 4e8;
  double expect = 2 * (p - 1) * (alpha + n / 2 / (p * B));
  ring_op = TS_COLL_ALLREDUCE;
  double agg = simulate(ring4, build_ring, TS_FIDELITY_AGGREGATE);
  double flow = simulate(ring4, build_ring, TS_FIDELITY_FLOW);
  double analytic = simulate(ring4, build_ring, TS_FIDELITY_ANALYTIC);
  double hybrid = simulate(ring4, build_ring, TS_FIDELITY_HYBRID); /* a group inside a node */
  assert_rel(agg, expect, 1e-9);
  assert_rel(flow, expect, 1e-9);
  assert_rel(analytic, expect, 1e-9);
  assert_rel(hybrid, expect, 1e-9);
  ring_op = TS_COLL_REDUCE_SCATTER;
  assert_rel(simulate(ring4, build_ring, TS_FIDELITY_FLOW), expect / 2, 1e-9);
  ring_op = TS_COLL_ALLGATHER;
  assert_rel(simulate(ring4, build_ring, TS_FIDELITY_AGGREGATE), expect / 2, 1e-9);
}

/* ---- the communication stream: collectives overlapped with compute ---- */

/* Each of 4 ranks posts an all-reduce of 4e8 bytes (T_ar = 2 (p - 1)(alpha + n / (2 p B)) =
 * 0.030012 s on ring4's two rings), computes overlap_s, then waits: the iteration is max(overlap,
 * T_ar) and only the excess shows as exposed dp time. A second variant posts two all-reduces and
 * waits keeping one unfinished: the single stream runs them in order, so that wait ends with
 * the first, and a final wait with the second. */
static double overlap_s, stream_work_s; /* stream_work_s: the post's own work after it */
static bool is_two_posted;

static void build_overlap(ts_job *job) {
  ts_job_init(job, 4);
  long members[4] = {0, 1, 2, 3};
  long g = ts_job_add_group(job, members, 4);
  for (long r = 0; r < 4; r++)
    job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_DP] = g;
  ts_event post = {.kind = TS_EV_COLL,
                   .category = TS_CAT_DP,
                   .coll_op = TS_COLL_ALLREDUCE,
                   .group = TS_GROUP_DP,
                   .is_async = 1,
                   .time_s = stream_work_s,
                   .bytes = 4e8};
  ts_event work = {.kind = TS_EV_COMPUTE, .category = TS_CAT_COMPUTE, .time_s = overlap_s};
  ts_event wait_one = {.kind = TS_EV_WAIT, .category = TS_CAT_DP, .wait_keep = 1};
  ts_event wait_all = {.kind = TS_EV_WAIT, .category = TS_CAT_DP, .wait_keep = 0};
  ts_event one[3] = {post, work, wait_all};
  ts_event two[5] = {post, post, wait_one, work, wait_all};
  for (long r = 0; r < 4; r++) {
    long tpl = is_two_posted ? ts_job_add_template(job, two, 5) : ts_job_add_template(job, one, 3);
    ts_job_set_blocks(job, r, &tpl, 1);
  }
}

static void test_overlap(void **state) {
  (void)state;
  double ar = 2 * 3 * (2e-6 + 4e8 / 2 / (4 * 10e9));
  is_two_posted = false;
  overlap_s = 0.1; /* longer than the all-reduce: hidden */
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_AGGREGATE), 0.1, 1e-9);
  assert_true(sim_waiting_s == 0);
  overlap_s = 0.02; /* shorter: the wait exposes the rest */
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_FLOW), ar, 1e-9);
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_ANALYTIC), ar, 1e-9);
  is_two_posted = true; /* wait for the first, compute 0.02 s beside the second, wait */
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_AGGREGATE), 2 * ar, 1e-9);
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_ANALYTIC), 2 * ar, 1e-9);
  overlap_s = 0.1;
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_AGGREGATE), ar + 0.1, 1e-9);
  /* Compute that starts beside a running collective is slowed by the option's factor, at every
   * fidelity (the analytic one did not until 2026-12-06). */
  is_two_posted = false;
  sim_overlap_slowdown = 0.5;
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_AGGREGATE), 0.15, 1e-9);
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_ANALYTIC), 0.15, 1e-9);
  sim_overlap_slowdown = 0;
  /* A post with work of its stream's own after it (PyTorch's list all-gather copying its flat
   * result out): the wait ends after both. */
  overlap_s = 0.02;
  stream_work_s = 0.005;
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_AGGREGATE), ar + 0.005, 1e-9);
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_ANALYTIC), ar + 0.005, 1e-9);
  assert_rel(simulate(ring4, build_overlap, TS_FIDELITY_HYBRID), ar + 0.005, 1e-9);
  stream_work_s = 0;
}

/* ---- merged runs: a tensor-parallel pair that a pipeline feeds unevenly ---- */

/* Ranks 2 and 3 each send 1e7 bytes to ranks 0 and 1, over links of 1 and 10 GB/s; ranks 0 and 1
 * (a tensor-parallel pair on a 10 GB/s link) then compute 1 ms, all-reduce 4e8 bytes, compute
 * 2 ms, all-reduce again and compute 3 ms. The pair's first all-reduce starts when the slower
 * message has arrived and rank 0 computed: 2 us + 1e7 / 1e9 + 1 ms; each all-reduce takes
 * 2 (alpha + n / (2 B)). With merged_prologue, both ranks of the pair first post an all-reduce
 * to their stream and wait for it after the run: compute is slowed by overlap_slowdown while it
 * runs, so the engine must play the run event by event. */
static const char skew4[] =
    "name: skew4\n"
    "gpu: {model: test, peak: {bf16: 100Tf}, hbm_capacity: 64GiB, hbm_bandwidth: 1TBps,\n"
    "      gemm_ceiling: 1, gemm_tile: {m: 128, n: 128}, compute_units: 100, kernel_launch: 0us}\n"
    "node:\n"
    "  gpus: 4\n"
    "  links:\n"
    "    - {gpus: [0, 1], bandwidth: 10GBps, latency: 2us}\n"
    "    - {gpus: [2, 0], bandwidth: 1GBps, latency: 2us}\n"
    "    - {gpus: [3, 1], bandwidth: 10GBps, latency: 2us}\n"
    "network: {topology: dragonfly, groups: 1, switches_per_group: 1, nodes_per_switch: 1,\n"
    "          global_links_per_group_pair: 1, local_link: {bandwidth: 1GBps, latency: 1us},\n"
    "          global_link: {bandwidth: 1GBps, latency: 1us}}\n"
    "nodes: 1\n";

static bool is_stream_posted; /* build_skewed_pair: the pair posts an all-reduce first */

static void build_skewed_pair(ts_job *job) {
  ts_job_init(job, 4);
  long pair[2] = {0, 1};
  long tp = ts_job_add_group(job, pair, 2), dp = ts_job_add_group(job, pair, 2);
  for (long r = 0; r < 2; r++) {
    job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_TP] = tp;
    job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_DP] = dp;
    job->rank_peer[r * TS_PEERS + TS_PEER_PREV] = r + 2;
    job->rank_peer[(r + 2) * TS_PEERS + TS_PEER_NEXT] = r;
  }
  ts_event ar = {.kind = TS_EV_COLL,
                 .category = TS_CAT_TP,
                 .coll_op = TS_COLL_ALLREDUCE,
                 .group = TS_GROUP_TP,
                 .bytes = 4e8};
  ts_event post = {.kind = TS_EV_COLL,
                   .category = TS_CAT_DP,
                   .coll_op = TS_COLL_ALLREDUCE,
                   .group = TS_GROUP_DP,
                   .is_async = 1,
                   .bytes = 4e8};
  ts_event pair_events[8] = {post,
                             {.kind = TS_EV_RECV, .peer = TS_PEER_PREV, .bytes = 1e7},
                             {.kind = TS_EV_COMPUTE, .category = TS_CAT_COMPUTE, .time_s = 1e-3},
                             ar,
                             {.kind = TS_EV_COMPUTE, .category = TS_CAT_COMPUTE, .time_s = 2e-3},
                             ar,
                             {.kind = TS_EV_COMPUTE, .category = TS_CAT_COMPUTE, .time_s = 3e-3},
                             {.kind = TS_EV_WAIT, .category = TS_CAT_DP, .wait_keep = 0}};
  ts_event send = {.kind = TS_EV_SEND, .peer = TS_PEER_NEXT, .bytes = 1e7};
  long feeder = ts_job_add_template(job, &send, 1);
  long fed = is_stream_posted ? ts_job_add_template(job, pair_events, 8)
                              : ts_job_add_template(job, pair_events + 1, 6);
  for (long r = 0; r < 4; r++)
    ts_job_set_blocks(job, r, r < 2 ? &fed : &feeder, 1);
}

static void test_merged_runs(void **state) {
  (void)state;
  double ar = 2 * (2e-6 + 4e8 / (2 * 10e9)), arrival = 2e-6 + 1e7 / 1e9;
  double expect = arrival + 1e-3 + ar + 2e-3 + ar + 3e-3;
  is_stream_posted = false;
  assert_rel(simulate(skew4, build_skewed_pair, TS_FIDELITY_AGGREGATE), expect, 1e-9);
  assert_int_equal(sim_merged_events, 0); /* played collectives: nothing merges */
  assert_rel(simulate(skew4, build_skewed_pair, TS_FIDELITY_HYBRID), expect, 1e-9);
  assert_int_equal(sim_merged_events, 2 * 5); /* compute, all-reduce, ... on each of the pair */
  /* The pair ends together (no idle time); the feeders idle from their send's end. */
  assert_rel(sim_waiting_s, (2 * expect - arrival - (2e-6 + 1e7 / 10e9)) / 4, 1e-9);
  /* The stream's all-reduce (as long as the pair's, from 0) still runs when the run starts:
   * its first compute is slowed by half, the later ones (after the first all-reduce) not. */
  is_stream_posted = true;
  sim_overlap_slowdown = 0.5;
  assert_rel(simulate(skew4, build_skewed_pair, TS_FIDELITY_HYBRID), expect + 0.5e-3, 1e-9);
  assert_int_equal(sim_merged_events, 0);
  sim_overlap_slowdown = 0;
  is_stream_posted = false;
}

/* ---- pipelines with uniform stages: (m + p - 1)(t_f + t_b) ---- */

static ts_schedule_kind pipe_kind = TS_SCHED_1F1B;
static long pipe_chunks = 1;
#define PIPE_P 4
#define PIPE_M 8
#define T_F 0.003
#define T_B 0.005
#define T_W 0.002 /* zb-h1: the part of T_B that is weight gradients */
#define PIPE_M_DUAL 12 /* dualpipe: at least twice the ranks, even */

/* A pipeline chunk's forward (f) and backward (b) events: its input received from `up` when
 * has_input, its output sent `down` when has_output, the gradients the other way; their
 * counts in *nf, *nb. */
static double pipe_bytes; /* each pipeline message's bytes (0: free) */
static bool pipe_p2p_overlapped; /* build_pipeline's job->is_p2p_overlapped */

static void chunk_events(bool has_input, bool has_output, uint8_t up, uint8_t down, double t_f,
                         double t_b, ts_event f[3], int *nf, ts_event b[3], int *nb) {
  *nf = *nb = 0;
  if (has_input)
    f[(*nf)++] = (ts_event){.kind = TS_EV_RECV, .peer = up, .bytes = pipe_bytes};
  f[(*nf)++] = (ts_event){.kind = TS_EV_COMPUTE, .time_s = t_f};
  if (has_output) {
    f[(*nf)++] = (ts_event){.kind = TS_EV_SEND, .peer = down, .bytes = pipe_bytes};
    b[(*nb)++] = (ts_event){.kind = TS_EV_RECV, .peer = down, .bytes = pipe_bytes};
  }
  b[(*nb)++] = (ts_event){.kind = TS_EV_COMPUTE, .time_s = t_b};
  if (has_input)
    b[(*nb)++] = (ts_event){.kind = TS_EV_SEND, .peer = up, .bytes = pipe_bytes};
}

/* PIPE_P stages of pipe_chunks chunks each (chunk c of stage s is virtual stage c P + s, the
 * pipeline wrapping from the last stage to the first); a chunk's forward takes T_F / v, its
 * backward T_B / v. */
static void build_pipeline(ts_job *job) {
  bool zb = pipe_kind == TS_SCHED_ZB_H1;
  long v = pipe_chunks, n_steps = (zb ? 3 : 2) * PIPE_M * v;
  ts_job_init(job, PIPE_P);
  job->is_pipeline_wrapped = v > 1;
  job->is_p2p_overlapped = pipe_p2p_overlapped;
  for (long s = 0; s < PIPE_P; s++) {
    if (s > 0 || v > 1)
      job->rank_peer[s * TS_PEERS + TS_PEER_PREV] = (s + PIPE_P - 1) % PIPE_P;
    if (s < PIPE_P - 1 || v > 1)
      job->rank_peer[s * TS_PEERS + TS_PEER_NEXT] = (s + 1) % PIPE_P;
    long fwd[4], bwd[4];
    for (long c = 0; c < v; c++) {
      long vstage = c * PIPE_P + s;
      bool first = vstage == 0, last = vstage == PIPE_P * v - 1;
      ts_event f[3], b[3];
      int nf, nb;
      chunk_events(!first, !last, TS_PEER_PREV, TS_PEER_NEXT, T_F / (double)v,
                   (zb ? T_B - T_W : T_B) / (double)v, f, &nf, b, &nb);
      fwd[c] = ts_job_add_template(job, f, nf);
      bwd[c] = ts_job_add_template(job, b, nb);
    }
    ts_event w = {.kind = TS_EV_COMPUTE, .time_s = T_W};
    long wgrad = ts_job_add_template(job, &w, 1);
    long steps[3 * PIPE_M * 4], ids[3 * PIPE_M * 4];
    ts_schedule_order(pipe_kind, PIPE_P, v, s, PIPE_M, steps);
    for (long k = 0; k < n_steps; k++) {
      long c = ts_schedule_step_chunk(steps[k], v);
      char pass = ts_schedule_step_pass(steps[k]);
      ids[k] = pass == 'F' ? fwd[c] : pass == 'B' ? bwd[c] : wgrad;
    }
    ts_job_set_blocks(job, s, ids, (int)n_steps);
  }
}

/* PIPE_P ranks in a line, messages flowing both ways as soon as sent (dualpipe, zb-v). */
static void chain(ts_job *job) {
  ts_job_init(job, PIPE_P);
  job->is_pipeline_wrapped = true;
  for (long s = 0; s < PIPE_P; s++) {
    if (s > 0)
      job->rank_peer[s * TS_PEERS + TS_PEER_PREV] = s - 1;
    if (s < PIPE_P - 1)
      job->rank_peer[s * TS_PEERS + TS_PEER_NEXT] = s + 1;
  }
}

/* dualpipe over PIPE_P ranks: chunk 0 of rank s is stage s of the pipeline going forward,
 * chunk 1 stage PIPE_P - 1 - s of the one coming back; a forward takes T_F, a whole backward
 * T_B, its input gradients T_B - T_W and its weight gradients T_W; a forward-with-backward step
 * both, one after the other (no all-to-all to hide). */
static void build_dualpipe(ts_job *job) {
  chain(job);
  for (long s = 0; s < PIPE_P; s++) {
    long fwd[2], bwd[2], bin[2], fb[2];
    ts_event f[2][3], b[2][3], bi[2][3];
    int nf[2], nb[2];
    for (int c = 0; c < 2; c++) {
      bool first = c == 0 ? s == 0 : s == PIPE_P - 1, last = c == 0 ? s == PIPE_P - 1 : s == 0;
      uint8_t up = c == 0 ? TS_PEER_PREV : TS_PEER_NEXT,
              down = c == 0 ? TS_PEER_NEXT : TS_PEER_PREV;
      chunk_events(!first, !last, up, down, T_F, T_B, f[c], &nf[c], b[c], &nb[c]);
      memcpy(bi[c], b[c], sizeof b[c]);
      for (int e = 0; e < nb[c]; e++)
        if (bi[c][e].kind == TS_EV_COMPUTE)
          bi[c][e].time_s = T_B - T_W;
      fwd[c] = ts_job_add_template(job, f[c], nf[c]);
      bwd[c] = ts_job_add_template(job, b[c], nb[c]);
      bin[c] = ts_job_add_template(job, bi[c], nb[c]);
    }
    for (int c = 0; c < 2; c++) { /* receives, forward, backward, sends */
      ts_event both[6];
      int n = 0, o = 1 - c;
      for (int e = 0; e < nf[c]; e++)
        if (f[c][e].kind == TS_EV_RECV)
          both[n++] = f[c][e];
      for (int e = 0; e < nb[o]; e++)
        if (b[o][e].kind == TS_EV_RECV)
          both[n++] = b[o][e];
      both[n++] = (ts_event){.kind = TS_EV_COMPUTE, .time_s = T_F + T_B};
      for (int e = 0; e < nf[c]; e++)
        if (f[c][e].kind == TS_EV_SEND)
          both[n++] = f[c][e];
      for (int e = 0; e < nb[o]; e++)
        if (b[o][e].kind == TS_EV_SEND)
          both[n++] = b[o][e];
      fb[c] = ts_job_add_template(job, both, n);
    }
    ts_event w = {.kind = TS_EV_COMPUTE, .time_s = T_W};
    long wgrad = ts_job_add_template(job, &w, 1);
    long steps[3 * 2 * PIPE_M_DUAL], ids[3 * 2 * PIPE_M_DUAL];
    long n = ts_schedule_order(TS_SCHED_DUALPIPE, PIPE_P, 2, s, PIPE_M_DUAL, steps);
    for (long k = 0; k < n; k++) {
      long c = ts_schedule_step_chunk(steps[k], 2);
      char pass = ts_schedule_step_pass(steps[k]);
      ids[k] = pass == 'F'              ? fwd[c]
               : pass == 'X'            ? fb[c]
               : pass == 'W'            ? wgrad
               : steps[k] >= TS_STEP_BI ? bin[c]
                                        : bwd[c];
    }
    ts_job_set_blocks(job, s, ids, (int)n);
  }
}

/* zb-v over PIPE_P ranks: chunk 0 of rank s is virtual stage s, chunk 1 stage 2 PIPE_P - 1 - s
 * (the V turns on the last rank, which hands its chunk 0's output to its chunk 1 in place); each
 * chunk's forward, input gradients and weight gradients take T_V. */
#define T_V 0.001
static void build_zbv(ts_job *job) {
  chain(job);
  for (long s = 0; s < PIPE_P; s++) {
    long fwd[2], bin[2];
    for (int c = 0; c < 2; c++) {
      bool first = c == 0 && s == 0, last = c == 1 && s == 0;
      bool turn = s == PIPE_P - 1; /* chunk 0 feeds chunk 1 on this rank */
      uint8_t up = c == 0 ? TS_PEER_PREV : TS_PEER_NEXT,
              down = c == 0 ? TS_PEER_NEXT : TS_PEER_PREV;
      ts_event f[3], b[3];
      int nf, nb;
      chunk_events(!first && !(turn && c == 1), !last && !(turn && c == 0), up, down, T_V, T_V, f,
                   &nf, b, &nb);
      fwd[c] = ts_job_add_template(job, f, nf);
      bin[c] = ts_job_add_template(job, b, nb);
    }
    ts_event w = {.kind = TS_EV_COMPUTE, .time_s = T_V};
    long wgrad = ts_job_add_template(job, &w, 1);
    long steps[3 * 2 * PIPE_M_DUAL], ids[3 * 2 * PIPE_M_DUAL];
    long n = ts_schedule_order(TS_SCHED_ZB_V, PIPE_P, 2, s, PIPE_M_DUAL, steps);
    for (long k = 0; k < n; k++) {
      char pass = ts_schedule_step_pass(steps[k]);
      long c = ts_schedule_step_chunk(steps[k], 2);
      ids[k] = pass == 'F' ? fwd[c] : pass == 'B' ? bin[c] : wgrad;
    }
    ts_job_set_blocks(job, s, ids, (int)n);
  }
}

/* Zero-byte messages on a zero-latency node: communication takes no time. */
static const char *instant_links(void) {
  static char text[sizeof ring4 + 64];
  char *p = text;
  for (const char *q = ring4; *q; q++)
    *p++ = *q;
  *p = '\0';
  for (char *l = strstr(text, "latency: 2us"); l != NULL; l = strstr(l, "latency: 2us"))
    memcpy(l, "latency: 0us", 12);
  return text;
}

/* Uniform stages, free communication: (m + p - 1)(t_f + t_b) for 1F1B and GPipe, and
 * (m + (p - 1) / v)(t_f + t_b) interleaved (Narayanan et al. SC'21, section 2.2); the bubble
 * measured on each rank (waiting, before and after its work) is (p - 1) / (v m) of the work. */
static void test_pipelines(void **state) {
  (void)state;
  double work = PIPE_M * (T_F + T_B), expect = (PIPE_M + PIPE_P - 1) * (T_F + T_B);
  pipe_kind = TS_SCHED_1F1B;
  assert_rel(simulate(instant_links(), build_pipeline, TS_FIDELITY_AGGREGATE), expect, 1e-9);
  assert_rel(sim_waiting_s / work, (PIPE_P - 1.0) / PIPE_M, 1e-9);
  assert_rel(simulate(instant_links(), build_pipeline, TS_FIDELITY_ANALYTIC), expect, 1e-9);
  assert_rel(sim_waiting_s / work, (PIPE_P - 1.0) / PIPE_M, 1e-9);
  pipe_kind = TS_SCHED_GPIPE;
  assert_rel(simulate(instant_links(), build_pipeline, TS_FIDELITY_AGGREGATE), expect, 1e-9);
  pipe_kind = TS_SCHED_INTERLEAVED;
  for (pipe_chunks = 2; pipe_chunks <= 4; pipe_chunks++) {
    double v = (double)pipe_chunks;
    for (int f = TS_FIDELITY_AGGREGATE; f <= TS_FIDELITY_ANALYTIC; f += 2) {
      assert_rel(simulate(instant_links(), build_pipeline, (ts_fidelity)f),
                 (PIPE_M + (PIPE_P - 1) / v) * (T_F + T_B), 1e-9);
      assert_rel(sim_waiting_s / work, (PIPE_P - 1.0) / (v * PIPE_M), 1e-9);
    }
  }
  pipe_chunks = 1;
  /* zb-h1 (Qi et al., ICLR 2024, section 3.1): the bubble (p - 1)(t_f + t_b - t_w) of the
   * backward's input-gradient part t_b, against 1F1B's (p - 1)(t_f + t_b + t_w). */
  pipe_kind = TS_SCHED_ZB_H1;
  double b = T_B - T_W;
  for (int f = TS_FIDELITY_AGGREGATE; f <= TS_FIDELITY_ANALYTIC; f += 2) {
    assert_rel(simulate(instant_links(), build_pipeline, (ts_fidelity)f),
               work + (PIPE_P - 1) * (T_F + b - T_W), 1e-9);
    assert_rel(sim_waiting_s / work, (PIPE_P - 1.0) * (T_F + b - T_W) / work, 1e-9);
  }
  pipe_kind = TS_SCHED_1F1B;
  /* dualpipe (DeepSeek-V3 technical report, Table 2): the bubble (p/2 - 1)(F&B + B - 3W), F&B
   * the forward-with-backward step (here F + B: nothing to overlap), B the whole backward. */
  double work_dual = PIPE_M_DUAL * (T_F + T_B);
  double bubble_dual = (PIPE_P / 2 - 1) * ((T_F + T_B) + T_B - 3 * T_W);
  for (int f = TS_FIDELITY_AGGREGATE; f <= TS_FIDELITY_ANALYTIC; f += 2)
    assert_rel(simulate(instant_links(), build_dualpipe, (ts_fidelity)f), work_dual + bubble_dual,
               1e-9);
  /* zb-v with equal passes: the bound no schedule beats, the last rank's wait for its first
   * input down the p - 1 chunks before it, and no other bubble (the zero bubble the V schedule
   * is built for when T_F = T_B = T_W). */
  for (int f = TS_FIDELITY_AGGREGATE; f <= TS_FIDELITY_ANALYTIC; f += 2)
    assert_rel(simulate(instant_links(), build_zbv, (ts_fidelity)f),
               PIPE_M_DUAL * 2 * 3 * T_V + (PIPE_P - 1) * T_V, 1e-9);
}

/* Megatron's overlap_p2p_comm: an interleaved pipeline whose messages take 1 ms (10 MB on
 * 10 GB/s links) against chunks of 1.5 ms forward and 2.5 ms backward. Completing a rank's
 * sends at its next receive exposes their time; waiting for them only after the next chunk's
 * compute hides them under it: faster, but never faster than free communication. The
 * analytic fidelity never waits for sends: the same either way. */
static void test_overlap_p2p(void **state) {
  (void)state;
  pipe_kind = TS_SCHED_INTERLEAVED;
  pipe_chunks = 2;
  pipe_bytes = 10e6;
  double free_comm = (PIPE_M + (PIPE_P - 1) / 2.0) * (T_F + T_B);
  pipe_p2p_overlapped = false;
  double blocking = simulate(ring4, build_pipeline, TS_FIDELITY_AGGREGATE);
  double analytic = simulate(ring4, build_pipeline, TS_FIDELITY_ANALYTIC);
  pipe_p2p_overlapped = true;
  double overlapped = simulate(ring4, build_pipeline, TS_FIDELITY_AGGREGATE);
  assert_true(overlapped < blocking - 0.5 * PIPE_M * 1e-3); /* most of a send a microbatch */
  assert_true(overlapped > free_comm);
  assert_rel(simulate(ring4, build_pipeline, TS_FIDELITY_ANALYTIC), analytic, 1e-12);
  pipe_p2p_overlapped = false;
  pipe_bytes = 0;
  pipe_chunks = 1;
  pipe_kind = TS_SCHED_1F1B;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_transfer), cmocka_unit_test(test_shared_link),
      cmocka_unit_test(test_fair_share),   cmocka_unit_test(test_ring_allreduce),
      cmocka_unit_test(test_overlap),      cmocka_unit_test(test_merged_runs),
      cmocka_unit_test(test_pipelines),    cmocka_unit_test(test_overlap_p2p)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
