/* schedule: pass orders of GPipe, 1F1B, interleaved 1F1B and zb-h1, and the events of stage
 * templates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../workloads/cost.h"
#include "../../workloads/layout.h"
#include "../../workloads/memory.h"
#include "../../workloads/schedule.h"
#include "fixtures.h"

/* A GPU priced by the roofline alone (no kernel table), 128 x 128 GEMM tiles, 100 units. */
static ts_gpu roofline_gpu(double peak_flops_per_s, double hbm_Bps, double gemm_ceiling) {
  ts_gpu g = {0};
  g.peak_flops_per_s[TS_PREC_BF16] = peak_flops_per_s;
  g.hbm_Bps = hbm_Bps;
  g.gemm_ceiling = gemm_ceiling;
  g.gemm_tile_m = g.gemm_tile_n = 128;
  g.n_compute_units = 100;
  return g;
}

/* 100 TFLOPS, 1 TB/s, GEMMs at peak; and MI250X-like figures. */
static ts_gpu plain_gpu(void) {
  return roofline_gpu(1e14, 1e12, 1);
}

static ts_gpu mi250x_like(void) {
  return roofline_gpu(191.5e12, 1.6e12, 0.767);
}

static void test_1f1b_order(void **state) {
  (void)state;
  long steps[16];
  ts_schedule_order(TS_SCHED_1F1B, 4, 1, 0, 8, steps);
  const long stage0[16] = {0, 1, 2, 3, -1, 4, -2, 5, -3, 6, -4, 7, -5, -6, -7, -8};
  assert_memory_equal(steps, stage0, sizeof stage0);
  ts_schedule_order(TS_SCHED_1F1B, 4, 1, 3, 8, steps);
  for (long k = 0; k < 16; k++) /* the last stage alternates from the start */
    assert_int_equal(steps[k], k % 2 == 0 ? k / 2 : -1 - k / 2);
  /* Every stage: each microbatch forward before its backward, at most p - i in flight. */
  for (long s = 0; s < 4; s++) {
    ts_schedule_order(TS_SCHED_1F1B, 4, 1, s, 8, steps);
    long in_flight = 0, peak = 0, seen_f = 0, seen_b = 0;
    for (int k = 0; k < 16; k++) {
      if (steps[k] >= 0) {
        assert_int_equal(steps[k], seen_f++);
        in_flight++;
      } else {
        assert_int_equal(-1 - steps[k], seen_b++);
        assert_true(seen_b <= seen_f);
        in_flight--;
      }
      peak = in_flight > peak ? in_flight : peak;
    }
    assert_int_equal(peak, 4 - s);
  }
  ts_schedule_order(TS_SCHED_1F1B, 8, 1, 0, 3, steps); /* fewer microbatches than stages */
  const long short_run[6] = {0, 1, 2, -1, -2, -3};
  assert_memory_equal(steps, short_run, sizeof short_run);
}

static void test_gpipe_order(void **state) {
  (void)state;
  long steps[6];
  ts_schedule_order(TS_SCHED_GPIPE, 2, 1, 1, 3, steps);
  const long expect[6] = {0, 1, 2, -1, -2, -3};
  assert_memory_equal(steps, expect, sizeof expect);
}

/* Interleaved, p = 2, v = 2, m = 2 (steps: microbatch x v + chunk, negative backward). Stage 0
 * warms up with 2 (p - 1) + (v - 1) p = 4 = all forwards: F0c0 F1c0 F0c1 F1c1, then backwards
 * chunk 1 first; stage 1 warms up with 2: F0c0 F1c0, then pairs F0c1 B0c1, F1c1 B1c1. */
static void test_interleaved_order(void **state) {
  (void)state;
  long steps[8];
  ts_schedule_order(TS_SCHED_INTERLEAVED, 2, 2, 0, 2, steps);
  const long stage0[8] = {0, 2, 1, 3, -2, -4, -1, -3};
  assert_memory_equal(steps, stage0, sizeof stage0);
  ts_schedule_order(TS_SCHED_INTERLEAVED, 2, 2, 1, 2, steps);
  const long stage1[8] = {0, 2, 1, -2, 3, -4, -1, -3};
  assert_memory_equal(steps, stage1, sizeof stage1);
  /* p = 4, v = 3, m = 8: every (microbatch, chunk) once each way, a chunk's backward after its
   * forward; the peak of chunks in flight is the warm-up plus one. */
  long big[2 * 8 * 3];
  for (long s = 0; s < 4; s++) {
    ts_schedule_order(TS_SCHED_INTERLEAVED, 4, 3, s, 8, big);
    int fwd[24] = {0}, bwd[24] = {0};
    long in_flight = 0, peak = 0;
    for (int k = 0; k < 48; k++) {
      long unit = big[k] >= 0 ? big[k] : -1 - big[k];
      assert_true(unit >= 0 && unit < 24);
      if (big[k] >= 0) {
        fwd[unit]++;
        in_flight++;
      } else {
        assert_int_equal(fwd[unit], 1);
        bwd[unit]++;
        in_flight--;
      }
      peak = in_flight > peak ? in_flight : peak;
    }
    for (int u = 0; u < 24; u++)
      assert_true(fwd[u] == 1 && bwd[u] == 1);
    assert_int_equal(peak, 2 * (4 - s - 1) + 2 * 4 + 1);
    assert_int_equal(ts_schedule_step_micro(big[0], 3), 0);
  }
  char name[16];
  ts_schedule_step_name(-1 - (12 * 3 + 1), 3, 0, name, sizeof name);
  assert_string_equal(name, "B12c1");
  ts_schedule_step_name(12, 1, 'R', name, sizeof name);
  assert_string_equal(name, "R12");
}

static int count(const ts_block *b, ts_event_kind kind, int category) {
  int n = 0;
  for (int e = 0; e < b->n_events; e++)
    n += b->events[e].kind == kind && (category < 0 || b->events[e].category == category);
  return n;
}

/* zb-h1 (Qi et al., ICLR 2024, ZB-H1): 1F1B's forwards and B's, stage i with i weight
 * gradients deferred; F before B before W for each microbatch; at most p microbatches started
 * and not finished (F done, W not) on any stage; every W at the end of the last stage. */
static void test_zb_h1_order(void **state) {
  (void)state;
  enum { P = 4, M = 8 };
  long steps[3 * M];
  ts_schedule_order(TS_SCHED_ZB_H1, P, 1, 0, M, steps);
  const long W = TS_STEP_W, B = TS_STEP_BI;
  const long stage0[3 * M] = {0,     1,     2,     3,     B + 0, W + 0, 4,     B + 1,
                              W + 1, 5,     B + 2, W + 2, 6,     B + 3, W + 3, 7,
                              B + 4, W + 4, B + 5, W + 5, B + 6, W + 6, B + 7, W + 7};
  assert_memory_equal(steps, stage0, sizeof stage0);
  ts_schedule_order(TS_SCHED_ZB_H1, P, 1, P - 1, M, steps);
  const long last[3 * M] = {0,     B + 0, 1,     B + 1, 2,     B + 2, 3,     B + 3,
                            W + 0, 4,     B + 4, W + 1, 5,     B + 5, W + 2, 6,
                            B + 6, W + 3, 7,     B + 7, W + 4, W + 5, W + 6, W + 7};
  assert_memory_equal(steps, last, sizeof last);
  for (long s = 0; s < P; s++) {
    ts_schedule_order(TS_SCHED_ZB_H1, P, 1, s, M, steps);
    long f = 0, b = 0, w = 0, started = 0, deferred = 0;
    for (int k = 0; k < 3 * M; k++) {
      char pass = ts_schedule_step_pass(steps[k]);
      long micro = ts_schedule_step_micro(steps[k], 1);
      if (pass == 'F')
        assert_int_equal(micro, f++);
      else if (pass == 'B')
        assert_int_equal(micro, b++);
      else
        assert_int_equal(micro, w++);
      assert_true(w <= b && b <= f);
      started = f - w > started ? f - w : started;
      deferred = b - w > deferred ? b - w : deferred;
    }
    assert_int_equal(f + b + w, 3 * M);
    assert_int_equal(started, P);
    assert_int_equal(deferred, s + 1); /* i deferred, and the latest B's until its W runs */
  }
  char name[16];
  ts_schedule_step_name(TS_STEP_W + 12, 1, 0, name, sizeof name);
  assert_string_equal(name, "W12");
  ts_schedule_order(TS_SCHED_ZB_H1, 8, 1, 2, 3, steps); /* fewer microbatches than stages */
  const long few[9] = {0, 1, 2, B + 0, W + 0, B + 1, W + 1, B + 2, W + 2};
  assert_memory_equal(steps, few, sizeof few);
}

/* dualpipe (DualPipe.step): every rank runs each direction's m / 2 microbatches once forward
 * and once backward, in order, a W after its input-gradient B; ranks r and p - 1 - r mirror
 * each other with the directions swapped; the main step pairs forwards with backwards. */
static void test_dualpipe_order(void **state) {
  (void)state;
  enum { P = 8, M = 20 };
  long steps[3 * 2 * M], mirror[3 * 2 * M];
  for (long r = 0; r < P; r++) {
    long n = ts_schedule_order(TS_SCHED_DUALPIPE, P, 2, r, M, steps);
    long f[2] = {0, 0}, b[2] = {0, 0}, w = 0, pending[2 * M], n_pending = 0, pairs = 0;
    for (long k = 0; k < n; k++) {
      char pass = ts_schedule_step_pass(steps[k]);
      long c = ts_schedule_step_chunk(steps[k], 2), micro = ts_schedule_step_micro(steps[k], 2);
      if (pass == 'F' || pass == 'X')
        assert_int_equal(micro, f[c]++);
      if (pass == 'X') {
        long bi = (steps[k] - TS_STEP_FB) & ((1L << TS_STEP_FB_SHIFT) - 1);
        assert_int_equal(bi % 2, 1 - c); /* the other direction's backward */
        assert_int_equal(bi / 2, b[bi % 2]++);
        assert_true(b[bi % 2] <= f[bi % 2]);
        pairs++;
      }
      if (pass == 'B') {
        assert_int_equal(micro, b[c]++);
        assert_true(b[c] <= f[c]);
        if (steps[k] >= TS_STEP_BI)
          pending[n_pending++] = steps[k] - TS_STEP_BI;
      }
      if (pass == 'W')
        assert_int_equal(steps[k] - TS_STEP_W, pending[w++]); /* first in, first out */
    }
    for (int c = 0; c < 2; c++) {
      assert_int_equal(f[c], M / 2);
      assert_int_equal(b[c], M / 2);
    }
    assert_int_equal(w, n_pending);
    assert_true(pairs >= M - 2 * P); /* the main step's */
    long nm = ts_schedule_order(TS_SCHED_DUALPIPE, P, 2, P - 1 - r, M, mirror);
    assert_int_equal(nm, n);
    for (long k = 0; k < n; k++) { /* the same passes, the chunks swapped */
      assert_int_equal(ts_schedule_step_pass(mirror[k]), ts_schedule_step_pass(steps[k]));
      assert_int_equal(ts_schedule_step_chunk(mirror[k], 2),
                       1 - ts_schedule_step_chunk(steps[k], 2));
    }
  }
  char name[32];
  ts_schedule_step_name(TS_STEP_FB + (6L << TS_STEP_FB_SHIFT) + 3, 2, 0, name, sizeof name);
  assert_string_equal(name, "F3c0+B1c1");
}

