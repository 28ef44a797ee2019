/* route: see route.h. */
#include "route.h"

#include <stdio.h>

enum link_kind {
  LK_NODE = 1,
  LK_PCIE_UP,
  LK_PCIE_DOWN,
  LK_NIC_UP,
  LK_NIC_DOWN,
  LK_LOCAL, /* minimal routing: the one cable between two switches of a group */
  LK_FABRIC_OUT, /* adaptive routing: a switch's share of its group's local fabric, leaving */
  LK_FABRIC_IN, /* ... and arriving */
  LK_GLOBAL, /* also a group's pool of global cables (adaptive routing), as GROUP_POOL below */
  LK_NVS_UP, /* a GPU's link into its node's switch */
  LK_NVS_DOWN, /* ... and out of it */
  LK_LEAF_UP, /* fat tree: a leaf's uplinks to the spines, as one aggregate */
  LK_LEAF_DOWN, /* ... and its downlinks from them */
  LK_POD_UP, /* 3 levels: a pod's spines' uplinks to the core, as one aggregate */
  LK_POD_DOWN
};

static ts_link_id make_id(enum link_kind kind, uint64_t a, uint64_t b, uint64_t c) {
  TS_ASSERT(kind < 16);
  TS_ASSERT(a < (1ULL << 28) && b < (1ULL << 16) && c < (1ULL << 16)); /* kind in bits 60-63 */
  return ((uint64_t)kind << 60) | (a << 32) | (b << 16) | c;
}

static void add(const ts_platform *pf, ts_route *r, ts_link_id id) {
  TS_ASSERT(r->n_links < TS_ROUTE_MAX_LINKS);
  r->links[r->n_links++] = id;
  double bw = 0, lat = 0;
  ts_route_link_info(pf, id, &bw, &lat, NULL, 0);
  r->lat_s += lat;
  if (bw < r->bw_Bps)
    r->bw_Bps = bw;
}

/* Appends the node links from local a to local b on `node`, in travel order. */
static void add_node_path(const ts_platform *pf, ts_route *r, long node, int a, int b) {
  if (a == b)
    return;
  if (pf->has_node_switch) {
    add(pf, r, make_id(LK_NVS_UP, (uint64_t)node, 0, (uint64_t)a));
    add(pf, r, make_id(LK_NVS_DOWN, (uint64_t)node, 0, (uint64_t)b));
    return;
  }
  int hops[TS_PLATFORM_MAX_GPUS_PER_NODE], pred[TS_PLATFORM_MAX_GPUS_PER_NODE];
  double width[TS_PLATFORM_MAX_GPUS_PER_NODE];
  ts_platform_node_paths(pf, a, hops, pred, width);
  TS_ASSERT(hops[b] > 0);
  int path[TS_PLATFORM_MAX_GPUS_PER_NODE + 1];
  int n = 0;
  for (int v = b; v != a; v = pred[v])
    path[n++] = v;
  path[n++] = a;
  for (int i = n - 1; i > 0; i--)
    add(pf, r, make_id(LK_NODE, (uint64_t)node, (uint64_t)path[i], (uint64_t)path[i - 1]));
}

/* A stable integer hash (splitmix64 finaliser) for spreading pairs over parallel cables. */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Adaptive routing (route.h): the cable index of a group pair's link, and the "other group" of
 * a group's global pool (cable 0 leaving, 1 arriving). Link kinds fill the id's 4 top bits. */
#define GLOBAL_BUNDLE 0xffffULL
#define GROUP_POOL 0xffffULL

/* Switch (within its group) that holds group g's k-th cable to group other. */
static long global_switch(const ts_dragonfly *d, long g, long other, long k) {
  long index = other < g ? other : other - 1;
  return (index * d->global_links_per_pair + k) % d->switches_per_group;
}

/* Switch a to switch b inside group g (a != b). */
static void add_local_hop(const ts_platform *pf, ts_route *r, long g, long a, long b) {
  if (pf->net.routing == TS_ROUTING_MINIMAL) {
    add(pf, r, make_id(LK_LOCAL, (uint64_t)g, (uint64_t)a, (uint64_t)b));
    return;
  }
  add(pf, r, make_id(LK_FABRIC_OUT, (uint64_t)g, (uint64_t)a, 0));
  add(pf, r, make_id(LK_FABRIC_IN, (uint64_t)g, 0, (uint64_t)b));
}

/* Fat tree: NICs on one leaf meet there; otherwise up to the spines (and, across pods of a
 * 3-level tree, the core) and down, the parallel cables of each layer taken as one aggregate
 * (ECMP / adaptive spreading, as the dragonfly's adaptive fabric). */
