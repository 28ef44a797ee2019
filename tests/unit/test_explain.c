/* explain: rebuilds a run from result.json, ranks its losses, and its simulated changes are the
 * iterations `run` gives with the same flags; it refuses inputs changed since the run, and
 * prints the same bytes twice. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawn.h"

/* Writes text as dir/name, its path into path. */
static void write_workload(const char *dir, const char *name, char *path, size_t size,
                           const char *text) {
  snprintf(path, size, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A copy of tests/data/good/tiny.yaml in dir (to be changed by a test). */
static void tiny_copy(const char *dir, char *path, size_t size) {
  char src[512];
  snprintf(src, sizeof src, "%s/tests/data/good/tiny.yaml", TS_SOURCE_DIR);
  char *text = read_file(src, NULL);
  assert_non_null(text);
  write_workload(dir, "w.yaml", path, size, text);
  free(text);
}

/* metrics.iteration_s of dir/result.json. */
static double iteration_of(const char *dir) {
  char path[800];
  snprintf(path, sizeof path, "%s/result.json", dir);
  char *text = read_file(path, NULL);
  assert_non_null(text);
  const char *at = strstr(text, "\"iteration_s\": ");
  assert_non_null(at);
  double t = strtod(at + strlen("\"iteration_s\": "), NULL);
  free(text);
  return t;
}

static void test_explain_matches_run(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-explain-XXXXXX", w[600], args[2048];
  assert_non_null(mkdtemp(dir));
  tiny_copy(dir, w, sizeof w);
  snprintf(args, sizeof args,
           "run %s --gpus 32 --global-batch-size 16 --out %s/out --quiet --explain", w, dir);
  spawn_result r = spawn_trainsim_ok(args);
  const char *ex = strstr(r.out, "trainsim explain:");
  assert_non_null(ex);
  /* 4 stages, 2 microbatches of 2 per pipeline: (p-1)/(m+p-1) = 3/5 idealised. Losses are
   * listed largest first. */
  assert_non_null(strstr(ex, ". pipeline bubble:"));
  assert_non_null(strstr(ex, "= 60.0% of the"));
  double previous = INFINITY;
  for (const char *line = ex; (line = strstr(line, "\n")) != NULL;) {
    line++;
    int n = 0;
    double loss = 0, share = 0;
    if (sscanf(line, "%d. %*[^:]: %lf s, %lf%% of the", &n, &loss, &share) == 3) {
      assert_true(loss <= previous);
      previous = loss;
    }
  }
  assert_true(isfinite(previous));
  assert_non_null(strstr(ex, "--pp 2 --dp 8"));

  /* Every simulated change is what `run` gives with its flags added. Each change is three
   * lines: "   a) FLAGS", what it does, "estimate ..., simulated T s (...)". */
  char *copy = strdup(ex), *lines[512];
  int n = 0, checked = 0;
  for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l != NULL && n < 512;
       l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  for (int i = 0; i + 2 < n; i++) {
    char letter = 0;
    int at = 0;
    if (sscanf(lines[i], "   %c) %n", &letter, &at) != 1 || at == 0)
      continue;
    const char *flags = lines[i] + at, *sim = strstr(lines[i + 2], "simulated ");
    if (sim == NULL)
      continue;
    snprintf(args, sizeof args, "run %s --gpus 32 --global-batch-size 16 %s --out %s/o2 --quiet", w,
             flags, dir);
    spawn_result c = spawn_trainsim_ok(args);
    char o2[700];
    snprintf(o2, sizeof o2, "%s/o2", dir);
    double want = iteration_of(o2), got = strtod(sim + strlen("simulated "), NULL);
    if (fabs(got - want) > 5e-4 * want) /* printed to 4 digits */
      fail_msg("explain's '%s' simulated %g s, run gives %g s", flags, got, want);
    spawn_free(&c);
    checked++;
  }
  free(copy);
  assert_true(checked >= 2);

  /* The same bytes again, from the directory alone. */
  snprintf(args, sizeof args, "explain %s/out --quiet", dir);
  spawn_result again = spawn_trainsim_ok(args);
  assert_string_equal(again.out, ex);
  spawn_free(&again);

  /* Estimates only. */
  snprintf(args, sizeof args, "explain %s/out --quiet --simulate 0", dir);
  spawn_result quick = spawn_trainsim_ok(args);
  assert_null(strstr(quick.out, "simulated "));
  assert_non_null(strstr(quick.out, "estimate "));
  spawn_free(&quick);

  /* A workload changed since: refused, not explained against the wrong file. */
  FILE *f = fopen(w, "a");
  assert_non_null(f);
  fputs("# changed\n", f);
  fclose(f);
  snprintf(args, sizeof args, "explain %s/out --quiet", dir);
  spawn_result changed = spawn_trainsim(args);
  assert_int_equal(changed.status, 2);
  assert_non_null(strstr(changed.err, "has changed"));
  spawn_free(&changed);
  spawn_free(&r);
  for (int i = 0; i < 2; i++) {
    char sub[700];
    snprintf(sub, sizeof sub, "%s/%s", dir, i == 0 ? "out" : "o2");
    assert_int_equal(remove_dir(sub), 0);
  }
  assert_int_equal(remove_dir(dir), 0);
}

/* No result, a result without its inputs, no directory, a bad flag: exit 2, naming why. */
static void test_explain_bad_inputs(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-explain-XXXXXX", args[1024], path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(args, sizeof args, "explain %s", dir); /* no result.json */
  spawn_result r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "result.json"));
  spawn_free(&r);
  snprintf(path, sizeof path, "%s/result.json", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("{\"schema_version\": 1}\n", f);
  fclose(f);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "inputs.arguments"));
  spawn_free(&r);
  r = spawn_trainsim("explain");
  assert_int_equal(r.status, 2);
  spawn_free(&r);
  snprintf(args, sizeof args, "explain %s --simulate 9", dir);
  r = spawn_trainsim(args);
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "--simulate"));
  spawn_free(&r);
  assert_int_equal(remove_dir(dir), 0);
}