/* zb-v (PyTorch's ScheduleZBVZeroBubble): every rank runs each of its two chunks' m
 * microbatches forward, input gradients and weight gradients in order, chunk 1's F of a
 * microbatch after chunk 0's on the last rank (the V's turn, on one rank), all W's in; the
 * first rank holds the embedding and the loss. */
static void test_zbv_order(void **state) {
  (void)state;
  enum { P = 4, M = 10 };
  long steps[3 * 2 * M];
  for (long r = 0; r < P; r++) {
    long n = ts_schedule_order(TS_SCHED_ZB_V, P, 2, r, M, steps);
    assert_int_equal(n, 3 * 2 * M);
    long f[2] = {0, 0}, b[2] = {0, 0}, w[2] = {0, 0};
    for (long k = 0; k < n; k++) {
      char pass = ts_schedule_step_pass(steps[k]);
      long c = ts_schedule_step_chunk(steps[k], 2), micro = ts_schedule_step_micro(steps[k], 2);
      long *count = pass == 'F' ? f : pass == 'B' ? b : w;
      assert_int_equal(micro, count[c]++);
      assert_true(w[c] <= b[c] && b[c] <= f[c]);
      if (r == P - 1 && pass == 'F' && c == 1)
        assert_true(f[0] > micro); /* the turn: chunk 0's forward first */
    }
    for (int c = 0; c < 2; c++)
      assert_true(f[c] == M && b[c] == M && w[c] == M);
  }
  ts_workload wl = test_workload(16, 1024, 16, 512, 1000, 1, 4, 1, 16, 1);
  wl.schedule = TS_SCHED_ZB_V;
  assert_true(ts_workload_stage_has_embedding(&wl, 0) && ts_workload_stage_has_head(&wl, 0));
  assert_false(ts_workload_stage_has_head(&wl, 3));
  assert_int_equal(ts_workload_stage_layers(&wl, 3), 4);
  assert_int_equal(ts_workload_chunk_first_layer(&wl, 3, 1), 4 * 2); /* virtual stage 4 of 8 */
  assert_int_equal(ts_workload_chunk_first_layer(&wl, 0, 1), 14); /* the last, 7 */
}

/* zb-h1's B and W passes together hold exactly the backward pass's compute; W holds no
 * communication but the data-parallel buckets, B all the backward's tensor-parallel
 * collectives; memory: stage 0 as under 1F1B, later stages plus their deferred W's inputs. */
static void test_zb_h1_templates(void **state) {
  (void)state;
  ts_gpu g = plain_gpu();
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 2, 4, 2, 16, 1);
  wl.dp_bucket_bytes = 40e6;
  wl.zero_stage = 1;
  ts_job ref, zb;
  ts_err err = {0};
  assert_int_equal(ts_schedule_build(&wl, &g, &ref, &err), 0);
  ts_workload zwl = wl;
  zwl.schedule = TS_SCHED_ZB_H1;
  assert_int_equal(ts_schedule_build(&zwl, &g, &zb, &err), 0);
  long m = 16 / 2, rank = 2 * 2 * 1; /* tp 0, dp 0, stage 1 */
  const ts_program *p1 = &ref.programs[rank], *pz = &zb.programs[rank];
  assert_int_equal(pz->n_blocks, 3 * m + 1);
  long steps[3 * 8];
  double bwd_s = 0, b_s = 0, w_s = 0;
  int tp_b = 0, tp_ref = 0, dp_w = 0, dp_ref = 0;
  ts_schedule_order(TS_SCHED_1F1B, 4, 1, 1, m, steps); /* 1F1B's backward blocks */
  for (int k = 0; k < 2 * (int)m; k++)
    if (steps[k] < 0) {
      const ts_block *blk = &p1->blocks[k];
      for (int e = 0; e < blk->n_events; e++)
        bwd_s += blk->events[e].time_s;
      tp_ref += count(blk, TS_EV_COLL, TS_CAT_TP);
      dp_ref += count(blk, TS_EV_COLL, TS_CAT_DP);
    }
  ts_schedule_order(TS_SCHED_ZB_H1, 4, 1, 1, m, steps);
  for (int k = 0; k < 3 * (int)m; k++) {
    char pass = ts_schedule_step_pass(steps[k]);
    const ts_block *blk = &pz->blocks[k];
    for (int e = 0; e < blk->n_events; e++) {
      if (pass == 'B')
        b_s += blk->events[e].time_s;
      if (pass == 'W')
        w_s += blk->events[e].time_s;
    }
    if (pass == 'B')
      tp_b += count(blk, TS_EV_COLL, TS_CAT_TP);
    if (pass == 'W') {
      dp_w += count(blk, TS_EV_COLL, TS_CAT_DP);
      assert_int_equal(count(blk, TS_EV_COLL, TS_CAT_TP), 0);
    }
  }
  assert_rel(b_s + w_s, bwd_s, 1e-12);
  assert_true(w_s > 0.25 * bwd_s && w_s < 0.6 * bwd_s); /* wgrad GEMMs: about half a backward */
  assert_int_equal(tp_b, tp_ref);
  assert_int_equal(dp_w, dp_ref); /* the buckets move with the weight gradients, same count */
  assert_true(dp_w > 0);
  ts_memory m0, z0, m3, z3;
  ts_memory_stage(&wl, 0, &m0);
  ts_memory_stage(&zwl, 0, &z0);
  ts_memory_stage(&wl, 3, &m3);
  ts_memory_stage(&zwl, 3, &z3);
  assert_rel(z0.total_bytes, m0.total_bytes, 1e-12);
  /* Stage 3 of 4 defers 3 W's of its 2 layers, each keeping (h 1024, 16 heads of 64, FFN
   * 4096, tp 2, no sequence parallelism; 2 bytes a value, s b = 512 tokens): QKV's input and
   * the projection's output gradient 2h, the projection's input a d / t, QKV's output
   * gradient 3 a d / t, FC1's input and FC2's output gradient 2h, FC2's input and FC1's output
   * gradient 2 f / t: 10,240 values a token. */
  assert_rel(z3.bytes[TS_MEM_ACTIVATIONS] - m3.bytes[TS_MEM_ACTIVATIONS],
             3.0 * 2.0 * 2.0 * 512.0 * 10240.0, 1e-12);
  ts_job_fini(&ref);
  ts_job_fini(&zb);
}

/* A block's time, or its recompute time. */
static double block_time(const ts_block *b, bool recompute) {
  double t = 0;
  for (int e = 0; e < b->n_events; e++)
    t += recompute ? b->events[e].recompute_s : b->events[e].time_s;
  return t;
}

/* Megatron-Core's recompute modules: layernorm redoes both norms in each layer's backward,
 * core_attn the attention core; nothing else is recomputed. */
static void test_recompute_modules(void **state) {
  (void)state;
  ts_gpu g = plain_gpu();
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 2, 4, 2, 16, 1);
  wl.recompute = TS_RECOMPUTE_SELECTIVE;
  wl.is_recompute_modules_set = true;
  ts_layer_cost lc;
  ts_cost_layer(&wl, &g, &lc);
  unsigned sets[] = {TS_RECOMPUTE_LAYERNORM, TS_RECOMPUTE_LAYERNORM | TS_RECOMPUTE_CORE_ATTN, 0};
  double expect[] = {lc.ln1.time_s + lc.ln2.time_s,
                     lc.ln1.time_s + lc.ln2.time_s + lc.attn_core_fwd.time_s, 0};
  for (int k = 0; k < 3; k++) {
    wl.recompute_modules = sets[k];
    ts_job job;
    ts_err err = {0};
    assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
    const ts_block *bwd = &job.programs[2 * 2 * 1].blocks[2 * 8 - 1]; /* stage 1's last B */
    assert_rel(block_time(bwd, true) + 1, 2 * expect[k] + 1, 1e-12); /* its two layers */
    ts_job_fini(&job);
  }
}

/* A multi-token-prediction module on the last stage: its forward adds one layer's forward (a
 * layer of stage 0's four, less the embedding), the shifted tokens' embedding, the entry
 * (norms, eh_proj) and logits and a loss of its own; its weights the module's; an untied model
 * keeps a copy of the embedding there, all-reduced with the first stage's. */
