/* analytic: see analytic.h. Ranks run from a worklist; a rank that must wait (a collective
 * whose members have not all arrived, a message not yet sent) is parked and put back on the
 * list by whoever completes what it waits for. */
#include "analytic.h"

#include <stdlib.h>
#include <string.h>

#include "../../workloads/alloc.h"
#include "../network/route.h"
#include "coll.h"

typedef struct message {
  double post_s, arrive_s;
} message;

typedef struct inbox {
  message *q;
  long head, n, cap;
} inbox;

typedef struct arank {
  int block, event;
  double t_s;
  int parked_on; /* the inbox (ts_peer) a parked receive waits on, or -1 */
  bool is_done;
  inbox in[TS_PEERS]; /* [PREV]: activations from the previous stage; [NEXT]: gradients */
  double send_lat_s[TS_PEERS], send_Bps[TS_PEERS]; /* route to each peer, once known */
  double stream_s; /* when the communication stream is free */
  double *stream_end_s; /* [k]: when the k-th posted collective ends */
  long n_posted, cap_posted;
  double arrival_s; /* at the collective it waits in */
} arank;

typedef struct agroup {
  ts_coll_group coll; /* for its alpha-beta plan only */
  int n_playing; /* members that play (all but with representatives) */
  /* The last collective priced on it: a group repeats one collective many times, and choosing
   * its algorithm is most of the cost of an estimate. */
  bool has_last;
  uint8_t last_op;
  int last_algorithm;
  double last_bytes, last_s;
  int n_arrived;
  double t_max_s;
  long *waiting;
} agroup;

typedef struct analytic {
  const ts_platform *pf;
  const ts_job *job;
  const ts_engine_opts *opts;
  ts_sim_result *res;
  arank *ranks;
  agroup *groups;
  long *ready, n_ready;
} analytic;

static bool plays(const analytic *a, long r) {
  return a->opts->representative == NULL || a->opts->representative[r] == r;
}

static void plan_groups(analytic *a) {
  const ts_job *job = a->job;
  a->groups = ts_alloc((size_t)job->n_groups, sizeof *a->groups);
  bool *flex = NULL;
  for (long g = 0; g < job->n_groups; g++) {
    const ts_group *grp = &job->groups[g];
    ts_coll_group *cg = &a->groups[g].coll;
    for (int i = 0; i < grp->n_members; i++)
      a->groups[g].n_playing += plays(a, grp->members[i]);
    if (a->groups[g].n_playing == 0) /* never called */
      continue;
    int n = cg->n = grp->n_members;
    long *gpus = ts_alloc((size_t)n, sizeof(long));
    long *ring_gpus = ts_alloc((size_t)n * TS_COLL_MAX_RINGS, sizeof(long));
    int *order = ts_alloc((size_t)n * TS_COLL_MAX_RINGS, sizeof(int));
    for (int i = 0; i < n; i++)
      gpus[i] = ts_job_gpu(job, grp->members[i]);
    cg->n_rings = ts_coll_rings(a->pf, gpus, n, order);
    cg->per_node = ts_coll_per_node(a->pf, gpus, order, n);
    cg->algo = a->opts->collectives;
    for (int i = 0; i < n * cg->n_rings; i++)
      ring_gpus[i] = gpus[order[i]];
    ts_coll_plan(a->pf, cg, ring_gpus);
    if (ts_job_is_flex_group(job, g, &flex))
      ts_coll_node_dispatch(cg, job->ep_topk, job->ep_route_groups, job->ep_route_group_topk);
    else /* only all-to-alls read it */
      ts_coll_plan_pxn(a->pf, cg, ring_gpus);
    a->groups[g].waiting = ts_alloc((size_t)n, sizeof(long));
    free(gpus);
    free(ring_gpus);
    free(order);
  }
  free(flex);
}

static void trace(analytic *a, long r, double start_s, double sent_s, int algorithm) {
  ts_rank_result *res = &a->res->ranks[r];
  if (a->opts->is_traced == NULL || !a->opts->is_traced[r])
    return;
  if (res->n_spans == res->cap_spans) {
    res->cap_spans = res->cap_spans ? 2 * res->cap_spans : 1024;
    res->spans = realloc(res->spans, (size_t)res->cap_spans * sizeof *res->spans);
    TS_ASSERT(res->spans != NULL);
  }
  const arank *k = &a->ranks[r];
  res->spans[res->n_spans++] = (ts_span){start_s, k->t_s, sent_s, k->block, k->event, algorithm};
}

