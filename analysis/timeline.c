/* timeline: Chrome trace events; see timeline.h. */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/layout.h"
#include "report.h"

enum stream { STREAM_COMPUTE, STREAM_TP, STREAM_PP, STREAM_DP, N_STREAMS };
static const char *const stream_names[] = {"compute", "tp", "pp", "dp"};

typedef struct timeline_ctx {
  const ts_workload *wl;
  const ts_job *job;
  const ts_sim_result *sim;
  int gpus_per_node;
  const ts_timeline_opts *opts;
  long **steps; /* [stage][block]: the step of ts_schedule_order */
} timeline_ctx;

static bool is_written(const timeline_ctx *c, long rank) {
  return c->sim->ranks[rank].spans != NULL &&
         (c->opts->is_shown == NULL || c->opts->is_shown[rank]);
}

static void thread_of(const timeline_ctx *c, long rank, enum stream st, long *pid, long *tid) {
  long gpu = ts_job_gpu(c->job, rank);
  *pid = gpu / c->gpus_per_node;
  *tid = (gpu % c->gpus_per_node) * N_STREAMS + st;
}

/* A wait for the communication stream blocks the compute stream: it shows there. */
static enum stream stream_of(const ts_event *ev) {
  if (ev->kind == TS_EV_COMPUTE || ev->kind == TS_EV_WAIT)
    return STREAM_COMPUTE;
  if (ev->kind == TS_EV_COLL)
    return ts_group_is_in_pass(ev->group) ? STREAM_TP : STREAM_DP;
  return STREAM_PP;
}

/* "F12", "B12", "W12" (zb-h1), "R12" (recomputation) or "sync" for the block holding the event. */
static void pass_name(const timeline_ctx *c, long rank, int block, const ts_event *ev, char *out,
                      size_t size) {
  const ts_program *prog = &c->job->programs[rank];
  long stage = ts_layout_coords(c->wl, rank).pp;
  if (block >= prog->n_blocks - 1) {
    snprintf(out, size, "sync");
    return;
  }
  long step = c->steps[stage][block];
  ts_schedule_step_name(
      step, ts_workload_chunks(c->wl),
      ts_schedule_step_pass(step) != 'F' && ev->category == TS_CAT_RECOMPUTE ? 'R' : 0, out, size);
}

static void event_name(const timeline_ctx *c, long rank, int block, const ts_event *ev,
                       bool is_send, char *out, size_t size) {
  char pass[32], layers[32] = "";
  pass_name(c, rank, block, ev, pass, sizeof pass);
  if (ev->layer_first >= 0 && ev->layer_last > ev->layer_first)
    snprintf(layers, sizeof layers, " L%d-%d", ev->layer_first, ev->layer_last);
  else if (ev->layer_first >= 0)
    snprintf(layers, sizeof layers, " L%d", ev->layer_first);
  const char *op = ts_op_names[ev->op];
  switch ((ts_event_kind)ev->kind) {
  case TS_EV_COMPUTE:
    snprintf(out, size, "%s%s %s", pass, layers, op);
    break;
  case TS_EV_COLL:
    snprintf(out, size, "%s %s%s %s%s", pass, ts_coll_op_names[ev->coll_op], layers, op,
             ev->is_async ? " (overlapped)" : "");
    break;
  case TS_EV_WAIT:
    snprintf(out, size, "%s wait for communication%s %s", pass, layers, op);
    break;
  default: {
    bool grad = ev->peer == TS_PEER_NEXT; /* ev is the receive: gradients come from next */
    snprintf(out, size, "%s %s %s", pass, is_send ? "send" : "recv",
             grad ? "gradient" : "activation");
  }
  }
}

static void slice(FILE *f, bool *first, const char *name, const char *cat, double start_s,
                  double end_s, long pid, long tid) {
  fprintf(f,
          "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
          "\"pid\":%ld,\"tid\":%ld",
          *first ? "" : ",", name, cat, start_s * 1e6, (end_s - start_s) * 1e6, pid, tid);
  *first = false;
}

