/* benchmark: the jobs of `trainsim bench`, simulated nccl-tests / rccl-tests and network
 * patterns, built as programs the job pipeline plays (simulate.h: ts_simulate_job).
 *
 * A job holds one block per message size, so that each size's time is when the last rank is
 * through its block (the engine's block ends). Collectives run on the group of all ranks;
 * sendrecv is a ring (each rank sends to the next, receives from the previous); p2p one
 * direction between two GPUs; the network patterns send from GPU l of node i to GPU l of node
 * partner(i), every node receiving from exactly one.
 */
#ifndef TS_BENCHMARK_H
#define TS_BENCHMARK_H

#include "../workloads/schedule.h"
#include "network/platform.h"

typedef enum ts_benchmark_op {
  TS_BENCHMARK_ALLREDUCE,
  TS_BENCHMARK_ALLGATHER,
  TS_BENCHMARK_REDUCESCATTER,
  TS_BENCHMARK_ALLTOALL,
  TS_BENCHMARK_SENDRECV,
  TS_BENCHMARK_P2P,
  TS_BENCHMARK_SHIFT, /* network patterns from here on */
  TS_BENCHMARK_UNIFORM,
  TS_BENCHMARK_BISECTION
} ts_benchmark_op;
/* "allreduce", "allgather", "reducescatter", "alltoall", "sendrecv", "p2p", "shift", "uniform",
 * "bisection" */
extern const char *const ts_benchmark_op_names[];

/* The collective a collective benchmark calls (op <= TS_BENCHMARK_ALLTOALL). */
ts_coll_op ts_benchmark_coll(ts_benchmark_op op);

/* nccl-tests' bus-bandwidth factor over n ranks: 2(n-1)/n for all-reduce, (n-1)/n for
 * all-gather, reduce-scatter and all-to-all, 1 otherwise (PERFORMANCE.md of nccl-tests). */
double ts_benchmark_busbw_factor(ts_benchmark_op op, long n);

/* The shift pattern's distance in nodes: a dragonfly group's nodes, or a fat tree's leaf unit. */
long ts_benchmark_shift_nodes(const ts_platform *pf);

/* Builds op's job into *job (ts_job_fini it, or give it to ts_simulate_job): n_gpus ranks on
 * GPUs 0 .. n_gpus - 1 (p2p: two ranks on GPUs from and to; patterns: whole nodes), one block
 * per size. */
void ts_benchmark_build(ts_benchmark_op op, long n_gpus, long from, long to, const ts_platform *pf,
                        const double *sizes, int n_sizes, ts_job *job);

#endif