static void test_mtp_templates(void **state) {
  (void)state;
  ts_gpu g = plain_gpu();
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 2, 2, 2, 16, 1);
  wl.zero_stage = 1;
  ts_workload mwl = wl;
  mwl.model.mtp_layers = 1;
  ts_job ref, mtp;
  ts_err err = {0};
  assert_int_equal(ts_schedule_build(&wl, &g, &ref, &err), 0);
  assert_int_equal(ts_schedule_build(&mwl, &g, &mtp, &err), 0);
  ts_edge_cost edge;
  ts_cost_edges(&wl, &g, &edge);
  long last = 2 * 2 * 1; /* tp 0, dp 0, stage 1: F0 first */
  double layer = (block_time(&ref.programs[0].blocks[0], false) - edge.embed_fwd.time_s) / 4;
  double added = block_time(&mtp.programs[last].blocks[0], false) -
                 block_time(&ref.programs[last].blocks[0], false);
  assert_rel(added, layer + edge.embed_fwd.time_s + edge.mtp_fwd.time_s + edge.head_fwd.time_s,
             1e-9);
  /* its TP traffic: a layer's 2 all-reduces, the entry's gather, the embedding's reduction and
   * the loss's 3 all-reduces */
  assert_int_equal(count(&mtp.programs[last].blocks[0], TS_EV_COLL, TS_CAT_TP) -
                       count(&ref.programs[last].blocks[0], TS_EV_COLL, TS_CAT_TP),
                   2 + 1 + 1 + 3);
  double e = 0;
  assert_rel(ts_cost_stage_params(&mwl, 1) - ts_cost_stage_params(&wl, 1),
             ts_cost_mtp_params(&mwl, &e), 1e-12);
  assert_rel(ts_cost_stage_params(&mwl, 0), ts_cost_stage_params(&wl, 0), 1e-12);
  ts_job_fini(&ref);
  ts_job_fini(&mtp);
  /* Untied: the last stage needs the embedding too; the groups gain the embedding's pair. */
  wl.model.untied = mwl.model.untied = true;
  assert_int_equal(ts_schedule_build(&wl, &g, &ref, &err), 0);
  assert_int_equal(ts_schedule_build(&mwl, &g, &mtp, &err), 0);
  double word = (double)ts_workload_padded_vocab(&wl) / 2 * 1024;
  assert_rel(ts_cost_stage_params(&mwl, 1) - ts_cost_stage_params(&wl, 1),
             ts_cost_mtp_params(&mwl, &e) + word, 1e-12);
  assert_int_equal(mtp.n_groups - ref.n_groups, 2 * 2); /* one pair per tp x dp */
  ts_job_fini(&ref);
  ts_job_fini(&mtp);
}

/* FSDP with pipelines (torchtitan's default, reshard_after_forward false): the first
 * microbatch's forward gathers each layer's weights, the last backward reduce-scatters each
 * layer's gradients, nothing in between; memory and traffic those of the distributed optimizer
 * with a bucket a layer. */
static void test_fsdp_with_pipelines(void **state) {
  (void)state;
  ts_gpu g = plain_gpu();
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 2, 4, 32, 1);
  ts_overrides fsdp = {.zero_stage = 3, .is_zero_stage_set = true, .is_fsdp = true};
  ts_err err = {0};
  assert_int_equal(ts_workload_resolve(&wl, &fsdp, &err), 0);
  assert_true(wl.fsdp_keeps_weights && !wl.reshard_after_forward);
  assert_int_equal(ts_workload_zero(&wl), 1);
  assert_true(ts_workload_gathers_params(&wl));
  double expert = 0;
  assert_true(ts_cost_bucket_bytes(&wl) == 4.0 * ts_cost_layer_params_at(&wl, 0, &expert));
  ts_job job;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  long m = 32 / 4, steps[2 * 8];
  ts_schedule_order(TS_SCHED_1F1B, 2, 1, 0, m, steps);
  const ts_program *p0 = &job.programs[0]; /* dp 0, stage 0: 4 layers */
  for (int k = 0; k < 2 * (int)m; k++) {
    const ts_block *b = &p0->blocks[k];
    int gathers = 0, reductions = 0;
    for (int e = 0; e < b->n_events; e++) {
      const ts_event *ev = &b->events[e];
      gathers +=
          ev->kind == TS_EV_COLL && ev->coll_op == TS_COLL_ALLGATHER && ev->group == TS_GROUP_DP;
      reductions += ev->kind == TS_EV_COLL && ev->coll_op == TS_COLL_REDUCE_SCATTER &&
                    ev->group == TS_GROUP_DP;
    }
    long micro = ts_schedule_step_micro(steps[k], 1);
    bool forward = steps[k] >= 0;
    /* 4 layers and the embedding, each an FSDP unit: the gradients reduced unit by unit; the
     * weights' gathers as the distributed optimizer's buckets, the embedding's with the first
     * layer's (FSDP gathers it apart: one collective more, the same bytes) */
    assert_int_equal(gathers, forward && micro == 0 ? 4 : 0);
    assert_int_equal(reductions, !forward && micro == m - 1 ? 5 : 0);
  }
  ts_job_fini(&job);
  ts_workload z1 = test_workload(8, 1024, 16, 512, 1000, 1, 2, 4, 32, 1);
  z1.zero_stage = 1;
  ts_memory a, b;
  ts_memory_stage(&wl, 0, &a);
  ts_memory_stage(&z1, 0, &b);
  assert_rel(a.total_bytes, b.total_bytes, 1e-12);
  /* reshard_after_forward true: a forward that does not follow a backward gathers (they reshard
   * after use), a backward after a forward gathers, a backward after a backward does not (the
   * stage keeps weights after a backward); only the last backward reduces; memory as kept. */
  ts_workload r = test_workload(8, 1024, 16, 512, 1000, 1, 2, 4, 32, 1);
  r.reshard_after_forward = r.is_reshard_set = true;
  assert_int_equal(ts_workload_resolve(&r, &fsdp, &err), 0);
  assert_true(r.fsdp_reshards_pp && ts_workload_zero(&r) == 1);
  assert_int_equal(ts_schedule_build(&r, &g, &job, &err), 0);
  const ts_program *q = &job.programs[0];
  for (int k = 0; k < 2 * (int)m; k++) {
    const ts_block *blk = &q->blocks[k];
    int gathers = 0, reductions = 0;
    for (int e = 0; e < blk->n_events; e++) {
      const ts_event *ev = &blk->events[e];
      gathers +=
          ev->kind == TS_EV_COLL && ev->coll_op == TS_COLL_ALLGATHER && ev->group == TS_GROUP_DP;
      reductions += ev->kind == TS_EV_COLL && ev->coll_op == TS_COLL_REDUCE_SCATTER &&
                    ev->group == TS_GROUP_DP;
    }
    bool forward = steps[k] >= 0, after_forward = k == 0 || steps[k - 1] >= 0;
    assert_true((gathers > 0) == after_forward); /* forward or backward, as the text says */
    assert_true((reductions > 0) == (!forward && ts_schedule_step_micro(steps[k], 1) == m - 1));
  }
  ts_job_fini(&job);
  ts_memory rm;
  ts_memory_stage(&r, 0, &rm);
  assert_rel(rm.total_bytes, b.total_bytes, 1e-12);
  /* false without pipelines: each forward gathers, each backward reduces and does not gather;
   * ZeRO-2's memory */
  ts_workload k = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 32, 1);
  k.is_reshard_set = true;
  assert_int_equal(ts_workload_resolve(&k, &fsdp, &err), 0);
  assert_true(k.fsdp_keeps_to_backward && ts_workload_zero(&k) == 2);
  assert_int_equal(ts_schedule_build(&k, &g, &job, &err), 0);
  for (int blk = 0; blk < 2; blk++) { /* F0 then B0 */
    int gathers = 0, reductions = 0;
    const ts_block *bb = &job.programs[0].blocks[blk];
    for (int e = 0; e < bb->n_events; e++) {
      gathers += bb->events[e].coll_op == TS_COLL_ALLGATHER && bb->events[e].group == TS_GROUP_DP &&
                 bb->events[e].kind == TS_EV_COLL;
      reductions += bb->events[e].coll_op == TS_COLL_REDUCE_SCATTER &&
                    bb->events[e].group == TS_GROUP_DP && bb->events[e].kind == TS_EV_COLL;
    }
    assert_true((gathers > 0) == (blk == 0) && (reductions > 0) == (blk == 1));
  }
  ts_job_fini(&job);
  ts_workload d = test_workload(8, 1024, 16, 512, 1000, 1, 2, 4, 32, 1);
  ts_overrides deepspeed = {.zero_stage = 3, .is_zero_stage_set = true};
  d.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
  assert_int_equal(ts_workload_resolve(&d, &deepspeed, &err), -1);
  assert_non_null(strstr(err.msg, "DeepSpeed does not support"));
}

/* HSDP (data_parallel_shard_degree 2 of dp 4): the data-parallel group is a shard group of 2,
 * the replicate group pairs the two shard groups; each layer's gradients are reduce-scattered
 * in the shard group and their shard all-reduced over the replicas; memory shards by 2. */
static void test_hsdp(void **state) {
  (void)state;
  ts_gpu g = plain_gpu();
  ts_workload wl = test_workload(4, 1024, 16, 512, 1000, 1, 1, 4, 8, 1);
  ts_overrides fsdp = {.zero_stage = 3, .is_zero_stage_set = true, .is_fsdp = true};
  wl.dp_shard = 2;
  ts_err err = {0};
  assert_int_equal(ts_workload_resolve(&wl, &fsdp, &err), 0);
  assert_true(ts_workload_is_hsdp(&wl));
  assert_int_equal(ts_workload_shard_ranks(&wl), 2);
  ts_job job;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  long dp_group = job.rank_group[0 * TS_GROUP_KINDS + TS_GROUP_DP];
  long rep_group = job.rank_group[0 * TS_GROUP_KINDS + TS_GROUP_DP_REPLICATE];
  assert_true(dp_group >= 0 && rep_group >= 0);
  assert_int_equal(job.groups[dp_group].n_members, 2);
  assert_int_equal(job.groups[rep_group].n_members, 2);
  assert_int_equal(job.groups[dp_group].members[1], 1); /* ranks 0, 1 share a shard group */
  assert_int_equal(job.groups[rep_group].members[1], 2); /* rank 2 holds rank 0's shard */
  const ts_block *bwd = &job.programs[0].blocks[1]; /* F0 B0 ... with pp 1 */
  double rs = 0, ar = 0;
  int n_rs = 0, n_ar = 0;
  for (int e = 0; e < bwd->n_events; e++) {
    const ts_event *ev = &bwd->events[e];
    if (ev->kind == TS_EV_COLL && ev->group == TS_GROUP_DP && ev->coll_op == TS_COLL_REDUCE_SCATTER)
      rs += ev->bytes, n_rs++;
    if (ev->kind == TS_EV_COLL && ev->group == TS_GROUP_DP_REPLICATE)
      ar += ev->bytes, n_ar++;
  }
  assert_true(n_rs > 0 && n_ar == n_rs);
  assert_rel(ar, rs / 2, 1e-12);
  ts_job_fini(&job);
  ts_workload full = test_workload(4, 1024, 16, 512, 1000, 1, 1, 4, 8, 1);
  assert_int_equal(ts_workload_resolve(&full, &fsdp, &err), 0);
  ts_memory a, b;
  ts_memory_stage(&wl, 0, &a);
  ts_memory_stage(&full, 0, &b);
  assert_rel(a.bytes[TS_MEM_OPTIMIZER], 2 * b.bytes[TS_MEM_OPTIMIZER], 1e-12);
  ts_workload bad = test_workload(4, 1024, 16, 512, 1000, 1, 1, 4, 8, 1);
  bad.dp_shard = 3;
  assert_int_equal(ts_workload_resolve(&bad, &fsdp, &err), -1);
  assert_non_null(strstr(err.msg, "must divide data parallelism"));
  bad.dp_shard = 2;
  ts_overrides zero1 = {.zero_stage = 1, .is_zero_stage_set = true};
  assert_int_equal(ts_workload_resolve(&bad, &zero1, &err), -1);
  assert_non_null(strstr(err.msg, "HSDP"));
}

