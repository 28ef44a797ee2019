/* bench: simulated microbenchmarks in the manner of nccl-tests / rccl-tests, so the model can
 * be held against measurements of a real machine.
 *
 *   trainsim bench allreduce|allgather|reducescatter|sendrecv [--gpus N] ...
 *   trainsim bench p2p --from GPU --to GPU ...
 *
 * Each size runs once, back to back, in one simulation; its time is from the end of the
 * previous size (on the last rank to finish it) to its own end. algbw = size / time; busbw
 * scales algbw as nccl-tests does (its PERFORMANCE.md): all-reduce 2(n-1)/n, all-gather and
 * reduce-scatter (n-1)/n, sendrecv and p2p 1. Sizes are the full buffer, as nccl-tests
 * reports them.
 */
#ifndef TS_BENCH_H
#define TS_BENCH_H

#include "args.h"

/* `bench` in the command table (args.h). */
extern const ts_command ts_bench_command;

/* Runs `trainsim bench ...` (argv after "bench"); returns the exit status. */
int ts_bench_main(int argc, char **argv);

#endif
