/* benchmark: see benchmark.h. */
#include "benchmark.h"

#include <stdint.h>
#include <stdlib.h>

#include "../workloads/alloc.h"

#define MAX_SIZES 64

const char *const ts_benchmark_op_names[] = {"allreduce", "allgather", "reducescatter", "alltoall",
                                             "sendrecv",  "p2p",       "shift",         "uniform",
                                             "bisection", NULL};

ts_coll_op ts_benchmark_coll(ts_benchmark_op op) {
  static const ts_coll_op coll_of[] = {TS_COLL_ALLREDUCE, TS_COLL_ALLGATHER, TS_COLL_REDUCE_SCATTER,
                                       TS_COLL_ALLTOALL};
  TS_ASSERT(op <= TS_BENCHMARK_ALLTOALL);
  return coll_of[op];
}

double ts_benchmark_busbw_factor(ts_benchmark_op op, long n) {
  double p = (double)n;
  return op == TS_BENCHMARK_ALLREDUCE ? 2 * (p - 1) / p
         : op == TS_BENCHMARK_ALLGATHER || op == TS_BENCHMARK_REDUCESCATTER ||
                 op == TS_BENCHMARK_ALLTOALL
             ? (p - 1) / p
             : 1.0;
}

long ts_benchmark_shift_nodes(const ts_platform *pf) {
  return pf->topology == TS_TOPO_DRAGONFLY ? pf->net.switches_per_group * pf->net.nodes_per_switch
                                           : ts_platform_unit_nodes(pf);
}

/* Network patterns: the node each node sends to (partner) over n nodes, each node receiving
 * from exactly one. */
static void pattern_partners(const ts_platform *pf, ts_benchmark_op op, long n, long *partner) {
  if (op == TS_BENCHMARK_SHIFT) {
    long d = ts_benchmark_shift_nodes(pf);
    for (long i = 0; i < n; i++)
      partner[i] = (i + d) % n;
  } else if (op == TS_BENCHMARK_BISECTION) {
    for (long i = 0; i < n; i++)
      partner[i] = (i + n / 2) % n;
  } else { /* uniform: a random derangement (Sattolo's algorithm: one cycle, no fixed point),
            * from a fixed seed so that every run plays the same traffic */
    uint64_t x = 0x5eed;
    for (long i = 0; i < n; i++)
      partner[i] = i;
    for (long i = n - 1; i > 0; i--) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG */
      long j = (long)((x >> 33) % (uint64_t)i);
      long t = partner[i];
      partner[i] = partner[j];
      partner[j] = t;
    }
  }
}

void ts_benchmark_build(ts_benchmark_op op, long n_gpus, long from, long to, const ts_platform *pf,
                        const double *sizes, int n_sizes, ts_job *job) {
  TS_ASSERT(n_sizes <= MAX_SIZES);
  long n = op == TS_BENCHMARK_P2P ? 2 : n_gpus;
  ts_job_init(job, n);
  if (op == TS_BENCHMARK_P2P) {
    job->rank_gpu = ts_alloc(2, sizeof(long));
    job->rank_gpu[0] = from;
    job->rank_gpu[1] = to;
  }
  long *members = ts_alloc((size_t)n, sizeof(long));
  for (long r = 0; r < n; r++) {
    members[r] = r;
    job->rank_peer[r * TS_PEERS + TS_PEER_NEXT] = (r + 1) % n;
    job->rank_peer[r * TS_PEERS + TS_PEER_PREV] = (r + n - 1) % n;
  }
  if (op == TS_BENCHMARK_P2P) { /* one direction only */
    job->rank_peer[0 * TS_PEERS + TS_PEER_PREV] = -1;
    job->rank_peer[1 * TS_PEERS + TS_PEER_NEXT] = -1;
  }
  if (op >= TS_BENCHMARK_SHIFT) { /* GPU l of node i sends to GPU l of node partner[i] */
    long gpn = (long)pf->gpus_per_node, nodes = n / gpn;
    long *partner = ts_alloc((size_t)nodes, sizeof(long));
    pattern_partners(pf, op, nodes, partner);
    for (long i = 0; i < nodes; i++)
      for (long l = 0; l < gpn; l++) {
        job->rank_peer[(i * gpn + l) * TS_PEERS + TS_PEER_NEXT] = partner[i] * gpn + l;
        job->rank_peer[(partner[i] * gpn + l) * TS_PEERS + TS_PEER_PREV] = i * gpn + l;
      }
    free(partner);
  }
  long g = ts_job_add_group(job, members, (int)n);
  for (long r = 0; r < n; r++)
    job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_TP] = g;
  free(members);
  long send_ids[MAX_SIZES], recv_ids[MAX_SIZES], both_ids[MAX_SIZES];
  for (int k = 0; k < n_sizes; k++) {
    ts_event send = {
        .kind = TS_EV_SEND, .category = TS_CAT_PP, .peer = TS_PEER_NEXT, .bytes = sizes[k]};
    ts_event recv = {
        .kind = TS_EV_RECV, .category = TS_CAT_PP, .peer = TS_PEER_PREV, .bytes = sizes[k]};
    if (op <= TS_BENCHMARK_ALLTOALL) {
      ts_event c = {.kind = TS_EV_COLL,
                    .category = TS_CAT_TP,
                    .coll_op = (uint8_t)ts_benchmark_coll(op),
                    .group = TS_GROUP_TP,
                    .bytes = sizes[k]};
      both_ids[k] = ts_job_add_template(job, &c, 1);
    } else {
      ts_event pair[2] = {send, recv};
      both_ids[k] = ts_job_add_template(job, pair, 2);
      send_ids[k] = ts_job_add_template(job, &send, 1);
      recv_ids[k] = ts_job_add_template(job, &recv, 1);
    }
  }
  for (long r = 0; r < n; r++)
    ts_job_set_blocks(job, r, op == TS_BENCHMARK_P2P ? (r == 0 ? send_ids : recv_ids) : both_ids,
                      n_sizes);
}
