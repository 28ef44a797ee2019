/* engine: SimGrid playback of rank programs; see engine.h. */
#include "engine.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../workloads/alloc.h"
#include "../network/route.h"
#include "../network/sg_platform.h"
#include "analytic.h"

/* ---- a small open-addressing map from 64-bit keys to indices ---- */

typedef struct id_map {
  uint64_t *keys; /* key + 1, so 0 marks an empty slot */
  long *values;
  size_t cap, n;
} id_map;

static void map_init(id_map *m, size_t expected) {
  m->cap = 16;
  while (m->cap < 2 * expected)
    m->cap *= 2;
  m->keys = ts_alloc(m->cap, sizeof *m->keys);
  m->values = ts_alloc(m->cap, sizeof *m->values);
  m->n = 0;
}

static void map_fini(id_map *m) {
  free(m->keys);
  free(m->values);
}

static size_t slot_of(const id_map *m, uint64_t key) {
  uint64_t h = (key + 1) * 0x9e3779b97f4a7c15ULL;
  size_t i = (size_t)(h >> 20) & (m->cap - 1);
  while (m->keys[i] != 0 && m->keys[i] != key + 1)
    i = (i + 1) & (m->cap - 1);
  return i;
}

static void map_grow(id_map *m) {
  id_map bigger;
  bigger.cap = m->cap * 2;
  bigger.keys = ts_alloc(bigger.cap, sizeof *bigger.keys);
  bigger.values = ts_alloc(bigger.cap, sizeof *bigger.values);
  bigger.n = m->n;
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i] != 0) {
      size_t j = slot_of(&bigger, m->keys[i] - 1);
      bigger.keys[j] = m->keys[i];
      bigger.values[j] = m->values[i];
    }
  map_fini(m);
  *m = bigger;
}

static bool map_has(const id_map *m, uint64_t key) {
  return m->keys[slot_of(m, key)] != 0;
}

/* The value of key, inserting next_value when absent; *is_new says which happened. */
static long map_get_or_add(id_map *m, uint64_t key, long next_value, bool *is_new) {
  if (2 * (m->n + 1) > m->cap)
    map_grow(m);
  size_t i = slot_of(m, key);
  *is_new = m->keys[i] == 0;
  if (*is_new) {
    m->keys[i] = key + 1;
    m->values[i] = next_value;
    m->n++;
  }
  return m->values[i];
}

/* ---- engine state shared by the actors (one simulation per process) ---- */

typedef struct pp_msg {
  double t_sent_s; /* when the sender posted it: earlier waiting is pipeline bubble */
} pp_msg;

typedef struct rank_ctx {
  long rank;
  const ts_program *prog;
  int group_pos[TS_GROUP_KINDS]; /* ring position in each group */
  sg_mailbox_t inbox[TS_PEERS]; /* [PREV]: activations from the previous stage; [NEXT]: grads */
  sg_mailbox_t outbox[TS_PEERS]; /* the peers' matching inboxes */
  sg_comm_t *pending; /* posted pipeline sends */
  int n_pending, cap_pending;
  int n_pending_before_compute; /* those posted before the rank's last compute began */
  ts_rank_result *res;
  bool is_traced;
  bool is_done;
  int multiplicity; /* the ranks it plays for: its node's under node or rail play, else 1 */
  int start_block, start_event; /* where its actor starts: 0, or a hand-over's event */
  /* Node play with a hand-over (engine.h): the event at which its node's ranks take over; -1 */
  int handover_block, handover_event;
  /* Its pipeline receives still to come from each peer, and how many of the last of them its
   * peer's ranks send after their node's hand-over (one message from each member). */
  int recvs_left[TS_PEERS], late_recvs[TS_PEERS];
  /* The communication stream, an actor of its own for ranks with asynchronous collectives:
   * it runs async[] in order, each once the rank has posted it. */
  long n_async;
  struct async_coll {
    const ts_event *ev;
    int block, event;
  } * async;
  sg_sem_t posted, finished; /* one release per collective posted / finished */
  long n_posted, n_finished_seen;
  long n_finished; /* collectives the stream has finished (n_finished_seen: waited for) */
  /* The most posted collectives that may be unfinished, known from the program alone (posts
   * and waits so far), hence the same on every member of a group that runs one program. */
  long stream_bound;
} rank_ctx;

static struct {
  const ts_job *job;
  ts_fidelity fidelity;
  ts_coll_algo collectives;
  double overlap_slowdown;
  long compute_units; /* the GPU's, for the SMs a collective's kernels take */
  ts_coll_group *groups;
  long n_events, n_merged_events;
  long n_transfers;
  void (*on_progress)(void *ctx, double events_played, double simulated_s);
  void *progress_ctx;
  void (*on_block)(void *ctx, long rank, int block, double end_s);
  void *block_ctx;
  /* Node and rail play (engine.h): [rank] the rank whose actor plays for it; NULL: every rank
   * plays. */
  long *player;
  int multiplicity; /* ranks each actor plays for */
  int byte_multiplicity; /* transfers each of its transfers stands for in bytes: node play's m */
  const long **played_for; /* [player]: the ranks it plays for, member j at j */
  long *node_ranks; /* rail play: [local GPU index of the job's GPUs]: the rank there */
  bool is_rail_play;
  bool *is_whole; /* rail play: [group] it holds whole nodes (its players play it) */
  const int *snapshot_blocks; /* ts_engine_opts' */
  double *bundle_Bps; /* [rank * 2 + end]: a player's node bundle, out (0) and in (1) */
  /* Node play with a hand-over (engine.h): [group] every member plays its collectives, after
   * the hand-over; [rank * 2]: a player's hand-over event (block, event), -1 when none. */
  bool is_handover_play;
  bool *is_deferred;
  int *handover;
  /* [2 rank + peer]: its receives from that peer (a player's), of them the last ones sent after
   * the sender's hand-over, and whether the rank sends to that peer after its own */
  int *n_recvs, *late_recvs;
  bool *is_late_sender;
  const ts_platform *pf;
  rank_ctx *ctx; /* [rank] */
  const bool *is_traced; /* ts_engine_opts' */
} eng;

static void flush_sends(rank_ctx *c) {
  for (int i = 0; i < c->n_pending; i++)
    sg_comm_wait(c->pending[i]);
  c->n_pending = c->n_pending_before_compute = 0;
}

/* At a receive: Megatron's batched isend/irecv completes the rank's sends with it; with
 * overlap_p2p_comm only those posted before its last compute began (the others are waited for
 * after the next compute, as its interleaved schedule waits on the previous step's handles). */
static void complete_sends(rank_ctx *c) {
  if (!eng.job->is_p2p_overlapped) {
    flush_sends(c);
    return;
  }
  int done = c->n_pending_before_compute;
  if (done == 0)
    return;
  for (int i = 0; i < done; i++)
    sg_comm_wait(c->pending[i]);
  memmove(c->pending, c->pending + done, (size_t)(c->n_pending - done) * sizeof *c->pending);
  c->n_pending -= done;
  c->n_pending_before_compute = 0;
}

static void do_send(rank_ctx *c, const ts_event *ev) {
  pp_msg *msg = ts_alloc(1, sizeof *msg);
  msg->t_sent_s = simgrid_get_clock();
  if (c->n_pending == c->cap_pending) {
    c->cap_pending = c->cap_pending ? 2 * c->cap_pending : 8;
    c->pending = realloc(c->pending, (size_t)c->cap_pending * sizeof *c->pending);
    TS_ASSERT(c->pending != NULL);
  }
  TS_ASSERT(c->outbox[ev->peer] != NULL);
  int stands_for = c->multiplicity > 1 ? eng.byte_multiplicity : 1; /* 1 after a hand-over */
  c->pending[c->n_pending++] =
      sg_mailbox_put_async(c->outbox[ev->peer], msg, (long)(ev->bytes * stands_for + 0.5));
  eng.n_transfers++;
}

/* Receive, completing posted sends alongside (Megatron's batched isend/irecv). Waiting before
 * the sender posted is bubble; the rest is exposed pipeline communication. */
static void trace_span(rank_ctx *c, int block, int event, double start_s, double end_s,
                       double sent_s) {
  ts_rank_result *res = c->res;
  if (res->n_spans == res->cap_spans) {
    res->cap_spans = res->cap_spans ? 2 * res->cap_spans : 1024;
    res->spans = realloc(res->spans, (size_t)res->cap_spans * sizeof *res->spans);
    TS_ASSERT(res->spans != NULL);
  }
  const ts_event *ev = &c->prog->blocks[block].events[event];
  int algorithm = TS_ALG_RING;
  if (ev->kind == TS_EV_COLL && ev->coll_op == TS_COLL_ALLTOALL)
    algorithm = TS_ALG_PAIRWISE;
  else if (ev->kind == TS_EV_COLL) {
    ts_coll_group *g = &eng.groups[eng.job->rank_group[c->rank * TS_GROUP_KINDS + ev->group]];
    ts_coll_algo chosen = ts_coll_choose(g, (ts_coll_op)ev->coll_op, ev->bytes);
    algorithm = chosen == TS_ALGO_HIERARCHICAL ? TS_ALG_HIERARCHICAL
                : chosen == TS_ALGO_TREE       ? TS_ALG_TREE
                                               : TS_ALG_RING;
  }
  res->spans[res->n_spans++] = (ts_span){start_s, end_s, sent_s, block, event, algorithm};
}

static void trace(rank_ctx *c, int block, int event, double start_s, double sent_s) {
  trace_span(c, block, event, start_s, simgrid_get_clock(), sent_s);
}

static sg_mailbox_t mailbox(const char *prefix, long a, long b) {
  char name[64];
  snprintf(name, sizeof name, "%s%ld.%ld", prefix, a, b);
  return sg_mailbox_by_name(name);
}

/* A receive; under a hand-over, a player's receive of a message its peer's ranks sent after
 * their node handed over is its members' messages, one from each peer member on its own route,
 * done with the last (as node play's transfers take their slowest member's time). */
static double do_recv(rank_ctx *c, const ts_event *ev) {
  double t0 = simgrid_get_clock();
  TS_ASSERT(c->inbox[ev->peer] != NULL);
  bool is_late = c->recvs_left[ev->peer]-- <= c->late_recvs[ev->peer] && c->late_recvs[ev->peer];
  int n = is_late ? c->multiplicity : 1;
  sg_comm_t comms[TS_PLATFORM_MAX_GPUS_PER_NODE];
  void *data[TS_PLATFORM_MAX_GPUS_PER_NODE];
  for (int j = 0; j < n; j++)
    comms[j] = sg_mailbox_get_async(
        is_late ? mailbox(ev->peer == TS_PEER_PREV ? "act" : "grad", eng.played_for[c->rank][j], 0)
                : c->inbox[ev->peer],
        &data[j]);
  double sent = 0;
  for (int j = 0; j < n; j++) {
    sg_comm_wait(comms[j]);
    pp_msg *msg = data[j];
    sent = fmax(sent, msg->t_sent_s);
    free(msg);
  }
  complete_sends(c);
  double t1 = simgrid_get_clock();
  double bubble = sent > t0 ? sent - t0 : 0;
  c->res->time_s[TS_CAT_BUBBLE] += bubble;
  c->res->time_s[TS_CAT_PP] += t1 - t0 - bubble;
  return sent;
}

