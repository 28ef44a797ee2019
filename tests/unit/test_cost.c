/* cost: FLOP counts against Megatron's formulas, GEMM quantisation, parameter counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>

#include "../../workloads/cost.h"
#include "../../workloads/schedule.h"
#include "fixtures.h"

static ts_gpu mi250x_like(void) {
  ts_gpu g;
  memset(&g, 0, sizeof g);
  g.peak_flops_per_s[TS_PREC_BF16] = 191.5e12;
  g.hbm_Bps = 1.6e12;
  g.gemm_ceiling = 0.767;
  g.gemm_tile_m = 256;
  g.gemm_tile_n = 128;
  g.n_compute_units = 110;
  g.kernel_launch_s = 2e-6;
  return g;
}

/* Forward matrix FLOPs per layer = 24 b s h^2 (1 + s/6h) / t (Narayanan et al. eq. 3, f = 4h);
 * backward twice that. */
static void test_layer_flops(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 1);
  ts_layer_cost c;
  ts_cost_layer(&wl, &g, &c);
  double b = 1, s = 2048, h = 12288, t = 8;
  double fwd = 24 * b * s * h * h * (1 + s / (6 * h)) / t;
  assert_rel(c.attn.flops + c.mlp.flops, fwd, 1e-12);
  assert_rel(c.attn_bwd.flops + c.mlp_bwd.flops, 2 * fwd, 1e-12);
  assert_true(c.ln1.flops == 0 && c.bda2_bwd.flops == 0); /* memory-bound pieces */
  assert_rel(c.attn_core_fwd.flops, 4 * b * s * s * h / t, 1e-12);
  assert_rel(c.tp_comm_bytes, 2 * b * s * h, 1e-12);
  /* Sequence parallelism: the same matrix FLOPs; layer norms move 1/t of the bytes. */
  ts_layer_cost sp;
  wl.sequence_parallel = true;
  ts_cost_layer(&wl, &g, &sp);
  assert_rel(sp.attn.flops + sp.mlp.flops, fwd, 1e-12);
  assert_rel(sp.ln1.bytes, c.ln1.bytes / t, 1e-12);
  assert_rel(sp.bda1_bwd.bytes, c.bda1_bwd.bytes / t, 1e-12);
}

static void test_gemm_quantisation(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  /* 2048 x 4608 in 256 x 128 tiles: 8 x 36 = 288 tiles, 3 waves of 110: 288 / 330 useful. */
  assert_rel(ts_cost_gemm_efficiency(&g, 1, 2048, 4608), 0.767 * 288.0 / 330.0, 1e-12);
  /* A ragged edge: 300 x 128 needs 2 x 1 tiles of which 300/512 is useful, one wave. */
  assert_rel(ts_cost_gemm_efficiency(&g, 1, 300, 128), 0.767 * 300.0 * 128.0 / (110.0 * 256 * 128),
             1e-12);
  /* Compute-bound GEMM time = FLOPs / (peak x efficiency) + launch. */
  ts_cost c = ts_cost_gemm(&g, 191.5e12, 1, 2048, 4608, 12288, 2);
  assert_rel(c.time_s, c.flops / (191.5e12 * 0.767 * 288.0 / 330.0) + 2e-6, 1e-12);
  /* Memory-bound kernel time = bytes / HBM bandwidth + launch. */
  assert_rel(ts_cost_memory_bound(&g, 1.6e9).time_s, 1e-3 + 2e-6, 1e-12);
}

/* Matrix FLOPs of every event of every rank of the job built for wl. */
static double scheduled_flops(const ts_workload *wl, const ts_gpu *g) {
  ts_job job;
  ts_err err = {0};
  assert_int_equal(ts_schedule_build(wl, g, &job, &err), 0);
  double flops = 0;
  for (long r = 0; r < job.n_ranks; r++)
    for (int b = 0; b < job.programs[r].n_blocks; b++)
      for (int e = 0; e < job.programs[r].blocks[b].n_events; e++)
        flops += job.programs[r].blocks[b].events[e].flops;
  ts_job_fini(&job);
  return flops;
}

/* What the schedule executes with full recomputation equals Megatron-DeepSpeed's formula
 * 96 B s l h^2 (1 + s/6h + V/16lh), V padded: an independent check of the whole cost model. */
