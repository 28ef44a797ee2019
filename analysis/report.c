/* report: summary and result.json; see report.h. */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../workloads/alloc.h"
#include "../workloads/doc.h"
#include "../workloads/schedule.h"
#include "../workloads/stack.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

void ts_report_memory(FILE *out, const ts_workload *wl, const ts_metrics *m) {
  char nccl[96] = "";
  if (m->ccl.bytes > 0) {
    char version[32];
    ts_stack_version_text(m->ccl.version, version, sizeof version);
    snprintf(nccl, sizeof nccl, " after NCCL %s's buffers, %.2f GiB in %d communicators", version,
             m->ccl.bytes / GIB, m->ccl.communicators);
  }
  /* RCCL's (or another library's) buffers: not modelled (workloads/ccl_memory.h) */
  const char *unpriced =
      m->ccl.version == 0 && wl->n_gpus > 1
          ? "; the collective library's buffers not counted: modelled for NCCL only"
          : "";
  if (m->usable_bytes < m->hbm_bytes)
    fprintf(out,
            "memory per GPU by pipeline stage (GiB; HBM %.1f GiB, %.1f of it allocatable%s%s)\n",
            m->hbm_bytes / GIB, m->usable_bytes / GIB, nccl, unpriced);
  else
    fprintf(out, "memory per GPU by pipeline stage (GiB; HBM %.1f GiB%s)\n", m->hbm_bytes / GIB,
            unpriced);
  fprintf(out, "  %-6s %9s %9s %9s %11s %9s %9s %9s\n", "stage", "weights", "grads", "optimizer",
          "activations", "buffers", "total", "in-flight");
  for (long s = 0; s < m->n_stages; s++) {
    const ts_memory *mem = &m->stage_memory[s];
    /* Long pipelines: the first two, the peak and the last stage tell the story. */
    if (m->n_stages > 6 && s > 1 && s != m->peak_memory_stage && s != m->n_stages - 1)
      continue;
    fprintf(out, "  %-6ld %9.2f %9.2f %9.2f %11.2f %9.2f %9.2f %9.4g%s\n", s,
            mem->bytes[TS_MEM_WEIGHTS] / GIB, mem->bytes[TS_MEM_GRADIENTS] / GIB,
            mem->bytes[TS_MEM_OPTIMIZER] / GIB, mem->bytes[TS_MEM_ACTIVATIONS] / GIB,
            mem->bytes[TS_MEM_BUFFERS] / GIB, mem->total_bytes / GIB, mem->microbatches_in_flight,
            mem->total_bytes > m->usable_bytes ? "  DOES NOT FIT"
            : m->is_allocator_out_of_memory    ? "  DOES NOT FIT (fragmentation)"
            : !m->is_allocator_replayed && ts_memory_fragmentation_risk(wl, mem, m->usable_bytes)
                ? "  AT RISK"
                : "");
    double columns = 0;
    for (int c = 0; c < TS_MEM_COUNT; c++)
      columns += mem->bytes[c];
    if (wl->is_autocast && mem->total_bytes < columns * (1 - 1e-9))
      fprintf(out, "         (peaks at the loss, before the backward makes the gradients: "
                   "zero_grad(set_to_none=True) freed them)\n");
    if (mem->step_bytes > mem->bytes[TS_MEM_ACTIVATIONS]) {
      bool foreach = wl->adam_implementation == TS_ADAM_FOREACH;
      bool deepspeed = ts_workload_zero(wl) == 3 && !wl->is_fsdp;
      fprintf(out,
              "         (peaks at its optimizer step, the activations freed: %.2f GiB of %s%s%s)\n",
              mem->step_bytes / GIB, foreach ? "foreach Adam's square-root list" : "",
              foreach && deepspeed ? " and " : "",
              deepspeed ? "DeepSpeed's fp32 gradient sub-group" : "");
    }
  }
  if (m->ccl.bytes > 0) { /* outside the columns: what they can fill is allocatable less it */
    fprintf(out, "  NCCL's buffers on rank %ld (outside PyTorch's allocator), MiB:", m->ccl.rank);
    for (int g = 0; g < TS_CCL_GROUPS; g++)
      if (m->ccl.group_bytes[g] > 0)
        fprintf(out, " %s %.0f", ts_ccl_group_names[g], m->ccl.group_bytes[g] / 1048576.0);
    fputc('\n', out);
  }
}

static void row(ts_report_row *rows, int *n, const char *label, const char *fmt, ...) {
  TS_ASSERT(*n < TS_REPORT_MAX_ROWS);
  snprintf(rows[*n].label, sizeof rows[*n].label, "%s", label);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rows[*n].value, sizeof rows[*n].value, fmt, ap);
  va_end(ap);
  (*n)++;
}