/* Moves rank r past its current event (and block). */
static void advance(analytic *a, long r) {
  arank *k = &a->ranks[r];
  const ts_program *prog = &a->job->programs[r];
  a->res->n_events++;
  if (++k->event < prog->blocks[k->block].n_events)
    return;
  if (a->res->ranks[r].block_end_s != NULL)
    a->res->ranks[r].block_end_s[k->block] = k->t_s;
  if (a->opts->on_progress != NULL)
    a->opts->on_progress(a->opts->progress_ctx, (double)a->res->n_events, k->t_s);
  k->event = 0;
  for (k->block++; k->block < prog->n_blocks && prog->blocks[k->block].n_events == 0; k->block++)
    if (a->res->ranks[r].block_end_s != NULL)
      a->res->ranks[r].block_end_s[k->block] = k->t_s;
  k->is_done = k->block >= prog->n_blocks;
}

static void make_ready(analytic *a, long r) {
  a->ready[a->n_ready++] = r;
}

static int algorithm_of(ts_coll_group *g, const ts_event *ev) {
  if (ev->coll_op == TS_COLL_ALLTOALL)
    return TS_ALG_PAIRWISE;
  ts_coll_algo algo = ts_coll_choose(g, (ts_coll_op)ev->coll_op, ev->bytes);
  return algo == TS_ALGO_HIERARCHICAL ? TS_ALG_HIERARCHICAL
         : algo == TS_ALGO_TREE       ? TS_ALG_TREE
                                      : TS_ALG_RING;
}

/* The alpha-beta time of ev on grp and the algorithm it runs (algorithm_of). */
static double priced(agroup *grp, const ts_event *ev, int *algorithm) {
  if (!grp->has_last || grp->last_op != ev->coll_op || grp->last_bytes != ev->bytes) {
    grp->has_last = true;
    grp->last_op = ev->coll_op;
    grp->last_bytes = ev->bytes;
    grp->last_s = ts_coll_estimate_s(&grp->coll, (ts_coll_op)ev->coll_op, ev->bytes);
    grp->last_algorithm = algorithm_of(&grp->coll, ev);
  }
  *algorithm = grp->last_algorithm;
  return grp->last_s;
}

static void count(analytic *a, int algorithm) {
  if (algorithm == TS_ALG_HIERARCHICAL)
    a->res->n_hierarchical_collectives++;
  else if (algorithm == TS_ALG_TREE)
    a->res->n_tree_collectives++;
  else if (algorithm == TS_ALG_RING)
    a->res->n_ring_collectives++;
}

/* A blocking collective: returns true when it completed (r goes on), false when r parks. */
static bool arrive(analytic *a, long r, const ts_event *ev) {
  long g = a->job->rank_group[r * TS_GROUP_KINDS + ev->group];
  TS_ASSERT(g >= 0);
  agroup *grp = &a->groups[g];
  arank *k = &a->ranks[r];
  k->arrival_s = k->t_s;
  grp->t_max_s = grp->n_arrived == 0 || k->t_s > grp->t_max_s ? k->t_s : grp->t_max_s;
  grp->waiting[grp->n_arrived++] = r;
  if (grp->n_arrived < grp->n_playing)
    return false;
  int algorithm = 0;
  double took = priced(grp, ev, &algorithm), work = 0;
  double slow = 1 + ts_overlap_slowdown(ev, a->opts->overlap_slowdown, a->pf->gpu.n_compute_units);
  if (ev->time_s > 0) { /* overlapped with a GEMM (tp_comm_overlap), slowed beside it */
    work = ev->time_s * slow;
    took = ts_coll_overlapped_s(took, work, grp->coll.n);
  }
  double end = grp->t_max_s + took;
  count(a, algorithm);
  for (int i = 0; i < grp->n_playing; i++) {
    long w = grp->waiting[i];
    arank *m = &a->ranks[w];
    ts_rank_result *res = &a->res->ranks[w];
    res->flops += ev->flops;
    res->time_s[TS_CAT_RECOMPUTE] += ev->recompute_s * slow;
    res->time_s[TS_CAT_COMPUTE] += work - ev->recompute_s * slow;
    res->time_s[ev->category] += end - m->arrival_s - work;
    m->t_s = end;
    trace(a, w, m->arrival_s, 0, algorithm);
    advance(a, w);
    if (w != r)
      make_ready(a, w);
  }
  grp->n_arrived = 0;
  return true;
}

