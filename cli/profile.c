/* profile: see profile.h. */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/cost.h"
#include "args.h"
#include "run.h"

static const ts_flag_group groups[] = {{"inputs", ts_run_input_flags, 0},
                                       {"layout (each overrides the workload file)",
                                        ts_args_override_flags, offsetof(ts_run_args, ov)},
                                       {NULL, NULL, 0}};

const ts_command ts_profile_command = {
    .name = "profile",
    .synopsis = "WORKLOAD [options]",
    .summary = "one layer's kernels: shape, time, what priced them, share",
    .description =
        "Where one layer's compute time comes from: every kernel of one transformer layer for one\n"
        "microbatch (forward and backward), with its shape, its predicted GPU time, what priced "
        "it\n"
        "(table: a measured point of the platform's kernel table; interpolated: between measured\n"
        "points; model: the roofline, where the table has nothing) and its share of the layer; "
        "then\n"
        "whether the host's CPU time (eager dispatch, measured with the table) or the GPU bounds\n"
        "each pass. No simulation: it takes a moment. Its options are those of 'trainsim run' "
        "that\n"
        "shape the layer.\n",
    .groups = groups,
    .main = ts_profile_main};

/* Backward kernels: gradients; a row priced from the other pass's kernel (the backward's
 * gradient sums from the add's table) belongs to the other pass. */
static bool is_backward(const ts_kernel_row *r) {
  bool named = strstr(r->kernel, "grad") != NULL || strstr(r->kernel, "_bwd") != NULL;
  return named != r->is_other_pass;
}

static void print_shape(const ts_kernel_row *r, char *buf, size_t size) {
  int n = 0;
  buf[0] = '\0';
  for (int i = 0; i < r->n_shape && n >= 0 && (size_t)n < size; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%.0f", i > 0 ? " x " : "", r->shape[i]);
}

int ts_profile_main(int argc, char **argv) {
  static ts_platform pf;
  ts_workload wl;
  int rc = ts_run_load_layout(&ts_profile_command, argc, argv, &pf, &wl);
  if (rc != 0)
    return rc < 0 ? 0 : rc;
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &pf.gpu, &log);
  double pass_s[2] = {0};
  int pass_kernels[2] = {0};
  for (int i = 0; i < log.n; i++) {
    int b = is_backward(&log.rows[i]);
    pass_s[b] += log.rows[i].count * log.rows[i].time_s;
    pass_kernels[b] += log.rows[i].count;
  }
  double total = pass_s[0] + pass_s[1];
  const ts_kernel_table *kt = ts_gpu_kernels_for(&pf.gpu, wl.precision);
  printf("trainsim profile: %s on %s, one %slayer of TP %ld, micro-batch %ld x sequence %ld\n",
         wl.name, pf.name, wl.model.n_experts > 0 ? "mixture-of-experts " : "", wl.tp,
         wl.micro_batch, wl.model.seq);
  if (kt != NULL)
    printf("kernel table: %s (%s)\n\n", ts_kernels_path(kt), ts_kernels_device(kt));
  else
    printf("kernel table: %s\n\n",
           pf.gpu.kernels != NULL
               ? "none for this precision (tables price bf16, and fp16 at bf16's peak)"
               : "none (every kernel priced by the roofline)");
  printf("  %-4s %-12s %-28s %-22s %5s %11s %-12s %7s\n", "pass", "piece", "kernel", "shape",
         "count", "time_us", "source", "share");
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < log.n; i++) {
      const ts_kernel_row *r = &log.rows[i];
      if (is_backward(r) != pass)
        continue;
      char shape[64];
      print_shape(r, shape, sizeof shape);
      printf("  %-4s %-12s %-28s %-22s %5d %11.2f %-12s %6.2f%%\n", pass ? "bwd" : "fwd", r->piece,
             r->kernel, shape, r->count, r->time_s * 1e6, ts_kernel_source_names[r->source],
             100 * r->count * r->time_s / total);
    }
  printf("\nGPU time of the layer: forward %.1f us (%d kernels), backward %.1f us (%d kernels)\n",
         pass_s[0] * 1e6, pass_kernels[0], pass_s[1] * 1e6, pass_kernels[1]);
  ts_fsdp_copies fsdp = ts_cost_fsdp_copies(&wl, &pf.gpu);
  double unit = ts_cost_layer_params(&wl);
  if (wl.fsdp_version != 1 && fsdp.after_gather_s > 0)
    printf("FSDP2 (not listed, on the compute stream): the layer's gathered weights copied out of "
           "the all-gather's output, %.1f us a gather; its gradients cast to fp32 into the "
           "reduce-scatter's input, %.1f us a reduction\n",
           fsdp.after_gather_s * unit * 1e6, fsdp.before_reduce_s * unit * 1e6);
  else if (fsdp.before_reduce_s > 0)
    printf("FSDP1 (not listed): the layer's flat gradient built, cast to fp32 and pre-divided on "
           "its post-backward stream, %.1f us a reduction of it showing on the compute stream\n",
           fsdp.before_reduce_s * unit * 1e6);
  const ts_software *sw = &pf.gpu.software;
  if (sw->cpu_layer_forward_s > 0) {
    double cpu_f = ts_cost_layer_host_s(sw, pass_kernels[0], false);
    double cpu_b = ts_cost_layer_host_s(sw, pass_kernels[1], true);
    printf("host (%s): forward %.1f us, backward %.1f us of CPU time: the %s bounds the "
           "forward, the %s the backward\n",
           ts_kernels_framework(pf.gpu.kernels), cpu_f * 1e6, cpu_b * 1e6,
           cpu_f > pass_s[0] ? "CPU" : "GPU", cpu_b > pass_s[1] ? "CPU" : "GPU");
  } else {
    printf("host: no CPU costs given (the platform has no kernel table with software figures)\n");
  }
  double x = 0, stretch[TS_POWER_CLASS_COUNT];
  if (ts_cost_power_limit(&wl, &pf.gpu, &x, stretch))
    printf(
        "power limit: the GPU's work (a microbatch's layers with its share of the edges, the "
        "optimizer and the host's gaps) runs at %.3f of the boost clock (%s): the times above "
        "are the boost clock's x %.3f for GEMMs (whose table points, timed partly at the limit, "
        "are first brought to it), %.3f for cuDNN attention, %.3f flash attention, %.3f the rest "
        "(docs/model.md)\n",
        1 / (1 + x), x > 0 ? "held down by the limit" : "within the limit", stretch[TS_POWER_GEMM],
        stretch[TS_POWER_SDPA], stretch[TS_POWER_FLASH], stretch[TS_POWER_OTHER]);
  if (ts_cost_vocab_misaligned(&wl, &pf.gpu))
    printf("output layer (not listed): the vocabulary, %ld unpadded (framework %s), leaves the "
           "logits' rows off 16 bytes: its GEMMs run cuBLAS's fallback, 4.4-7.5x slower "
           "(docs/model.md)\n",
           wl.model.vocab, ts_framework_names[wl.framework]);
  free(log.rows);
  return 0;
}
