/* sg_platform: hands a fully resolved platform (hosts, links, routes) to SimGrid.
 *
 * SimGrid 3.32's C API cannot create zones, hosts or links, so this is the one C++ file
 * (sg_platform.cpp). Everything is validated and routed in C before it gets here: SimGrid
 * aborts on bad values. The zone holds routes given explicitly for the host pairs that
 * communicate, in a hash table (memory grows with the routes, not with hosts squared, unlike
 * SimGrid's full zone: 8 n^2 bytes, 45 GB at 75,264 GPUs); links are shared by every route that
 * lists them, which is what makes contention real, max-min fairly: every flow weighs the same
 * (sg_platform.cpp: SimGrid's CM02 would weigh it by 1 / its route's latency), but for routes
 * given a weight (node play's aggregates beside single flows: ts_sg_route.weight).
 */
#ifndef TS_SG_PLATFORM_H
#define TS_SG_PLATFORM_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_sg_link {
  const char *name; /* unique */
  double bw_Bps;
  double lat_s;
} ts_sg_link;

typedef struct ts_sg_route {
  long src_host, dst_host; /* indices into the host list */
  int n_links;
  const long *links; /* indices into the link list, in travel order */
  double lat_s; /* the links' latencies summed */
  /* How many flows each flow on it counts as in max-min sharing (weighted max-min: SimGrid's
   * sharing penalty 1 / weight); 1 but for node play's aggregates beside single flows. */
  double weight;
  /* The pair's route from its source's hand-over on (ts_sg_platform_hand_over), where the pair
   * has another route until then; a pair with this route alone uses it throughout. */
  bool is_after_handover;
} ts_sg_route;

/* Creates the zone; call after simgrid_init and before creating actors. Host i is named
 * host_names[i] and computes at speed_flops_per_s. */
void ts_sg_platform_build(long n_hosts, const char *const *host_names, double speed_flops_per_s,
                          long n_links, const ts_sg_link *links, long n_routes,
                          const ts_sg_route *routes);

/* From now on, transfers from host src_host take the routes given with is_after_handover where
 * a pair has two (the engine's hand-over: sim/engine/engine.h). */
void ts_sg_platform_hand_over(long src_host);

#ifdef __cplusplus
}
#endif

#endif