static ts_coll_group *group_of(const rank_ctx *c, const ts_event *ev) {
  long g = eng.job->rank_group[c->rank * TS_GROUP_KINDS + ev->group];
  TS_ASSERT(g >= 0);
  return &eng.groups[g];
}

/* A collective the hybrid fidelity prices instead of playing (sim/engine/coll.h): the group's
 * members meet at its barrier, then each waits the alpha-beta time. */
static bool is_priced(const ts_coll_group *cg, const ts_event *ev) {
  return eng.fidelity == TS_FIDELITY_HYBRID && cg->is_in_node && cg->n > 1 &&
         ev->coll_op != TS_COLL_ALLTOALL;
}

/* Whether rank r plays (has an actor from the start). */
static bool plays(long r) {
  return eng.player == NULL || eng.player[r] == r;
}

/* The priced time of collective ev, counted once per group (at ring position 0; after a
 * hand-over the player's group's count still stands for its node's groups). */
static double priced_s(rank_ctx *c, ts_coll_group *cg, const ts_event *ev) {
  ts_coll_op op = (ts_coll_op)ev->coll_op;
  if (c->group_pos[ev->group] == 0 && plays(c->rank))
    cg->n_calls[ts_coll_choose(cg, op, ev->bytes)]++;
  return ts_coll_estimate_s(cg, op, ev->bytes);
}

/* The barrier at which c meets its group's members before a priced collective. */
static sg_bar_t priced_barrier(const rank_ctx *c, const ts_coll_group *cg) {
  return c->multiplicity == 1 && cg->member_barrier != NULL ? cg->member_barrier : cg->barrier;
}

static void run_coll(rank_ctx *c, const ts_event *ev) {
  ts_coll_group *cg = group_of(c, ev);
  if (is_priced(cg, ev)) {
    double t = priced_s(c, cg, ev);
    sg_barrier_wait(priced_barrier(c, cg));
    ts_coll_sleep(t);
    return;
  }
  ts_coll_run(cg, c->group_pos[ev->group], (ts_coll_op)ev->coll_op, ev->bytes, eng.fidelity,
              &eng.n_transfers);
}

/* Blocks until at most `keep` posted collectives are unfinished. */
static void wait_stream(rank_ctx *c, long keep) {
  while (c->n_posted - c->n_finished_seen > keep) {
    sg_sem_acquire(c->finished);
    c->n_finished_seen++;
  }
}

/* The slowdown of the compute a collective event holds (schedule.h). */
static double overlap_slowdown(const ts_event *ev) {
  return ts_overlap_slowdown(ev, eng.overlap_slowdown, eng.compute_units);
}

static void run_event(rank_ctx *c, int block, int event) {
  const ts_event *ev = &c->prog->blocks[block].events[event];
  double t0 = simgrid_get_clock(), sent = 0, slow = 1;
  switch ((ts_event_kind)ev->kind) {
  case TS_EV_COMPUTE:
    c->n_pending_before_compute = c->n_pending;
    if (c->n_posted > c->n_finished && !ev->is_host) /* the stream's work beside a kernel */
      slow += eng.overlap_slowdown;
    if (ev->time_s > 0) /* one compute stream per GPU: nothing shares it, no CPU model needed */
      ts_coll_sleep(ev->time_s * slow);
    c->res->flops += ev->flops;
    break;
  case TS_EV_COLL:
    if (ev->is_async) { /* traced by the stream when it runs */
      c->n_posted++;
      c->stream_bound++;
      sg_sem_release(c->posted);
      return;
    }
    if (!ts_group_is_in_pass(ev->group) && c->n_pending > 0) { /* the pipeline phase is over */
      flush_sends(c);
      c->res->time_s[TS_CAT_PP] += simgrid_get_clock() - t0;
      t0 = simgrid_get_clock();
    }
    run_coll(c, ev);
    if (ev->time_s > 0) { /* overlapped with a GEMM (tp_comm_overlap), slowed beside it */
      slow = 1 + overlap_slowdown(ev);
      double comm = simgrid_get_clock() - t0, gemm = ev->time_s * slow;
      ts_coll_sleep(ts_coll_overlapped_s(comm, gemm, group_of(c, ev)->n) - comm);
      c->res->flops += ev->flops;
    }
    break;
  case TS_EV_WAIT:
    wait_stream(c, ev->wait_keep);
    if (c->stream_bound > ev->wait_keep)
      c->stream_bound = ev->wait_keep;
    break;
  case TS_EV_SEND:
    do_send(c, ev);
    return; /* traced with its receive */
  case TS_EV_RECV:
    sent = do_recv(c, ev);
    break;
  }
  if (ev->kind != TS_EV_RECV) { /* do_recv splits its time between bubble and transfer */
    /* A collective that holds a GEMM (tp_comm_overlap) books the GEMM's time as compute or
     * recompute and the rest as its own category; a compute event books its recomputation. */
    double elapsed = simgrid_get_clock() - t0,
           work = ev->kind == TS_EV_COLL ? ev->time_s * slow : 0;
    c->res->time_s[TS_CAT_RECOMPUTE] += ev->recompute_s * slow; /* merged compute events */
    c->res->time_s[TS_CAT_COMPUTE] += work - ev->recompute_s * (ev->kind == TS_EV_COLL) * slow;
    c->res->time_s[ev->category] +=
        elapsed - work - ev->recompute_s * (ev->kind != TS_EV_COLL) * slow;
  }
  if (c->is_traced)
    trace(c, block, event, t0, sent);
}

/* ---- merged steps: a run of events played with at most three SimGrid activities ----
 *
 * Between two events that involve other ranks' actors in a way that depends on timing
 * (transfers, played collectives, the communication stream), a rank's events take fixed times:
 * compute while its stream is idle, and collectives the hybrid fidelity prices. Such a run is
 * played as one sleep up to its first priced collective, that collective's barrier, and one
 * sleep for the rest: the same times as event by event (to rounding), because the group's other
 * members run the same events (is_lockstep) and so reach each later barrier together. Every
 * member merges the same runs: what decides a run is the program, not the clock. */

/* A priced collective's time, overlapped with the GEMM it holds (tp_comm_overlap), if any. */
static double overlapped_s(const ts_coll_group *cg, const ts_event *ev, double comm_s) {
  return ev->time_s > 0
             ? ts_coll_overlapped_s(comm_s, ev->time_s * (1 + overlap_slowdown(ev)), cg->n)
             : comm_s;
}

/* Events from `first` of blk that rank c can play as one merged run; 0 or 1: play it alone. */
static int merged_run_length(const rank_ctx *c, const ts_block *blk, int first) {
  if (c->stream_bound > 0) /* the stream may be busy: compute may be slowed, event by event */
    return 0;
  int n = 0, group = -1;
  for (int e = first; e < blk->n_events; e++, n++) {
    const ts_event *ev = &blk->events[e];
    if (ev->kind == TS_EV_COMPUTE)
      continue;
    if (ev->kind != TS_EV_COLL || ev->is_async || (group >= 0 && ev->group != group))
      break;
    const ts_coll_group *cg = group_of(c, ev);
    if (!is_priced(cg, ev) || !cg->is_lockstep ||
        (!ts_group_is_in_pass(ev->group) && c->n_pending > 0)) /* run_event flushes sends first */
      break;
    group = ev->group;
  }
  return n;
}

/* Plays events first .. first + n - 1 of block b as merged_run_length found them. Each event
 * is priced once; the barrier's wait, known last, goes to the first collective's category. */
static void run_merged(rank_ctx *c, int b, int first, int n) {
  const ts_block *blk = &c->prog->blocks[b];
  c->n_pending_before_compute = c->n_pending;
  eng.n_merged_events += (long)n * c->multiplicity;
  double t0 = simgrid_get_clock(), before = 0, after = 0, wait = 0;
  ts_coll_group *cg = NULL;
  int barrier_at = first + n; /* the first collective */
  for (int e = first; e < first + n; e++) {
    const ts_event *ev = &blk->events[e];
    if (ev->kind == TS_EV_COLL && cg == NULL) {
      cg = group_of(c, ev);
      barrier_at = e;
    }
    double took =
        ev->kind == TS_EV_COMPUTE ? ev->time_s : overlapped_s(cg, ev, priced_s(c, cg, ev));
    double slow = ev->kind == TS_EV_COLL ? 1 + overlap_slowdown(ev) : 1;
    double work = ev->kind == TS_EV_COLL ? ev->time_s * slow : 0;
    *(e < barrier_at ? &before : &after) += took;
    c->res->flops += ev->flops;
    c->res->time_s[TS_CAT_RECOMPUTE] += ev->recompute_s * (work > 0 ? slow : 1);
    c->res->time_s[TS_CAT_COMPUTE] += work > 0 ? work - ev->recompute_s * slow : 0;
    c->res->time_s[ev->category] += took - work - (work > 0 ? 0 : ev->recompute_s);
  }
  if (before > 0)
    ts_coll_sleep(before);
  if (cg != NULL) {
    double arrived = simgrid_get_clock();
    sg_barrier_wait(priced_barrier(c, cg));
    wait = simgrid_get_clock() - arrived;
    c->res->time_s[blk->events[barrier_at].category] += wait;
    ts_coll_sleep(after);
  }
  if (c->is_traced) { /* timelines: each event's span, prices recomputed (few ranks) */
    double t = t0;
    for (int e = first; e < first + n; e++) {
      const ts_event *ev = &blk->events[e];
      double start = t;
      t += (e == barrier_at ? wait : 0) +
           (ev->kind == TS_EV_COMPUTE
                ? ev->time_s
                : overlapped_s(cg, ev, ts_coll_estimate_s(cg, (ts_coll_op)ev->coll_op, ev->bytes)));
      trace_span(c, b, e, start, t, 0);
    }
  }
}

