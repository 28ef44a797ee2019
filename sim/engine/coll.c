/* coll: ring collectives; see coll.h. */
#include "coll.h"

#include <math.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../network/route.h"
#include "sg_comm.h"

const char *const ts_fidelity_names[] = {"aggregate", "flow", "analytic", "hybrid", NULL};
const char *const ts_coll_algo_names[] = {"auto", "ring", "hierarchical", "tree", NULL};

/* Permutation search is exhaustive, so keep it to node-sized groups: 7! orders at 8. */
#define RING_SEARCH_MAX 8

typedef struct ring_search {
  int n;
  double bw[RING_SEARCH_MAX][RING_SEARCH_MAX];
  int hops[RING_SEARCH_MAX][RING_SEARCH_MAX];
  int perm[RING_SEARCH_MAX], best[RING_SEARCH_MAX];
  bool used[RING_SEARCH_MAX];
  double best_bw;
  int best_hops;
} ring_search;

/* Depth-first over orders starting with position 0; prunes orders already no wider. */
static void search(ring_search *s, int depth, double width, int hops) {
  if (width < s->best_bw)
    return;
  if (depth == s->n) {
    int last = s->perm[s->n - 1];
    double w = width < s->bw[last][s->perm[0]] ? width : s->bw[last][s->perm[0]];
    int h = hops + s->hops[last][s->perm[0]];
    if (w > s->best_bw || (w == s->best_bw && h < s->best_hops)) {
      s->best_bw = w;
      s->best_hops = h;
      memcpy(s->best, s->perm, sizeof s->best);
    }
    return;
  }
  int prev = s->perm[depth - 1];
  for (int i = 1; i < s->n; i++) {
    if (s->used[i])
      continue;
    s->used[i] = true;
    s->perm[depth] = i;
    search(s, depth + 1, width < s->bw[prev][i] ? width : s->bw[prev][i], hops + s->hops[prev][i]);
    s->used[i] = false;
  }
}

typedef struct gpu_index {
  long gpu;
  int index;
} gpu_index;

static int by_gpu(const void *a, const void *b) {
  long x = ((const gpu_index *)a)->gpu, y = ((const gpu_index *)b)->gpu;
  return (x > y) - (x < y);
}

/* Reorders one node's members seg[0..m) (GPU order) into the ring that maximises its slowest
 * hop, then the fewest links, as a closed ring (the group enters and leaves the node through
 * it). Nodes holding the same local GPUs get the same order: memo (NULL: none), indexed by
 * their local GPUs, keeps it. */
static void order_node(const ts_platform *pf, gpu_index *seg, int m, int (*memo)[RING_SEARCH_MAX]) {
  if (m <= 3 || m > RING_SEARCH_MAX) /* rings of 2 or 3 are the same any way */
    return;
  unsigned mask = 0;
  for (int i = 0; i < m; i++)
    mask |= 1u << (seg[i].gpu % pf->gpus_per_node);
  int fresh[RING_SEARCH_MAX];
  int *best = memo != NULL && mask < 256 ? memo[mask] : fresh;
  if (best == fresh || best[0] < 0) {
    ring_search s;
    memset(&s, 0, sizeof s);
    s.n = m;
    for (int a = 0; a < m; a++)
      for (int b = 0; b < m; b++)
        if (a != b) {
          ts_route r;
          ts_route_between(pf, seg[a].gpu, seg[b].gpu, &r);
          s.bw[a][b] = r.bw_Bps;
          s.hops[a][b] = r.n_links;
        }
    s.best_bw = -1;
    s.perm[0] = 0;
    s.used[0] = true;
    search(&s, 1, 1e300, 0);
    memcpy(best, s.best, sizeof s.best);
  }
  gpu_index copy[RING_SEARCH_MAX];
  memcpy(copy, seg, (size_t)m * sizeof *seg);
  for (int i = 0; i < m; i++)
    seg[i] = copy[best[i]];
}

void ts_coll_ring_order(const ts_platform *pf, const long *gpus, int n, int *order) {
  gpu_index *sorted = malloc((size_t)n * sizeof *sorted);
  int(*memo)[RING_SEARCH_MAX] = malloc(256 * sizeof *memo);
  TS_ASSERT(sorted != NULL && memo != NULL);
  for (int i = 0; i < 256; i++)
    memo[i][0] = -1;
  for (int i = 0; i < n; i++)
    sorted[i] = (gpu_index){gpus[i], i};
  qsort(sorted, (size_t)n, sizeof *sorted, by_gpu);
  /* Nodes in order, each node's members in its best ring order. */
  for (int start = 0, end; start < n; start = end) {
    long node = sorted[start].gpu / pf->gpus_per_node;
    for (end = start + 1; end < n && sorted[end].gpu / pf->gpus_per_node == node; end++)
      ;
    order_node(pf, sorted + start, end - start, pf->gpus_per_node <= 8 ? memo : NULL);
  }
  for (int i = 0; i < n; i++)
    order[i] = sorted[i].index;
  free(memo);
  free(sorted);
}

int ts_coll_per_node(const ts_platform *pf, const long *gpus, const int *order, int n) {
  int per_node = 0, run = 0;
  bool even = true;
  for (int i = 0; i < n; i++) {
    long node = gpus[order[i]] / pf->gpus_per_node;
    run = i > 0 && node == gpus[order[i - 1]] / pf->gpus_per_node ? run + 1 : 1;
    if (i == n - 1 || gpus[order[i + 1]] / pf->gpus_per_node != node) {
      even = even && (per_node == 0 || per_node == run);
      per_node = run;
    }
  }
  return even && per_node > 1 && per_node < n ? per_node : 0;
}

/* Directed rings over the members' direct links (node_rings): depth-first over the cycles from
 * member 0 whose every hop is a direct link with residual capacity, for the one whose narrowest
 * hop is widest (ties: the first found). */
typedef struct cycle_search {
  int n;
  double cap[RING_SEARCH_MAX][RING_SEARCH_MAX]; /* residual, directed; 0: no direct link */
  int perm[RING_SEARCH_MAX], best[RING_SEARCH_MAX];
  bool used[RING_SEARCH_MAX];
  double best_width;
} cycle_search;