static void test_templates(void **state) {
  (void)state;
  ts_gpu g = plain_gpu();
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 2, 4, 2, 16, 1);
  wl.recompute = TS_RECOMPUTE_FULL;
  wl.zero_stage = 1;
  ts_job job;
  ts_err err = {0};
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  assert_int_equal(job.n_ranks, 16);
  /* 8 TP groups, 8 DP groups, 4 embedding groups (stage 0 with stage 3). */
  assert_int_equal(job.n_groups, 8 + 8 + 4);
  long m = 16 / 2;
  const ts_program *mid = &job.programs[2 * 2 * 1]; /* tp 0, dp 0, stage 1 */
  assert_int_equal(mid->n_blocks, 2 * m + 1);
  const ts_block *fwd = &mid->blocks[0]; /* stage 1 of 4 warms up with forwards */
  assert_int_equal(fwd->events[0].kind, TS_EV_RECV);
  assert_int_equal(fwd->events[fwd->n_events - 1].kind, TS_EV_SEND);
  assert_int_equal(count(fwd, TS_EV_COLL, TS_CAT_TP), 2 * 2); /* 2 layers x 2 all-reduces */
  const ts_block *bwd = &mid->blocks[2 * m - 1];
  assert_int_equal(count(bwd, TS_EV_COLL, TS_CAT_TP), 2 * 4); /* recompute + backward */
  /* Full recomputation redoes each layer's forward: the backward block holds, as recompute
   * time, exactly the forward block's layer time (no embedding or head on stage 1). */
  double fwd_s = 0, rec_s = 0;
  for (int e = 0; e < fwd->n_events; e++)
    fwd_s += fwd->events[e].time_s;
  for (int e = 0; e < bwd->n_events; e++)
    rec_s += bwd->events[e].recompute_s;
  assert_rel(rec_s, fwd_s, 1e-12);
  const ts_block *epi = &mid->blocks[2 * m];
  assert_int_equal(count(epi, TS_EV_COLL, TS_CAT_DP), 2); /* reduce-scatter + all-gather */
  assert_int_equal(epi->events[0].coll_op, TS_COLL_REDUCE_SCATTER);
  const ts_block *epi0 = &job.programs[0].blocks[2 * m];
  assert_int_equal(count(epi0, TS_EV_COLL, TS_CAT_DP), 3); /* + tied embedding */
  assert_int_equal(job.rank_peer[4 * TS_PEERS + TS_PEER_PREV], 0);
  assert_int_equal(job.rank_peer[4 * TS_PEERS + TS_PEER_NEXT], 8);
  double act = fwd->events[0].bytes;
  ts_job_fini(&job);

  /* Sequence parallelism: each all-reduce becomes a reduce-scatter and an all-gather of the
   * same buffer, and pipeline messages carry s/t of the sequence. */
  wl.sequence_parallel = true;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  mid = &job.programs[4];
  fwd = &mid->blocks[0];
  assert_int_equal(count(fwd, TS_EV_COLL, TS_CAT_TP), 2 * 4);
  int rs = 0, ag = 0;
  for (int e = 0; e < fwd->n_events; e++) {
    rs += fwd->events[e].coll_op == TS_COLL_REDUCE_SCATTER && fwd->events[e].kind == TS_EV_COLL;
    ag += fwd->events[e].coll_op == TS_COLL_ALLGATHER && fwd->events[e].kind == TS_EV_COLL;
  }
  assert_int_equal(rs, 4);
  assert_int_equal(ag, 4);
  assert_rel(fwd->events[0].bytes, act / 2, 1e-15);
  ts_job_fini(&job);

  /* Scatter/gather without sequence parallelism: 1/t of the activation crosses, then a TP
   * all-gather rebuilds it (exposed pipeline time). */
  wl.sequence_parallel = false;
  wl.pipeline_scatter_gather = true;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  fwd = &job.programs[4].blocks[0];
  assert_rel(fwd->events[0].bytes, act / 2, 1e-15);
  assert_int_equal(fwd->events[1].kind, TS_EV_COLL);
  assert_int_equal(fwd->events[1].coll_op, TS_COLL_ALLGATHER);
  assert_int_equal(fwd->events[1].category, TS_CAT_PP);
  assert_rel(fwd->events[1].bytes, act, 1e-15);
  assert_rel(fwd->events[fwd->n_events - 1].bytes, act / 2, 1e-15); /* the send */
  ts_job_fini(&job);
  wl.pipeline_scatter_gather = false;

  /* Interleaved over 2 chunks of 1 layer: 2 m v + 1 blocks; the pipeline wraps (stage 0's
   * previous is stage 3); stage 0's chunk 0 embeds and sends, its chunk 1 receives from stage 3;
   * stage 3's chunk 1 computes the loss, its chunk 0 sends on to stage 0. */
  wl.sequence_parallel = false;
  wl.schedule = TS_SCHED_INTERLEAVED;
  wl.virtual_stages = 2;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  const ts_program *first = &job.programs[0], *last = &job.programs[12]; /* tp 0, dp 0 */
  assert_int_equal(first->n_blocks, 2 * m * 2 + 1);
  assert_int_equal(job.rank_peer[0 * TS_PEERS + TS_PEER_PREV], 12);
  assert_int_equal(job.rank_peer[12 * TS_PEERS + TS_PEER_NEXT], 0);
  const ts_block *c0 = &first->blocks[0], *c1 = &first->blocks[4]; /* F0c0, F0c1 (p = 4) */
  assert_int_equal(c0->events[0].op, TS_OP_EMBEDDING);
  assert_int_equal(c0->events[c0->n_events - 1].kind, TS_EV_SEND);
  assert_int_equal(c1->events[0].kind, TS_EV_RECV);
  assert_int_equal(c1->events[1].layer_first, 1); /* the stage's second layer */
  assert_int_equal(count(c0, TS_EV_COLL, TS_CAT_TP), 1 + 2); /* embedding + 1 layer */
  const ts_block *l0 = &last->blocks[0], *l1 = &last->blocks[1]; /* stage 3: F0c0, F1c0 */
  assert_int_equal(l0->events[l0->n_events - 1].kind, TS_EV_SEND);
  bool has_head = false;
  for (int b = 0; b < last->n_blocks - 1; b++)
    for (int e = 0; e < last->blocks[b].n_events; e++)
      has_head = has_head || last->blocks[b].events[e].op == TS_OP_HEAD;
  assert_true(has_head);
  assert_int_equal(l1->events[l1->n_events - 1].kind, TS_EV_SEND);
  ts_job_fini(&job);
}

/* The asynchronous collectives of kind op in a block. */
static int async_colls(const ts_block *b, ts_coll_op op) {
  int n = 0;
  for (int e = 0; e < b->n_events; e++)
    n += b->events[e].kind == TS_EV_COLL && b->events[e].is_async && b->events[e].coll_op == op;
  return n;
}

/* Bytes of the asynchronous collectives of kind op in a block, and its waits. */
static double posted_bytes(const ts_block *b, ts_coll_op op, int *waits) {
  double bytes = 0;
  *waits = 0;
  for (int e = 0; e < b->n_events; e++) {
    const ts_event *ev = &b->events[e];
    if (ev->kind == TS_EV_COLL && ev->is_async && ev->coll_op == op)
      bytes += ev->bytes;
    *waits += ev->kind == TS_EV_WAIT;
  }
  return bytes;
}

/* The compute-stream time a block spends on data-parallel work (FSDP2's copies). */
static double dp_compute_s(const ts_block *b) {
  double s = 0;
  for (int e = 0; e < b->n_events; e++) {
    const ts_event *ev = &b->events[e];
    if (ev->kind == TS_EV_COMPUTE && ev->category == TS_CAT_DP && !ev->is_host)
      s += ev->time_s;
  }
  return s;
}

/* FSDP2 (fully_shard) copies each unit's gathered weights out of the all-gather's flat output
 * (2 eb bytes a parameter) once it arrives, and its gradients, cast to fp32, into the
 * reduce-scatter's input (eb + 4) before posting it, on the compute stream; FSDP1's flat
 * parameter is the gather's output, and its gradients' cat, cast and pre-divide (2 eb, eb + 4,
 * 8) run on a side stream, 0.8 of them exposed. Without pipelines every pass gathers; with
 * them (weights kept) the first forward gathers and the last backward reduces. */
