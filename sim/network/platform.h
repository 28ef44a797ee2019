/* platform: a machine described by a platform file (schema in platforms/frontier.yaml).
 *
 * Loading parses and validates every value before anything reaches SimGrid (SimGrid aborts on
 * bad platform values). The node is an explicit link graph (Frontier's Infinity Fabric is
 * irregular) or a switch every GPU links to (NVSwitch); the network is a dragonfly (groups
 * of switches connected all-to-all, a fixed number of global links between every pair of
 * groups, nodes_per_switch nodes on each switch) or a fat tree (ts_fat_tree).
 * GPUs are numbered node-major: gpu = node * gpus_per_node + local index.
 */
#ifndef TS_PLATFORM_H
#define TS_PLATFORM_H

#include <stdbool.h>

#include "../../workloads/err.h"
#include "../../workloads/gpu.h"
#include "../../workloads/reliability.h"

#define TS_PLATFORM_MAX_GPUS_PER_NODE 72 /* a GB200 NVL72 rack is one NVLink domain */
#define TS_PLATFORM_MAX_NODE_LINKS 128
#define TS_PLATFORM_MAX_NICS 72

typedef struct ts_node_link {
  int gpu_a, gpu_b; /* local indices, a < b */
  double bw_Bps; /* per direction */
  double lat_s;
} ts_node_link;

typedef struct ts_nic {
  int gpu; /* local GPU the NIC is attached to */
  double bw_Bps; /* NIC <-> switch, per direction */
  double lat_s;
  double pcie_Bps; /* GPU <-> NIC, per direction */
  double pcie_lat_s;
} ts_nic;

typedef struct ts_link_params {
  double bw_Bps; /* per direction */
  double lat_s;
} ts_link_params;

typedef enum ts_routing { TS_ROUTING_ADAPTIVE, TS_ROUTING_MINIMAL } ts_routing;
extern const char *const ts_routing_names[]; /* "adaptive", "minimal" */

typedef struct ts_dragonfly {
  long n_groups;
  long switches_per_group;
  long nodes_per_switch;
  long global_links_per_pair;
  ts_link_params local; /* switch to switch inside a group */
  ts_link_params global; /* between groups, one cable */
  ts_routing routing; /* inside groups; see route.h */
} ts_dragonfly;

typedef enum ts_topology { TS_TOPO_DRAGONFLY, TS_TOPO_FAT_TREE } ts_topology;
extern const char *const ts_topology_names[]; /* "dragonfly", "fat-tree" */

/* A fat tree of switches with `radix` ports (leaf-spine, or leaf-spine-core with 3 levels).
 * Leaves split their ports down (NICs) : up (spines) as oversubscription : 1; the layers above
 * are non-blocking. Rail-optimised (NVIDIA's DGX SuperPOD): NIC k of every node of a scalable
 * unit (down_ports nodes) is on the unit's leaf k; otherwise all NICs of a node share a leaf. */
typedef struct ts_fat_tree {
  int levels;
  long radix;
  double oversubscription;
  bool is_rail_optimized;
  ts_link_params link; /* one switch-to-switch cable */
  long down_ports, up_ports; /* derived, per leaf */
  long leaves_per_pod; /* derived: leaves under one set of spines (3 levels) */
} ts_fat_tree;

/* The collective library the machine runs (sim/engine/ccl.h holds its tuning model).
 * ideal: collectives at link rate with route latencies only, the wire without a library (for
 * teaching and for tests of the network model). */
typedef enum ts_ccl_library { TS_CCL_IDEAL, TS_CCL_NCCL, TS_CCL_RCCL } ts_ccl_library;
extern const char *const ts_ccl_library_names[]; /* "ideal", "nccl", "rccl" */
/* NCCL's per-architecture constants (tuning.cc indexes them by compute capability). */
typedef enum ts_ccl_arch {
  TS_ARCH_VOLTA,
  TS_ARCH_AMPERE,
  TS_ARCH_HOPPER,
  TS_ARCH_BLACKWELL
} ts_ccl_arch;
extern const char *const ts_ccl_arch_names[]; /* "volta", "ampere", "hopper", "blackwell" */
typedef enum ts_ccl_cpu { TS_CPU_INTEL, TS_CPU_AMD } ts_ccl_cpu;
extern const char *const ts_ccl_cpu_names[]; /* "intel", "amd" */