/* The communication stream of a rank: its asynchronous collectives, in program order. */
static void stream_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  rank_ctx *c = sg_actor_self_get_data();
  for (long i = 0; i < c->n_async; i++) {
    sg_sem_acquire(c->posted);
    double t0 = simgrid_get_clock();
    run_coll(c, c->async[i].ev);
    if (c->async[i].ev->time_s > 0) /* the stream's own work after it (schedule.h) */
      ts_coll_sleep(c->async[i].ev->time_s);
    c->n_finished++;
    if (c->is_traced)
      trace(c, c->async[i].block, c->async[i].event, t0, 0);
    sg_sem_release(c->finished);
  }
}

/* The asynchronous collectives of c's program, for its stream. */
static void collect_async(rank_ctx *c) {
  for (int pass = 0; pass < 2; pass++) {
    c->n_async = 0;
    for (int b = 0; b < c->prog->n_blocks; b++)
      for (int e = 0; e < c->prog->blocks[b].n_events; e++) {
        const ts_event *ev = &c->prog->blocks[b].events[e];
        if (ev->kind != TS_EV_COLL || !ev->is_async)
          continue;
        if (pass == 1)
          c->async[c->n_async] = (struct async_coll){ev, b, e};
        c->n_async++;
      }
    if (pass == 0)
      c->async = c->n_async > 0 ? ts_alloc((size_t)c->n_async, sizeof *c->async) : NULL;
  }
}

static void start_actor(rank_ctx *c);

/* Node play with a hand-over (engine.h): at its first collective across nodes, the player has
 * its sends completed (as run_event would before that collective) and every rank of its node
 * goes on from there with an actor of its own and the player's results so far. */
static void hand_over(rank_ctx *c, int block, int event) {
  double t0 = simgrid_get_clock();
  flush_sends(c);
  c->res->time_s[TS_CAT_PP] += simgrid_get_clock() - t0;
  ts_sg_platform_hand_over(c->rank); /* its pairs with a node route take their own */
  const long *members = eng.played_for[c->rank];
  for (int j = 0; j < c->multiplicity; j++) {
    rank_ctx *to = &eng.ctx[members[j]];
    to->handover_block = -1;
    if (to == c)
      continue;
    to->is_traced = eng.is_traced != NULL && eng.is_traced[to->rank];
    ts_rank_result_share(to->res, c->res, c->prog->n_blocks, to->is_traced);
    to->multiplicity = 1;
    to->start_block = block;
    to->start_event = event;
    start_actor(to);
  }
  c->multiplicity = 1;
  c->is_traced = eng.is_traced != NULL && eng.is_traced[c->rank];
}

static void rank_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  rank_ctx *c = sg_actor_self_get_data();
  /* A pipeline send completes when the receiver has posted its receive and the bytes have
   * crossed (NCCL's rendezvous, as Megatron's and DeepSpeed's blocking p2p), except in a
   * wrapped (interleaved) pipeline: Megatron batches each step's sends and receives of both
   * directions so that they match, an order this event model does not reproduce, and the
   * rendezvous would deadlock on the wrap-around. There messages flow as soon as they are
   * sent (eager), a simplification that can only hide waiting. */
  for (int k = 0; eng.job->is_pipeline_wrapped && k < TS_PEERS; k++)
    sg_mailbox_set_receiver(sg_mailbox_get_name(c->inbox[k]));
  for (int b = c->start_block; b < c->prog->n_blocks; b++) {
    const ts_block *blk = &c->prog->blocks[b];
    for (int e = b == c->start_block ? c->start_event : 0; e < blk->n_events;) {
      if (b == c->handover_block && e == c->handover_event)
        hand_over(c, b, e);
      int n = merged_run_length(c, blk, e);
      if (n >= 2)
        run_merged(c, b, e, n);
      else
        run_event(c, b, e);
      e += n >= 2 ? n : 1;
    }
    eng.n_events += (long)blk->n_events * c->multiplicity;
    if (eng.on_progress != NULL)
      eng.on_progress(eng.progress_ctx, (double)eng.n_events, simgrid_get_clock());
    if (c->res->block_end_s != NULL)
      c->res->block_end_s[b] = simgrid_get_clock();
    for (int i = 0; eng.snapshot_blocks != NULL && i < 2; i++)
      if (eng.snapshot_blocks[2 * c->rank + i] == b) {
        memcpy(c->res->snapshot_time_s[i], c->res->time_s, sizeof c->res->time_s);
        c->res->snapshot_flops[i] = c->res->flops;
      }
    for (int i = 0; c->res->block_end_s != NULL && eng.on_block != NULL && i < c->multiplicity;
         i++) /* for every rank the actor plays for */
      eng.on_block(eng.block_ctx, c->multiplicity > 1 ? eng.played_for[c->rank][i] : c->rank, b,
                   c->res->block_end_s[b]);
  }
  double t0 = simgrid_get_clock();
  flush_sends(c);
  c->res->time_s[TS_CAT_PP] += simgrid_get_clock() - t0;
  t0 = simgrid_get_clock();
  wait_stream(c, 0); /* schedules wait before the optimizer; this only guards the end */
  c->res->time_s[TS_CAT_DP] += simgrid_get_clock() - t0;
  c->res->finish_s = simgrid_get_clock();
  c->is_done = true;
}

/* ---- platform: only the routes that ranks use ---- */

static void host_name(const ts_platform *pf, long gpu, char *name, size_t size) {
  snprintf(name, size, "n%ld_gpu%ld", gpu / pf->gpus_per_node, gpu % pf->gpus_per_node);
}

typedef struct route_set {
  id_map pairs; /* (src rank, dst rank) -> route index */
  id_map links; /* link id -> link index */
  long n_routes, cap_routes;
  ts_sg_route *routes;
  long n_links, cap_links;
  ts_link_id *link_ids;
  bool is_node_play_refused; /* a node route's members differ beyond their nodes' links */
} route_set;

/* Node play's bundles have ids of link kind 0, which route.c never makes: a player's rank and
 * the end (0: leaving its node, 1: entering it). */
static ts_link_id bundle_id(long player, int end) {
  return ((uint64_t)player << 1) | (uint64_t)end;
}

static bool is_bundle(ts_link_id id) {
  return id >> 60 == 0;
}

/* The capacity of a node's bundle at one end of its members' routes: ids lists every member's
 * own links at that end (a link once per member crossing it). */
static double bundle_capacity(const ts_platform *pf, const ts_link_id *ids, int n) {
  double cap = INFINITY;
  for (int i = 0; i < n; i++) {
    int crossing = 0;
    bool is_first = true;
    for (int k = 0; k < n; k++) {
      crossing += ids[k] == ids[i];
      is_first = is_first && (k >= i || ids[k] != ids[i]);
    }
    double bw = 0, lat = 0;
    ts_route_link_info(pf, ids[i], &bw, &lat, NULL, 0);
    if (is_first && bw * eng.multiplicity / crossing < cap)
      cap = bw * eng.multiplicity / crossing;
  }
  return cap;
}

/* Node play: the route of player src's transfers to player dst (engine.h), from their members'
 * routes, member j to member j. Returns false when those differ beyond the nodes' own links. */
static bool node_route(const ts_platform *pf, const ts_job *job, long src, long dst,
                       ts_route *out) {
  enum { MAX_END_LINKS = TS_ROUTE_MAX_LINKS * TS_PLATFORM_MAX_GPUS_PER_NODE };
  static ts_link_id ends[2][MAX_END_LINKS]; /* one simulation per process */
  int n_end[2] = {0, 0}, m = eng.multiplicity;
  const long *a = eng.played_for[src], *b = eng.played_for[dst];
  ts_route first;
  int first_head = 0, first_n = 0;
  *out = (ts_route){.n_links = 0, .lat_s = 0, .bw_Bps = INFINITY};
  for (int j = 0; j < m; j++) {
    ts_route r;
    ts_route_between(pf, ts_job_gpu(job, a[j]), ts_job_gpu(job, b[j]), &r);
    long src_node = ts_job_gpu(job, a[j]) / pf->gpus_per_node;
    long dst_node = ts_job_gpu(job, b[j]) / pf->gpus_per_node;
    TS_ASSERT(src_node != dst_node); /* players are on different nodes */
    int head = 0, tail = r.n_links;
    while (head < tail && ts_route_link_node(r.links[head]) == src_node)
      ends[0][n_end[0]++] = r.links[head++];
    while (tail > head && ts_route_link_node(r.links[tail - 1]) == dst_node)
      ends[1][n_end[1]++] = r.links[--tail];
    if (j == 0) {
      first = r;
      first_head = head;
      first_n = tail - head;
    } else if (tail - head != first_n ||
               memcmp(r.links + head, first.links + first_head, (size_t)first_n * sizeof *r.links))
      return false;
    if (r.lat_s > out->lat_s)
      out->lat_s = r.lat_s;
  }
  out->links[out->n_links++] = bundle_id(src, 0);
  for (int k = 0; k < first_n; k++)
    out->links[out->n_links++] = first.links[first_head + k];
  out->links[out->n_links++] = bundle_id(dst, 1);
  if (eng.bundle_Bps[src * 2] == 0)
    eng.bundle_Bps[src * 2] = bundle_capacity(pf, ends[0], n_end[0]);
  if (eng.bundle_Bps[dst * 2 + 1] == 0)
    eng.bundle_Bps[dst * 2 + 1] = bundle_capacity(pf, ends[1], n_end[1]);
  return true;
}

/* Adds the route from rank src to rank dst (hosts are numbered by rank), once, as the route
 * between the hosts of src and host_dst (a hand-over's late pipeline message reaches its
 * receiver's player: plan_late_messages); returns its latency. is_own: its ranks' own route,
 * also under node play (a deferred group's, which a pair of players may also have as a node
 * route: SimGrid then takes this one from the source's hand-over on). */
