/* result: what a simulated iteration produced, per rank. Filled by the engines
 * (sim/engine/engine.c, sim/engine/analytic.c), read by analysis/. Plain data. */
#ifndef TS_RESULT_H
#define TS_RESULT_H

#include "schedule.h"

/* How a collective ran (engine's choice), for timelines. */
typedef enum ts_algorithm {
  TS_ALG_RING,
  TS_ALG_HIERARCHICAL,
  TS_ALG_PAIRWISE,
  TS_ALG_TREE
} ts_algorithm;
extern const char *const ts_algorithm_names[]; /* "ring", "hierarchical", "pairwise", "tree" */

/* One event of a traced rank, as it played out (timelines). */
typedef struct ts_span {
  double start_s, end_s;
  double sent_s; /* TS_EV_RECV: when the sender posted the message */
  int block, event; /* where the event sits in the rank's program */
  int algorithm; /* TS_EV_COLL: ts_algorithm */
} ts_span;

typedef struct ts_rank_result {
  double finish_s; /* when the rank's program ended */
  double time_s[TS_CAT_COUNT]; /* sums to the iteration time */
  double flops; /* matrix FLOPs executed */
  double *block_end_s; /* [block]: when each block ended, if recorded (else NULL) */
  /* The categories and FLOPs as they stood when each of two blocks ended (the engine's
   * snapshot_blocks; periodic play, sim/simulate.c), else 0. */
  double snapshot_time_s[2][TS_CAT_COUNT], snapshot_flops[2];
  ts_span *spans; /* traced ranks only: every event but sends, in order */
  long n_spans, cap_spans;
} ts_rank_result;

typedef struct ts_sim_result {
  double iteration_s; /* the last rank's finish */
  long n_ranks;
  ts_rank_result *ranks;
  long n_events; /* events played */
  long n_merged_events; /* of which played in merged runs (sim/engine/engine.c) */
  long n_transfers; /* SimGrid transfers */
  long n_links; /* SimGrid links created */
  long n_ring_collectives, n_hierarchical_collectives, n_tree_collectives; /* by algorithm */
  long n_routes;
  long n_played_ranks; /* ranks with an actor from the start; the others shared a player's
                          timeline (under a hand-over, up to it) */
  /* How: "node play", "rail play", "node play, then every rank" (sim/engine/engine.h); NULL:
   * each its own. */
  const char *shortcut;
  /* Periodic play (sim/simulate.c): the microbatches a pipeline played, the others taken at the
   * steady state's measured period; 0: every microbatch played. */
  long played_microbatches;
  double periodic_error_s; /* periodic play's error estimate, from the period's drift */
  double periodic_declined_error_s; /* the estimate of a periodic play declined (0: none) */
  double periodic_declined_iteration_s; /* and the iteration it carried on to */
} ts_sim_result;

void ts_sim_result_fini(ts_sim_result *res);
/* Gives rank r the results of `from`, which played the same program of n_blocks blocks
 * (block ends and, when with_spans, the spans copied). */
void ts_rank_result_share(ts_rank_result *to, const ts_rank_result *from, int n_blocks,
                          bool with_spans);

#endif
