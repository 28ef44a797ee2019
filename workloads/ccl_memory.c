/* ccl_memory: see ccl_memory.h. */
#include "ccl_memory.h"

#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "layout.h"
#include "schedule.h"
#include "stack.h"

const char *const ts_ccl_group_names[] = {"default",     "tensor",    "data",   "data replicas",
                                          "context",     "embedding", "expert", "expert tensor",
                                          "expert data", "pipeline",  NULL};

#define MIB 1048576.0
/* src/init.cc's defaults (computeBuffSizes; DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE,
 * DEFAULT_BUFFSIZE) and the connection headers (ncclSendMem, ncclRecvMem: MEM_ALIGN 4096) */
static const double ll_bytes = 524288, ll128_bytes = 4915200, simple_bytes = 4194304;
static const double header_bytes = 4096;

static double round_2mib(double bytes) {
  return ceil(bytes / (2 * MIB)) * 2 * MIB;
}

static double next_pow2(double x) {
  double p = 1;
  while (p < x)
    p *= 2;
  return p;
}

/* The p2p channels each peer of a communicator across nodes gets: the fewest any of its peers
 * gets, a network peer's (src/graph/paths.cc, ncclTopoGetNchannels, ncclTopoComputeP2pChannels):
 * one before 2.12; NCCL_NCHANNELS_PER_NET_PEER's default of 2 in 2.12-2.19; from 2.20 two,
 * halved while that times the ranks exceeds four times the channels, or the NICs a GPU drives if
 * more; from 2.29 one a NIC, or one per 14 GB/s of them (NCCL_P2P_PER_CHANNEL_NET_BW) if more,
 * halved while that times the batches of 8 peers exceeds the p2p channels. A power of two.
 * ASSUMED: the NICs a GPU drives are its node's shared evenly (getLocalNetCountByBw counts those
 * nearest it until they carry its PCIe bandwidth). */
static double net_peer_channels(const ts_ccl_site *site, long v, double ranks, double ch,
                                double p2p_ch) {
  if (v < 21200)
    return 1;
  if (v < 22000)
    return 2;
  double nics = site->gpus_per_node > 0
                    ? fmax(1, floor((double)site->nics_per_node / site->gpus_per_node))
                    : 1;
  if (v < 22900) {
    double most = 2;
    while (most * ranks > 4 * ch && most > 1)
      most /= 2;
    return next_pow2(fmin(ch, fmax(nics, most)));
  }
  double per = next_pow2(fmax(nics, ceil(site->nic_Bps / 14e9)));
  while (per * ceil(ranks / 8) > p2p_ch && per > 1)
    per /= 2;
  return per;
}

