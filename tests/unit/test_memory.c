/* memory: Korthikanti et al. Table 2 and the mixed-precision Adam bytes per parameter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../workloads/ccl_memory.h"
#include "../../workloads/cost.h"
#include "../../workloads/memory.h"
#include "fixtures.h"

static void test_activations(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 2);
  double s = 2048, b = 2, h = 12288, a = 96, t = 8;
  wl.flash_attention = false;
  assert_rel(ts_memory_layer_activations(&wl), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)),
             1e-12);
  wl.recompute = TS_RECOMPUTE_SELECTIVE;
  assert_rel(ts_memory_layer_activations(&wl), s * b * h * (10 + 24 / t), 1e-12);
  wl.recompute = TS_RECOMPUTE_NONE;
  wl.flash_attention = true;
  assert_rel(ts_memory_layer_activations(&wl), s * b * h * (10 + 24 / t), 1e-12);
  /* Sequence parallelism: sbh (34/t + 5as/(ht)); selective (or flash attention): 34 sbh/t. */
  wl.sequence_parallel = true;
  wl.flash_attention = false;
  assert_rel(ts_memory_layer_activations(&wl), s * b * h * (34 / t + 5 * a * s / (h * t)), 1e-12);
  wl.recompute = TS_RECOMPUTE_SELECTIVE;
  assert_rel(ts_memory_layer_activations(&wl), s * b * h * 34 / t, 1e-12);
  /* Full recomputation keeps each layer's input sharded: 2sbh/t per layer and microbatch, and
   * the layer being recomputed holds its activations and, without flash, its 5as^2b/t of
   * scores; the first stage also keeps the embedding dropout's mask, sbh/t bytes for each of
   * its 16 microbatches in flight. */
  wl.recompute = TS_RECOMPUTE_FULL;
  wl.pp = 16;
  wl.dp = 8;
  ts_memory m0;
  ts_memory_stage(&wl, 0, &m0);
  double scores = 5 * a * s * s * b / t;
  assert_rel(m0.bytes[TS_MEM_ACTIVATIONS],
             6 * 16 * 2 * s * b * h / t + ts_memory_layer_activations(&wl) + scores +
                 16 * s * b * h / t,
             1e-12);
  /* The last stage at its loss, without recomputation and with flash attention: its 6 layers'
   * activations for its one microbatch in flight, Megatron's fp32 copy beside the bf16 logits
   * (6 bytes a logit, vocabulary split over t) and the final norm's input and output (2sbh/t
   * bytes each, sequence-sharded). */
  wl.recompute = TS_RECOMPUTE_NONE;
  wl.flash_attention = true;
  ts_memory last;
  ts_memory_stage(&wl, 15, &last);
  double v = (double)ts_workload_padded_vocab(&wl);
  assert_rel(last.bytes[TS_MEM_ACTIVATIONS],
             6 * 34 * s * b * h / t + 6 * s * b * v / t + 2 * 2 * s * b * h / t, 1e-12);
  wl.flash_attention = false;
  /* Without dropout no masks are kept: the hidden ones (2 sbh) and the attention's (1 byte a
   * score), nor the dropout's output (2): the softmax's output alone stays. */
  wl.recompute = TS_RECOMPUTE_NONE;
  wl.sequence_parallel = false;
  wl.model.attention_dropout = wl.model.hidden_dropout = 0;
  assert_rel(ts_memory_layer_activations(&wl), s * b * h * (8 + 24 / t + 2 * a * s / (h * t)),
             1e-12);
}

/* FP8 (Transformer Engine keeps the FP8 copy of each linear layer's input) and Megatron-Core's
 * recompute modules, on a GPT layer (f = 4h, tp 8, flash attention, dropout). */
static void test_fp8_and_recompute_modules(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 2);
  double sbh = 2048.0 * 2 * 12288, t = 8;
  /* QKV's and FC1's inputs 1 byte a value (replicated), the projection's and FC2's (split). */
  wl.fp8 = TS_FP8_HYBRID;
  assert_rel(ts_memory_layer_activations(&wl), sbh * (8 + (24 - 1 - 4) / t), 1e-12);
  wl.fp8 = TS_FP8_NONE;
  /* layernorm: the two norms' outputs (QKV's and FC1's inputs) go. */
  wl.recompute = TS_RECOMPUTE_SELECTIVE;
  wl.is_recompute_modules_set = true;
  wl.recompute_modules = TS_RECOMPUTE_LAYERNORM;
  assert_rel(ts_memory_layer_activations(&wl), sbh * (6 + 24 / t), 1e-12);
  /* moe_act: the experts' FC2 inputs (2 bytes, f_e / etp wide, of the r = k token copies). */
  wl.model.n_experts = 8;
  wl.model.moe_topk = 2;
  wl.model.moe_ffn_hidden = 4096;
  wl.ep = 8;
  wl.dp = 8;
  wl.recompute_modules = 0;
  double kept = ts_memory_moe_layer_activations(&wl);
  wl.recompute_modules = TS_RECOMPUTE_MOE_ACT;
  double r = 2 * ts_workload_moe_token_factor(&wl);
  assert_rel(kept - ts_memory_moe_layer_activations(&wl), sbh * 2 * r * 4096 / (8 * 12288), 1e-12);
  /* The probabilities' weighting: plain PyTorch keeps the expert outputs in fp32 (4 bytes a value
   * of the k / t copies); today's Megatron-Core weighs inside the experts' activation and keeps
   * each copy's fp32 probability. */
  wl.recompute_modules = 0;
  wl.framework = TS_FRAMEWORK_PYTORCH;
  double torch = ts_memory_moe_layer_activations(&wl);
  wl.framework = TS_FRAMEWORK_MEGATRON;
  assert_rel(torch - kept, sbh * (4.0 * 2 / t - 4.0 * r / 12288), 1e-9);
}

/* Plain PyTorch's grouped-query attention through SDPA repeats K and V to every query head
 * first, and SDPA keeps the copies: 2 bytes a value of a heads' keys and values instead of g's;
 * flash_attn_func (attention flash2) and Megatron take the groups as they are. */
static void test_repeated_kv(void **state) {
  (void)state;
  ts_workload wl = test_workload(32, 4096, 32, 4096, 128256, 1, 1, 1, 2, 1);
  wl.model.n_query_groups = 8;
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.attention = TS_ATTENTION_FLASH2;
  double grouped = ts_memory_layer_activations(&wl);
  assert_false(ts_workload_repeats_kv(&wl));
  wl.attention = TS_ATTENTION_SDPA;
  assert_true(ts_workload_repeats_kv(&wl));
  double tokens = 4096.0 * (double)wl.micro_batch, d = 128;
  assert_rel(ts_memory_layer_activations(&wl) - grouped, 2.0 * tokens * (32 - 8) * 2 * d, 1e-12);
  wl.framework = TS_FRAMEWORK_MEGATRON;
  assert_false(ts_workload_repeats_kv(&wl));
  assert_rel(ts_memory_layer_activations(&wl), grouped, 1e-12);
}

/* PyTorch's ring attention holds, during a layer's backward, the keys and values of all cp
 * ranks (its all-gather's output, one allocation), the fp32 gradients of the queries, keys and
 * values, the fp32 key-value gradients received, sent and copied by _partial_update, the flash
 * backward's fp32 query-gradient accumulator, and a step's flash gradients and key-value
 * concatenation: on top of a recomputed layer's activations with full recomputation, and after
 * the logits are freed without it. */
