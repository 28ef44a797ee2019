/* result: see result.h. */
#include "result.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

const char *const ts_algorithm_names[] = {"ring", "hierarchical", "pairwise", "tree", NULL};

void ts_sim_result_fini(ts_sim_result *res) {
  for (long r = 0; res->ranks != NULL && r < res->n_ranks; r++) {
    free(res->ranks[r].block_end_s);
    free(res->ranks[r].spans);
  }
  free(res->ranks);
  memset(res, 0, sizeof *res);
}

void ts_rank_result_share(ts_rank_result *to, const ts_rank_result *from, int n_blocks,
                          bool with_spans) {
  to->finish_s = from->finish_s;
  to->flops = from->flops;
  memcpy(to->time_s, from->time_s, sizeof to->time_s);
  memcpy(to->snapshot_time_s, from->snapshot_time_s, sizeof to->snapshot_time_s);
  memcpy(to->snapshot_flops, from->snapshot_flops, sizeof to->snapshot_flops);
  if (to->block_end_s != NULL && from->block_end_s != NULL)
    memcpy(to->block_end_s, from->block_end_s, (size_t)n_blocks * sizeof *to->block_end_s);
  if (with_spans && from->n_spans > 0) {
    free(to->spans);
    to->spans = ts_alloc((size_t)from->n_spans, sizeof *to->spans);
    memcpy(to->spans, from->spans, (size_t)from->n_spans * sizeof *to->spans);
    to->n_spans = to->cap_spans = from->n_spans;
  }
}
