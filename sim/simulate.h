/* simulate: the job pipeline, the one way from a platform and a resolved workload to a simulated
 * iteration. Every command that simulates (run, the study pool behind scale, sweep and explain,
 * search's estimates, bench) comes through here, so that they check, build, place and play a
 * job the same way:
 *
 *   inputs fit the platform -> memory fits HBM -> schedule (per-rank programs) -> event limit
 *   -> placement (rank -> GPU) -> traced ranks -> engine chosen by fidelity -> result
 *
 * It returns results and errors; it prints nothing and chooses no exit status. SimGrid cannot
 * be re-initialised: a process simulates at most once at a SimGrid fidelity (the study pool
 * forks a process per point); the analytic fidelity may run any number of times.
 */
#ifndef TS_SIMULATE_H
#define TS_SIMULATE_H

#include <stdbool.h>

#include "../workloads/result.h"
#include "../workloads/schedule.h"
#include "../workloads/workload.h"
#include "engine/engine.h"
#include "network/placement.h"
#include "network/platform.h"

/* A layout whose most loaded stage does not fit in HBM (an input error, told apart so that a
 * caller can show the memory table). */
#define TS_SIMULATE_NO_FIT (-2)

/* Periodic play (below). */
typedef enum ts_periodic { TS_PERIODIC_OFF, TS_PERIODIC_EXACT, TS_PERIODIC_ALWAYS } ts_periodic;

typedef struct ts_simulate_opts {
  /* The engine's options. fidelity, collectives, is_playing_every_rank, the progress and block
   * callbacks pass through; overlap_slowdown < 0 takes the platform's
   * collectives.overlap_slowdown; is_traced and representative are the pipeline's (below). */
  ts_engine_opts engine;
  ts_placement placement;
  long seed; /* of a random placement */
  /* Analytic fidelity only: one pipeline (tensor rank 0 of replica 0) plays for all, the others
   * sharing its timeline: exact but for route latencies when the job is symmetric, and much
   * faster (search's and explain's estimates; docs/performance.md). */
  bool is_one_pipeline;
  bool ignore_memory; /* simulate a layout that does not fit (run's --ignore-memory) */
  ts_periodic periodic; /* periodic play (below; ts_simulate_defaults: TS_PERIODIC_EXACT) */
  bool is_forced; /* no event limit (run's --force) */
  /* Spans kept for a timeline (of the ranks timeline_ranks names: "pipeline", the default;
   * "replica"; "all"; or ranks and node:N separated by commas) and for a pipeline Gantt chart
   * (tensor rank 0 of replica 0, every stage). */
  bool is_timeline, is_gantt;
  const char *timeline_ranks;
  /* Called once the job's events are counted, before the platform is built (NULL: never). */
  void (*on_start)(void *ctx, double total_events);
  void *start_ctx;
  /* Called with start_ctx when periodic play is declined by default, before every microbatch
   * plays: the iteration it carried on to and its error estimate (NULL: never). */
  void (*on_periodic_declined)(void *ctx, double iteration_s, double error_s);
} ts_simulate_opts;

/* The options every command starts from: hybrid, contiguous placement (seed 1), the library's
 * own algorithm choice, the platform's overlap slowdown. */
ts_simulate_opts ts_simulate_defaults(void);

typedef struct ts_simulation {
  ts_job job; /* the schedule, each rank placed on its GPU */
  ts_sim_result result;
  /* [rank]: the ranks a timeline shows (is_timeline), else NULL */
  bool *in_timeline;
  double n_events; /* events the playing ranks have (counted before playing) */
  double overlap_slowdown; /* the one the engine applied */
  /* Compute time x this: the job's slowest GPU against a typical one (gpu.speed_spread) */
  double slowest_gpu_slowdown;
} ts_simulation;

/* Checks that need the workload and the platform together: the layout's GPUs exist, the GPU has
 * a peak for the workload's precision and FP8 tensor cores where the workload asks for them.
 * 0, or -1 with an error at the key involved. */
int ts_simulate_check(const ts_platform *pf, const ts_workload *wl, ts_err *err);

/* The part of ts_simulate_check that a layout search needs first (its memory verdicts price the
 * library's buffers at that release): the workload's collective-library release is one trainsim
 * models on pf. 0, or -1 with an error at the stack key. */
int ts_simulate_check_ccl_version(const ts_platform *pf, const ts_workload *wl, ts_err *err);

/* The release of pf's collective library the run prices (the workload stack's rccl_version or
 * nccl_version, whichever pf runs, else the platform's), and where the stack said it. */
long ts_simulate_ccl_version(const ts_platform *pf, const ts_workload *wl, ts_loc *at);

/* Periodic play: a 1F1B pipeline of many microbatches settles into a steady state in which
 * every rank repeats one forward and one backward per period. At the SimGrid fidelities (no
 * timeline, no FP8) the job is played with p + 16 microbatches a pipeline in a child process,
 * and each rank's finish, categories and FLOPs are carried on to all microbatches at its own
 * rate between two snapshots 8 periods apart (data-parallel replicas are separate pipelines
 * until their gradients are reduced, and may run at different periods).
 * result.periodic_error_s estimates the error from how the ranks' periods drift across the
 * window: exact where the steady state repeats exactly, conservative where it wanders.
 * TS_PERIODIC_EXACT (the default) tries it where the played part is at most a quarter of the
 * microbatches and keeps it only where the steady state repeats: the estimate within
 * TS_PERIODIC_EXACT_TOLERANCE of the iteration; otherwise, and where its child process ends
 * without its results, every microbatch plays (result.periodic_declined_error_s: the declined
 * estimate). TS_PERIODIC_ALWAYS (run's --periodic) keeps whatever the estimate;
 * TS_PERIODIC_OFF (--play-every-microbatch) never tries. result.played_microbatches says it
 * applied (0: every microbatch played).
 * docs/performance.md has the agreement measured against playing every microbatch. */
#define TS_PERIODIC_EXACT_TOLERANCE 1e-6

/* Simulates one iteration of wl on pf: 0 and *out filled (free with ts_simulate_fini);
 * TS_SIMULATE_NO_FIT when a stage does not fit in HBM (the error gives its figures and what
 * would make it fit); -1 with an error on any other input problem (a layout the schedule
 * refuses, more events than the fidelity plays in about an hour, a placement the machine cannot
 * give, a bad timeline_ranks, a timeline too large). */
int ts_simulate_workload(const ts_platform *pf, const ts_workload *wl, const ts_simulate_opts *opts,
                         ts_simulation *out, ts_err *err);

/* Plays a job built elsewhere (the benchmarks' collectives and patterns), which the caller
 * gives up (its rank_gpu places it; NULL: rank r on GPU r): no memory check or event limit.
 * 0 and *out, or -1 with an error. */
int ts_simulate_job(const ts_platform *pf, ts_job *job, const ts_simulate_opts *opts,
                    ts_simulation *out, ts_err *err);

void ts_simulate_fini(ts_simulation *s);

/* The run's reliability figures (workloads/reliability.h) on pf: the parts its placement
 * (job->rank_gpu) stands on, at iteration_s a step; train_s its time to train, 0 if none. */
void ts_simulate_reliability(const ts_platform *pf, const ts_workload *wl, const ts_job *job,
                             double iteration_s, double train_s, ts_reliability *out);

#endif