static void test_pytorch_ring_memory(void **state) {
  (void)state;
  ts_workload wl = test_workload(4, 4096, 32, 65536, 1024, 1, 1, 1, 1, 1);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.attention = TS_ATTENTION_SDPA; /* repeat_kv before SDPA: the ring carries 32 heads */
  wl.model.n_query_groups = 8;
  wl.cp = 8;
  double rows = 65536.0 / 8, q = rows * 32 * 128, kv = rows * 32 * 256;
  double ring = 2 * 8 * kv + 4 * (q + kv) + 12 * kv + 4 * q + 2 * (q + kv / 2 + kv);
  for (int full = 0; full < 2; full++) {
    wl.recompute = full ? TS_RECOMPUTE_FULL : TS_RECOMPUTE_NONE;
    ts_memory te, torch;
    wl.cp_attention = TS_CP_ATTENTION_TE;
    ts_memory_stage(&wl, 0, &te);
    wl.cp_attention = TS_CP_ATTENTION_PYTORCH;
    ts_memory_stage(&wl, 0, &torch);
    /* without recomputation the ring's bytes replace the loss's (fp32 logits, 12 bytes a
     * value, and the final norm's input and output) as what comes on top of the activations */
    double at_loss = 12.0 * rows * 1024 + 2 * 2.0 * rows * 4096;
    assert_rel(torch.bytes[TS_MEM_ACTIVATIONS] - te.bytes[TS_MEM_ACTIVATIONS],
               full ? ring : ring - at_loss, 1e-9);
    assert_true(torch.largest_alloc_bytes >= 2 * 8 * kv);
    assert_rel(torch.largest_alloc_bytes, fmax(te.largest_alloc_bytes, 2 * 8 * kv), 1e-12);
  }
}

static void test_stage_memory(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 1);
  wl.recompute = TS_RECOMPUTE_FULL;
  ts_memory m0, m1;
  ts_memory_stage(&wl, 1, &m1);
  double p1 = ts_cost_stage_params(&wl, 1);
  assert_rel(m1.bytes[TS_MEM_WEIGHTS], 2 * p1, 1e-12);
  assert_rel(m1.bytes[TS_MEM_GRADIENTS], 4 * p1, 1e-12);
  assert_rel(m1.bytes[TS_MEM_OPTIMIZER], 12 * p1, 1e-12); /* ZeRO-0: 2 + 4 + 12 = 18 B */
  wl.zero_stage = 1;
  ts_memory_stage(&wl, 1, &m1);
  assert_rel(m1.bytes[TS_MEM_OPTIMIZER], 12 * p1 / 8, 1e-12); /* 6 + 12/d */
  assert_rel(m1.bytes[TS_MEM_GRADIENTS], 4 * p1, 1e-12);
  wl.grad_reduce_in_bf16 = true; /* bf16 gradient buffers: 2 bytes a parameter */
  ts_memory_stage(&wl, 1, &m1);
  assert_rel(m1.bytes[TS_MEM_GRADIENTS], 2 * p1, 1e-12);
  assert_rel(m1.bytes[TS_MEM_OPTIMIZER], 12 * p1 / 8, 1e-12);
  wl.grad_reduce_in_bf16 = false;
  wl.zero_stage = 2; /* 2 + 16/d */
  ts_memory_stage(&wl, 1, &m1);
  assert_rel(m1.bytes[TS_MEM_GRADIENTS], 4 * p1 / 8, 1e-12);
  assert_rel(m1.bytes[TS_MEM_OPTIMIZER], 12 * p1 / 8, 1e-12);
  wl.zero_stage = 3; /* 18 B / d, plus two gathered layers and one layer's gradients (FSDP) */
  wl.is_fsdp = true;
  ts_memory_stage(&wl, 1, &m1);
  assert_rel(m1.bytes[TS_MEM_WEIGHTS], 2 * p1 / 8, 1e-12);
  double lp = ts_cost_layer_params(&wl), word = 51200.0 / 8 * 12288, emb = word + 2048.0 * 12288;
  assert_rel(m1.bytes[TS_MEM_BUFFERS], 2 * (2 * lp + emb) + 4 * lp,
             1e-12); /* vocabulary padded to 1,024 x 50 */
  assert_true(lp > emb);
  wl.is_fsdp = false;
  wl.zero_stage = 1;
  ts_memory_stage(&wl, 1, &m1);
  assert_true(m1.bytes[TS_MEM_BUFFERS] == 0);
  /* 1F1B: stage i holds p - i microbatches; full recompute keeps 2sbh per layer each, plus
   * one layer's activations while it is recomputed, and stage 0 the embedding dropout's mask
   * (sbh bytes) of each. */
  ts_memory_stage(&wl, 0, &m0);
  double sbh = 2048.0 * 12288.0, layer = ts_memory_layer_activations(&wl);
  assert_rel(m0.microbatches_in_flight, 16, 1e-15);
  assert_rel(m0.bytes[TS_MEM_ACTIVATIONS], 6 * 16 * 2 * sbh + layer + 16 * sbh, 1e-12);
  assert_rel(m1.microbatches_in_flight, 15, 1e-15);
  /* Interleaved over v = 2 chunks: stage 0 holds its 2 (p - 1) + (v - 1) p = 46 warm-up
   * chunks plus one, 47 chunks of 3 layers = p (1 + (p - 1) / (p v)) = 23.5 microbatches of
   * the stage (Korthikanti et al. section 4.2.3); the last stage 16 + 1 chunks = 8.5. */
  wl.schedule = TS_SCHED_INTERLEAVED;
  wl.virtual_stages = 2;
  ts_memory_stage(&wl, 0, &m0);
  assert_int_equal(ts_memory_chunks_in_flight(&wl, 0), 47);
  assert_rel(m0.microbatches_in_flight, 16 * (1 + 15.0 / 32), 1e-15);
  assert_rel(m0.bytes[TS_MEM_ACTIVATIONS], 6 * 23.5 * 2 * sbh + layer + 23.5 * sbh, 1e-12);
  assert_int_equal(ts_memory_chunks_in_flight(&wl, 15), 17);
  wl.schedule = TS_SCHED_GPIPE;
  wl.virtual_stages = 1;
  ts_memory_stage(&wl, 1, &m1);
  assert_rel(m1.microbatches_in_flight, 1536 / 8, 1e-15);
  /* The last stage (1F1B, one microbatch in flight) with full recomputation: the logits (fp32
   * copy beside the bf16 ones, 6 B each, Megatron) and the final norm's input and output (2 sbh
   * bytes each) are freed by the loss's backward before its layers are recomputed, so the larger
   * of the two is live, not both; without recomputation every layer's activations, the logits
   * and the final norm's tensors are live at the loss. */
  wl.schedule = TS_SCHED_1F1B;
  ts_memory last;
  ts_memory_stage(&wl, 15, &last);
  double logits = 6.0 * 2048 * 51200 / 8;
  double inputs = 6 * 2 * sbh;
  assert_true(logits < layer);
  assert_rel(last.bytes[TS_MEM_ACTIVATIONS], inputs + layer, 1e-12);
  wl.model.vocab = 8 * 1024 * 1024; /* logits now larger than a layer's activations */
  ts_memory_stage(&wl, 15, &last);
  logits = 6.0 * 2048 * (double)ts_workload_padded_vocab(&wl) / 8 + 4 * sbh;
  assert_true(logits > layer);
  assert_rel(last.bytes[TS_MEM_ACTIVATIONS], inputs + logits, 1e-12);
  wl.recompute = TS_RECOMPUTE_NONE;
  ts_memory_stage(&wl, 15, &last);
  assert_rel(last.bytes[TS_MEM_ACTIVATIONS], 6 * layer + logits, 1e-12);
}