static double add_route(const ts_platform *pf, const ts_job *job, route_set *rs, long src,
                        long host_dst, long dst, bool is_own) {
  bool is_new = false, is_after_handover = eng.is_handover_play && is_own;
  is_own = is_own || eng.player == NULL || eng.is_rail_play;
  /* Under a hand-over, node play's aggregates share links with single flows: each counts as
   * its m members (weighted max-min, sg_platform.h), as the members' m flows would. */
  double weight = !is_own && eng.is_handover_play ? eng.multiplicity : 1;
  uint64_t key = ((uint64_t)src << 32) | (uint64_t)host_dst | ((uint64_t)is_after_handover << 63);
  long id = map_get_or_add(&rs->pairs, key, rs->n_routes, &is_new);
  if (!is_new)
    return rs->routes[id].lat_s;
  ts_route r;
  if (is_own)
    ts_route_between(pf, ts_job_gpu(job, src), ts_job_gpu(job, dst), &r);
  for (int k = 0; eng.is_rail_play && k < r.n_links; k++) /* each link's rail-0 stand-in */
    if (!ts_route_rail_link(pf, r.links[k], &r.links[k]))
      rs->is_node_play_refused = true;
  if (!is_own && !node_route(pf, job, src, dst, &r)) {
    rs->is_node_play_refused = true; /* the caller starts over, every rank playing */
    r = (ts_route){.n_links = 0};
  }
  if (rs->n_routes == rs->cap_routes) {
    rs->cap_routes = rs->cap_routes ? 2 * rs->cap_routes : 1024;
    rs->routes = realloc(rs->routes, (size_t)rs->cap_routes * sizeof *rs->routes);
    TS_ASSERT(rs->routes != NULL);
  }
  long *idx = ts_alloc((size_t)r.n_links, sizeof *idx);
  for (int k = 0; k < r.n_links; k++) {
    bool new_link = false;
    idx[k] = map_get_or_add(&rs->links, r.links[k], rs->n_links, &new_link);
    if (new_link) {
      if (rs->n_links == rs->cap_links) {
        rs->cap_links = rs->cap_links ? 2 * rs->cap_links : 1024;
        rs->link_ids = realloc(rs->link_ids, (size_t)rs->cap_links * sizeof *rs->link_ids);
        TS_ASSERT(rs->link_ids != NULL);
      }
      rs->link_ids[rs->n_links++] = r.links[k];
    }
  }
  rs->routes[rs->n_routes++] =
      (ts_sg_route){src, host_dst, r.n_links, idx, r.lat_s, weight, is_after_handover};
  return r.lat_s;
}

static double add_pair(const ts_platform *pf, const ts_job *job, route_set *rs, long src, long dst,
                       bool is_own) {
  return add_route(pf, job, rs, src, dst, dst, is_own);
}

static void route_set_fini(route_set *rs) {
  for (long i = 0; i < rs->n_routes; i++)
    free((long *)rs->routes[i].links);
  free(rs->routes);
  free(rs->link_ids);
  map_fini(&rs->pairs);
  map_fini(&rs->links);
}

/* Whether group g's collectives are played after a hand-over, by all of its members. */
static bool is_deferred(long g) {
  return eng.is_deferred != NULL && eng.is_deferred[g];
}

/* Whether member r of group g plays g's collectives. */
static bool member_plays(long g, long r) {
  return plays(r) || is_deferred(g);
}

/* Whether group g plays its collectives as transfers, every member having an actor (or, under
 * rail play, a group of whole nodes, which their players play). Under node play a
 * tensor-parallel group has one (its collectives are priced) and the other groups of its
 * other members none (they are never reached). */
static bool group_plays(const ts_job *job, long g) {
  if ((eng.is_whole != NULL && eng.is_whole[g]) || is_deferred(g))
    return true;
  for (int i = 0; eng.player != NULL && i < job->groups[g].n_members; i++)
    if (!plays(job->groups[g].members[i]))
      return false;
  return true;
}

/* The routes for every ring neighbour and pipeline peer of the ranks that play; notes each
 * ring's largest hop latency (the aggregate fidelity's latency terms). Under node play, sets
 * is_node_play_refused when a route cannot stand for its members'. */
static void collect_routes(const ts_platform *pf, const ts_job *job, route_set *rs) {
  memset(rs, 0, sizeof *rs);
  map_init(&rs->pairs, (size_t)job->n_ranks * 4);
  map_init(&rs->links, (size_t)job->n_ranks * 4);
  for (long g = 0; g < job->n_groups; g++) {
    ts_coll_group *cg = &eng.groups[g];
    cg->max_hop_lat_s = 0;
    for (int r = 0; group_plays(job, g) && r < cg->n_rings; r++)
      for (int i = 0; cg->n > 1 && i < cg->n; i++) {
        const long *ring = &cg->ring_ranks[r * cg->n];
        bool own = is_deferred(g);
        if (!member_plays(g, ring[i])) /* rail play: its player sends for it */
          continue;
        double lat = add_pair(pf, job, rs, ring[i], ring[(i + 1) % cg->n], own);
        if (lat > cg->max_hop_lat_s)
          cg->max_hop_lat_s = lat;
        if (cg->n >= 3) /* trees' chains inside nodes run both ways, along every ring */
          add_pair(pf, job, rs, ring[(i + 1) % cg->n], ring[i], own);
        for (int j = 0; cg->is_all_to_all && r == 0 && j < cg->n; j++)
          if (j != i && member_plays(g, ring[j]))
            add_pair(pf, job, rs, ring[i], ring[j], own);
        for (int t = 0; cg->tree_children != NULL && r == 0 && t < 2; t++) { /* tree edges */
          int parent = ts_coll_tree_parent(cg->n, t, i);
          if (parent >= 0) {
            add_pair(pf, job, rs, ring[i], ring[parent], own);
            add_pair(pf, job, rs, ring[parent], ring[i], own);
          }
        }
        if (cg->per_node > 0 && r == 0) { /* hierarchical: next on the node, next node */
          int m = cg->per_node;
          int in = i - i % m + (i % m + 1) % m, across = (i + m) % cg->n;
          add_pair(pf, job, rs, ring[i], ring[in], own);
          add_pair(pf, job, rs, ring[i], ring[across], own);
          for (int t = 0; t < 2; t++) { /* node trees */
            int parent = ts_coll_node_tree_parent(cg, t, i);
            if (parent >= 0) {
              add_pair(pf, job, rs, ring[i], ring[parent], own);
              add_pair(pf, job, rs, ring[parent], ring[i], own);
            }
          }
        }
      }
  }
  for (long r = 0; r < job->n_ranks; r++)
    for (int p = 0; p < TS_PEERS; p++) {
      long peer = job->rank_peer[r * TS_PEERS + p];
      if (peer >= 0 && plays(r))
        add_pair(pf, job, rs, r, peer, false);
      if (peer >= 0 && eng.is_late_sender != NULL && eng.is_late_sender[r * TS_PEERS + p]) {
        /* sent after the hand-over on its own route, to its peer's player (do_recv); a member
         * other than the player has no other route to it (its groups' partners lie in its
         * own stage, its embedding partner is its own member), which is checked */
        uint64_t other = ((uint64_t)r << 32) | (uint64_t)eng.player[peer];
        if (r != eng.player[r] &&
            (map_has(&rs->pairs, other) || map_has(&rs->pairs, other | 1ULL << 63)))
          rs->is_node_play_refused = true;
        add_route(pf, job, rs, r, eng.player[peer], peer, true);
      }
    }
}

static void stop_playing_for_others(void);

/* Builds the SimGrid platform: one host per rank, named after its GPU, and the routes of
 * collect_routes; node play stops here when its routes cannot stand for their members'. */
static void build_platform(const ts_platform *pf, const ts_job *job, ts_sim_result *out) {
  route_set rs;
  collect_routes(pf, job, &rs);
  if (rs.is_node_play_refused) {
    route_set_fini(&rs);
    stop_playing_for_others();
    collect_routes(pf, job, &rs);
  }
  char **host_names = ts_alloc((size_t)job->n_ranks, sizeof *host_names);
  for (long r = 0; r < job->n_ranks; r++) {
    char name[64];
    host_name(pf, ts_job_gpu(job, r), name, sizeof name);
    host_names[r] = strdup(name);
  }
  ts_sg_link *links = ts_alloc((size_t)rs.n_links, sizeof *links);
  for (long i = 0; i < rs.n_links; i++) {
    char name[64];
    ts_link_id id = rs.link_ids[i];
    if (is_bundle(id)) {
      links[i].bw_Bps = eng.bundle_Bps[id];
      snprintf(name, sizeof name, "node_%s_rank%lu", id & 1 ? "in" : "out",
               (unsigned long)(id >> 1));
    } else {
      ts_route_link_info(pf, id, &links[i].bw_Bps, &links[i].lat_s, name, sizeof name);
    }
    links[i].name = strdup(name);
  }
  ts_sg_platform_build(
      job->n_ranks, (const char *const *)host_names,
      pf->gpu.peak_flops_per_s[TS_PREC_BF16] > 0 ? pf->gpu.peak_flops_per_s[TS_PREC_BF16] : 1e12,
      rs.n_links, links, rs.n_routes, rs.routes);
  out->n_links = rs.n_links;
  out->n_routes = rs.n_routes;
  for (long r = 0; r < job->n_ranks; r++)
    free(host_names[r]);
  free(host_names);
  for (long i = 0; i < rs.n_links; i++)
    free((char *)links[i].name);
  free(links);
  route_set_fini(&rs);
}

/* Field by field: memcmp would also compare padding bytes. */
static bool events_equal(const ts_event *a, const ts_event *b, int n) {
  for (int i = 0; i < n; i++, a++, b++)
    if (a->kind != b->kind || a->category != b->category || a->coll_op != b->coll_op ||
        a->group != b->group || a->peer != b->peer || a->op != b->op ||
        a->is_async != b->is_async || a->wait_keep != b->wait_keep ||
        a->layer_first != b->layer_first || a->layer_last != b->layer_last ||
        a->time_s != b->time_s || a->recompute_s != b->recompute_s || a->flops != b->flops ||
        a->bytes != b->bytes)
      return false;
  return true;
}

/* Whether every member of grp runs the same events as its first (the blocks of one stage share
 * their event arrays, so this is mostly pointer comparisons). */
static bool same_program(const ts_program *p, const ts_program *p0) {
  if (p->n_blocks != p0->n_blocks)
    return false;
  for (int b = 0; b < p->n_blocks; b++) {
    const ts_block *x = &p->blocks[b], *y = &p0->blocks[b];
    if (x->n_events != y->n_events ||
        (x->events != y->events && !events_equal(x->events, y->events, x->n_events)))
      return false;
  }
  return true;
}

static bool runs_one_program(const ts_job *job, const ts_group *grp) {
  for (int i = 1; i < grp->n_members; i++)
    if (!same_program(&job->programs[grp->members[i]], &job->programs[grp->members[0]]))
      return false;
  return true;
}

