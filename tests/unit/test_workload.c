/* workload: the presets load, overrides apply, and derived values are right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../workloads/cost.h"
#include "../../workloads/memory.h"
#include "fixtures.h"

static void load(const char *name, ts_workload *wl) {
  ts_err err = {0};
  char path[512];
  snprintf(path, sizeof path, "%s/workloads/%s", TS_SOURCE_DIR, name);
  if (ts_workload_load_file(path, wl, &err) != 0)
    fail_msg("%s", err.msg);
}

static void test_presets(void **state) {
  (void)state;
  ts_workload wl;
  ts_overrides none = {0};
  ts_err err = {0};
  load("gpt-175b.yaml", &wl);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(wl.model.n_layers, 96);
  assert_int_equal(wl.model.hidden, 12288);
  assert_int_equal(wl.model.ffn_hidden, 4 * 12288);
  assert_int_equal(wl.n_gpus, 1024);
  assert_int_equal(ts_workload_padded_vocab(&wl), 51200);
  assert_int_equal(ts_workload_microbatches(&wl), 1536 / 8);
  load("gpt-1t.yaml", &wl);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(wl.n_gpus, 3072);
  assert_int_equal(wl.model.n_heads, 200);
  load("gpt-22b.yaml", &wl);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(wl.tp, 2);
}

/* Llama 3's published parameter counts (the released models' configs: 8,030,261,248,
 * 70,553,706,496 and 405,853,388,800), exactly: SwiGLU's three matrices, GQA's K and V, RMSNorm's
 * weight-only norms, no biases, no position table, untied output weights. And the Llama layer's
 * activations by Korthikanti et al.'s accounting with its widths. */
static void test_llama3(void **state) {
  (void)state;
  const struct {
    const char *file;
    double params;
  } cases[] = {{"llama3-8b.yaml", 8030261248.0},
               {"llama3-70b.yaml", 70553706496.0},
               {"llama3-405b.yaml", 405853388800.0}};
  ts_overrides none = {0};
  ts_err err = {0};
  ts_workload wl;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    load(cases[i].file, &wl);
    assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
    assert_true(ts_cost_model_params(&wl) == cases[i].params);
    double per_stage = 0;
    for (long s = 0; s < wl.pp; s++)
      per_stage += ts_cost_stage_params(&wl, s);
    /* Stages hold tp-sharded matrices, the vocabulary padded to a multiple of 128 x tp
     * (embedding and output layer); the replicated norms count once per TP rank. */
    double h = (double)wl.model.hidden, norms = (2.0 * (double)wl.model.n_layers + 1) * h;
    double padding = 2.0 * (double)(ts_workload_padded_vocab(&wl) - wl.model.vocab) * h;
    assert_rel(per_stage * (double)wl.tp - norms * ((double)wl.tp - 1), cases[i].params + padding,
               1e-12);
  }
  /* The Llama 3 paper's 6ND (section 3.2.1): 6 FLOPs a token for every parameter a token's
   * matrices use, i.e. all but the input embedding (a lookup) and the norms' weights, besides
   * the attention core. */
  load("llama3-405b.yaml", &wl);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  double h405 = 16384, tokens = (double)wl.global_batch * (double)wl.model.seq;
  double n_matmul = 405853388800.0 - 128256 * h405 - (2.0 * 126 + 1) * h405;
  assert_rel((ts_cost_model_flops(&wl) - ts_cost_attention_core_flops(&wl)) / tokens, 6 * n_matmul,
             1e-12);
  /* 8B, TP 2, sequence parallel, no dropout (so no masks): (8 + 4 + 4 x 8/32 + 6 x 14336/4096)
   * / 2 sbh per layer. */
  load("llama3-8b.yaml", &wl);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(wl.model.ffn_hidden, 14336);
  assert_rel(ts_memory_layer_activations(&wl), 8192.0 * 4096 * (8 + 4 + 1 + 21) / 2, 1e-12);
  /* Megatron-LM's SwiGLU default width: 8h/3 rounded down to a multiple of 64. */
  const char *text = "name: x\nmodel: {num_layers: 2, hidden_size: 4096, num_attention_heads: 32, "
                     "seq_length: 128, vocab_size: 1000, swiglu: true}\ntraining: "
                     "{global_batch_size: 1}\n";
  assert_int_equal(ts_workload_parse("x.yaml", text, strlen(text), &wl, &err), 0);
  assert_int_equal(wl.model.ffn_hidden, 10880);
}

/* Mixtral 8x7B's published size, exactly (46,702,792,704: the released model's parameters;
 * Jiang et al. arXiv:2401.04088 give "47B"); its FLOPs as Megatron-Core counts them
 * (training.py, num_floating_point_operations: 3 passes x 2 x h x moe_ffn x topk x 3 per token
 * and MoE layer, the router not counted), but with the attention core's full s x s square as
 * trainsim counts it for every model (Megatron-Core halves it for the causal mask); its memory
 * by hand; and moe_layer_freq's three forms. */