/* GPT-1T (full recomputation, ZeRO-1, batch 3072): TP 8 x PP 32 needs about 65 GiB of model
 * states alone (1e12 x 18 B / 256), so the fewest GPUs is TP 8 x PP 64 = 512. */
static void test_smallest_layout(void **state) {
  (void)state;
  ts_workload wl = test_workload(128, 25600, 200, 2048, 50257, 8, 64, 6, 3072, 1);
  wl.recompute = TS_RECOMPUTE_FULL;
  wl.zero_stage = 1;
  double hbm = 64.0 * 1073741824.0;
  ts_gpu gpu = {.hbm_bytes = hbm}; /* no collective library: the bytes decide */
  ts_workload best;
  assert_int_equal(ts_memory_smallest_layout(&wl, 8, 75264, &gpu, &best), 0);
  assert_int_equal(best.tp, 8);
  assert_int_equal(best.pp, 64);
  assert_int_equal(best.dp, 1);
  assert_int_equal(best.n_gpus, 512);
  assert_true(ts_memory_peak(&best, NULL) <= hbm);
  ts_workload fewer = best;
  fewer.pp = 32;
  fewer.n_gpus = 256;
  assert_true(ts_memory_peak(&fewer, NULL) > hbm);
  assert_int_equal(ts_memory_smallest_layout(&wl, 8, 500, &gpu, &best), -1); /* machine too small */
  /* A workload with its own first-stage layers: the advice keeps them, so it needs a pipeline
   * whose other stages split the rest evenly (126 = 6 + 120: pp - 1 dividing 120). */
  wl = test_workload(126, 4096, 32, 2048, 50257, 8, 1, 1, 64, 1);
  wl.first_stage_layers = 6;
  assert_int_equal(ts_memory_smallest_layout(&wl, 8, 75264, &gpu, &best), 0);
  assert_int_equal(best.first_stage_layers, 6);
  assert_true(best.pp >= 2 && 120 % (best.pp - 1) == 0);
  assert_int_equal(ts_workload_check_stage_layers(&best, NULL), 0);
  /* DeepSpeed's ZeRO-3 runs no pipeline: the advice stays at one stage (the 1T model's ZeRO-1
   * answer above needs 64), what the loader accepts; FSDP's ZeRO-3 may pipeline. */
  wl = test_workload(128, 25600, 200, 2048, 50257, 8, 1, 8, 3072, 1);
  wl.recompute = TS_RECOMPUTE_FULL;
  wl.zero_stage = 3;
  assert_int_equal(ts_memory_smallest_layout(&wl, 8, 75264, &gpu, &best), 0);
  assert_int_equal(best.pp, 1);
  assert_false(ts_workload_zero_refuses_pipeline(&best));
  wl.pp = 2;
  assert_true(ts_workload_zero_refuses_pipeline(&wl));
  wl.is_fsdp = true;
  assert_false(ts_workload_zero_refuses_pipeline(&wl));
}

/* DeepSpeed's ZeRO-1/2 (megatron-deepspeed, gpt-neox): low-precision gradients on every rank
 * (ZeRO-2: sharded), 16 B a parameter sharded (fp32 master, moments and gradient partition),
 * and two reduction buckets of 5e8 elements; Megatron's distributed optimizer: fp32 gradients,
 * 12 B sharded. */
static void test_deepspeed_states(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 1);
  wl.recompute = TS_RECOMPUTE_FULL;
  wl.zero_stage = 1;
  ts_memory mega, ds;
  ts_memory_stage(&wl, 1, &mega);
  wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
  ts_memory_stage(&wl, 1, &ds);
  double p1 = ts_cost_stage_params(&wl, 1);
  assert_rel(mega.bytes[TS_MEM_GRADIENTS], 4 * p1, 1e-12);
  assert_rel(ds.bytes[TS_MEM_GRADIENTS], 2 * p1, 1e-12);
  assert_rel(mega.bytes[TS_MEM_OPTIMIZER], 12 * p1 / 8, 1e-12);
  assert_rel(ds.bytes[TS_MEM_OPTIMIZER], 16 * p1 / 8, 1e-12);
  assert_rel(ds.bytes[TS_MEM_BUFFERS], 2 * 5e8 * 2, 1e-12);
  wl.framework = TS_FRAMEWORK_GPT_NEOX;
  wl.zero_stage = 2;
  wl.pp = 1;
  ts_memory_stage(&wl, 0, &ds);
  double p0 = ts_cost_stage_params(&wl, 0);
  assert_rel(ds.bytes[TS_MEM_GRADIENTS], 2 * p0 / 8, 1e-12);
  ts_state_bytes per = ts_memory_state_bytes(&wl);
  assert_true(per.is_deepspeed && per.weight + per.gradient + per.sharded == 20);
  /* DeepSpeed's ZeRO-3: gradient partitions in the model's precision, 2 + 2 + 12 B sharded,
   * and at the step a sub-group's gradients flattened and cast to fp32 (2 + 4 B an element);
   * FSDP's: fp32 gradients, no such copies */
  wl.zero_stage = 3;
  per = ts_memory_state_bytes(&wl);
  assert_true(!per.is_deepspeed && per.weight == 2 && per.gradient == 2 && per.sharded == 12);
  ts_memory_stage(&wl, 0, &ds);
  assert_rel(ds.bytes[TS_MEM_GRADIENTS], 2 * p0 / 8, 1e-12);
  assert_rel(ds.step_bytes, 6 * 1e9, 1e-12); /* 2.2e10 elements a rank: 1e9 at a time */
  wl.deepspeed_version = 316; /* 0.3.16's sub-groups of 1e12: the whole partition at once */
  ts_memory_stage(&wl, 0, &ds);
  assert_rel(ds.step_bytes, 6 * p0 / 8, 1e-12);
  wl.deepspeed_version = 0;
  wl.is_fsdp = true;
  assert_true(ts_memory_state_bytes(&wl).gradient == 4);
  ts_memory_stage(&wl, 0, &ds);
  assert_true(ds.step_bytes == 0);
  wl.is_fsdp = false;
  /* Megatron-Core's precision-aware optimizer with bf16 moments (DeepSeek-V3's): 4 + 2 + 2. */
  wl.framework = TS_FRAMEWORK_MEGATRON;
  wl.zero_stage = 1;
  assert_true(ts_memory_state_bytes(&wl).sharded == 12);
  wl.exp_avg_bytes = wl.exp_avg_sq_bytes = 2;
  per = ts_memory_state_bytes(&wl);
  assert_true(per.sharded == 8 && per.gradient == 4 && per.weight == 2);
  /* Megatron-Core's --main-params-dtype fp16, or Apex's 16-bit remainders: 2 + 2 + 2. */
  wl.master_weight_bytes = 2;
  per = ts_memory_state_bytes(&wl);
  assert_true(per.sharded == 6 && per.gradient == 4 && per.weight == 2);
  /* Apex's DistributedFusedAdam with dtype bf16 on a bf16 model (Nemotron-4 340B's NeMo yaml):
   * no stored copy, the moments alone, sharded as before. */
  wl.master_weight_bytes = 0;
  wl.is_master_weights_none = true;
  per = ts_memory_state_bytes(&wl);
  assert_true(per.sharded == 4 && per.gradient == 4 && per.weight == 2);
  ts_memory sharded;
  ts_memory_stage(&wl, 0, &sharded);
  assert_rel(sharded.bytes[TS_MEM_OPTIMIZER],
             4 * ts_cost_stage_params(&wl, 0) / (double)ts_workload_shard_ranks(&wl), 1e-12);
}