static void send(analytic *a, long r, const ts_event *ev) {
  arank *k = &a->ranks[r];
  long peer = a->job->rank_peer[r * TS_PEERS + ev->peer];
  TS_ASSERT(peer >= 0);
  if (k->send_Bps[ev->peer] == 0) {
    ts_route route;
    ts_route_between(a->pf, ts_job_gpu(a->job, r), ts_job_gpu(a->job, peer), &route);
    k->send_lat_s[ev->peer] = route.lat_s;
    k->send_Bps[ev->peer] = route.bw_Bps;
    a->res->n_routes++;
  }
  /* Activations go to the next stage's PREV inbox, gradients to the previous stage's NEXT. */
  int box = ev->peer == TS_PEER_NEXT ? TS_PEER_PREV : TS_PEER_NEXT;
  inbox *in = &a->ranks[peer].in[box];
  if (in->n == in->cap) {
    in->cap = in->cap ? 2 * in->cap : 8;
    in->q = realloc(in->q, (size_t)in->cap * sizeof *in->q);
    TS_ASSERT(in->q != NULL);
  }
  double arrive_s = k->t_s + k->send_lat_s[ev->peer] + ev->bytes / k->send_Bps[ev->peer];
  in->q[in->n++] = (message){k->t_s, arrive_s};
  if (a->ranks[peer].parked_on == box) {
    a->ranks[peer].parked_on = -1;
    make_ready(a, peer);
  }
}

/* A receive: true when the message was there (r goes on), false when r parks. */
static bool receive(analytic *a, long r, const ts_event *ev) {
  arank *k = &a->ranks[r];
  inbox *in = &k->in[ev->peer];
  if (in->head == in->n) {
    k->parked_on = ev->peer;
    return false;
  }
  message msg = in->q[in->head++];
  double start = k->t_s, end = msg.arrive_s > start ? msg.arrive_s : start;
  double bubble = msg.post_s > start ? msg.post_s - start : 0;
  a->res->ranks[r].time_s[TS_CAT_BUBBLE] += bubble;
  a->res->ranks[r].time_s[TS_CAT_PP] += end - start - bubble;
  k->t_s = end;
  trace(a, r, start, msg.post_s, TS_ALG_RING);
  return true;
}

/* Runs rank r until it parks or ends. */
static void run_rank(analytic *a, long r) {
  arank *k = &a->ranks[r];
  ts_rank_result *res = &a->res->ranks[r];
  while (!k->is_done) {
    const ts_event *ev = &a->job->programs[r].blocks[k->block].events[k->event];
    double start = k->t_s;
    switch ((ts_event_kind)ev->kind) {
    case TS_EV_COMPUTE: {
      /* (1 + F) times longer when it starts while the stream works, as the engine plays it */
      double slow = !ev->is_host && k->stream_s > k->t_s ? 1 + a->opts->overlap_slowdown : 1;
      k->t_s += ev->time_s * slow;
      res->flops += ev->flops;
      res->time_s[TS_CAT_RECOMPUTE] += ev->recompute_s * slow;
      res->time_s[ev->category] += (ev->time_s - ev->recompute_s) * slow;
      trace(a, r, start, 0, TS_ALG_RING);
      break;
    }
    case TS_EV_COLL:
      if (!ev->is_async) {
        if (!arrive(a, r, ev))
          return;
        continue; /* arrive() moved r on */
      } else {
        long g = a->job->rank_group[r * TS_GROUP_KINDS + ev->group];
        TS_ASSERT(g >= 0);
        double begin = k->stream_s > k->t_s ? k->stream_s : k->t_s;
        int algorithm = 0;
        k->stream_s = begin + priced(&a->groups[g], ev, &algorithm) + ev->time_s;
        if (r == a->job->groups[g].members[0]) /* once per collective */
          count(a, algorithm);
        if (k->n_posted == k->cap_posted) {
          k->cap_posted = k->cap_posted ? 2 * k->cap_posted : 64;
          k->stream_end_s = realloc(k->stream_end_s, (size_t)k->cap_posted * sizeof(double));
          TS_ASSERT(k->stream_end_s != NULL);
        }
        k->stream_end_s[k->n_posted++] = k->stream_s;
      }
      break;
    case TS_EV_WAIT: {
      long target = k->n_posted - 1 - ev->wait_keep;
      double until = target >= 0 ? k->stream_end_s[target] : k->t_s;
      if (until > k->t_s) {
        res->time_s[ev->category] += until - k->t_s;
        k->t_s = until;
      }
      trace(a, r, start, 0, TS_ALG_RING);
      break;
    }
    case TS_EV_SEND:
      send(a, r, ev);
      break;
    case TS_EV_RECV:
      if (!receive(a, r, ev))
        return;
      break;
    }
    advance(a, r);
  }
  if (k->stream_s > k->t_s) { /* schedules wait before the optimizer; this guards the end */
    res->time_s[TS_CAT_DP] += k->stream_s - k->t_s;
    k->t_s = k->stream_s;
  }
  res->finish_s = k->t_s;
}