int ts_report_summary_rows(const ts_workload *wl, const ts_metrics *m, ts_report_row *rows) {
  int n = 0;
  row(rows, &n, "iteration time", "%.4f s", m->iteration_s);
  row(rows, &n, "throughput", "%.0f tokens/s", m->tokens_per_s);
  row(rows, &n, "model FLOPs", "%.1f TFLOPS per GPU, MFU %.2f%%", m->model_tflops_per_gpu,
      100 * m->mfu);
  row(rows, &n, "hardware FLOPs (simulated)", "%.1f TFLOPS per GPU, HFU %.2f%%",
      m->hardware_tflops_per_gpu, 100 * m->hfu);
  row(rows, &n, "Megatron-DeepSpeed formula", "%.1f TFLOPS per GPU, %.2f%% of peak",
      m->megatron_tflops_per_gpu, 100 * m->megatron_fraction_of_peak);
  row(rows, &n, "peak per GPU", "%.1f TFLOPS (%s)", m->peak_flops_per_s / 1e12,
      wl->fp8 != TS_FP8_NONE ? "fp8, the linear layers' GEMMs' precision: the MFU's and HFU's, "
                               "never passed"
                             : ts_precision_names[wl->precision]);
  const ts_memory *peak = &m->stage_memory[m->peak_memory_stage];
  row(rows, &n, "peak memory", "%.2f GiB of %.2f GiB%s (stage %ld)%s", peak->total_bytes / GIB,
      m->usable_bytes / GIB, m->usable_bytes < m->hbm_bytes ? " allocatable" : "",
      m->peak_memory_stage,
      m->is_allocator_out_of_memory ? ", DOES NOT FIT: the caching allocator's fragmentation "
                                      "(replayed; stack.allocator)"
      : !m->is_memory_ok            ? ", DOES NOT FIT"
      : m->is_fragmentation_risk    ? ", AT RISK from the caching allocator's fragmentation "
                                      "(stack.allocator)"
                                    : "");
  if (m->train_s > 0)
    row(rows, &n, "time to train", "%.1f days, %.3g GPU-hours for %.3g tokens", m->train_s / 86400,
        m->train_gpu_hours, wl->train_tokens);
  if (m->gpu_power_w > 0) {
    row(rows, &n, "GPU energy per iteration",
        "%.3g kWh (assumed: each GPU draws gpu.power, %.0f W, throughout)",
        m->iteration_energy_j / 3.6e6, m->gpu_power_w);
    if (m->train_s > 0)
      row(rows, &n, "GPU energy to train", "%.3g MWh", m->train_energy_j / 3.6e9);
  }
  const ts_reliability *r = &m->reliability;
  if (r->is_modelled) {
    row(rows, &n, "interruptions",
        "%.3g a day (one every %.3g h): GPUs %.2g, nodes %.2g, NIC links "
        "%.2g, switches %.2g",
        r->interruptions_per_day, r->mtbf_s / 3600, r->interruptions_per_s[TS_PART_GPU] * 86400,
        r->interruptions_per_s[TS_PART_NODE] * 86400, r->interruptions_per_s[TS_PART_LINK] * 86400,
        r->interruptions_per_s[TS_PART_SWITCH] * 86400);
    row(rows, &n, "checkpoint", "%.3g TB every %ld iterations (%.3g min%s), %s %.3g s, read %.3g s",
        r->checkpoint_bytes / 1e12, r->checkpoint_interval_iterations,
        r->checkpoint_interval_s / 60, r->is_interval_given ? "" : ": Daly's optimum",
        r->is_async ? "asynchronous: blocks" : "written in", r->checkpoint_blocking_s,
        r->checkpoint_read_s);
    row(rows, &n, "goodput", "%.2f%% (lost: checkpoints %.2f%%, rework %.2f%%, restarts %.2f%%)",
        100 * r->goodput, 100 * r->lost_checkpoints, 100 * r->lost_rework, 100 * r->lost_restarts);
    if (r->train_s > 0 && isfinite(r->train_s))
      row(rows, &n, "time to train with failures", "%.1f days", r->train_s / 86400);
    else if (r->train_s > 0)
      row(rows, &n, "time to train with failures",
          "never: interruptions come faster than a checkpoint interval and a restart");
  }
  return n;
}

int ts_report_warnings(const ts_workload *wl, const ts_run_info *info,
                       char (*out)[TS_REPORT_WARNING_SIZE], int max) {
  int n = 0;
  long micro = ts_workload_microbatches(wl), p = wl->pp;
  if (p > 1 && micro < p && n < max) {
    double bubble = (double)(p - 1) / (double)(micro * wl->virtual_stages + p - 1);
    snprintf(out[n++], TS_REPORT_WARNING_SIZE,
             "%ld microbatch%s per pipeline for %ld stages: the pipeline never fills, and its "
             "bubble is about %.0f%% of the iteration ((p - 1) / (v m + p - 1)); more microbatches "
             "(a larger global batch or a smaller micro-batch) or fewer stages",
             micro, micro == 1 ? "" : "es", p, 100 * bubble);
  }
  if (info->kernels_path != NULL && info->kernels_provenance != TS_KERNELS_MEASURED && n < max)
    snprintf(out[n++], TS_REPORT_WARNING_SIZE,
             "the %s's kernel times are %s, not measured on it (%s): expect larger errors than "
             "on a measured GPU",
             info->gpu_model,
             info->kernels_provenance == TS_KERNELS_DERIVED
                 ? "derived from another GPU's measured table by peak and "
                   "bandwidth ratios"
                 : "modelled from its architecture",
             info->kernels_path);
  if (info->attention_dropout_unpriced && n < max)
    snprintf(out[n++], TS_REPORT_WARNING_SIZE,
             "attention dropout %g inside fused attention is not priced on the %s: the platform "
             "gives no gpu.attention_dropout (on an H100 it ran cuDNN's attention a third longer "
             "at 0.1: docs/validation/h100.md); expect the attention to run longer",
             wl->model.attention_dropout, info->gpu_model);
  return n;
}

/* The DeepSpeed release whose ZeRO-3 a run plays (ZeRO-3 sharded over more than one rank and
 * not FSDP: schedule.c plays DeepSpeed's fetch, stack.h), as text; false when it plays none. */
static bool zero3_release(const ts_workload *wl, char *buf, int n) {
  if (wl->zero_stage != 3 || wl->is_fsdp || wl->dp * wl->cp <= 1)
    return false;
  if (wl->deepspeed_version > 0)
    ts_stack_version_text(wl->deepspeed_version, buf, n);
  else
    snprintf(buf, (size_t)n, "0.6.0 and later");
  return true;
}

/* Whether that ZeRO-3 all-reduces its gradient buckets flattened (schedule.c: DeepSpeed
 * before 0.6.0 without contiguous gradients). */
static bool zero3_flat_all_reduce(const ts_workload *wl) {
  char release[48];
  return zero3_release(wl, release, sizeof release) && !wl->contiguous_gradients &&
         ts_deepspeed_zero3_path(wl->deepspeed_version) != TS_DEEPSPEED_COALESCED;
}