/* A run's result.json altered where its figures stay in range each but no longer add up (a
 * bubble of 1e11 s in a short iteration), with a key given twice, or with arguments trainsim
 * run never records: explain refuses it (exit 2) instead of reporting impossible shares. */
static void test_explain_tampered(void **state) {
  (void)state;
  const char *edits[][2] = {
      {"s/\"bubble\": [0-9.e+-]*/\"bubble\": 1e11/", "adds up to"},
      {"0,/\"iteration_s\": /s//\"iteration_s\": 5, \"iteration_s\": /", "duplicate key"},
      {"s/\"arguments\": \\[/\"arguments\": [\"--help\", /", "never records"},
      {"s/\"slowest_gpu_slowdown\": [0-9.e+-]*/\"slowest_gpu_slowdown\": 2.0/", "its inputs give"}};
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    char dir[] = "/tmp/trainsim-explain-XXXXXX", args[1024], cmd[2048];
    assert_non_null(mkdtemp(dir));
    snprintf(args, sizeof args,
             "run tests/data/good/tiny.yaml --gpus 8 --tp 2 --pp 2 --fidelity analytic --quiet "
             "--out %s",
             dir);
    spawn_result r = spawn_trainsim_ok(args);
    spawn_free(&r);
    snprintf(cmd, sizeof cmd, "sed -i -E '%s' %s/result.json", edits[i][0], dir);
    assert_int_equal(system(cmd), 0);
    snprintf(args, sizeof args, "explain %s", dir);
    r = spawn_trainsim(args);
    assert_int_equal(r.status, 2);
    if (strstr(r.err, edits[i][1]) == NULL)
      fail_msg("edit %zu: expected '%s' in: %s", i, edits[i][1], r.err);
    spawn_free(&r);
    assert_int_equal(remove_dir(dir), 0);
  }
}

/* GPUs whose speeds spread: the run's compute is stretched by the slowest of its GPUs
 * (result.json), explain names that loss with what the spread costs, and GPUs alike give the
 * run without it. */
static void test_explain_slowest_gpu(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-explain-XXXXXX", w[600], args[2048], out[700];
  assert_non_null(mkdtemp(dir));
  tiny_copy(dir, w, sizeof w);
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(args, sizeof args, "run %s --gpus 32 --set gpu.speed_spread=0.3 --out %s --quiet", w,
           out);
  spawn_result r = spawn_trainsim_ok(args);
  spawn_free(&r);
  char path[800];
  snprintf(path, sizeof path, "%s/result.json", out);
  char *json = read_file(path, NULL);
  const char *at = strstr(json, "\"slowest_gpu_slowdown\": ");
  assert_non_null(at);
  /* 1 + 0.3 E[max of 32 standard normals] (2.06973, Harter 1961) */
  double slowdown = strtod(at + strlen("\"slowest_gpu_slowdown\": "), NULL);
  assert_true(fabs(slowdown - (1 + 0.3 * 2.06973)) < 1e-4);
  free(json);
  double slow = iteration_of(out);
  snprintf(args, sizeof args, "explain %s --quiet --simulate 1", out);
  spawn_result ex = spawn_trainsim_ok(args);
  assert_non_null(strstr(ex.out, ". the slowest GPU: "));
  assert_non_null(strstr(ex.out, "--set gpu.speed_spread=0"));
  spawn_free(&ex);
  snprintf(args, sizeof args, "run %s --gpus 32 --set gpu.speed_spread=0 --out %s --quiet", w, out);
  r = spawn_trainsim_ok(args);
  spawn_free(&r);
  assert_true(iteration_of(out) < slow);
  /* Compute that a collective holds (a GEMM under its TP all-gather or reduce-scatter) is the
   * GPU's work too: the compute category stretches by the slowdown whole. */
  double compute[2];
  for (int spread = 0; spread < 2; spread++) {
    snprintf(args, sizeof args,
             "run %s --gpus 32 --sequence-parallel --set parallelism.tp_comm_overlap=true "
             "--set gpu.speed_spread=%s --out %s --quiet",
             w, spread ? "0.3" : "0", out);
    r = spawn_trainsim_ok(args);
    spawn_free(&r);
    snprintf(path, sizeof path, "%s/result.json", out);
    json = read_file(path, NULL);
    at = strstr(json, "\"compute\": ");
    assert_non_null(at);
    compute[spread] = strtod(at + strlen("\"compute\": "), NULL);
    free(json);
  }
  assert_true(fabs(compute[1] / compute[0] - slowdown) < 1e-3);
  assert_int_equal(remove_dir(out), 0);
  assert_int_equal(remove_dir(dir), 0);
}