double ts_ccl_comm_bytes(const ts_ccl_site *site, long version, const ts_ccl_comm_use *u) {
  if (!site->is_nccl || u->n_ranks < 2)
    return 0;
  long v = version;
  bool cumem = v >= 21900, lazy = v >= 22200, pool_at_init = v >= 21200 && !lazy;
  bool one_node = u->nodes <= 1;
  double local = u->local_ranks > 0 ? (double)u->local_ranks : 1;
  double ch = site->channels;
  if (!one_node) { /* two channels a NIC its node's members use (ccl_memory.h) */
    double nics = site->nics_per_node > 0 ? site->nics_per_node : 1;
    ch = fmin(ch, 2 * fmin(local, nics));
  }
  double p2p_ch = fmin(next_pow2(ch), v >= 22500 ? 64 : 32); /* MAXCHANNELS */
  bool read = site->is_p2p_read;
  double recv = round_2mib(header_bytes + ll_bytes + ll128_bytes + (read ? 0 : simple_bytes));
  double send = round_2mib(header_bytes + (read ? simple_bytes : 0));
  double p2p_pair = recv + send;
  double net_recv = ll_bytes + ll128_bytes + simple_bytes, net_send = ll128_bytes + simple_bytes;
  if (cumem) { /* shareable buffers under cuMem (src/transport/net.cc: CUDA_IPC_MIN) */
    net_recv = round_2mib(net_recv);
    net_send = round_2mib(net_send);
  }
  double net_pair = net_recv + net_send;
  /* under cuMem each channel's three device arrays and the device communicator's two take the
   * granularity each (src/channel.cc, initChannel; src/init.cc, devCommSetup) */
  double bytes = cumem ? 2 * MIB * (2 + 3 * fmax(ch, p2p_ch)) : 0;

  /* At init every algorithm; with runtime connect the ring for bulk collectives and, for
   * scalar all-reduces, what the tuner picks: the ring in one node, the tree across nodes (of
   * two ranks, a pair a channel either way: counted as the ring). */
  bool ring = !lazy || u->is_collective || (u->is_allreduce && (one_node || u->n_ranks < 3));
  bool tree = u->n_ranks >= 3 && (!lazy || (u->is_allreduce && !one_node));
  if (ring)
    bytes += one_node ? ch * p2p_pair : ch * ((1 - 1 / local) * p2p_pair + net_pair / local);
  if (tree && one_node) /* the chain's reverse connections */
    bytes += ch * (u->local_index == 0                    ? recv
                   : u->local_index == u->local_ranks - 1 ? send
                                                          : p2p_pair);
  else if (tree) /* the chain's, and a head's parent and children: two pairs on average over a
                  * double binary tree (a node inside one tree is a leaf of the other) */
    bytes += ch * ((local - 1) / local * p2p_pair + 2 * net_pair / local);

  /* sends and receives: full buffers a p2p channel inside a node (a peer's channels: all of
   * them in one NVLink node, else a network peer's); across nodes shared pools: one before 2.12
   * (proxy.cc); since, a receive pool, and a send pool a sender whose sends leave from this GPU
   * (its own, and with PXN those of its node's members it relays), 2.12-2.21 its own at init */
  double chunk = one_node ? 512 * 1024.0 : 128 * 1024.0;
  double pool = v >= 21400   ? p2p_ch * 16 * chunk
                : v >= 21200 ? 2 * MIB * p2p_ch
                             : 16 * MIB * p2p_ch;
  double peer_ch = one_node ? p2p_ch : net_peer_channels(site, v, (double)u->n_ranks, ch, p2p_ch);
  bytes += (double)u->local_peers * peer_ch * p2p_pair;
  bool remote = u->remote_peers > 0;
  if (v < 21200)
    return bytes + (remote ? pool : 0);
  double own_send = pool_at_init || (remote && !u->sends_relayed) ? 1 : 0;
  return bytes + pool * (own_send + (double)u->relayed_senders + (remote ? 1 : 0));
}

static int compare_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* A communicator of members[n] as rank `me` sees it: nodes, and its node's members. */
static ts_ccl_comm_use comm_of(const long *members, long n, long me, long gpn, long *scratch) {
  ts_ccl_comm_use u = {.n_ranks = n};
  bool ascending = true;
  for (long i = 0; i < n; i++) {
    scratch[i] = members[i] / gpn;
    ascending = ascending && (i == 0 || members[i] > members[i - 1]);
    if (scratch[i] == me / gpn) {
      if (members[i] == me)
        u.local_index = u.local_ranks;
      u.local_ranks++;
    }
  }
  if (!ascending) /* the nodes in order, to count them */
    qsort(scratch, (size_t)n, sizeof *scratch, compare_long);
  for (long i = 0; i < n; i++)
    u.nodes += i == 0 || scratch[i] != scratch[i - 1];
  return u;
}

static void add_peer(ts_ccl_comm_use *u, long me, long peer, long gpn) {
  if (peer < 0 || peer == me)
    return;
  if (peer / gpn == me / gpn)
    u->local_peers++;
  else
    u->remote_peers++;
}

/* With PXN (NCCL 2.12+, P2P_PXN_LEVEL's default 2) a send to another node leaves through the
 * member of the sender's node at the receiver's local index, where the communicator has one
 * (src/graph/search.cc, ncclTopoGetNetDev), whose proxy holds the sender's send pool
 * (src/transport/net.cc, sharedNetBuffersInit: one a sending local rank); ASSUMED: sender and
 * relay joined by NVLink, as in every NCCL platform here (PXN needs it). A member's peers:
 * every other member (all-to-all), or its neighbours in `members` order, the ends joined when
 * `wraps`. */
static void route_sends(ts_ccl_comm_use *u, const long *members, long n, long me, long gpn,
                        bool all_to_all, bool wraps) {
  long node = me / gpn;
  bool *present = ts_alloc((size_t)gpn, sizeof(bool)); /* the local indices with a member */
  for (long j = 0; j < n; j++)
    if (members[j] / gpn == node)
      present[members[j] % gpn] = true;
  bool own_here = false;
  for (long j = 0; j < n; j++) {
    long sender = members[j];
    if (sender / gpn != node)
      continue;
    bool through_me = false;
    for (long k = 0; k < n; k++) {
      bool peer = all_to_all ? k != j
                             : k == j - 1 || k == j + 1 ||
                                   (wraps && (k == (j + 1) % n || k == (j + n - 1) % n));
      if (!peer || members[k] / gpn == node)
        continue;
      long out = present[members[k] % gpn] ? node * gpn + members[k] % gpn : sender;
      through_me = through_me || out == me;
    }
    if (sender == me)
      own_here = through_me;
    else
      u->relayed_senders += through_me;
  }
  u->sends_relayed = u->remote_peers > 0 && !own_here;
  free(present);
}