/* Autocast (PyTorch's AMP): fp32 weights and gradients, two fp32 moments, no master copy; each
 * layer keeps its weights' bf16 copies for the backward (every layer without recomputation,
 * one layer's under full recomputation), the last stage its output layer's; ZeRO-1 gathers the
 * fp32 weights. */
static void test_autocast_memory(void **state) {
  (void)state;
  ts_workload wl = test_workload(8, 2048, 16, 2048, 50257, 1, 2, 4, 64, 2);
  wl.fusions &= ~(1u << TS_FUSE_GRADIENT_ACCUMULATION);
  ts_memory plain, amp;
  ts_memory_stage(&wl, 1, &plain);
  wl.is_autocast = true;
  ts_state_bytes per = ts_memory_state_bytes(&wl);
  assert_true(per.weight == 4 && per.gradient == 4 && per.sharded == 8 && !per.is_deepspeed);
  ts_memory_stage(&wl, 1, &amp);
  double p1 = ts_cost_stage_params(&wl, 1), layer = ts_cost_layer_params(&wl);
  assert_rel(amp.bytes[TS_MEM_WEIGHTS], 4 * p1, 1e-12);
  assert_rel(amp.bytes[TS_MEM_OPTIMIZER], 8 * p1, 1e-12);
  double head =
      2.0 * (double)ts_workload_padded_vocab(&wl) * 2048; /* the last stage's output layer */
  double held = amp.microbatches_in_flight * 4 * 2 * layer; /* 4 layers, bf16 copies */
  assert_rel(amp.bytes[TS_MEM_ACTIVATIONS] - plain.bytes[TS_MEM_ACTIVATIONS], held + head, 1e-12);
  wl.recompute = TS_RECOMPUTE_FULL;
  ts_memory full_amp;
  ts_memory_stage(&wl, 0, &full_amp);
  wl.is_autocast = false;
  ts_memory full_plain;
  ts_memory_stage(&wl, 0, &full_plain);
  /* one layer's copies while it is recomputed, or every layer's, cached by autocast, at the
   * forward's end beside the layers' inputs (stage 0: no loss) */
  double stage_layers = 4,
         inputs = stage_layers * full_amp.microbatches_in_flight * 2 * 2048 * 2 * 2048;
  assert_rel(
      full_amp.bytes[TS_MEM_ACTIVATIONS],
      fmax(full_plain.bytes[TS_MEM_ACTIVATIONS] + 2 * layer, inputs + 2 * stage_layers * layer),
      1e-12);
}

/* Plain PyTorch's DistributedDataParallel keeps its reducer's buckets, a second copy of the
 * gradients in the parameters' dtype, under ZeroRedundancyOptimizer too; not with
 * gradient_as_bucket_view, one rank, or Megatron's own buffers. */
static void test_ddp_buckets(void **state) {
  (void)state;
  ts_workload wl = test_workload(8, 2048, 16, 2048, 50257, 1, 1, 8, 64, 2);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.fusions = 0;
  wl.is_autocast = true;
  double params = ts_cost_stage_params(&wl, 0);
  ts_memory m;
  ts_memory_stage(&wl, 0, &m);
  assert_rel(m.bytes[TS_MEM_BUFFERS], 4 * params, 1e-12);
  wl.zero_stage = 1;
  ts_memory_stage(&wl, 0, &m);
  assert_rel(m.bytes[TS_MEM_BUFFERS], 4 * params, 1e-12);
  wl.is_autocast = false; /* bf16 weights: bf16 buckets */
  ts_memory_stage(&wl, 0, &m);
  assert_rel(m.bytes[TS_MEM_BUFFERS], 2 * params, 1e-12);
  wl.is_gradient_as_bucket_view = true;
  ts_memory_stage(&wl, 0, &m);
  assert_true(m.bytes[TS_MEM_BUFFERS] == 0);
  wl.is_gradient_as_bucket_view = false;
  wl.dp = 1;
  wl.n_gpus = 1;
  ts_memory_stage(&wl, 0, &m);
  assert_true(m.bytes[TS_MEM_BUFFERS] == 0);
  wl.dp = 8;
  wl.n_gpus = 8;
  wl.framework = TS_FRAMEWORK_MEGATRON;
  ts_memory_stage(&wl, 0, &m);
  assert_true(m.bytes[TS_MEM_BUFFERS] == 0);
}

/* Autocast's gradients (zero_grad(set_to_none=True)): with one microbatch a step none exists at
 * the loss, so the peak there holds the weights, moments and activations alone; with two, the
 * second microbatch runs beside all of them. Where the gradients outweigh the activations the
 * peak is the backward's end: every gradient beside the first layer's working set. */
static void test_autocast_gradients_made_in_backward(void **state) {
  (void)state;
  ts_workload wl = test_workload(8, 2048, 16, 2048, 50257, 1, 1, 1, 2, 1);
  wl.is_autocast = true;
  ts_memory two, one;
  ts_memory_stage(&wl, 0, &two);
  wl.global_batch = 1;
  ts_memory_stage(&wl, 0, &one);
  double grads = two.bytes[TS_MEM_GRADIENTS];
  assert_rel(grads, 4 * ts_cost_stage_params(&wl, 0), 1e-12);
  assert_rel(one.bytes[TS_MEM_ACTIVATIONS], two.bytes[TS_MEM_ACTIVATIONS], 1e-12);
  assert_rel(one.total_bytes, two.total_bytes - grads, 1e-12);
  wl.model.seq = 128; /* activations far below the gradients */
  ts_memory late;
  ts_memory_stage(&wl, 0, &late);
  assert_rel(late.bytes[TS_MEM_ACTIVATIONS], ts_memory_layer_activations(&wl), 1e-12);
  assert_rel(late.total_bytes,
             late.bytes[TS_MEM_WEIGHTS] + late.bytes[TS_MEM_OPTIMIZER] +
                 late.bytes[TS_MEM_GRADIENTS] + late.bytes[TS_MEM_ACTIVATIONS],
             1e-12);
}

/* torch.optim's foreach Adam: exp_avg_sq_sqrt, a list as large as the second moments of the
 * parameters the rank steps (ZeRO-1 shards them), allocated once every backward is done; the
 * peak is the passes' or the step's, whichever is larger. A fused step allocates nothing. */