static void add_fat_tree_path(const ts_platform *pf, ts_route *r, long src_node, int nic_s,
                              long dst_node, int nic_d) {
  long ls = ts_platform_leaf(pf, src_node, nic_s), ld = ts_platform_leaf(pf, dst_node, nic_d);
  if (ls == ld)
    return;
  add(pf, r, make_id(LK_LEAF_UP, (uint64_t)ls, 0, 0));
  long ps = ls / pf->ft.leaves_per_pod, pd = ld / pf->ft.leaves_per_pod;
  if (pf->ft.levels == 3 && ps != pd) {
    add(pf, r, make_id(LK_POD_UP, (uint64_t)ps, 0, 0));
    add(pf, r, make_id(LK_POD_DOWN, (uint64_t)pd, 0, 0));
  }
  add(pf, r, make_id(LK_LEAF_DOWN, (uint64_t)ld, 0, 0));
}

static void add_switch_path(const ts_platform *pf, ts_route *r, long src_node, long dst_node) {
  const ts_dragonfly *d = &pf->net;
  long per_group = d->switches_per_group * d->nodes_per_switch;
  long gs = src_node / per_group, gd = dst_node / per_group;
  long ss = (src_node / d->nodes_per_switch) % d->switches_per_group;
  long sd = (dst_node / d->nodes_per_switch) % d->switches_per_group;
  if (gs == gd) {
    if (ss != sd)
      add_local_hop(pf, r, gs, ss, sd);
    return;
  }
  if (pf->net.routing != TS_ROUTING_MINIMAL) {
    /* Adaptive (route.h): the group pair's share of the cables, within each group's pool. */
    add(pf, r, make_id(LK_FABRIC_OUT, (uint64_t)gs, (uint64_t)ss, 0));
    add(pf, r, make_id(LK_GLOBAL, (uint64_t)gs, GROUP_POOL, 0));
    add(pf, r, make_id(LK_GLOBAL, (uint64_t)gs, (uint64_t)gd, GLOBAL_BUNDLE));
    add(pf, r, make_id(LK_GLOBAL, (uint64_t)gd, GROUP_POOL, 1));
    add(pf, r, make_id(LK_FABRIC_IN, (uint64_t)gd, 0, (uint64_t)sd));
    return;
  }
  long k = (long)(mix((uint64_t)src_node * 0x100000001ULL + (uint64_t)dst_node) %
                  (uint64_t)d->global_links_per_pair);
  long out_sw = global_switch(d, gs, gd, k), in_sw = global_switch(d, gd, gs, k);
  if (ss != out_sw)
    add_local_hop(pf, r, gs, ss, out_sw);
  add(pf, r, make_id(LK_GLOBAL, (uint64_t)gs, (uint64_t)gd, (uint64_t)k));
  if (in_sw != sd)
    add_local_hop(pf, r, gd, in_sw, sd);
}

void ts_route_between(const ts_platform *pf, long src_gpu, long dst_gpu, ts_route *out) {
  TS_ASSERT(src_gpu != dst_gpu);
  ts_route r = {.n_links = 0, .lat_s = 0, .bw_Bps = 1e300};
  long src_node = src_gpu / pf->gpus_per_node, dst_node = dst_gpu / pf->gpus_per_node;
  int a = (int)(src_gpu % pf->gpus_per_node), b = (int)(dst_gpu % pf->gpus_per_node);
  if (src_node == dst_node) {
    add_node_path(pf, &r, src_node, a, b);
  } else {
    int nic_s = pf->gpu_nic[a], nic_d = pf->gpu_nic[b];
    TS_ASSERT(nic_s >= 0 && nic_d >= 0);
    add_node_path(pf, &r, src_node, a, pf->nics[nic_s].gpu);
    add(pf, &r, make_id(LK_PCIE_UP, (uint64_t)src_node, 0, (uint64_t)nic_s));
    add(pf, &r, make_id(LK_NIC_UP, (uint64_t)src_node, 0, (uint64_t)nic_s));
    if (pf->topology == TS_TOPO_FAT_TREE)
      add_fat_tree_path(pf, &r, src_node, nic_s, dst_node, nic_d);
    else
      add_switch_path(pf, &r, src_node, dst_node);
    add(pf, &r, make_id(LK_NIC_DOWN, (uint64_t)dst_node, 0, (uint64_t)nic_d));
    add(pf, &r, make_id(LK_PCIE_DOWN, (uint64_t)dst_node, 0, (uint64_t)nic_d));
    add_node_path(pf, &r, dst_node, pf->nics[nic_d].gpu, b);
  }
  *out = r;
}

long ts_route_link_node(ts_link_id id) {
  enum link_kind kind = (enum link_kind)(id >> 60);
  bool is_node_own = kind == LK_NODE || kind == LK_PCIE_UP || kind == LK_PCIE_DOWN ||
                     kind == LK_NIC_UP || kind == LK_NIC_DOWN || kind == LK_NVS_UP ||
                     kind == LK_NVS_DOWN;
  return is_node_own ? (long)((id >> 32) & 0x0fffffffULL) : -1;
}