static void test_hardware_flops_match_megatron(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(8, 1024, 16, 512, 50257, 2, 4, 2, 32, 2);
  wl.recompute = TS_RECOMPUTE_FULL;
  assert_rel(scheduled_flops(&wl, &g), ts_cost_megatron_flops(&wl), 1e-12);
  wl.sequence_parallel = true; /* moves bytes, not FLOPs */
  assert_rel(scheduled_flops(&wl, &g), ts_cost_megatron_flops(&wl), 1e-12);
  wl.schedule = TS_SCHED_INTERLEAVED; /* reorders work, every layer once per microbatch */
  wl.virtual_stages = 2;
  assert_rel(scheduled_flops(&wl, &g), ts_cost_megatron_flops(&wl), 1e-12);
  wl.dp_bucket_bytes = 1e6; /* moves gradients earlier, not FLOPs */
  assert_rel(scheduled_flops(&wl, &g), ts_cost_megatron_flops(&wl), 1e-12);
  wl.schedule = TS_SCHED_1F1B; /* uneven stages: 1 + 3 + 3 + 1 layers */
  wl.virtual_stages = 1;
  wl.first_stage_layers = wl.last_stage_layers = 1;
  assert_rel(scheduled_flops(&wl, &g), ts_cost_megatron_flops(&wl), 1e-12);
  wl = test_workload(8, 1024, 16, 512, 50257, 2, 1, 4, 32, 2);
  wl.recompute = TS_RECOMPUTE_FULL;
  wl.zero_stage = 3;
  assert_rel(scheduled_flops(&wl, &g), ts_cost_megatron_flops(&wl), 1e-12);
  /* A Llama block (SwiGLU, GQA, RMSNorm, rope, untied, no biases): the formula counts its real
   * matrices, and the schedule executes exactly them. */
  wl = test_workload(8, 1024, 16, 512, 50257, 2, 4, 2, 32, 2);
  wl.recompute = TS_RECOMPUTE_FULL;
  wl.model.n_query_groups = 4;
  wl.model.ffn_hidden = 2816;
  wl.model.swiglu = wl.model.rms_norm = wl.model.rope = wl.model.untied = true;
  wl.model.bias = false;
  assert_rel(scheduled_flops(&wl, &g), ts_cost_megatron_flops(&wl), 1e-12);
  double h = 1024, qkv = h + 2 * 4 * 64, P = h * qkv + h * h + 3 * h * 2816, s = 512, B = 32;
  assert_rel(ts_cost_model_flops(&wl), B * s * (3 * 8 * (2 * P + 4 * s * h) + 3 * 2 * h * 50257),
             1e-12);
}

static void test_params(void **state) {
  (void)state;
  /* GPT-3 175B: 12 l h^2 + 13 l h + (V + s) h + 2h = 174.6e9. */
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 1);
  double l = 96, h = 12288;
  assert_rel(ts_cost_model_params(&wl), 12 * l * h * h + 13 * l * h + (50257 + 2048) * h + 2 * h,
             1e-12);
  /* Stage shards add up to the model with the padded vocabulary and the tied copy. */
  double sum = 0;
  for (long s = 0; s < wl.pp; s++)
    sum += ts_cost_stage_params(&wl, s) * (double)wl.tp;
  double padded = (double)ts_workload_padded_vocab(&wl);
  assert_int_equal(ts_workload_padded_vocab(&wl), 51200);
  /* Replicated per-TP-rank pieces: row-parallel biases (2h) and layer norms (4h) per layer,
   * position embeddings, the final layer norm. */
  double replicated = (l * 6 * h) * (8 - 1) + 2048 * h * (8 - 1) + 2 * h * (8 - 1);
  assert_rel(sum, ts_cost_model_params(&wl) + (padded - 50257) * h + padded * h + replicated,
             1e-12);
}

static void test_model_flops(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 1);
  double B = 1536, s = 2048, l = 96, h = 12288, V = 50257;
  assert_rel(ts_cost_model_flops(&wl),
             72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)), 1e-12);
  wl.recompute = TS_RECOMPUTE_FULL;
  assert_rel(ts_cost_megatron_flops(&wl),
             96 * B * s * l * h * h * (1 + s / (6 * h) + 51200.0 / (16 * l * h)), 1e-12);
}