void ts_report_summary(FILE *out, const ts_workload *wl, const ts_run_info *info,
                       const ts_metrics *m) {
  fprintf(out, "trainsim: %s on %s, %ld x %s\n", wl->name, info->platform_name, wl->n_gpus,
          info->gpu_model);
  char schedule[64], layout[128];
  ts_workload_schedule_label(wl, schedule, sizeof schedule);
  ts_workload_layout_label(wl, layout, sizeof layout);
  char actors[96] = "";
  if (info->shortcut != NULL && info->n_played_ranks < info->n_ranks)
    snprintf(actors, sizeof actors, " (%s: %ld actors for %ld ranks)", info->shortcut,
             info->n_played_ranks, info->n_ranks);
  char periodic[160] = "";
  if (info->played_microbatches > 0)
    snprintf(periodic, sizeof periodic,
             " (periodic play: %ld played, the rest at their steady period, error about %.2g s)",
             info->played_microbatches, info->periodic_error_s);
  else if (info->periodic_declined_error_s > 0)
    snprintf(periodic, sizeof periodic,
             " (every one played: periodic play's steady state did not repeat, its estimate "
             "%.4f s with an error of about %.2g s)",
             info->periodic_declined_iteration_s, info->periodic_declined_error_s);
  fprintf(out,
          "layout: %s, %s, %ld microbatches of %ld per pipeline%s, "
          "recompute %s, ZeRO-%d%s, fidelity %s%s, placement %s\n",
          layout, schedule, ts_workload_microbatches(wl), wl->micro_batch, periodic,
          ts_recompute_names[wl->recompute], wl->zero_stage,
          wl->fsdp_keeps_weights ? " (FSDP keeping its weights through the iteration)" : "",
          info->fidelity, actors, info->placement);
  char fusions[160];
  ts_fusions_describe(wl->fusions, fusions, sizeof fusions);
  char zero3[192] = "", release[48]; /* which DeepSpeed's ZeRO-3 ran: it moves results a lot */
  if (zero3_release(wl, release, sizeof release))
    snprintf(zero3, sizeof zero3, "; ZeRO-3 as DeepSpeed %s%s runs it%s", release,
             wl->deepspeed_version > 0 ? "" : " (stack.deepspeed_version)",
             zero3_flat_all_reduce(wl) ? ", its gradient buckets all-reduced flattened "
                                         "(contiguous_gradients false)"
                                       : "");
  else if (wl->zero_stage == 3 && wl->is_fsdp && wl->dp * wl->cp > 1)
    snprintf(zero3, sizeof zero3, "; ZeRO-3 as FSDP%s runs it%s",
             wl->fsdp_version == 1 ? "1 (FullyShardedDataParallel)" : "2 (fully_shard)",
             wl->fsdp_version > 0 ? "" : " (stack.fsdp_version)");
  char eager[256];
  ts_workload_eager_describe(wl, eager, sizeof eager);
  const char *ring = wl->cp <= 1 ? ""
                     : wl->cp_attention == TS_CP_ATTENTION_PYTORCH
                         ? "; ring attention as PyTorch's context_parallel runs it"
                         : "; ring attention as Transformer Engine runs it";
  const char *amp = !wl->is_autocast ? ""
                    : wl->is_autocast_set
                        ? "; autocast (fp32 weights cast at each forward)"
                        : "; autocast (fp32 weights cast at each forward: plain PyTorch's default, "
                          "training.autocast)";
  fprintf(out, "stack: %s, attention %s%s, fused kernels: %s%s%s; collectives %s%s%s\n",
          ts_framework_names[wl->framework], ts_attention_names[wl->attention],
          wl->is_unpad_input ? " behind unpad_input" : "", fusions, eager, amp,
          info->collectives != NULL ? info->collectives : "ideal", zero3, ring);
  char warnings[4][TS_REPORT_WARNING_SIZE];
  int n_warnings = ts_report_warnings(wl, info, warnings, 4);
  for (int i = 0; i < n_warnings; i++)
    fprintf(out, "warning: %s\n", warnings[i]);
  fputc('\n', out);
  ts_report_row rows[TS_REPORT_MAX_ROWS];
  int n = ts_report_summary_rows(wl, m, rows);
  for (int i = 0; i < n; i++)
    fprintf(out, "  %-30s %s\n", rows[i].label, rows[i].value);
  if (info->slowest_gpu_slowdown > 1)
    fprintf(out, "  %-30s compute x %.4f: the slowest of %ld GPUs (speeds spread %.2f%%)\n",
            "slowest GPU", info->slowest_gpu_slowdown, info->n_ranks, 100 * info->speed_spread);
  if (info->power_clock > 0)
    fprintf(out,
            "  %-30s %.3f of the boost clock: GEMMs x %.3f, cuDNN attention x %.3f, flash "
            "attention x %.3f, the rest x %.3f of their boost-clock times\n",
            "clock under the power limit", info->power_clock, info->power_stretch[TS_POWER_GEMM],
            info->power_stretch[TS_POWER_SDPA], info->power_stretch[TS_POWER_FLASH],
            info->power_stretch[TS_POWER_OTHER]);
  fputc('\n', out);
  fprintf(out, "time breakdown, mean over ranks (s and share of the iteration)\n");
  for (int c = 0; c < TS_CAT_COUNT; c++)
    fprintf(out, "  %-12s %10.4f  %5.1f%%\n", ts_category_names[c], m->breakdown_s[c],
            100 * m->breakdown_s[c] / m->iteration_s);
  fputc('\n', out);
  ts_report_memory(out, wl, m);
}

/* ---- JSON ---- */

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static void json_key(FILE *f, int indent, const char *key, bool *first) {
  fprintf(f, "%s\n%*s", *first ? "" : ",", indent, "");
  *first = false;
  json_string(f, key);
  fputs(": ", f);
}

static void json_num(FILE *f, int indent, const char *key, double v, bool *first) {
  json_key(f, indent, key, first);
  if (isfinite(v))
    fprintf(f, "%.12g", v);
  else
    fputs("null", f); /* JSON has no inf or nan */
}

static void json_long(FILE *f, int indent, const char *key, long v, bool *first) {
  json_key(f, indent, key, first);
  fprintf(f, "%ld", v);
}

static void json_str(FILE *f, int indent, const char *key, const char *v, bool *first) {
  json_key(f, indent, key, first);
  json_string(f, v);
}

