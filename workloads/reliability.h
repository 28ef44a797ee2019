/* reliability: what the machine delivers once its parts fail: interruptions, checkpoints,
 * restarts, goodput.
 *
 * Interruptions. Every part the job stands on fails independently at the platform's rate
 * (reliability.failure_rates: per GPU, per node, per NIC link, per switch; field studies of
 * other clusters, cited in the platform files), and any failure stops the job (synchronous
 * training): the job's interruption rate is the sum over its parts,
 *     lambda = G r_gpu + N r_node + L r_link + S r_switch,   M = 1 / lambda,
 * G its GPUs, N its nodes, L their NIC links, S the switches those links hang off (the
 * dragonfly switch or fat-tree leaf; adaptive routing and spines route around the others).
 *
 * Checkpoints. What a framework saves (Megatron-LM's distributed optimizer, DeepSpeed): the
 * weights in the model's precision and the fp32 master weights and Adam moments, not the
 * gradients: 2 + 12 = 14 bytes a parameter in mixed precision (memory.h's states less the
 * gradients). Written by every rank holding a shard (ZeRO-1 and up: all of them; without
 * ZeRO, the first data-parallel replica) at the file system's aggregate bandwidth or what the
 * writing nodes carry, whichever is less; read back at restart by every rank (each replica
 * reads the weights). Blocking: training waits for the write. Asynchronous (PyTorch DCP,
 * Megatron-Core's async save): training waits only for the copy of the rank's shard to host
 * memory; the write runs behind, so a failure loses the work since the checkpoint before the
 * last write finished (the write's time joins the rework) and the interval cannot be shorter
 * than the write.
 *
 * Goodput: useful training over wall time, from Daly's complete model of exponential failures
 * (J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
 * FGCS 22(3), 2006, eq. 9 summed over segments): with useful work tau between checkpoints,
 * checkpoint cost delta and restart R (relaunch plus the checkpoint read),
 *     wall / useful = M e^(R/M) (e^((tau + delta)/M) - 1) / tau.
 * The interval is Daly's optimum (his eq. 37: sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + delta/18M]
 * - delta for delta < 2M, else M), rounded to the better whole number of iterations (a
 * framework checkpoints between iterations, every --save-interval), unless the workload gives
 * one (checkpoint.interval).
 */
#ifndef TS_RELIABILITY_H
#define TS_RELIABILITY_H

#include <stdbool.h>
#include <stdint.h>

#include "workload.h"

/* How often a machine's parts fail and how it checkpoints and restarts: a platform's
 * `reliability` section (sim/network/platform.c reads it). Absent: not modelled. */
typedef struct ts_reliability_config {
  bool is_set;
  double gpu_rate, node_rate, link_rate, switch_rate; /* failures a second, each part */
  double restart_s; /* interruption to training again: detection, rescheduling, start-up */
  double write_Bps, read_Bps; /* the file system's aggregate checkpoint bandwidths */
  double node_Bps; /* what one node moves to or from it */
  double host_Bps; /* one GPU's copy to host memory (asynchronous checkpoints); 0: not given */
} ts_reliability_config;

typedef enum ts_failing_part {
  TS_PART_GPU,
  TS_PART_NODE,
  TS_PART_LINK,
  TS_PART_SWITCH,
  TS_PART_COUNT
} ts_failing_part;
extern const char *const ts_failing_part_names[]; /* "gpu", "node", "nic_link", "switch" */

typedef struct ts_reliability {
  bool is_modelled; /* the platform has a reliability section */
  long parts[TS_PART_COUNT]; /* how many of each the job stands on */
  double interruptions_per_s[TS_PART_COUNT];
  double interruptions_per_day; /* all parts */
  double mtbf_s; /* the job's mean time between interruptions */
  double checkpoint_bytes; /* all ranks together */
  long writer_nodes;
  double checkpoint_write_s, checkpoint_read_s;
  double checkpoint_blocking_s; /* what training waits for at each checkpoint */
  bool is_async, is_interval_given;
  long checkpoint_interval_iterations;
  double checkpoint_interval_s; /* useful training between checkpoints */
  double restart_s; /* the platform's relaunch time */
  double goodput; /* useful training / wall time */
  /* 1 - goodput split by cause (first-order shares, scaled to add up): time writing
   * checkpoints, work redone after an interruption, restarts (relaunch and read) */
  double lost_checkpoints, lost_rework, lost_restarts;
  double train_s; /* time to train with interruptions (0 when the workload gives no tokens) */
} ts_reliability;

/* The reliability figures of wl at iteration_s a step (train_s: its time to train without
 * interruptions, 0 if not given) on a machine of config c, the job standing on parts[] (sim/
 * network/placement.h counts them) with rank_gpu placing its ranks (NULL: GPU = rank) on nodes
 * of gpus_per_node. out->is_modelled is false when c is not set. */
void ts_reliability_compute(const ts_reliability_config *c, const ts_workload *wl,
                            const long parts[TS_PART_COUNT], const long *rank_gpu,
                            int gpus_per_node, double iteration_s, double train_s,
                            ts_reliability *out);

/* Daly's optimum useful time between checkpoints (above) for checkpoint cost delta_s and mean
 * time between interruptions mtbf_s. */
double ts_reliability_daly_interval_s(double delta_s, double mtbf_s);

/* Wall time over useful time by Daly's complete model (above). */
double ts_reliability_wall_per_useful(double tau_s, double delta_s, double restart_s,
                                      double mtbf_s);

/* A seeded discrete-event run of the same model: useful_s of training in segments of tau_s
 * each followed by a checkpoint of delta_s, interruptions drawn as a Poisson process of mean
 * gap mtbf_s (also during restarts); each costs the segment under way and a restart of
 * restart_s. Returns the wall time. The same seed gives the same result. */
double ts_reliability_sample_wall_s(double useful_s, double tau_s, double delta_s, double restart_s,
                                    double mtbf_s, uint64_t seed);

#endif