static void search_cycle(cycle_search *s, int depth, double width) {
  if (width <= s->best_width)
    return;
  if (depth == s->n) {
    double w = fmin(width, s->cap[s->perm[s->n - 1]][s->perm[0]]);
    if (w > s->best_width) {
      s->best_width = w;
      memcpy(s->best, s->perm, sizeof s->best);
    }
    return;
  }
  int prev = s->perm[depth - 1];
  for (int i = 1; i < s->n; i++) {
    if (s->used[i] || s->cap[prev][i] <= 0)
      continue;
    s->used[i] = true;
    s->perm[depth] = i;
    search_cycle(s, depth + 1, fmin(width, s->cap[prev][i]));
    s->used[i] = false;
  }
}

/* The rings (channels) a library builds for a group inside one node whose GPUs are joined by a
 * link graph (not a switch): as NCCL's and RCCL's topology search does, as many rings of equal
 * bandwidth as the links carry, in both directions, each hop a direct link, each link's
 * capacity (per direction) shared by the rings crossing it. RCCL's predefined rings for an
 * 8-GCD MI250X node (src/graph/rome_models.cc, rome_model_63: "0 1 5 4 6 7 3 2", "7 6 0 1 3 2
 * 4 5" and their reverses, each twice) are such a set: every xGMI link between packages is
 * crossed once each way. Ring 0 (orders[0..n)) is kept first; the search adds, greedily, the
 * directed cycle whose narrowest residual hop is widest while that is still ring 0's width.
 * Returns the ring count (1 where this does not apply). */
static int node_rings(const ts_platform *pf, const long *gpus, int n, int *orders) {
  if (n < 3 || n > RING_SEARCH_MAX || pf->has_node_switch)
    return 1;
  /* Every node holding the same local GPUs gets the same rings (a job has a group per node):
   * kept per mask of local GPUs, for the node graph they were searched on (its digest). */
  static struct {
    uint64_t graph;
    int k;
    int local[TS_COLL_MAX_RINGS][RING_SEARCH_MAX]; /* ring r's local GPUs, by position */
  } memo[256];
  unsigned mask = 0;
  for (int i = 0; i < n; i++)
    mask |= 1u << (gpus[orders[i]] % pf->gpus_per_node);
  uint64_t graph = 1469598103934665603ULL; /* FNV-1a over what the search reads */
  for (int l = 0; l < pf->n_node_links; l++) {
    const ts_node_link *nl = &pf->node_links[l];
    uint64_t bits = 0;
    ts_route r;
    ts_route_between(pf, nl->gpu_a, nl->gpu_b, &r); /* the library's share of the link */
    memcpy(&bits, &r.bw_Bps, sizeof bits);
    uint64_t words[3] = {(uint64_t)nl->gpu_a, (uint64_t)nl->gpu_b, bits};
    for (int w = 0; w < 3; w++)
      graph = (graph ^ words[w]) * 1099511628211ULL;
  }
  bool memoised = pf->gpus_per_node <= 8 && mask < 256;
  if (memoised && memo[mask].k > 0 && memo[mask].graph == graph) {
    for (int r = 1; r < memo[mask].k; r++)
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          if (gpus[orders[j]] % pf->gpus_per_node == memo[mask].local[r][i])
            orders[r * n + i] = orders[j];
    return memo[mask].k;
  }
  cycle_search s;
  memset(&s, 0, sizeof s);
  s.n = n;
  long node = gpus[orders[0]] / pf->gpus_per_node;
  for (int a = 0; a < n; a++) {
    if (gpus[orders[a]] / pf->gpus_per_node != node)
      return 1;
    for (int b = 0; b < n; b++) {
      int la = (int)(gpus[orders[a]] % pf->gpus_per_node),
          lb = (int)(gpus[orders[b]] % pf->gpus_per_node);
      if (a == b || ts_platform_node_link(pf, la, lb) < 0)
        continue;
      ts_route r;
      ts_route_between(pf, gpus[orders[a]], gpus[orders[b]], &r);
      s.cap[a][b] = r.bw_Bps;
    }
  }
  /* Ring 0 in ring-0 positions: 0, 1, ..., n - 1. */
  double width = 1e300;
  for (int i = 0; i < n; i++)
    width = fmin(width, s.cap[i][(i + 1) % n]);
  if (!(width > 0))
    return 1; /* ring 0 needs a multi-link hop: one ring, as before */
  for (int i = 0; i < n; i++)
    s.cap[i][(i + 1) % n] -= width;
  int k = 1;
  while (k < TS_COLL_MAX_RINGS) {
    memset(s.used, 0, sizeof s.used);
    s.perm[0] = 0;
    s.used[0] = true;
    s.best_width = width * (1 - 1e-9); /* a ring as wide as ring 0, or none */
    s.best[0] = -1;
    search_cycle(&s, 1, 1e300);
    if (s.best[0] < 0)
      break;
    for (int i = 0; i < n; i++) {
      s.cap[s.best[i]][s.best[(i + 1) % n]] -= width;
      orders[k * n + i] = orders[s.best[i]];
    }
    k++;
  }
  if (memoised) {
    memo[mask].graph = graph;
    memo[mask].k = k;
    for (int r = 0; r < k; r++)
      for (int i = 0; i < n; i++)
        memo[mask].local[r][i] = (int)(gpus[orders[r * n + i]] % pf->gpus_per_node);
  }
  return k;
}

/* How evenly rings 0 .. k - 1, opened at open[], enter and leave a node through its NICs: the
 * most rings through one NIC one way (x 1000), then how many entries and exits are at a member
 * without a NIC of its own (an extra hop to reach one). seg[r * m + i]: ring r's i-th member, as
 * a position of ring 0's segment (orders[0 .. m)). */
static long opening_cost(const ts_platform *pf, const long *gpus, const int *orders, const int *seg,
                         int m, const int *open, int k) {
  int gpn = pf->gpus_per_node, out[TS_PLATFORM_MAX_NICS] = {0}, in[TS_PLATFORM_MAX_NICS] = {0};
  int worst = 0, away = 0;
  for (int r = 0; r < k; r++) {
    int enter = (int)(gpus[orders[seg[r * m + open[r]]]] % gpn);
    int leave = (int)(gpus[orders[seg[r * m + (open[r] + m - 1) % m]]] % gpn);
    int ne = pf->gpu_nic[enter], nl = pf->gpu_nic[leave];
    worst = worst > ++in[ne] ? worst : in[ne];
    worst = worst > ++out[nl] ? worst : out[nl];
    away += (pf->nics[ne].gpu != enter) + (pf->nics[nl].gpu != leave);
  }
  return (long)worst * 1000 + away;
}

