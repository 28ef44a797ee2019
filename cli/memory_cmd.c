/* memory_cmd: see memory_cmd.h. */
#include "memory_cmd.h"

#include <stdio.h>

#include "../analysis/metrics.h"
#include "../analysis/report.h"
#include "../workloads/ccl_memory.h"
#include "../workloads/cost.h"
#include "../workloads/memory.h"
#include "args.h"
#include "run.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const ts_flag_group groups[] = {{"inputs", ts_run_input_flags, 0},
                                       {"layout (each overrides the workload file)",
                                        ts_args_override_flags, offsetof(ts_run_args, ov)},
                                       {NULL, NULL, 0}};

const ts_command ts_memory_command = {
    .name = "memory",
    .synopsis = "WORKLOAD [options]",
    .summary = "memory per GPU by stage, and the fewest GPUs that fit",
    .description =
        "Memory per GPU of each pipeline stage (weights, gradients, optimizer states, "
        "activations),\n"
        "the model states in all, and the layout with the fewest GPUs that fits (TP inside a\n"
        "node, this batch, recomputation and ZeRO stage). No simulation: it takes a moment.\n"
        "Its options are those of 'trainsim run' that shape memory.\n",
    .groups = groups,
    .main = ts_memory_cmd_main};

/* Bytes of model state per parameter and in all, for the whole model (no replicas). */
static void report_model_states(const ts_workload *wl, const ts_metrics *mem) {
  double params = ts_cost_model_params(wl), held = 0;
  for (long s = 0; s < wl->pp; s++)
    held +=
        (mem->stage_memory[s].bytes[TS_MEM_WEIGHTS] + mem->stage_memory[s].bytes[TS_MEM_GRADIENTS] +
         mem->stage_memory[s].bytes[TS_MEM_OPTIMIZER]) *
        (double)(wl->tp * ts_workload_dp_cp(wl)); /* every rank of the stage */
  ts_state_bytes per = ts_memory_state_bytes(wl);
  double per_param = per.weight + per.gradient + per.sharded;
  printf("\nmodel states for %.4g parameters:\n", params);
  bool master = per.is_deepspeed || (wl->precision != TS_PREC_FP32 && !wl->is_autocast);
  double master_bytes =
      per.is_deepspeed || (wl->master_weight_bytes <= 0 && !wl->is_master_weights_none)
          ? 4.0
          : wl->master_weight_bytes;
  double moments = per.is_deepspeed ? 8.0 : master ? per.sharded - master_bytes : per.sharded;
  char master_text[48] = "";
  if (master && master_bytes > 0)
    snprintf(master_text, sizeof master_text, "%.0f %s master weight + ", master_bytes,
             master_bytes == 4.0 ? "fp32" : "16-bit");
  printf("  one copy: %.0f B/parameter (%.0f weight + %.0f %s gradient + %s%.0f Adam moments%s) "
         "= %.3g TB\n",
         per_param, per.weight, per.gradient, per.gradient < 4.0 ? "low-precision" : "fp32",
         master_text, moments, per.is_deepspeed ? " + 4 fp32 gradient partition" : "",
         per_param * params / 1e12);
  printf("  held by this layout's %ld GPUs (replicas%s): %.3g TB\n", wl->n_gpus,
         wl->zero_stage >= 3   ? ", weights, gradients and optimizer sharded by ZeRO-3"
         : wl->zero_stage >= 2 ? ", gradients and optimizer sharded by ZeRO-2"
         : wl->zero_stage >= 1 ? ", optimizer sharded by ZeRO-1"
                               : "",
         held / 1e12);
}

int ts_memory_cmd_main(int argc, char **argv) {
  static ts_platform pf;
  ts_workload wl;
  int rc = ts_run_load_layout(&ts_memory_command, argc, argv, &pf, &wl);
  if (rc != 0)
    return rc < 0 ? 0 : rc;
  ts_metrics mem;
  ts_metrics_memory(&wl, &pf.gpu, &mem);
  char schedule[64], layout[128];
  ts_workload_schedule_label(&wl, schedule, sizeof schedule);
  ts_workload_layout_label(&wl, layout, sizeof layout);
  printf("trainsim memory: %s, %s = %ld GPUs, %s, recompute %s, ZeRO-%d%s\n\n", wl.name, layout,
         wl.n_gpus, schedule, ts_recompute_names[wl.recompute], wl.zero_stage,
         wl.sequence_parallel ? ", sequence parallel" : "");
  ts_report_memory(stdout, &wl, &mem);
  const ts_memory *top = &mem.stage_memory[mem.peak_memory_stage];
  printf("peak: %.2f GiB per GPU on stage %ld: %s\n", top->total_bytes / GIB, mem.peak_memory_stage,
         mem.is_memory_ok ? "fits" : "DOES NOT FIT");
  if (mem.is_allocator_out_of_memory)
    printf("  the bytes fit, but PyTorch's default caching allocator, replayed request by request "
           "over three\n  steps, finds no free block of %.2f GiB: it holds %.2f GiB, %.2f GiB of "
           "it in free pieces of\n  segments still in use (fragmentation); expandable segments "
           "(stack.allocator: expandable)\n  reach the peak\n",
           mem.allocator_failed_request_bytes / GIB, mem.allocator_reserved_bytes / GIB,
           (mem.allocator_reserved_bytes - mem.allocator_allocated_bytes) / GIB);
  else if (mem.is_allocator_replayed)
    printf("  and PyTorch's default caching allocator, replayed request by request over three "
           "steps,\n  finds every block (it holds at most %.2f GiB)\n",
           mem.allocator_peak_reserved_bytes / GIB);
  for (long s = 0; s < wl.pp && !mem.is_allocator_replayed; s++) /* the first stage at risk */
    if (ts_memory_fragmentation_risk(&wl, &mem.stage_memory[s], mem.usable_bytes)) {
      printf("  but stage %ld lies within its largest allocation (%.2f GiB) of the limit: "
             "PyTorch's default\n  caching allocator can run out from fragmentation there; "
             "expandable segments (stack.allocator:\n  expandable, "
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) reach the peak "
             "(docs/validation/h200.md)\n",
             s, mem.stage_memory[s].largest_alloc_bytes / GIB);
      break;
    }
  report_model_states(&wl, &mem);
  ts_workload smallest;
  long max_tp = pf.gpus_per_node;
  if (ts_memory_smallest_layout(&wl, max_tp, ts_platform_n_gpus(&pf), &pf.gpu, &smallest) == 0) {
    long stage = 0;
    double peak = ts_memory_peak(&smallest, &stage), usable = ts_usable_bytes(&pf.gpu, &smallest);
    char label[128];
    ts_workload_layout_label(&smallest, label, sizeof label);
    printf("\nfewest GPUs that fit (%.1f GiB each): %s = %ld GPUs, peak %.2f GiB on stage %ld\n",
           usable / GIB, label, smallest.n_gpus, peak / GIB, stage);
  } else {
    printf("\nno layout with TP up to %ld fits in %.1f GiB per GPU (less NCCL's buffers) on "
           "platform '%s'\n",
           max_tp, ts_gpu_usable_bytes(&pf.gpu) / GIB, pf.name);
  }
  ts_metrics_fini(&mem);
  return 0;
}
