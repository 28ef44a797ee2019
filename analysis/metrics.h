/* metrics: the numbers a run reports, defined once (DESIGN.md, "Metrics").
 *
 *   tokens/s        = global batch x sequence length / iteration time
 *   model TFLOPS    = model FLOPs per iteration (cost.h) / iteration time / GPUs
 *   hardware TFLOPS = matrix FLOPs the simulation executed (recomputation, padded vocabulary
 *                     and all) / iteration time / GPUs
 *   MFU, HFU        = model and hardware TFLOPS / the GPU's peak for the training precision
 *   Megatron TFLOPS = Megatron-DeepSpeed's formula (the Frontier paper's "% of peak")
 *   time to train   = training.train_tokens / tokens/s, when the workload gives it; GPU-hours
 *                     = that x GPUs
 *   GPU energy      = GPUs x the platform's GPU power x time (GPUs only, at that power)
 *   goodput         = useful training / wall time once parts fail (workloads/reliability.h),
 *                     where the platform has a reliability section
 * Breakdown: the mean over ranks of each category; per stage, the mean over its ranks.
 */
#ifndef TS_METRICS_H
#define TS_METRICS_H

#include <stdbool.h>

#include "../workloads/ccl_memory.h"
#include "../workloads/memory.h"
#include "../workloads/reliability.h"
#include "../workloads/result.h"
#include "../workloads/workload.h"

typedef struct ts_metrics {
  double iteration_s;
  double tokens_per_s;
  double peak_flops_per_s; /* per GPU, training precision */
  double model_flops, hardware_flops, megatron_flops; /* per iteration, all GPUs */
  double model_tflops_per_gpu, hardware_tflops_per_gpu, megatron_tflops_per_gpu;
  double mfu, hfu, megatron_fraction_of_peak;
  /* MFU with the attention core's causal half left out, as Megatron-Core counts model FLOPs */
  double mfu_causal;
  double train_s, train_gpu_hours; /* 0 when the workload gives no train_tokens */
  double gpu_power_w; /* per GPU; 0 when the platform gives none */
  double iteration_energy_j, train_energy_j;
  double breakdown_s[TS_CAT_COUNT]; /* mean over ranks */
  long n_stages;
  double *stage_breakdown_s; /* [stage * TS_CAT_COUNT + category] */
  ts_memory *stage_memory; /* [stage] */
  long peak_memory_stage;
  double hbm_bytes; /* the GPU's capacity */
  double usable_bytes; /* of which the framework can allocate: the verdict's limit */
  ts_ccl_memory ccl; /* NCCL's buffers (ccl_memory.h), outside usable_bytes */
  bool is_memory_ok;
  /* some stage fits, but within its largest allocation of the limit under PyTorch's default
   * caching allocator (ts_memory_fragmentation_risk) */
  bool is_fragmentation_risk;
  /* Where the bytes fit and the run is one trainsim can spell out request by request under the
   * default allocator (ts_step_requests_decide): PyTorch's default caching allocator replayed on
   * its first three steps decides instead (is_allocator_replayed; any risk is then cleared). Out of
   * memory there makes the verdict "does not fit": the request that found no block, and what the
   * allocator held and handed out then (held less handed out: free pieces of segments in use). */
  bool is_allocator_replayed, is_allocator_out_of_memory;
  double allocator_failed_request_bytes, allocator_reserved_bytes, allocator_allocated_bytes;
  double allocator_peak_reserved_bytes; /* over the replay, the three steps run whole */
  ts_reliability reliability; /* filled by the caller (ts_reliability_compute) */
} ts_metrics;

/* Computes metrics of a simulated iteration on GPUs of gpu's kind (its peak at the workload's
 * precision, its power, its memory). Free with ts_metrics_fini. */
void ts_metrics_compute(const ts_workload *wl, const ts_gpu *gpu, const ts_sim_result *sim,
                        ts_metrics *out);
/* Memory only (no simulation): stage footprints, peak stage and the verdict. */
void ts_metrics_memory(const ts_workload *wl, const ts_gpu *gpu, ts_metrics *out);
void ts_metrics_fini(ts_metrics *m);

#endif