typedef struct tally {
  const ts_ccl_site *site;
  long version;
  double bytes, group_bytes[TS_CCL_GROUPS];
  int communicators;
} tally;

static void count(tally *t, ts_ccl_comm_use *u, ts_ccl_group group) {
  if (u->n_ranks < 2)
    return;
  if (u->nodes == 1 && u->local_ranks >= 3) /* a middle of the tree's chain: the fullest GPU */
    u->local_index = 1;
  double bytes = ts_ccl_comm_bytes(t->site, t->version, u);
  t->bytes += bytes;
  t->group_bytes[group] += bytes;
  t->communicators++;
}

/* NCCL's bytes on rank `me`, over the communicators it uses. */
static void rank_bytes(const ts_workload *wl, long me, long gpn, long *members, long *scratch,
                       tally *t) {
  ts_coords c = ts_layout_coords(wl, me);
  ts_ccl_comm_use u;
  long n_shard = ts_workload_shard_ranks(wl), n_dp = ts_workload_dp_cp(wl);
  bool dp_is_world = n_shard == wl->n_gpus;
  /* the default group: barriers (a scalar all-reduce); PyTorch's DDP and FSDP run on it */
  bool pytorch_dp = ts_framework_is_pytorch(wl->framework) && dp_is_world;
  long nodes = (wl->n_gpus + gpn - 1) / gpn, node = me / gpn; /* every rank, nodes in order */
  u = (ts_ccl_comm_use){.n_ranks = wl->n_gpus,
                        .nodes = nodes,
                        .local_ranks = node < nodes - 1 ? gpn : wl->n_gpus - node * gpn,
                        .local_index = me % gpn,
                        .is_allreduce = true};
  u.is_collective = pytorch_dp;
  count(t, &u, TS_CCL_GROUP_DEFAULT);
  if (wl->tp > 1) {
    for (long k = 0; k < wl->tp; k++)
      members[k] = ts_layout_rank(wl, (ts_coords){k, c.dp, c.pp});
    u = comm_of(members, wl->tp, me, gpn, scratch);
    u.is_collective = u.is_allreduce = true;
    count(t, &u, TS_CCL_GROUP_TENSOR);
  }
  if (n_shard > 1 && !pytorch_dp) {
    long first = c.dp / n_shard * n_shard;
    for (long k = 0; k < n_shard; k++)
      members[k] = ts_layout_rank(wl, (ts_coords){c.tp, first + k, c.pp});
    u = comm_of(members, n_shard, me, gpn, scratch);
    u.is_collective = u.is_allreduce = true;
    count(t, &u, TS_CCL_GROUP_DATA);
  }
  if (n_dp > n_shard) { /* HSDP's replicas of a shard */
    long replicas = n_dp / n_shard;
    for (long r = 0; r < replicas; r++)
      members[r] = ts_layout_rank(wl, (ts_coords){c.tp, r * n_shard + c.dp % n_shard, c.pp});
    u = comm_of(members, replicas, me, gpn, scratch);
    u.is_collective = u.is_allreduce = true;
    count(t, &u, TS_CCL_GROUP_REPLICA);
  }
  if (wl->cp > 1) { /* keys and values sent around the context-parallel ring */
    long first = c.dp / wl->cp * wl->cp, k = c.dp - first;
    for (long j = 0; j < wl->cp; j++)
      members[j] = ts_layout_rank(wl, (ts_coords){c.tp, first + j, c.pp});
    u = comm_of(members, wl->cp, me, gpn, scratch);
    add_peer(&u, me, members[(k + 1) % wl->cp], gpn);
    if (wl->cp > 2)
      add_peer(&u, me, members[(k + wl->cp - 1) % wl->cp], gpn);
    if (t->version >= 21200)
      route_sends(&u, members, wl->cp, me, gpn, false, true);
    count(t, &u, TS_CCL_GROUP_CONTEXT);
  }
  if (c.pp == 0 || ts_schedule_embedding_copy(wl, c.pp)) {
    long n = 0;
    for (long s = 0; s < wl->pp; s++)
      if (s == 0 || ts_schedule_embedding_copy(wl, s))
        members[n++] = ts_layout_rank(wl, (ts_coords){c.tp, c.dp, s});
    u = comm_of(members, n, me, gpn, scratch);
    u.is_collective = u.is_allreduce = true;
    count(t, &u, TS_CCL_GROUP_EMBEDDING);
  }
  if (wl->model.n_experts > 0) {
    ts_expert_coords e = ts_layout_expert_coords(wl, me);
    long size[3] = {wl->ep, ts_workload_etp(wl), ts_workload_edp(wl)};
    for (int kind = 0; kind < 3; kind++) {
      /* DeepEP's all-to-alls (moe_flex) run on NVSHMEM buffers of its own (not modelled) */
      if (size[kind] < 2 || (kind == 0 && wl->moe_flex))
        continue;
      for (long i = 0; i < size[kind]; i++) {
        ts_expert_coords x = e;
        *(kind == 0 ? &x.ep : kind == 1 ? &x.etp : &x.edp) = i;
        members[i] = ts_layout_expert_rank(wl, x);
      }
      u = comm_of(members, size[kind], me, gpn, scratch);
      if (kind == 0) { /* the all-to-alls: every member a peer */
        for (long i = 0; i < size[kind]; i++)
          add_peer(&u, me, members[i], gpn);
        if (t->version >= 21200)
          route_sends(&u, members, size[kind], me, gpn, true, false);
      } else
        u.is_collective = u.is_allreduce = true;
      count(t, &u, (ts_ccl_group)(TS_CCL_GROUP_EXPERT + kind));
    }
  }
  if (wl->pp > 1) { /* activations and their gradients to both neighbours */
    for (long s = 0; s < wl->pp; s++)
      members[s] = ts_layout_rank(wl, (ts_coords){c.tp, c.dp, s});
    u = comm_of(members, wl->pp, me, gpn, scratch);
    /* the ends join only with virtual stages (zb-v and DualPipe turn back: schedule.c) */
    bool wraps = wl->virtual_stages > 1;
    long prev = c.pp > 0 || wraps ? members[(c.pp + wl->pp - 1) % wl->pp] : -1;
    long next = c.pp < wl->pp - 1 || wraps ? members[(c.pp + 1) % wl->pp] : -1;
    add_peer(&u, me, prev, gpn);
    if (next != prev) /* two stages: one peer both ways */
      add_peer(&u, me, next, gpn);
    if (t->version >= 21200)
      route_sends(&u, members, wl->pp, me, gpn, false, wraps);
    count(t, &u, TS_CCL_GROUP_PIPELINE);
  }
}