/* The rings across nodes of a group holding every GPU of each of its nodes, nodes joined inside
 * by a link graph (RCCL's rings on MI250X nodes, rome_model_63, which describes whole nodes:
 * "N0 0 1 5 4 6 7 3 2 N1|N1 2 3 7 6 4 5 1 0 N0|..."): each follows one of the node's rings
 * (node_rings), opened at one hop so that it enters
 * a node at one member and leaves it at another, the openings chosen so that the rings leave
 * and enter through NICs as evenly as possible (then through members holding a NIC, then the
 * first found). Every node holds the same local GPUs in ring 0's order. Returns the ring count,
 * or 0 where this does not apply (the caller rotates ring 0 instead). */
static int rings_through_nodes(const ts_platform *pf, const long *gpus, int n, int m, int *orders) {
  if (m < 3 || m != pf->gpus_per_node || m > RING_SEARCH_MAX || pf->has_node_switch ||
      pf->n_nics < 1)
    return 0;
  int gpn = pf->gpus_per_node, nodes = n / m;
  for (int j = 1; j < nodes; j++)
    for (int i = 0; i < m; i++)
      if (gpus[orders[j * m + i]] % gpn != gpus[orders[i]] % gpn)
        return 0;
  /* node 0's rings, as orders of its segment */
  long seg_gpus[RING_SEARCH_MAX];
  int seg[TS_COLL_MAX_RINGS * RING_SEARCH_MAX];
  for (int i = 0; i < m; i++) {
    seg_gpus[i] = gpus[orders[i]];
    seg[i] = i;
  }
  int k = node_rings(pf, seg_gpus, m, seg);
  if (k < 2)
    return 0;
  /* Ring r opens before position open[r] of its cycle: it enters each node there and leaves it
   * from the position before. The first 4 rings' openings are searched exhaustively (m^4), any
   * further ring's greedily. */
  int open[TS_COLL_MAX_RINGS] = {0}, best[TS_COLL_MAX_RINGS] = {0};
  int first = k < 4 ? k : 4;
  long combos = 1, best_cost = -1;
  for (int r = 0; r < first; r++)
    combos *= m;
  for (long c = 0; c < combos; c++) {
    long rest = c;
    for (int r = 0; r < first; r++, rest /= m)
      open[r] = (int)(rest % m);
    long cost = opening_cost(pf, gpus, orders, seg, m, open, first);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      memcpy(best, open, sizeof open);
    }
  }
  for (int r = first; r < k; r++) {
    best_cost = -1;
    for (int o = 0; o < m; o++) {
      best[r] = o;
      long cost = opening_cost(pf, gpus, orders, seg, m, best, r + 1);
      if (best_cost < 0 || cost < best_cost) {
        best_cost = cost;
        open[r] = o;
      }
    }
    best[r] = open[r];
  }
  int *base = malloc((size_t)n * sizeof *base);
  TS_ASSERT(base != NULL);
  memcpy(base, orders, (size_t)n * sizeof *base);
  for (int r = 0; r < k; r++)
    for (int j = 0; j < nodes; j++)
      for (int i = 0; i < m; i++)
        orders[r * n + j * m + i] = base[j * m + seg[r * m + (best[r] + i) % m]];
  free(base);
  return k;
}

int ts_coll_rings(const ts_platform *pf, const long *gpus, int n, int *orders) {
  ts_coll_ring_order(pf, gpus, n, orders);
  int per_node = ts_coll_per_node(pf, gpus, orders, n);
  int through = per_node > 0 ? rings_through_nodes(pf, gpus, n, per_node, orders) : 0;
  if (through > 0)
    return through;
  int k = pf->n_nics < per_node ? pf->n_nics : per_node;
  if (k > TS_COLL_MAX_RINGS)
    k = TS_COLL_MAX_RINGS;
  if (k < 2)
    return node_rings(pf, gpus, n, orders);
  int shift = per_node / k;
  for (int r = 1; r < k; r++)
    for (int i = 0; i < n; i++) {
      int base = i - i % per_node; /* the node's segment */
      orders[r * n + i] = orders[base + (i % per_node + r * shift) % per_node];
    }
  return k;
}

/* Slowest bandwidth and largest latency over the hops from position i to succ(i). */
static void hops_of(const ts_platform *pf, const long *ring_gpus, int n, int (*succ)(int, int, int),
                    int per_node, double *lat_s, double *bw_Bps) {
  *lat_s = 0;
  *bw_Bps = 1e300;
  for (int i = 0; i < n; i++) {
    int j = succ(i, n, per_node);
    if (j == i)
      continue;
    ts_route r;
    ts_route_between(pf, ring_gpus[i], ring_gpus[j], &r);
    *lat_s = r.lat_s > *lat_s ? r.lat_s : *lat_s;
    *bw_Bps = r.bw_Bps < *bw_Bps ? r.bw_Bps : *bw_Bps;
  }
}

static int ring_succ(int i, int n, int per_node) {
  (void)per_node;
  return (i + 1) % n;
}

/* Hierarchical phases: the next member on the same node, and the same member of the next node. */
static int intra_succ(int i, int n, int m) {
  (void)n;
  return i - i % m + (i % m + 1) % m;
}

static int cross_succ(int i, int n, int m) {
  return (i + m) % n;
}

/* Tree t is a heap over positions relabelled j = (pos + t n/2) mod n: parent of j is
 * (j - 1) / 2. Shifting by half the group turns most of tree 0's leaves (its second half) into
 * tree 1's interior, as NCCL's double binary tree balances the two. */
int ts_coll_tree_parent(int n, int t, int pos) {
  int shift = t * (n / 2), j = (pos + shift) % n;
  return j == 0 ? -1 : ((j - 1) / 2 - shift + n) % n;
}

int ts_coll_node_tree_parent(const ts_coll_group *g, int t, int pos) {
  int m = g->per_node, parent = ts_coll_tree_parent(g->n / m, t, pos / m);
  return parent < 0 ? -1 : parent * m + pos % m;
}