static void test_fsdp_copies(void **state) {
  (void)state;
  ts_gpu g = plain_gpu();
  ts_overrides fsdp = {.zero_stage = 3, .is_zero_stage_set = true, .is_fsdp = true};
  ts_err err = {0};
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 8, 1);
  assert_int_equal(ts_workload_resolve(&wl, &fsdp, &err), 0);
  ts_fsdp_copies cp = ts_cost_fsdp_copies(&wl, &g);
  double n = ts_cost_layer_params(&wl), eb = 2.0;
  assert_rel(cp.after_gather_s, ts_cost_memory_bound(&g, 2.0 * eb * n).time_s / n, 1e-12);
  assert_rel(cp.before_reduce_s, ts_cost_memory_bound(&g, (eb + 4.0) * n).time_s / n, 1e-12);
  ts_job job;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  const ts_program *prog = &job.programs[0];
  int waits;
  const ts_block *fwd = &prog->blocks[0], *bwd = &prog->blocks[1];
  assert_rel(dp_compute_s(fwd),
             cp.after_gather_s * posted_bytes(fwd, TS_COLL_ALLGATHER, &waits) / eb, 1e-12);
  assert_rel(dp_compute_s(bwd),
             cp.after_gather_s * posted_bytes(bwd, TS_COLL_ALLGATHER, &waits) / eb +
                 cp.before_reduce_s * posted_bytes(bwd, TS_COLL_REDUCE_SCATTER, &waits) / 4.0,
             1e-12);
  ts_job_fini(&job);

  ts_workload v1 = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 8, 1);
  v1.fsdp_version = 1;
  assert_int_equal(ts_workload_resolve(&v1, &fsdp, &err), 0);
  ts_fsdp_copies side = ts_cost_fsdp_copies(&v1, &g);
  assert_true(side.after_gather_s == 0);
  assert_rel(side.before_reduce_s,
             0.8 *
                 (ts_cost_memory_bound(&g, 2.0 * eb * n).time_s +
                  ts_cost_memory_bound(&g, (eb + 4.0) * n).time_s +
                  ts_cost_memory_bound(&g, 8.0 * n).time_s) /
                 n,
             1e-12);
  assert_int_equal(ts_schedule_build(&v1, &g, &job, &err), 0);
  fwd = &job.programs[0].blocks[0];
  bwd = &job.programs[0].blocks[1];
  assert_true(dp_compute_s(fwd) == 0);
  assert_rel(dp_compute_s(bwd),
             side.before_reduce_s * posted_bytes(bwd, TS_COLL_REDUCE_SCATTER, &waits) / 4.0, 1e-12);
  ts_job_fini(&job);

  ts_workload pp = test_workload(8, 1024, 16, 512, 1000, 1, 2, 4, 32, 1);
  assert_int_equal(ts_workload_resolve(&pp, &fsdp, &err), 0);
  assert_true(pp.fsdp_keeps_weights);
  assert_int_equal(ts_schedule_build(&pp, &g, &job, &err), 0);
  long m = 32 / 4, steps[2 * 8];
  ts_schedule_order(TS_SCHED_1F1B, 2, 1, 0, m, steps);
  double gathered = 0, reduced = 0, copied = 0;
  for (int k = 0; k < 2 * (int)m; k++) {
    const ts_block *b = &job.programs[0].blocks[k];
    double s = dp_compute_s(b);
    gathered += posted_bytes(b, TS_COLL_ALLGATHER, &waits) / eb;
    reduced += posted_bytes(b, TS_COLL_REDUCE_SCATTER, &waits) / 4.0;
    long micro = ts_schedule_step_micro(steps[k], 1);
    bool copies = steps[k] >= 0 ? micro == 0 : micro == m - 1;
    assert_true((s > 0) == copies);
    copied += s;
  }
  assert_true(gathered > 0 && reduced > 0);
  assert_rel(copied, cp.after_gather_s * gathered + cp.before_reduce_s * reduced, 1e-12);
  ts_job_fini(&job);
}

/* Gradient buckets (ZeRO-1): only each stage's last backward pass posts reduce-scatters, of
 * all the stage's fp32 gradients, in buckets; the epilogue waits for them instead of reducing.
 * ZeRO-3 (pp 1): every forward gathers each layer's weights (the embedding twice: input and
 * tied output), every backward gathers them again and reduce-scatters all gradients. */
static void test_data_parallel_streams(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 2, 4, 2, 16, 1);
  wl.zero_stage = 1;
  wl.dp_bucket_bytes = 5e6;
  ts_job job;
  ts_err err = {0};
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  long m = 8;
  int waits = 0;
  for (long s = 0; s < 4; s++) {
    const ts_program *prog = &job.programs[ts_layout_rank(&wl, (ts_coords){0, 0, s})];
    double last = 0;
    for (int b = 0; b < prog->n_blocks - 1; b++) {
      double bytes = posted_bytes(&prog->blocks[b], TS_COLL_REDUCE_SCATTER, &waits);
      if (b == prog->n_blocks - 2) /* 1F1B ends with the last microbatch's backward */
        last = bytes;
      else
        assert_true(bytes == 0);
    }
    assert_rel(last, 4.0 * ts_cost_stage_params(&wl, s), 1e-12);
    const ts_block *epi = &prog->blocks[2 * m];
    assert_true(posted_bytes(epi, TS_COLL_REDUCE_SCATTER, &waits) == 0);
    assert_int_equal(waits, 1);
    assert_int_equal(epi->events[0].kind, TS_EV_WAIT);
  }
  int fp32_posts[4];
  for (long s = 0; s < 4; s++)
    fp32_posts[s] =
        async_colls(&job.programs[ts_layout_rank(&wl, (ts_coords){0, 0, s})].blocks[2 * m - 1],
                    TS_COLL_REDUCE_SCATTER);
  ts_job_fini(&job);
  /* grad_reduce_in_bf16: half the bytes, in as many buckets (a bucket holds the same
   * parameters); without buckets the epilogue reduces 2 bytes a parameter, the embedding's
   * all-reduce too. */
  wl.grad_reduce_in_bf16 = true;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  for (long s = 0; s < 4; s++) {
    const ts_block *last =
        &job.programs[ts_layout_rank(&wl, (ts_coords){0, 0, s})].blocks[2 * m - 1];
    assert_rel(posted_bytes(last, TS_COLL_REDUCE_SCATTER, &waits),
               2.0 * ts_cost_stage_params(&wl, s), 1e-12);
    assert_int_equal(async_colls(last, TS_COLL_REDUCE_SCATTER), fp32_posts[s]);
  }
  ts_job_fini(&job);
  wl.dp_bucket_bytes = 0;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  const ts_block *epilogue = &job.programs[0].blocks[2 * m];
  double reduced = 0, embedding = 0;
  for (int e = 0; e < epilogue->n_events; e++) {
    const ts_event *ev = &epilogue->events[e];
    if (ev->kind == TS_EV_COLL && ev->group == TS_GROUP_DP && ev->coll_op == TS_COLL_REDUCE_SCATTER)
      reduced += ev->bytes;
    if (ev->kind == TS_EV_COLL && ev->group == TS_GROUP_EMBEDDING)
      embedding += ev->bytes;
  }
  assert_rel(reduced, 2.0 * ts_cost_stage_params(&wl, 0), 1e-12);
  assert_rel(embedding, 2.0 * (double)ts_workload_padded_vocab(&wl) / 2.0 * 1024.0, 1e-12);
  ts_job_fini(&job);

  wl = test_workload(8, 1024, 16, 512, 1000, 2, 1, 4, 16, 1);
  wl.zero_stage = 3;
  wl.is_fsdp = true; /* FSDP: one gather per layer, the next one prefetched */
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  const ts_program *prog = &job.programs[0];
  double params = ts_cost_stage_params(&wl, 0);
  double word = (double)ts_workload_padded_vocab(&wl) / 2.0 * 1024.0;
  double gathered = posted_bytes(&prog->blocks[0], TS_COLL_ALLGATHER, &waits);
  assert_rel(gathered, 2.0 * (params + word), 1e-12);
  assert_int_equal(waits, 8); /* before each layer */
  const ts_block *bwd = &prog->blocks[1]; /* pp 1: F0 B0 F1 B1 ... */
  assert_rel(posted_bytes(bwd, TS_COLL_ALLGATHER, &waits), 2.0 * (params + word), 1e-12);
  assert_int_equal(waits, 8);
  assert_rel(posted_bytes(bwd, TS_COLL_REDUCE_SCATTER, &waits), 4.0 * params, 1e-12);
  const ts_block *epi = &prog->blocks[prog->n_blocks - 1];
  assert_int_equal(count(epi, TS_EV_COLL, TS_CAT_DP), 0); /* no all-gather: weights stay sharded */
  ts_job_fini(&job);

  /* DeepSpeed's ZeRO-3 (its defaults): a gather per weight matrix and embedding (biases and
   * layer norms, under 1e5 elements, stay whole), the output layer's tied embedding gathered
   * again; with matrices of 0.5-2.1M elements, a 5e7-element prefetch bucket holds the rest of
   * the pass, so every gather is posted once the first is due and each submodule waits only for
   * its own: the embedding, 8 x 4 matrices and the output layer wait, in forward and in
   * backward (tensor parallel 2: all before their layer). */
  wl = test_workload(8, 1024, 16, 512, 1000, 2, 1, 4, 16, 1);
  wl.zero_stage = 3;
  wl.stage3_prefetch_elems = 5e7;
  wl.stage3_persistence_elems = 1e5;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  prog = &job.programs[0];
  double matrices = 1024.0 * 3072 / 2 + 1024.0 * 1024 / 2 + 2 * 1024.0 * 4096 / 2;
  double ds = 2.0 * (2 * word + 512.0 * 1024 + 8 * matrices);
  assert_rel(posted_bytes(&prog->blocks[0], TS_COLL_ALLGATHER, &waits), ds, 1e-12);
  assert_int_equal(waits, 34);
  assert_rel(posted_bytes(&prog->blocks[1], TS_COLL_ALLGATHER, &waits), ds, 1e-12);
  assert_int_equal(waits, 35); /* and the reduction stream's, as the backward ends */
  /* The gradients, in the model's precision, through 5e8-element buckets: one here. */
  assert_rel(posted_bytes(&prog->blocks[1], TS_COLL_REDUCE_SCATTER, &waits), 2.0 * params, 1e-12);
  int gathers = 0;
  for (int e = 0; e < prog->blocks[0].n_events; e++)
    gathers += prog->blocks[0].events[e].kind == TS_EV_COLL && prog->blocks[0].events[e].is_async;
  assert_int_equal(gathers, 2 + 8 * 4 + 1);
  ts_job_fini(&job);
  /* Without prefetch each gather is posted when its submodule is due. */
  wl.stage3_prefetch_elems = 0;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  assert_rel(posted_bytes(&job.programs[0].blocks[0], TS_COLL_ALLGATHER, &waits), ds, 1e-12);
  assert_int_equal(waits, 34);
  ts_job_fini(&job);

  /* overlap_param_gather: the distributed optimizer's all-gather of updated weights leaves the
   * epilogue for each stage's first forward, in buckets (5 MB of fp32 = 1.25M parameters: one
   * per layer here), each layer waiting for its own bucket only; later forwards gather
   * nothing. */
  wl = test_workload(8, 1024, 16, 512, 1000, 2, 4, 2, 16, 1);
  wl.zero_stage = 1;
  wl.dp_bucket_bytes = 5e6;
  wl.overlap_param_gather = true;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  for (long s = 0; s < 4; s++) {
    const ts_program *p = &job.programs[ts_layout_rank(&wl, (ts_coords){0, 0, s})];
    double first_fwd = posted_bytes(&p->blocks[0], TS_COLL_ALLGATHER, &waits);
    assert_rel(first_fwd, 2.0 * ts_cost_stage_params(&wl, s), 1e-12);
    assert_int_equal(waits, 2); /* 2 layers per stage, a bucket each */
    assert_true(posted_bytes(&p->blocks[1], TS_COLL_ALLGATHER, &waits) == 0); /* F1 or B0 */
    const ts_block *last = &p->blocks[p->n_blocks - 1];
    for (int e = 0; e < last->n_events; e++)
      assert_false(last->events[e].kind == TS_EV_COLL &&
                   last->events[e].coll_op == TS_COLL_ALLGATHER);
  }
  ts_job_fini(&job);
}