/* The optimizer's bytes per parameter without a kernel table: norm 4, clipping 8, fused Adam 28
 * (foreach 80: torch/optim/adam.py's eight multi-tensor operations), master copy 4 + 2, zeroing
 * 4; fp16's loss-scale check and unscale 8 more, as one more kernel. */
static void test_optimizer_bytes(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 1);
  double n = 1e9;
  ts_cost fused = ts_cost_optimizer(&wl, &g, n);
  assert_rel(fused.bytes, 50 * n, 1e-12);
  assert_int_equal(fused.n_kernels, 5);
  wl.adam_implementation = TS_ADAM_FOREACH;
  ts_cost foreach = ts_cost_optimizer(&wl, &g, n);
  assert_rel(foreach.bytes, 102 * n, 1e-12);
  assert_rel(foreach.time_s - fused.time_s, 52 * n / g.hbm_Bps, 1e-9);
  wl.adam_implementation = TS_ADAM_FUSED;
  wl.precision = TS_PREC_FP16;
  ts_cost fp16 = ts_cost_optimizer(&wl, &g, n);
  assert_rel(fp16.bytes, 58 * n, 1e-12);
  assert_int_equal(fp16.n_kernels, 6);
}

/* FP8 (Transformer Engine): the same matrix FLOPs; each linear layer's GEMMs at the FP8 peak on
 * 1-byte operands and a bf16 result (the roofline: no kernel table here), beside a fused cast of
 * its input with the transpose (4 bytes an element) and 1 / m of its weight's cast; the
 * attention core unchanged. */
static void test_fp8(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  g.peak_fp8_flops_per_s = 2 * g.peak_flops_per_s[TS_PREC_BF16];
  ts_workload wl = test_workload(4, 8192, 64, 4096, 50257, 1, 1, 1, 8, 1);
  ts_layer_cost bf16, fp8;
  ts_cost_layer(&wl, &g, &bf16);
  wl.fp8 = TS_FP8_HYBRID;
  ts_cost_layer(&wl, &g, &fp8);
  assert_rel(fp8.mlp.flops, bf16.mlp.flops, 1e-12);
  assert_rel(fp8.attn_core_fwd.flops, bf16.attn_core_fwd.flops, 1e-12);
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &g, &log);
  double m = 4096, f = 4 * 8192, h = 8192, micro = 8; /* FC1: 4096 x 32768 x 8192 */
  int seen = 0;
  for (int i = 0; i < log.n; i++) {
    const ts_kernel_row *r = &log.rows[i];
    if (strcmp(r->piece, "fc1") != 0)
      continue;
    if (strcmp(r->kernel, "gemm_fp8_fwd") == 0) {
      double eff = ts_cost_gemm_efficiency(&g, 1, (long)m, (long)f);
      double t = fmax(2 * m * f * h / (g.peak_fp8_flops_per_s * eff),
                      (m * h + h * f + 2 * m * f) / g.hbm_Bps);
      assert_rel(r->time_s, t + g.kernel_launch_s, 1e-12);
      seen++;
    } else if (strcmp(r->kernel, "fp8_cast_transpose") == 0) {
      assert_rel(r->bytes, 4 * m * h, 1e-12);
      seen++;
    } else if (strcmp(r->kernel, "fp8_cast_weight") == 0) {
      assert_rel(r->bytes, 4 * h * f / micro, 1e-12);
      seen++;
    } else {
      assert_true(strncmp(r->kernel, "gemm_", 5) != 0 || strstr(r->kernel, "fp8") != NULL);
    }
  }
  assert_int_equal(seen, 3);
  free(log.rows);
  assert_true(fp8.mlp.time_s < 0.7 * bf16.mlp.time_s); /* GEMM-bound: about half */
}

/* PyTorch's automatic mixed precision (training.autocast): each linear layer's forward casts its
 * fp32 weight and bias (4 + 2 bytes an element); its backward casts the bf16 gradients back
 * (2 + 4) and adds them to the fp32 .grad (4 + 4 + 4), a kernel each, where Megatron's fused
 * accumulation adds 8 bytes a weight to the GEMM; the optimizer copies no master weights. */