/* Children of slot `slot` in tree t over `count` slots (the inverse of ts_coll_tree_parent). */
static int tree_kids(int count, int t, int slot, int kids[2]) {
  int shift = t * (count / 2), j = (slot + shift) % count, k = 0;
  for (int c = 2 * j + 1; c <= 2 * j + 2; c++)
    if (c < count)
      kids[k++] = (c - shift + count) % count;
  return k;
}

static int tree0_parent(int i, int n, int per_node) {
  (void)per_node;
  int p = ts_coll_tree_parent(n, 0, i);
  return p < 0 ? i : p;
}

/* The bytes a second the chains of a one-node group's pipelined tree carry (tree_pipelined: a
 * chain along each of the k rings, carrying 1/k of the bytes both ways over its hops): the
 * links' capacity over the share of the bytes crossing them, at the most loaded link. A ring
 * and its reverse make the same chain, so the chains of a node load its links twice as much as
 * its rings do. */
static double chain_Bps(const ts_platform *pf, const ts_coll_group *g, const long *ring_gpus) {
  enum { MAX_LOADS = 2 * TS_COLL_MAX_RINGS * RING_SEARCH_MAX };
  ts_link_id ids[MAX_LOADS];
  double load[MAX_LOADS], cap[MAX_LOADS], per_byte = 0;
  int n_ids = 0, n = g->n;
  for (int r = 0; r < g->n_rings; r++)
    for (int i = 0; i + 1 < n; i++)
      for (int dir = 0; dir < 2; dir++) {
        ts_route route;
        long a = ring_gpus[r * n + i + dir], b = ring_gpus[r * n + i + 1 - dir];
        ts_route_between(pf, a, b, &route);
        for (int l = 0; l < route.n_links; l++) {
          int k = 0;
          while (k < n_ids && ids[k] != route.links[l])
            k++;
          if (k == n_ids) {
            if (n_ids == MAX_LOADS)
              return route.bw_Bps; /* not reached: rings are at most 8 direct hops */
            ids[n_ids] = route.links[l];
            load[n_ids] = 0;
            double lat = 0;
            ts_route_link_info(pf, route.links[l], &cap[n_ids], &lat, NULL, 0);
            n_ids++;
          }
          load[k] += 1.0 / g->n_rings;
          per_byte = fmax(per_byte, load[k] / cap[k]);
        }
      }
  return per_byte > 0 ? 1 / per_byte : INFINITY;
}

void ts_coll_plan(const ts_platform *pf, ts_coll_group *g, const long *ring_gpus) {
  g->ccl = &pf->ccl;
  g->n_nodes = g->n > 0;
  for (int i = 1; i < g->n; i++) /* ring order enters each node once */
    g->n_nodes += ring_gpus[i] / pf->gpus_per_node != ring_gpus[i - 1] / pf->gpus_per_node;
  hops_of(pf, ring_gpus, g->n, ring_succ, 0, &g->ring_lat_s, &g->ring_Bps);
  g->ring_Bps *= g->n_rings;
  g->chain_Bps = g->n_nodes == 1 && g->n >= 3 ? chain_Bps(pf, g, ring_gpus) : INFINITY;
  if (g->n >= 3) {
    hops_of(pf, ring_gpus, g->n, tree0_parent, 0, &g->tree_lat_s, &g->tree_Bps);
    g->tree_children = malloc((size_t)(4 * g->n) * sizeof *g->tree_children);
    TS_ASSERT(g->tree_children != NULL);
    for (int i = 0; i < 4 * g->n; i++)
      g->tree_children[i] = -1;
    for (int t = 0; t < 2; t++)
      for (int c = 0; c < g->n; c++) {
        int parent = ts_coll_tree_parent(g->n, t, c);
        int *slot = parent >= 0 ? &g->tree_children[(t * g->n + parent) * 2] : NULL;
        if (slot != NULL)
          slot[slot[0] >= 0] = c;
      }
  }
  if (g->per_node == 0)
    return;
  hops_of(pf, ring_gpus, g->n, intra_succ, g->per_node, &g->intra_lat_s, &g->intra_Bps);
  hops_of(pf, ring_gpus, g->n, cross_succ, g->per_node, &g->cross_lat_s, &g->cross_Bps);
  /* The m cross rings run at once: members sharing a NIC share its bandwidth. */
  if (pf->n_nics < g->per_node)
    g->cross_Bps *= (double)pf->n_nics / (double)g->per_node;
}

void ts_coll_node_dispatch(ts_coll_group *g, double topk, double groups, double group_topk) {
  double nodes = (double)g->n_nodes;
  g->node_share = 0;
  if (g->n_nodes < 2 || topk < 1)
    return;
  double reach = groups > 0 ? fmin(nodes, fmax(1.0, group_topk * nodes / groups)) : nodes;
  g->node_share = reach * (1 - pow(1 - 1 / reach, topk)) / topk;
}

/* Members per node of an all-to-all across g's nodes: per_node, or 1 with every member on a
 * node of its own; 0 on one node, or where the nodes hold different numbers. */
static int alltoall_node_members(const ts_coll_group *g) {
  if (g->n_nodes < 2)
    return 0;
  return g->per_node > 0 ? g->per_node : g->n_nodes == g->n ? 1 : 0;
}

/* The same where it runs as DeepEP does (node_share set). */
static int node_dispatch_members(const ts_coll_group *g) {
  return g->node_share > 0 ? alltoall_node_members(g) : 0;
}

/* Every GPU of a node on the node's switch, and with a NIC of its own. */
static bool has_rail_nics(const ts_platform *pf) {
  if (!pf->has_node_switch)
    return false;
  for (int a = 0; a < pf->gpus_per_node; a++)
    if (pf->gpu_nic[a] < 0 || pf->nics[pf->gpu_nic[a]].gpu != a)
      return false;
  return true;
}

void ts_coll_plan_pxn(const ts_platform *pf, ts_coll_group *g, const long *ring_gpus) {
  int m = alltoall_node_members(g), per = pf->gpus_per_node;
  if (g->ccl == NULL || g->ccl->library != TS_CCL_NCCL || m < 2 || !has_rail_nics(pf))
    return;
  for (int i = 0; i < g->n; i++) /* member j of every node on the same local GPU as node 0's */
    if (ring_gpus[i] % per != ring_gpus[i % m] % per ||
        ring_gpus[i] / per != ring_gpus[i - i % m] / per)
      return;
  g->node_share = 1; /* every copy crosses the network, through the rail of its receiver */
  g->is_pxn = true;
}