static void test_foreach_adam_step(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 1);
  wl.recompute = TS_RECOMPUTE_FULL;
  ts_memory fused, foreach;
  ts_memory_stage(&wl, 1, &fused);
  assert_true(fused.step_bytes == 0);
  wl.adam_implementation = TS_ADAM_FOREACH;
  ts_memory_stage(&wl, 1, &foreach);
  double p1 = ts_cost_stage_params(&wl, 1), states = 18 * p1;
  assert_rel(foreach.step_bytes, 4 * p1, 1e-12);
  assert_rel(fused.total_bytes, states + fused.bytes[TS_MEM_ACTIVATIONS], 1e-12);
  assert_true(foreach.bytes[TS_MEM_ACTIVATIONS] == fused.bytes[TS_MEM_ACTIVATIONS]);
  /* here the stage's activations (a few GiB under full recomputation) are smaller */
  assert_true(4 * p1 > fused.bytes[TS_MEM_ACTIVATIONS]);
  assert_rel(foreach.total_bytes, states + 4 * p1, 1e-12);
  wl.zero_stage = 1; /* sharded over 8: 6 B + 12 B / 8 of states, 4 B / 8 at the step */
  ts_memory_stage(&wl, 1, &foreach);
  assert_rel(foreach.step_bytes, 4 * p1 / 8, 1e-12);
  wl.exp_avg_sq_bytes = 2; /* bf16 second moments: a bf16 list */
  ts_memory_stage(&wl, 1, &foreach);
  assert_rel(foreach.step_bytes, 2 * p1 / 8, 1e-12);
}

/* The largest allocation near the peak (the last stage's fp32 logits, else FC1's output) and
 * the caching allocator's risk: a peak that fits but lies within it of the limit. */
static void test_fragmentation_risk(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 50257, 8, 16, 8, 1536, 2);
  double s = 2048, b = 2, t = 8;
  ts_memory first, last;
  ts_memory_stage(&wl, 0, &first);
  ts_memory_stage(&wl, 15, &last);
  assert_rel(first.largest_alloc_bytes, 2 * s * b * 4 * 12288 / t, 1e-12); /* FC1's output */
  assert_rel(last.largest_alloc_bytes, 4 * s * b * (double)ts_workload_padded_vocab(&wl) / t,
             1e-12);
  double usable = last.total_bytes + last.largest_alloc_bytes / 2;
  assert_true(ts_memory_fragmentation_risk(&wl, &last, usable));
  assert_false(ts_memory_fragmentation_risk(&wl, &last, last.total_bytes * 0.99)); /* no fit */
  assert_false(
      ts_memory_fragmentation_risk(&wl, &last, last.total_bytes + last.largest_alloc_bytes));
  wl.allocator = TS_ALLOCATOR_EXPANDABLE;
  assert_false(ts_memory_fragmentation_risk(&wl, &last, usable));
}

/* ZeRO-3's gathered tensors are single allocations too: under DeepSpeed each weight matrix is
 * gathered whole (FC1's 4 h^2 elements, larger here than the embedding, FC1's output or the
 * logits); under FSDP
 * each unit's gradients enter the reduce-scatter as one fp32 tensor (a layer's parameters). */
static void test_zero3_largest_allocation(void **state) {
  (void)state;
  ts_workload wl = test_workload(4, 8192, 64, 2048, 25600, 1, 1, 64, 64, 1);
  wl.zero_stage = 3;
  wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
  wl.deepspeed_version = 316;
  wl.stage3_prefetch_elems = 5e7;
  wl.stage3_persistence_elems = 1e5;
  wl.stage3_max_live_elems = 1e9;
  ts_memory m;
  ts_memory_stage(&wl, 0, &m);
  assert_rel(m.largest_alloc_bytes, 2.0 * 4 * 8192.0 * 8192, 1e-12);
  wl.framework = TS_FRAMEWORK_PYTORCH; /* FSDP */
  wl.is_fsdp = true;
  wl.deepspeed_version = 0;
  ts_memory_stage(&wl, 0, &m);
  assert_rel(m.largest_alloc_bytes, 4.0 * ts_cost_layer_params(&wl), 1e-12);
}

/* The loss's logits on the last stage (TP 1, no recomputation): plain PyTorch's F.cross_entropy
 * on fp32 logits holds 12 bytes a logit at the backward's start; flash-attn's fused loss
 * (fused_kernels: cross_entropy) the bf16 logits and their bf16 gradient, 4; its largest
 * allocation is the bf16 logits, not an fp32 copy. */
static void test_fused_cross_entropy(void **state) {
  (void)state;
  ts_workload wl = test_workload(4, 1024, 16, 2048, 50368, 1, 1, 8, 64, 4);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.recompute = TS_RECOMPUTE_NONE;
  double logits = 2048.0 * 4 * (double)ts_workload_padded_vocab(&wl);
  ts_memory plain, fused;
  ts_memory_stage(&wl, 0, &plain);
  wl.fusions |= 1u << TS_FUSE_CROSS_ENTROPY;
  ts_memory_stage(&wl, 0, &fused);
  assert_rel(plain.bytes[TS_MEM_ACTIVATIONS] - fused.bytes[TS_MEM_ACTIVATIONS], (12 - 4) * logits,
             1e-12);
  assert_rel(plain.largest_alloc_bytes, 4 * logits, 1e-12);
  assert_rel(fused.largest_alloc_bytes, 2 * logits, 1e-12);
}

/* flash-attn's fused_dropout_add_ln keeps each norm's input as the fp32 residual: 2 bytes a value
 * more for each of a layer's two norms. */
static void test_dropout_add_layer_norm_memory(void **state) {
  (void)state;
  ts_workload wl = test_workload(4, 1024, 16, 2048, 50368, 1, 1, 4, 32, 4);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  double plain = ts_memory_layer_activations(&wl);
  wl.fusions |= 1u << TS_FUSE_DROPOUT_ADD_LAYER_NORM;
  assert_rel(ts_memory_layer_activations(&wl) - plain, 2.0 * 2 * 2048 * 4 * 1024, 1e-12);
}

/* flash-attn's pad_input (stack.unpad_input): the padded attention output (the projection's
 * input) and FlashAttention-2's unpadded one both kept, 2 bytes a value of the heads' width more
 * a layer. */
static void test_unpad_input_memory(void **state) {
  (void)state;
  ts_workload wl = test_workload(4, 1024, 16, 2048, 50368, 2, 1, 4, 32, 4);
  wl.framework = TS_FRAMEWORK_PYTORCH;
  wl.attention = TS_ATTENTION_FLASH2;
  double plain = ts_memory_layer_activations(&wl);
  wl.is_unpad_input = true;
  assert_rel(ts_memory_layer_activations(&wl) - plain, 2.0 * 2048 * 4 * 1024 / 2, 1e-12);
}

/* A Llama 3 8B layer as torchtitan builds it (h 4096, 32 heads, 8 key-value groups, SwiGLU of
 * 14,336, no biases), micro-batch 2 x 8,192. recompute: op keeps its input, wq's, wv's, w1's and
 * w2's outputs and the attention's output with its fp32 log-sum-exp: 63,616 bytes a token (the
 * H100 measured 63,615, bench/device/h100_op_sac.csv); the stage holds that for each layer and,
 * at the loss, the larger of the logits (F.cross_entropy's 12 bytes a logit) and one layer's
 * activations as without recomputation. */