/* The time of the events of kind `kind` in block b that the host runs (is_host), and their
 * number in *n. */
static double host_time(const ts_block *b, int *n) {
  double s = 0;
  *n = 0;
  for (int e = 0; e < b->n_events; e++)
    if (b->events[e].kind == TS_EV_COMPUTE && b->events[e].is_host) {
      s += b->events[e].time_s;
      (*n)++;
    }
  return s;
}

/* DeepSpeed's ZeRO-3 by release (stack.h, ts_deepspeed_path), 8 GPT layers (12 tensors each,
 * 8 of them under the 1e5-element persistence threshold), DP 4, 4 microbatches:
 * - 0.3.16: each gather after a device synchronisation (a wait for everything posted), with
 *   N = 4 passes of its view loop (1.66 us each, measured) before and N copies (5.9 us each)
 *   after, which the GPU then runs on the gather's stream (test_deepspeed_list_copies); the
 *   first forward of the step gathers the 35 large units, later ones the 8 x 12 + 2 + 2 of
 *   every unit; the backward reduce-scatters each of the 8 x 12 + 2 + 2 gradients (tied
 *   embedding: reduced once) after N passes of its view loop (2.00 us) and N copies; the step
 *   ends re-gathering the 8 x 8 + 2 small parameters through one all-gather (a view a rank)
 *   and, a parameter and rank at a time, three views and a copy;
 * - 0.5.7: the same synchronisation and reductions, no list all-gather, the small parameters
 *   re-gathered one all-gather each; both zero each gathered tensor first (torch.zeros);
 * - 0.6.0 and unset: none of it, the gradients in buckets. */
static void test_deepspeed_releases(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  g.hbm_Bps = 3.35e12; /* an H100's: every piece's copy on the GPU within a call's 5.9 us */
  ts_err err = {0};
  const long versions[] = {316, 507, 600, 0};
  for (int v = 0; v < 4; v++) {
    ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 16, 1);
    wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
    wl.deepspeed_version = versions[v];
    wl.zero_stage = 3;
    wl.stage3_prefetch_elems = 5e7;
    wl.stage3_persistence_elems = 1e5;
    ts_job job;
    assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
    const ts_program *prog = &job.programs[0];
    const ts_block *f0 = &prog->blocks[0], *b0 = &prog->blocks[1], *f1 = &prog->blocks[2];
    const ts_block *epi = &prog->blocks[prog->n_blocks - 1];
    bool list = v == 0, synced = v <= 1;
    int n_large = 2 + 8 * 4 + 1, n_all = 2 + 8 * 12 + 2 + 1, n_grads = n_all - 1, n_small = 66;
    assert_int_equal(async_colls(f0, TS_COLL_ALLGATHER), n_large);
    assert_int_equal(async_colls(f1, TS_COLL_ALLGATHER), synced ? n_all : n_large);
    assert_int_equal(async_colls(b0, TS_COLL_ALLGATHER), n_large);
    assert_int_equal(async_colls(b0, TS_COLL_REDUCE_SCATTER), synced ? n_grads : 1);
    int waits = 0;
    assert_rel(posted_bytes(b0, TS_COLL_REDUCE_SCATTER, &waits), 2.0 * ts_cost_stage_params(&wl, 0),
               1e-12);
    int n_host = 0;
    double fwd_host = host_time(f1, &n_host);
    assert_int_equal(n_host, list ? 2 * n_all : 0);
    assert_rel(fwd_host, list ? n_all * 4 * (1.66e-6 + 5.9e-6) : 0, 1e-12);
    double bwd_host = host_time(b0, &n_host);
    assert_rel(bwd_host,
               (list ? n_large * 4 * (1.66e-6 + 5.9e-6) : 0) +
                   (synced ? n_grads * 4 * (2.00e-6 + 5.9e-6) : 0),
               1e-12);
    for (int e = 0; e < f1->n_events; e++) { /* the list gathers' copies on their stream */
      const ts_event *ev = &f1->events[e];
      if (ev->kind != TS_EV_COLL || !ev->is_async)
        continue;
      if (list)
        assert_true(ev->time_s >= 4 * 1.883e-6);
      else
        assert_true(ev->time_s == 0);
    }
    for (int e = 0; synced && e < f1->n_events; e++) /* a device sync before each gather */
      if (f1->events[e].kind == TS_EV_COLL && f1->events[e].is_async) {
        int w = e - 1;
        while (f1->events[w].kind == TS_EV_COMPUTE && f1->events[w].is_host)
          w--;
        assert_int_equal(f1->events[w].kind, TS_EV_WAIT);
        assert_int_equal(f1->events[w].wait_keep, 0);
      }
    /* GPU passes of the data-parallel path: before 0.6.0 each gathered tensor is zeroed; 0.3.16
     * also reads each fetched submodule's weights for the norm it logs (the embedding, 8 x 6
     * submodules, the output layer's group). */
    int passes = 0;
    for (int e = 0; e < f1->n_events; e++)
      passes += f1->events[e].kind == TS_EV_COMPUTE && f1->events[e].category == TS_CAT_DP &&
                !f1->events[e].is_host;
    assert_int_equal(passes, (synced ? n_all : 0) + (list ? 1 + 8 * 6 + 1 : 0));
    double epi_host = host_time(epi, &n_host);
    assert_rel(epi_host, list ? 4 * 1.06e-6 + 4 * 5.9e-6 + n_small * 4 * (3 * 1.06e-6 + 5.9e-6) : 0,
               1e-12);
    assert_int_equal(async_colls(epi, TS_COLL_ALLGATHER), list ? 0 : n_small);
    ts_job_fini(&job);
  }
}

/* DeepSpeed 0.3.16 gathers through PyTorch's list all_gather, whose N copies out of its flat
 * result then run on the gather's stream (bench/device/h100_list_collective_copies.csv): width
 * 1024 over 8 ranks, bf16, on an H100's 3.35 TB/s, puts FC1 and FC2 at 1 MiB a piece (3.304 us a
 * copy, a measured point), the projection at 256 KiB (2.669 us) and QKV at 768 KiB (halfway
 * between 2.885 and 3.304 us); at half the bandwidth the time above the 1.883 us floor doubles. */
static void test_deepspeed_list_copies(void **state) {
  (void)state;
  const double hbm[] = {3.35e12, 1.675e12};
  for (int k = 0; k < 2; k++) {
    ts_gpu g = mi250x_like();
    g.hbm_Bps = hbm[k];
    ts_workload wl = test_workload(2, 1024, 16, 512, 500, 1, 1, 8, 8, 1);
    wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
    wl.deepspeed_version = 316;
    wl.zero_stage = 3;
    wl.stage3_prefetch_elems = 5e7;
    wl.stage3_persistence_elems = 1e5;
    ts_err err = {0};
    ts_job job;
    assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
    const ts_block *f0 = &job.programs[0].blocks[0];
    double scale = hbm[0] / hbm[k];
    int seen[3] = {0, 0, 0};
    for (int e = 0; e < f0->n_events; e++) {
      const ts_event *ev = &f0->events[e];
      if (ev->kind != TS_EV_COLL || !ev->is_async)
        continue;
      double piece = ev->bytes / 8, h100 = 0;
      int kind = piece == 1 << 20 ? 0 : piece == 256 << 10 ? 1 : piece == 768 << 10 ? 2 : -1;
      if (kind < 0)
        continue; /* the embeddings: 128 KiB pieces */
      h100 = kind == 0 ? 3.304e-6 : kind == 1 ? 2.669e-6 : (2.885e-6 + 3.304e-6) / 2;
      assert_rel(ev->time_s, 8 * (1.883e-6 + (h100 - 1.883e-6) * scale), 1e-9);
      seen[kind]++;
    }
    assert_int_equal(seen[0], 4); /* FC1 and FC2 of both layers */
    assert_int_equal(seen[1], 2);
    assert_int_equal(seen[2], 2);
    ts_job_fini(&job);
  }
}

/* DeepSpeed 0.3.16 without contiguous gradients (its default) all-reduces each bucket of
 * gradients flattened (stage3.py, buffered_reduce_fallback): 8 GPT layers of width 1024 under
 * the 5e8-element bucket make one bucket a backward, all-reduced whole after a wait for
 * everything posted; the host calls flatten, div_ and all_reduce (2 us each), then a view and a
 * copy_ a gradient (1.06 + 5.9 us); the reduction stream runs the flatten, the div_ and the copies
 * out after it (each at least the measured copy's 1.883 us floor). With contiguous gradients each
 * of the 100 gradients is instead copied into the bucket's buffer on the compute stream, then
 * reduce-scattered apart. */