bool ts_coll_plan_node_stage(const ts_platform *pf, ts_coll_group *g, const long *ring_gpus) {
  if (node_dispatch_members(g) < 2 || !has_rail_nics(pf))
    return false;
  ts_route r;
  ts_route_between(pf, ring_gpus[0], ring_gpus[1], &r); /* ring 0 holds its nodes in turn */
  g->node_stage_lat_s = r.lat_s;
  g->node_stage_Bps = r.bw_Bps;
  return true;
}

/* Levels of a heap of n. */
static int tree_depth(int n) {
  int depth = 0;
  for (int reach = 1; reach < n; reach = 2 * reach + 1)
    depth++;
  return depth;
}

/* The alpha-beta time of running op on bytes with algo (which must suit g). */
static double estimate(const ts_coll_group *g, ts_coll_algo algo, ts_coll_op op, double bytes) {
  double p = g->n;
  if (algo == TS_ALGO_HIERARCHICAL) {
    double m = g->per_node, nodes = p / m;
    return 2 * (m - 1) * g->intra_lat_s + 2 * (m - 1) / m * bytes / g->intra_Bps +
           2 * (nodes - 1) * g->cross_lat_s + 2 * (nodes - 1) / nodes * (bytes / m) / g->cross_Bps;
  }
  if (algo == TS_ALGO_TREE) /* up and down, each member's links carrying about all the bytes */
    return 2 * tree_depth(g->n) * g->tree_lat_s + 2 * bytes / g->tree_Bps;
  int m = op == TS_COLL_ALLTOALL ? alltoall_node_members(g) : 0;
  if (m > 0) {
    /* Across nodes every member's sends go at once, what leaves its node through its share of
     * the NICs (cross_Bps), what stays over the node's links: the longer of the two. NCCL
     * sends each copy to its expert's member, (nodes - 1) / nodes of them over the network;
     * DeepEP (node_share) a token once a node it reaches, then spreads all its copies inside
     * the node. */
    double nodes = p / m, cross_Bps = m > 1 ? g->cross_Bps : g->ring_Bps;
    double cross_lat = m > 1 ? g->cross_lat_s : g->ring_lat_s;
    bool deepep = g->node_share > 0;
    double cross = (nodes - 1) * cross_lat +
                   (deepep ? g->node_share : 1.0) * (nodes - 1) / nodes * bytes / cross_Bps;
    double inside = deepep ? (m - 1) / m * bytes : (m - 1) / p * bytes;
    double intra = m > 1 ? (m - 1) * g->intra_lat_s + inside / g->intra_Bps : 0;
    return fmax(cross, intra);
  }
  double steps = ts_coll_steps(op, g->n);
  return steps * g->ring_lat_s + steps / p * bytes / g->ring_Bps;
}

/* The ideal library's choice: the algorithm forced, or the fastest by estimate(). */
static ts_coll_algo ideal_choice(const ts_coll_group *g, ts_coll_op op, double bytes) {
  bool can_hier = g->per_node > 0, can_tree = g->n >= 3;
  if (op != TS_COLL_ALLREDUCE)
    return TS_ALGO_RING;
  if (g->algo != TS_ALGO_AUTO)
    return (g->algo == TS_ALGO_HIERARCHICAL && !can_hier) || (g->algo == TS_ALGO_TREE && !can_tree)
               ? TS_ALGO_RING
               : g->algo;
  ts_coll_algo algo = TS_ALGO_RING;
  double best = estimate(g, TS_ALGO_RING, op, bytes);
  if (can_hier && estimate(g, TS_ALGO_HIERARCHICAL, op, bytes) < best) {
    best = estimate(g, TS_ALGO_HIERARCHICAL, op, bytes);
    algo = TS_ALGO_HIERARCHICAL;
  }
  if (can_tree && estimate(g, TS_ALGO_TREE, op, bytes) < best)
    algo = TS_ALGO_TREE;
  return algo;
}

/* ts_coll_decide without the memo. */
static ts_coll_call decide(const ts_coll_group *g, ts_coll_op op, double bytes) {
  ts_coll_call c = {.algo = TS_ALGO_RING,
                    .is_ideal = true,
                    .lib = {.algo = TS_CCL_RING, .proto = TS_PROTO_SIMPLE, .wire = 1}};
  if (g->n < 2 || bytes <= 0)
    return c;
  bool forced_hier = g->algo == TS_ALGO_HIERARCHICAL && g->per_node > 0 && op == TS_COLL_ALLREDUCE;
  if (g->ccl == NULL || g->ccl->library == TS_CCL_IDEAL || forced_hier) {
    c.algo = ideal_choice(g, op, bytes);
    c.time_s = estimate(g, c.algo, op, bytes);
    return c;
  }
  c.is_ideal = false;
  if (op == TS_COLL_ALLTOALL) {
    c.is_pxn = g->is_pxn;
    /* Libraries run all-to-all as grouped sends and receives, outside their tuner: priced at
     * the wire plus the ring's Simple base latency (ASSUMED: one launch per call). */
    c.lib.lat_s = ts_ccl_base_latency_s(g->ccl, TS_CCL_RING, TS_PROTO_SIMPLE);
    c.lib.bus_Bps = c.lib.alg_Bps = INFINITY;
    c.time_s = c.lib.lat_s + estimate(g, TS_ALGO_RING, op, bytes);
    return c;
  }
  unsigned allowed = g->algo == TS_ALGO_RING   ? 1u << TS_CCL_RING
                     : g->algo == TS_ALGO_TREE ? 1u << TS_CCL_TREE
                                               : ~0u;
  if (g->n < 3) /* trainsim's double binary tree needs three members */
    allowed &= ~(1u << TS_CCL_TREE);
  ts_ccl_comm comm = {g->n, g->n_nodes, g->ring_Bps};
  c.lib = ts_ccl_choose(g->ccl, &comm, op, bytes, allowed);
  c.algo = c.lib.algo == TS_CCL_TREE ? TS_ALGO_TREE : TS_ALGO_RING;
  c.time_s = c.lib.time_s;
  /* The library's tuner may credit its tree with more than the links carry (RCCL's tuning
   * models scale the tree's bus bandwidth up to 1.75x: ccl.c); the tree it runs inside a node
   * is chains on those links (tree_pipelined), so the call takes the longer of the two. */
  if (c.algo == TS_ALGO_TREE && isfinite(g->chain_Bps))
    c.time_s = fmax(c.time_s, c.lib.lat_s + bytes * c.lib.wire / g->chain_Bps);
  return c;
}