static void json_bool(FILE *f, int indent, const char *key, bool v, bool *first) {
  json_key(f, indent, key, first);
  fputs(v ? "true" : "false", f);
}

/* result.json's reliability block (workloads/reliability.h). */
static void reliability(FILE *f, const ts_reliability *r) {
  bool k = true;
  fputc('{', f);
  json_num(f, 4, "interruptions_per_day", r->interruptions_per_day, &k);
  json_num(f, 4, "mtbf_s", r->mtbf_s, &k);
  json_key(f, 4, "parts", &k);
  bool pk = true;
  fputc('{', f);
  for (int p = 0; p < TS_PART_COUNT; p++)
    json_long(f, 6, ts_failing_part_names[p], r->parts[p], &pk);
  fputs("\n    }", f);
  json_key(f, 4, "interruptions_per_day_by_part", &k);
  pk = true;
  fputc('{', f);
  for (int p = 0; p < TS_PART_COUNT; p++)
    json_num(f, 6, ts_failing_part_names[p], r->interruptions_per_s[p] * 86400, &pk);
  fputs("\n    }", f);
  json_num(f, 4, "checkpoint_bytes", r->checkpoint_bytes, &k);
  json_long(f, 4, "checkpoint_writer_nodes", r->writer_nodes, &k);
  json_bool(f, 4, "checkpoint_async", r->is_async, &k);
  json_long(f, 4, "checkpoint_interval_iterations", r->checkpoint_interval_iterations, &k);
  json_bool(f, 4, "checkpoint_interval_given", r->is_interval_given, &k);
  json_num(f, 4, "checkpoint_interval_s", r->checkpoint_interval_s, &k);
  json_num(f, 4, "checkpoint_write_s", r->checkpoint_write_s, &k);
  json_num(f, 4, "checkpoint_blocking_s", r->checkpoint_blocking_s, &k);
  json_num(f, 4, "checkpoint_read_s", r->checkpoint_read_s, &k);
  json_num(f, 4, "restart_s", r->restart_s, &k);
  json_num(f, 4, "goodput", r->goodput, &k);
  json_num(f, 4, "lost_to_checkpoints", r->lost_checkpoints, &k);
  json_num(f, 4, "lost_to_rework", r->lost_rework, &k);
  json_num(f, 4, "lost_to_restarts", r->lost_restarts, &k);
  if (r->train_s > 0)
    json_num(f, 4, "time_to_train_with_failures_s", r->train_s, &k);
  fputs("\n  }", f);
}

static void breakdown(FILE *f, int indent, const double *secs) {
  bool first = true;
  fputc('{', f);
  for (int c = 0; c < TS_CAT_COUNT; c++)
    json_num(f, indent + 2, ts_category_names[c], secs[c], &first);
  fprintf(f, "\n%*s}", indent, "");
}

static void memory(FILE *f, int indent, const ts_memory *mem) {
  bool first = true;
  fputc('{', f);
  for (int c = 0; c < TS_MEM_COUNT; c++)
    json_num(f, indent + 2, ts_mem_category_names[c], mem->bytes[c], &first);
  json_num(f, indent + 2, "optimizer_step_temporaries", mem->step_bytes, &first);
  json_num(f, indent + 2, "total", mem->total_bytes, &first);
  fprintf(f, "\n%*s}", indent, "");
}

