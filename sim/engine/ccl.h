/* ccl: the collective library's own cost model, as its tuner runs it.
 *
 * NCCL and RCCL pick an algorithm and a protocol for every call from a model of their own
 * (NCCL 2.30.7 src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime; RCCL 2.21.5,
 * ROCm 6.3, the same file with per-platform tables, and RCCL's releases back to 2.12.12 where
 * its constants differ: cfg->version). A call costs
 *     time = latency + bytes / algorithm bandwidth,
 * the latency summing a base cost per algorithm and protocol and a hardware cost per step
 * (per NVLink or xGMI step inside a node, per network step between nodes), the bandwidth
 * being the topology's bus bandwidth scaled by protocol and per-channel ceilings, then turned
 * into algorithm bandwidth (ring: n / steps; tree: 1/2). trainsim keeps the libraries'
 * constants and formulas and replaces only their topology search: the bus bandwidth comes from
 * the platform's routes (the ring's slowest hop times its rings), which the simulation then
 * plays with contention.
 *
 * Protocols: Simple moves data at link rate; LL sends 8-byte lines holding 4 bytes of data and
 * a flag (2 wire bytes per byte); LL128 sends 128-byte lines holding 120 bytes of data. Their
 * wire overhead is played as extra bytes, so it contends like data.
 * Algorithms: ring (all operations), tree (all-reduce: NCCL's double binary tree), PAT (NCCL's
 * all-gather and reduce-scatter with one GPU per node, played on the ring's links). The
 * libraries' CollNet and NVLink SHARP (NVLS) algorithms are not modelled (they need switch
 * offload; the device notes keep NVLS off).
 */
#ifndef TS_CCL_H
#define TS_CCL_H

#include <stdbool.h>

#include "../../workloads/schedule.h"
#include "../network/platform.h"

typedef enum ts_ccl_algo { TS_CCL_RING, TS_CCL_TREE, TS_CCL_PAT, TS_CCL_ALGO_COUNT } ts_ccl_algo;
extern const char *const ts_ccl_algo_names[]; /* "ring", "tree", "pat" */
typedef enum ts_ccl_proto {
  TS_PROTO_LL,
  TS_PROTO_LL128,
  TS_PROTO_SIMPLE,
  TS_PROTO_COUNT
} ts_ccl_proto;
extern const char *const ts_ccl_proto_names[]; /* "LL", "LL128", "Simple" */

/* What the tuner sees of a communicator. */
typedef struct ts_ccl_comm {
  int n_ranks, n_nodes;
  double bus_Bps; /* the topology's bus bandwidth: a ring's slowest hop x its rings */
} ts_ccl_comm;

/* The library's plan for one call. */
typedef struct ts_ccl_call {
  ts_ccl_algo algo;
  ts_ccl_proto proto;
  double lat_s; /* the call's latency */
  double bus_Bps; /* the library's bus bandwidth for this size (data bytes) */
  double alg_Bps; /* algorithm bandwidth: bytes / (time - latency) */
  double wire; /* wire bytes per data byte (the protocol's flags) */
  double time_s; /* uncontended: lat_s + bytes / alg_Bps */
} ts_ccl_call;

/* Whether the constants of the library's release `version` (stack.h encoding) are carried for
 * cfg's library and tuning model; if not, a sentence saying what is missing into why. */
bool ts_ccl_version_modelled(const ts_ccl_config *cfg, long version, char *why, size_t n);

/* The library's cost of op on bytes (the whole buffer: all ranks' shares for all-gather and
 * reduce-scatter, as NCCL counts them) with algo and proto; false where the library does not
 * offer that pair for this communicator. cfg->library must not be TS_CCL_IDEAL. */
bool ts_ccl_cost(const ts_ccl_config *cfg, const ts_ccl_comm *comm, ts_coll_op op, double bytes,
                 ts_ccl_algo algo, ts_ccl_proto proto, ts_ccl_call *out);

/* The library's base latency of a call with algo and proto (before any per-step cost). */
double ts_ccl_base_latency_s(const ts_ccl_config *cfg, ts_ccl_algo algo, ts_ccl_proto proto);

/* The pair the library's tuner picks (the fastest by its model) among the algorithms allowed
 * (bit 1 << ts_ccl_algo), and its cost; ring with Simple (always offered) when none of those
 * is. comm->n_ranks must be at least 2. */
ts_ccl_call ts_ccl_choose(const ts_ccl_config *cfg, const ts_ccl_comm *comm, ts_coll_op op,
                          double bytes, unsigned allowed);

#endif