ts_coll_call ts_coll_decide(ts_coll_group *g, ts_coll_op op, double bytes) {
  for (int i = 0; i < g->n_memo; i++)
    if (g->memo_op[i] == op && g->memo_bytes[i] == bytes)
      return g->memo[i];
  int i = g->memo_next;
  g->memo_next = (i + 1) % TS_COLL_MEMO;
  g->n_memo += g->n_memo < TS_COLL_MEMO;
  g->memo_op[i] = op;
  g->memo_bytes[i] = bytes;
  g->memo[i] = decide(g, op, bytes);
  return g->memo[i];
}

ts_coll_algo ts_coll_choose(ts_coll_group *g, ts_coll_op op, double bytes) {
  return ts_coll_decide(g, op, bytes).algo;
}

double ts_coll_estimate_s(ts_coll_group *g, ts_coll_op op, double bytes) {
  return ts_coll_decide(g, op, bytes).time_s;
}

double ts_coll_overlapped_s(double comm_s, double gemm_s, int chunks) {
  double lo = comm_s < gemm_s ? comm_s : gemm_s, hi = comm_s < gemm_s ? gemm_s : comm_s;
  return hi + lo / (chunks > 1 ? chunks : 1);
}

int ts_coll_steps(ts_coll_op op, int p) {
  return op == TS_COLL_ALLREDUCE ? 2 * (p - 1) : p - 1; /* all-to-all: p - 1 pairwise steps */
}

/* Collective payloads carry no data; SimGrid only needs a non-NULL pointer. */
static char payload;

void ts_coll_proxy_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  ts_coll_proxy *p = sg_actor_self_get_data();
  for (;;) {
    sg_sem_acquire(p->go);
    sg_comm_t comms[TS_COLL_MAX_RINGS];
    void *got[TS_COLL_MAX_RINGS];
    for (int i = 0; i < p->n; i++)
      comms[i] = sg_mailbox_get_async(p->boxes[i], &got[i]);
    sg_comm_wait_all(comms, (size_t)p->n);
    p->n = 0;
    sg_sem_release(p->done);
  }
}

/* One step on every ring at once: each ring's position sends to its successor and receives
 * from its predecessor, each ring's transfer at no more than rate_Bps (<= 0: link rate). Under
 * rail play a player takes its node's landings instead, handing the other members' to their
 * proxies, and ends when they have all arrived. */
static void exchange(const ts_coll_group *g, int pos, double bytes, double rate_Bps,
                     long *n_transfers) {
  void *got[TS_COLL_MAX_RINGS];
  sg_comm_t comms[2 * TS_COLL_MAX_RINGS];
  ts_coll_proxy *used[TS_COLL_MAX_RINGS];
  int n = g->n, k = 0, n_got = 0, n_used = 0;
  for (int r = 0; r < g->n_rings; r++) {
    int p = g->ring_pos[r * n + pos];
    comms[k++] =
        ts_sg_put_async(g->mailboxes[r * n + (p + 1) % n], &payload, bytes / g->n_rings, rate_Bps);
    if (g->landing_from == NULL)
      comms[k++] = sg_mailbox_get_async(g->mailboxes[r * n + p], &got[n_got++]);
  }
  for (int l = g->landing_from != NULL ? g->landing_from[pos] : 0;
       g->landing_from != NULL && l < g->landing_from[pos + 1]; l++) {
    sg_mailbox_t box = g->mailboxes[g->landing_box[l]];
    ts_coll_proxy *proxy = g->proxies[g->landing_member[l]];
    TS_ASSERT(k < 2 * TS_COLL_MAX_RINGS && n_got < TS_COLL_MAX_RINGS);
    if (proxy == NULL) { /* the player's own */
      comms[k++] = sg_mailbox_get_async(box, &got[n_got++]);
      continue;
    }
    if (proxy->n == 0)
      used[n_used++] = proxy;
    TS_ASSERT(proxy->n < TS_COLL_MAX_RINGS);
    proxy->boxes[proxy->n++] = box;
  }
  for (int i = 0; i < n_used; i++)
    sg_sem_release(used[i]->go);
  sg_comm_wait_all(comms, (size_t)k);
  for (int i = 0; i < n_used; i++)
    sg_sem_acquire(used[i]->done);
  *n_transfers += g->n_rings;
}

/* All-to-all by pairwise exchange on ring 0's positions: in step s, position i sends bytes/p
 * to i + s and receives from i - s. Flow fidelity runs the p - 1 steps one after another;
 * aggregate posts them all at once (the same bytes on the same routes, with contention). */
static void alltoall(const ts_coll_group *g, int pos, double bytes, ts_fidelity fidelity,
                     long *n_transfers) {
  int m = node_dispatch_members(g);
  if (m > 0) { /* DeepEP (ts_coll_node_dispatch): its stages at once, at every fidelity */
    int n = g->n, nodes = n / m, node = pos / m, j = pos % m, k = 0;
    bool is_node_priced = fidelity == TS_FIDELITY_HYBRID && g->node_barriers != NULL;
    int count = nodes - 1 + (is_node_priced ? 0 : m - 1);
    sg_comm_t *comms = malloc((size_t)(2 * count) * sizeof *comms);
    void **got = malloc((size_t)count * sizeof *got);
    TS_ASSERT(comms != NULL && got != NULL);
    for (int x = 1; x < nodes; x++, k++) /* over the network, to the same in-node index */
      comms[k] = sg_mailbox_put_async(g->mailboxes[((node + x) % nodes) * m + j], &payload,
                                      (long)(bytes * g->node_share / nodes + 0.5));
    for (int y = 1; !is_node_priced && y < m; y++, k++) /* over NVLink, to the node's others */
      comms[k] = sg_mailbox_put_async(g->mailboxes[node * m + (j + y) % m], &payload,
                                      (long)(bytes / m + 0.5));
    for (int i = 0; i < count; i++)
      comms[count + i] = sg_mailbox_get_async(g->mailboxes[pos], &got[i]);
    double node_end = 0;
    if (is_node_priced) { /* ts_coll_plan_node_stage */
      sg_barrier_wait(g->node_barriers[node]);
      node_end = simgrid_get_clock() + g->node_stage_lat_s +
                 (m - 1) * (double)(long)(bytes / m + 0.5) / g->node_stage_Bps;
    }
    sg_comm_wait_all(comms, (size_t)(2 * count));
    *n_transfers += count;
    free(comms);
    free(got);
    if (node_end > simgrid_get_clock())
      ts_coll_sleep(node_end - simgrid_get_clock());
    return;
  }
  int n = g->n, batch = fidelity == TS_FIDELITY_FLOW ? 1 : n - 1;
  long size = (long)(bytes / n + 0.5);
  sg_comm_t *comms = malloc((size_t)(2 * batch) * sizeof *comms);
  void **got = malloc((size_t)batch * sizeof *got);
  TS_ASSERT(comms != NULL && got != NULL);
  for (int first = 1; first < n; first += batch) {
    int k = 0;
    for (int s = first; s < first + batch && s < n; s++, k++) {
      comms[2 * k] = sg_mailbox_put_async(g->mailboxes[(pos + s) % n], &payload, size);
      comms[2 * k + 1] = sg_mailbox_get_async(g->mailboxes[pos], &got[k]);
    }
    sg_comm_wait_all(comms, (size_t)(2 * k));
    *n_transfers += k;
  }
  free(comms);
  free(got);
}

