/* report: summary and result.json; see report.h. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../workloads/schedule.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

void ts_report_memory(FILE *out, const ts_workload *wl, const ts_metrics *m) {
  fprintf(out, "memory per GPU by pipeline stage (GiB; HBM %.1f GiB)\n", m->hbm_bytes / GIB);
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
            mem->total_bytes > m->hbm_bytes ? "  DOES NOT FIT" : "");
  }
  (void)wl;
}

void ts_report_summary(FILE *out, const ts_workload *wl, const ts_run_info *info,
                       const ts_metrics *m) {
  fprintf(out, "trainsim: %s on %s, %ld x %s\n", wl->name, info->platform_name, wl->n_gpus,
          info->gpu_model);
  char schedule[64];
  ts_workload_schedule_label(wl, schedule, sizeof schedule);
  fprintf(out,
          "layout: TP %ld x PP %ld x DP %ld, %s, %ld microbatches of %ld per pipeline, "
          "recompute %s, ZeRO-%d, fidelity %s, placement %s\n\n",
          wl->tp, wl->pp, wl->dp, schedule, ts_workload_microbatches(wl), wl->micro_batch,
          ts_recompute_names[wl->recompute], wl->zero_stage, info->fidelity, info->placement);
  fprintf(out, "  %-34s %12.4f s\n", "iteration time", m->iteration_s);
  fprintf(out, "  %-34s %12.0f tokens/s\n", "throughput", m->tokens_per_s);
  fprintf(out, "  %-34s %12.1f TFLOPS/GPU  MFU %5.2f%%\n", "model FLOPs", m->model_tflops_per_gpu,
          100 * m->mfu);
  fprintf(out, "  %-34s %12.1f TFLOPS/GPU  HFU %5.2f%%\n", "hardware FLOPs (simulated)",
          m->hardware_tflops_per_gpu, 100 * m->hfu);
  fprintf(out, "  %-34s %12.1f TFLOPS/GPU  %5.2f%% of peak\n", "Megatron-DeepSpeed formula",
          m->megatron_tflops_per_gpu, 100 * m->megatron_fraction_of_peak);
  fprintf(out, "  %-34s %12.1f TFLOPS (%s)\n", "peak per GPU", m->peak_flops_per_s / 1e12,
          ts_precision_names[wl->precision]);
  if (m->train_s > 0)
    fprintf(out, "  %-34s %12.1f days, %.3g GPU-hours (%.3g tokens)\n", "time to train",
            m->train_s / 86400.0, m->train_gpu_hours, wl->train_tokens);
  if (m->gpu_power_w > 0) {
    fprintf(out, "  %-34s %12.3g kWh per iteration", "GPU energy", m->iteration_energy_j / 3.6e6);
    if (m->train_s > 0)
      fprintf(out, ", %.3g MWh to train", m->train_energy_j / 3.6e9);
    fprintf(out, "\n  %-34s (assumed: each GPU draws gpu.power, %.0f W, throughout)\n", "",
            m->gpu_power_w);
  }
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
  fputs("\n  }", f);
  json_key(f, 2, "layout", &first);
  k = true;
  fputc('{', f);
  json_long(f, 4, "gpus", wl->n_gpus, &k);
  json_long(f, 4, "tensor", wl->tp, &k);
  json_long(f, 4, "pipeline", wl->pp, &k);
  json_long(f, 4, "data", wl->dp, &k);
  json_long(f, 4, "global_batch_size", wl->global_batch, &k);
  json_long(f, 4, "micro_batch_size", wl->micro_batch, &k);
  json_long(f, 4, "microbatches_per_pipeline", ts_workload_microbatches(wl), &k);
  json_str(f, 4, "schedule", ts_schedule_names[wl->schedule], &k);
  json_long(f, 4, "virtual_stages", wl->virtual_stages, &k);
  json_str(f, 4, "recompute", ts_recompute_names[wl->recompute], &k);
  json_long(f, 4, "zero_stage", wl->zero_stage, &k);
  json_bool(f, 4, "flash_attention", wl->flash_attention, &k);
  json_str(f, 4, "precision", ts_precision_names[wl->precision], &k);
  json_bool(f, 4, "sequence_parallel", wl->sequence_parallel, &k);
  json_str(f, 4, "placement", info->placement, &k);
  if (info->seed >= 0)
    json_long(f, 4, "seed", info->seed, &k);
  fputs("\n  }", f);
  json_str(f, 2, "fidelity", info->fidelity, &first);
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
  json_bool(f, 4, "fits", m->is_memory_ok, &k);
  fputs("\n  }", f);
  json_key(f, 2, "simulation", &first);
  k = true;
  fputc('{', f);
  json_long(f, 4, "events", info->n_events, &k);
  json_long(f, 4, "transfers", info->n_transfers, &k);
  json_long(f, 4, "links", info->n_links, &k);
  json_long(f, 4, "routes", info->n_routes, &k);
  json_long(f, 4, "ring_collectives", info->n_ring_collectives, &k);
  json_long(f, 4, "hierarchical_collectives", info->n_hierarchical_collectives, &k);
  json_long(f, 4, "tree_collectives", info->n_tree_collectives, &k);
  fputs("\n  }\n}\n", f);
}

int ts_report_prepare_dir(const char *dir, ts_err *err) {
  ts_loc flag = {NULL, 0, 0, "--out"};
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return ts_err_at(err, flag, "cannot create directory '%s': %s", dir, strerror(errno));
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return ts_err_at(err, flag, "'%s' is not a directory", dir);
  if (access(dir, W_OK | X_OK) != 0)
    return ts_err_at(err, flag, "cannot write into '%s': %s", dir, strerror(errno));
  return 0;
}

int ts_report_write_file(const char *dir, const char *name, ts_report_writer write, const void *ctx,
                         ts_err *err) {
  if (ts_report_prepare_dir(dir, err) != 0)
    return -1;
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  /* Interrupts wait until the rename is done, so no temporary file is left behind. */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  int rc = 0;
  FILE *f = fopen(tmp, "w");
  if (f == NULL) {
    rc = ts_err_plain(err, "cannot write '%s': %s", tmp, strerror(errno));
  } else {
    write(f, ctx);
    bool failed = ferror(f) != 0;
    failed = fclose(f) != 0 || failed;
    if (failed || rename(tmp, path) != 0) {
      int e = errno;
      unlink(tmp);
      rc = ts_err_plain(err, "cannot write '%s': %s", path, strerror(e));
    }
  }
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