bool ts_route_rail_link(const ts_platform *pf, ts_link_id id, ts_link_id *rail0) {
  enum link_kind kind = (enum link_kind)(id >> 60);
  uint64_t a = (id >> 32) & 0x0fffffffULL, b = (id >> 16) & 0xffffULL;
  switch (kind) {
  case LK_PCIE_UP: /* node, -, NIC (NIC i is GPU i's) */
  case LK_PCIE_DOWN:
  case LK_NIC_UP:
  case LK_NIC_DOWN:
  case LK_NVS_UP: /* node, -, GPU */
  case LK_NVS_DOWN:
    *rail0 = make_id(kind, a, b, 0);
    return true;
  case LK_LEAF_UP: /* leaf = unit x NICs + rail */
  case LK_LEAF_DOWN:
    *rail0 = make_id(kind, a - a % (uint64_t)pf->n_nics, 0, 0);
    return true;
  default:
    return false;
  }
}

void ts_route_link_info(const ts_platform *pf, ts_link_id id, double *bw_Bps, double *lat_s,
                        char *name, size_t name_size) {
  enum link_kind kind = (enum link_kind)(id >> 60);
  unsigned long a = (unsigned long)((id >> 32) & 0x0fffffffULL);
  unsigned long b = (unsigned long)((id >> 16) & 0xffffULL), c = (unsigned long)(id & 0xffffULL);
  const char *prefix = NULL;
  switch (kind) {
  case LK_NODE: {
    int l = ts_platform_node_link(pf, (int)b, (int)c);
    TS_ASSERT(l >= 0);
    *bw_Bps = pf->node_links[l].bw_Bps;
    *lat_s = pf->node_links[l].lat_s;
    prefix = "if"; /* node, from GPU, to GPU */
    break;
  }
  case LK_PCIE_UP:
  case LK_PCIE_DOWN:
    *bw_Bps = pf->nics[c].pcie_Bps;
    *lat_s = pf->nics[c].pcie_lat_s;
    prefix = kind == LK_PCIE_UP ? "pcie_up" : "pcie_down"; /* node, -, NIC */
    break;
  case LK_NIC_UP:
  case LK_NIC_DOWN:
    *bw_Bps = pf->nics[c].bw_Bps;
    *lat_s = pf->nics[c].lat_s;
    prefix = kind == LK_NIC_UP ? "nic_up" : "nic_down"; /* node, -, NIC */
    break;
  case LK_LOCAL:
    *bw_Bps = pf->net.local.bw_Bps;
    *lat_s = pf->net.local.lat_s;
    prefix = "local"; /* group, from switch, to switch */
    break;
  case LK_FABRIC_OUT:
  case LK_FABRIC_IN:
    *bw_Bps = ts_route_fabric_Bps(&pf->net);
    *lat_s = pf->net.local.lat_s;
    prefix = kind == LK_FABRIC_OUT ? "fabric_out" : "fabric_in"; /* group, switch */
    break;
  case LK_GLOBAL:
    *bw_Bps = pf->net.global.bw_Bps;
    *lat_s = pf->net.global.lat_s;
    prefix = "global"; /* from group, to group, cable */
    if (b == GROUP_POOL) {
      *bw_Bps = ts_route_group_global_Bps(&pf->net);
      *lat_s = 0; /* the cable's latency is the pair link's */
      prefix = c == 0 ? "global_out" : "global_in"; /* group, 65535, 0 or 1 */
    } else if (c == GLOBAL_BUNDLE) {
      *bw_Bps = ts_route_pair_Bps(&pf->net);
      prefix = "global_pair"; /* from group, to group, 65535 */
    }
    break;
  case LK_NVS_UP:
  case LK_NVS_DOWN:
    *bw_Bps = pf->node_switch.bw_Bps;
    *lat_s = pf->node_switch.lat_s;
    prefix = kind == LK_NVS_UP ? "nvs_up" : "nvs_down"; /* node, -, GPU */
    break;
  case LK_LEAF_UP:
  case LK_LEAF_DOWN:
    *bw_Bps = (double)pf->ft.up_ports * pf->ft.link.bw_Bps;
    *lat_s = pf->ft.link.lat_s;
    prefix = kind == LK_LEAF_UP ? "leaf_up" : "leaf_down"; /* leaf */
    break;
  case LK_POD_UP:
  case LK_POD_DOWN: /* non-blocking: as many core cables as the pod's leaves have uplinks */
    *bw_Bps = (double)(pf->ft.leaves_per_pod * pf->ft.up_ports) * pf->ft.link.bw_Bps;
    *lat_s = pf->ft.link.lat_s;
    prefix = kind == LK_POD_UP ? "pod_up" : "pod_down"; /* pod */
    break;
  default:
    ts_assert_fail("unknown link kind", __FILE__, __LINE__);
  }
  if (name != NULL)
    snprintf(name, name_size, "%s_%lu_%lu_%lu", prefix, a, b, c);
}

double ts_route_group_global_Bps(const ts_dragonfly *d) {
  return (double)(d->n_groups - 1) * (double)d->global_links_per_pair * d->global.bw_Bps;
}

double ts_route_pair_Bps(const ts_dragonfly *d) {
  double direct = (double)d->global_links_per_pair * d->global.bw_Bps;
  return direct + (ts_route_group_global_Bps(d) - direct) / 2;
}

double ts_route_fabric_Bps(const ts_dragonfly *d) {
  return (double)(d->switches_per_group - 1) * d->local.bw_Bps / 2.0;
}