/* The library releases whose tuning constants sim/engine/ccl.c carries (the newest modelled). */
#define TS_NCCL_VERSION 23007 /* NCCL 2.30.7 */
#define TS_RCCL_VERSION 22105 /* RCCL 2.21.5 (ROCm 6.3) */

typedef struct ts_ccl_config {
  ts_ccl_library library;
  ts_ccl_arch arch; /* nccl */
  int tuning_model; /* rccl: which of its per-platform tuning tables (0-5) */
  /* The library's release whose constants apply (major x 10000 + minor x 100 + patch): the
   * newest modelled unless a workload's stack names another (ccl.h says which are). */
  long version;
  ts_ccl_cpu cpu; /* the host CPU: sets the network post overhead */
  int channels; /* channels of a collective (per-channel bandwidth ceilings) */
  double node_link_efficiency; /* share of a node link's datasheet rate the library reaches */
  /* Compute kernels that run while a collective's kernels do take (1 + this) times longer
   * (they share the SMs and the memory bandwidth): the default of --overlap-slowdown. */
  double overlap_slowdown;
} ts_ccl_config;

typedef struct ts_platform {
  char name[64];
  char source_name[256]; /* file it was read from, for messages */
  ts_gpu gpu;
  int gpus_per_node;
  int n_node_links;
  ts_node_link node_links[TS_PLATFORM_MAX_NODE_LINKS];
  int n_nics;
  ts_nic nics[TS_PLATFORM_MAX_NICS];
  int gpu_nic[TS_PLATFORM_MAX_GPUS_PER_NODE]; /* derived: the NIC each local GPU uses */
  bool has_node_switch; /* GPUs joined by a switch (NVSwitch), one link each, not node_links */
  ts_link_params node_switch; /* each GPU's link to the node switch */
  ts_topology topology;
  ts_dragonfly net; /* topology dragonfly */
  ts_fat_tree ft; /* topology fat-tree */
  long n_nodes;
  /* Node links and the node switch above are stored as the library drives them: the file's
   * bandwidth x ccl.node_link_efficiency. */
  ts_ccl_config ccl;
  ts_reliability_config reliability; /* section `reliability` (workloads/reliability.h) */
} ts_platform;

/* Loads and validates a platform file into *out (written only on success). */
int ts_platform_load_file(const char *path, ts_platform *out, ts_err *err);
/* Same from text in memory (the embedded default platform); name is used in messages. */
int ts_platform_load_string(const char *name, const char *text, ts_platform *out, ts_err *err);

/* The platform compiled into the binary (platforms/frontier.yaml) and its display name. */
extern const char ts_platform_default_text[];
extern const char ts_platform_default_name[];
/* The kernel table it names (platforms/kernels/mi250x.yaml), compiled in with it. */
extern const char ts_kernels_default_text[];
extern const char ts_kernels_default_name[];

long ts_platform_n_gpus(const ts_platform *pf);
/* Nodes behind one unit of the network: a dragonfly group, or a fat tree's leaf (all NICs of
 * a node on it) or scalable unit (rail-optimised). */
long ts_platform_unit_nodes(const ts_platform *pf);
/* The fat-tree leaf that NIC `nic` of node `node` hangs off. */
long ts_platform_leaf(const ts_platform *pf, long node, int nic);
/* The node-link index joining two local GPUs, or -1. */
int ts_platform_node_link(const ts_platform *pf, int a, int b);
/* Paths inside a node from local GPU `from`: the fewest links, and among those the widest
 * (largest bottleneck bandwidth), ties to the lowest intermediate GPU. Fills hops[v] (-1:
 * unreachable), the predecessor pred[v] and the bottleneck width[v] for every local GPU v. */
void ts_platform_node_paths(const ts_platform *pf, int from, int *hops, int *pred, double *width);
/* Links on the shortest path between local GPUs a and b, or -1 when there is none. */
int ts_platform_node_hops(const ts_platform *pf, int a, int b);
/* The NIC a local GPU sends through: fewest links to the NIC's GPU, then widest path, then the
 * NIC on the nearest GPU index (a PCIe switch's neighbours), then the first. */
int ts_platform_nearest_nic(const ts_platform *pf, int gpu);

#endif
