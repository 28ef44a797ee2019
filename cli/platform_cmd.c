/* platform_cmd: see platform_cmd.h. */
#include "platform_cmd.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../sim/network/route.h"
#include "args.h"

static const ts_flag_group groups[] = {{NULL, NULL, 0}};

const ts_command ts_platform_command = {
    .name = "platform",
    .synopsis = "check [FILE]\nshow [FILE]",
    .summary = "validate a platform file, or print what it describes",
    .description =
        "check validates a platform file (default: the built-in platforms/frontier.yaml) and says\n"
        "what it holds; show prints the machine it describes: GPUs, the node's link graph, NICs,\n"
        "the network's cables, injection and bisection bandwidth, and diameter.\n"
        "The schema is documented in platforms/README.md.\n",
    .groups = groups,
    .reads_no_workload = true,
    .main = ts_platform_main};

static void show_links(const ts_platform *pf) {
  int n = pf->gpus_per_node;
  printf("\nnode: %d GPUs; direct links, GB/s per direction ('.': none)\n     ", n);
  for (int b = 0; b < n; b++)
    printf("%6d", b);
  printf("\n");
  for (int a = 0; a < n; a++) {
    printf("  %2d ", a);
    for (int b = 0; b < n; b++) {
      int l = a == b ? -1 : ts_platform_node_link(pf, a, b);
      if (a == b)
        printf("%6s", "-");
      else if (l < 0)
        printf("%6s", ".");
      else
        printf("%6.0f", pf->node_links[l].bw_Bps / 1e9);
    }
    printf("\n");
  }
}

static void show_node(const ts_platform *pf) {
  int n = pf->gpus_per_node;
  if (pf->has_node_switch)
    printf("\nnode: %d GPUs on a switch, each linked to it at %.1f GB/s per direction (latency "
           "%.2f us)\n",
           n, pf->node_switch.bw_Bps / 1e9, pf->node_switch.lat_s * 1e6);
  else
    show_links(pf);
  printf("routes inside the node: links / bottleneck GB/s\n     ");
  for (int b = 0; b < n; b++)
    printf("%8d", b);
  printf("\n");
  for (int a = 0; a < n; a++) {
    printf("  %2d ", a);
    for (int b = 0; b < n; b++) {
      if (a == b) {
        printf("%8s", "-");
        continue;
      }
      ts_route r;
      ts_route_between(pf, a, b, &r);
      char cell[16];
      snprintf(cell, sizeof cell, "%d/%.0f", r.n_links, r.bw_Bps / 1e9);
      printf("%8s", cell);
    }
    printf("\n");
  }
  for (int i = 0; i < pf->n_nics; i++) {
    const ts_nic *nic = &pf->nics[i];
    printf("NIC %d on GPU %d: %.1f GB/s per direction (latency %.2f us), PCIe %.1f GB/s; used "
           "by GPUs",
           i, nic->gpu, nic->bw_Bps / 1e9, nic->lat_s * 1e6, nic->pcie_Bps / 1e9);
    for (int g = 0; g < n; g++)
      if (pf->gpu_nic[g] == i)
        printf(" %d", g);
    printf("\n");
  }
}

static double injection_Bps(const ts_platform *pf) {
  double nic_Bps = 0;
  for (int i = 0; i < pf->n_nics; i++)
    nic_Bps += pf->nics[i].bw_Bps;
  printf("  injection    : %ld nodes x %.1f GB/s = %.1f TB/s per direction\n", pf->n_nodes,
         nic_Bps / 1e9, (double)pf->n_nodes * nic_Bps / 1e12);
  return nic_Bps;
}

/* A fat tree as route.h models it: leaves, their uplinks as one aggregate, and pods of a
 * 3-level tree under a non-blocking core. */
static void show_fat_tree(const ts_platform *pf) {
  const ts_fat_tree *ft = &pf->ft;
  long unit = ts_platform_unit_nodes(pf);
  long units = (pf->n_nodes + unit - 1) / unit;
  long leaves = ft->is_rail_optimized ? units * pf->n_nics : units;
  printf("\nnetwork: %d-level fat tree of %ld-port switches, %s; %ld leaves (%ld ports down, "
         "%ld up: oversubscription %g)\n",
         ft->levels, ft->radix,
         ft->is_rail_optimized ? "rail-optimised (NIC k of a unit's nodes on its leaf k)"
                               : "all NICs of a node on one leaf",
         leaves, ft->down_ports, ft->up_ports, ft->oversubscription);
  printf("  units        : %ld of %ld nodes\n", units, unit);
  printf("  cables       : %.1f GB/s, %.2f us; a leaf's uplinks carry %.1f GB/s each way\n",
         ft->link.bw_Bps / 1e9, ft->link.lat_s * 1e6, (double)ft->up_ports * ft->link.bw_Bps / 1e9);
  double nic_Bps = injection_Bps(pf);
  /* Half the nodes send to the other half; each leaf's uplinks bound what leaves it. */
  double per_node_up = fmin(nic_Bps, nic_Bps / ft->oversubscription);
  double bisection = (double)(pf->n_nodes / 2) * per_node_up;
  printf("  bisection    : %.1f TB/s per direction (half the nodes, through the leaves' "
         "uplinks)\n",
         bisection / 1e12);
  int diameter = leaves <= 1 ? 0 : ft->levels == 2 || leaves <= ft->leaves_per_pod ? 2 : 4;
  printf("  diameter     : %d switch-to-switch hops\n", diameter);
}