static ts_workload llama8b_layers(long layers) {
  ts_workload wl = test_workload(layers, 4096, 32, 8192, 128256, 1, 1, 1, 2, 2);
  titan_llama(&wl, 8, 14336);
  return wl;
}

static void test_op_recompute_memory(void **state) {
  (void)state;
  ts_workload wl = llama8b_layers(4);
  double tokens = 2.0 * 8192, logits = 12.0 * tokens * (double)ts_workload_padded_vocab(&wl);
  double layer = ts_memory_layer_activations(&wl);
  ts_memory none, op;
  ts_memory_stage(&wl, 0, &none);
  wl.recompute = TS_RECOMPUTE_OP;
  ts_memory_stage(&wl, 0, &op);
  /* (no dropout, so no embedding mask; the final norm's input and output, 2 bytes a value each) */
  logits += 4.0 * 4096 * tokens;
  assert_rel(none.bytes[TS_MEM_ACTIVATIONS], 4 * layer + logits, 1e-12);
  assert_rel(op.bytes[TS_MEM_ACTIVATIONS], 4 * 63616.0 * tokens + (logits > layer ? logits : layer),
             1e-12);
  /* torchtitan's eager RMSNorm keeps its fp32 upcast and normalised values instead of its input:
   * 4 bytes a value more for each of the two norms */
  wl.rms_norm_impl = TS_RMS_NORM_EAGER_FP32;
  assert_rel(ts_memory_layer_activations(&wl) - layer, 8.0 * 4096 * tokens, 1e-12);
  /* compiled (stack.compile), the norm keeps what F.rms_norm does and the graph drops w2's
   * output, which no backward reads: 55,424 bytes a token (the H100 measured 55,420) */
  wl.is_compiled = true;
  assert_rel(ts_memory_layer_activations(&wl), layer, 1e-12);
  ts_memory compiled;
  ts_memory_stage(&wl, 0, &compiled);
  assert_rel(compiled.bytes[TS_MEM_ACTIVATIONS],
             4 * 55424.0 * tokens + (logits > layer ? logits : layer), 1e-12);
  /* gate and up as one linear (stack.gate_up fused): its output, twice the FFN wide, is the
   * fifth mm and kept, the down projection's the sixth and not: 2 (14,336 - 4,096) bytes a
   * token more than separate's w1 and w2 */
  wl.is_compiled = false;
  wl.gate_up = TS_GATE_UP_FUSED;
  ts_memory_stage(&wl, 0, &compiled);
  assert_rel(compiled.bytes[TS_MEM_ACTIVATIONS],
             4 * (63616.0 + 2 * (14336 - 4096)) * tokens + (logits > layer ? logits : layer),
             1e-12);
}

/* torchao's float8 linears, compiled (stack.fp8_linear torchao): the graph keeps neither the
 * norms' outputs nor SwiGLU's product (nor their FP8 casts): a layer keeps 2 x 2 sbh + 2 sbf
 * bytes fewer than bf16's (bench/device/float8_block.py measured exactly that, 0.738 GB of 2.485
 * at this shape), the projection's input still bf16; no FP8 weight copy, where Transformer
 * Engine's adds 2 bytes a layer parameter. Under op it keeps what bf16 keeps (measured). */
static void test_torchao_float8_memory(void **state) {
  (void)state;
  ts_workload wl = llama8b_layers(4);
  wl.is_compiled = true;
  double tokens = 2.0 * 8192, bf16 = ts_memory_layer_activations(&wl);
  ts_memory plain, te, torchao;
  ts_memory_stage(&wl, 0, &plain);
  wl.fp8 = TS_FP8_HYBRID;
  wl.fp8_recipe = TS_FP8_RECIPE_TENSORWISE;
  ts_memory_stage(&wl, 0, &te);
  wl.fp8_linear = TS_FP8_LINEAR_TORCHAO;
  ts_memory_stage(&wl, 0, &torchao);
  assert_rel(bf16 - ts_memory_layer_activations(&wl), (2.0 * 2 * 4096 + 2.0 * 14336) * tokens,
             1e-12);
  assert_rel(bf16 - ts_memory_layer_activations(&wl), 0.738e9, 1e-3);
  assert_rel(torchao.bytes[TS_MEM_WEIGHTS], plain.bytes[TS_MEM_WEIGHTS], 1e-12);
  assert_true(te.bytes[TS_MEM_WEIGHTS] > plain.bytes[TS_MEM_WEIGHTS]);
  wl.recompute = TS_RECOMPUTE_OP;
  ts_memory op_fp8;
  ts_memory_stage(&wl, 0, &op_fp8);
  wl.fp8 = TS_FP8_NONE;
  ts_memory op_bf16;
  ts_memory_stage(&wl, 0, &op_bf16);
  assert_rel(op_fp8.bytes[TS_MEM_ACTIVATIONS], op_bf16.bytes[TS_MEM_ACTIVATIONS], 1e-12);
}

/* Plain PyTorch's FSDP under a mixed-precision policy keeps fp32 shards, fp32 gradients and
 * Adam's fp32 moments, no master copy: 16 bytes a parameter over the shard ranks (measured:
 * 4.000 + 4.002 + 8.000, bench/device/h100_op_sac_fsdp2.csv); without sharding, the bf16
 * weights and fp32 master copy of the plain recipe (18). */
static void test_fsdp_state_bytes(void **state) {
  (void)state;
  ts_workload wl = llama8b_layers(4);
  ts_state_bytes plain = ts_memory_state_bytes(&wl);
  assert_rel(plain.weight + plain.gradient + plain.sharded, 18, 1e-12);
  wl.zero_stage = 3;
  wl.is_fsdp = true;
  ts_state_bytes fsdp = ts_memory_state_bytes(&wl);
  assert_rel(fsdp.weight, 4, 1e-12);
  assert_rel(fsdp.gradient, 4, 1e-12);
  assert_rel(fsdp.sharded, 8, 1e-12);
}

/* DeepSpeed's ZeRO-3 buffers (zero3.h): 8 layers of 1024 (12.6M elements of matrices each),
 * at stage3_max_reuse_distance 1e9 every weight stays gathered from its forward use to its
 * backward one (the whole model is 0.1B elements), so the peak holds them all (the tied output
 * layer once); then a reduce bucket (5e8 elements, but no more than the model) and FC1's
 * gradient, all in bf16. */