int ts_analytic_run(const ts_platform *pf, const ts_job *job, const ts_engine_opts *opts,
                    ts_sim_result *out, ts_err *err) {
  if (job->n_ranks > ts_platform_n_gpus(pf))
    return ts_err_plain(err, "the job needs %ld GPUs but platform '%s' has %ld", job->n_ranks,
                        pf->name, ts_platform_n_gpus(pf));
  ts_sim_result res;
  memset(&res, 0, sizeof res);
  res.n_ranks = job->n_ranks;
  res.ranks = ts_alloc((size_t)job->n_ranks, sizeof *res.ranks);
  analytic a = {pf,
                job,
                opts,
                &res,
                ts_alloc((size_t)job->n_ranks, sizeof(arank)),
                NULL,
                ts_alloc((size_t)job->n_ranks * 2, sizeof(long)),
                0};
  plan_groups(&a);
  for (long r = 0; r < job->n_ranks; r++) {
    a.ranks[r].parked_on = -1;
    a.ranks[r].is_done = job->programs[r].n_blocks == 0 || !plays(&a, r);
    if (opts->is_recording_blocks)
      res.ranks[r].block_end_s = ts_alloc((size_t)job->programs[r].n_blocks, sizeof(double));
  }
  /* Ranks run in descending order so that rank 0 runs first (the list is a stack). */
  for (long r = job->n_ranks - 1; r >= 0; r--)
    if (!a.ranks[r].is_done)
      make_ready(&a, r);
  while (a.n_ready > 0)
    run_rank(&a, a.ready[--a.n_ready]);
  for (long r = 0; r < job->n_ranks; r++)
    if (!plays(&a, r)) {
      long rep = opts->representative[r];
      TS_ASSERT(plays(&a, rep) && job->programs[rep].n_blocks == job->programs[r].n_blocks);
      ts_rank_result_share(&res.ranks[r], &res.ranks[rep], job->programs[r].n_blocks, false);
    }
  for (long r = 0; r < job->n_ranks; r++) {
    TS_ASSERT(a.ranks[r].is_done); /* a rank that never finished is a schedule deadlock: a bug */
    if (res.ranks[r].finish_s > res.iteration_s)
      res.iteration_s = res.ranks[r].finish_s;
  }
  for (long r = 0; r < job->n_ranks; r++) {
    res.ranks[r].time_s[TS_CAT_IDLE] = res.iteration_s - res.ranks[r].finish_s;
    res.n_played_ranks += plays(&a, r);
    for (int p = 0; p < TS_PEERS; p++)
      free(a.ranks[r].in[p].q);
    free(a.ranks[r].stream_end_s);
  }
  for (long g = 0; g < job->n_groups; g++) {
    free(a.groups[g].waiting);
    free(a.groups[g].coll.tree_children);
  }
  free(a.groups);
  free(a.ranks);
  free(a.ready);
  *out = res;
  return 0;
}