static void show_network(const ts_platform *pf) {
  if (pf->n_nodes == 1) {
    printf("\nnetwork: none (one node)\n");
    return;
  }
  if (pf->topology == TS_TOPO_FAT_TREE) {
    show_fat_tree(pf);
    return;
  }
  const ts_dragonfly *d = &pf->net;
  long slots = d->n_groups * d->switches_per_group * d->nodes_per_switch;
  double local_cables =
      (double)d->n_groups * (double)d->switches_per_group * (double)(d->switches_per_group - 1) / 2;
  double global_cables =
      (double)d->n_groups * (double)(d->n_groups - 1) / 2 * (double)d->global_links_per_pair;
  printf("\nnetwork: dragonfly, %ld groups x %ld switches x %ld nodes per switch (%ld node "
         "slots, %ld nodes)\n",
         d->n_groups, d->switches_per_group, d->nodes_per_switch, slots, pf->n_nodes);
  printf("  local cables : %.0f (all-to-all in each group), %.1f GB/s, %.2f us\n", local_cables,
         d->local.bw_Bps / 1e9, d->local.lat_s * 1e6);
  printf("  global cables: %.0f (%ld per group pair), %.1f GB/s, %.2f us\n", global_cables,
         d->global_links_per_pair, d->global.bw_Bps / 1e9, d->global.lat_s * 1e6);
  printf("  routing      : %s", ts_routing_names[d->routing]);
  if (d->routing == TS_ROUTING_ADAPTIVE)
    printf(" (each switch's share of its group fabric: %.1f GB/s each way)",
           ts_route_fabric_Bps(d) / 1e9);
  printf("\n");
  double nic_Bps = injection_Bps(pf);
  /* Bisection: halve the groups; every global cable between the halves crosses. With one
   * group, halve its switches instead. */
  double bisection;
  if (d->n_groups > 1)
    bisection = (double)(d->n_groups / 2) * (double)(d->n_groups - d->n_groups / 2) *
                (double)d->global_links_per_pair * d->global.bw_Bps;
  else
    bisection = (double)(d->switches_per_group / 2) *
                (double)(d->switches_per_group - d->switches_per_group / 2) * d->local.bw_Bps;
  printf("  bisection    : %.1f TB/s per direction (%s)\n", bisection / 1e12,
         d->n_groups > 1 ? "global cables between two halves of the groups"
                         : "local cables between two halves of the switches");
  if (d->n_groups > 1) { /* what a group can inject against what its global cables carry */
    double per_group_inject = (double)(d->switches_per_group * d->nodes_per_switch) * nic_Bps;
    double per_group_global =
        (double)(d->n_groups - 1) * (double)d->global_links_per_pair * d->global.bw_Bps;
    printf("  global taper : %.2f (a full group injects %.1f TB/s into %.1f TB/s of global "
           "cables)\n",
           per_group_inject / per_group_global, per_group_inject / 1e12, per_group_global / 1e12);
    /* What one group can send to the others, by pattern and routing (sim/network/route.h):
     * uniform traffic fills all its cables either way; all of it to one other group gets the
     * direct cables (minimal) or the pair link of adaptive routing. */
    double direct = (double)d->global_links_per_pair * d->global.bw_Bps;
    printf("  group egress : uniform traffic %.2f TB/s (minimal and adaptive); to one other "
           "group %.2f TB/s minimal, %.2f TB/s adaptive\n",
           per_group_global / 1e12, direct / 1e12, ts_route_pair_Bps(d) / 1e12);
  }
  int diameter =
      d->n_groups > 1 ? (d->switches_per_group > 1 ? 3 : 1) : (d->switches_per_group > 1 ? 1 : 0);
  printf("  diameter     : %d switch-to-switch hops (minimal routes)\n", diameter);
}

