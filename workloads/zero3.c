#include "zero3.h"

#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "stack.h"

void ts_zero3_layer_modules(const ts_workload *wl, ts_zero3_module *mods) {
  const ts_model *m = &wl->model;
  double h = (double)m->hidden, ff = (double)m->ffn_hidden, tp = (double)wl->tp;
  double qkv_n = h + 2.0 * (double)m->n_query_groups * (h / (double)m->n_heads);
  double up = m->swiglu ? 2.0 : 1.0;
  ts_zero3_module norm = {{h, h}, m->rms_norm ? 1 : 2};
  double linear[4][2] = {{h * qkv_n / tp, qkv_n / tp},
                         {h * h / tp, h},
                         {up * h * ff / tp, up * ff / tp},
                         {ff * h / tp, h}};
  for (int i = 0, k = 0; i < 4; i++) {
    if (i % 2 == 0) /* the norm before attention, and before the MLP */
      mods[k++] = norm;
    mods[k++] = (ts_zero3_module){{linear[i][0], linear[i][1]}, m->bias ? 2 : 1};
  }
}

int ts_zero3_group(long layer, int module, bool after_recompute) {
  return 1 + 2 * (TS_ZERO3_LAYER_MODULES * (int)layer + module) + (after_recompute ? 1 : 0);
}

int ts_zero3_head_group(long n_layers) {
  return 1 + 2 * TS_ZERO3_LAYER_MODULES * (int)n_layers;
}

static double module_elems(const ts_zero3_module *m) {
  double e = 0;
  for (int k = 0; k < m->n; k++)
    e += m->elems[k];
  return e;
}

double ts_zero3_large_elems(const ts_workload *wl, const ts_zero3_module *m) {
  double e = 0;
  for (int k = 0; k < m->n; k++)
    e += m->elems[k] >= wl->stage3_persistence_elems ? m->elems[k] : 0;
  return e;
}

void ts_zero3_trace_build(const ts_workload *wl, long n_layers, bool is_first, bool is_last,
                          ts_zero3_trace *out) {
  const int per = TS_ZERO3_LAYER_MODULES;
  long n = n_layers;
  bool recompute = wl->recompute == TS_RECOMPUTE_FULL;
  /* the submodules: the embedding's word and position tables, the layers', the final norm,
   * the output layer (the word table again where tied) */
  int n_mods = 2 + per * (int)n + 2;
  ts_zero3_module *mods = ts_alloc((size_t)n_mods, sizeof *mods);
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)wl->model.hidden;
  bool own_head = ts_workload_head_params(wl) > ts_workload_norm_params(wl) || !is_first;
  int norm_mod = n_mods - 2, head_mod = own_head ? n_mods - 1 : 0;
  mods[0] = (ts_zero3_module){{word}, is_first ? 1 : 0};
  mods[1] = (ts_zero3_module){{ts_workload_position_params(wl)}, is_first ? 1 : 0};
  for (long i = 0; i < n; i++)
    ts_zero3_layer_modules(wl, mods + 2 + per * i);
  double h = (double)wl->model.hidden;
  mods[norm_mod] = (ts_zero3_module){{h, h}, is_last ? (wl->model.rms_norm ? 1 : 2) : 0};
  mods[n_mods - 1] = (ts_zero3_module){{word}, is_last && own_head ? 1 : 0};
  /* the uses: forward, then backward (a recomputed layer's forward before its backward) */
  int cap = 4 + 3 * per * (int)n + 4, len = 0;
  int *use = ts_alloc((size_t)cap, sizeof(int)), *group = ts_alloc((size_t)cap, sizeof(int));
#define USE(m, g) (use[len] = (m), group[len++] = (g))
  USE(0, 0);
  USE(1, 0);
  for (long i = 0; i < n; i++)
    for (int k = 0; k < per; k++)
      USE(2 + per * (int)i + k, ts_zero3_group(i, k, false));
  USE(norm_mod, ts_zero3_head_group(n));
  if (is_last)
    USE(head_mod, ts_zero3_head_group(n));
  int n_fwd = len;
  if (is_last)
    USE(head_mod, ts_zero3_head_group(n));
  USE(norm_mod, ts_zero3_head_group(n));
  for (long i = n - 1; i >= 0; i--) {
    int first = 2 + per * (int)i;
    for (int k = 0; recompute && k < per; k++)
      USE(first + k, ts_zero3_group(i, k, false));
    for (int k = per - 1; k >= 0; k--)
      USE(first + k, ts_zero3_group(i, k, recompute));
  }
  USE(1, 0);
  USE(0, 0);