static void write_json(FILE *f, const ts_workload *wl, const ts_run_info *info,
                       const ts_metrics *m) {
  bool first = true, k = true;
  fputc('{', f);
  json_long(f, 2, "schema_version", TS_RESULT_SCHEMA_VERSION, &first);
  json_str(f, 2, "platform", info->platform_name, &first);
  json_str(f, 2, "gpu", info->gpu_model, &first);
  json_str(f, 2, "workload", wl->name, &first);
  json_key(f, 2, "model", &first);
  fputc('{', f);
  json_long(f, 4, "num_layers", wl->model.n_layers, &k);
  json_long(f, 4, "hidden_size", wl->model.hidden, &k);
  json_long(f, 4, "num_attention_heads", wl->model.n_heads, &k);
  json_long(f, 4, "num_query_groups", wl->model.n_query_groups, &k);
  json_long(f, 4, "ffn_hidden_size", wl->model.ffn_hidden, &k);
  json_long(f, 4, "seq_length", wl->model.seq, &k);
  json_long(f, 4, "vocab_size", wl->model.vocab, &k);
  json_long(f, 4, "padded_vocab_size", ts_workload_padded_vocab(wl), &k);
  json_bool(f, 4, "swiglu", wl->model.swiglu, &k);
  json_str(f, 4, "normalization", wl->model.rms_norm ? "RMSNorm" : "LayerNorm", &k);
  json_str(f, 4, "position_embedding_type", wl->model.rope ? "rope" : "learned_absolute", &k);
  json_bool(f, 4, "untie_embeddings_and_output_weights", wl->model.untied, &k);
  json_bool(f, 4, "add_bias_linear", wl->model.bias, &k);
  if (wl->model.n_experts > 0) {
    json_long(f, 4, "num_experts", wl->model.n_experts, &k);
    json_long(f, 4, "moe_router_topk", wl->model.moe_topk, &k);
    json_long(f, 4, "moe_ffn_hidden_size", wl->model.moe_ffn_hidden, &k);
    json_long(f, 4, "moe_shared_expert_intermediate_size", wl->model.moe_shared_ffn, &k);
    json_long(f, 4, "moe_layers", ts_workload_moe_layer_count(wl), &k);
    json_num(f, 4, "moe_token_factor", ts_workload_moe_token_factor(wl), &k);
  }
  fputs("\n  }", f);
  json_key(f, 2, "layout", &first);
  k = true;
  fputc('{', f);
  json_long(f, 4, "gpus", wl->n_gpus, &k);
  json_long(f, 4, "tensor", wl->tp, &k);
  json_long(f, 4, "pipeline", wl->pp, &k);
  json_long(f, 4, "data", wl->dp, &k);
  json_long(f, 4, "context", wl->cp, &k);
  if (wl->model.n_experts > 0) {
    json_long(f, 4, "expert", wl->ep, &k);
    json_long(f, 4, "expert_tensor", ts_workload_etp(wl), &k);
    json_long(f, 4, "expert_data", ts_workload_edp(wl), &k);
  }
  json_long(f, 4, "global_batch_size", wl->global_batch, &k);
  json_long(f, 4, "micro_batch_size", wl->micro_batch, &k);
  json_long(f, 4, "microbatches_per_pipeline", ts_workload_microbatches(wl), &k);
  json_str(f, 4, "schedule", ts_schedule_names[wl->schedule], &k);
  json_long(f, 4, "virtual_stages", wl->virtual_stages, &k);
  json_str(f, 4, "recompute", ts_recompute_names[wl->recompute], &k);
  json_long(f, 4, "zero_stage", wl->zero_stage, &k);
  json_bool(f, 4, "flash_attention", wl->flash_attention, &k);
  json_key(f, 4, "stack", &k); /* stack.h: the software that ran the step */
  fprintf(f, "{\"framework\": \"%s\", \"attention\": \"%s\", \"fused_kernels\": [",
          ts_framework_names[wl->framework], ts_attention_names[wl->attention]);
  for (int fu = 0, n_fu = 0; fu < TS_FUSION_COUNT; fu++)
    if (ts_workload_fuses(wl, (ts_fusion)fu))
      fprintf(f, "%s\"%s\"", n_fu++ > 0 ? ", " : "", ts_fusion_names[fu]);
  fputs(wl->is_unpad_input ? "], \"unpad_input\": true" : "]", f);
  if (wl->rms_norm_impl != TS_RMS_NORM_FUNCTIONAL)
    fprintf(f, ", \"rms_norm\": \"%s\"", ts_rms_norm_names[wl->rms_norm_impl]);
  if (wl->is_compiled)
    fputs(", \"compile\": true", f);
  if (wl->gate_up == TS_GATE_UP_SEPARATE)
    fputs(", \"gate_up\": \"separate\"", f);
  if (wl->rope_impl != TS_ROPE_ROTATE_HALF)
    fprintf(f, ", \"rope\": \"%s\"", ts_rope_names[wl->rope_impl]);
  if (wl->cp > 1)
    fprintf(f, ", \"cp_attention\": \"%s\"", ts_cp_attention_names[wl->cp_attention]);
  fputs(", \"collectives\": ", f);
  json_string(f, info->collectives != NULL ? info->collectives : "ideal");
  char release[48];
  if (zero3_release(wl, release, sizeof release)) {
    fputs(", \"deepspeed_zero3\": ", f);
    json_string(f, release);
    fprintf(f, ", \"contiguous_gradients\": %s", wl->contiguous_gradients ? "true" : "false");
  } else if (wl->zero_stage == 3 && wl->is_fsdp && wl->dp * wl->cp > 1) {
    fprintf(f, ", \"fsdp\": %d", wl->fsdp_version == 1 ? 1 : 2);
  }
  fputc('}', f);
  json_str(f, 4, "precision", ts_precision_names[wl->precision], &k);
  json_str(f, 4, "fp8", ts_fp8_names[wl->fp8], &k);
  if (wl->fp8 != TS_FP8_NONE) {
    json_str(f, 4, "fp8_recipe", ts_fp8_recipe_names[wl->fp8_recipe], &k);
    json_str(f, 4, "fp8_linear", ts_fp8_linear_names[wl->fp8_linear], &k);
  }
  if (wl->is_autocast)
    json_bool(f, 4, "autocast", true, &k);
  json_bool(f, 4, "sequence_parallel", wl->sequence_parallel, &k);
  json_bool(f, 4, "overlap_param_gather", wl->overlap_param_gather, &k);
  json_bool(f, 4, "tp_comm_overlap", wl->tp_comm_overlap, &k);
  json_str(f, 4, "placement", info->placement, &k);
  if (info->seed >= 0)
    json_long(f, 4, "seed", info->seed, &k);
  fputs("\n  }", f);
  json_str(f, 2, "fidelity", info->fidelity, &first);
  json_key(f, 2, "overrides", &first); /* --set KEY=VALUE, in the order given */
  fputc('[', f);
  for (int i = 0; ts_doc_override(i) != NULL; i++) {
    fprintf(f, "%s\n    ", i > 0 ? "," : "");
    json_string(f, ts_doc_override(i));
  }
  fputs(ts_doc_override(0) != NULL ? "\n  ]" : "]", f);
  json_key(f, 2, "inputs", &first);
  k = true;
  fputc('{', f);
  json_key(f, 4, "arguments", &k);
  fputc('[', f);
  for (int i = 0; i < info->n_arguments; i++) {
    fprintf(f, "%s\n      ", i > 0 ? "," : "");
    json_string(f, info->arguments[i]);
  }
  fputs(info->n_arguments > 0 ? "\n    ]" : "]", f);
  json_str(f, 4, "files_digest", info->files_digest != NULL ? info->files_digest : "", &k);
  json_str(f, 4, "binary_digest", info->binary_digest != NULL ? info->binary_digest : "", &k);
  fputs("\n  }", f);
  json_key(f, 2, "metrics", &first);
  k = true;
  fputc('{', f);
  json_num(f, 4, "iteration_s", m->iteration_s, &k);
  json_num(f, 4, "tokens_per_s", m->tokens_per_s, &k);
  json_num(f, 4, "peak_flops_per_s_per_gpu", m->peak_flops_per_s, &k);
  json_num(f, 4, "model_flops_per_iteration", m->model_flops, &k);
  json_num(f, 4, "hardware_flops_per_iteration", m->hardware_flops, &k);
  json_num(f, 4, "megatron_flops_per_iteration", m->megatron_flops, &k);
  json_num(f, 4, "model_tflops_per_gpu", m->model_tflops_per_gpu, &k);
  json_num(f, 4, "hardware_tflops_per_gpu", m->hardware_tflops_per_gpu, &k);
  json_num(f, 4, "megatron_tflops_per_gpu", m->megatron_tflops_per_gpu, &k);
  json_num(f, 4, "mfu", m->mfu, &k);
  json_num(f, 4, "mfu_causal_attention", m->mfu_causal, &k);
  json_num(f, 4, "hfu", m->hfu, &k);
  json_num(f, 4, "megatron_fraction_of_peak", m->megatron_fraction_of_peak, &k);
  if (m->gpu_power_w > 0) {
    json_num(f, 4, "gpu_power_w", m->gpu_power_w, &k);
    json_num(f, 4, "iteration_gpu_energy_j", m->iteration_energy_j, &k);
  }
  if (m->train_s > 0) {
    json_num(f, 4, "train_tokens", wl->train_tokens, &k);
    json_num(f, 4, "time_to_train_s", m->train_s, &k);
    json_num(f, 4, "train_gpu_hours", m->train_gpu_hours, &k);
    if (m->gpu_power_w > 0)
      json_num(f, 4, "train_gpu_energy_j", m->train_energy_j, &k);
  }
  fputs("\n  }", f);
  if (m->reliability.is_modelled) {
    json_key(f, 2, "reliability", &first);
    reliability(f, &m->reliability);
  }
  json_key(f, 2, "breakdown_s", &first);
  breakdown(f, 2, m->breakdown_s);
  json_key(f, 2, "stages", &first);
  fputc('[', f);
  for (long s = 0; s < m->n_stages; s++) {
    bool sf = true;
    fprintf(f, "%s\n    {", s ? "," : "");
    json_long(f, 6, "stage", s, &sf);
    json_key(f, 6, "breakdown_s", &sf);
    breakdown(f, 6, m->stage_breakdown_s + s * TS_CAT_COUNT);
    json_key(f, 6, "memory_bytes", &sf);
    memory(f, 6, &m->stage_memory[s]);
    json_num(f, 6, "microbatches_in_flight", m->stage_memory[s].microbatches_in_flight, &sf);
    fputs("\n    }", f);
  }
  fputs("\n  ]", f);
  json_key(f, 2, "memory", &first);
  k = true;
  fputc('{', f);
  json_num(f, 4, "peak_bytes", m->stage_memory[m->peak_memory_stage].total_bytes, &k);
  json_long(f, 4, "peak_stage", m->peak_memory_stage, &k);
  json_num(f, 4, "hbm_bytes", m->hbm_bytes, &k);
  json_num(f, 4, "usable_bytes", m->usable_bytes, &k);
  json_num(f, 4, "nccl_bytes", m->ccl.bytes, &k); /* outside usable_bytes: ccl_memory.h */
  json_long(f, 4, "nccl_communicators", m->ccl.communicators, &k);
  json_bool(f, 4, "fits", m->is_memory_ok, &k);
  json_num(f, 4, "largest_allocation_bytes",
           m->stage_memory[m->peak_memory_stage].largest_alloc_bytes, &k);
  json_bool(f, 4, "fragmentation_risk", m->is_fragmentation_risk, &k);
  json_bool(f, 4, "allocator_replayed", m->is_allocator_replayed, &k);
  if (m->is_allocator_out_of_memory)
    json_num(f, 4, "allocator_failed_request_bytes", m->allocator_failed_request_bytes, &k);
  json_str(f, 4, "allocator", ts_allocator_names[wl->allocator], &k);
  fputs("\n  }", f);
  json_key(f, 2, "simulation", &first);
  k = true;
  fputc('{', f);
  json_long(f, 4, "events", info->n_events, &k);
  json_long(f, 4, "merged_events", info->n_merged_events, &k);
  json_long(f, 4, "transfers", info->n_transfers, &k);
  json_long(f, 4, "links", info->n_links, &k);
  json_long(f, 4, "routes", info->n_routes, &k);
  json_long(f, 4, "played_ranks", info->n_played_ranks, &k);
  if (info->shortcut != NULL)
    json_str(f, 4, "shortcut", info->shortcut, &k);
  if (info->played_microbatches > 0) { /* periodic play (sim/simulate.h) */
    json_long(f, 4, "played_microbatches", info->played_microbatches, &k);
    json_num(f, 4, "periodic_error_s", info->periodic_error_s, &k);
  } else if (info->periodic_declined_error_s > 0) {
    json_num(f, 4, "periodic_declined_error_s", info->periodic_declined_error_s, &k);
    json_num(f, 4, "periodic_declined_iteration_s", info->periodic_declined_iteration_s, &k);
  }
  json_long(f, 4, "ring_collectives", info->n_ring_collectives, &k);
  json_long(f, 4, "hierarchical_collectives", info->n_hierarchical_collectives, &k);
  json_long(f, 4, "tree_collectives", info->n_tree_collectives, &k);
  json_num(f, 4, "overlap_slowdown", info->overlap_slowdown, &k);
  json_num(f, 4, "slowest_gpu_slowdown", info->slowest_gpu_slowdown, &k);
  if (info->power_clock > 0)
    json_num(f, 4, "power_limit_clock", info->power_clock, &k);
  fputs("\n  }", f);
  json_key(f, 2, "kernel_sources", &first);
  k = true;
  fputc('{', f);
  for (int s = 0; s < TS_KERNEL_SRC_COUNT; s++)
    json_long(f, 4, ts_kernel_source_names[s], info->n_kernels_by_source[s], &k);
  fputs("\n  }", f);
  json_str(f, 2, "kernel_table_provenance",
           info->kernels_path != NULL ? ts_kernel_provenance_names[info->kernels_provenance]
                                      : "none",
           &first);
  json_key(f, 2, "warnings", &first);
  char warnings[4][TS_REPORT_WARNING_SIZE];
  int n_warnings = ts_report_warnings(wl, info, warnings, 4);
  fputc('[', f);
  for (int i = 0; i < n_warnings; i++) {
    fputs(i > 0 ? ",\n    " : "\n    ", f);
    json_string(f, warnings[i]);
  }
  fputs(n_warnings > 0 ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* ---- output ownership (report.h) ---- */

/* Holds the lock on dir's ownership record while it lives; fd < 0 when it could not be taken
 * (a directory that cannot hold the lock file: writing there fails anyway). */
typedef struct owned_lock {
  int fd;
} owned_lock;

static owned_lock owned_lock_take(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.lock", dir, TS_REPORT_OWNED);
  owned_lock l = {open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)};
  if (l.fd >= 0)
    while (flock(l.fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  return l;
}

static void owned_lock_release(owned_lock *l) {
  if (l->fd >= 0)
    close(l->fd); /* releases the lock */
  l->fd = -1;
}

/* Whether dir's ownership record lists name. */
static bool is_owned(const char *dir, const char *name) {
  char path[4200], line[4200];
  snprintf(path, sizeof path, "%s/%s", dir, TS_REPORT_OWNED);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return false;
  bool found = false;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    found = strcmp(line, name) == 0;
  }
  fclose(f);
  return found;
}

/* Rewrites dir's ownership record with name added (keep) or dropped; 0, or -1 (errno set). */
static int set_owned(const char *dir, const char *name, bool keep) {
  char path[4200], tmp[4300], line[4200];
  snprintf(path, sizeof path, "%s/%s", dir, TS_REPORT_OWNED);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *out = fopen(tmp, "w");
  if (out == NULL)
    return -1;
  FILE *in = fopen(path, "r");
  while (in != NULL && fgets(line, sizeof line, in) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] != '\0' && strcmp(line, name) != 0)
      fprintf(out, "%s\n", line);
  }
  if (in != NULL)
    fclose(in);
  if (keep)
    fprintf(out, "%s\n", name);
  bool failed = ferror(out) != 0;
  failed = fclose(out) != 0 || failed;
  if (failed || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    errno = e;
    return -1;
  }
  return 0;
}