static void setup_groups(const ts_platform *pf, const ts_job *job) {
  eng.groups = ts_alloc((size_t)job->n_groups, sizeof *eng.groups);
  bool *flex = NULL;
  /* Groups an all-to-all runs on need a route between every pair of members. */
  for (long r = 0; r < job->n_ranks; r++)
    for (int b = 0; b < job->programs[r].n_blocks; b++)
      for (int e = 0; e < job->programs[r].blocks[b].n_events; e++) {
        const ts_event *ev = &job->programs[r].blocks[b].events[e];
        long g = ev->kind == TS_EV_COLL ? job->rank_group[r * TS_GROUP_KINDS + ev->group] : -1;
        if (g >= 0 && ev->coll_op == TS_COLL_ALLTOALL)
          eng.groups[g].is_all_to_all = true;
      }
  for (long g = 0; g < job->n_groups; g++) {
    const ts_group *grp = &job->groups[g];
    ts_coll_group *cg = &eng.groups[g];
    int n = cg->n = grp->n_members;
    long *gpus = ts_alloc((size_t)n, sizeof(long));
    int *order = ts_alloc((size_t)n * TS_COLL_MAX_RINGS, sizeof(int));
    for (int i = 0; i < n; i++)
      gpus[i] = ts_job_gpu(job, grp->members[i]);
    int k = cg->n_rings = ts_coll_rings(pf, gpus, n, order);
    cg->ring_ranks = ts_alloc((size_t)(k * n), sizeof(long));
    cg->ring_pos = ts_alloc((size_t)(k * n), sizeof(int));
    int *member_pos = ts_alloc((size_t)n, sizeof(int)); /* member index -> position in ring r */
    for (int r = 0; r < k; r++) {
      for (int i = 0; i < n; i++) {
        cg->ring_ranks[r * n + i] = grp->members[order[r * n + i]];
        member_pos[order[r * n + i]] = i;
      }
      for (int i = 0; i < n; i++)
        cg->ring_pos[r * n + i] = member_pos[order[i]];
    }
    free(member_pos);
    cg->algo = eng.collectives;
    cg->per_node = ts_coll_per_node(pf, gpus, order, n);
    cg->is_in_node = true;
    for (int i = 1; i < n; i++)
      cg->is_in_node = cg->is_in_node && gpus[i] / pf->gpus_per_node == gpus[0] / pf->gpus_per_node;
    cg->is_lockstep = runs_one_program(job, grp);
    long *ring_gpus = ts_alloc((size_t)(k * n), sizeof(long));
    for (int i = 0; i < k * n; i++)
      ring_gpus[i] = gpus[order[i]];
    ts_coll_plan(pf, cg, ring_gpus);
    if (ts_job_is_flex_group(job, g, &flex))
      ts_coll_node_dispatch(cg, job->ep_topk, job->ep_route_groups, job->ep_route_group_topk);
    else if (cg->is_all_to_all)
      ts_coll_plan_pxn(pf, cg, ring_gpus);
    free(ring_gpus);
    free(gpus);
    free(order);
    cg->mailboxes = ts_alloc((size_t)(k * n), sizeof(sg_mailbox_t));
  }
  free(flex);
}

static bool same_members(const ts_group *a, const ts_group *b) {
  return a->n_members == b->n_members &&
         memcmp(a->members, b->members, (size_t)a->n_members * sizeof *a->members) == 0;
}

/* Node play (engine.h): [rank] the rank that plays for it, or NULL when a condition fails: every
 * tensor-parallel group fills a node, runs one program and prices its collectives (no
 * all-to-all), and every other group and pipeline peer of its member j is its first member's,
 * member for member, with member j's of the same nodes in their place. The routes are checked
 * when they are built (node_route). */
static long *plan_node_play(const ts_platform *pf, const ts_job *job) {
  if (eng.fidelity != TS_FIDELITY_HYBRID || pf->gpus_per_node < 2)
    return NULL;
  long *player = ts_alloc((size_t)job->n_ranks, sizeof *player);
  int *pos = ts_alloc((size_t)job->n_ranks, sizeof *pos); /* ring position in its TP group */
  bool ok = true;
  for (long r = 0; ok && r < job->n_ranks; r++) {
    long g = job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_TP];
    const ts_coll_group *cg = g >= 0 ? &eng.groups[g] : NULL;
    ok = cg != NULL && cg->n == pf->gpus_per_node && cg->is_in_node && cg->is_lockstep &&
         !cg->is_all_to_all;
    for (int i = 0; ok && i < cg->n; i++)
      if (cg->ring_ranks[i] == r)
        pos[r] = i;
    if (ok)
      player[r] = cg->ring_ranks[0];
  }
  for (long r = 0; ok && r < job->n_ranks; r++) {
    long p = player[r], tp = job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_TP];
    for (int k = 0; ok && k < TS_GROUP_KINDS; k++) {
      long g = job->rank_group[r * TS_GROUP_KINDS + k],
           g0 = job->rank_group[p * TS_GROUP_KINDS + k];
      if (g < 0 && g0 < 0)
        continue;
      if (g == tp || (g >= 0 && same_members(&job->groups[g], &job->groups[tp]))) {
        /* the TP group, or one of another kind on the same ranks (expert TP = TP): priced */
        ok = g0 == g && !eng.groups[g].is_all_to_all;
        continue;
      }
      ok = g >= 0 && g0 >= 0 && job->groups[g].n_members == job->groups[g0].n_members;
      for (int i = 0; ok && i < job->groups[g].n_members; i++) {
        long a = job->groups[g].members[i];
        ok = player[a] == job->groups[g0].members[i] && pos[a] == pos[r];
      }
    }
    for (int q = 0; ok && q < TS_PEERS; q++) {
      long peer = job->rank_peer[r * TS_PEERS + q], peer0 = job->rank_peer[p * TS_PEERS + q];
      ok = peer < 0 ? peer0 < 0 : peer0 >= 0 && player[peer] == peer0 && pos[peer] == pos[r];
    }
  }
  free(pos);
  if (!ok) {
    free(player);
    return NULL;
  }
  eng.played_for = ts_alloc((size_t)job->n_ranks, sizeof *eng.played_for);
  for (long r = 0; r < job->n_ranks; r++)
    eng.played_for[r] = eng.groups[job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_TP]].ring_ranks;
  return player;
}

/* Rail play and the hand-over: fills eng.node_ranks ([platform GPU]: the job's rank there, or
 * -1), player[r] (the rank on local GPU 0 of r's node) and pos[r] (r's local GPU). Returns
 * whether every node is full and its ranks run one program. */
static bool node_players(const ts_platform *pf, const ts_job *job, long *player, int *pos) {
  int m = pf->gpus_per_node;
  long n_gpus = ts_platform_n_gpus(pf);
  eng.node_ranks = ts_alloc((size_t)n_gpus, sizeof *eng.node_ranks);
  for (long g = 0; g < n_gpus; g++)
    eng.node_ranks[g] = -1;
  for (long r = 0; r < job->n_ranks; r++)
    eng.node_ranks[ts_job_gpu(job, r)] = r;
  bool ok = true;
  for (long r = 0; ok && r < job->n_ranks; r++) {
    long gpu = ts_job_gpu(job, r), first = gpu - gpu % m;
    for (int j = 0; ok && j < m; j++)
      ok = eng.node_ranks[first + j] >= 0;
    player[r] = eng.node_ranks[first];
    pos[r] = (int)(gpu % m);
    ok = ok && same_program(&job->programs[r], &job->programs[player[r]]);
  }
  return ok;
}

/* A player plays for its node's ranks, member j on local GPU j (eng.node_ranks). */
static void play_for_nodes(const ts_platform *pf, const ts_job *job) {
  int m = pf->gpus_per_node;
  eng.played_for = ts_alloc((size_t)job->n_ranks, sizeof *eng.played_for);
  for (long r = 0; r < job->n_ranks; r++)
    eng.played_for[r] = &eng.node_ranks[ts_job_gpu(job, r) - ts_job_gpu(job, r) % m];
}

/* Rail play: the rank on local GPU (pos[r] + 1) % m of r's node. */
static long turned(long r, const int *pos, int m) {
  return eng.node_ranks[ts_job_gpu(eng.job, r) - pos[r] + (pos[r] + 1) % m];
}

/* Whether turning every node's local GPUs by one maps the rings of group g (holding whole nodes)
 * onto its rings: each ring's hops onto another ring's hops. idx: scratch of n_ranks, -1. */
static bool rings_turn(const ts_coll_group *cg, const int *pos, int m, int *idx) {
  int n = cg->n, k = cg->n_rings;
  bool ok = true;
  for (int i = 0; i < n; i++)
    idx[cg->ring_ranks[i]] = i;
  for (int r = 0; ok && r < k; r++) {
    const long *ring = &cg->ring_ranks[r * n];
    ok = false;
    for (int image = 0; !ok && image < k; image++) {
      ok = true;
      for (int q = 0; ok && q < n; q++) {
        int at = cg->ring_pos[image * n + idx[turned(ring[q], pos, m)]];
        ok = cg->ring_ranks[image * n + (at + 1) % n] == turned(ring[(q + 1) % n], pos, m);
      }
    }
  }
  for (int i = 0; i < n; i++)
    idx[cg->ring_ranks[i]] = -1;
  return ok;
}

/* Rail play (engine.h): [rank] its node's player (the rank on local GPU 0), or NULL when a
 * condition fails: a rail-optimised two-level fat tree of switched nodes whose GPUs have a NIC
 * each, all alike; full nodes whose ranks run one program; pipeline peers and every group of
 * member j either member j's of the same nodes or a group of whole nodes (the same for all of a
 * node's members) whose rings the turn of local GPUs maps onto themselves and whose all-to-alls
 * are DeepEP's with its in-node stage priced; no all-reduce on those. Sets eng.is_whole. */
