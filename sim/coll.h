/* coll: collectives as the vendor libraries run them, played out as SimGrid transfers.
 *
 * Ring algorithms (NCCL/RCCL's default for large messages). On p ranks, all-reduce is
 * reduce-scatter then all-gather, 2(p-1) steps in which every rank sends n/p bytes to its ring
 * successor; reduce-scatter and all-gather are p-1 steps each. Uncontended, a step costs
 * alpha + n/(p B), so an all-reduce costs 2(p-1)(alpha + n/(p B)).
 * Fidelity:
 *   flow      every step is a SimGrid transfer (exact contention, 2(p-1) transfers per rank);
 *   aggregate a ring's steps reuse the same links in the same pattern, so each rank sends one
 *             transfer of steps x n/p bytes, the group then synchronises (a ring finishes with
 *             its slowest hop) and waits (steps - 1) x the largest hop latency. Equal to flow
 *             on an uncontended ring, with 1 transfer per rank instead of 2(p-1).
 * Ring order: a group inside one node takes the order that maximises its slowest hop's
 * bandwidth (as NCCL's topology search does), then the fewest links; a group spanning nodes
 * goes in GPU order, so members on one node are neighbours and each node is entered once.
 * Not modelled yet: RCCL/NCCL split large messages over several rings (channels), some in the
 * opposite direction, and switch to tree or hierarchical algorithms by size; one ring here
 * uses each link in one direction only, so it is a lower bound on bandwidth inside a node.
 */
#ifndef TS_COLL_H
#define TS_COLL_H

#include <simgrid/barrier.h>
#include <simgrid/forward.h>

#include "../workloads/schedule.h"
#include "platform.h"

typedef enum ts_fidelity { TS_FIDELITY_AGGREGATE, TS_FIDELITY_FLOW } ts_fidelity;
extern const char *const ts_fidelity_names[]; /* "aggregate", "flow" */

/* Orders n GPUs (global indices) into a ring: order[i] is the index in gpus of the GPU at
 * ring position i. */
void ts_coll_ring_order(const ts_platform *pf, const long *gpus, int n, int *order);

/* A group ready to run collectives: ring order, a mailbox per ring position, a barrier. */
typedef struct ts_coll_group {
  int n;
  long *ring_ranks; /* ranks in ring order */
  sg_mailbox_t *mailboxes; /* [i]: where ring position i receives */
  sg_bar_t barrier; /* aggregate fidelity only */
  double max_hop_lat_s; /* largest route latency between ring neighbours */
} ts_coll_group;

/* Ring steps of an operation on p ranks (2(p-1) for all-reduce, p-1 otherwise). */
int ts_coll_steps(ts_coll_op op, int p);

/* Runs one collective from ring position pos (called by every member's actor, in the same
 * order on every member). Counts the transfers it starts into *n_transfers. */
void ts_coll_run(const ts_coll_group *g, int pos, ts_coll_op op, double bytes, ts_fidelity fidelity,
                 long *n_transfers);

#endif