static void show_collectives(const ts_platform *pf) {
  const ts_ccl_config *c = &pf->ccl;
  if (c->library == TS_CCL_IDEAL) {
    printf("\ncollectives: ideal (link rate, a route latency per step)\n");
    return;
  }
  printf("\ncollectives: %s", ts_ccl_library_names[c->library]);
  if (c->library == TS_CCL_NCCL)
    printf(" (NCCL 2.30.7's tuning model, %s constants, %d channels)", ts_ccl_arch_names[c->arch],
           c->channels);
  else
    printf(" (RCCL 2.21.5's tuning model %d)", c->tuning_model);
  printf(", %s host\n", ts_ccl_cpu_names[c->cpu]);
  printf("  node links driven at %.1f%% of their rate (as listed above); compute beside a "
         "collective %.0f%% slower\n",
         100 * c->node_link_efficiency, 100 * c->overlap_slowdown);
  printf("  host time per collective call %.1f us; FSDP per wrapped unit %.2f ms\n",
         pf->gpu.collective_launch_s * 1e6, pf->gpu.fsdp_unit_s * 1e3);
}

static void show(const ts_platform *pf) {
  const ts_gpu *g = &pf->gpu;
  printf("platform %s (%s)\n", pf->name, pf->source_name);
  printf("machine: %ld nodes x %d GPUs = %ld GPUs of %s\n", pf->n_nodes, pf->gpus_per_node,
         ts_platform_n_gpus(pf), g->model);
  printf("GPU: peak");
  for (int p = 0; p < TS_PREC_COUNT; p++)
    if (g->peak_flops_per_s[p] > 0)
      printf(" %s %.1f", ts_precision_names[p], g->peak_flops_per_s[p] / 1e12);
  printf(" TFLOPS; HBM %.1f GiB at %.0f GB/s", g->hbm_bytes / 1073741824.0, g->hbm_Bps / 1e9);
  if (g->runtime_bytes > 0)
    printf(" (%.2f GiB held by the runtime)", g->runtime_bytes / 1073741824.0);
  if (g->power_w > 0)
    printf("; %.0f W", g->power_w);
  printf("\n");
  printf("     GEMM ceiling %.1f%% of peak, tiles %ld x %ld on %ld compute units; kernel launch "
         "%.1f us\n",
         100 * g->gemm_ceiling, g->gemm_tile_m, g->gemm_tile_n, g->n_compute_units,
         g->kernel_launch_s * 1e6);
  show_node(pf);
  show_network(pf);
  show_collectives(pf);
}

int ts_platform_main(int argc, char **argv) {
  ts_err err = {0};
  ts_args cli = {&ts_platform_command, argc, argv, 0, NULL, false};
  const ts_flag *flag = NULL;
  const char *value = NULL, *action = NULL, *file = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &err)) != TS_ARGS_END;) {
    if (item < 0) {
      ts_args_report(&err, NULL);
      return TS_ARGS_EXIT_INPUT;
    }
    if (item == TS_ARGS_HELP) { /* --help is the only option */
      ts_args_usage(stdout, &ts_platform_command);
      return 0;
    }
    if (action == NULL) {
      action = value;
    } else if (file == NULL) {
      file = value;
    } else {
      fprintf(stderr, "trainsim: error: platform takes one FILE, found a second one: '%s'\n",
              value);
      return TS_ARGS_EXIT_INPUT;
    }
  }
  if (action == NULL || (strcmp(action, "check") != 0 && strcmp(action, "show") != 0)) {
    fprintf(stderr, "trainsim: error: platform: expected 'check' or 'show', found '%s'\n",
            action ? action : "nothing");
    return TS_ARGS_EXIT_INPUT;
  }
  static ts_platform pf;
  if (ts_args_load_platform(file, &pf, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  if (strcmp(action, "show") == 0)
    show(&pf);
  else if (pf.n_nodes == 1)
    printf("%s: ok: platform '%s', one node of %d GPUs\n", pf.source_name, pf.name,
           pf.gpus_per_node);
  else if (pf.topology == TS_TOPO_DRAGONFLY)
    printf("%s: ok: platform '%s', %ld nodes x %d GPUs = %ld GPUs, dragonfly %ld x %ld x %ld\n",
           pf.source_name, pf.name, pf.n_nodes, pf.gpus_per_node, ts_platform_n_gpus(&pf),
           pf.net.n_groups, pf.net.switches_per_group, pf.net.nodes_per_switch);
  else
    printf("%s: ok: platform '%s', %ld nodes x %d GPUs = %ld GPUs, %d-level fat tree\n",
           pf.source_name, pf.name, pf.n_nodes, pf.gpus_per_node, ts_platform_n_gpus(&pf),
           pf.ft.levels);
  return 0;
}