static long *plan_rail_play(const ts_platform *pf, const ts_job *job) {
  int m = pf->gpus_per_node;
  if (eng.fidelity != TS_FIDELITY_HYBRID || m < 2 || !pf->has_node_switch ||
      pf->topology != TS_TOPO_FAT_TREE || !pf->ft.is_rail_optimized || pf->ft.levels != 2 ||
      pf->n_nics != m)
    return NULL;
  for (int a = 0; a < m; a++) {
    const ts_nic *x = &pf->nics[a], *y = &pf->nics[0];
    if (pf->gpu_nic[a] != a || x->gpu != a || x->bw_Bps != y->bw_Bps || x->lat_s != y->lat_s ||
        x->pcie_Bps != y->pcie_Bps || x->pcie_lat_s != y->pcie_lat_s)
      return NULL;
  }
  long n = job->n_ranks;
  long *player = ts_alloc((size_t)n, sizeof *player);
  int *pos = ts_alloc((size_t)n, sizeof *pos), *idx = ts_alloc((size_t)n, sizeof *idx);
  bool ok = node_players(pf, job, player, pos);
  for (long r = 0; r < n; r++)
    idx[r] = -1;
  eng.is_whole = ts_alloc((size_t)job->n_groups, sizeof *eng.is_whole);
  for (long g = 0; ok && g < job->n_groups; g++) { /* groups of whole nodes */
    const ts_coll_group *cg = &eng.groups[g];
    int per_node = 0;
    for (int i = 0; i < cg->n; i++)
      per_node += ts_job_gpu(job, cg->ring_ranks[i]) / m == ts_job_gpu(job, cg->ring_ranks[0]) / m;
    eng.is_whole[g] = cg->n > m && per_node == m && cg->per_node == m && cg->n_nodes * m == cg->n;
    if (!eng.is_whole[g])
      continue;
    /* Played by its players: ring 0 counts calls at position 0, DeepEP sends to the same ring-0
     * offset of every node (a player, ts_coll_plan_node_stage pricing the rest). */
    ok = pos[cg->ring_ranks[0]] == 0 && rings_turn(cg, pos, m, idx) &&
         (!cg->is_all_to_all || ts_coll_plan_node_stage(pf, &eng.groups[g], (long[]){0, 1}));
    for (int i = 0; ok && cg->is_all_to_all && i < cg->n; i++)
      ok = (pos[cg->ring_ranks[i]] == 0) == (i % m == 0);
  }
  for (long r = 0; ok && r < n; r++) {
    long p = player[r];
    for (int k = 0; ok && k < TS_GROUP_KINDS; k++) {
      long g = job->rank_group[r * TS_GROUP_KINDS + k],
           g0 = job->rank_group[p * TS_GROUP_KINDS + k];
      ok = (g < 0) == (g0 < 0) && (g < 0 || job->groups[g].n_members == job->groups[g0].n_members);
      if (!ok || g < 0 || job->groups[g].n_members == 1)
        continue;
      if (eng.is_whole[g]) {
        ok = g == g0;
        continue;
      }
      for (int i = 0; ok && i < job->groups[g].n_members; i++) { /* member j's of its nodes */
        long a = job->groups[g].members[i];
        ok = player[a] == job->groups[g0].members[i] && pos[a] == pos[r];
      }
    }
    for (int q = 0; ok && q < TS_PEERS; q++) {
      long peer = job->rank_peer[r * TS_PEERS + q], peer0 = job->rank_peer[p * TS_PEERS + q];
      ok = peer < 0 ? peer0 < 0 : peer0 >= 0 && player[peer] == peer0 && pos[peer] == pos[r];
    }
  }
  for (long r = 0; ok && r < n; r++) /* the collectives its groups of whole nodes run */
    for (int b = 0; ok && player[r] == r && b < job->programs[r].n_blocks; b++)
      for (int e = 0; ok && e < job->programs[r].blocks[b].n_events; e++) {
        const ts_event *ev = &job->programs[r].blocks[b].events[e];
        long g = ev->kind == TS_EV_COLL ? job->rank_group[r * TS_GROUP_KINDS + ev->group] : -1;
        ok = g < 0 || !eng.is_whole[g] || ev->coll_op == TS_COLL_REDUCE_SCATTER ||
             ev->coll_op == TS_COLL_ALLGATHER ||
             (ev->coll_op == TS_COLL_ALLTOALL && eng.groups[g].node_share > 0);
      }
  free(pos);
  free(idx);
  if (!ok) {
    free(player);
    return NULL;
  }
  play_for_nodes(pf, job);
  eng.is_rail_play = true;
  return player;
}

/* What node play with a hand-over needs of a program, found once per program (a stage's ranks
 * share their blocks): where its node hands over and the in-pass collectives it prices. */
typedef struct program_memo {
  const ts_block *blocks;
  bool ok;
  int handover[2]; /* block, event; -1 when none */
  int n_recvs[TS_PEERS]; /* pipeline receives from each peer */
  int late_sends[TS_PEERS]; /* pipeline sends to each peer after the hand-over */
  int n_priced;
  struct priced_call {
    int kind;
    ts_coll_op op;
    double bytes;
  } priced[32];
} program_memo;

/* Fills memo for prog. Its node hands over (hand_over) at the first collective of a group of a
 * kind that runs between passes (data parallelism, the embedding), if the program allows one:
 * no asynchronous collective before it; that one itself asynchronous (gradient buckets reduced
 * during the last backward pass) only with no pipeline send pending (a receive completes them
 * unless p2p_overlapped: hand_over would wait for them where the rank does not); from it on
 * collectives of such groups, the rest of the pass's priced ones (each member at its group's
 * member_barrier), pipeline sends (to players, which receive them member by member: do_recv)
 * and no receive. memo->ok is false when it does not, or prices too many kinds of call. */
static void study_program(const ts_program *prog, bool is_p2p_overlapped, program_memo *memo) {
  *memo = (program_memo){.blocks = prog->blocks, .ok = true, .handover = {-1, -1}};
  bool is_send_pending = false;
  for (int b = 0; memo->ok && b < prog->n_blocks; b++)
    for (int e = 0; memo->ok && e < prog->blocks[b].n_events; e++) {
      const ts_event *ev = &prog->blocks[b].events[e];
      bool after = memo->handover[0] >= 0;
      if (ev->kind == TS_EV_SEND) {
        memo->late_sends[ev->peer] += after;
        is_send_pending = true;
      } else if (ev->kind == TS_EV_RECV) {
        memo->ok = !after;
        memo->n_recvs[ev->peer]++;
        is_send_pending = is_send_pending && is_p2p_overlapped;
      }
      if (ev->kind != TS_EV_COLL)
        continue;
      bool between = !ts_group_is_in_pass(ev->group);
      memo->ok = after ? between || !ev->is_async : !ev->is_async || (between && !is_send_pending);
      if (between && !after)
        memcpy(memo->handover, (int[]){b, e}, sizeof memo->handover);
      int i = 0;
      while (i < memo->n_priced &&
             (memo->priced[i].kind != ev->group || memo->priced[i].op != (ts_coll_op)ev->coll_op ||
              memo->priced[i].bytes != ev->bytes))
        i++;
      if (!between && i == memo->n_priced) {
        memo->ok = memo->ok && i < (int)(sizeof memo->priced / sizeof *memo->priced);
        if (memo->ok)
          memo->priced[memo->n_priced++] =
              (struct priced_call){ev->group, (ts_coll_op)ev->coll_op, ev->bytes};
      }
    }
}

/* Whether two groups of kind `kind` price the calls of memo alike: time and algorithm. */
static bool priced_alike(ts_coll_group *a, ts_coll_group *b, const program_memo *memo, int kind) {
  for (int i = 0; a != b && i < memo->n_priced; i++) {
    const struct priced_call *call = &memo->priced[i];
    if (call->kind == kind &&
        (ts_coll_estimate_s(a, call->op, call->bytes) !=
             ts_coll_estimate_s(b, call->op, call->bytes) ||
         ts_coll_choose(a, call->op, call->bytes) != ts_coll_choose(b, call->op, call->bytes)))
      return false;
  }
  return true;
}

/* Node play with a hand-over (engine.h): [rank] its node's player (the rank on local GPU 0), or
 * NULL when a condition fails: full nodes whose ranks run one program; the groups that run
 * inside a pass tensor-parallel ones inside the node, priced alike, the player first in its
 * own; pipeline peers of member j member j's of other nodes; every other group either of one
 * member or across nodes (deferred: all of its members play it) and reached only after the
 * program's last pipeline message (study_program). Sets eng.is_deferred and eng.handover. */
/* The memos of a job's programs, at most MEMOS of them. */
enum { MEMOS = 16 };
typedef struct program_memos {
  program_memo memo[MEMOS];
  int n;
} program_memos;

/* Index of rank r's program's memo, studied on first use; -1 past MEMOS. */
static int memo_of(program_memos *ms, const ts_job *job, long r) {
  int i = 0;
  while (i < ms->n && ms->memo[i].blocks != job->programs[r].blocks)
    i++;
  if (i == ms->n && i < MEMOS)
    study_program(&job->programs[r], job->is_p2p_overlapped, &ms->memo[ms->n++]);
  return i < MEMOS ? i : -1;
}

/* The pipeline messages sent after a hand-over (study_program): every member of the sending
 * node sends its own, and the receiving player counts its receives to know the last ones, which
 * it takes member by member (do_recv). Sets eng.n_recvs, eng.late_recvs, eng.is_late_sender;
 * false where a wrapped pipeline would need them (its eager sends are not modelled so). */
static bool plan_late_messages(const ts_job *job, const long *player, program_memos *memos) {
  long n = job->n_ranks;
  eng.n_recvs = ts_alloc((size_t)n * TS_PEERS, sizeof *eng.n_recvs);
  eng.late_recvs = ts_alloc((size_t)n * TS_PEERS, sizeof *eng.late_recvs);
  eng.is_late_sender = ts_alloc((size_t)n * TS_PEERS, sizeof *eng.is_late_sender);
  for (long r = 0; r < n; r++) {
    const program_memo *own = &memos->memo[memo_of(memos, job, player[r])];
    for (int q = 0; q < TS_PEERS; q++) {
      long peer = job->rank_peer[r * TS_PEERS + q];
      if (peer < 0)
        continue;
      eng.is_late_sender[r * TS_PEERS + q] = own->late_sends[q] > 0;
      if (player[r] != r)
        continue;
      int i = memo_of(memos, job, peer); /* the peer sends to r through its other outbox */
      if (i < 0)
        return false;
      eng.n_recvs[r * TS_PEERS + q] = own->n_recvs[q];
      eng.late_recvs[r * TS_PEERS + q] = memos->memo[i].late_sends[TS_PEERS - 1 - q];
      if (eng.late_recvs[r * TS_PEERS + q] > 0 && job->is_pipeline_wrapped)
        return false;
    }
  }
  return true;
}