static void test_deepspeed_flat_all_reduce(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  int passes[2] = {0, 0}, n_grads = 8 * 12 + 2 + 2; /* the layers, the final norm, the embeddings */
  for (int k = 0; k < 2; k++) {
    ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 16, 1);
    wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
    wl.deepspeed_version = 316;
    wl.zero_stage = 3;
    wl.stage3_prefetch_elems = 5e7;
    wl.stage3_persistence_elems = 1e5;
    wl.contiguous_gradients = k == 1;
    ts_err err = {0};
    ts_job job;
    assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
    const ts_block *b0 = &job.programs[0].blocks[1];
    int waits = 0;
    if (k == 0) {
      assert_int_equal(async_colls(b0, TS_COLL_REDUCE_SCATTER), 0);
      assert_int_equal(async_colls(b0, TS_COLL_ALLREDUCE), 1);
      assert_rel(posted_bytes(b0, TS_COLL_ALLREDUCE, &waits), 2.0 * ts_cost_stage_params(&wl, 0),
                 1e-12);
      for (int e = 0; e < b0->n_events; e++) {
        const ts_event *ev = &b0->events[e];
        if (ev->kind != TS_EV_COLL || !ev->is_async || ev->coll_op != TS_COLL_ALLREDUCE)
          continue;
        assert_true(ev->time_s >= (2 + n_grads) * 1.883e-6);
        int w = e - 1; /* the host's calls, after the wait */
        double host = 0;
        while (b0->events[w].kind == TS_EV_COMPUTE && b0->events[w].is_host)
          host += b0->events[w--].time_s;
        assert_rel(host, 3 * 2e-6 + n_grads * (1.06e-6 + 5.9e-6), 1e-12);
        assert_int_equal(b0->events[w].kind, TS_EV_WAIT);
        assert_int_equal(b0->events[w].wait_keep, 0);
      }
    } else {
      assert_int_equal(async_colls(b0, TS_COLL_REDUCE_SCATTER), n_grads);
      assert_int_equal(async_colls(b0, TS_COLL_ALLREDUCE), 0);
    }
    for (int e = 0; e < b0->n_events; e++)
      passes[k] += b0->events[e].kind == TS_EV_COMPUTE && b0->events[e].category == TS_CAT_DP &&
                   !b0->events[e].is_host;
    ts_job_fini(&job);
  }
  assert_int_equal(passes[1] - passes[0], n_grads); /* the copies into the bucket's buffer */
}

/* DeepSpeed keeps a submodule's weights after a use when fewer than stage3_max_reuse_distance
 * elements are used before its next use. 8 GPT layers of width 1024 (QKV 3.1M elements,
 * projection 1.05M, FC1 and FC2 4.2M each), full recomputation:
 * - at 1e7: the forward gathers all 35 units (the tied output layer again: 100M elements of
 *   layers since the embedding); in the backward the output layer is still there, each
 *   layer's recomputed forward gathers its 4 matrices, and its backward gathers again QKV
 *   (2 x 9.4M elements between its two uses) and the projection (2 x 8.4M) but keeps FC1 (2 x
 *   4.2M) and FC2; the embedding's two tables come back last: 35 and 8 x 6 + 2;
 * - at 1e9 the whole model stays gathered from its forward use to its backward one: 34, 0;
 * - at 0 nothing is kept: 35, and 8 x 8 + 3. */
static void test_deepspeed_reuse(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_err err = {0};
  const double reuse[] = {1e7, 1e9, 0};
  const int fwd[] = {35, 34, 35}, bwd[] = {8 * 6 + 2, 0, 8 * 8 + 3};
  for (int k = 0; k < 3; k++) {
    ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 16, 1);
    wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
    wl.zero_stage = 3;
    wl.recompute = TS_RECOMPUTE_FULL;
    wl.stage3_prefetch_elems = 5e7;
    wl.stage3_persistence_elems = 1e5;
    wl.stage3_max_reuse_elems = reuse[k];
    ts_job job;
    assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
    assert_int_equal(async_colls(&job.programs[0].blocks[0], TS_COLL_ALLGATHER), fwd[k]);
    assert_int_equal(async_colls(&job.programs[0].blocks[1], TS_COLL_ALLGATHER), bwd[k]);
    ts_job_fini(&job);
  }
}

/* The layer's work, the same whether DeepSpeed's ZeRO-3 fetches submodule by submodule (its
 * pieces split at their GEMMs' shares) or nothing is fetched (ZeRO-1): time and FLOPs of the
 * first forward and backward, full recomputation or none, tensor parallel 1. */
static void test_deepspeed_split_layers(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_err err = {0};
  for (int full = 0; full < 2; full++) {
    double work[2][2] = {{0}}, flops[2][2] = {{0}};
    int fetch_waits = 0;
    for (int z = 0; z < 2; z++) {
      ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 16, 1);
      wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
      wl.zero_stage = z ? 3 : 1;
      wl.recompute = full ? TS_RECOMPUTE_FULL : TS_RECOMPUTE_NONE;
      wl.stage3_prefetch_elems = 0; /* each gather when its submodule is due */
      wl.stage3_persistence_elems = 1e5;
      ts_job job;
      assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
      for (int b = 0; b < 2; b++)
        for (int e = 0; e < job.programs[0].blocks[b].n_events; e++) {
          const ts_event *ev = &job.programs[0].blocks[b].events[e];
          if (ev->kind == TS_EV_COMPUTE && ev->category != TS_CAT_DP) {
            work[z][b] += ev->time_s;
            flops[z][b] += ev->flops;
          }
          fetch_waits += z && b == 0 && ev->kind == TS_EV_WAIT;
        }
      ts_job_fini(&job);
    }
    for (int b = 0; b < 2; b++) {
      assert_rel(work[1][b], work[0][b], 1e-12);
      assert_rel(flops[1][b], flops[0][b], 1e-12);
    }
    assert_int_equal(fetch_waits,
                     1 + 8 * 4 + 1); /* the embedding, 4 matrices a layer, the output */
  }
}

/* stage3_max_live_parameters: from 0.6.0 a fetch prefetches no more than the limit less what is
 * gathered or in flight. 8 GPT layers of width 1024: the embedding's word table (1.05M
 * elements) fetched, 5e6 leaves room for the position table (0.52M), layer 0's QKV (3.1M) and
 * its projection (1.05M, which passes the room: DeepSpeed checks before adding), then nothing;
 * without a limit each of the embedding's two fetches prefetches a 5e7-element bucket: 34 of
 * the pass's 35 units. */
static void test_deepspeed_live_limit(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_err err = {0};
  const double live[] = {5e6, 0};
  const int before_wait[] = {4, 34};
  for (int k = 0; k < 2; k++) {
    ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 1, 4, 16, 1);
    wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
    wl.zero_stage = 3;
    wl.stage3_prefetch_elems = 5e7;
    wl.stage3_persistence_elems = 1e5;
    wl.stage3_max_live_elems = live[k];
    ts_job job;
    assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
    const ts_block *f0 = &job.programs[0].blocks[0];
    int posted = 0;
    for (int e = 0; e < f0->n_events && f0->events[e].kind != TS_EV_WAIT; e++)
      posted += f0->events[e].kind == TS_EV_COLL && f0->events[e].is_async;
    assert_int_equal(posted, before_wait[k]);
    ts_job_fini(&job);
  }
}

/* tp_comm_overlap: each of a layer's 8 TP collectives (sequence parallelism, forward and
 * backward) holds the GEMM it runs under; the layer's compute is the same, only regrouped.
 * With context parallelism too (the attention's ring beside its core, its TP collectives under
 * QKV's and the projection's GEMMs). */
static void test_tp_comm_overlap(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  for (long cp = 1; cp <= 2; cp++) {
    double work[2] = {0, 0}, flops[2] = {0, 0};
    int held[2] = {0, 0};
    for (int overlap = 0; overlap < 2; overlap++) {
      ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 4, 1, 1, 4, 1);
      wl.sequence_parallel = true;
      wl.tp_comm_overlap = overlap;
      wl.cp = cp;
      wl.n_gpus = 4 * cp;
      wl.flash_attention = true;
      wl.attention = TS_ATTENTION_FLASH2;
      ts_job job;
      ts_err err = {0};
      assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
      const ts_program *prog = &job.programs[0];
      for (int b = 0; b < 2; b++) /* F0, B0 */
        for (int e = 0; e < prog->blocks[b].n_events; e++) {
          const ts_event *ev = &prog->blocks[b].events[e];
          work[overlap] += ev->time_s;
          flops[overlap] += ev->flops;
          held[overlap] += ev->kind == TS_EV_COLL && ev->time_s > 0 && ev->group == TS_GROUP_TP;
          if (ev->kind == TS_EV_COLL && ev->time_s > 0 && ev->group == TS_GROUP_TP)
            assert_true(ev->category == TS_CAT_TP);
        }
      ts_job_fini(&job);
    }
    assert_int_equal(held[0], 0);
    assert_int_equal(held[1], 8 * 8); /* 8 layers x (2 forward + 2 backward gathers, scatters) */
    assert_rel(work[1], work[0], 1e-12);
    assert_rel(flops[1], flops[0], 1e-12);
  }
}

/* A mixture-of-experts layer's events: the dispatch and combine all-to-alls (forward and
 * backward) carry each rank's b s k / t token copies of h values, the etp gathers etp times
 * that; the expert grid's groups follow Megatron-Core's folding (etp fastest, then ep, then
 * edp); the experts' gradients are reduced over expert data parallelism, the rest over dp. */