/* 1 when dir/name is absent, 0 when it is trainsim's own regular file there, -1 with an error
 * when it is something else. Called under the lock. */
static int check_target(const char *dir, const char *name, ts_err *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ts_loc flag = {NULL, 0, 0, "--out", NULL};
  struct stat st;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? 1
                           : ts_err_at(err, flag, "cannot inspect '%s': %s", path, strerror(errno));
  if (S_ISLNK(st.st_mode))
    return ts_err_at(err, flag,
                     "'%s' is a symbolic link: trainsim writes its outputs only as files of its "
                     "own; remove the link or choose another directory",
                     path);
  if (!S_ISREG(st.st_mode))
    return ts_err_at(err, flag, "'%s' is not a regular file: remove it or choose another directory",
                     path);
  if (!is_owned(dir, name))
    return ts_err_at(err, flag,
                     "'%s' exists and trainsim did not write it there (%s/%s does not list it): "
                     "move it away or choose another directory",
                     path, dir, TS_REPORT_OWNED);
  return 0;
}

int ts_report_check_outputs(const char *dir, const char *const *names, ts_err *err) {
  owned_lock lock = owned_lock_take(dir);
  int rc = 0;
  for (int i = 0; rc == 0 && names[i] != NULL; i++)
    rc = check_target(dir, names[i], err) < 0 ? -1 : 0;
  owned_lock_release(&lock);
  return rc;
}