static long *plan_handover_play(const ts_platform *pf, const ts_job *job) {
  int m = pf->gpus_per_node;
  if (eng.fidelity != TS_FIDELITY_HYBRID || m < 2)
    return NULL;
  long n = job->n_ranks;
  long *player = ts_alloc((size_t)n, sizeof *player);
  int *pos = ts_alloc((size_t)n, sizeof *pos);
  eng.is_deferred = ts_alloc((size_t)job->n_groups, sizeof *eng.is_deferred);
  eng.handover = ts_alloc((size_t)n * 2, sizeof *eng.handover);
  bool ok = node_players(pf, job, player, pos);
  program_memos memos = {.n = 0};
  for (long r = 0; ok && r < n; r++) {
    long p = player[r];
    int i = memo_of(&memos, job, p); /* the player's program's memo */
    ok = i >= 0 && memos.memo[i].ok;
    long tp = job->rank_group[r * TS_GROUP_KINDS + TS_GROUP_TP];
    for (int k = 0; ok && k < TS_GROUP_KINDS; k++) {
      long g = job->rank_group[r * TS_GROUP_KINDS + k],
           g0 = job->rank_group[p * TS_GROUP_KINDS + k];
      ok = (g < 0) == (g0 < 0);
      if (!ok || g < 0)
        continue;
      ts_coll_group *cg = &eng.groups[g];
      if (k == TS_GROUP_TP || (tp >= 0 && same_members(&job->groups[g], &job->groups[tp]))) {
        ok = cg->n == 1 || (cg->is_in_node && cg->is_lockstep && !cg->is_all_to_all);
        ok = ok && (r != p || cg->ring_ranks[0] == p); /* the player counts its group's calls */
        ok = ok && (r != cg->ring_ranks[0] || priced_alike(cg, &eng.groups[g0], &memos.memo[i], k));
      } else if (ts_group_is_in_pass(k)) {
        ok = false; /* expert or context parallelism beyond the TP group: not here */
      } else {
        ok = cg->n == 1 || !cg->is_in_node;
        eng.is_deferred[g] = true;
      }
    }
    for (int q = 0; ok && q < TS_PEERS; q++) {
      long peer = job->rank_peer[r * TS_PEERS + q], peer0 = job->rank_peer[p * TS_PEERS + q];
      ok = peer < 0 ? peer0 < 0
                    : peer0 >= 0 && peer0 != p && player[peer] == peer0 && pos[peer] == pos[r];
    }
    if (ok)
      memcpy(&eng.handover[2 * r], memos.memo[i].handover, sizeof memos.memo[i].handover);
  }
  free(pos);
  ok = ok && plan_late_messages(job, player, &memos);
  if (!ok) {
    free(player);
    return NULL;
  }
  play_for_nodes(pf, job);
  eng.is_handover_play = true;
  return player;
}

/* Every rank plays after all (a route found node or rail play inexact). */
static void stop_playing_for_others(void) {
  free(eng.player);
  free(eng.played_for);
  free(eng.node_ranks);
  free(eng.is_whole);
  free(eng.is_deferred);
  free(eng.handover);
  free(eng.n_recvs);
  free(eng.late_recvs);
  free(eng.is_late_sender);
  eng.player = NULL;
  eng.played_for = NULL;
  eng.node_ranks = NULL;
  eng.is_whole = NULL;
  eng.is_deferred = NULL;
  eng.handover = NULL;
  eng.n_recvs = eng.late_recvs = NULL;
  eng.is_late_sender = NULL;
  eng.is_handover_play = false;
  eng.is_rail_play = false;
  eng.multiplicity = eng.byte_multiplicity = 1;
}

static void teardown_groups(const ts_job *job) {
  for (long g = 0; g < job->n_groups; g++) {
    free(eng.groups[g].ring_ranks);
    free(eng.groups[g].ring_pos);
    free(eng.groups[g].intra_mailboxes);
    free(eng.groups[g].cross_mailboxes);
    free(eng.groups[g].tree_mailboxes[0]);
    free(eng.groups[g].tree_mailboxes[1]);
    free(eng.groups[g].tree_children);
    free(eng.groups[g].mailboxes);
    for (int i = 0; eng.groups[g].proxies != NULL && i < eng.groups[g].n; i++)
      if (eng.groups[g].proxies[i] != NULL) {
        sg_sem_destroy(eng.groups[g].proxies[i]->go);
        sg_sem_destroy(eng.groups[g].proxies[i]->done);
        free(eng.groups[g].proxies[i]);
      }
    free(eng.groups[g].proxies);
    free(eng.groups[g].landing_from);
    free(eng.groups[g].landing_box);
    free(eng.groups[g].landing_member);
    if (eng.groups[g].barrier != NULL)
      sg_barrier_destroy(eng.groups[g].barrier);
    if (eng.groups[g].member_barrier != NULL)
      sg_barrier_destroy(eng.groups[g].member_barrier);
    for (int i = 0; eng.groups[g].node_barriers != NULL && i < eng.groups[g].n_nodes; i++)
      sg_barrier_destroy(eng.groups[g].node_barriers[i]);
    free(eng.groups[g].node_barriers);
  }
  free(eng.groups);
  eng.groups = NULL;
}

static void init_simgrid(void) {
  /* See engine.h for why CM02 without cross-traffic and with a TCP window that never binds. Actor
   * stacks are small: rank_main is shallow, and thousands of 8 MiB stacks would not be. No
   * guard page: mprotect splits each stack into memory mappings of its own, and Linux allows
   * 65,530 (vm.max_map_count), fewer than two per actor of a 75,264-GCD job. The max-min
   * solver's precision is 1e-3, not 1e-5: it was raised while CM02 weighed each flow by its
   * route latency (~1e-6 s), which made a link's usage sum ~1e6 per flow; with tens of
   * thousands of flows on one link (an all-to-all of 256 GPUs) rounding left more than 1e-5
   * behind and SimGrid 3.32 read before its constraint array and crashed (maxmin.cpp, "Cannot
   * saturate more a constraint that has no active element"). Every flow now weighs 1
   * (sg_platform.cpp), and that all-to-all runs at 1e-5 too, to the same time; the figures of
   * docs/ were measured at 1e-3, so it stays until they are remeasured. Remaining capacity is
   * compared to precision x the link's bandwidth, so a link counts as full within 0.1% of it. */
  static char options[][48] = {
      "trainsim",
      "--cfg=network/model:CM02",
      "--cfg=network/crosstraffic:0",
      "--cfg=network/TCP-gamma:1e100",
      "--cfg=maxmin/precision:1e-3",
      "--cfg=contexts/stack-size:256",
      "--cfg=contexts/guard-size:0",
#ifdef TS_SANITIZE
      "--cfg=contexts/factory:thread", /* ASan cannot follow SimGrid's stack switching */
#endif
      "--log=root.thres:critical"};
  enum { N_OPTIONS = sizeof options / sizeof *options };
  static char *argv[N_OPTIONS + 1]; /* simgrid_init takes mutable strings and may keep them */
  for (int i = 0; i < N_OPTIONS; i++)
    argv[i] = options[i];
  int argc = N_OPTIONS;
  simgrid_init(&argc, argv);
  /* SimGrid's SIGINT handler calls exit() while the simulation's thread runs on, which can
   * crash in static destructors: a signal to stop stops the process, as it would without it. */
  signal(SIGINT, SIG_DFL);
}

/* Rail play, a group of whole nodes: where each ring transfer its players send lands (the
 * receiving member's own mailbox), listed for that member's player; a proxy actor on each
 * receiving member's host that is not a player (ts_coll_group.landing_from). */
static void plan_landings(const ts_platform *pf, const ts_job *job, ts_coll_group *cg) {
  int n = cg->n, k = cg->n_rings;
  int *idx = ts_alloc((size_t)job->n_ranks, sizeof *idx); /* rank -> ring-0 position */
  for (int i = 0; i < n; i++)
    idx[cg->ring_ranks[i]] = i;
  cg->landing_from = ts_alloc((size_t)n + 1, sizeof *cg->landing_from);
  cg->landing_box = ts_alloc((size_t)(n * k), sizeof *cg->landing_box);
  cg->landing_member = ts_alloc((size_t)(n * k), sizeof *cg->landing_member);
  cg->proxies = ts_alloc((size_t)n, sizeof *cg->proxies);
  int total = 0;
  for (int u = 0; u < n; u++) { /* the landings of the player at u, in ring order */
    cg->landing_from[u] = total;
    for (int r = 0; plays(cg->ring_ranks[u]) && r < k; r++)
      for (int i = 0; i < n; i++) {
        long to = cg->ring_ranks[r * n + (i + 1) % n];
        if (!plays(cg->ring_ranks[r * n + i]) || eng.player[to] != cg->ring_ranks[u])
          continue;
        cg->landing_box[total] = r * n + (i + 1) % n;
        cg->landing_member[total++] = idx[to];
        if (to == eng.player[to] || cg->proxies[idx[to]] != NULL)
          continue;
        ts_coll_proxy *proxy = ts_alloc(1, sizeof *proxy);
        proxy->go = sg_sem_init(0);
        proxy->done = sg_sem_init(0);
        cg->proxies[idx[to]] = proxy;
        char host[64], name[48];
        host_name(pf, ts_job_gpu(job, to), host, sizeof host);
        snprintf(name, sizeof name, "proxy%ld", to);
        sg_actor_t a = sg_actor_init(name, sg_host_by_name(host));
        sg_actor_set_data(a, proxy);
        sg_actor_start(a, ts_coll_proxy_main, 0, NULL);
        sg_actor_daemonize(a);
      }
    TS_ASSERT(!plays(cg->ring_ranks[u]) || total - cg->landing_from[u] == k); /* ring by ring */
  }
  cg->landing_from[n] = total;
  free(idx);
}

/* Starts rank c's actor (and its communication stream's) at its start_block, start_event. */
static void start_actor(rank_ctx *c) {
  const ts_job *job = eng.job;
  long r = c->rank;
  for (int k = 0; k < TS_GROUP_KINDS; k++) {
    long g = job->rank_group[r * TS_GROUP_KINDS + k];
    for (int i = 0; g >= 0 && i < eng.groups[g].n; i++)
      if (eng.groups[g].ring_ranks[i] == r)
        c->group_pos[k] = i;
  }
  c->inbox[TS_PEER_PREV] = mailbox("act", r, 0);
  c->inbox[TS_PEER_NEXT] = mailbox("grad", r, 0);
  long prev = job->rank_peer[r * TS_PEERS + TS_PEER_PREV];
  long next = job->rank_peer[r * TS_PEERS + TS_PEER_NEXT];
  c->outbox[TS_PEER_NEXT] = next >= 0 ? mailbox("act", next, 0) : NULL;
  c->outbox[TS_PEER_PREV] = prev >= 0 ? mailbox("grad", prev, 0) : NULL;
  char host[64], name[32];
  host_name(eng.pf, ts_job_gpu(job, r), host, sizeof host);
  snprintf(name, sizeof name, "rank%ld", r);
  sg_host_t h = sg_host_by_name(host);
  TS_ASSERT(h != NULL);
  collect_async(c); /* before the actor starts: one started by another may run at once */
  if (c->n_async > 0) {
    c->posted = sg_sem_init(0);
    c->finished = sg_sem_init(0);
  }
  sg_actor_t a = sg_actor_init(name, h);
  sg_actor_set_data(a, c);
  sg_actor_start(a, rank_main, 0, NULL);
  if (c->n_async > 0) {
    snprintf(name, sizeof name, "stream%ld", r);
    sg_actor_t st = sg_actor_init(name, h);
    sg_actor_set_data(st, c);
    sg_actor_start(st, stream_main, 0, NULL);
  }
}

typedef struct simulation {
  const ts_platform *pf;
  const ts_job *job;
  const ts_engine_opts *opts;
  ts_sim_result *out;
} simulation;