static void test_moe_events(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  const char *text = "name: moe\n"
                     "model: {num_layers: 4, hidden_size: 1024, num_attention_heads: 16,\n"
                     "  seq_length: 512, vocab_size: 1000, num_experts: 8, moe_router_topk: 2,\n"
                     "  moe_ffn_hidden_size: 512, moe_layer_freq: [0, 1, 1, 1]}\n"
                     "training: {global_batch_size: 16, micro_batch_size: 2}\n"
                     "parallelism: {tensor: 2, pipeline: 2, data: 4, expert: 4, expert_tensor: 1,\n"
                     "  sequence_parallel: true, zero_stage: 1}\n";
  ts_workload wl;
  ts_err err = {0};
  ts_overrides none = {0};
  assert_int_equal(ts_workload_parse("moe.yaml", text, strlen(text), &wl, &err), 0);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(ts_workload_edp(&wl), 2); /* tp 2 x dp 4 / (etp 1 x ep 4) */
  ts_job job;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  /* Stage 0: j = tp + 2 dp; expert ep = j mod 4, edp = j / 4 (etp 1). Rank 0's EP group is j
   * = 0..3 = ranks 0..3, its EDP group j = 0 and 4 = ranks 0 and 4; stage 1 the same + 8. */
  const ts_group *ep = &job.groups[job.rank_group[9 * TS_GROUP_KINDS + TS_GROUP_EP]];
  assert_int_equal(ep->n_members, 4);
  for (int i = 0; i < 4; i++)
    assert_int_equal(ep->members[i], 8 + i);
  const ts_group *edp = &job.groups[job.rank_group[1 * TS_GROUP_KINDS + TS_GROUP_EDP]];
  assert_int_equal(edp->n_members, 2);
  assert_int_equal(edp->members[0], 1);
  assert_int_equal(edp->members[1], 5);
  assert_int_equal(job.rank_group[0 * TS_GROUP_KINDS + TS_GROUP_ETP], -1); /* etp 1 */
  /* Stage 0 holds layers 0 (dense) and 1 (MoE); stage 1 layers 2 and 3 (both MoE). */
  double copies = 2.0 * 2 * 512 * 2 / 2 * 1024; /* eb x b s k / t x h */
  long m = 16 / (2 * 4);
  for (long stage = 0; stage < 2; stage++) {
    const ts_program *prog = &job.programs[8 * stage];
    int n_moe = stage == 0 ? 1 : 2;
    for (long b = 0; b < 2 * m; b++) {
      const ts_block *blk = &prog->blocks[b];
      int a2a = 0;
      for (int e = 0; e < blk->n_events; e++) {
        const ts_event *ev = &blk->events[e];
        if (ev->kind != TS_EV_COLL || ev->coll_op != TS_COLL_ALLTOALL)
          continue;
        a2a++;
        assert_int_equal(ev->group, TS_GROUP_EP);
        assert_int_equal(ev->category, TS_CAT_EP);
        assert_rel(ev->bytes, copies, 1e-12);
      }
      assert_int_equal(a2a, 2 * n_moe); /* dispatch and combine per MoE layer and pass */
    }
    /* The epilogue: reduce-scatters over dp (all but the experts) and over edp (the
     * experts: 4 local experts of 2 x 1024 x 512, GeLU, with FC1 and FC2 biases). */
    const ts_block *epi = &prog->blocks[2 * m];
    double expert = n_moe * 2.0 * (2.0 * 1024 * 512 + 512 + 1024);
    assert_rel(ts_cost_stage_expert_params(&wl, stage), expert, 1e-12);
    int on_edp = 0;
    for (int e = 0; e < epi->n_events; e++)
      if (epi->events[e].kind == TS_EV_COLL && epi->events[e].group == TS_GROUP_EDP) {
        on_edp++;
        assert_rel(epi->events[e].bytes,
                   (epi->events[e].coll_op == TS_COLL_REDUCE_SCATTER ? 4.0 : 2.0) * expert, 1e-12);
      }
    assert_int_equal(on_edp, 2); /* reduce-scatter of gradients, all-gather of weights */
  }
  ts_job_fini(&job);
  /* DeepEP under FP8: the forward dispatch moves 1 byte a value and a 4-byte scale a 128, the
   * combine and the backward's all-to-alls bf16; the job says how its EP groups route. */
  wl.moe_flex = true;
  wl.moe_deepep_sms = 20;
  wl.fp8 = TS_FP8_HYBRID;
  wl.model.moe_router_groups = 4;
  wl.model.moe_router_group_topk = 2;
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  assert_true(job.is_ep_flex && job.ep_topk == 2 && job.ep_route_groups == 4 &&
              job.ep_route_group_topk == 2);
  const ts_block *fwd = &job.programs[8].blocks[0]; /* stage 1's first forward */
  double sizes[4];
  int k = 0;
  for (int e = 0; e < fwd->n_events && k < 4; e++)
    if (fwd->events[e].kind == TS_EV_COLL && fwd->events[e].coll_op == TS_COLL_ALLTOALL) {
      sizes[k++] = fwd->events[e].bytes;
      /* DeepEP's kernels take Megatron-Core's default 20 SMs from the compute they overlap:
       * on 132 SMs that compute runs 132 / 112 as long, else the platform's slowdown */
      assert_int_equal(fwd->events[e].sms_taken, 20);
      assert_rel(ts_overlap_slowdown(&fwd->events[e], 0.11, 132), 132.0 / 112 - 1, 1e-12);
      assert_rel(ts_overlap_slowdown(&fwd->events[e], 0.11, 0), 0.11, 1e-12);
    }
  assert_int_equal(k, 4); /* two MoE layers */
  for (int i = 0; i < 4; i++)
    assert_rel(sizes[i], i % 2 == 0 ? copies * (1 + 4.0 / 128) / 2 : copies, 1e-12);
  ts_job_fini(&job);
}

/* Context parallelism: the cp ranks of a replica form a group (tp fastest, then cp, then dp);
 * each layer's attention core runs beside the ring as one event moving the all-gather of every
 * rank's keys and values (2 b s/cp g/t d bytes each), twice that in backward; a rank computes
 * 1/cp of the layer's FLOPs; gradients are reduced over dp x cp ranks; the pipeline sends
 * 1/cp of the activation. */
static void test_context_parallel(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(4, 1024, 16, 2048, 1000, 2, 2, 2, 8, 1);
  wl.cp = 4;
  wl.n_gpus *= 4; /* as ts_workload_resolve counts them: tp x cp x pp x dp */
  wl.sequence_parallel = true;
  ts_workload one = wl;
  one.cp = 1;
  one.n_gpus /= 4;
  ts_job job, ref;
  ts_err err = {0};
  assert_int_equal(ts_schedule_build(&wl, &g, &job, &err), 0);
  assert_int_equal(ts_schedule_build(&one, &g, &ref, &err), 0);
  assert_int_equal(job.n_ranks, 2 * 4 * 2 * 2);
  /* Rank 3 = tp 1, dp-axis index 1 (cp 1 of replica 0), stage 0: its CP group is tp 1 of
   * indices 0..3, ranks 1, 3, 5, 7; its gradients' group spans all 8 indices. */
  const ts_group *cp = &job.groups[job.rank_group[3 * TS_GROUP_KINDS + TS_GROUP_CP]];
  assert_int_equal(cp->n_members, 4);
  for (int i = 0; i < 4; i++)
    assert_int_equal(cp->members[i], 1 + 2 * i);
  assert_int_equal(job.groups[job.rank_group[3 * TS_GROUP_KINDS + TS_GROUP_DP]].n_members, 8);
  double kv = 2.0 * 2048 / 4 * 16 / 2 * (64 + 64) * 4; /* eb b s/cp g/t (d + d) x cp */
  long m = 8 / 2; /* microbatches: the last block before the epilogue is a backward */
  const ts_block *fwd = &job.programs[3].blocks[0], *bwd = &job.programs[3].blocks[2 * m - 1];
  int n_fwd = 0, n_bwd = 0;
  for (int e = 0; e < fwd->n_events; e++)
    if (fwd->events[e].kind == TS_EV_COLL && fwd->events[e].group == TS_GROUP_CP) {
      assert_rel(fwd->events[e].bytes, kv, 1e-12);
      assert_int_equal(fwd->events[e].category, TS_CAT_CP);
      assert_true(fwd->events[e].time_s > 0); /* the attention core it overlaps */
      n_fwd++;
    }
  for (int e = 0; e < bwd->n_events; e++)
    if (bwd->events[e].kind == TS_EV_COLL && bwd->events[e].group == TS_GROUP_CP) {
      assert_rel(bwd->events[e].bytes, 2 * kv, 1e-12);
      n_bwd++;
    }
  assert_int_equal(n_fwd, 2); /* the stage's two layers */
  assert_int_equal(n_bwd, 2);
  ts_layer_cost lc, lc1;
  ts_cost_layer(&wl, &g, &lc);
  ts_cost_layer(&one, &g, &lc1);
  assert_rel(lc.attn.flops + lc.mlp.flops, (lc1.attn.flops + lc1.mlp.flops) / 4, 1e-12);
  assert_rel(lc.attn_core_fwd.flops, lc1.attn_core_fwd.flops / 4, 1e-12);
  /* Activations: Korthikanti's, linear in the tokens held (flash attention): 1/cp. */
  assert_rel(ts_memory_layer_activations(&wl), ts_memory_layer_activations(&one) / 4, 1e-12);
  /* Stage 0 sends its activation to stage 1: 1/cp of it (and 1/tp: sequence parallel). */
  const ts_block *f0 = &job.programs[0].blocks[0], *r0 = &ref.programs[0].blocks[0];
  assert_int_equal(f0->events[f0->n_events - 1].kind, TS_EV_SEND);
  assert_rel(f0->events[f0->n_events - 1].bytes, r0->events[r0->n_events - 1].bytes / 4, 1e-12);
  ts_job_fini(&job);
  ts_job_fini(&ref);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_1f1b_order),
                                     cmocka_unit_test(test_gpipe_order),
                                     cmocka_unit_test(test_interleaved_order),
                                     cmocka_unit_test(test_zb_h1_order),
                                     cmocka_unit_test(test_zb_h1_templates),
                                     cmocka_unit_test(test_mtp_templates),
                                     cmocka_unit_test(test_recompute_modules),
                                     cmocka_unit_test(test_dualpipe_order),
                                     cmocka_unit_test(test_zbv_order),
                                     cmocka_unit_test(test_fsdp_with_pipelines),
                                     cmocka_unit_test(test_hsdp),
                                     cmocka_unit_test(test_fsdp_copies),
                                     cmocka_unit_test(test_templates),
                                     cmocka_unit_test(test_data_parallel_streams),
                                     cmocka_unit_test(test_deepspeed_releases),
                                     cmocka_unit_test(test_deepspeed_list_copies),
                                     cmocka_unit_test(test_deepspeed_flat_all_reduce),
                                     cmocka_unit_test(test_deepspeed_reuse),
                                     cmocka_unit_test(test_deepspeed_split_layers),
                                     cmocka_unit_test(test_deepspeed_live_limit),
                                     cmocka_unit_test(test_tp_comm_overlap),
                                     cmocka_unit_test(test_moe_events),
                                     cmocka_unit_test(test_context_parallel)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