void ts_ccl_memory_of(const ts_workload *wl, const ts_gpu *gpu, ts_ccl_memory *out) {
  *out = (ts_ccl_memory){.rank = 0};
  const ts_ccl_site *site = &gpu->ccl;
  if (!site->is_nccl || wl->n_gpus < 2 || site->gpus_per_node < 1)
    return;
  long version = wl->nccl_version > 0 ? wl->nccl_version : site->version;
  out->version = version;
  long *members = ts_alloc((size_t)wl->n_gpus, sizeof(long));
  long *scratch = ts_alloc((size_t)wl->n_gpus, sizeof(long));
  /* each stage's GPUs on the nodes its first tensor-parallel group spans: every position a GPU
   * of the stage can hold in a node and in its groups (the layouts repeat past them) */
  long gpn = site->gpus_per_node;
  for (long s = 0; s < wl->pp; s++) {
    long first = ts_layout_rank(wl, (ts_coords){0, 0, s}) / gpn, last = first;
    for (long k = 1; k < wl->tp; k++) {
      long node = ts_layout_rank(wl, (ts_coords){k, 0, s}) / gpn;
      first = node < first ? node : first;
      last = node > last ? node : last;
    }
    for (long me = first * gpn; me < (last + 1) * gpn && me < wl->n_gpus; me++) {
      if (ts_layout_coords(wl, me).pp != s)
        continue;
      tally t = {.site = site, .version = version};
      rank_bytes(wl, me, site->gpus_per_node, members, scratch, &t);
      if (t.bytes > out->bytes) {
        out->bytes = t.bytes;
        for (int g = 0; g < TS_CCL_GROUPS; g++)
          out->group_bytes[g] = t.group_bytes[g];
        out->rank = me;
        out->communicators = t.communicators;
      }
    }
  }
  free(members);
  free(scratch);
}

double ts_usable_bytes_beside(const ts_gpu *gpu, const ts_ccl_memory *m) {
  return fmax(0, ts_gpu_usable_bytes(gpu) - m->bytes);
}

double ts_usable_bytes(const ts_gpu *gpu, const ts_workload *wl) {
  ts_ccl_memory m;
  ts_ccl_memory_of(wl, gpu, &m);
  return ts_usable_bytes_beside(gpu, &m);
}