static void test_moe(void **state) {
  (void)state;
  ts_overrides none = {0};
  ts_err err = {0};
  ts_workload wl;
  load("mixtral-8x7b.yaml", &wl);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_true(ts_cost_model_params(&wl) == 46702792704.0);
  double h = 4096, s = 4096, L = 32, V = 32000, T = 128.0 * s, q = h, kv = 1024;
  double mlp = 6 * h * (14336.0 * 2 * 3) * L, attn = 6 * (h * (q + 2 * kv) + q * h) * L;
  double core = 6 * q / 2 * 2 * s * L, logits = 6 * h * V;
  assert_rel(ts_cost_model_flops(&wl), T * (mlp + attn + 2 * core + logits), 1e-12);
  /* ... and exactly Megatron-Core's count with the causal half of the core left out. */
  assert_rel(ts_cost_model_flops(&wl) - ts_cost_attention_core_flops(&wl) / 2,
             T * (mlp + attn + core + logits), 1e-12);
  /* Stage 0 of TP 1 x PP 4 x EP 8 x DP 8 (edp 1): 8 layers of attention (41,943,040), norms
   * (8,192), router (32,768) and one expert (3 x 4096 x 14336), and the embedding; the
   * distributed optimizer shards all but the experts over dp 8. */
  double expert = 8 * 3 * h * 14336.0, dense = 8 * (41943040.0 + 8192 + 32768) + V * h;
  ts_memory mem;
  ts_memory_stage(&wl, 0, &mem);
  assert_rel(mem.bytes[TS_MEM_WEIGHTS], 2 * (dense + expert), 1e-12);
  assert_rel(mem.bytes[TS_MEM_OPTIMIZER], 12 * (dense / 8 + expert), 1e-12);
  /* Activations per MoE layer (TP 1, k 2, no dropout): 8 + 4 + 4 x 8/32 sbh as a Llama layer's, the
   * experts' input 2 x 2, FC1 outputs and FC2 input 6 x 2 x 14336/4096, the probabilities
   * Megatron-Core's experts weigh their activation by (fp32, 4 x 2 bytes a token), the
   * router's fp32 scores 4 x 8 and top-k indices and scores 12 x 2 bytes a token. */
  double moe_layer = s * h * (13 + 4 + 6 * 2 * 3.5) + s * (4 * 2 + 4 * 8 + 12 * 2);
  assert_rel(ts_memory_moe_layer_activations(&wl), moe_layer, 1e-12);
  assert_rel(mem.bytes[TS_MEM_ACTIVATIONS], 4 * 8 * moe_layer, 1e-12);
  /* An expert's capacity is whole tokens, at least one (Megatron-Core's get_capacity): 4096
   * tokens x top-2 over 8 experts is 1024 an expert, so a factor of 1e-9 keeps 1 of them, and
   * 1.0001 keeps ceil(1024.1) = 1025. */
  wl.moe_capacity_factor = 1e-9;
  assert_rel(ts_workload_moe_token_factor(&wl), 1.0 / 1024, 1e-12);
  wl.moe_capacity_factor = 1.0001;
  wl.moe_load_imbalance = 2;
  assert_rel(ts_workload_moe_token_factor(&wl), 1025.0 / 1024, 1e-12);
  wl.moe_capacity_factor = 0;
  wl.moe_load_imbalance = 1;

  /* moe_layer_freq: an integer, a YAML list, Megatron's expression. */
  const char *forms[] = {"2", "[1, 0, 1, 0, 1, 0]", "\"([1,0]*3)\"", "\"[1]+[0,1]*2+[0]\""};
  const int expect[][6] = {
      {1, 0, 1, 0, 1, 0}, {1, 0, 1, 0, 1, 0}, {1, 0, 1, 0, 1, 0}, {1, 0, 1, 0, 1, 0}};
  for (int f = 0; f < 4; f++) {
    char text[400];
    snprintf(text, sizeof text,
             "name: x\nmodel: {num_layers: 6, hidden_size: 64, num_attention_heads: 4, "
             "seq_length: 16, vocab_size: 100, num_experts: 4, moe_layer_freq: %s}\n"
             "training: {global_batch_size: 1}\n",
             forms[f]);
    assert_int_equal(ts_workload_parse("x.yaml", text, strlen(text), &wl, &err), 0);
    for (long l = 0; l < 6; l++)
      assert_int_equal(ts_workload_is_moe_layer(&wl, l), expect[f][l]);
    assert_int_equal(ts_workload_moe_layer_count(&wl), 3);
  }
  /* Capacity and imbalance: the busiest expert's tokens over the mean. */
  wl.moe_load_imbalance = 1.5;
  assert_rel(ts_workload_moe_token_factor(&wl), 1.5, 0);
  wl.moe_capacity_factor = 1.25;
  assert_rel(ts_workload_moe_token_factor(&wl), 1.25, 0);
  wl.moe_pad_to_capacity = true;
  wl.moe_load_imbalance = 1;
  assert_rel(ts_workload_moe_token_factor(&wl), 1.25, 0);
}

