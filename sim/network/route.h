/* route: which physical links a transfer between two GPUs crosses.
 *
 * Inside a node: the path with the fewest links, and among those the widest (largest
 * bottleneck bandwidth), ties to the lowest intermediate GPU index. Between nodes:
 *   src GPU -> (node links) -> GPU holding the NIC -> PCIe -> NIC -> its switch
 *   -> [local link to the switch holding the chosen global link] -> global link
 *   -> [local link to the destination switch] -> NIC -> PCIe -> (node links) -> dst GPU
 * with at most 3 switch-to-switch hops (minimal dragonfly routing). Under `routing: minimal`
 * a pair of nodes always uses the same one of the global_links_per_pair cables between two
 * groups, picked by a hash of the two node numbers. The group's k-th global
 * cable to another group sits on switch (index_of_other_group * links_per_pair + k) mod
 * switches_per_group: an assumed, even wiring (Frontier's cabling map is not published).
 *
 * Inside a group, `routing: minimal` sends a switch pair's traffic over its one cable.
 * Slingshot routes adaptively instead (De Sensi et al. SC'20): packets spread over the direct
 * cable and the two-hop paths through the other switches, so a busy switch pair is not held
 * to one cable. A fluid model cannot route per packet, so `routing: adaptive` (the default)
 * models the group's all-to-all fabric as each switch's aggregate share of it: a transfer
 * from switch a to switch b crosses a's fabric egress and b's fabric ingress, each of
 * (switches_per_group - 1) x local bandwidth / 2 (all local cables, each path using two of
 * them when spread non-minimally).
 *
 * Between groups, adaptive routing (UGAL, Kim et al., ISCA'08 "Technology-Driven, Highly-
 * Scalable Dragonfly Topology"; Slingshot's variant, De Sensi et al. SC'20) sends a packet
 * minimally over one of the cables joining its two groups, or, when those queues are longer,
 * non-minimally (Valiant) through an intermediate group: two global cables instead of one. A
 * transfer from group A to group B therefore crosses three links of flow level:
 *   - A's global pool (out) and B's (in): all (groups - 1) x links_per_pair cables of the
 *     group, which every transfer leaving (entering) it shares, minimal or not;
 *   - the pair link A -> B: the direct cables at full rate plus half of A's other cables,
 *     direct + (pool - direct) / 2, because a non-minimal byte occupies a cable out of A and a
 *     cable out of the intermediate group, whose own traffic is taken to load it as much as A's
 *     loads A's (symmetric load: training's group-to-group shifts, other jobs elsewhere).
 * Uniform traffic is limited by the pools (UGAL keeps it minimal: all the cables carry it);
 * a group sending everything to one other group by the pair link, about half the pool (the
 * Valiant bound Kim et al. derive for adversarial traffic). A lone hot pair in an otherwise
 * idle machine could get up to the whole pool: the model halves it (a lower bound there).
 * The platform's groups all count, including those the job does not use: their cables carry
 * its non-minimal traffic.
 *
 * A node with a switch (NVSwitch) routes GPU a -> switch -> GPU b over a's uplink and b's
 * downlink. A fat tree routes NIC -> leaf [-> spines [-> core -> spines] -> leaf] -> NIC, each
 * layer's parallel cables aggregated per leaf (and per pod) as one link of their summed
 * bandwidth (ECMP spreading; only the leaf's oversubscription can bind).
 *
 * Links are named by 64-bit ids so that only links some route uses are ever created.
 */
#ifndef TS_ROUTE_H
#define TS_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform.h"

#define TS_ROUTE_MAX_LINKS 48

typedef uint64_t ts_link_id;

typedef struct ts_route {
  int n_links;
  ts_link_id links[TS_ROUTE_MAX_LINKS];
  double lat_s; /* sum of link latencies */
  double bw_Bps; /* bottleneck bandwidth */
} ts_route;

/* The route between two global GPU indices (distinct, both < ts_platform_n_gpus). */
void ts_route_between(const ts_platform *pf, long src_gpu, long dst_gpu, ts_route *out);
/* Capacity of one switch's share of its group's fabric under adaptive routing. */
double ts_route_fabric_Bps(const ts_dragonfly *d);
/* Adaptive routing between groups: a group's global pool (all its global cables), and what
 * one group pair can carry when the load is symmetric (route.c, above). */
double ts_route_group_global_Bps(const ts_dragonfly *d);
double ts_route_pair_Bps(const ts_dragonfly *d);
/* The node a link belongs to (its GPU links, NVSwitch ports, PCIe, NICs: the links that differ
 * between a node's GPUs' routes to another node), or -1 for a link of the network. */
long ts_route_link_node(ts_link_id id);
/* Rail play (sim/engine/engine.h) on a rail-optimised two-level fat tree whose nodes' GPUs
 * share a switch and each have a NIC of their own: turning every node's local GPU indices by
 * one maps each GPU's NVSwitch ports, PCIe, NIC and rail leaf to the next GPU's, links of equal
 * bandwidth and latency. The link of id's orbit under that turn that belongs to local GPU 0
 * (rail 0); false for a link the turn does not move that way (no rail play then). */
bool ts_route_rail_link(const ts_platform *pf, ts_link_id id, ts_link_id *rail0);
/* A link's bandwidth, latency and a unique name (SimGrid link names must be unique). */
void ts_route_link_info(const ts_platform *pf, ts_link_id id, double *bw_Bps, double *lat_s,
                        char *name, size_t name_size);

#endif
