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
 * Rings (NCCL/RCCL channels): a group with m > 1 members on each of its nodes splits every
 * collective over k = min(m, NICs per node) rings, each carrying 1/k of the bytes; ring r
 * rotates each node's members by r m / k, so each ring leaves a node from a different member
 * and thus through a different NIC (on a DGX, ring r leaves through GPU r-1's NIC and enters
 * through GPU r's), as NCCL spreads channels over the NICs. Groups inside one node, or with
 * one member per node, keep one ring (their members' NICs already carry them in parallel).
 * All-to-all is a pairwise exchange (step s: send bytes / p to position + s), every pair of
 * members routed.
 * Not modelled yet: rings in the opposite direction, and tree or hierarchical algorithms;
 * one ring per direction inside a node is a lower bound on its bandwidth.
 */
#ifndef TS_COLL_H
#define TS_COLL_H

#include <simgrid/barrier.h>
#include <simgrid/forward.h>
#include <stdbool.h>

#include "../workloads/schedule.h"
#include "platform.h"

typedef enum ts_fidelity { TS_FIDELITY_AGGREGATE, TS_FIDELITY_FLOW } ts_fidelity;
extern const char *const ts_fidelity_names[]; /* "aggregate", "flow" */

/* Orders n GPUs (global indices) into a ring: order[i] is the index in gpus of the GPU at
 * ring position i. */
void ts_coll_ring_order(const ts_platform *pf, const long *gpus, int n, int *order);

/* The rings (channels) of a group of n GPUs: writes k orders into orders[r * n + i] (each as
 * ts_coll_ring_order's) and returns k >= 1. orders must hold n x TS_COLL_MAX_RINGS ints. */
#define TS_COLL_MAX_RINGS 16
int ts_coll_rings(const ts_platform *pf, const long *gpus, int n, int *orders);

/* A group ready to run collectives: its rings, a mailbox per ring position, a barrier. */
typedef struct ts_coll_group {
  int n;
  int n_rings;
  long *ring_ranks; /* [r * n + i]: the rank at position i of ring r */
  int *ring_pos; /* [r * n + i]: position in ring r of the member at position i of ring 0 */
  sg_mailbox_t *mailboxes; /* [r * n + i]: where position i of ring r receives */
  sg_bar_t barrier; /* aggregate fidelity only */
  double max_hop_lat_s; /* largest route latency between ring neighbours */
  bool is_all_to_all; /* an all-to-all runs on it: every pair is routed */
} ts_coll_group;

/* Ring steps of an operation on p ranks (2(p-1) for all-reduce, p-1 otherwise). */
int ts_coll_steps(ts_coll_op op, int p);

/* Runs one collective from ring-0 position pos (called by every member's actor, in the same
 * order on every member), on all the group's rings at once. Counts the transfers it starts into
 * *n_transfers. */
void ts_coll_run(const ts_coll_group *g, int pos, ts_coll_op op, double bytes, ts_fidelity fidelity,
                 long *n_transfers);

#endif