/* The DeepSeek-V3-shaped preset: the released checkpoint's 671,026,419,200 parameters of the
 * main model, exactly (multi-head latent attention's projections and latent norms, 3 dense
 * layers and 58 MoE layers of 256 routed experts, a shared expert and the router with its
 * routing bias); its FLOPs as Megatron-Core's MLA branch counts them (training.py), less its
 * latent-norm terms (3 x 2 x (q_lora + kv_lora) a token and layer, which trainsim does not
 * count as matrix FLOPs) and with the attention core's whole s x s square. */
/* kv_channels (Megatron-LM's, Hugging Face's head_dim): Qwen3-30B-A3B's heads of 128 on a
 * hidden size of 2,048 (32 heads, 4 key-value groups): QKV is 2,048 x (32 + 2 x 4) x 128,
 * the projection 32 x 128 x 2,048; the model counts the published 30.5 billion parameters. */
static void test_kv_channels(void **state) {
  (void)state;
  static const char text[] =
      "name: qwen3-30b-a3b\n"
      "model: {num_layers: 48, hidden_size: 2048, num_attention_heads: 32, num_query_groups: 4,\n"
      "        kv_channels: 128, seq_length: 4096, vocab_size: 151936, swiglu: true,\n"
      "        normalization: RMSNorm, position_embedding_type: rope, add_bias_linear: false,\n"
      "        untie_embeddings_and_output_weights: true, num_experts: 128, moe_router_topk: 8,\n"
      "        moe_ffn_hidden_size: 768}\n"
      "training: {global_batch_size: 8, micro_batch_size: 1}\n"
      "parallelism: {tensor: 1, data: 1}\n";
  ts_workload wl;
  ts_err err = {0};
  ts_overrides none = {0};
  assert_int_equal(ts_workload_parse("q.yaml", text, sizeof text - 1, &wl, &err), 0);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(ts_workload_qk_head_dim(&wl), 128);
  assert_int_equal(ts_workload_v_head_dim(&wl), 128);
  double h = 2048, attn = h * 40 * 128 + 32 * 128 * h, experts = 128 * 3 * h * 768;
  double layer = attn + experts + h * 128 + 2 * h, embed = 2 * 151936 * h + h;
  assert_rel(ts_cost_model_params(&wl), 48 * layer + embed, 1e-12);
  assert_true(fabs(ts_cost_model_params(&wl) / 30.5e9 - 1) < 0.005);
  /* Hugging Face's spelling of the precision (torch_dtype) is accepted */
  static const char hf[] =
      "name: x\nmodel: {num_layers: 2, hidden_size: 64, num_attention_heads: 4,"
      " seq_length: 128, vocab_size: 1000}\ntraining: {global_batch_size: 2,"
      " precision: float16}\nparallelism: {data: 1}\n";
  assert_int_equal(ts_workload_parse("hf.yaml", hf, sizeof hf - 1, &wl, &err), 0);
  assert_int_equal(wl.precision, TS_PREC_FP16);
}

/* Megatron-Core's account_for_embedding/loss_in_pipeline_split: Llama 3 405B's 126 layers with
 * the embedding and the loss counted are 128 over 16 stages, 8 each, the first and last
 * building 7: the preset's 7 + 14 x 8 + 7, again for another layout (32 stages: 4 each, 3 on
 * the ends); numbers that do not split name the rule. */
