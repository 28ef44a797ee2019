/* engine: plays every rank's program out on its GPU with SimGrid.
 *
 * One SimGrid actor per rank, on its GPU's host, walks the rank's events in order, as a
 * single-stream program: compute takes the cost model's duration (a GPU runs one compute
 * stream here, so SimGrid's CPU-sharing model has nothing to add), collectives run through
 * coll.c, pipeline sends are posted asynchronously and completed with the next receive.
 * Every second of a rank's iteration lands in exactly one category (schedule.h), so the
 * categories of a rank sum to the iteration time. At the hybrid fidelity the compute and
 * in-node collectives between a rank's messages play as one merged step, with the times of
 * playing them one by one (engine.c explains when that holds).
 *
 * SimGrid's default network model (LV08) multiplies latencies by 13.01, scales bandwidth by
 * 0.97 and adds 5% reverse traffic, corrections fitted to TCP; CM02 still caps a flow at
 * TCP-gamma / (2 x latency) and weighs its share of a link by 1 / latency (TCP's RTT-
 * unfairness). None of that describes RDMA over Infinity Fabric or Slingshot, so the engine
 * uses CM02 with cross-traffic off, a window (TCP-gamma) too large to bind and every flow
 * weighing the same (sim/network/sg_platform.cpp): a lone transfer of n bytes takes exactly
 * latency + n / bandwidth (or n / its rate ceiling, coll.h), and concurrent transfers share
 * links max-min fairly. (A TCP-gamma of 0, used before, also drops a transfer's own rate
 * ceiling in SimGrid 3.32: network_cm02.cpp bounds it by min(ceiling, gamma / 2 latency).)
 *
 * Node play (hybrid): when every tensor-parallel group fills a node, its members run one
 * program in lockstep (hybrid prices their collectives) and every other group and pipeline peer
 * of member j is member j's of the same nodes, one actor per node plays for all of them. Its
 * transfers to another node stand for its m members' m equal transfers: m times the bytes (and
 * the library's rate ceiling), over the switch path the members share and, at each end, one
 * link for the node: its members' own links (GPU links, PCIe, NICs) as one bundle, of
 * capacity min over those links of bandwidth x m / u (u: members crossing the link). Max-min
 * sharing is invariant under this when every flow is such an aggregate: flows of rate r, u on
 * each link of capacity C, are flows of rate m r on a link of m C / u. So the iteration is the
 * full play's when the members' routes are alike; a transfer takes the longest of its members'
 * route latencies (the node goes on when its last member has its bytes). On Frontier a
 * GCD without a NIC of its own is one Infinity Fabric link (1 us) further from it than its
 * neighbour: docs/performance.md gives the measured difference from playing every rank.
 * The engine checks these conditions and plays every rank when any fails
 * (ts_engine_opts.is_playing_every_rank forces it).
 *
 * Rail play (hybrid), where node play does not apply: on a rail-optimised two-level fat tree
 * whose nodes' GPUs share a switch and each have a NIC of their own, all alike (DeepSeek-V3's
 * H800 cluster), turning every node's local GPU indices by one maps each GPU's switch ports,
 * PCIe, NIC and rail to the next GPU's. When it also maps the job onto itself (full nodes whose
 * ranks run one program; pipeline peers and groups of member j member j's of the same nodes;
 * groups of whole nodes, such as data or expert parallelism over whole nodes, whose rings the
 * turn maps onto their rings, that run only reduce-scatters, all-gathers and DeepEP's
 * all-to-alls), every transfer has m - 1 images that behave alike, one sent by each local GPU,
 * and max-min sharing gives them equal rates. One actor per node then plays its local GPU 0 and
 * only its transfers, each over its route with every link replaced by its rail-0 image (the
 * link of GPU 0 in the link's orbit, same bandwidth: the load on a link is the load on its
 * image). A transfer to another local GPU k (an in-node ring hop, a ring leaving a node on
 * rail r and entering the next on r + 1) is taken by a proxy actor on GPU k's host, so that
 * its route is its own (SimGrid routes by the hosts of sender and receiver); by symmetry it
 * stands for the transfer the player itself receives from that ring. DeepEP's in-node stage
 * is priced (ts_coll_plan_node_stage), not played. Results are every rank's exactly
 * (tests/unit/test_node_play.c, test_rail_play), with m times fewer actors and transfers.
 *
 * Node play with a hand-over (hybrid), where neither applies because tensor-parallel groups are
 * smaller than a node (GPT-22B's TP 2 on Frontier: a node holds four replicas' pairs of one
 * stage): when a node's ranks run one program, their tensor-parallel groups are priced alike,
 * pipeline peers of member j are member j's of another node, and every other group (data
 * parallelism, the tied embedding) spans nodes and is reached only after the program's last
 * pipeline receive, with no asynchronous collective before (DeepSpeed's order: gradients
 * reduced after the pipeline flush; Megatron's buckets, reduced during the last backward pass,
 * whose first is posted with no pipeline send pending), one actor per node plays the pipeline
 * phase as node play does. At its first collective across nodes its sends complete, as each
 * rank's would there, and every rank of the node goes on with an actor of its own and the
 * player's results so far; those collectives play rank by rank over the ranks' own routes, the
 * rest of a pass's tensor-parallel collectives meet at their groups' member barriers, and a
 * pipeline message sent after the hand-over is each member's own, on the member's own route to
 * its peer member, registered to the host of the peer node's player (SimGrid routes by the hosts
 * of sender and receiver), which receives the m of them where it would receive its aggregate
 * and goes on with the last.
 * While some nodes hand over and others still send, node play's aggregates share switch and cable
 * links with single flows: each aggregate counts as its m members in max-min sharing (a weight of
 * m: SimGrid's sharing penalty 1 / m, sg_platform.h), which is how m equal flows would share. A
 * node's own links (its bundle, its GPUs' links and NICs) carry its player's flows before its
 * hand-over and its ranks' after: a collective's transfer starts only once its receiver is in it.
 * So the results are every rank's where its members' routes are alike (tests/unit/test_node_play.c,
 * test_handover), with Frontier's NIC-less GCDs as node play has them. A pair of players that
 * needs both a node route and its ranks' own (an embedding partner that is also a pipeline
 * peer: 2 stages, an interleaved pipeline's wrap) takes the node route until its source hands
 * over, its own after (sg_platform.h, ts_sg_platform_hand_over).
 *
 * SimGrid cannot be re-initialised: call ts_engine_run at most once per process.
 */