ts_coll_call ts_coll_decide_for(const ts_platform *pf, const long *gpus, int n, ts_coll_algo wanted,
                                ts_coll_op op, double bytes) {
  int *orders = malloc((size_t)n * TS_COLL_MAX_RINGS * sizeof *orders);
  long *ring_gpus = malloc((size_t)n * TS_COLL_MAX_RINGS * sizeof *ring_gpus);
  TS_ASSERT(orders != NULL && ring_gpus != NULL);
  ts_coll_group g = {.n = n, .algo = wanted};
  g.n_rings = ts_coll_rings(pf, gpus, n, orders);
  g.per_node = ts_coll_per_node(pf, gpus, orders, n);
  for (int i = 0; i < n * g.n_rings; i++)
    ring_gpus[i] = gpus[orders[i]];
  ts_coll_plan(pf, &g, ring_gpus);
  if (op == TS_COLL_ALLTOALL)
    ts_coll_plan_pxn(pf, &g, ring_gpus);
  free(orders);
  free(ring_gpus);
  free(g.tree_children);
  return ts_coll_decide(&g, op, bytes);
}

/* One ring phase of `steps` steps of `chunk` bytes on a sub-ring (the hierarchical phases):
 * position pos sends to succ and receives in its own inbox. */
static void sub_ring(const ts_coll_group *g, sg_mailbox_t *inbox, int pos, int succ, int steps,
                     double chunk, double lat_s, ts_fidelity fidelity, long *n_transfers) {
  int rounds = fidelity == TS_FIDELITY_FLOW ? steps : 1;
  double bytes = fidelity == TS_FIDELITY_FLOW ? chunk : chunk * steps;
  for (int k = 0; k < rounds; k++) {
    void *got = NULL;
    sg_comm_t comms[2] = {sg_mailbox_put_async(inbox[succ], &payload, (long)(bytes + 0.5)),
                          sg_mailbox_get_async(inbox[pos], &got)};
    sg_comm_wait_all(comms, 2);
    (*n_transfers)++;
  }
  if (fidelity != TS_FIDELITY_FLOW) {
    sg_barrier_wait(g->barrier);
    if (steps > 1)
      ts_coll_sleep((steps - 1) * lat_s);
  }
}

/* The library latency still to wait once transfers that took `included` have run. */
static double rest_of(const ts_coll_call *call, double included) {
  return call->lib.lat_s > included ? call->lib.lat_s - included : 0;
}

/* Double binary tree under the ideal library (trainsim's own, unpipelined tree): every member sends
 * half the bytes up each tree once its children's halves have arrived, then the halves come back
 * down; a barrier separates the phases (so one inbox per tree serves both). Flow fidelity takes the
 * latency of each level from its transfers; aggregate waits depth - 1 more route latencies per
 * phase. */
static void tree_phased(const ts_coll_group *g, int pos, double bytes, ts_fidelity fidelity,
                        long *n_transfers) {
  int n = g->n, depth = tree_depth(n);
  long half = (long)(bytes / 2 + 0.5);
  for (int down = 0; down < 2; down++) {
    sg_comm_t comms[8];
    void *got[8];
    int k = 0;
    for (int t = 0; t < 2; t++) {
      const int *kids = &g->tree_children[(t * n + pos) * 2];
      int parent = ts_coll_tree_parent(n, t, pos), children = (kids[0] >= 0) + (kids[1] >= 0);
      sg_mailbox_t *inbox = g->tree_mailboxes[t];
      if (!down) { /* children first, then up */
        for (int c = 0; c < children; c++)
          comms[k++] = sg_mailbox_get_async(inbox[pos], &got[c]);
        if (fidelity == TS_FIDELITY_FLOW) {
          sg_comm_wait_all(comms + k - children, (size_t)children);
          k -= children;
        }
        if (parent >= 0) {
          comms[k++] = sg_mailbox_put_async(inbox[parent], &payload, half);
          (*n_transfers)++;
        }
      } else { /* from the parent, then to the children */
        if (parent >= 0) {
          comms[k++] = sg_mailbox_get_async(inbox[pos], &got[0]);
          if (fidelity == TS_FIDELITY_FLOW)
            sg_comm_wait(comms[--k]);
        }
        for (int c = 0; c < children; c++) {
          comms[k++] = sg_mailbox_put_async(inbox[kids[c]], &payload, half);
          (*n_transfers)++;
        }
      }
    }
    sg_comm_wait_all(comms, (size_t)k);
    sg_barrier_wait(g->barrier);
    if (fidelity != TS_FIDELITY_FLOW && depth > 1)
      ts_coll_sleep((depth - 1) * g->tree_lat_s);
  }
}