static void test_accounted_split(void **state) {
  (void)state;
  ts_workload wl;
  ts_err err = {0};
  ts_overrides none = {0};
  load("llama3-405b.yaml", &wl);
  wl.first_stage_layers = wl.last_stage_layers = 0;
  wl.account_embedding = wl.account_loss = true;
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(ts_workload_stage_layers(&wl, 0), 7);
  assert_int_equal(ts_workload_stage_layers(&wl, 1), 8);
  assert_int_equal(ts_workload_stage_layers(&wl, 15), 7);
  ts_overrides pp32 = {.pp = 32, .is_pp_set = true, .dp = 32, .is_dp_set = true};
  assert_int_equal(ts_workload_resolve(&wl, &pp32, &err), 0);
  assert_int_equal(ts_workload_stage_layers(&wl, 0), 3);
  assert_int_equal(ts_workload_stage_layers(&wl, 1), 4);
  /* Virtual stages (Megatron-Core's get_num_layers_to_build): 8 a rank in chunks of 4, the
   * first virtual stage of the first rank and the last of the last building 3. */
  ts_overrides v2 = {.pp = 16,
                     .is_pp_set = true,
                     .dp = 64,
                     .is_dp_set = true,
                     .virtual_stages = 2,
                     .is_virtual_stages_set = true};
  assert_int_equal(ts_workload_resolve(&wl, &v2, &err), 0);
  assert_int_equal(wl.schedule, TS_SCHED_INTERLEAVED);
  long expect[32];
  for (int i = 0; i < 32; i++)
    expect[i] = i == 0 || i == 31 ? 3 : 4;
  for (int i = 0; i < 32; i++)
    assert_int_equal(ts_workload_vstage_layers(&wl, i), expect[i]);
  assert_int_equal(ts_workload_stage_layers(&wl, 0), 7);
  assert_int_equal(ts_workload_stage_layers(&wl, 15), 7);
  assert_int_equal(ts_workload_chunk_first_layer(&wl, 0, 1), 3 + 15 * 4); /* virtual stage 16 */
  ts_overrides v3 = v2;
  v3.virtual_stages = 3;
  assert_int_equal(ts_workload_resolve(&wl, &v3, &err), -1);
  assert_non_null(
      strstr(err.msg, "num_layers_per_pipeline_rank 8 should be divisible by vp_size 3"));
  wl.account_loss = false; /* 127 over 32 stages */
  ts_overrides again = {.pp = 32, .is_pp_set = true, .dp = 32, .is_dp_set = true};
  assert_int_equal(ts_workload_resolve(&wl, &again, &err), -1);
  assert_non_null(strstr(err.msg, "= 127 must be divisible by pipeline (32)"));
}

/* Megatron-Core's pipeline_model_parallel_layout: unrolled and split as parse_str_to_list does,
 * the same stages as the accounting gives; its rules, each named. */