/* Plays job out: the simulation thread's body. */
static void *simulate(void *arg) {
  const simulation *sim = arg;
  const ts_platform *pf = sim->pf;
  const ts_job *job = sim->job;
  const ts_engine_opts *opts = sim->opts;
  ts_sim_result *out = sim->out;
  memset(&eng, 0, sizeof eng);
  eng.job = job;
  eng.fidelity = opts->fidelity;
  eng.collectives = opts->collectives;
  eng.overlap_slowdown = opts->overlap_slowdown;
  eng.compute_units = pf->gpu.n_compute_units;
  eng.on_progress = opts->on_progress;
  eng.on_block = opts->on_block;
  eng.snapshot_blocks = opts->snapshot_blocks;
  eng.block_ctx = opts->block_ctx;
  eng.progress_ctx = opts->progress_ctx;
  ts_sim_result res;
  memset(&res, 0, sizeof res);
  res.n_ranks = job->n_ranks;
  res.ranks = ts_alloc((size_t)job->n_ranks, sizeof *res.ranks);

  init_simgrid();
  setup_groups(pf, job);
  if (!opts->is_playing_every_rank) /* the first shortcut whose conditions hold */
    for (int plan = 0; plan < 3 && eng.player == NULL; plan++) {
      stop_playing_for_others(); /* what a failed plan left */
      eng.player = plan == 0   ? plan_node_play(pf, job)
                   : plan == 1 ? plan_rail_play(pf, job)
                               : plan_handover_play(pf, job);
    }
  if (eng.player != NULL) {
    eng.multiplicity = pf->gpus_per_node;
    eng.byte_multiplicity = eng.is_rail_play ? 1 : pf->gpus_per_node;
    if (!eng.is_rail_play)
      eng.bundle_Bps = ts_alloc((size_t)job->n_ranks * 2, sizeof *eng.bundle_Bps);
  } else {
    stop_playing_for_others();
  }
  build_platform(pf, job, &res); /* may turn node or rail play off */

  for (long g = 0; g < job->n_groups; g++) {
    ts_coll_group *cg = &eng.groups[g];
    if (!group_plays(job, g)) { /* a player's TP group: priced, met by the player alone */
      if (plays(cg->ring_ranks[0]))
        cg->barrier = sg_barrier_init(1);
      if (eng.is_handover_play && cg->n > 1) /* priced collectives after the hand-over */
        cg->member_barrier = sg_barrier_init((unsigned)cg->n);
      continue;
    }
    cg->multiplicity = is_deferred(g) ? 1 : eng.byte_multiplicity;
    for (int i = 0; i < cg->n * cg->n_rings; i++)
      cg->mailboxes[i] = mailbox("ring", g, i);
    if (cg->per_node > 0) {
      cg->intra_mailboxes = ts_alloc((size_t)cg->n, sizeof(sg_mailbox_t));
      cg->cross_mailboxes = ts_alloc((size_t)cg->n, sizeof(sg_mailbox_t));
      for (int i = 0; i < cg->n; i++) {
        cg->intra_mailboxes[i] = mailbox("intra", g, i);
        cg->cross_mailboxes[i] = mailbox("cross", g, i);
      }
    }
    unsigned players = 0; /* the members with an actor: all but under rail play */
    for (int i = 0; i < cg->n; i++)
      players += member_plays(g, cg->ring_ranks[i]);
    if (cg->n > 1) /* aggregate rings, and every tree, synchronise on it */
      cg->barrier = sg_barrier_init(players);
    long pair[2] = {ts_job_gpu(job, cg->ring_ranks[0]),
                    cg->n > 1 ? ts_job_gpu(job, cg->ring_ranks[1]) : 0};
    if (eng.fidelity == TS_FIDELITY_HYBRID && ts_coll_plan_node_stage(pf, cg, pair)) {
      cg->node_barriers = ts_alloc((size_t)cg->n_nodes, sizeof *cg->node_barriers);
      for (int i = 0; i < cg->n_nodes; i++)
        cg->node_barriers[i] = sg_barrier_init(players / (unsigned)cg->n_nodes);
    }
    if (eng.is_rail_play && eng.is_whole[g])
      plan_landings(pf, job, cg);
    for (int t = 0; cg->tree_children != NULL && t < 2; t++) {
      cg->tree_mailboxes[t] = ts_alloc((size_t)cg->n, sizeof(sg_mailbox_t));
      for (int i = 0; i < cg->n; i++)
        cg->tree_mailboxes[t][i] = mailbox(t == 0 ? "tree0" : "tree1", g, i);
    }
  }
  rank_ctx *ctx = eng.ctx = ts_alloc((size_t)job->n_ranks, sizeof *ctx);
  eng.pf = pf;
  eng.is_traced = opts->is_traced;
  for (long r = 0; r < job->n_ranks; r++) {
    rank_ctx *c = &ctx[r];
    c->rank = r;
    c->prog = &job->programs[r];
    c->res = &res.ranks[r];
    c->multiplicity = plays(r) ? eng.multiplicity : 1;
    c->handover_block = eng.handover != NULL ? eng.handover[2 * r] : -1;
    c->handover_event = eng.handover != NULL ? eng.handover[2 * r + 1] : -1;
    for (int q = 0; eng.n_recvs != NULL && q < TS_PEERS; q++) {
      c->recvs_left[q] = eng.n_recvs[r * TS_PEERS + q];
      c->late_recvs[q] = eng.late_recvs[r * TS_PEERS + q];
    }
    if (opts->is_recording_blocks)
      c->res->block_end_s = ts_alloc((size_t)c->prog->n_blocks, sizeof(double));
    if (opts->is_traced != NULL && opts->is_traced[r]) /* a player traces for its ranks */
      ctx[eng.player != NULL ? eng.player[r] : r].is_traced = true;
  }
  for (long r = 0; r < job->n_ranks; r++)
    if (plays(r))
      start_actor(&ctx[r]);
  simgrid_run();

  for (long r = 0; r < job->n_ranks; r++)
    if (!ctx[r].is_done && !plays(r) && ctx[eng.player[r]].is_done) { /* it played r's program */
      ts_rank_result_share(&res.ranks[r], &res.ranks[eng.player[r]], job->programs[r].n_blocks,
                           opts->is_traced != NULL && opts->is_traced[r]);
      ctx[r].is_done = true;
    }
  for (long r = 0; r < job->n_ranks; r++) {
    TS_ASSERT(ctx[r].is_done); /* a rank that never finished is a schedule deadlock: a bug */
    if (res.ranks[r].finish_s > res.iteration_s)
      res.iteration_s = res.ranks[r].finish_s;
    free(ctx[r].pending);
    free(ctx[r].async);
    if (ctx[r].n_async > 0) {
      sg_sem_destroy(ctx[r].posted);
      sg_sem_destroy(ctx[r].finished);
    }
  }
  for (long r = 0; r < job->n_ranks; r++) {
    res.ranks[r].time_s[TS_CAT_IDLE] = res.iteration_s - res.ranks[r].finish_s;
    if (opts->is_traced == NULL || !opts->is_traced[r]) { /* a player traced for others only */
      free(res.ranks[r].spans);
      res.ranks[r].spans = NULL;
      res.ranks[r].n_spans = res.ranks[r].cap_spans = 0;
    }
    res.n_played_ranks += plays(r);
  }
  res.shortcut = eng.player == NULL     ? NULL
                 : eng.is_rail_play     ? "rail play"
                 : eng.is_handover_play ? "node play, then every rank"
                                        : "node play";
  res.n_events = eng.n_events;
  res.n_merged_events = eng.n_merged_events;
  res.n_transfers = eng.n_transfers;
  for (long g = 0; g < job->n_groups; g++) { /* a played group's calls stand for its shadows' */
    long times = eng.player != NULL && group_plays(job, g) && !(eng.is_whole && eng.is_whole[g])
                     ? eng.multiplicity
                     : 1;
    if (eng.is_handover_play) /* a player's TP group's for its node's; deferred ones' their own */
      times = is_deferred(g) ? 1 : eng.multiplicity / eng.groups[g].n;
    res.n_ring_collectives += times * eng.groups[g].n_calls[TS_ALGO_RING];
    res.n_hierarchical_collectives += times * eng.groups[g].n_calls[TS_ALGO_HIERARCHICAL];
    res.n_tree_collectives += times * eng.groups[g].n_calls[TS_ALGO_TREE];
  }
  free(ctx);
  stop_playing_for_others();
  free(eng.bundle_Bps);
  teardown_groups(job);
  *out = res;
  return NULL;
}

int ts_engine_run(const ts_platform *pf, const ts_job *job, const ts_engine_opts *opts,
                  ts_sim_result *out, ts_err *err) {
  if (job->n_ranks > ts_platform_n_gpus(pf))
    return ts_err_plain(err, "the job needs %ld GPUs but platform '%s' has %ld", job->n_ranks,
                        pf->name, ts_platform_n_gpus(pf));
  if (job->rank_gpu != NULL) { /* one rank per GPU, each on the machine */
    id_map used;
    map_init(&used, (size_t)job->n_ranks);
    int rc = 0;
    for (long r = 0; r < job->n_ranks && rc == 0; r++) {
      long g = job->rank_gpu[r];
      bool is_new = false;
      if (g >= 0 && g < ts_platform_n_gpus(pf))
        map_get_or_add(&used, (uint64_t)g, r, &is_new);
      if (!is_new)
        rc = ts_err_plain(err, "rank %ld: GPU %ld is outside platform '%s' (0 to %ld) or taken", r,
                          g, pf->name, ts_platform_n_gpus(pf) - 1);
    }
    map_fini(&used);
    if (rc != 0)
      return -1;
  }
  if (opts->fidelity == TS_FIDELITY_ANALYTIC)
    return ts_analytic_run(pf, job, opts, out, err);
  /* SimGrid's maestro runs on the calling thread's stack and needs a deep one beside 75,000
   * actors (../shared/SIMGRID.md, "Many actors"): the simulation gets a thread whose 1 GiB
   * stack is only reserved (pages cost memory once touched). */
  simulation sim = {pf, job, opts, out};
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) != 0)
    return ts_err_plain(err, "cannot start the simulation thread");
  int rc = pthread_attr_setstacksize(&attr, (size_t)1 << 30);
  if (rc == 0)
    rc = pthread_create(&thread, &attr, simulate, &sim);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    return ts_err_plain(err, "cannot start the simulation thread (1 GiB of address space)");
  pthread_join(thread, NULL);
  return 0;
}

double ts_engine_count_events(const ts_job *job, const bool *only) {
  double n = 0;
  for (long r = 0; r < job->n_ranks; r++)
    for (int b = 0; (only == NULL || only[r]) && b < job->programs[r].n_blocks; b++)
      n += job->programs[r].blocks[b].n_events;
  return n;
}