/* A library's tree, pipelined as NCCL runs it: chunks flow up and down at once, so the call's
 * transfers all run together (at every fidelity: the chunks of a pipelined tree overlap, so
 * playing its levels one after another would not be finer, only wrong). Inside a node the
 * members form a chain (NCCL's tree inside a node, RCCL's too) along each ring's stretch in the
 * node, carrying the ring's share of the bytes: each member sends it to both chain neighbours
 * (reduced towards the head, broadcast back), so every link of the chain carries it once each
 * way. Across nodes (m > 1
 * members on each of several nodes), local member j of every node joins a double binary tree over
 * the nodes for its 1/m share, through its own NIC; with one member per node (or uneven nodes) the
 * trees span the members. Every transfer carries wire bytes; the call ends when they have arrived
 * and the rest of the library's latency has passed, and not before the library's own time (its
 * bandwidth ceiling). */
static void tree_pipelined(const ts_coll_group *g, int pos, double bytes, const ts_coll_call *call,
                           long *n_transfers) {
  bool one_node = g->n_nodes == 1;
  int m = g->per_node > 0 ? g->per_node : one_node ? g->n : 1;
  int count = g->n / m, slot = pos / m, local = pos % m;
  double share = bytes / m * call->lib.wire, half = share / 2;
  sg_comm_t comms[4 * TS_COLL_MAX_RINGS + 16];
  void *got[16];
  int k = 0;
  sg_barrier_wait(g->barrier);
  double start = simgrid_get_clock();
  /* The chains (as the library's tree channels follow its ring channels): along each ring's
   * stretch inside each node, carrying the ring's share; both chain neighbours. */
  int chains = g->n_rings, n = g->n;
  for (int r = 0; m > 1 && r < chains; r++)
    for (int side = -1; side <= 1; side += 2) {
      int q = g->ring_pos[r * n + pos], lq = q % m;
      if (lq + side < 0 || lq + side >= m)
        continue;
      comms[k++] = sg_mailbox_put_async(g->mailboxes[r * n + q + side], &payload,
                                        (long)(bytes / chains * call->lib.wire + 0.5));
      comms[k++] = sg_mailbox_get_async(g->mailboxes[r * n + q], &got[0]);
      (*n_transfers)++;
    }
  for (int t = 0; count > 1 && t < 2; t++) {
    int kids[2], n_kids = tree_kids(count, t, slot, kids);
    int parent = ts_coll_tree_parent(count, t, slot);
    sg_mailbox_t *inbox = g->tree_mailboxes[t];
    for (int c = 0; c < n_kids + (parent >= 0); c++) /* halves from below and from above */
      comms[k++] = sg_mailbox_get_async(inbox[pos], &got[c]);
    if (parent >= 0)
      comms[k++] = sg_mailbox_put_async(inbox[parent * m + local], &payload, (long)(half + 0.5));
    for (int c = 0; c < n_kids; c++)
      comms[k++] = sg_mailbox_put_async(inbox[kids[c] * m + local], &payload, (long)(half + 0.5));
    *n_transfers += n_kids + (parent >= 0);
  }
  sg_comm_wait_all(comms, (size_t)k);
  sg_barrier_wait(g->barrier);
  double now = simgrid_get_clock();
  double included = count > 1 ? (m > 1 ? g->cross_lat_s : g->tree_lat_s) : g->max_hop_lat_s;
  double end = fmax(now + rest_of(call, included), start + call->lib.time_s);
  ts_coll_sleep(end - now);
}

static void hierarchical(const ts_coll_group *g, int pos, double bytes, ts_fidelity fidelity,
                         long *n_transfers) {
  int m = g->per_node, nodes = g->n / m;
  double shard = bytes / m;
  int in = intra_succ(pos, g->n, m), across = cross_succ(pos, g->n, m);
  sub_ring(g, g->intra_mailboxes, pos, in, m - 1, shard, g->intra_lat_s, fidelity, n_transfers);
  sub_ring(g, g->cross_mailboxes, pos, across, 2 * (nodes - 1), shard / nodes, g->cross_lat_s,
           fidelity, n_transfers);
  sub_ring(g, g->intra_mailboxes, pos, in, m - 1, shard, g->intra_lat_s, fidelity, n_transfers);
}

void ts_coll_run(ts_coll_group *g, int pos, ts_coll_op op, double bytes, ts_fidelity fidelity,
                 long *n_transfers) {
  if (g->n < 2 || bytes <= 0)
    return;
  ts_coll_call call = ts_coll_decide(g, op, bytes); /* decided per member, as each would */
  if (pos == 0)
    g->n_calls[call.algo]++;
  int times = g->multiplicity > 1 ? g->multiplicity : 1;
  bytes *= times;
  if (op == TS_COLL_ALLTOALL) {
    alltoall(g, pos, bytes, fidelity, n_transfers);
    if (!call.is_ideal)
      ts_coll_sleep(call.lib.lat_s);
    return;
  }
  if (call.algo == TS_ALGO_HIERARCHICAL) {
    hierarchical(g, pos, bytes, fidelity, n_transfers);
    return;
  }
  if (call.algo == TS_ALGO_TREE) {
    if (call.is_ideal) /* trainsim's own tree, level by level */
      tree_phased(g, pos, bytes, fidelity, n_transfers);
    else
      tree_pipelined(g, pos, bytes, &call, n_transfers);
    return;
  }
  /* Ring (and PAT, which moves the same bytes through the same NICs): each ring's transfer at
   * no more than its share of the library's bus bandwidth, in wire bytes. */
  int steps = ts_coll_steps(op, g->n);
  double chunk = bytes / g->n * call.lib.wire;
  double rate = call.is_ideal ? 0 : call.lib.bus_Bps * call.lib.wire / g->n_rings * times;
  if (fidelity == TS_FIDELITY_FLOW) {
    for (int k = 0; k < steps; k++)
      exchange(g, pos, chunk, rate, n_transfers);
    if (!call.is_ideal) {
      sg_barrier_wait(g->barrier);
      ts_coll_sleep(rest_of(&call, steps * g->max_hop_lat_s));
    }
    return;
  }
  exchange(g, pos, chunk * steps, rate, n_transfers);
  sg_barrier_wait(g->barrier);
  if (!call.is_ideal)
    ts_coll_sleep(rest_of(&call, g->max_hop_lat_s));
  else if (steps > 1)
    ts_coll_sleep((steps - 1) * g->max_hop_lat_s);
}

void ts_coll_sleep(double s) {
  TS_ASSERT(isfinite(s) && s >= 0);
  sg_actor_sleep_for(s);
}