static void test_layout_string(void **state) {
  (void)state;
  ts_err err = {0};
  ts_overrides none = {0};
  ts_workload wl;
  load("llama3-405b.yaml", &wl);
  wl.first_stage_layers = wl.last_stage_layers = 0;
  wl.account_embedding = wl.account_loss = true;
  ts_overrides v2 = {.virtual_stages = 2, .is_virtual_stages_set = true};
  assert_int_equal(ts_workload_resolve(&wl, &v2, &err), 0);
  ts_workload acc = wl;
  const char *ok[] = {"Et*3|(t*4|)*30,t*3L", "E,ttt|(tttt|)*30tttL", "Et*3|(tt,tt|)*30|t*3L"};
  for (int k = 0; k < 3; k++) {
    char text[512];
    snprintf(text, sizeof text,
             "model: {num_layers: 126, hidden_size: 16384, num_attention_heads: 128, "
             "num_query_groups: 8, ffn_hidden_size: 53248, seq_length: 8192, vocab_size: 128256}\n"
             "training: {global_batch_size: 2048, micro_batch_size: 1}\n"
             "parallelism: {tensor: 8, pipeline: 16, data: 64,\n"
             "  pipeline_model_parallel_layout: \"%s\"}\n",
             ok[k]);
    ts_workload l;
    int rc = ts_workload_parse("x.yaml", text, strlen(text), &l, &err);
    if (k == 2) { /* "|t*3L": an empty-free stage count of 33: not a multiple of 16 */
      assert_int_equal(rc == 0 ? ts_workload_resolve(&l, &none, &err) : rc, -1);
      assert_non_null(strstr(err.msg, "must be divisible by pipeline_model_parallel_size (33 "));
      continue;
    }
    if (rc != 0 || ts_workload_resolve(&l, &none, &err) != 0)
      fail_msg("%s", err.msg);
    assert_int_equal(l.virtual_stages, 2);
    for (int i = 0; i < 32; i++)
      assert_int_equal(ts_workload_vstage_layers(&l, i), ts_workload_vstage_layers(&acc, i));
  }
  const char *bad[][2] = {
      {"Et*3|(t*4|)*30,t*3Lx", "invalid layer character 'x'"},
      {"Et*3|(t*4|)*30,t*3mL", "Number of mtp layers in layout must match mtp_num_layers"},
      {"Et*3|(t*4|)*30,t*2mtL", "decoder layers must be placed before MTP layers"},
      {"tEt*2|(t*4|)*30,t*3L", "the first layer must be embedding (E)"},
      {"Et*3|(t*4|)*30,t*3", "each exactly once"},
      {"Et*3|(t*4|)*30,t*4L", "number of decoder layers 127 (t) must match num_layers 126"},
      {"(E|)*99999", "at most"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char text[512];
    snprintf(text, sizeof text,
             "model: {num_layers: 126, hidden_size: 16384, num_attention_heads: 128, "
             "seq_length: 8192, vocab_size: 128256}\n"
             "training: {global_batch_size: 2048, micro_batch_size: 1}\n"
             "parallelism: {tensor: 8, pipeline: 16, data: 64,\n"
             "  pipeline_model_parallel_layout: \"%s\"}\n",
             bad[k][0]);
    ts_workload l;
    err = (ts_err){0};
    int rc = ts_workload_parse("x.yaml", text, strlen(text), &l, &err);
    if (rc == 0)
      rc = ts_workload_resolve(&l, &none, &err);
    assert_int_equal(rc, -1);
    if (strstr(err.msg, bad[k][1]) == NULL)
      fail_msg("'%s': %s", bad[k][0], err.msg);
    assert_string_equal(err.key, "parallelism.pipeline_model_parallel_layout");
  }
  /* An MTP layer where the layout puts it: after the last stage's layers, or on a stage of its
   * own (Megatron-Core's "standalone" MTP) before the loss's. */
  const char *mtp[] = {"Et*3|(t*4|)*30,t*3mL", "Et*3|(t*4|)*30,t*3|m|L"};
  for (size_t k = 0; k < 2; k++) {
    char text[512];
    snprintf(text, sizeof text,
             "model: {num_layers: 126, hidden_size: 16384, num_attention_heads: 128, "
             "seq_length: 8192, vocab_size: 128256, mtp_num_layers: 1}\n"
             "training: {global_batch_size: %d, micro_batch_size: 1}\n"
             "parallelism: {tensor: 8, pipeline: %d, data: 64,\n"
             "  pipeline_model_parallel_layout: \"%s\"}\n",
             k == 0 ? 2048 : 17 * 64, k == 0 ? 16 : 17, mtp[k]);
    ts_workload l;
    err = (ts_err){0};
    if (ts_workload_parse("x.yaml", text, strlen(text), &l, &err) != 0 ||
        ts_workload_resolve(&l, &none, &err) != 0)
      fail_msg("%s", err.msg);
    assert_int_equal(ts_workload_chunk_mtp_layers(&l, 15, 1), 1); /* virtual stage 31 or 32 */
    assert_int_equal(ts_workload_stage_mtp_layers(&l, 14), 0);
    assert_int_equal(ts_workload_stage_mtp_layers(&l, k == 0 ? 0 : 16), 0);
  }
}

static void test_deepseek_v3(void **state) {
  (void)state;
  ts_overrides none = {0};
  ts_err err = {0};
  ts_workload wl;
  load("deepseek-v3.yaml", &wl);
  assert_int_equal(ts_workload_resolve(&wl, &none, &err), 0);
  assert_int_equal(wl.model.mtp_layers, 1);
  wl.model.mtp_layers = 0; /* the main model first */
  assert_true(ts_cost_model_params(&wl) == 671026419200.0);
  assert_int_equal(ts_workload_moe_layer_count(&wl), 58);
  assert_false(ts_workload_is_moe_layer(&wl, 2));
  assert_true(ts_workload_is_moe_layer(&wl, 3));
  double h = 7168, n = 128, s = 4096, qk = 128, rope = 64, v = 128, ql = 1536, kvl = 512;
  double L = 61, V = 129280, T = 15360.0 * s;
  double q_term = ql * (h + n * (qk + rope) + 1), kv_term = kvl * (h + n * (qk + v) + 1);
  double attn = 6 * (q_term + kv_term + h * rope + n * v * h) * L - 6 * (ql + kvl) * L;
  double core = 6 * (n * (qk + rope) / 2 + n * v / 2) * s * L;
  double mlp = 6 * h * (18432.0 * 3 * 3 + 2048.0 * 8 * 3 * 58 + 2048.0 * 3 * 58);
  assert_rel(ts_cost_model_flops(&wl), T * (attn + 2 * core + mlp + 6 * h * V), 1e-12);
  /* Its multi-token-prediction module ([DSV3] 2.2): one MoE layer, eh_proj 2h x h and three
   * RMSNorms, 11,610,068,224 parameters (with the embedding and output copies of the released
   * checkpoint, 2 x 129,280 x 7,168 more: 13.46B, the report's "14B of MTP module weights"). */
  double flops = ts_cost_model_flops(&wl);
  wl.model.mtp_layers = 1;
  assert_true(ts_cost_model_params(&wl) == 671026419200.0 + 11610068224.0);
  assert_true(ts_workload_is_moe_layer(&wl, 61));
  double mtp = attn / L + 2 * core / L + 6 * h * (2048.0 * 8 * 3 + 2048.0 * 3) + 12 * h * h;
  assert_rel(ts_cost_model_flops(&wl) - flops, T * (mtp + 6 * h * V), 1e-9);
  /* It runs on the last stage, after that stage's layers. */
  assert_int_equal(ts_workload_stage_mtp_layers(&wl, 15), 1);
  assert_int_equal(ts_workload_chunk_mtp_layers(&wl, 15, 0), 1);
  assert_int_equal(ts_workload_chunk_mtp_layers(&wl, 0, 1), 1); /* dualpipe's other copy's end */
  assert_int_equal(ts_workload_stage_mtp_layers(&wl, 7), 0);
}

/* A small model with the given parallelism and stack (flow mappings' contents) parsed as
 * c.yaml, whose stack is line 5, and resolved on 8 GPUs: ts_workload_resolve's status. */
static int resolve_stack(const char *parallelism, const char *stack, ts_workload *wl, ts_err *err) {
  char text[512];
  snprintf(text, sizeof text,
           "name: s\nmodel: {num_layers: 2, hidden_size: 256, num_attention_heads: 4, "
           "seq_length: 128, vocab_size: 1000}\ntraining: {global_batch_size: 8}\n"
           "parallelism: {%s}\nstack: {%s}\n",
           parallelism, stack);
  assert_int_equal(ts_workload_parse("c.yaml", text, strlen(text), wl, err), 0);
  ts_overrides ov = {.gpus = 8, .is_gpus_set = true};
  return ts_workload_resolve(wl, &ov, err);
}

/* DeepSpeed's contiguous_gradients under ZeRO-3: the release's default when not given (false
 * from 0.3.12 to 0.4.2, true from 0.4.3 and when no release is named: constants.py, PR #1199),
 * else as given; only DeepSpeed's ZeRO-3 takes the key. */
static void test_contiguous_gradients(void **state) {
  (void)state;
  const struct {
    const char *stack;
    int expect; /* 1 true, 0 false, -1 an error */
  } cases[] = {
      {"framework: megatron-deepspeed, deepspeed_version: 0.3.16", 0},
      {"framework: megatron-deepspeed, deepspeed_version: 0.4.2", 0},
      {"framework: megatron-deepspeed, deepspeed_version: 0.4.3", 1},
      {"framework: gpt-neox", 1},
      {"framework: megatron-deepspeed, deepspeed_version: 0.3.16, contiguous_gradients: true", 1},
      {"framework: megatron-deepspeed, contiguous_gradients: false", 0},
      {"framework: megatron, contiguous_gradients: false", -1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    ts_workload wl;
    ts_err err = {0};
    int rc = resolve_stack("zero_stage: 3", cases[k].stack, &wl, &err);
    if (cases[k].expect < 0) {
      assert_int_equal(rc, -1);
      assert_non_null(strstr(err.msg, "c.yaml:5:"));
      assert_non_null(strstr(err.msg, "contiguous_gradients is DeepSpeed's ZeRO-3 key"));
      continue;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(wl.contiguous_gradients, cases[k].expect == 1);
  }
}

/* stack.cp_attention: PyTorch's ring under framework pytorch unless given, Transformer Engine's
 * elsewhere; PyTorch's outside framework pytorch is an error naming the key's place. */
static void test_cp_attention(void **state) {
  (void)state;
  const struct {
    const char *stack;
    int expect; /* a ts_cp_attention, or -1 an error */
  } cases[] = {
      {"framework: pytorch", TS_CP_ATTENTION_PYTORCH},
      {"framework: megatron", TS_CP_ATTENTION_TE},
      {"framework: pytorch, cp_attention: transformer_engine", TS_CP_ATTENTION_TE},
      {"framework: megatron, cp_attention: transformer_engine", TS_CP_ATTENTION_TE},
      {"framework: megatron, cp_attention: pytorch", -1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    ts_workload wl;
    ts_err err = {0};
    int rc = resolve_stack("context: 2", cases[k].stack, &wl, &err);
    if (cases[k].expect < 0) {
      assert_int_equal(rc, -1);
      assert_non_null(strstr(err.msg, "c.yaml:5:"));
      assert_non_null(strstr(err.msg, "cp_attention pytorch is PyTorch's context_parallel"));
      continue;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(wl.cp_attention, cases[k].expect);
  }
}

static void test_overrides(void **state) {
  (void)state;
  ts_workload wl;
  ts_err err = {0};
  load("gpt-22b.yaml", &wl);
  ts_overrides ov = {.gpus = 64,
                     .is_gpus_set = true,
                     .tp = 4,
                     .is_tp_set = true,
                     .micro_batch = 2,
                     .is_micro_batch_set = true};
  assert_int_equal(ts_workload_resolve(&wl, &ov, &err), 0);
  assert_int_equal(wl.dp, 64 / (4 * 4));
  assert_int_equal(wl.micro_batch, 2);
  assert_int_equal(ts_workload_microbatches(&wl), 1024 / (2 * 4));
  assert_string_equal(wl.locs.tp.flag, "--tp");
  /* An explicit --dp that disagrees with --gpus is an error at --dp. */
  load("gpt-22b.yaml", &wl);
  ov.dp = 8;
  ov.is_dp_set = true;
  assert_int_equal(ts_workload_resolve(&wl, &ov, &err), -1);
  assert_string_equal(err.msg, "trainsim: error: --dp: data parallelism 8 disagrees with --gpus 64 "
                               "/ (tp 4 x pp 4) = 4");
}

/* Uneven stages: 48 layers on 4 stages with 9 on the first and 12 on the last leave 27 for
 * the two middle stages: 13.5 is not whole, an error; 10 and 12 leave 13 each. Virtual stages
 * become the interleaved schedule. */
static void test_stage_layers(void **state) {
  (void)state;
  ts_workload wl;
  ts_err err = {0};
  load("gpt-22b.yaml", &wl);
  ts_overrides ov = {.gpus = 64,
                     .is_gpus_set = true,
                     .first_stage_layers = 9,
                     .is_first_stage_layers_set = true,
                     .last_stage_layers = 12,
                     .is_last_stage_layers_set = true};
  assert_int_equal(ts_workload_resolve(&wl, &ov, &err), -1);
  load("gpt-22b.yaml", &wl);
  ov.first_stage_layers = 10;
  assert_int_equal(ts_workload_resolve(&wl, &ov, &err), 0);
  long layers[4] = {0}, sum = 0;
  for (long s = 0; s < 4; s++)
    sum += layers[s] = ts_workload_stage_layers(&wl, s);
  assert_int_equal(layers[0], 10);
  assert_int_equal(layers[1], 13);
  assert_int_equal(layers[2], 13);
  assert_int_equal(layers[3], 12);
  assert_int_equal(sum, 48);
  load("gpt-22b.yaml", &wl);
  ts_overrides il = {
      .gpus = 64, .is_gpus_set = true, .virtual_stages = 3, .is_virtual_stages_set = true};
  assert_int_equal(ts_workload_resolve(&wl, &il, &err), 0);
  assert_int_equal(wl.schedule, TS_SCHED_INTERLEAVED);
  assert_int_equal(ts_workload_vstage_layers(&wl, 0), 4);
}

/* The stack section: each framework's default fusions, a fused_kernels list replacing them, the
 * attention implementation, and the older spellings still read. */
static void test_stack(void **state) {
  (void)state;
  static const char base[] = "name: s\nmodel: {num_layers: 2, hidden_size: 256, "
                             "num_attention_heads: 4, seq_length: 128, vocab_size: 1000}\n"
                             "training: {global_batch_size: 8";
  char text[512];
  ts_workload wl;
  ts_err err = {0};
  const struct {
    const char *training, *rest;
    ts_framework framework;
    unsigned fusions;
    bool flash;
    ts_attention attention;
  } cases[] = {
      {"}\n", "", TS_FRAMEWORK_MEGATRON, 0x3f, true, TS_ATTENTION_FLASH2},
      {"}\n", "stack: {framework: megatron-deepspeed}\n", TS_FRAMEWORK_MEGATRON_DEEPSPEED, 0xf,
       true, TS_ATTENTION_FLASH2},
      {"}\n", "stack: {framework: gpt-neox, attention: unfused}\n", TS_FRAMEWORK_GPT_NEOX, 0, false,
       TS_ATTENTION_UNFUSED},
      {"}\n", "stack: {framework: gpt-neox, fused_kernels: [bias_gelu, masked_softmax]}\n",
       TS_FRAMEWORK_GPT_NEOX, 0x3, true, TS_ATTENTION_FLASH2},
      {"}\n", "stack: {fused_kernels: []}\n", TS_FRAMEWORK_MEGATRON, 0, true, TS_ATTENTION_FLASH2},
      {", framework: pytorch, bias_dropout_fusion: true}\n",
       "parallelism: {flash_attention: false}\n", TS_FRAMEWORK_PYTORCH, 0x4, false,
       TS_ATTENTION_UNFUSED},
      /* plain PyTorch calls SDPA unless the workload names an attention */
      {"}\n", "stack: {framework: pytorch}\n", TS_FRAMEWORK_PYTORCH, 0, true, TS_ATTENTION_SDPA},
      {", framework: pytorch}\n", "parallelism: {flash_attention: true}\n", TS_FRAMEWORK_PYTORCH, 0,
       true, TS_ATTENTION_FLASH2},
      {"}\n", "stack: {framework: pytorch, attention: flash2}\n", TS_FRAMEWORK_PYTORCH, 0, true,
       TS_ATTENTION_FLASH2},
      {"}\n", "stack: {attention: sdpa}\n", TS_FRAMEWORK_MEGATRON, 0x3f, true, TS_ATTENTION_SDPA},
      {", gradient_accumulation_fusion: false}\n", "", TS_FRAMEWORK_MEGATRON, 0x37, true,
       TS_ATTENTION_FLASH2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(text, sizeof text, "%s%s%s", base, cases[i].training, cases[i].rest);
    if (ts_workload_parse("stack.yaml", text, strlen(text), &wl, &err) != 0)
      fail_msg("case %zu: %s", i, err.msg);
    assert_int_equal(wl.framework, cases[i].framework);
    assert_int_equal(wl.fusions, cases[i].fusions);
    assert_int_equal(wl.flash_attention, cases[i].flash);
    assert_int_equal(wl.attention, cases[i].attention);
  }
  assert_true(ts_workload_fuses(&wl, TS_FUSE_MASKED_SOFTMAX));
  assert_false(ts_workload_fuses(&wl, TS_FUSE_GRADIENT_ACCUMULATION));
}

/* A plain PyTorch model in bf16 or fp16 trains under autocast unless its workload names another
 * recipe or a stack where autocast is not modelled; other frameworks keep master copies. */
static void test_autocast_default(void **state) {
  (void)state;
  static const char base[] = "name: a\nmodel: {num_layers: 2, hidden_size: 256, "
                             "num_attention_heads: 4, seq_length: 128, vocab_size: 1000}\n"
                             "training: {global_batch_size: 8, micro_batch_size: 1%s}\n"
                             "parallelism: {data: %d, zero_stage: %d}\nstack: {framework: %s}\n";
  const struct {
    const char *training, *framework;
    int data, zero;
    bool autocast, set;
  } cases[] = {
      {"", "pytorch", 1, 0, true, false},
      {", precision: fp16", "pytorch", 8, 1, true, false},
      {", autocast: false", "pytorch", 1, 0, false, true},
      {", master_weights: fp32", "pytorch", 1, 0, false, false},
      {", exp_avg_dtype: bf16, exp_avg_sq_dtype: bf16", "pytorch", 1, 0, false, false},
      {", precision: fp32", "pytorch", 1, 0, false, false},
      {"", "pytorch", 8, 3, false, false}, /* FSDP: its own policy */
      {"", "megatron", 1, 0, false, false},
      {", autocast: true", "megatron", 1, 0, true, true},
  };
  char text[640];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_workload wl;
    ts_err err = {0};
    ts_overrides none = {0};
    snprintf(text, sizeof text, base, cases[i].training, cases[i].data, cases[i].zero,
             cases[i].framework);
    if (ts_workload_parse("amp.yaml", text, strlen(text), &wl, &err) != 0 ||
        ts_workload_resolve(&wl, &none, &err) != 0)
      fail_msg("case %zu: %s", i, err.msg);
    assert_int_equal(wl.is_autocast, cases[i].autocast);
    assert_int_equal(wl.is_autocast_set, cases[i].set);
  }
}

/* Attention dropout's default: Megatron-LM's 0.1, but 0 for a plain PyTorch model, whose
 * attention drops only what its code passes (SDPA's dropout_p defaults to 0); a value named
 * stands under either. */
static void test_attention_dropout_default(void **state) {
  (void)state;
  static const char base[] = "name: a\nmodel: {num_layers: 2, hidden_size: 256, "
                             "num_attention_heads: 4, seq_length: 128, vocab_size: 1000%s}\n"
                             "training: {global_batch_size: 8, micro_batch_size: 1}\n"
                             "parallelism: {data: 1}\nstack: {framework: %s}\n";
  const struct {
    const char *model, *framework;
    double attention, hidden;
  } cases[] = {
      {"", "pytorch", 0, 0.1},
      {", attention_dropout: 0.1", "pytorch", 0.1, 0.1},
      {"", "megatron", 0.1, 0.1},
      {", attention_dropout: 0", "megatron", 0, 0.1},
  };
  char text[512];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_workload wl;
    ts_err err = {0};
    ts_overrides none = {0};
    snprintf(text, sizeof text, base, cases[i].model, cases[i].framework);
    if (ts_workload_parse("drop.yaml", text, strlen(text), &wl, &err) != 0 ||
        ts_workload_resolve(&wl, &none, &err) != 0)
      fail_msg("case %zu: %s", i, err.msg);
    assert_true(wl.model.attention_dropout == cases[i].attention);
    assert_true(wl.model.hidden_dropout == cases[i].hidden);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_presets),
                                     cmocka_unit_test(test_attention_dropout_default),
                                     cmocka_unit_test(test_llama3),
                                     cmocka_unit_test(test_moe),
                                     cmocka_unit_test(test_kv_channels),
                                     cmocka_unit_test(test_accounted_split),
                                     cmocka_unit_test(test_layout_string),
                                     cmocka_unit_test(test_deepseek_v3),
                                     cmocka_unit_test(test_overrides),
                                     cmocka_unit_test(test_stage_layers),
                                     cmocka_unit_test(test_stack),
                                     cmocka_unit_test(test_autocast_default),
                                     cmocka_unit_test(test_contiguous_gradients),
                                     cmocka_unit_test(test_cp_attention)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
