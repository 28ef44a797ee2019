/* schedule: the program each rank runs in one training iteration, as event streams.
 *
 * A rank's program is a list of blocks; a block points to a shared event template (the
 * forward or backward pass of its pipeline stage for one microbatch, or the end-of-iteration
 * gradient sync and optimizer step) so memory grows with ranks x microbatches, not with
 * events. Events name their communication partners abstractly (my TP group, the previous
 * stage); the job's tables resolve them per rank.
 *
 * 1F1B (Narayanan et al. SC'21, PipeDream-Flush), stage i of p, m microbatches:
 *   warm-up  w = min(p - i - 1, m) forwards: F0 .. F(w-1)
 *   steady   m - w pairs:                    F(w+k) B(k)
 *   drain    w backwards:                    B(m-w) .. B(m-1)
 * GPipe: F0 .. F(m-1) then B0 .. B(m-1).
 * Interleaved 1F1B: each rank holds v chunks of L / (p v) layers (chunk c of stage i is virtual
 * stage c p + i); the last stage's chunk c feeds the first stage's chunk c + 1. The bubble
 * shrinks from (p - 1) to (p - 1) / v passes (Narayanan et al. SC'21, section 2.2).
 *
 *   stage 0 |F0 F1 F2 F3 B0 F4 B1 ...        (p = 4)
 *   stage 3 |         F0 B0 F1 B1 ...
 *
 * Pipeline sends are posted asynchronously and completed together with the rank's next
 * receive (Megatron's batched send/receive) or at the end of the pipeline phase: a send
 * completes once the receiver has posted the matching receive and the bytes have crossed
 * (NCCL's rendezvous). Interleaved schedules are the exception (ts_job.is_pipeline_wrapped).
 */
#ifndef TS_SCHEDULE_H
#define TS_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "cost.h"
#include "workload.h"

/* TS_EV_COLL with is_async set is posted to the rank's communication stream, which runs its
 * collectives in order while the rank computes; TS_EV_WAIT blocks until at most wait_keep of
 * the posted collectives are unfinished (a single stream: waiting for one waits for those
 * posted before it). */
typedef enum ts_event_kind {
  TS_EV_COMPUTE,
  TS_EV_COLL,
  TS_EV_SEND,
  TS_EV_RECV,
  TS_EV_WAIT
} ts_event_kind;

/* Where a rank's time goes; events carry the category they count under. */
typedef enum ts_category {
  TS_CAT_COMPUTE,
  TS_CAT_RECOMPUTE,
  TS_CAT_OPTIMIZER,
  TS_CAT_TP, /* exposed tensor-parallel communication */
  TS_CAT_PP, /* exposed pipeline transfers */
  TS_CAT_DP, /* exposed gradient synchronisation */
  TS_CAT_EP, /* exposed expert-parallel token dispatch and combine */
  TS_CAT_CP, /* exposed context-parallel key-value exchange (ring attention) */
  TS_CAT_BUBBLE, /* waiting for another stage to produce */
  TS_CAT_IDLE, /* done, waiting for the slowest rank */
  TS_CAT_COUNT
} ts_category;
extern const char *const ts_category_names[]; /* "compute", ... "idle" */

typedef enum ts_coll_op {
  TS_COLL_ALLREDUCE,
  TS_COLL_REDUCE_SCATTER,
  TS_COLL_ALLGATHER,
  TS_COLL_ALLTOALL /* every rank sends bytes / p to every other (pairwise exchange) */
} ts_coll_op;
extern const char *const ts_coll_op_names[];

typedef enum ts_group_kind {
  TS_GROUP_TP,
  TS_GROUP_DP,
  TS_GROUP_EMBEDDING, /* first and last stage, for the tied word embedding */
  TS_GROUP_EP, /* expert parallel: the all-to-alls that dispatch tokens to experts and back */
  TS_GROUP_ETP, /* expert tensor parallel: tokens gathered for, and reduced from, the experts */
  TS_GROUP_EDP, /* expert data parallel: the experts' gradients */
  TS_GROUP_CP, /* context parallel: keys and values passed around for attention */
  /* HSDP (data_parallel_shard_degree): the data-parallel group is then one shard group, and
   * this one the ranks holding the same shard in the other replicas */
  TS_GROUP_DP_REPLICATE,
  TS_GROUP_KINDS
} ts_group_kind;

/* Groups whose collectives run inside a forward or backward pass, among the ranks of one
 * pipeline stage (the others close the pipeline phase: see sim/engine/engine.c). */
static inline bool ts_group_is_in_pass(int group) {
  return group == TS_GROUP_TP || group == TS_GROUP_EP || group == TS_GROUP_ETP ||
         group == TS_GROUP_CP;
}