static void test_deepspeed_zero3_buffers(void **state) {
  (void)state;
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 1, 1, 8, 16, 1);
  wl.framework = TS_FRAMEWORK_MEGATRON_DEEPSPEED;
  wl.zero_stage = 3;
  wl.stage3_prefetch_elems = 5e7;
  wl.stage3_persistence_elems = 1e5;
  wl.stage3_max_reuse_elems = 1e9;
  ts_memory m;
  ts_memory_stage(&wl, 0, &m);
  double matrices = 3072.0 * 1024 + 1024.0 * 1024 + 2 * 4096.0 * 1024;
  double gathered = 1024.0 * 1024 + 512.0 * 1024 + 8 * matrices;
  double params = ts_cost_stage_params(&wl, 0);
  assert_rel(m.bytes[TS_MEM_BUFFERS], 2 * gathered + 2 * params + 2 * 4096.0 * 1024, 1e-12);
  /* Nothing kept: at most a matrix in use and the prefetch window ahead of it. */
  wl.stage3_max_reuse_elems = 0;
  ts_memory_stage(&wl, 0, &m);
  assert_true(m.bytes[TS_MEM_BUFFERS] < 2 * gathered + 2 * params + 2 * 4096.0 * 1024);
  assert_true(m.bytes[TS_MEM_BUFFERS] >= 2 * (5e7 + 4096.0 * 1024) + 2 * params);
  /* Nor does a prefetch bucket of more than the model hold any weight twice. */
  wl.stage3_prefetch_elems = 1e10;
  ts_memory_stage(&wl, 0, &m);
  assert_rel(m.bytes[TS_MEM_BUFFERS], 2 * gathered + 2 * params + 2 * 4096.0 * 1024, 1e-12);
  /* Before 0.6.0 PyTorch's list collectives flatten a parameter whole beside it (ProcessGroupNCCL's
   * flatten_for_scatter_gather), one at a time: the largest's, FC1's, more. */
  ts_memory v0316;
  wl.deepspeed_version = 316;
  ts_memory_stage(&wl, 0, &v0316);
  assert_rel(v0316.bytes[TS_MEM_BUFFERS] - m.bytes[TS_MEM_BUFFERS], 2 * 4096.0 * 1024, 1e-12);
  /* Without contiguous gradients no bucket buffer: the bucket's gradients (here the model's,
   * under the 5e8-element bucket) and their flattened copy, one allocation of the model's. */
  ts_memory flat;
  wl.contiguous_gradients = false;
  ts_memory_stage(&wl, 0, &flat);
  assert_rel(flat.bytes[TS_MEM_BUFFERS] - v0316.bytes[TS_MEM_BUFFERS], 2 * (params - 4096.0 * 1024),
             1e-12);
  assert_rel(flat.largest_alloc_bytes, 2 * params, 1e-12);
  wl.contiguous_gradients = true;
  wl.deepspeed_version = 0;
  /* Parameters under the persistence threshold stay whole on every rank: all of them at 1e10. */
  wl.stage3_persistence_elems = 1e10;
  ts_memory_stage(&wl, 0, &m);
  assert_rel(m.bytes[TS_MEM_WEIGHTS], 2 * params, 1e-12);
}

/* NCCL's buffers against NVIDIA/nccl#964 (4 x A100 on NVLink, PyTorch process groups, a 4 MB
 * all-reduce each, rank 0 read with NCCL 2.16-2.18: ASSUMED 2.18.3, mid-2023's NGC containers'):
 * a two-GPU communicator took 544 MB and any larger one 688 MB. The model: P2P read mode (6 + 6
 * MiB a connection pair), 24 channels, rings and trees at init, the 256 MiB send pool (32 p2p
 * channels x 16 x 512 KiB) at init; rank 0 the root of the tree's chain (a receive only). */
static void test_nccl_memory_measured(void **state) {
  (void)state;
  const double mib = 1048576.0;
  ts_ccl_site a100 = {
      .is_nccl = true, .channels = 24, .gpus_per_node = 4, .nics_per_node = 0, .is_p2p_read = true};
  ts_ccl_comm_use pair = {
      .n_ranks = 2, .nodes = 1, .local_ranks = 2, .is_collective = true, .is_allreduce = true};
  assert_rel(ts_ccl_comm_bytes(&a100, 21803, &pair), 544 * mib, 1e-12);
  ts_ccl_comm_use four = pair;
  four.n_ranks = four.local_ranks = 4;
  assert_rel(ts_ccl_comm_bytes(&a100, 21803, &four), 688 * mib, 1e-12);
  four.n_ranks = four.local_ranks = 3;
  assert_rel(ts_ccl_comm_bytes(&a100, 21803, &four), 688 * mib, 1e-12);
  /* a middle GPU of the chain holds a whole pair more a channel; the library model off: none */
  four.n_ranks = four.local_ranks = 4;
  four.local_index = 1;
  assert_rel(ts_ccl_comm_bytes(&a100, 21803, &four), (256 + 24 * 24) * mib, 1e-12);
  ts_ccl_site none = a100;
  none.is_nccl = false;
  assert_true(ts_ccl_comm_bytes(&none, 21803, &four) == 0);
}

/* Runtime connect (2.22+) connects only what a communicator uses: a tensor-parallel group in one
 * node, on an H100 (write mode: 10 + 2 MiB a pair), keeps its ring and drops the tree and the
 * init-time send pool that 2.21 allocates; an expert all-to-all connects every peer's channels
 * (NVIDIA/nccl#1685: 32 channels a peer, 10 and 2 MiB allocations). */
static void test_nccl_memory_versions(void **state) {
  (void)state;
  const double mib = 1048576.0;
  ts_ccl_site h100 = {.is_nccl = true, .channels = 16, .gpus_per_node = 8, .nics_per_node = 8};
  ts_ccl_comm_use tp = {.n_ranks = 8,
                        .nodes = 1,
                        .local_ranks = 8,
                        .local_index = 1,
                        .is_collective = true,
                        .is_allreduce = true};
  double fixed = 2 * mib * (2 + 3 * 16);
  assert_rel(ts_ccl_comm_bytes(&h100, 22203, &tp), fixed + 16 * 12 * mib, 1e-12);
  assert_rel(ts_ccl_comm_bytes(&h100, 22105, &tp),
             fixed + 16 * 12 * mib + 16 * 12 * mib + 16 * 16 * 512 * 1024.0, 1e-12);
  ts_ccl_comm_use ep = {.n_ranks = 8, .nodes = 1, .local_ranks = 8, .local_peers = 7};
  assert_rel(ts_ccl_comm_bytes(&h100, 22203, &ep), fixed + 7 * 16 * 12 * mib, 1e-12);
  h100.channels = 32;
  assert_rel(ts_ccl_comm_bytes(&h100, 22203, &ep) - 2 * mib * (2 + 3 * 32), 7 * 32 * 12 * mib,
             1e-12);
}

/* Across nodes (NCCL 2.30.7 on H100 nodes of 8 GPUs, a 400 Gb/s NIC each): every peer gets a
 * network peer's p2p channels (50 GB/s at 14 GB/s a channel: 4, halved while that times the
 * batches of 8 peers exceeds the p2p channels; two in 2.12-2.19, two in 2.21 below 4 x channels /
 * 2 ranks: src/graph/paths.cc), and with PXN each GPU's proxy holds the send pools of its node's
 * members whose receivers sit at its local index (src/transport/net.cc): in an expert all-to-all
 * over two nodes all eight, besides its receive pool. A two-rank communicator across nodes still
 * connects its scalar all-reduces, a network pair a channel. */