static void test_autocast(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(4, 4096, 32, 2048, 50257, 1, 1, 1, 8, 1);
  wl.is_autocast = true;
  wl.fusions &= ~(1u << TS_FUSE_GRADIENT_ACCUMULATION); /* as the reader leaves them */
  ts_kernel_log log = {0};
  ts_cost_layer_kernels(&wl, &g, &log);
  double h = 4096, f = 4 * 4096;
  int casts = 0, grad_casts = 0, adds = 0;
  for (int i = 0; i < log.n; i++) {
    const ts_kernel_row *r = &log.rows[i];
    if (strcmp(r->piece, "fc1") != 0)
      continue;
    if (strcmp(r->kernel, "autocast_weight_cast") == 0) {
      assert_rel(r->bytes, 6 * (h * f + f), 1e-12);
      assert_rel(r->time_s, 6 * (h * f + f) / g.hbm_Bps + g.kernel_launch_s, 1e-12);
      casts++;
    } else if (strcmp(r->kernel, "autocast_grad_cast") == 0) {
      assert_true(r->bytes == 6 * h * f || r->bytes == 6 * f); /* weight, bias */
      grad_casts++;
    } else if (strcmp(r->kernel, "autocast_grad_add") == 0) {
      assert_true(r->bytes == 12 * h * f || r->bytes == 12 * f);
      adds++;
    } else {
      assert_true(strcmp(r->kernel, "grad_accum") != 0);
    }
  }
  assert_int_equal(casts, 1);
  assert_int_equal(grad_casts, 2);
  assert_int_equal(adds, 2);
  free(log.rows);
  /* The weight gradient's GEMM no longer moves the fp32 main_grad. */
  ts_layer_cost amp, megatron;
  ts_cost_layer(&wl, &g, &amp);
  ts_workload plain = test_workload(4, 4096, 32, 2048, 50257, 1, 1, 1, 8, 1);
  ts_cost_layer(&plain, &g, &megatron);
  double weights = 12 * h * h, biases = 9 * h; /* QKV, projection, FC1, FC2 */
  assert_rel(amp.attn.bytes + amp.mlp.bytes - megatron.attn.bytes - megatron.mlp.bytes,
             6 * (weights + biases), 1e-12);
  /* backward: + (6 + 12) per weight and bias, - 8 per weight (fused), - 10 per bias (grad_accum) */
  assert_rel(amp.attn_bwd.bytes + amp.mlp_bwd.bytes - megatron.attn_bwd.bytes -
                 megatron.mlp_bwd.bytes,
             18 * (weights + biases) - 8 * weights - 10 * biases, 1e-12);
  double n = 1e9;
  ts_cost opt = ts_cost_optimizer(&wl, &g, n);
  assert_rel(opt.bytes, 44 * n, 1e-12);
  assert_int_equal(opt.n_kernels, 4);
}

/* Plain PyTorch's grouped-query attention through SDPA: K and V copied to every query head
 * (reads the groups', writes the heads' values) and, backward, summed back into the groups; no
 * such kernels where the attention takes the groups (Megatron). */
static void test_repeated_kv_kernels(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(4, 4096, 32, 4096, 128256, 1, 1, 1, 2, 1);
  wl.model.n_query_groups = 8;
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.attention = TS_ATTENTION_SDPA;
  for (int pass = 0; pass < 2; pass++) {
    ts_kernel_log log = {0};
    ts_cost_layer_kernels(&wl, &g, &log);
    int copies = 0, sums = 0;
    for (int i = 0; i < log.n; i++) {
      const ts_kernel_row *r = &log.rows[i];
      bool bwd = strcmp(r->kernel, "repeat_kv_bwd") == 0;
      if (!bwd && strcmp(r->kernel, "repeat_kv") != 0)
        continue;
      assert_rel(r->bytes, 2.0 * 4096 * 128 * (8 + 32), 1e-12);
      copies += !bwd;
      sums += bwd;
    }
    assert_int_equal(copies, pass == 0 ? 2 : 0);
    assert_int_equal(sums, pass == 0 ? 2 : 0);
    free(log.rows);
    /* context parallelism's ring carries the keys and values SDPA is given: the repeated
     * heads' (32), or Megatron's groups (8); the all-gather's whole buffer over cp = 4 */
    wl.cp = 4;
    ts_layer_cost c;
    ts_cost_layer(&wl, &g, &c);
    double tokens = 4096.0 / 4;
    assert_rel(c.cp_kv_bytes, 2.0 * tokens * (pass == 0 ? 32 : 8) * (128 + 128) * 4, 1e-12);
    wl.cp = 1;
    wl.framework = TS_FRAMEWORK_MEGATRON;
  }
}