typedef enum ts_peer { TS_PEER_PREV, TS_PEER_NEXT, TS_PEERS } ts_peer;

/* What an event belongs to, for timelines and reports. */
typedef enum ts_op {
  TS_OP_NONE,
  TS_OP_ATTN, /* LN, QKV, attention core, projection (forward) or their gradients */
  TS_OP_MLP, /* LN, FC1, GeLU, FC2 and the bias-dropout-adds */
  TS_OP_ATTN_CORE, /* the attention core alone (selective recomputation) */
  TS_OP_LAYERS, /* several of the above, merged */
  TS_OP_EMBEDDING,
  TS_OP_HEAD, /* final LN, logits, cross-entropy */
  TS_OP_OPTIMIZER,
  TS_OP_GRAD_SYNC,
  TS_OP_ACTIVATION, /* pipeline send/receive */
  TS_OP_MTP, /* a multi-token-prediction module's norms and eh_proj */
  TS_OP_COUNT
} ts_op;
extern const char *const ts_op_names[];

typedef struct ts_event {
  uint8_t kind; /* ts_event_kind */
  uint8_t category; /* ts_category */
  uint8_t coll_op; /* ts_coll_op, for TS_EV_COLL */
  uint8_t group; /* ts_group_kind, for TS_EV_COLL */
  uint8_t peer; /* ts_peer, for TS_EV_SEND / TS_EV_RECV */
  uint8_t op; /* ts_op */
  /* TS_EV_COLL: runs on the communication stream, followed there by time_s of the stream's
   * own GPU work (PyTorch's list all-gather copying its flat output into N tensors) */
  uint8_t is_async;
  /* TS_EV_COLL holding compute (time_s > 0): the SMs its kernels take from that compute
   * (DeepEP's, moe_deepep_num_sms), which then runs on the rest; 0: the platform's
   * collectives.overlap_slowdown (engine.h, ts_overlap_slowdown). */
  uint8_t sms_taken;
  /* TS_EV_COMPUTE: the host's time with the GPU idle (DeepSpeed's Python loops between device
   * synchronisations): not slowed by the GPU's variation nor by collectives beside it. */
  uint8_t is_host;
  int16_t wait_keep; /* TS_EV_WAIT: posted collectives that may stay unfinished */
  int16_t layer_first, layer_last; /* layers (of the stage) it covers; -1 when none */
  /* TS_EV_COMPUTE: duration on the GPU; TS_EV_COLL: the compute it holds (blocking) or the
   * stream's work after it (is_async) */
  double time_s;
  double recompute_s; /* TS_EV_COMPUTE: the part of time_s that is recomputation */
  double flops; /* TS_EV_COMPUTE: matrix FLOPs executed */
  double bytes; /* communication events: payload (for a collective, the full buffer) */
} ts_event;

typedef struct ts_block {
  const ts_event *events;
  int n_events;
} ts_block;

typedef struct ts_program {
  int n_blocks;
  ts_block *blocks;
} ts_program;

typedef struct ts_group {
  int n_members;
  long *members; /* ranks, ascending */
} ts_group;

typedef struct ts_job {
  long n_ranks;
  /* The pipeline wraps from the last stage to the first (virtual stages): the engine then
   * lets pipeline messages flow before their receive is posted (see sim/engine/engine.c). */
  bool is_pipeline_wrapped;
  /* overlap_p2p_comm (workload.h): a rank's pipeline sends are waited for at the receive after
   * its next compute, not at its next receive. */
  bool is_p2p_overlapped;
  /* DeepEP's dispatch (Megatron-Core's flex dispatcher): the expert-parallel groups'
   * all-to-alls cross the network once per node a token reaches (coll.h,
   * ts_coll_node_dispatch), with the routing that sets how many: top-k experts, within
   * ep_route_group_topk of ep_route_groups groups (0: no limit). */
  bool is_ep_flex;
  double ep_topk, ep_route_groups, ep_route_group_topk;
  long *rank_gpu; /* [rank]: the platform GPU it runs on; NULL means GPU = rank */
  long n_groups;
  ts_group *groups;
  long *rank_group; /* [rank * TS_GROUP_KINDS + kind]: group index or -1 */
  long *rank_peer; /* [rank * TS_PEERS + peer]: rank or -1 */
  ts_program *programs;
  /* storage owned by the job */
  long n_templates;
  ts_event **templates;
  int *template_len;
  long n_block_lists; /* block lists, each shared by the ranks that run it */
  ts_block **block_lists;
} ts_job;

/* Builds the programs of every rank of a resolved workload on gpu. Returns 0, or -1 with an
 * error when the job is too large to represent. Free with ts_job_fini. */