int ts_report_remove_stale(const char *dir, const char *name, ts_err *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  struct stat st;
  if (lstat(path, &st) != 0) /* nothing there */
    return 0;
  owned_lock lock = owned_lock_take(dir);
  int rc = 0;
  if (S_ISREG(st.st_mode) && is_owned(dir, name)) {
    if (unlink(path) != 0 && errno != ENOENT)
      rc = ts_err_plain(err, "cannot remove the earlier run's '%s': %s", path, strerror(errno));
    else if (set_owned(dir, name, false) != 0)
      rc = ts_err_plain(err, "cannot update '%s/%s': %s", dir, TS_REPORT_OWNED, strerror(errno));
  }
  owned_lock_release(&lock);
  return rc;
}

int ts_report_prepare_dir(const char *dir, ts_err *err) {
  ts_loc flag = {NULL, 0, 0, "--out", NULL};
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return ts_err_at(err, flag, "cannot create directory '%s': %s", dir, strerror(errno));
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return ts_err_at(err, flag, "'%s' is not a directory", dir);
  if (access(dir, W_OK | X_OK) != 0)
    return ts_err_at(err, flag, "cannot write into '%s': %s", dir, strerror(errno));
  return 0;
}

/* Writes path through a temporary file beside it, renamed over it when whole. */
static int write_whole(const char *path, ts_report_writer write, const void *ctx, ts_err *err) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return ts_err_plain(err, "cannot write '%s': %s", tmp, strerror(errno));
  write(f, ctx);
  bool failed = ferror(f) != 0;
  failed = fclose(f) != 0 || failed;
  if (failed || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return ts_err_plain(err, "cannot write '%s': %s", path, strerror(e));
  }
  return 0;
}

int ts_report_write_file(const char *dir, const char *name, ts_report_writer write, const void *ctx,
                         ts_err *err) {
  if (ts_report_prepare_dir(dir, err) != 0)
    return -1;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  /* Interrupts wait until the rename is done, so no temporary file is left behind. */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  owned_lock lock = owned_lock_take(dir);
  int target = check_target(dir, name, err), rc = target < 0 ? -1 : 0;
  /* Recorded as trainsim's before the file appears: a crash between the two leaves a name
   * recorded and no file, never a file of ours unrecorded. */
  if (target == 1 && set_owned(dir, name, true) != 0)
    rc = ts_err_plain(err, "cannot update '%s/%s': %s", dir, TS_REPORT_OWNED, strerror(errno));
  if (rc == 0)
    rc = write_whole(path, write, ctx, err);
  owned_lock_release(&lock);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return rc;
}

typedef struct json_ctx {
  const ts_workload *wl;
  const ts_run_info *info;
  const ts_metrics *m;
} json_ctx;

static void write_result(FILE *f, const void *ctx) {
  const json_ctx *c = ctx;
  write_json(f, c->wl, c->info, c->m);
}