static void test_nccl_memory_across_nodes(void **state) {
  (void)state;
  const double mib = 1048576.0, pool = 16 * 16 * 128 * 1024.0;
  ts_ccl_site h100 = {
      .is_nccl = true, .channels = 16, .gpus_per_node = 8, .nics_per_node = 8, .nic_Bps = 50e9};
  ts_ccl_comm_use ep = {.n_ranks = 16,
                        .nodes = 2,
                        .local_ranks = 8,
                        .local_peers = 7,
                        .remote_peers = 8,
                        .relayed_senders = 7};
  assert_rel(ts_ccl_comm_bytes(&h100, 23007, &ep),
             2 * mib * (2 + 3 * 16) + 7 * 4 * 12 * mib + 9 * pool, 1e-12);
  const long versions[] = {21803, 22105, 23007};
  const long ranks[] = {16, 16, 64};
  for (int i = 0; i < 3; i++) { /* two channels a peer */
    ts_ccl_comm_use with = ep, without = ep;
    with.n_ranks = without.n_ranks = ranks[i];
    without.local_peers = 0;
    assert_rel(ts_ccl_comm_bytes(&h100, versions[i], &with) -
                   ts_ccl_comm_bytes(&h100, versions[i], &without),
               7 * 2 * 12 * mib, 1e-12);
  }
  ts_ccl_site one = {
      .is_nccl = true, .channels = 16, .gpus_per_node = 1, .nics_per_node = 1, .nic_Bps = 50e9};
  ts_ccl_comm_use two = {.n_ranks = 2, .nodes = 2, .local_ranks = 1, .is_allreduce = true};
  assert_rel(ts_ccl_comm_bytes(&one, 23007, &two), 2 * mib * (2 + 3 * 2) + 2 * 20 * mib, 1e-12);

  /* the same all-to-all as a run routes it: 16 experts over two nodes, expert parallel 16 */
  ts_workload wl = test_workload(4, 4096, 32, 4096, 32000, 1, 1, 16, 16, 1);
  wl.n_gpus = 16;
  wl.model.n_experts = 16;
  wl.model.moe_topk = 2;
  wl.model.moe_ffn_hidden = 4096;
  wl.ep = 16;
  ts_gpu gpu = {.hbm_bytes = 80.0 * 1073741824.0};
  gpu.ccl = h100;
  gpu.ccl.version = 23007;
  ts_ccl_memory m;
  ts_ccl_memory_of(&wl, &gpu, &m);
  assert_rel(m.group_bytes[TS_CCL_GROUP_EXPERT], ts_ccl_comm_bytes(&h100, 23007, &ep), 1e-12);
  /* two pipeline stages: one peer both ways, with or without virtual stages */
  wl = test_workload(8, 4096, 32, 4096, 32000, 1, 2, 1, 8, 1);
  wl.n_gpus = 2;
  ts_ccl_memory plain, chunked;
  ts_ccl_memory_of(&wl, &gpu, &plain);
  wl.schedule = TS_SCHED_INTERLEAVED;
  wl.virtual_stages = 2;
  ts_ccl_memory_of(&wl, &gpu, &chunked);
  assert_true(plain.group_bytes[TS_CCL_GROUP_PIPELINE] > 0);
  assert_rel(chunked.group_bytes[TS_CCL_GROUP_PIPELINE], plain.group_bytes[TS_CCL_GROUP_PIPELINE],
             1e-12);
}

/* A run's communicators, and the verdict they move: GPT-175B as TP 8 x PP 16 x DP 8 on DGX A100
 * nodes holds the default group's, the tensor, data, embedding and pipeline groups' (five);
 * what the framework can allocate drops by their bytes. */
static void test_nccl_memory_of_run(void **state) {
  (void)state;
  ts_workload wl = test_workload(96, 12288, 96, 2048, 51200, 8, 16, 8, 1536, 1);
  wl.n_gpus = 1024;
  ts_gpu gpu = {.hbm_bytes = 80.0 * 1073741824.0};
  gpu.ccl = (ts_ccl_site){.is_nccl = true,
                          .version = 23007,
                          .channels = 24,
                          .gpus_per_node = 8,
                          .nics_per_node = 8,
                          .is_p2p_read = true};
  ts_ccl_memory m;
  ts_ccl_memory_of(&wl, &gpu, &m);
  assert_int_equal(m.communicators, 5);
  assert_int_equal(m.version, 23007);
  double groups = 0; /* each group's share, the default, tensor, data, embedding and pipeline */
  for (int g = 0; g < TS_CCL_GROUPS; g++)
    groups += m.group_bytes[g];
  assert_rel(groups, m.bytes, 1e-12);
  assert_true(m.group_bytes[TS_CCL_GROUP_DEFAULT] > 0 && m.group_bytes[TS_CCL_GROUP_TENSOR] > 0 &&
              m.group_bytes[TS_CCL_GROUP_DATA] > 0 && m.group_bytes[TS_CCL_GROUP_EMBEDDING] > 0 &&
              m.group_bytes[TS_CCL_GROUP_PIPELINE] > 0 && m.group_bytes[TS_CCL_GROUP_EXPERT] == 0);
  assert_true(m.bytes > 0.5 * 1073741824.0 && m.bytes < 4 * 1073741824.0);
  assert_rel(ts_usable_bytes(&gpu, &wl), gpu.hbm_bytes - m.bytes, 1e-12);
  wl.nccl_version = 21005; /* 2021's: rings and trees of every group at init */
  ts_ccl_memory old;
  ts_ccl_memory_of(&wl, &gpu, &old);
  assert_int_equal(old.version, 21005);
  assert_true(old.bytes > m.bytes);
  ts_gpu small = gpu; /* buffers beyond the HBM leave nothing, never less */
  small.hbm_bytes = 0.5 * 1073741824.0;
  assert_true(ts_usable_bytes(&small, &wl) == 0);
  gpu.ccl.is_nccl = false;
  ts_ccl_memory_of(&wl, &gpu, &m);
  assert_true(m.bytes == 0 && ts_usable_bytes(&gpu, &wl) == gpu.hbm_bytes);
  /* one GPU: no communicator */
  gpu.ccl.is_nccl = true;
  wl = test_workload(24, 2048, 16, 2048, 51200, 1, 1, 1, 8, 1);
  wl.n_gpus = 1;
  ts_ccl_memory_of(&wl, &gpu, &m);
  assert_true(m.bytes == 0 && m.communicators == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_activations),
                                     cmocka_unit_test(test_fp8_and_recompute_modules),
                                     cmocka_unit_test(test_stage_memory),
                                     cmocka_unit_test(test_repeated_kv),
                                     cmocka_unit_test(test_pytorch_ring_memory),
                                     cmocka_unit_test(test_deepspeed_zero3_buffers),
                                     cmocka_unit_test(test_deepspeed_states),
                                     cmocka_unit_test(test_smallest_layout),
                                     cmocka_unit_test(test_foreach_adam_step),
                                     cmocka_unit_test(test_autocast_memory),
                                     cmocka_unit_test(test_autocast_gradients_made_in_backward),
                                     cmocka_unit_test(test_ddp_buckets),
                                     cmocka_unit_test(test_fragmentation_risk),
                                     cmocka_unit_test(test_zero3_largest_allocation),
                                     cmocka_unit_test(test_fused_cross_entropy),
                                     cmocka_unit_test(test_unpad_input_memory),
                                     cmocka_unit_test(test_dropout_add_layer_norm_memory),
                                     cmocka_unit_test(test_op_recompute_memory),
                                     cmocka_unit_test(test_torchao_float8_memory),
                                     cmocka_unit_test(test_fsdp_state_bytes),
                                     cmocka_unit_test(test_nccl_memory_measured),
                                     cmocka_unit_test(test_nccl_memory_versions),
                                     cmocka_unit_test(test_nccl_memory_across_nodes),
                                     cmocka_unit_test(test_nccl_memory_of_run)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