int ts_schedule_build(const ts_workload *wl, const ts_gpu *gpu, ts_job *out, ts_err *err);
void ts_job_fini(ts_job *job);

/* Steps beside forward (index) and whole backward (-1 - index) passes: a weight-gradient pass
 * (W), a backward's input gradients alone (B, its W later), and dualpipe's forward of one
 * microbatch run together with the backward of another (TS_STEP_FB + (f << TS_STEP_FB_SHIFT) +
 * b); index = microbatch x chunks + chunk. */
#define TS_STEP_W (1L << 50)
#define TS_STEP_BI (2L << 50)
#define TS_STEP_FB (3L << 50)
#define TS_STEP_FB_SHIFT 22

/* The pass order of one stage over v model chunks (v = 1 but for the interleaved schedule and
 * dualpipe's 2), as the steps above; returns their count. `steps` must hold
 * ts_schedule_n_blocks - 1 entries (at most 3 m v). zb-h1 (Qi et al.,
 * ICLR 2024, section 3.1: ZB-H1): the backward is split into B (input gradients, what the
 * previous stage waits for) and W (weight gradients); stage i runs 1F1B's forwards and B's and
 * keeps its first i W's deferred, which fill the drain at the end: 1F1B's activation memory,
 * a bubble of (p - 1)(T_F + T_B - T_W) against 1F1B's (p - 1)(T_F + T_B + T_W). Interleaved
 * (Megatron-LM's forward_backward_pipelining_with_interleaving; needs p | m), forward k runs chunk
 * (k / p) mod v of microbatch (k / pv) p + k mod p, backward k the chunks in reverse order;
 * w = min(2 (p - stage - 1) + (v - 1) p, m v) forwards warm up, then 1F1B pairs. dualpipe
 * (DeepSeek-AI, DeepSeek-V3 technical report, section 3.2.1; deepseek-ai/DualPipe's
 * DualPipe.step): half the microbatches enter at each end, rank r holding block r of the
 * forward-going pipeline (chunk 0) and block p - 1 - r of the backward-going one (chunk 1); its
 * main step runs one microbatch's forward with another's backward, each one's expert all-to-alls
 * under the other's compute; some backwards defer their W (zero bubble). */
long ts_schedule_order(ts_schedule_kind kind, long n_stages, long n_chunks, long stage,
                       long n_micro, long *steps);
/* The microbatch and the chunk of a step of ts_schedule_order. */
long ts_schedule_step_micro(long step, long n_chunks);
long ts_schedule_step_chunk(long step, long n_chunks);
/* 'F', 'B', 'W' or 'X' (a forward and a backward together): the pass a step runs. */
char ts_schedule_step_pass(long step);
/* "F12" (forward of microbatch 12), "B12" (backward; zb-h1: its input gradients), "W12" (zb-h1:
 * its weight gradients) or, with v > 1 chunks, "F12c1" (of chunk 1); `pass` replaces the letter
 * when not 0 (e.g. 'R' for recomputation). */
void ts_schedule_step_name(long step, long n_chunks, char pass, char *out, size_t size);
/* Whether stage `stage` holds a copy of the first stage's word embedding, whose gradient
 * Megatron's embedding group all-reduces with the first stage's (schedule.c). */
bool ts_schedule_embedding_copy(const ts_workload *wl, long stage);
/* Blocks of a stage's program, at most: one per step, then the gradient sync and optimizer
 * step (dualpipe's ranks run fewer, each its own count). */
long ts_schedule_n_blocks(const ts_workload *wl);

/* Helpers for building jobs by hand (tests, microbenchmarks). */
void ts_job_init(ts_job *job, long n_ranks);
long ts_job_add_group(ts_job *job, const long *members, int n_members);
/* Adds an event template the job owns; returns its index. */
long ts_job_add_template(ts_job *job, const ts_event *events, int n_events);
void ts_job_set_blocks(ts_job *job, long rank, const long *template_ids, int n_blocks);
/* The GPU rank runs on. */
long ts_job_gpu(const ts_job *job, long rank);
/* The slowdown of the compute an overlapped collective event holds: units / (units -
 * sms_taken) - 1 where its kernels take SMs (DeepEP's), else the platform's `overlap` (the
 * measured slowdown beside a library collective); units: the GPU's compute units. */
double ts_overlap_slowdown(const ts_event *ev, double overlap, long units);
/* Whether group g is a DeepEP expert-parallel group (is_ep_flex); *marks (n_groups entries,
 * allocated on the first call, freed by the caller) caches which groups are expert parallel. */
bool ts_job_is_flex_group(const ts_job *job, long g, bool **marks);

#endif
