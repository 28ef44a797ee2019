/* ccl_memory: the GPU memory NCCL holds for a run's communicators, outside PyTorch's caching
 * allocator (torch.cuda.memory_stats never shows it; the allocator gets what is left).
 *
 * Read from NCCL's source (NVIDIA/nccl, tags v2.8.4-1 to v2.30.7-1). Every ring or tree
 * connection holds a buffer per protocol: LL 512 KiB, LL128 4.6875 MiB, Simple 4 MiB
 * (src/init.cc, computeBuffSizes; the same from 2.8 to 2.30). Inside a node (P2P transport) the
 * receiver holds them and the sender a header, each rounded up to 2 MiB (CUDA_IPC_MIN,
 * src/transport/p2p.cc): 10 + 2 MiB a send-receive pair; in P2P read mode (Ampere over NVLink,
 * src/graph/paths.cc) the Simple buffer moves to the sender: 6 + 6. Across nodes (NET
 * transport, GPUDirect RDMA) the receiver holds all three (9.19 MiB) and the sender LL128 and
 * Simple (8.69 MiB; src/transport/net.cc), each 10 MiB under cuMem (2.19+). A ring connects
 * each GPU to one sender and one receiver a channel at any scale; the tree's intra-node chain
 * follows the ring and adds the reverse connection (a middle GPU one pair, the chain's root a
 * receive, its leaf a send), and across nodes a node's head GPU connects to its tree parent and
 * children (src/transport/generic.cc). Sends and receives (pipeline, context parallel, expert
 * all-to-all) connect per peer: inside a node over p2p channels of full buffers (NVIDIA/nccl#1685:
 * 32 channels a peer on an H100, allocations of 10 and 2 MiB; in a communicator across nodes a
 * network peer's channels for every peer, src/graph/paths.cc), across nodes through shared pools
 * of p2p channels x 16 x the chunk (128 KiB; 512 KiB when the communicator is one NVLink node)
 * from 2.14 (16 MiB a p2p channel before 2.12, 2 MiB in 2.12-2.13): a receive pool, and a send
 * pool for each sender whose sends leave from the GPU; with PXN (2.12+) a send leaves through
 * the sender's node's member at the receiver's local index, so in an all-to-all across nodes a
 * GPU holds the send pools of every member of its node (src/graph/search.cc, ncclTopoGetNetDev;
 * src/transport/net.cc, sharedNetBuffersInit). Before 2.22 a
 * communicator connects its rings and trees at init, and from 2.12 allocates that send pool
 * there too (NVIDIA/nccl#2363: 512 MiB on a one-rank communicator); from 2.22 (runtime
 * connect, where cuMem is supported) each algorithm on first use. From 2.19 cuMem rounds every
 * device allocation to 2 MiB (ASSUMED: the granularity; #1685's 2 MiB allocations), so each
 * channel's three small arrays and the device communicator cost 2 MiB each. The P2P channels
 * are the next power of two of the channels (at most 32, 64 from 2.25). Checked against
 * NVIDIA/nccl#964 (4 x A100 on NVLink: a two-GPU communicator 544 MiB, a larger one 688 MiB on
 * rank 0), reproduced exactly with 24 channels (tests/unit/test_memory.c).
 *
 * Not modelled: NVLink SHARP (NVLS; the collective model leaves it off too: ccl.h), CollNet,
 * PAT (2.23+, one GPU a node: 2 log2(n) peers a channel each way, connected when the tuner
 * first picks it, for small all-gathers and reduce-scatters, which the frameworks' bucketed
 * ones are not: ASSUMED), DeepEP's NVSHMEM buffers (moe_flex), user-registered buffers, RCCL
 * (its channel counts are not known here); communicators of
 * PyTorch's send/receive pairs (older releases open one per pair: here the group's own
 * communicator carries them, as batch_isend_irecv and eager initialisation do). ASSUMED: a
 * communicator across nodes runs two channels per NIC its node's members use (NCCL's search
 * finds a ring per NIC and duplicates it; NVIDIA/nccl-tests#133's log, two nodes on one NIC
 * each: "2 coll channels"), capped by the platform's; inside a node the platform's channels; a
 * node's tree head connects two network pairs a channel on average (a double binary tree: inside
 * one tree, a leaf of the other); under runtime connect the scalar all-reduces every step makes (a
 * barrier, the loss, a norm) connect the ring inside a node and the tree across nodes, as the
 * tuner picks at small sizes (sim/engine/ccl.c's model of it, `trainsim bench allreduce -b 8`:
 * ring/LL on 8 GPUs of a node, tree/LL on 64); GPUDirect RDMA on; ranks on nodes in order (rank
 * / GPUs per node).
 */