/* A mixture-of-experts run on one H200 whose router favours an expert (load 2x the mean) and
 * whose 64 experts get 512 tokens a microbatch: explain names the imbalance with even routing
 * as its change (a faster run), and the small expert groups with a larger micro-batch. */
static void test_explain_moe(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-explain-XXXXXX", w[600], args[2048], out[700];
  assert_non_null(mkdtemp(dir));
  write_workload(
      dir, "moe.yaml", w, sizeof w,
      "name: olmoe-like\n"
      "model: {num_layers: 2, hidden_size: 2048, num_attention_heads: 16, seq_length: 4096,\n"
      "        vocab_size: 50304, swiglu: true, normalization: RMSNorm,\n"
      "        position_embedding_type: rope, add_bias_linear: false, ffn_hidden_size: 1024,\n"
      "        num_experts: 64, moe_router_topk: 8, moe_grouped_gemm: true,\n"
      "        moe_load_imbalance: 2}\n"
      "training: {global_batch_size: 4, micro_batch_size: 1, precision: bf16}\n"
      "parallelism: {tensor: 1, pipeline: 1, data: 1, recompute: selective,\n"
      "              recompute_modules: [moe_act, layernorm]}\n"
      "stack: {framework: pytorch}\n");
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(args, sizeof args,
           "run %s --platform %s/platforms/hgx-h200.yaml --gpus 1 --out %s --quiet", w,
           TS_SOURCE_DIR, out);
  spawn_result r = spawn_trainsim_ok(args);
  spawn_free(&r);
  double base = iteration_of(out);
  snprintf(args, sizeof args, "explain %s --quiet --simulate 1", out);
  spawn_result ex = spawn_trainsim_ok(args);
  assert_non_null(strstr(ex.out, ". mixture-of-experts load imbalance: "));
  assert_non_null(strstr(ex.out, "--set model.moe_load_imbalance=1"));
  assert_non_null(strstr(ex.out, ". too few tokens an expert: "));
  assert_non_null(strstr(ex.out, "about 512 tokens a microbatch"));
  /* recompute_modules named, not the default's attention core */
  assert_non_null(strstr(ex.out, "runs the experts' activation function and the norms again"));
  spawn_free(&ex);
  snprintf(args, sizeof args,
           "run %s --platform %s/platforms/hgx-h200.yaml --gpus 1 --out %s --quiet "
           "--set model.moe_load_imbalance=1",
           w, TS_SOURCE_DIR, out);
  r = spawn_trainsim_ok(args);
  spawn_free(&r);
  assert_true(iteration_of(out) < base);
  assert_int_equal(remove_dir(out), 0);
  assert_int_equal(remove_dir(dir), 0);
}

/* DeepSpeed's 2021 ZeRO-3 (0.3.16) on A100s: explain names the release's mechanisms and offers
 * 0.6.0, which simulates faster; what the older release loses grows with the data-parallel
 * ranks (its host loops over them in every list collective), at a fixed batch per GPU. */
