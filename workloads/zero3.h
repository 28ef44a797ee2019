/* zero3: DeepSpeed's ZeRO-3 as it traces a pipeline chunk's submodules for one microbatch.
 *
 * DeepSpeed records the submodules a forward and a backward use (its trace) and, after each
 * use, releases a submodule's gathered weights unless the elements of the submodules used
 * before its next use are fewer than stage3_max_reuse_distance (stage3.py, _keep_for_later and
 * _distance_in_numel, the same from 0.3.16 to today's 0.16.4); a use gathers the weights when
 * the previous one released them, or is the first. So every forward use gathers, the tied
 * output layer's again unless the layers between are few, a small model stays gathered from
 * its forward to its backward, and under full recomputation a layer's backward gathers again
 * the weights whose later submodules, twice over (recomputed, then in backward), pass the
 * distance. Parameters under stage3_param_persistence_threshold are never released in a pass.
 * The schedule turns the trace into gathers (workloads/schedule.c, fetch_plan); the memory
 * model takes the most weights it holds gathered at once (ts_zero3_stage_memory). */
#ifndef TS_ZERO3_H
#define TS_ZERO3_H

#include <stdbool.h>

#include "workload.h"

/* A submodule as DeepSpeed hooks it, with its parameter tensors (elements). */
typedef struct ts_zero3_module {
  double elems[2];
  int n;
} ts_zero3_module;

/* A layer's submodules on one TP rank in forward order: norm, QKV, projection, norm, FC1
 * (SwiGLU: gate and up fused), FC2, each linear with its bias under add_bias_linear
 * (column-parallel weights and biases split, row-parallel biases and the norms whole). */
enum { TS_ZERO3_LAYER_MODULES = 6 };
void ts_zero3_layer_modules(const ts_workload *wl, ts_zero3_module *mods);

/* Where a pass waits for its weights: group 0 the embedding; submodule k of layer i (in a
 * backward under full recomputation, of its recomputed forward) 1 + 2 (6i + k), and after the
 * recomputation 2 + 2 (6i + k); 1 + 12n the final norm and the output layer. */
int ts_zero3_group(long layer, int module, bool after_recompute);
int ts_zero3_head_group(long n_layers);

/* The uses of one microbatch, forward (uses [0, n_fwd)) then backward, of a chunk of
 * n_layers layers (with the embedding when first, the final norm and output layer when last):
 * mods[use[p]] is used at p, waited for as group[p]; gathered[p]: the use gathers its large
 * tensors; released[p]: they are released after it; first_use[p]: the submodule's first. */
typedef struct ts_zero3_trace {
  ts_zero3_module *mods;
  int n_mods, len, n_fwd;
  int *use, *group;
  bool *gathered, *released, *first_use;
} ts_zero3_trace;
void ts_zero3_trace_build(const ts_workload *wl, long n_layers, bool is_first, bool is_last,
                          ts_zero3_trace *out);
void ts_zero3_trace_free(ts_zero3_trace *tr);

/* The elements of module m's tensors that DeepSpeed partitions (stage3_param_persistence_threshold
 * and over; the rest stay whole on every rank). */
double ts_zero3_large_elems(const ts_workload *wl, const ts_zero3_module *m);

/* Pipeline stage `stage`'s DeepSpeed ZeRO-3 memory, in elements: *peak_gathered, the most
 * large weights (stage3_param_persistence_threshold and over) a rank holds gathered at once:
 * those kept between uses, the submodule in use and the gathers prefetched ahead of it
 * (stage3_prefetch_bucket_size, within stage3_max_live_parameters; the last may pass it), at
 * most every module once; *persistent, its parameters under the threshold, which every rank
 * holds whole. */
void ts_zero3_stage_memory(const ts_workload *wl, long stage, double *peak_gathered,
                           double *persistent);

#endif