#ifndef TS_CCL_MEMORY_H
#define TS_CCL_MEMORY_H

#include "gpu.h"
#include "workload.h"

/* How one GPU uses one communicator. */
typedef struct ts_ccl_comm_use {
  long n_ranks, nodes; /* the communicator's members and the nodes they span */
  long local_ranks, local_index; /* its members on this GPU's node, and this GPU's index there */
  bool is_collective; /* runs collectives (ring), beyond scalar all-reduces */
  bool is_allreduce; /* all-reduces (scalars at least: a barrier, a loss, a norm) */
  long local_peers, remote_peers; /* send/receive peers on this node and on others */
  /* Where sends to other nodes leave from (PXN, NCCL 2.12+: through the member of the sender's
   * node at the receiver's local index, whose proxy holds the sender's pool): whether every one
   * of this GPU's own leaves from another GPU, and how many other members of its node send
   * through it. */
  bool sends_relayed;
  long relayed_senders;
} ts_ccl_comm_use;

/* NCCL's bytes on one GPU for one communicator, at release `version` (stack.h encoding). */
double ts_ccl_comm_bytes(const ts_ccl_site *site, long version, const ts_ccl_comm_use *use);

/* The communicators a run opens, by the group they serve. */
typedef enum ts_ccl_group {
  TS_CCL_GROUP_DEFAULT, /* the default (world) group */
  TS_CCL_GROUP_TENSOR,
  TS_CCL_GROUP_DATA, /* a shard group under HSDP */
  TS_CCL_GROUP_REPLICA, /* HSDP's replicas of a shard */
  TS_CCL_GROUP_CONTEXT,
  TS_CCL_GROUP_EMBEDDING,
  TS_CCL_GROUP_EXPERT,
  TS_CCL_GROUP_EXPERT_TENSOR,
  TS_CCL_GROUP_EXPERT_DATA,
  TS_CCL_GROUP_PIPELINE,
  TS_CCL_GROUPS
} ts_ccl_group;
extern const char *const ts_ccl_group_names[]; /* "default", "tensor", ... */

typedef struct ts_ccl_memory {
  double bytes; /* on the GPU that holds the most */
  double group_bytes[TS_CCL_GROUPS]; /* of which each group's communicator (0: none) */
  long rank; /* that GPU's rank */
  int communicators; /* its communicators */
  long version; /* the NCCL release priced (0: not modelled) */
} ts_ccl_memory;

/* The run's communicators on the GPU that holds the most (of each stage's GPUs on the nodes its
 * first tensor-parallel group spans): the default
 * group's (barriers; one with the data-parallel group under PyTorch's own DDP/FSDP, which use it),
 * tensor, data (and HSDP's replicas), context, embedding, expert and pipeline groups that have two
 * members or more. Zero where the platform's library is not NCCL or the run has one GPU. */
void ts_ccl_memory_of(const ts_workload *wl, const ts_gpu *gpu, ts_ccl_memory *out);

/* What the framework can allocate beside NCCL's bytes m (never below zero). */
double ts_usable_bytes_beside(const ts_gpu *gpu, const ts_ccl_memory *m);
/* The same for this run: the GPU's usable bytes less its NCCL's. */
double ts_usable_bytes(const ts_gpu *gpu, const ts_workload *wl);

#endif