#undef USE
  double *before = ts_alloc((size_t)len + 1, sizeof(double)); /* elements of the uses before */
  for (int p = 0; p < len; p++)
    before[p + 1] = before[p] + module_elems(&mods[use[p]]);
  int *next = ts_alloc((size_t)len, sizeof(int)), *seen = ts_alloc((size_t)n_mods, sizeof(int));
  for (int k = 0; k < n_mods; k++)
    seen[k] = -1;
  for (int p = len - 1; p >= 0; p--) {
    next[p] = seen[use[p]];
    seen[use[p]] = p;
  }
  *out = (ts_zero3_trace){.mods = mods,
                          .n_mods = n_mods,
                          .len = len,
                          .n_fwd = n_fwd,
                          .use = use,
                          .group = group,
                          .gathered = ts_alloc((size_t)len, sizeof(bool)),
                          .released = ts_alloc((size_t)len, sizeof(bool)),
                          .first_use = ts_alloc((size_t)len, sizeof(bool))};
  for (int p = 0; p < len; p++)
    out->gathered[p] = out->first_use[p] = seen[use[p]] == p;
  for (int p = 0; p < len; p++) {
    out->released[p] = next[p] < 0 || wl->stage3_max_reuse_elems <= 0 ||
                       before[next[p]] - before[p + 1] >= wl->stage3_max_reuse_elems;
    if (next[p] >= 0)
      out->gathered[next[p]] = out->released[p];
  }
  free(before);
  free(next);
  free(seen);
}

void ts_zero3_trace_free(ts_zero3_trace *tr) {
  free(tr->mods);
  free(tr->use);
  free(tr->group);
  free(tr->gathered);
  free(tr->released);
  free(tr->first_use);
}

void ts_zero3_stage_memory(const ts_workload *wl, long stage, double *peak_gathered,
                           double *persistent) {
  ts_zero3_trace tr;
  ts_zero3_trace_build(wl, ts_workload_stage_layers(wl, stage), stage == 0, stage == wl->pp - 1,
                       &tr);
  double *gathers = ts_alloc((size_t)tr.len, sizeof(double)); /* what each use gathers */
  double whole = 0, largest = 0, small = 0; /* every module gathered at once; the largest one */
  for (int k = 0; k < tr.n_mods; k++) {
    double e = ts_zero3_large_elems(wl, &tr.mods[k]);
    whole += e;
    largest = e > largest ? e : largest;
    small += module_elems(&tr.mods[k]) - e;
  }
  for (int p = 0; p < tr.len; p++)
    gathers[p] = tr.gathered[p] ? ts_zero3_large_elems(wl, &tr.mods[tr.use[p]]) : 0;
  bool synced = ts_deepspeed_zero3_path(wl->deepspeed_version) != TS_DEEPSPEED_COALESCED;
  double max_live = wl->stage3_max_live_elems > 0 ? wl->stage3_max_live_elems : INFINITY;
  /* live: held after the use at p; ahead: the gathers in (p, end), the prefetch window, which
   * stage3_max_live_parameters bounds as fetch_prefetch does (the last unit may pass it) */
  double live = 0, peak = 0, ahead = 0;
  for (int p = 0, end = 1; p < tr.len; p++) {
    if (end <= p + 1) {
      end = p + 1;
      ahead = 0;
    } else {
      ahead -= gathers[p];
    }
    for (; end < tr.len && ahead < wl->stage3_prefetch_elems; end++)
      ahead += gathers[end];
    double own = ts_zero3_large_elems(wl, &tr.mods[tr.use[p]]);
    live += gathers[p];
    double room = synced ? (live < max_live ? wl->stage3_prefetch_elems : 0)
                         : fmin(wl->stage3_prefetch_elems, fmax(0, max_live - live));
    double held = live + fmin(ahead, room > 0 ? room + largest : 0);
    peak = fmax(peak, fmin(held, whole)); /* no module is held twice */
    if (tr.released[p])
      live -= own;
  }
  free(gathers);
  ts_zero3_trace_free(&tr);
  *peak_gathered = peak;
  *persistent = small;
}
