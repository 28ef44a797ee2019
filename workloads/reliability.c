/* reliability: see reliability.h. */
#include "reliability.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cost.h"
#include "layout.h"
#include "memory.h"

const char *const ts_failing_part_names[] = {"gpu", "node", "nic_link", "switch", NULL};

double ts_reliability_daly_interval_s(double delta_s, double mtbf_s) {
  if (delta_s >= 2 * mtbf_s)
    return mtbf_s;
  double x = delta_s / (2 * mtbf_s);
  return sqrt(2 * delta_s * mtbf_s) * (1 + sqrt(x) / 3 + x / 9) - delta_s;
}

double ts_reliability_wall_per_useful(double tau_s, double delta_s, double restart_s,
                                      double mtbf_s) {
  return mtbf_s * exp(restart_s / mtbf_s) * expm1((tau_s + delta_s) / mtbf_s) / tau_s;
}

static int by_value(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Sorts ids[0..n) and returns how many distinct values they hold. */
static long distinct(long *ids, long n) {
  qsort(ids, (size_t)n, sizeof *ids, by_value);
  long k = 0;
  for (long i = 0; i < n; i++)
    k += i == 0 || ids[i] != ids[i - 1];
  return k;
}

/* Nodes holding a rank that writes a shard of the checkpoint: every rank under ZeRO-1 and up
 * (each writes its optimizer shard), else the first data-parallel replica. */
static long writer_nodes(const ts_workload *wl, const long *rank_gpu, int gpus_per_node) {
  long *ids = ts_alloc((size_t)wl->n_gpus, sizeof *ids);
  long n = 0;
  for (long r = 0; r < wl->n_gpus; r++)
    if (wl->zero_stage >= 1 || ts_layout_coords(wl, r).dp == 0)
      ids[n++] = (rank_gpu != NULL ? rank_gpu[r] : r) / gpus_per_node;
  long count = distinct(ids, n);
  free(ids);
  return count;
}

/* Goodput of a checkpoint after every tau_s of training. */
static double goodput_at(double tau_s, double delta_s, double restart_s, double mtbf_s) {
  return 1 / ts_reliability_wall_per_useful(tau_s, delta_s, restart_s, mtbf_s);
}

void ts_reliability_compute(const ts_reliability_config *c, const ts_workload *wl,
                            const long parts[TS_PART_COUNT], const long *rank_gpu,
                            int gpus_per_node, double iteration_s, double train_s,
                            ts_reliability *out) {
  memset(out, 0, sizeof *out);
  if (!c->is_set)
    return;
  out->is_modelled = true;
  memcpy(out->parts, parts, sizeof out->parts);
  double n_nodes = (double)parts[TS_PART_NODE];
  const double rate[] = {c->gpu_rate, c->node_rate, c->link_rate, c->switch_rate};
  double lambda = 0;
  for (int p = 0; p < TS_PART_COUNT; p++) {
    out->interruptions_per_s[p] = (double)out->parts[p] * rate[p];
    lambda += out->interruptions_per_s[p];
  }
  out->interruptions_per_day = lambda * 86400;
  out->mtbf_s = 1 / lambda; /* lambda > 0: the platform loader requires a rate above zero */

  /* What is saved: the weights and the fp32 master weights and moments, not the gradients
   * (DeepSpeed's sharded 16 B holds an fp32 gradient partition). */
  ts_state_bytes per = ts_memory_state_bytes(wl);
  double per_param = per.weight + per.sharded - (per.is_deepspeed ? 4.0 : 0.0);
  double params = ts_cost_model_params(wl);
  out->checkpoint_bytes = params * per_param;
  out->writer_nodes = writer_nodes(wl, rank_gpu, gpus_per_node);
  out->checkpoint_write_s =
      out->checkpoint_bytes / fmin(c->write_Bps, (double)out->writer_nodes * c->node_Bps);
  /* Every replica reads the weights back; the optimizer states are read once (ZeRO shards
   * them) or by every replica. */
  double dp = (double)ts_workload_dp_cp(wl);
  double read_bytes =
      params * (per.weight * dp + (per_param - per.weight) * (wl->zero_stage >= 1 ? 1.0 : dp));
  out->checkpoint_read_s = read_bytes / fmin(c->read_Bps, n_nodes * c->node_Bps);
  out->restart_s = c->restart_s;
  out->is_async = wl->is_checkpoint_async;
  double rework_extra = 0, min_tau = iteration_s;
  if (out->is_async) {
    double shard = out->checkpoint_bytes / (double)wl->n_gpus;
    out->checkpoint_blocking_s = c->host_Bps > 0 ? shard / c->host_Bps : 0;
    rework_extra = out->checkpoint_write_s;
    min_tau = fmax(min_tau, out->checkpoint_write_s);
  } else {
    out->checkpoint_blocking_s = out->checkpoint_write_s;
  }
  double delta = out->checkpoint_blocking_s, m = out->mtbf_s;
  double restart = c->restart_s + out->checkpoint_read_s + rework_extra;

  long k = wl->checkpoint_interval;
  out->is_interval_given = k > 0;
  if (k <= 0) {
    /* Daly's optimum, then the better of the whole numbers of iterations around it that
     * leave the write time to finish (asynchronous). */
    double tau = fmax(ts_reliability_daly_interval_s(delta, m), min_tau);
    /* at most 1e15 iterations (tau can be years when failures are rare) */
    double lo_it = fmin(1e15, fmax(1, fmax(floor(tau / iteration_s), ceil(min_tau / iteration_s))));
    long lo = (long)lo_it, hi = lo + 1;
    k = goodput_at((double)hi * iteration_s, delta, restart, m) >
                goodput_at((double)lo * iteration_s, delta, restart, m)
            ? hi
            : lo;
  }
  out->checkpoint_interval_iterations = k;
  double tau = (double)k * iteration_s;
  out->checkpoint_interval_s = tau;
  out->goodput = goodput_at(tau, delta, restart, m);
  /* First-order shares of the loss (checkpoint time per useful time; per interruption half a
   * segment redone and a restart), scaled to the exact loss. */
  double ck = delta / tau, redo = ((tau + delta) / 2 + rework_extra) / m,
         rs = (c->restart_s + out->checkpoint_read_s) / m, sum = ck + redo + rs;
  double lost = 1 - out->goodput;
  if (sum > 0) {
    out->lost_checkpoints = lost * ck / sum;
    out->lost_rework = lost * redo / sum;
    out->lost_restarts = lost * rs / sum;
  }
  out->train_s = train_s > 0 ? train_s / out->goodput : 0;
}

/* splitmix64, as sim/network/placement.c: the same draws everywhere. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Time to the next interruption: exponential with mean mtbf_s. */
static double next_failure_s(uint64_t *state, double mtbf_s) {
  double u = ((double)(next_random(state) >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
  return -mtbf_s * log(u);
}

double ts_reliability_sample_wall_s(double useful_s, double tau_s, double delta_s, double restart_s,
                                    double mtbf_s, uint64_t seed) {
  uint64_t state = seed;
  double wall = 0, done = 0, segment = tau_s + delta_s;
  while (done < useful_s) {
    double fail = next_failure_s(&state, mtbf_s);
    if (fail >= segment) { /* the segment and its checkpoint complete */
      wall += segment;
      done += tau_s;
      continue;
    }
    wall += fail; /* the segment is lost; restart, which may itself be interrupted */
    for (;;) {
      double during = next_failure_s(&state, mtbf_s);
      if (during >= restart_s) {
        wall += restart_s;
        break;
      }
      wall += during;
    }
  }
  return wall;
}