int ts_report_write_json(const char *dir, const ts_workload *wl, const ts_run_info *info,
                         const ts_metrics *m, ts_err *err) {
  json_ctx ctx = {wl, info, m};
  return ts_report_write_file(dir, "result.json", write_result, &ctx, err);
}

/* A digest as run writes it: 16 hex digits. */
static int read_digest(const ts_doc *doc, int node, const char *key, const char *path, char *out,
                       ts_err *err) {
  const char *s = NULL;
  if (ts_doc_get_string(doc, node, key, &s, err) != 1)
    return err->is_set
               ? -1
               : ts_err_plain(err, "%s: expected inputs.%s as trainsim run writes it", path, key);
  if (strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16)
    return ts_err_plain(err, "%s: inputs.%s: expected 16 hex digits, found '%.40s'", path, key, s);
  memcpy(out, s, 17);
  return 0;
}

int ts_report_read_json(const char *dir, ts_report_record *out, ts_err *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/result.json", dir);
  ts_doc *doc = NULL;
  if (access(path, F_OK) != 0)
    return ts_err_plain(err, "%s: no result.json (a 'trainsim run WORKLOAD --out %s' writes one)",
                        dir, dir);
  if (ts_doc_load_file(path, &doc, err) != 0)
    return -1;
  if (ts_doc_check_unique_keys(doc, err) != 0) {
    ts_doc_free(doc);
    return -1;
  }
  ts_report_record r;
  memset(&r, 0, sizeof r);
  int root = ts_doc_root(doc), inputs = ts_doc_get(doc, root, "inputs");
  int args = inputs != 0 ? ts_doc_get(doc, inputs, "arguments") : 0;
  int rc = -1;
  if (args == 0 || !ts_doc_is_seq(doc, args)) {
    ts_err_plain(err,
                 "%s: no inputs.arguments (written by a trainsim before 'explain'?): run it "
                 "again with this trainsim",
                 path);
    goto done;
  }
  int metrics = ts_doc_get(doc, root, "metrics"), breakdown = ts_doc_get(doc, root, "breakdown_s");
  int stages = ts_doc_get(doc, root, "stages");
  if (read_digest(doc, inputs, "files_digest", path, r.files_digest, err) != 0 ||
      read_digest(doc, inputs, "binary_digest", path, r.binary_digest, err) != 0)
    goto done;
  if (metrics == 0 || breakdown == 0 || stages == 0 || !ts_doc_is_seq(doc, stages) ||
      ts_doc_get_double(doc, metrics, "iteration_s", 1e-12, 1e12, &r.iteration_s, err) != 1) {
    if (err->msg[0] == '\0')
      ts_err_plain(err,
                   "%s: expected metrics, breakdown_s, stages and inputs as trainsim run "
                   "writes them",
                   path);
    goto done;
  }
  double sum = 0;
  for (int c = 0; c < TS_CAT_COUNT; c++) {
    if (ts_doc_get_double(doc, breakdown, ts_category_names[c], 0, 1e12, &r.breakdown_s[c], err) <
        0)
      goto done;
    sum += r.breakdown_s[c];
  }
  /* Each rank's categories fill its iteration, so their means do: a file whose figures do not
   * add up was not written whole by trainsim run. */
  if (fabs(sum - r.iteration_s) > 1e-6 * r.iteration_s) {
    ts_err_plain(err,
                 "%s: breakdown_s adds up to %.9g s, expected the iteration's %.9g s as trainsim "
                 "run writes it",
                 path, sum, r.iteration_s);
    goto done;
  }
  int simulation = ts_doc_get(doc, root, "simulation");
  r.slowest_gpu_slowdown = 1;
  if (simulation != 0 && ts_doc_get_double(doc, simulation, "slowest_gpu_slowdown", 1, 2,
                                           &r.slowest_gpu_slowdown, err) < 0)
    goto done;
  r.n_stages = ts_doc_seq_len(doc, stages);
  r.stage_work_s = ts_alloc((size_t)r.n_stages, sizeof(double));
  for (long s = 0; s < r.n_stages; s++) {
    int b = ts_doc_get(doc, ts_doc_seq_item(doc, stages, (int)s), "breakdown_s");
    double compute = 0, recompute = 0;
    if (b == 0 || ts_doc_get_double(doc, b, "compute", 0, 1e12, &compute, err) < 0 ||
        ts_doc_get_double(doc, b, "recompute", 0, 1e12, &recompute, err) < 0)
      goto done;
    if (compute + recompute > r.iteration_s * (1 + 1e-9)) {
      ts_err_plain(err,
                   "%s: stages[%ld] computes for %.9g s, expected at most the iteration's %.9g s",
                   path, s, compute + recompute, r.iteration_s);
      goto done;
    }
    r.stage_work_s[s] = compute + recompute;
  }
  r.n_arguments = ts_doc_seq_len(doc, args);
  if (r.n_arguments > 4096) {
    ts_err_plain(err, "%s: inputs.arguments: expected at most 4096 arguments, found %d", path,
                 r.n_arguments);
    goto done;
  }
  r.arguments = ts_alloc((size_t)r.n_arguments + 1, sizeof *r.arguments);
  for (int i = 0; i < r.n_arguments; i++) {
    const char *s = ts_doc_scalar(doc, ts_doc_seq_item(doc, args, i));
    r.arguments[i] = strdup(s != NULL ? s : "");
    TS_ASSERT(r.arguments[i] != NULL);
    if (strcmp(r.arguments[i], "--help") == 0 || strcmp(r.arguments[i], "-h") == 0) {
      ts_err_plain(err, "%s: inputs.arguments holds '%s', which trainsim run never records", path,
                   r.arguments[i]);
      goto done;
    }
  }
  rc = 0;
done:
  ts_doc_free(doc);
  if (rc != 0)
    ts_report_record_fini(&r);
  else
    *out = r;
  return rc;
}

void ts_report_record_fini(ts_report_record *r) {
  for (int i = 0; r->arguments != NULL && i < r->n_arguments; i++)
    free(r->arguments[i]);
  free(r->arguments);
  free(r->stage_work_s);
  memset(r, 0, sizeof *r);
}
