/* search: see search.h. */
#include "search.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ccl_memory.h"
#include "memory.h"

static void keep(ts_search_space *s, long *cap, const ts_workload *wl, double peak) {
  if (s->n == *cap) {
    *cap *= 2;
    s->layouts = realloc(s->layouts, (size_t)*cap * sizeof *s->layouts);
    s->peak_bytes = realloc(s->peak_bytes, (size_t)*cap * sizeof *s->peak_bytes);
    TS_ASSERT(s->layouts != NULL && s->peak_bytes != NULL);
  }
  s->layouts[s->n] = *wl;
  s->peak_bytes[s->n++] = peak;
}

void ts_search_layouts(const ts_workload *base, long gpus, int gpus_per_node, const ts_gpu *gpu,
                       ts_search_space *out) {
  ts_search_space s;
  memset(&s, 0, sizeof s);
  long cap = 256;
  s.layouts = ts_alloc((size_t)cap, sizeof *s.layouts);
  s.peak_bytes = ts_alloc((size_t)cap, sizeof *s.peak_bytes);
  static const long mbs_choices[] = {1, 2, 4};
  /* TP across nodes is a known bottleneck (REFERENCE.md section 1), but that is for the search
   * to show: up to 4 nodes. */
  long max_tp = 4 * gpus_per_node;
  long cp_choices[8], ep_choices[32], n_cp = 0, n_ep = 0;
  for (long c = 1; c <= 16; c *= 2)
    if (c == 1 || (base->model.seq >= 8192 && base->model.seq % (2 * c) == 0))
      cp_choices[n_cp++] = c;
  for (long e = 1; e <= base->model.n_experts && n_ep < 31; e *= 2)
    if (base->model.n_experts % e == 0)
      ep_choices[n_ep++] = e;
  if (base->model.n_experts > 0 && ep_choices[n_ep - 1] != base->model.n_experts)
    ep_choices[n_ep++] = base->model.n_experts;
  if (n_ep == 0)
    ep_choices[n_ep++] = 1;
  for (long tp = 1; tp <= max_tp; tp++)
    for (long pp = 1; pp <= base->model.n_layers; pp++)
      for (long ci = 0; ci < n_cp; ci++)
        for (long ei = 0; ei < n_ep; ei++) {
          long cp = cp_choices[ci], ep = ep_choices[ei];
          if ((gpus_per_node % tp != 0 && tp % gpus_per_node != 0) || gpus % (tp * pp * cp) != 0 ||
              base->model.n_layers % pp != 0 || ep > gpus / pp)
            continue;
          /* 1F1B and its interleaved form (2 virtual stages), and with a pipeline the zero-bubble
           * schedules and DualPipe */
          static const ts_schedule_kind schedules[] = {TS_SCHED_1F1B, TS_SCHED_INTERLEAVED,
                                                       TS_SCHED_ZB_H1, TS_SCHED_ZB_V,
                                                       TS_SCHED_DUALPIPE};
          /* recompute none, selective, full, and torchtitan's op policy for plain PyTorch */
          int n_rec = ts_framework_is_pytorch(base->framework) ? 4 : 3;
          for (int mi = 0; mi < 3; mi++)
            for (int si = 0; si < (pp > 1 ? 5 : 1); si++)
              for (int rec = 0; rec < n_rec; rec++)
                for (int zero = 0; zero <= 3; zero++)
                  for (int sp = 0; sp <= (tp > 1); sp++) {
                    ts_workload wl = *base;
                    ts_overrides ov = {
                        .gpus = gpus,
                        .is_gpus_set = true,
                        .tp = tp,
                        .is_tp_set = true,
                        .pp = pp,
                        .is_pp_set = true,
                        .cp = cp,
                        .is_cp_set = true,
                        .ep = ep,
                        .is_ep_set = base->model.n_experts > 0,
                        .micro_batch = mbs_choices[mi],
                        .is_micro_batch_set = true,
                        .virtual_stages = schedules[si] == TS_SCHED_INTERLEAVED ? 2 : 1,
                        .is_virtual_stages_set = true,
                        .recompute = (ts_recompute)rec,
                        .is_recompute_set = true,
                        .zero_stage = zero,
                        .is_zero_stage_set = true,
                        .schedule =
                            schedules[si] == TS_SCHED_INTERLEAVED ? TS_SCHED_1F1B : schedules[si],
                        .is_schedule_set = true,
                        .is_sequence_parallel_set = sp};
                    wl.sequence_parallel = false;
                    wl.first_stage_layers = wl.last_stage_layers = 0;
                    s.tried++;
                    ts_err e = {0};
                    if ((zero >= 2 && pp > 1) || ts_workload_resolve(&wl, &ov, &e) != 0) {
                      s.rejected[TS_SEARCH_RULE]++;
                      if (e.is_set && !s.first_refusal.is_set)
                        s.first_refusal = e;
                      continue;
                    }
                    if (ts_workload_microbatches(&wl) > TS_SEARCH_MAX_MICROBATCHES) {
                      s.rejected[TS_SEARCH_MICROBATCHES]++; /* before its memory: that walks them */
                      continue;
                    }
                    double peak = ts_memory_peak(&wl, NULL);
                    if (peak > ts_gpu_usable_bytes(gpu) || peak > ts_usable_bytes(gpu, &wl)) {
                      s.rejected[TS_SEARCH_MEMORY]++;
                      continue;
                    }
                    keep(&s, &cap, &wl, peak);
                  }
        }
  *out = s;
}

void ts_search_fini(ts_search_space *s) {
  free(s->layouts);
  free(s->peak_bytes);
  memset(s, 0, sizeof *s);
}
