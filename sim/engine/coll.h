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
 * Ring order: nodes in order, each entered once; inside each node the members take the
 * ring order that maximises the slowest hop's bandwidth (as NCCL's topology search does),
 * then the fewest links.
 * Rings (NCCL/RCCL channels): a group with m > 1 members on each of its nodes splits every
 * collective over k = min(m, NICs per node) rings, each carrying 1/k of the bytes; ring r
 * rotates each node's members by r m / k, so each ring leaves a node from a different member
 * and thus through a different NIC (on a DGX, ring r leaves through GPU r-1's NIC and enters
 * through GPU r's), as NCCL spreads channels over the NICs. A group holding every GPU of its
 * nodes, on nodes whose GPUs are joined by a link graph, follows the node's own rings instead
 * (below; coll.c: rings_through_nodes), each opened to enter and leave a node through GPUs
 * holding NICs, spread over the NICs, as RCCL's rings for an MI250X node do. A group of 3 or more
 * inside one node whose GPUs are joined by a link graph (not a switch) takes as many rings of ring
 * 0's width as the links carry, in both directions, every hop a direct link (coll.c: node_rings),
 * as the libraries' topology search builds channels: on an 8-GCD MI250X node the four rings
 * of RCCL's rome_model_63 (two rings, each both ways), which cross every xGMI link between
 * packages once each way. Other groups inside one node, or with one member per node, keep one
 * ring (their members' NICs already carry them in parallel).
 * All-to-all is a pairwise exchange (step s: send bytes / p to position + s), every pair of
 * members routed; NCCL's through PXN and DeepEP's run in two stages instead
 * (ts_coll_plan_pxn, ts_coll_node_dispatch).
 * The library (ccl.h) decides, per call, the algorithm and protocol, the call's latency and
 * its bus bandwidth; the transfers carry the protocol's wire bytes at no more than the
 * library's bandwidth, and the topology (SimGrid) slows them further where links are shared.
 * Uncontended, a call takes exactly the library model's time. Under the ideal library
 * (platform without `collectives`), transfers run at link rate and each step costs the route's
 * latency.
 * A library's tree runs pipelined at every fidelity (coll.c: tree_pipelined): inside one node
 * as chains along the rings, and it takes at least what those chains' links carry, whatever
 * the tuner credits it with (RCCL's tuning models scale the tree's bandwidth up to 1.75x).
 * Not modelled yet: NVLink SHARP.
 */
#ifndef TS_COLL_H
#define TS_COLL_H

#include <simgrid/barrier.h>
#include <simgrid/forward.h>
#include <stdbool.h>

#include "../../workloads/schedule.h"
#include "../network/platform.h"
#include "ccl.h"

/* analytic: no network simulation (sim/engine/analytic.h); hybrid: aggregate, but collectives of
 * groups inside one node (tensor parallelism) take the analytic alpha-beta time once all
 * members have arrived, without transfers (their links are the node's, which other traffic
 * crosses only on its way to a NIC). */
typedef enum ts_fidelity {
  TS_FIDELITY_AGGREGATE,
  TS_FIDELITY_FLOW,
  TS_FIDELITY_ANALYTIC,
  TS_FIDELITY_HYBRID
} ts_fidelity;
extern const char *const ts_fidelity_names[]; /* "aggregate", "flow", "analytic", "hybrid" */

/* All-reduce algorithms. Hierarchical (for groups with m > 1 members on each of N > 1 nodes):
 * reduce-scatter inside each node (a ring of m), all-reduce of the n/m shards across nodes (m
 * rings of N, one per local member, in parallel over the nodes' NICs), all-gather inside each
 * node: 2(m-1) + 2(N-1) latency terms instead of 2(mN-1). Tree (NCCL's double binary tree,
 * for any group of 3 or more): half the bytes reduced up one binary tree and broadcast back
 * down it, the other half on a second tree in which the first tree's leaves are interior,
 * 2 log2(p) latency terms. Under a library (ccl.h) auto picks what its tuner picks, and a
 * group with m > 1 members on each of several nodes runs the tree as NCCL does (a chain inside
 * each node, a tree per NIC across nodes; pipelined); under the ideal library the tree's
 * phases are not pipelined and auto picks the fastest by an alpha-beta model of the group's
 * routes. Reduce-scatter and all-gather always use rings (and, for NCCL with one GPU per
 * node, PAT, played on the ring's links). */
typedef enum ts_coll_algo {
  TS_ALGO_AUTO,
  TS_ALGO_RING,
  TS_ALGO_HIERARCHICAL,
  TS_ALGO_TREE,
  TS_ALGO_COUNT
} ts_coll_algo;
extern const char *const ts_coll_algo_names[]; /* "auto", "ring", "hierarchical", "tree" */

/* Orders n GPUs (global indices) into a ring: order[i] is the index in gpus of the GPU at
 * ring position i. */
void ts_coll_ring_order(const ts_platform *pf, const long *gpus, int n, int *order);

/* The rings (channels) of a group of n GPUs: writes k orders into orders[r * n + i] (each as
 * ts_coll_ring_order's) and returns k >= 1. orders must hold n x TS_COLL_MAX_RINGS ints. */
#define TS_COLL_MAX_RINGS 16
int ts_coll_rings(const ts_platform *pf, const long *gpus, int n, int *orders);

/* How a group runs one call: the algorithm trainsim plays and, under a real library, the
 * library's plan (lib.algo may be PAT, played on the ring's links). */
typedef struct ts_coll_call {
  ts_coll_algo algo;
  bool is_ideal; /* no library: link rate, route latencies (lib holds Simple, wire 1) */
  bool is_pxn; /* an all-to-all through NCCL's PXN (ts_coll_plan_pxn) */
  ts_ccl_call lib;
  double time_s; /* uncontended */
} ts_coll_call;

/* A group ready to run collectives: its rings, a mailbox per ring position, a barrier. */
typedef struct ts_coll_group {
  int n;
  int n_rings;
  long *ring_ranks; /* [r * n + i]: the rank at position i of ring r */
  int *ring_pos; /* [r * n + i]: position in ring r of the member at position i of ring 0 */
  sg_mailbox_t *mailboxes; /* [r * n + i]: where position i of ring r receives */
  sg_bar_t barrier; /* aggregate fidelity only */
  /* Node play with a hand-over: a node player's TP group meets at `barrier` alone (it plays for
   * the group), after its node's hand-over every member at this one (NULL elsewhere). */
  sg_bar_t member_barrier;
  double max_hop_lat_s; /* largest route latency between ring neighbours */
  bool is_all_to_all; /* an all-to-all runs on it: every pair is routed */
  bool is_in_node; /* every member on one node */
  bool is_lockstep; /* members run identical programs (the engine may merge their steps) */
  /* Ranks each member's transfers stand for (node play, engine.h): they carry that many times
   * the bytes, at that many times the library's rate ceiling; 0 or 1: themselves. */
  int multiplicity;
  /* Hierarchical all-reduce, when per_node > 0: members per node (ring-0 positions
   * node x per_node .. + per_node - 1), an inbox per position for each phase, and the alpha-
   * beta figures of its hops and of the rings' (filled by ts_coll_plan). */
  ts_coll_algo algo;
  int per_node;
  sg_mailbox_t *intra_mailboxes, *cross_mailboxes;
  sg_mailbox_t *tree_mailboxes[2]; /* [tree][position], groups of 3 or more */
  int *tree_children; /* [(tree * n + position) * 2 + k]: children in each tree, -1 for none */
  double ring_lat_s, ring_Bps, intra_lat_s, intra_Bps, cross_lat_s, cross_Bps;
  double tree_lat_s, tree_Bps;
  double chain_Bps; /* one-node groups of 3 or more: what the pipelined tree's chains carry */
  const ts_ccl_config *ccl; /* the platform's library */
  int n_nodes; /* nodes the members are on */
  /* > 0: all-to-alls as DeepEP runs them (ts_coll_node_dispatch): this share of a member's
   * buffer crosses the network, once per node a token reaches. */
  double node_share;
  bool is_pxn; /* node_share set by ts_coll_plan_pxn */
  /* Hybrid fidelity, DeepEP on switched nodes (ts_coll_plan_node_stage): the in-node stage is
   * priced, not played: [node] a barrier of its members, and the stage's route between two. */
  sg_bar_t *node_barriers;
  double node_stage_lat_s, node_stage_Bps;
  /* Rail play (engine.h) of a group that holds whole nodes: the ring receives each player
   * makes for its node, entries landing_from[u] .. landing_from[u + 1] - 1 for the player at
   * ring-0 position u: the mailbox index (r * n + q) and the ring-0 position of the member on
   * whose host it is taken (a proxy's, or the player's own). NULL: each member its own. */
  int *landing_from, *landing_box, *landing_member;
  struct ts_coll_proxy **proxies; /* [ring-0 position]: the member's proxy, or NULL */
  long n_calls[TS_ALGO_COUNT]; /* collectives started, by ts_coll_algo (counted at position 0) */
  /* The calls decided last, kept: a group repeats a few calls over and over (a layer's
   * all-gathers and reduce-scatters, its gradient buckets). */
#define TS_COLL_MEMO 8
  int n_memo, memo_next;
  ts_coll_op memo_op[TS_COLL_MEMO];
  double memo_bytes[TS_COLL_MEMO];
  ts_coll_call memo[TS_COLL_MEMO];
} ts_coll_group;

/* A member's stand-in under rail play: an actor on the member's host that takes the receives
 * its node's player hands it, so that their transfers follow the member's route. */
typedef struct ts_coll_proxy {
  sg_sem_t go, done;
  int n;
  sg_mailbox_t boxes[TS_COLL_MAX_RINGS];
} ts_coll_proxy;
/* A proxy's actor (data: its ts_coll_proxy): forever, take the receives handed to it. */
void ts_coll_proxy_main(int argc, char **argv);
/* DeepEP's dispatch and combine on g, an expert-parallel group planned by ts_coll_plan
 * (DeepSeek-AI 2024, section 3.2.2; deepseek-ai/DeepEP's internode kernels): a token goes over
 * the network once to each node it reaches, to the member of the same in-node index there,
 * which forwards its copies over NVLink to the experts; the two stages run at once (DeepEP
 * pipelines them in chunks). A token routed to `topk` experts, uniformly (ASSUMED), within
 * `group_topk` of `groups` expert groups (0: none) spread over the group's nodes, reaches
 * R (1 - (1 - 1/R)^topk) of the R nodes it may, R = min(nodes, group_topk x nodes / groups):
 * node_share is that over topk. No effect on a group of one node. */
void ts_coll_node_dispatch(ts_coll_group *g, double topk, double groups, double group_topk);

/* NCCL's all-to-all through PXN (NVIDIA/nccl src/graph/search.cc, ncclTopoGetNetDev: with
 * NCCL_PXN_DISABLE 0 and NCCL_P2P_PXN_LEVEL 2, both defaults, a send to a GPU on another node
 * leaves through the local NIC of the receiver's in-node index, relayed over NVLink by the
 * local GPU of that index, "to maximize aggregation"; src/graph/paths.cc gives the relay
 * where that GPU reaches the NIC through PCIe and us through NVLink). On nodes whose GPUs share
 * a switch and each have a NIC of their own, with the group's members of each node on the same
 * local GPUs (ring_gpus: its ring-0 GPUs, node by node), g's all-to-alls then run as DeepEP's
 * two stages with every copy sent (node_share 1): member j of a node sends each other node's
 * member j the copies of all its node's members, bytes / nodes, and each member sends each
 * local other bytes / m over NVLink, both at once (NCCL's relay runs in chunks). Else, and for
 * RCCL, the pairwise exchange. */
void ts_coll_plan_pxn(const ts_platform *pf, ts_coll_group *g, const long *ring_gpus);

/* At the hybrid fidelity, DeepEP's in-node stage on g (ring_gpus: its ring-0 GPUs) is priced
 * where that is what playing it would give: every GPU joined to the node's switch by a link of
 * its own, and every GPU with a NIC of its own, so that no transfer leaving a node crosses the
 * switch links. Each member then sends m - 1 equal copies through its switch link and receives
 * m - 1 through its other: all end together, a route latency and (m - 1) bytes / m / bandwidth
 * after the last member of the node arrives (the node's barrier), as hybrid prices in-node
 * collectives (contention with other in-node traffic is what it gives up). Sets the stage's
 * route figures and returns true where that applies; the caller makes the node barriers. */
bool ts_coll_plan_node_stage(const ts_platform *pf, ts_coll_group *g, const long *ring_gpus);
/* Double binary tree: the parent of ring-0 position pos in tree t (0 or 1), or -1 at a root. */
int ts_coll_tree_parent(int n, int t, int pos);

/* The node tree of a group with per_node m > 0 (NCCL's tree: one double binary tree over the
 * nodes for each local member): the ring-0 position of pos's parent in tree t, or -1. */
int ts_coll_node_tree_parent(const ts_coll_group *g, int t, int pos);

/* Members per node of a group of n GPUs in ring order `order` when every node holds the same
 * number m > 1 and there are at least two nodes; 0 otherwise. */
int ts_coll_per_node(const ts_platform *pf, const long *gpus, const int *order, int n);
/* Fills g's alpha-beta figures from the routes of its hops (ring_gpus[r * n + i]: the GPU at
 * position i of ring r, for its n_rings rings), its node count and library, and, for groups of
 * 3 or more, its trees' children (owned by g: free g->tree_children). */
void ts_coll_plan(const ts_platform *pf, ts_coll_group *g, const long *ring_gpus);
/* How g runs op on bytes: the algorithm forced by g->algo, or the one auto picks (the
 * library's tuner; under the ideal library the fastest by an alpha-beta model of the routes).
 * Hierarchical is trainsim's, not a library's: forced, it is priced at the wire. */
ts_coll_call ts_coll_decide(ts_coll_group *g, ts_coll_op op, double bytes);
/* ts_coll_decide(...).algo */
ts_coll_algo ts_coll_choose(ts_coll_group *g, ts_coll_op op, double bytes);
/* The uncontended time of the call (the analytic fidelity's cost of a collective; it equals
 * what the rings and trees take in the other fidelities when nothing shares their links). */
double ts_coll_estimate_s(ts_coll_group *g, ts_coll_op op, double bytes);
/* ts_coll_decide for a group of n GPUs not yet set up (microbenchmark tables). */
ts_coll_call ts_coll_decide_for(const ts_platform *pf, const long *gpus, int n, ts_coll_algo wanted,
                                ts_coll_op op, double bytes);

/* A collective of comm_s overlapped with a GEMM of gemm_s, both split into `chunks` pieces
 * that pipeline (tp_comm_overlap): the longer of the two plus one chunk of the shorter. */
double ts_coll_overlapped_s(double comm_s, double gemm_s, int chunks);

/* Ring steps of an operation on p ranks (2(p-1) for all-reduce, p-1 otherwise). */
int ts_coll_steps(ts_coll_op op, int p);

/* Runs one collective from ring-0 position pos (called by every member's actor, in the same
 * order on every member), on all the group's rings at once. Counts the transfers it starts into
 * *n_transfers. */
void ts_coll_run(ts_coll_group *g, int pos, ts_coll_op op, double bytes, ts_fidelity fidelity,
                 long *n_transfers);

/* Sleeps the calling actor for s seconds. Durations are finite by construction (every input
 * quantity is bounded: units.h); a non-finite or negative one is a bug, stopped here before it
 * reaches SimGrid. */
void ts_coll_sleep(double s);

#endif