static void test_explain_deepspeed_release(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-explain-XXXXXX", w[600], args[2048], out[700];
  assert_non_null(mkdtemp(dir));
  write_workload(
      dir, "zero3.yaml", w, sizeof w,
      "name: zero3-2021\n"
      "model: {num_layers: 2, hidden_size: 4096, num_attention_heads: 32, seq_length: 2048,\n"
      "        vocab_size: 51200}\n"
      "training: {global_batch_size: 32, micro_batch_size: 1, precision: fp16}\n"
      "parallelism: {tensor: 1, pipeline: 1, zero_stage: 3, recompute: full}\n"
      "stack: {framework: megatron-deepspeed, deepspeed_version: 0.3.16}\n");
  snprintf(out, sizeof out, "%s/out", dir);
  double lost[2];
  const long gpus[2] = {16, 64};
  for (int k = 0; k < 2; k++) {
    double t[2];
    for (int v = 0; v < 2; v++) {
      snprintf(args, sizeof args,
               "run %s --platform %s/platforms/dgx-a100.yaml --gpus %ld --global-batch-size %ld "
               "--fidelity analytic --out %s --quiet%s",
               w, TS_SOURCE_DIR, gpus[k], 2 * gpus[k], out,
               v ? " --set stack.deepspeed_version=0.6.0" : "");
      spawn_result r = spawn_trainsim_ok(args);
      spawn_free(&r);
      t[v] = iteration_of(out);
    }
    assert_true(t[0] > t[1]);
    lost[k] = t[0] - t[1];
  }
  assert_true(lost[1] > 1.5 * lost[0]);
  snprintf(args, sizeof args,
           "run %s --platform %s/platforms/dgx-a100.yaml --gpus 64 --global-batch-size 128 "
           "--fidelity analytic --out %s --quiet",
           w, TS_SOURCE_DIR, out);
  spawn_result r = spawn_trainsim_ok(args);
  spawn_free(&r);
  char path[800]; /* the result records the release */
  snprintf(path, sizeof path, "%s/result.json", out);
  char *text = read_file(path, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "\"deepspeed_zero3\": \"0.3.16\", \"contiguous_gradients\": false"));
  free(text);
  snprintf(args, sizeof args, "explain %s --quiet --simulate 1", out);
  spawn_result ex = spawn_trainsim_ok(args);
  assert_non_null(strstr(ex.out, "DeepSpeed's ZeRO-3 (release 0.3.16)"));
  assert_non_null(strstr(ex.out, "--set stack.deepspeed_version=0.6.0"));
  /* 0.3.16's default all-reduces flattened buckets: contiguous gradients are offered */
  assert_non_null(strstr(ex.out, "each bucket of gradients is flattened and all-reduced whole"));
  assert_non_null(strstr(ex.out, "--set stack.contiguous_gradients=true"));
  spawn_free(&ex);
  assert_int_equal(remove_dir(out), 0);
  assert_int_equal(remove_dir(dir), 0);
}

/* PyTorch's FSDP: explain says which API ran ZeRO-3 and what of it shows (FSDP2's copies on the
 * compute stream, FSDP1's post-backward kernels beside the GEMMs), and the result records it. */
static void test_explain_fsdp(void **state) {
  (void)state;
  char dir[] = "/tmp/trainsim-explain-XXXXXX", w[600], args[2048], out[700], path[800];
  assert_non_null(mkdtemp(dir));
  write_workload(dir, "fsdp.yaml", w, sizeof w,
                 "name: fsdp\n"
                 "model: {num_layers: 2, hidden_size: 4096, num_attention_heads: 32, "
                 "seq_length: 2048,\n"
                 "        vocab_size: 51200}\n"
                 "training: {global_batch_size: 16, micro_batch_size: 1}\n"
                 "parallelism: {zero_stage: 3}\n"
                 "stack: {framework: pytorch}\n");
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(path, sizeof path, "%s/result.json", out);
  const char *expect[2][2] = {{"\"fsdp\": 2", "PyTorch's FSDP2 (fully_shard)"},
                              {"\"fsdp\": 1", "PyTorch's FSDP1 (FullyShardedDataParallel)"}};
  for (int v = 0; v < 2; v++) {
    snprintf(args, sizeof args,
             "run %s --platform %s/platforms/dgx-h100.yaml --gpus 16 --fidelity analytic --out %s "
             "--quiet%s",
             w, TS_SOURCE_DIR, out, v ? " --set stack.fsdp_version=1" : "");
    spawn_result r = spawn_trainsim_ok(args);
    spawn_free(&r);
    char *text = read_file(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, expect[v][0]));
    free(text);
    snprintf(args, sizeof args, "explain %s --quiet --simulate 0", out);
    spawn_result ex = spawn_trainsim_ok(args);
    assert_non_null(strstr(ex.out, expect[v][1]));
    spawn_free(&ex);
  }
  assert_int_equal(remove_dir(out), 0);
  assert_int_equal(remove_dir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_explain_matches_run), cmocka_unit_test(test_explain_bad_inputs),
      cmocka_unit_test(test_explain_tampered),    cmocka_unit_test(test_explain_slowest_gpu),
      cmocka_unit_test(test_explain_moe),         cmocka_unit_test(test_explain_deepspeed_release),
      cmocka_unit_test(test_explain_fsdp)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
