/* search: the layouts a search of N GPUs tries (`trainsim search`), each resolved and checked.
 *
 * Tensor parallelism inside a node (a divisor of its GPUs) or across whole nodes, up to 4;
 * pipeline parallelism dividing the layers; context parallelism none, or 2 to 16 ranks for
 * sequences of 8k tokens or more (Megatron-Core's MoE guide: CP from 8k); expert parallelism for
 * a MoE model, every power of two dividing the experts and their count; micro-batch 1, 2 or 4;
 * with a pipeline 1F1B, interleaved over 2 virtual stages, zb-h1, zb-v or dualpipe (each where
 * its rules allow); recomputation none, selective or full; ZeRO 0 to 3 (2 and 3 only
 * without a pipeline, as DeepSpeed); sequence parallelism off or on where TP > 1. Data
 * parallelism follows. A layout that breaks a rule of ts_workload_resolve, or whose fullest GPU
 * exceeds HBM, is counted by reason and left out. Pure enumeration: the estimates and the
 * ranking are the caller's.
 */
#ifndef TS_SEARCH_H
#define TS_SEARCH_H

#include "workload.h"

/* The most microbatches a pipeline a candidate may run: a search simulates its best candidates
 * in full, and one of more would take it an hour or more (real jobs run at most a few
 * thousand: a global batch of 16k sequences at micro-batch 1 on one pipeline). */
#define TS_SEARCH_MAX_MICROBATCHES 65536

typedef enum ts_search_reject {
  TS_SEARCH_RULE, /* breaks a layout rule */
  TS_SEARCH_MEMORY, /* does not fit in HBM */
  TS_SEARCH_MICROBATCHES, /* more microbatches a pipeline than TS_SEARCH_MAX_MICROBATCHES */
  TS_SEARCH_REJECTS
} ts_search_reject;

typedef struct ts_search_space {
  ts_workload *layouts; /* [n]: resolved, in enumeration order */
  double *peak_bytes; /* [n]: of each layout's fullest GPU (ts_memory_peak) */
  long n, tried;
  long rejected[TS_SEARCH_REJECTS];
  ts_err first_refusal; /* the first layout rule a candidate broke, as the workload check said */
} ts_search_space;

/* The layouts of `gpus` GPUs of base's model and batch on nodes of gpus_per_node GPUs like
 * gpu (each layout's fullest GPU within ts_usable_bytes), into *out (free with ts_search_fini). */
void ts_search_layouts(const ts_workload *base, long gpus, int gpus_per_node, const ts_gpu *gpu,
                       ts_search_space *out);
void ts_search_fini(ts_search_space *s);

#endif
