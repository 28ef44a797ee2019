/* libFuzzer harness: the workload loader on arbitrary bytes, then layout checks, costs and
 * memory of whatever resolves (on an MI250X-like GPU). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../workloads/cost.h"
#include "../../workloads/memory.h"
#include "../../workloads/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ts_workload wl;
  ts_err err = {0};
  if (ts_workload_parse("fuzz.yaml", (const char *)data, size, &wl, &err) != 0) {
    if (!err.is_set)
      abort();
    return 0;
  }
  ts_overrides none;
  memset(&none, 0, sizeof none);
  if (ts_workload_resolve(&wl, &none, &err) != 0) {
    if (!err.is_set)
      abort();
    return 0;
  }
  ts_gpu gpu = {.peak_flops_per_s = {191.5e12, 191.5e12, 47.9e12, 47.9e12},
                .hbm_bytes = 64.0 * 1073741824.0,
                .hbm_Bps = 1.6e12,
                .gemm_ceiling = 0.767,
                .gemm_tile_m = 256,
                .gemm_tile_n = 128,
                .n_compute_units = 110,
                .kernel_launch_s = 2e-6};
  ts_layer_cost layer;
  ts_edge_cost edge;
  ts_cost_layer(&wl, &gpu, &layer);
  ts_cost_edges(&wl, &gpu, &edge);
  ts_memory mem;
  ts_memory_stage(&wl, 0, &mem);
  ts_memory_stage(&wl, wl.pp - 1, &mem);
  if (!(layer.attn.time_s >= 0) || !(mem.total_bytes >= 0))
    abort();
  return 0;
}
