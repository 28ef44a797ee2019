/* sweep: `trainsim sweep SPEC.yaml [-j N] [--out DIR]`, a what-if study over any axes.
 *
 * The spec names a workload (and optionally a platform and a fidelity), values every point
 * shares (`fixed`), and the points: a `grid` whose axes are crossed (the first slowest) or a
 * list of `points`. An axis is a layout flag of `run` (gpus, tp, pp, dp, cp, ep, etp,
 * micro_batch_size, global_batch_size, schedule, virtual_stages, recompute, zero_stage,
 * sequence_parallel), `workload` or `platform` (a file), or any key of either file by its
 * path (a --set override: network.link.bandwidth, model.num_layers).
 *
 *   name: nic-what-if
 *   workload: workloads/gpt-22b.yaml
 *   fixed: {gpus: 512}
 *   grid:
 *     tp: [2, 4]
 *     network.global_link.bandwidth: [25GBps, 50GBps]
 *
 * Every point is checked before any runs (an input error names the spec's line). Points run
 * as child processes, N at a time (-j, default: the machine's cores). Each finished point is
 * kept in DIR/points/<digest>.csv, the digest covering everything its result depends on (the
 * binary, the spec's values for it, the workload, platform and kernel table files), so a rerun
 * reuses finished points and SIGINT loses only the points running. DIR/sweep.csv merges them
 * (one row per point, in spec order); --report adds report.html.
 *
 * Beyond one machine: --slurm writes DIR/sweep.slurm, a job array whose tasks each run their
 * share of the points (--array-task I --array-tasks K: point i when i mod K = I) into
 * DIR/points/, and --collect merges what has finished into the same sweep.csv a local run
 * writes.
 */
#ifndef TS_SWEEP_H
#define TS_SWEEP_H

#include "args.h"

/* `sweep` in the command table (args.h). */
extern const ts_command ts_sweep_command;

int ts_sweep_main(int argc, char **argv);

#endif
