/* metrics: see metrics.h. */
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#include "../workloads/cost.h"
#include "../workloads/layout.h"
#include "../workloads/step_requests.h"

static void replay_allocator(const ts_workload *wl, ts_metrics *out) {
  ts_caching_allocator_stats st;
  ts_step_requests_fit(wl, (uint64_t)out->usable_bytes, &st);
  out->is_allocator_replayed = true;
  out->is_fragmentation_risk = false;
  out->allocator_peak_reserved_bytes = (double)st.peak_reserved_bytes;
  if (st.is_out_of_memory) {
    out->is_memory_ok = false;
    out->is_allocator_out_of_memory = true;
    out->allocator_failed_request_bytes = (double)st.failed_request_bytes;
    out->allocator_reserved_bytes = (double)st.failed_reserved_bytes;
    out->allocator_allocated_bytes = (double)st.failed_allocated_bytes;
  }
}

void ts_metrics_memory(const ts_workload *wl, const ts_gpu *gpu, ts_metrics *out) {
  memset(out, 0, sizeof *out);
  out->n_stages = wl->pp;
  out->hbm_bytes = gpu->hbm_bytes;
  ts_ccl_memory_of(wl, gpu, &out->ccl);
  out->usable_bytes = ts_usable_bytes_beside(gpu, &out->ccl);
  out->stage_memory = calloc((size_t)wl->pp, sizeof *out->stage_memory);
  TS_ASSERT(out->stage_memory != NULL);
  for (long s = 0; s < wl->pp; s++) {
    ts_memory_stage(wl, s, &out->stage_memory[s]);
    if (out->stage_memory[s].total_bytes > out->stage_memory[out->peak_memory_stage].total_bytes)
      out->peak_memory_stage = s;
  }
  out->is_memory_ok = out->stage_memory[out->peak_memory_stage].total_bytes <= out->usable_bytes;
  for (long s = 0; s < wl->pp; s++)
    out->is_fragmentation_risk =
        out->is_fragmentation_risk ||
        ts_memory_fragmentation_risk(wl, &out->stage_memory[s], out->usable_bytes);
  if (out->is_memory_ok && ts_step_requests_decide(wl))
    replay_allocator(wl, out);
}

void ts_metrics_compute(const ts_workload *wl, const ts_gpu *gpu, const ts_sim_result *sim,
                        ts_metrics *out) {
  ts_metrics_memory(wl, gpu, out);
  double peak_flops_per_s = ts_cost_peak_flops(wl, gpu), gpu_power_w = gpu->power_w;
  double n = (double)wl->n_gpus, t = sim->iteration_s;
  out->iteration_s = t;
  out->peak_flops_per_s = peak_flops_per_s;
  out->tokens_per_s = (double)wl->global_batch * (double)wl->model.seq / t;
  out->model_flops = ts_cost_model_flops(wl);
  out->megatron_flops = ts_cost_megatron_flops(wl);
  out->hardware_flops = 0;
  for (long r = 0; r < sim->n_ranks; r++)
    out->hardware_flops += sim->ranks[r].flops;
  out->model_tflops_per_gpu = out->model_flops / t / n / 1e12;
  out->hardware_tflops_per_gpu = out->hardware_flops / t / n / 1e12;
  out->megatron_tflops_per_gpu = out->megatron_flops / t / n / 1e12;
  out->mfu = out->model_tflops_per_gpu * 1e12 / peak_flops_per_s;
  out->hfu = out->hardware_tflops_per_gpu * 1e12 / peak_flops_per_s;
  out->megatron_fraction_of_peak = out->megatron_tflops_per_gpu * 1e12 / peak_flops_per_s;
  out->mfu_causal =
      (out->model_flops - ts_cost_attention_core_flops(wl) / 2) / t / n / peak_flops_per_s;
  if (wl->train_tokens > 0) {
    out->train_s = wl->train_tokens / out->tokens_per_s;
    out->train_gpu_hours = out->train_s / 3600.0 * n;
  }
  out->gpu_power_w = gpu_power_w;
  out->iteration_energy_j = n * gpu_power_w * t;
  out->train_energy_j = n * gpu_power_w * out->train_s;

  out->stage_breakdown_s = calloc((size_t)(wl->pp * TS_CAT_COUNT), sizeof(double));
  TS_ASSERT(out->stage_breakdown_s != NULL);
  double per_stage = n / (double)wl->pp;
  for (long r = 0; r < sim->n_ranks; r++) {
    long s = ts_layout_coords(wl, r).pp;
    for (int c = 0; c < TS_CAT_COUNT; c++) {
      out->breakdown_s[c] += sim->ranks[r].time_s[c] / n;
      out->stage_breakdown_s[s * TS_CAT_COUNT + c] += sim->ranks[r].time_s[c] / per_stage;
    }
  }
}

void ts_metrics_fini(ts_metrics *m) {
  free(m->stage_breakdown_s);
  free(m->stage_memory);
  memset(m, 0, sizeof *m);
}