static void write_metadata(FILE *f, const timeline_ctx *c, bool *first) {
  long last_pid = -1;
  for (long r = 0; r < c->sim->n_ranks; r++) {
    if (!is_written(c, r))
      continue;
    long pid, tid;
    thread_of(c, r, STREAM_COMPUTE, &pid, &tid);
    if (pid != last_pid) {
      fprintf(f,
              "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,"
              "\"args\":{\"name\":\"node %ld\"}}",
              *first ? "" : ",", pid, pid);
      fprintf(f,
              ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%ld,"
              "\"args\":{\"sort_index\":%ld}}",
              pid, pid);
      *first = false;
      last_pid = pid;
    }
    ts_coords co = ts_layout_coords(c->wl, r);
    for (int st = 0; st < N_STREAMS; st++) {
      thread_of(c, r, (enum stream)st, &pid, &tid);
      fprintf(f,
              ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,"
              "\"args\":{\"name\":\"GPU %ld rank %ld (tp %ld dp %ld pp %ld) %s\"}}",
              pid, tid, ts_job_gpu(c->job, r), r, co.tp, co.dp, co.pp, stream_names[st]);
      fprintf(f,
              ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,"
              "\"args\":{\"sort_index\":%ld}}",
              pid, tid, tid);
    }
  }
}

static void write_trace(FILE *f, const void *ctx) {
  const timeline_ctx *c = ctx;
  bool first = true;
  long flow_id = 0;
  fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
  write_metadata(f, c, &first);
  for (long r = 0; r < c->sim->n_ranks; r++) {
    const ts_rank_result *res = &c->sim->ranks[r];
    if (!is_written(c, r))
      continue;
    for (long i = 0; i < res->n_spans; i++) {
      const ts_span *sp = &res->spans[i];
      if (sp->end_s < c->opts->window_start_s || sp->start_s > c->opts->window_end_s)
        continue;
      const ts_event *ev = &c->job->programs[r].blocks[sp->block].events[sp->event];
      char name[96];
      long pid, tid;
      event_name(c, r, sp->block, ev, false, name, sizeof name);
      thread_of(c, r, stream_of(ev), &pid, &tid);
      slice(f, &first, name, ts_category_names[ev->category], sp->start_s, sp->end_s, pid, tid);
      if (ev->kind == TS_EV_COMPUTE) {
        fprintf(f, ",\"args\":{\"flops\":%.6g}}", ev->flops);
      } else if (ev->kind == TS_EV_WAIT) {
        fputc('}', f);
      } else if (ev->kind == TS_EV_COLL) {
        long g = c->job->rank_group[r * TS_GROUP_KINDS + ev->group];
        fprintf(f, ",\"args\":{\"bytes\":%.0f,\"ranks\":%d,\"algorithm\":\"%s\"}}", ev->bytes,
                g >= 0 ? c->job->groups[g].n_members : 1, ts_algorithm_names[sp->algorithm]);
      } else { /* a receive, and its send on the sender's pp thread */
        double bubble = sp->sent_s > sp->start_s ? sp->sent_s - sp->start_s : 0;
        long sender = c->job->rank_peer[r * TS_PEERS + ev->peer];
        bool linked = sender >= 0 && is_written(c, sender);
        fprintf(f, ",\"args\":{\"bytes\":%.0f,\"from_rank\":%ld,\"bubble_us\":%.3f}", ev->bytes,
                sender, bubble * 1e6);
        if (linked)
          fprintf(f, ",\"bind_id\":%ld,\"flow_in\":true", flow_id);
        fputc('}', f);
        if (linked) {
          event_name(c, r, sp->block, ev, true, name, sizeof name);
          thread_of(c, sender, STREAM_PP, &pid, &tid);
          slice(f, &first, name, "pp_comm", sp->sent_s, sp->end_s, pid, tid);
          fprintf(f,
                  ",\"args\":{\"bytes\":%.0f,\"to_rank\":%ld},\"bind_id\":%ld,"
                  "\"flow_out\":true}",
                  ev->bytes, r, flow_id);
          flow_id++;
        }
      }
    }
  }
  fputs("\n]}\n", f);
}

int ts_timeline_write(const char *dir, const ts_workload *wl, const ts_job *job,
                      const ts_sim_result *sim, int gpus_per_node, const ts_timeline_opts *opts,
                      ts_err *err) {
  long n_steps = ts_schedule_n_blocks(wl) - 1;
  timeline_ctx c = {wl, job, sim, gpus_per_node, opts, calloc((size_t)wl->pp, sizeof(long *))};
  TS_ASSERT(c.steps != NULL);
  for (long s = 0; s < wl->pp; s++) {
    c.steps[s] = calloc((size_t)n_steps, sizeof(long));
    TS_ASSERT(c.steps[s] != NULL);
    ts_schedule_order(wl->schedule, wl->pp, ts_workload_chunks(wl), s, ts_workload_microbatches(wl),
                      c.steps[s]);
  }
  int rc = ts_report_write_file(dir, "timeline.json", write_trace, &c, err);
  for (long s = 0; s < wl->pp; s++)
    free(c.steps[s]);
  free(c.steps);
  return rc;
}