#ifndef TS_ENGINE_H
#define TS_ENGINE_H

#include <stdbool.h>

#include "../../workloads/result.h"
#include "../../workloads/schedule.h"
#include "../network/platform.h"
#include "coll.h"

typedef struct ts_engine_opts {
  ts_fidelity fidelity;
  ts_coll_algo collectives; /* all-reduce algorithm: auto (default), ring or hierarchical */
  bool is_recording_blocks; /* fill each rank's block_end_s (microbenchmarks) */
  const bool *is_traced; /* [rank]: record the rank's spans (timelines); NULL: none */
  /* Compute events that start while the rank's communication stream has a collective to run take
   * (1 + this) times longer: communication kernels share the GPU's compute units and memory
   * bandwidth (bench/device/comm_overheads.py measures it). 0: overlap is free. */
  double overlap_slowdown;
  bool is_playing_every_rank; /* no node or rail play (above), for checks and comparisons */
  /* Analytic fidelity only: [rank] the rank whose timeline it shares. Only ranks that are their
   * own representative play; the others get their representative's results, and a collective
   * completes when its playing members have arrived. Exact when the job is symmetric (every
   * replica and tensor-parallel rank as its representative); NULL: every rank plays. */
  const long *representative;
  /* Called now and then while the job plays (after each block of a rank's program) with the
   * events played so far and a rank's simulated time, for a progress display; it must not touch
   * the job or the simulation. NULL: never. */
  void (*on_progress)(void *ctx, double events_played, double simulated_s);
  void *progress_ctx;
  /* SimGrid fidelities with is_recording_blocks: called when a rank has finished a block, with
   * the simulated time (the block's entry of block_end_s), so that microbenchmarks can report
   * each block as soon as every rank is through it. NULL: never. */
  void (*on_block)(void *ctx, long rank, int block, double end_s);
  void *block_ctx;
  /* [rank * 2 + i]: the blocks after which the rank's categories and FLOPs are copied to its
   * result's snapshot i (periodic play, sim/simulate.c); NULL: none. */
  const int *snapshot_blocks;
} ts_engine_opts;

/* Events the job plays on the ranks flagged in `only` (all ranks when NULL), to estimate a
 * run's cost before running it. */
double ts_engine_count_events(const ts_job *job, const bool *only);

/* Simulates one iteration of job, each rank on its GPU (ts_job_gpu) of pf. On success fills *out
 * (free with ts_sim_result_fini). Returns -1 with an error when the job does not fit the platform.
 */
int ts_engine_run(const ts_platform *pf, const ts_job *job, const ts_engine_opts *opts,
                  ts_sim_result *out, ts_err *err);

#endif
