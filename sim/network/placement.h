/* placement: which nodes of the machine a job gets, and so which GPU each rank runs on.
 *
 *   contiguous  nodes 0, 1, 2, ... (an empty machine)
 *   spread      round robin over the dragonfly groups: job node i goes to group i mod G
 *   random      nodes drawn uniformly without replacement with a seeded generator, then
 *               sorted (as a batch scheduler lists them): a fragmented, busy machine
 * Rank r runs on local GPU r mod gpus_per_node of the job's node r / gpus_per_node.
 */
#ifndef TS_PLACEMENT_H
#define TS_PLACEMENT_H

#include <stdint.h>

#include "platform.h"

typedef enum ts_placement {
  TS_PLACEMENT_CONTIGUOUS,
  TS_PLACEMENT_SPREAD,
  TS_PLACEMENT_RANDOM
} ts_placement;
extern const char *const ts_placement_names[]; /* "contiguous", "spread", "random" */

/* A new array of n_ranks GPU indices (free() it), or NULL when the machine has too few
 * nodes. The same arguments always give the same array. */
long *ts_placement_gpus(const ts_platform *pf, ts_placement how, uint64_t seed, long n_ranks);

/* The parts a job of n_ranks placed by rank_gpu (NULL: GPU = rank) stands on, by
 * ts_failing_part: its GPUs, their nodes, the nodes' NIC links and the switches those hang off
 * (a dragonfly switch, a fat-tree leaf). */
void ts_placement_parts(const ts_platform *pf, const long *rank_gpu, long n_ranks,
                        long parts[TS_PART_COUNT]);

#endif