/* Attention dropout inside fused attention: the platform's time a score over the scores the
 * kernel computes (half of s^2 a head, causal), cuDNN's figure for PyTorch's SDPA choice and the
 * flash kernels' for flash; nothing without dropout or without the platform's figures. */
static void test_attention_dropout(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(4, 4096, 32, 2048, 50304, 1, 1, 1, 2, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.model.attention_dropout = 0.1;
  double scores = 32.0 * 2048 * 2048 / 2; /* micro-batch 1, 32 heads, causal */
  ts_layer_cost none, with;
  ts_cost_layer(&wl, &g, &none); /* no figures: unpriced */
  g.has_attention_dropout = true;
  g.attention_dropout_s[TS_DROPOUT_SDPA][0] = 0.9e-12;
  g.attention_dropout_s[TS_DROPOUT_SDPA][1] = 0.6e-12;
  g.attention_dropout_s[TS_DROPOUT_FLASH][0] = 0.3e-12;
  g.attention_dropout_s[TS_DROPOUT_FLASH][1] = 0.5e-12;
  ts_cost_layer(&wl, &g, &with); /* flash2 (no SDPA tables here) */
  assert_rel(with.attn_core_fwd.time_s - none.attn_core_fwd.time_s, 0.3e-12 * scores, 1e-9);
  assert_rel(with.attn_core_bwd.time_s - none.attn_core_bwd.time_s, 0.5e-12 * scores, 1e-9);
  wl.model.attention_dropout = 0;
  ts_cost_layer(&wl, &g, &with);
  assert_rel(with.attn_core_fwd.time_s, none.attn_core_fwd.time_s, 1e-12);
}

/* PyTorch's ring attention (stack.cp_attention pytorch) adds its loop's eager kernels to the
 * attention core, priced by the roofline here (no kernel table) for the ring's last rank: the
 * forward's bytes are cp output casts (2 + 4 bytes an element of o), cp - 1 whole merges (12 +
 * 8 + 12 bytes an element of o, five log-sum-exp kernels of 12 or 8 bytes a head's query) and
 * key-value concatenations (2 x 2 bytes an element of kv), and the final cast (4 + 2); its backward
 * the zeros (4 bytes, q + kv), cp query-gradient adds (10), the first key-value add (10 a kv
 * element), cp - 1 half adds, cp + cp - 1 fp32 concatenations (8), cp - 1 key-value
 * concatenations (4) and the casts back (6, q + kv). Its backward ring moves the keys and
 * values again and their fp32 gradients at every step: 1 + 2 cp / (cp - 1) times the forward's
 * all-gather, against Transformer Engine's 2. */
static void test_pytorch_ring_attention(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(4, 4096, 32, 8192, 128256, 1, 1, 1, 4, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.cp = 4;
  ts_layer_cost te, torch;
  wl.cp_attention = TS_CP_ATTENTION_TE;
  ts_cost_layer(&wl, &g, &te);
  wl.cp_attention = TS_CP_ATTENTION_PYTORCH;
  ts_cost_layer(&wl, &g, &torch);
  double cp = 4, rows = 8192.0 / 4, o = rows * 32 * 128, q = o, kv = rows * 32 * 256;
  double fwd = cp * 6 * o + (cp - 1) * (32 * o + rows * 32 * (3 * 12 + 2 * 8) + 4 * kv) + 6 * o;
  double bwd = 4 * (q + kv) + cp * 10 * q + 10 * kv + (cp - 1) * 10 * kv / 2 +
               (2 * cp - 1) * 8 * kv + (cp - 1) * 4 * kv + 6 * (q + kv);
  assert_rel(torch.attn_core_fwd.bytes - te.attn_core_fwd.bytes, fwd, 1e-9);
  assert_rel(torch.attn_core_bwd.bytes - te.attn_core_bwd.bytes, bwd, 1e-9);
  assert_true(torch.attn_core_fwd.time_s > te.attn_core_fwd.time_s);
  assert_rel(te.cp_bwd_bytes, 2 * te.cp_kv_bytes, 1e-12);
  assert_rel(torch.cp_bwd_bytes, (1 + 2 * cp / (cp - 1)) * torch.cp_kv_bytes, 1e-12);
  assert_rel(torch.cp_kv_bytes, te.cp_kv_bytes, 1e-12);
}

/* The stack's fusions (workloads/stack.h), priced by the roofline (no kernel table): without the
 * masked-softmax fusion a mask kernel reads and writes the scores, forward and backward (the
 * scale rides in the GEMM); without the bias-GeLU fusion the Megatron family adds the first MLP
 * GEMM's bias by a kernel of its own, which PyTorch's nn.Linear does in the GEMM. */
static void test_stack_fusions(void **state) {
  (void)state;
  ts_gpu g = mi250x_like();
  ts_workload wl = test_workload(24, 2048, 16, 2048, 50257, 1, 1, 8, 64, 4);
  wl.flash_attention = false;
  wl.framework = TS_FRAMEWORK_GPT_NEOX;
  wl.fusions = 1u << TS_FUSE_MASKED_SOFTMAX | 1u << TS_FUSE_BIAS_GELU;
  ts_layer_cost fused, plain;
  ts_cost_layer(&wl, &g, &fused);
  wl.fusions = 0;
  ts_cost_layer(&wl, &g, &plain);
  double scores = 4.0 * 16 * 2048 * 2048, eb = 2, launch = g.kernel_launch_s;
  double pass = 2 * eb * scores / g.hbm_Bps + launch; /* one kernel */
  assert_rel(plain.attn_core_fwd.time_s - fused.attn_core_fwd.time_s, pass, 1e-9);
  assert_rel(plain.attn_core_bwd.time_s - fused.attn_core_bwd.time_s, pass, 1e-9);
  assert_int_equal(plain.attn_core_fwd.n_kernels, fused.attn_core_fwd.n_kernels + 1);
  double inter = 4.0 * 2048 * 4 * 2048; /* b s x 4h */
  assert_rel(plain.mlp.time_s - fused.mlp.time_s, 2 * eb * inter / g.hbm_Bps + launch, 1e-9);
  assert_rel(plain.mlp_bwd.time_s, fused.mlp_bwd.time_s, 1e-12);
  /* PyTorch's linear layers add their bias in the GEMM: no bias kernel to fuse. */
  wl.framework = TS_FRAMEWORK_PYTORCH;
  ts_layer_cost torch_plain;
  ts_cost_layer(&wl, &g, &torch_plain);
  assert_rel(torch_plain.mlp.time_s, fused.mlp.time_s, 1e-12);
  /* Dropout at 0 runs no kernel: the attention's over the scores (5 bytes a score forward, 7
   * backward) goes, and the fused bias-dropout-add keeps no mask and runs nothing backward. */
  wl.framework = TS_FRAMEWORK_MEGATRON;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_MEGATRON);
  ts_layer_cost with, without;
  ts_cost_layer(&wl, &g, &with);
  wl.model.attention_dropout = wl.model.hidden_dropout = 0;
  ts_cost_layer(&wl, &g, &without);
  assert_rel(with.attn_core_fwd.time_s - without.attn_core_fwd.time_s,
             5 * scores / g.hbm_Bps + launch, 1e-9);
  assert_rel(with.attn_core_bwd.time_s - without.attn_core_bwd.time_s,
             7 * scores / g.hbm_Bps + launch, 1e-9);
  double shard = 4.0 * 2048 * 2048;
  assert_rel(with.bda1.time_s - without.bda1.time_s, shard / g.hbm_Bps, 1e-9);
  assert_rel(with.bda1_bwd.time_s - without.bda1_bwd.time_s,
             (2 * eb + 1) * shard / g.hbm_Bps + launch, 1e-9);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_layer_flops),
                                     cmocka_unit_test(test_gemm_quantisation),
                                     cmocka_unit_test(test_hardware_flops_match_megatron),
                                     cmocka_unit_test(test_params),
                                     cmocka_unit_test(test_model_flops),
                                     cmocka_unit_test(test_optimizer_bytes),
                                     cmocka_unit_test(test_fp8),
                                     cmocka_unit_test(test_autocast),
                                     cmocka_unit_test(test_repeated_kv_kernels),
                                     cmocka_unit_test(test_attention_dropout),
                                     cmocka_unit_test(test_pytorch_ring_attention),
                                     cmocka_unit_test(test_stack_fusions)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
