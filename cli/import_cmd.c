/* import_cmd: see import_cmd.h. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "import_cmd.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/doc.h"
#include "../workloads/text.h"
#include "../workloads/workload.h"
#include "args.h"

typedef struct import_args {
  long seq, global_batch, micro_batch, vocab;
  const char *name;
} import_args;

static const ts_flag import_flags[] = {
    {.name = "--seq-length",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(import_args, seq),
     .lo = 1,
     .hi = 1L << 24,
     .help = "the training sequence length (default 4096; a model config gives only its longest "
             "context, max_position_embeddings)"},
    {.name = "--global-batch-size",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(import_args, global_batch),
     .lo = 1,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "sequences per iteration (default 1024)"},
    {.name = "--micro-batch-size",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(import_args, micro_batch),
     .lo = 1,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "sequences per microbatch (default 1)"},
    {.name = "--vocab-size",
     .value = "N",
     .kind = TS_FLAG_COUNT,
     .offset = offsetof(import_args, vocab),
     .lo = 1,
     .hi = TS_ARGS_MAX_COUNT,
     .help = "megatron: the vocabulary, where the launch line leaves it to its tokenizer"},
    {.name = "--name",
     .value = "NAME",
     .kind = TS_FLAG_TEXT,
     .offset = offsetof(import_args, name),
     .help = "the workload's name (default: the config's directory)"},
    {.name = NULL}};

static const ts_flag_group groups[] = {{"options", import_flags, 0}, {NULL, NULL, 0}};

const ts_command ts_import_command = {
    .name = "import",
    .synopsis = "hf CONFIG.json [options]\nmegatron [options] -- MEGATRON-ARGS...",
    .summary = "a workload file from a Hugging Face config or a Megatron-LM launch line",
    .description =
        "Writes a workload file to stdout from a Hugging Face config.json of the model types\n"
        "llama, mistral, mixtral, qwen2, qwen3, qwen2_moe, qwen3_moe, deepseek_v2 and "
        "deepseek_v3:\n"
        "the model section from the config (each value with the key it came from), the training\n"
        "section from the flags below (a model config has no batch or training length), and one\n"
        "GPU's layout, to be set with run's flags (--gpus, --tp, --pp, --ep). What trainsim does\n"
        "not model is named in comments (Qwen2's Q/K/V biases).\n"
        "  trainsim import hf Meta-Llama-3-8B/config.json > llama3-8b.yaml\n"
        "  trainsim run llama3-8b.yaml --platform platforms/dgx-h100.yaml --gpus 64 --tp 2\n"
        "\n"
        "megatron reads the arguments after '--' as Megatron-LM's pretrain_gpt.py takes them: the\n"
        "model, training and layout flags (data parallelism is the job's: run's --gpus), each\n"
        "value with its flag; the flags it does not read are listed in a closing comment.\n"
        "  trainsim import megatron -- --num-layers 32 --hidden-size 4096 ... > w.yaml\n",
    .groups = groups,
    .reads_no_workload = true,
    .main = ts_import_main};

typedef enum family { DENSE, MIXTRAL, QWEN_MOE, DEEPSEEK } family;

static const struct {
  const char *model_type;
  family family;
} known[] = {{"llama", DENSE},        {"mistral", DENSE},        {"qwen2", DENSE},
             {"qwen3", DENSE},        {"mixtral", MIXTRAL},      {"qwen2_moe", QWEN_MOE},
             {"qwen3_moe", QWEN_MOE}, {"deepseek_v2", DEEPSEEK}, {"deepseek_v3", DEEPSEEK}};
enum { N_KNOWN = sizeof known / sizeof known[0] };

/* The config being read, where an error goes, and the keys asked for (the rest are listed in
 * the output as not read). */
#define CONFIG_MAX_ASKED 128
typedef struct config {
  ts_doc *doc;
  int root;
  ts_err *err;
  const char *asked[CONFIG_MAX_ASKED];
  int n_asked;
} config;

/* A JSON null reads as absent. Marks the key as read: `present` is how every value is asked
 * for. */
static bool present(const config *c, const char *key) {
  config *mark = (config *)c; /* the record of what was asked, not the config */
  bool seen = false;
  for (int i = 0; i < mark->n_asked && !seen; i++)
    seen = strcmp(mark->asked[i], key) == 0;
  if (!seen && mark->n_asked < CONFIG_MAX_ASKED)
    mark->asked[mark->n_asked++] = key;
  int v = ts_doc_get(c->doc, c->root, key);
  const char *s = v != 0 ? ts_doc_scalar(c->doc, v) : NULL;
  return v != 0 && !(s != NULL && strcmp(s, "null") == 0);
}

/* A number or boolean given as a JSON string ("32"): refused, as the other types are. */
static int not_quoted(const config *c, const char *key, const char *expected) {
  int v = ts_doc_get(c->doc, c->root, key);
  if (!ts_doc_is_quoted(c->doc, v))
    return 0;
  return ts_err_at(c->err, ts_doc_loc(c->doc, v), "key '%s': expected %s, found the string \"%s\"",
                   key, expected, ts_doc_scalar(c->doc, v));
}

/* An integer of the config: 0 when absent or null and !required, else -1 with the error. */
static int get_long(const config *c, const char *key, bool required, long lo, long *out) {
  if (!present(c, key)) {
    int v = ts_doc_get(c->doc, c->root, key);
    if (required && v != 0)
      return ts_err_at(c->err, ts_doc_loc(c->doc, v), "key '%s': expected an integer, found null",
                       key);
    if (required)
      return ts_doc_missing(c->doc, c->root, "config", key, c->err);
    return 0;
  }
  if (not_quoted(c, key, "an integer") != 0)
    return -1;
  return ts_doc_get_long(c->doc, c->root, key, lo, 1L << 40, out, c->err) < 0 ? -1 : 0;
}

static int get_double(const config *c, const char *key, double *out) {
  if (!present(c, key))
    return 0;
  if (not_quoted(c, key, "a number") != 0)
    return -1;
  return ts_doc_get_double(c->doc, c->root, key, 0, 1e9, out, c->err) < 0 ? -1 : 0;
}

static int get_bool(const config *c, const char *key, bool *out) {
  if (!present(c, key))
    return 0;
  if (not_quoted(c, key, "true or false") != 0)
    return -1;
  return ts_doc_get_bool(c->doc, c->root, key, out, c->err) < 0 ? -1 : 0;
}

static int get_string(const config *c, const char *key, const char **out) {
  if (!present(c, key))
    return 0;
  return ts_doc_get_string(c->doc, c->root, key, out, c->err) < 0 ? -1 : 0;
}

/* The workload's name: --name, else the config's directory, kept to [A-Za-z0-9._-]. */
static void workload_name(const char *given, const char *path, char *out, size_t size) {
  char dir[256] = "imported";
  if (given == NULL) {
    const char *slash = strrchr(path, '/');
    if (slash != NULL && slash > path) {
      const char *start = slash - 1;
      while (start > path && start[-1] != '/')
        start--;
      size_t n =
          (size_t)(slash - start) < sizeof dir - 1 ? (size_t)(slash - start) : sizeof dir - 1;
      if (n > 0 && !(n == 1 && start[0] == '.')) {
        memcpy(dir, start, n);
        dir[n] = '\0';
      }
    }
    given = dir;
  }
  size_t i = 0;
  for (; given[i] != '\0' && i + 1 < size; i++) {
    unsigned char ch = (unsigned char)given[i];
    out[i] = isalnum(ch) || ch == '.' || ch == '_' || ch == '-' ? (char)ch : '-';
  }
  out[i] = '\0';
  if (i == 0)
    snprintf(out, size, "imported");
}

/* One "  key: value" line of the workload, with its comment (NULL: none) in a column. */
static void emit(FILE *o, const char *comment, const char *fmt, ...) {
  char kv[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kv, sizeof kv, fmt, ap);
  va_end(ap);
  if (comment == NULL)
    fprintf(o, "  %s\n", kv);
  else
    fprintf(o, "  %-38s # %s\n", kv, comment);
}

/* Which layers are MoE, as a YAML list of 0 and 1 (layer i from 0). */
static void layer_list(FILE *o, const bool *moe, long n) {
  fprintf(o, "[");
  for (long i = 0; i < n; i++)
    fprintf(o, "%s%d", i > 0 ? ", " : "", moe[i] ? 1 : 0);
  fprintf(o, "]");
}

/* The model section from config c (model_type `type`, of family f) into o; 0, or -1 with the
 * error. */
static int write_model(const config *c, const char *type, family f, long seq, FILE *o) {
  long layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, head_dim = 0,
       max_pos = 0;
  bool tie = false, attention_bias = false;
  double attn_drop = 0;
  if (get_long(c, "num_hidden_layers", true, 1, &layers) != 0 ||
      get_long(c, "hidden_size", true, 1, &hidden) != 0 ||
      get_long(c, "num_attention_heads", true, 1, &heads) != 0 ||
      get_long(c, "num_key_value_heads", false, 1, &kv_heads) != 0 ||
      get_long(c, "intermediate_size", true, 1, &ffn) != 0 ||
      get_long(c, "vocab_size", true, 1, &vocab) != 0 ||
      get_long(c, "head_dim", false, 1, &head_dim) != 0 ||
      get_long(c, "max_position_embeddings", false, 1, &max_pos) != 0 ||
      get_bool(c, "tie_word_embeddings", &tie) != 0 ||
      get_bool(c, "attention_bias", &attention_bias) != 0 ||
      get_double(c, "attention_dropout", &attn_drop) != 0)
    return -1;
  if (layers > 4096)
    return ts_err_at(c->err, ts_doc_loc(c->doc, ts_doc_get(c->doc, c->root, "num_hidden_layers")),
                     "key 'num_hidden_layers': expected at most 4096 layers, found %ld", layers);
  fprintf(o, "model:\n");
  emit(o, "num_hidden_layers", "num_layers: %ld", layers);
  emit(o, "hidden_size", "hidden_size: %ld", hidden);
  emit(o, "num_attention_heads", "num_attention_heads: %ld", heads);
  if (f != DEEPSEEK) {
    emit(o, kv_heads > 0 ? "num_key_value_heads" : "num_key_value_heads absent: every head",
         "num_query_groups: %ld", kv_heads > 0 ? kv_heads : heads);
    if (head_dim > 0 && head_dim * heads != hidden)
      emit(o, "head_dim (not hidden_size / heads)", "kv_channels: %ld", head_dim);
  }
  emit(o, f == DENSE ? "intermediate_size" : "intermediate_size (the dense layers')",
       "ffn_hidden_size: %ld", ffn);
  char context[96] = "--seq-length";
  if (max_pos > 0)
    snprintf(context, sizeof context, "--seq-length (max_position_embeddings: %ld)", max_pos);
  emit(o, context, "seq_length: %ld", seq);
  emit(o, "vocab_size", "vocab_size: %ld", vocab);
  /* every model type read here gates its MLP (gate_proj x up_proj); trainsim prices the gate
   * as SwiGLU's, which the SiLU-family activations are */
  const char *act = NULL;
  if (get_string(c, "hidden_act", &act) != 0)
    return -1;
  if (act != NULL && strcmp(act, "silu") != 0 && strcmp(act, "swish") != 0)
    return ts_err_at(c->err, ts_doc_loc(c->doc, ts_doc_get(c->doc, c->root, "hidden_act")),
                     "key 'hidden_act': expected silu (the gated MLP trainsim prices as "
                     "SwiGLU), found '%s'",
                     act);
  emit(o, "gated MLP (hidden_act with up_proj)", "swiglu: true");
  emit(o, NULL, "normalization: RMSNorm");
  emit(o, NULL, "position_embedding_type: rope");
  emit(o, tie ? "tie_word_embeddings: true" : "tie_word_embeddings: false",
       "untie_embeddings_and_output_weights: %s", tie ? "false" : "true");
  bool qwen2 = strncmp(type, "qwen2", 5) == 0;
  emit(o,
       qwen2            ? "Qwen2's Q, K and V biases not modelled (every linear's would count more)"
       : attention_bias ? "attention_bias (trainsim puts biases on every linear)"
                        : "attention_bias",
       "add_bias_linear: %s", attention_bias && !qwen2 ? "true" : "false");
  emit(o, "attention_dropout", "attention_dropout: %g", attn_drop);
  emit(o, "none in these models", "hidden_dropout: 0");
  if (f == DENSE)
    return 0;

  long experts = 0, topk = 0, moe_ffn = 0, shared = 0, shared_n = 0, step = 1, first_dense = 0,
       freq = 1, q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v_dim = 0, n_group = 0,
       topk_group = 0, mtp = 0;
  double aux = 0;
  const char *scoring = NULL, *topk_method = NULL;
  const char *experts_key = f == MIXTRAL    ? "num_local_experts"
                            : f == QWEN_MOE ? "num_experts"
                                            : "n_routed_experts";
  if (get_long(c, experts_key, true, 1, &experts) != 0 ||
      get_long(c, "num_experts_per_tok", true, 1, &topk) != 0 ||
      (f != MIXTRAL && get_long(c, "moe_intermediate_size", true, 1, &moe_ffn) != 0) ||
      get_double(c, "router_aux_loss_coef", &aux) != 0 ||
      get_double(c, "aux_loss_alpha", &aux) != 0)
    return -1;
  if (topk > experts)
    return ts_err_at(c->err, ts_doc_loc(c->doc, ts_doc_get(c->doc, c->root, "num_experts_per_tok")),
                     "key 'num_experts_per_tok': expected at most %s (%ld), found %ld", experts_key,
                     experts, topk);
  bool *moe = calloc((size_t)layers, sizeof *moe);
  if (moe == NULL)
    return ts_err_plain(c->err, "import: out of memory");
  for (long i = 0; i < layers; i++)
    moe[i] = true;
  if (f == QWEN_MOE) {
    if (get_long(c, "shared_expert_intermediate_size", false, 1, &shared) != 0 ||
        get_long(c, "decoder_sparse_step", false, 1, &step) != 0) {
      free(moe);
      return -1;
    }
    /* Qwen's layer i is sparse when (i + 1) % decoder_sparse_step == 0 and i is not one of
     * mlp_only_layers (transformers' Qwen2MoeDecoderLayer) */
    int dense_list =
        present(c, "mlp_only_layers") ? ts_doc_get(c->doc, c->root, "mlp_only_layers") : 0;
    for (long i = 0; i < layers; i++)
      moe[i] = step > 0 && (i + 1) % step == 0;
    if (dense_list != 0 && !ts_doc_is_seq(c->doc, dense_list)) {
      free(moe);
      return ts_err_at(c->err, ts_doc_loc(c->doc, dense_list),
                       "key 'mlp_only_layers': expected a list of layer indices, found %s",
                       ts_doc_scalar(c->doc, dense_list) != NULL ? "a single value" : "a mapping");
    }
    for (int k = 0; dense_list != 0 && k < ts_doc_seq_len(c->doc, dense_list); k++) {
      int item = ts_doc_seq_item(c->doc, dense_list, k);
      const char *s = ts_doc_scalar(c->doc, item);
      long i = -1;
      if (s == NULL || ts_doc_is_quoted(c->doc, item) || ts_parse_long(s, &i) != 0 || i < 0 ||
          i >= layers) {
        free(moe);
        return ts_err_at(c->err, ts_doc_loc(c->doc, item),
                         "key 'mlp_only_layers': expected layer indices from 0 to %ld, found '%s'",
                         layers - 1, s != NULL ? s : "a list or mapping");
      }
      moe[i] = false;
    }
  } else if (f == DEEPSEEK) {
    if (get_long(c, "n_shared_experts", false, 0, &shared_n) != 0 ||
        get_long(c, "first_k_dense_replace", false, 0, &first_dense) != 0 ||
        get_long(c, "moe_layer_freq", false, 1, &freq) != 0 ||
        get_long(c, "q_lora_rank", false, 1, &q_lora) != 0 ||
        get_long(c, "kv_lora_rank", true, 1, &kv_lora) != 0 ||
        get_long(c, "qk_nope_head_dim", true, 1, &nope) != 0 ||
        get_long(c, "qk_rope_head_dim", true, 1, &rope) != 0 ||
        get_long(c, "v_head_dim", true, 1, &v_dim) != 0 ||
        get_long(c, "n_group", false, 1, &n_group) != 0 ||
        get_long(c, "topk_group", false, 1, &topk_group) != 0 ||
        get_long(c, "num_nextn_predict_layers", false, 0, &mtp) != 0 ||
        get_string(c, "scoring_func", &scoring) != 0 ||
        get_string(c, "topk_method", &topk_method) != 0) {
      free(moe);
      return -1;
    }
    shared = shared_n * moe_ffn;
    /* DeepSeek's layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0 */
    for (long i = 0; i < layers; i++)
      moe[i] = i >= first_dense && i % freq == 0;
    emit(o, NULL, "multi_latent_attention: true");
    if (q_lora > 0)
      emit(o, "q_lora_rank", "q_lora_rank: %ld", q_lora);
    emit(o, "kv_lora_rank", "kv_lora_rank: %ld", kv_lora);
    emit(o, "qk_nope_head_dim", "qk_head_dim: %ld", nope);
    emit(o, "qk_rope_head_dim", "qk_pos_emb_head_dim: %ld", rope);
    emit(o, "v_head_dim", "v_head_dim: %ld", v_dim);
  }
  bool any = false;
  for (long i = 0; i < layers; i++)
    any = any || moe[i];
  if (!any) {
    free(moe);
    const char *key = f == DEEPSEEK ? "first_k_dense_replace" : "mlp_only_layers";
    int v = ts_doc_get(c->doc, c->root, key);
    ts_loc loc = v != 0 ? ts_doc_loc(c->doc, v) : ts_doc_loc(c->doc, c->root);
    return ts_err_at(c->err, loc,
                     "key '%s': leaves none of the %ld layers a MoE layer, expected a %s model "
                     "with experts (num_experts %ld)",
                     key, layers, f == DEEPSEEK ? "DeepSeek" : "mixture-of-experts", experts);
  }
  emit(o, experts_key, "num_experts: %ld", experts);
  emit(o, "num_experts_per_tok", "moe_router_topk: %ld", topk);
  emit(o, f == MIXTRAL ? "intermediate_size" : "moe_intermediate_size", "moe_ffn_hidden_size: %ld",
       f == MIXTRAL ? ffn : moe_ffn);
  if (shared > 0)
    emit(o,
         f == DEEPSEEK ? "n_shared_experts x moe_intermediate_size"
                       : "shared_expert_intermediate_size",
         "moe_shared_expert_intermediate_size: %ld", shared);
  bool all = true;
  for (long i = 0; i < layers; i++)
    all = all && moe[i];
  if (!all) {
    fprintf(o, "  moe_layer_freq: ");
    layer_list(o, moe, layers);
    fprintf(o, "  # %s\n",
            f == DEEPSEEK ? "first_k_dense_replace, moe_layer_freq"
                          : "decoder_sparse_step, mlp_only_layers");
  }
  free(moe);
  emit(o, "ASSUMED: grouped GEMM, as frameworks run MoE", "moe_grouped_gemm: true");
  if (scoring != NULL && strcmp(scoring, "sigmoid") == 0)
    emit(o, "scoring_func", "moe_router_score_function: sigmoid");
  if (topk_method != NULL && strcmp(topk_method, "noaux_tc") == 0)
    emit(o, "topk_method noaux_tc (e_score_correction_bias)",
         "moe_router_enable_expert_bias: true");
  if (aux > 0)
    emit(o, "router_aux_loss_coef / aux_loss_alpha", "moe_aux_loss_coeff: %g", aux);
  if (n_group > 1 && topk_group > 0) {
    emit(o, "n_group", "moe_router_num_groups: %ld", n_group);
    emit(o, "topk_group", "moe_router_group_topk: %ld", topk_group);
  }
  if (mtp > 0)
    emit(o, "num_nextn_predict_layers", "mtp_num_layers: %ld", mtp);
  return 0;
}

/* What import wrote must be a workload trainsim runs: parsed again here, a config that makes none
 * (heads that do not divide the hidden size, a layout rule) is an error naming `source`. */
static int check_written(const char *source, const char *text, size_t len, ts_err *err) {
  static ts_workload wl;
  ts_err why = {0};
  if (ts_workload_parse("(the imported workload)", text, len, &wl, &why) == 0)
    return 0;
  const char *reason = strstr(why.msg, "error: ");
  return ts_err_plain(err, "import: %s gives no workload trainsim can run: %s", source,
                      reason != NULL ? reason + strlen("error: ") : why.msg);
}

/* ---- a Megatron-LM launch line ---- */

/* The launch line's flags: name (without "--") and value (NULL: a switch). */
typedef struct megatron_args {
  int n;
  const char *value[512];
  char name[512][64];
  bool is_read[512];
  char **more[512]; /* values after the first (argparse's nargs='+'), n_more of them */
  int n_more[512];
  int given; /* flags on the line, all counted */
  int valued_switch; /* the first switch (store_true) read with a value, or -1 */
} megatron_args;

static void megatron_parse(int argc, char **argv, megatron_args *m) {
  m->n = m->given = 0;
  m->valued_switch = -1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) != 0)
      continue; /* a value of no flag (a script's own argument): not read */
    if (++m->given > 512)
      continue; /* import_megatron refuses the line */
    const char *eq = strchr(a, '=');
    snprintf(m->name[m->n], sizeof m->name[m->n], "%.*s",
             eq ? (int)(eq - a - 2) : (int)strlen(a + 2), a + 2);
    m->value[m->n] = eq                                                   ? eq + 1
                     : i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0 ? argv[++i]
                                                                          : NULL;
    m->more[m->n] = &argv[i + 1];
    m->n_more[m->n] = 0;
    while (!eq && m->value[m->n] != NULL && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
      m->n_more[m->n]++;
      i++;
    }
    m->is_read[m->n] = false;
    m->n++;
  }
}

/* Flag `name`'s index (the last given, as argparse keeps it), or -1; marks it read. */
static int megatron_find(megatron_args *m, const char *name) {
  int at = -1;
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->name[i], name) == 0) {
      at = i;
      m->is_read[i] = true;
    }
  return at;
}

/* A switch (argparse's store_true): given or not. Megatron-LM's parser refuses a value after
 * one (--bf16=false, --swiglu false), which would otherwise read as on: noted for the caller. */
static bool megatron_switch(megatron_args *m, const char *name) {
  int i = megatron_find(m, name);
  if (i >= 0 && m->value[i] != NULL && m->valued_switch < 0)
    m->valued_switch = i;
  return i >= 0;
}

/* An integer flag: 1 with *out, 0 when absent, -1 with the error. */
static int megatron_long(megatron_args *m, const char *name, long lo, long *out, ts_err *err) {
  int i = megatron_find(m, name);
  if (i < 0)
    return 0;
  char *end = NULL;
  long v = m->value[i] != NULL ? strtol(m->value[i], &end, 10) : 0;
  if (m->value[i] == NULL || *end != '\0' || end == m->value[i] || v < lo || v > 1L << 40) {
    char shown[64];
    ts_text_copy(shown, sizeof shown, m->value[i] != NULL ? m->value[i] : "nothing");
    return ts_err_plain(err,
                        "import megatron: --%s: expected an integer of at least %ld, found '%s'",
                        name, lo, shown);
  }
  *out = v;
  return 1;
}

static int megatron_double(megatron_args *m, const char *name, double *out, ts_err *err) {
  int i = megatron_find(m, name);
  if (i < 0)
    return 0;
  char *end = NULL;
  double v = m->value[i] != NULL ? strtod(m->value[i], &end) : 0;
  if (m->value[i] == NULL || *end != '\0' || end == m->value[i] || !(v >= 0 && v < 1e9)) {
    char shown[64];
    ts_text_copy(shown, sizeof shown, m->value[i] != NULL ? m->value[i] : "nothing");
    return ts_err_plain(err, "import megatron: --%s: expected a number, found '%s'", name, shown);
  }
  *out = v;
  return 1;
}

/* A flag that takes one of names: its index, -1 absent, -2 with the error. */
static int megatron_choice(megatron_args *m, const char *name, const char *const *names,
                           ts_err *err) {
  int i = megatron_find(m, name);
  if (i < 0)
    return -1;
  for (int k = 0; names[k] != NULL; k++)
    if (m->value[i] != NULL && strcmp(m->value[i], names[k]) == 0)
      return k;
  char shown[64], all[256] = "";
  ts_text_copy(shown, sizeof shown, m->value[i] != NULL ? m->value[i] : "nothing");
  for (int k = 0; names[k] != NULL; k++)
    snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", k ? ", " : "", names[k]);
  ts_err_plain(err, "import megatron: --%s: expected one of %s, found '%s'", name, all, shown);
  return -2;
}

/* Copies the integer flags of `table` (Megatron flag, workload key) that were given. */
typedef struct long_key {
  const char *flag, *key;
  long lo;
} long_key;

static int emit_longs(FILE *o, megatron_args *m, const long_key *table, ts_err *err) {
  for (int i = 0; table[i].flag != NULL; i++) {
    long v = 0;
    int rc = megatron_long(m, table[i].flag, table[i].lo, &v, err);
    if (rc < 0)
      return -1;
    if (rc == 1) {
      char from[80];
      snprintf(from, sizeof from, "--%s", table[i].flag);
      emit(o, from, "%s: %ld", table[i].key, v);
    }
  }
  return 0;
}

/* The workload of a Megatron-LM launch line (args after "--") into o; 0, or -1 with err. */
static int write_megatron(megatron_args *m, const import_args *a, FILE *o, ts_err *err) {
  static const long_key model_longs[] = {
      {"num-layers", "num_layers", 1},
      {"hidden-size", "hidden_size", 1},
      {"num-attention-heads", "num_attention_heads", 1},
      {"num-query-groups", "num_query_groups", 1},
      {"kv-channels", "kv_channels", 1},
      {"ffn-hidden-size", "ffn_hidden_size", 1},
      {"seq-length", "seq_length", 1},
      {"num-experts", "num_experts", 1},
      {"moe-router-topk", "moe_router_topk", 1},
      {"moe-ffn-hidden-size", "moe_ffn_hidden_size", 1},
      {"moe-shared-expert-intermediate-size", "moe_shared_expert_intermediate_size", 1},
      {"q-lora-rank", "q_lora_rank", 1},
      {"kv-lora-rank", "kv_lora_rank", 1},
      {"qk-head-dim", "qk_head_dim", 1},
      {"qk-pos-emb-head-dim", "qk_pos_emb_head_dim", 1},
      {"v-head-dim", "v_head_dim", 1},
      {"mtp-num-layers", "mtp_num_layers", 1},
      {"moe-router-num-groups", "moe_router_num_groups", 1},
      {"moe-router-group-topk", "moe_router_group_topk", 1},
      {NULL, NULL, 0}};
  static const char *const norms[] = {"LayerNorm", "RMSNorm", NULL};
  static const char *const positions[] = {"learned_absolute", "rope", NULL};
  static const char *const scores[] = {"softmax", "sigmoid", NULL};
  static const char *const granularity[] = {"full", "selective", NULL};
  static const char *const fp8[] = {"e4m3", "hybrid", NULL};
  static const char *const dispatchers[] = {"alltoall", "allgather", "flex", NULL};
  long layers = 0, seq = 0, vocab = a->vocab, gbs = 0, mbs = 1, iters = 0;
  if (megatron_long(m, "num-layers", 1, &layers, err) < 0 ||
      megatron_long(m, "seq-length", 1, &seq, err) < 0 ||
      megatron_long(m, "vocab-size", 1, &vocab, err) < 0 ||
      megatron_long(m, "global-batch-size", 1, &gbs, err) < 0 ||
      megatron_long(m, "micro-batch-size", 1, &mbs, err) < 0 ||
      megatron_long(m, "train-iters", 1, &iters, err) < 0)
    return -1;
  static const char *const required[] = {"num-layers", "hidden-size",       "num-attention-heads",
                                         "seq-length", "global-batch-size", NULL};
  for (int i = 0; required[i] != NULL; i++)
    if (megatron_find(m, required[i]) < 0)
      return ts_err_plain(err, "import megatron: the launch line has no --%s (a workload needs it)",
                          required[i]);
  if (vocab == 0) {
    int tok = megatron_find(m, "tokenizer-type");
    if (tok >= 0 && m->value[tok] != NULL && strcmp(m->value[tok], "GPT2BPETokenizer") == 0)
      vocab = 50257; /* GPT-2's BPE vocabulary, as Megatron-LM's GPT2BPETokenizer loads it */
    else
      return ts_err_plain(err, "import megatron: the launch line gives no vocabulary (its "
                               "tokenizer holds it): add --vocab-size N after '--' or to import");
  }
  fprintf(o, "model:\n");
  if (emit_longs(o, m, model_longs, err) != 0)
    return -1;
  emit(o,
       megatron_find(m, "vocab-size") >= 0 ? "--vocab-size"
       : a->vocab > 0                      ? "import's --vocab-size (the tokenizer's)"
                                           : "GPT2BPETokenizer's vocabulary",
       "vocab_size: %ld", vocab);
  if (megatron_switch(m, "swiglu"))
    emit(o, "--swiglu", "swiglu: true");
  int norm = megatron_choice(m, "normalization", norms, err);
  int pos = megatron_choice(m, "position-embedding-type", positions, err);
  if (norm == -2 || pos == -2)
    return -1;
  if (norm >= 0)
    emit(o, "--normalization", "normalization: %s", norms[norm]);
  if (pos >= 0)
    emit(o, "--position-embedding-type", "position_embedding_type: %s", positions[pos]);
  if (megatron_switch(m, "untie-embeddings-and-output-weights"))
    emit(o, "--untie-embeddings-and-output-weights", "untie_embeddings_and_output_weights: true");
  if (megatron_switch(m, "disable-bias-linear"))
    emit(o, "--disable-bias-linear", "add_bias_linear: false");
  double d = 0;
  int rc;
  if ((rc = megatron_double(m, "attention-dropout", &d, err)) < 0)
    return -1;
  if (rc == 1)
    emit(o, "--attention-dropout", "attention_dropout: %g", d);
  if ((rc = megatron_double(m, "hidden-dropout", &d, err)) < 0)
    return -1;
  if (rc == 1)
    emit(o, "--hidden-dropout", "hidden_dropout: %g", d);
  megatron_switch(m, "group-query-attention"); /* num-query-groups says it */
  if (megatron_switch(m, "multi-latent-attention"))
    emit(o, "--multi-latent-attention", "multi_latent_attention: true");
  if (megatron_switch(m, "moe-grouped-gemm"))
    emit(o, "--moe-grouped-gemm", "moe_grouped_gemm: true");
  if (megatron_switch(m, "moe-router-enable-expert-bias"))
    emit(o, "--moe-router-enable-expert-bias", "moe_router_enable_expert_bias: true");
  int score = megatron_choice(m, "moe-router-score-function", scores, err);
  int dispatcher = megatron_choice(m, "moe-token-dispatcher-type", dispatchers, err);
  if (score == -2 || dispatcher == -2)
    return -1;
  if (score >= 0)
    emit(o, "--moe-router-score-function", "moe_router_score_function: %s", scores[score]);
  if (dispatcher == 2)
    emit(o, "--moe-token-dispatcher-type", "moe_token_dispatcher_type: flex");
  else if (dispatcher == 1)
    fprintf(o, "  # --moe-token-dispatcher-type allgather is not modelled: tokens travel by "
               "all-to-all\n");
  if ((rc = megatron_double(m, "moe-aux-loss-coeff", &d, err)) < 0)
    return -1;
  if (rc == 1)
    emit(o, "--moe-aux-loss-coeff", "moe_aux_loss_coeff: %g", d);
  if ((rc = megatron_double(m, "moe-expert-capacity-factor", &d, err)) < 0)
    return -1;
  if (rc == 1)
    emit(o, "--moe-expert-capacity-factor", "moe_expert_capacity_factor: %g", d);
  int freq = megatron_find(m, "moe-layer-freq");
  if (freq >= 0) { /* an integer or Megatron's expression such as ([0]*3+[1]*58) */
    const char *v = m->value[freq] != NULL ? m->value[freq] : "";
    bool ok = v[0] != '\0' && strlen(v) < 200;
    for (const char *p = v; *p != '\0' && ok; p++)
      ok = strchr("0123456789[]()*+, ", *p) != NULL;
    if (!ok) {
      char shown[64];
      ts_text_copy(shown, sizeof shown, v);
      return ts_err_plain(err,
                          "import megatron: --moe-layer-freq: expected an integer or an "
                          "expression such as ([0]*3+[1]*58), found '%s'",
                          shown);
    }
    emit(o, "--moe-layer-freq", "moe_layer_freq: \"%s\"", v);
  }

  fprintf(o, "training:\n");
  emit(o, "--global-batch-size", "global_batch_size: %ld", gbs);
  emit(o, megatron_find(m, "micro-batch-size") >= 0 ? "--micro-batch-size" : "Megatron's default",
       "micro_batch_size: %ld", mbs);
  bool bf16 = megatron_switch(m, "bf16"), fp16 = megatron_switch(m, "fp16");
  if (bf16 && fp16) /* Megatron-LM's validate_args refuses them together too */
    return ts_err_plain(err,
                        "import megatron: --bf16 and --fp16: expected one of them, found both");
  emit(o,
       bf16   ? "--bf16"
       : fp16 ? "--fp16"
              : "neither --bf16 nor --fp16: fp32",
       "precision: %s",
       bf16   ? "bf16"
       : fp16 ? "fp16"
              : "fp32");
  int f8 = megatron_choice(m, "fp8-format", fp8, err);
  if (f8 == -2)
    return -1;
  if (f8 >= 0)
    emit(o, "--fp8-format", "fp8: %s", fp8[f8]);
  int recipe = megatron_choice(m, "fp8-recipe", ts_fp8_recipe_names, err); /* not mxfp8 */
  if (recipe == -2)
    return -1;
  if (recipe >= 0)
    emit(o, "--fp8-recipe", "fp8_recipe: %s", ts_fp8_recipe_names[recipe]);
  emit(o, "Megatron-LM's (AdamW)", "optimizer: adam");
  /* Megatron-Core's precision-aware optimizer: the master weights' and moments' dtypes (its
   * choices; fp8 moments are not in --main-params-dtype's) */
  if (megatron_switch(m, "use-precision-aware-optimizer")) {
    static const char *const main_dtypes[] = {"fp32", "fp16", NULL};
    static const char *const moment_dtypes[] = {"fp32", "fp16", "bf16", "fp8", NULL};
    int main_d = megatron_choice(m, "main-params-dtype", main_dtypes, err);
    int avg = megatron_choice(m, "exp-avg-dtype", moment_dtypes, err);
    int avg_sq = megatron_choice(m, "exp-avg-sq-dtype", moment_dtypes, err);
    if (main_d == -2 || avg == -2 || avg_sq == -2)
      return -1;
    if (main_d >= 0)
      emit(o, "--main-params-dtype", "master_weights: %s", main_dtypes[main_d]);
    if (avg >= 0)
      emit(o, "--exp-avg-dtype", "exp_avg_dtype: %s", moment_dtypes[avg]);
    if (avg_sq >= 0)
      emit(o, "--exp-avg-sq-dtype", "exp_avg_sq_dtype: %s", moment_dtypes[avg_sq]);
  }
  if (iters > 0)
    emit(o, "--train-iters x --global-batch-size x --seq-length", "train_tokens: %ld",
         iters * gbs * seq);

  fprintf(o, "parallelism:\n");
  long pp = 1, v = 0, per_chunk = 0;
  static const long_key layout[] = {
      {"tensor-model-parallel-size", "tensor", 1},
      {"pipeline-model-parallel-size", "pipeline", 1},
      {"context-parallel-size", "context", 1},
      {"expert-model-parallel-size", "expert", 1},
      {"expert-tensor-parallel-size", "expert_tensor", 1},
      {"decoder-first-pipeline-num-layers", "decoder_first_pipeline_num_layers", 1},
      {"decoder-last-pipeline-num-layers", "decoder_last_pipeline_num_layers", 1},
      {NULL, NULL, 0}};
  /* Megatron-LM's defaults where the line leaves them (also keeps the section a mapping) */
  if (megatron_find(m, "tensor-model-parallel-size") < 0)
    emit(o, "Megatron's default", "tensor: 1");
  if (megatron_find(m, "pipeline-model-parallel-size") < 0)
    emit(o, "Megatron's default", "pipeline: 1");
  if (emit_longs(o, m, layout, err) != 0 ||
      megatron_long(m, "pipeline-model-parallel-size", 1, &pp, err) < 0 ||
      megatron_long(m, "virtual-pipeline-model-parallel-size", 1, &v, err) < 0 ||
      megatron_long(m, "num-layers-per-virtual-pipeline-stage", 1, &per_chunk, err) < 0)
    return -1;
  if (v == 0 && per_chunk > 0) {
    if (layers % (pp * per_chunk) != 0)
      return ts_err_plain(err,
                          "import megatron: --num-layers-per-virtual-pipeline-stage %ld "
                          "does not split %ld layers over %ld stages",
                          per_chunk, layers, pp);
    v = layers / (pp * per_chunk);
  }
  if (v > 1)
    emit(o,
         per_chunk > 0 ? "--num-layers-per-virtual-pipeline-stage"
                       : "--virtual-pipeline-model-parallel-size",
         "virtual_stages: %ld", v);
  /* Megatron-LM's --no-overlap-p2p-communication (arguments.py: store_false into
   * overlap_p2p_comm, which only the interleaved schedule reads): on unless turned off */
  bool no_p2p_overlap = megatron_switch(m, "no-overlap-p2p-communication");
  if (v > 1 && !no_p2p_overlap)
    emit(o,
         "Megatron-LM's default for an interleaved schedule (--no-overlap-p2p-communication "
         "turns it off)",
         "overlap_p2p_comm: true");
  if (megatron_switch(m, "account-for-embedding-in-pipeline-split"))
    emit(o, "--account-for-embedding-in-pipeline-split",
         "account_for_embedding_in_pipeline_split: true");
  if (megatron_switch(m, "account-for-loss-in-pipeline-split"))
    emit(o, "--account-for-loss-in-pipeline-split", "account_for_loss_in_pipeline_split: true");
  int at_layout = megatron_find(m, "pipeline-model-parallel-layout");
  if (at_layout >= 0) { /* its own characters only: what the workload's parser checks */
    const char *text = m->value[at_layout] != NULL ? m->value[at_layout] : "";
    bool ok = text[0] != '\0' && strlen(text) < 4096;
    for (const char *c = text; *c != '\0' && ok; c++)
      ok = strchr("ELtm|()*,0123456789 ", *c) != NULL;
    if (!ok) {
      char shown[64];
      ts_text_copy(shown, sizeof shown, text);
      return ts_err_plain(err,
                          "import megatron: --pipeline-model-parallel-layout: expected a layout "
                          "such as \"Et*3|(tt|)*29|L\", found '%s'",
                          shown);
    }
    emit(o, "--pipeline-model-parallel-layout", "pipeline_model_parallel_layout: \"%s\"", text);
  }
  if (megatron_switch(m, "sequence-parallel"))
    emit(o, "--sequence-parallel", "sequence_parallel: true");
  if (megatron_switch(m, "use-distributed-optimizer"))
    emit(o, "--use-distributed-optimizer", "zero_stage: 1");
  int gran = megatron_choice(m, "recompute-granularity", granularity, err);
  if (gran == -2)
    return -1;
  if (gran >= 0)
    emit(o, "--recompute-granularity", "recompute: %s", granularity[gran]);
  else if (megatron_switch(m, "recompute-activations"))
    emit(o, "--recompute-activations", "recompute: selective");
  int mods = megatron_find(m, "recompute-modules");
  for (int k = -1; mods >= 0 && k < m->n_more[mods]; k++) { /* names; the workload checks them */
    const char *module = k < 0 ? m->value[mods] : m->more[mods][k];
    if (module == NULL || *module == '\0' ||
        strspn(module, "abcdefghijklmnopqrstuvwxyz_") != strlen(module)) {
      char shown[64];
      ts_text_copy(shown, sizeof shown, module != NULL ? module : "nothing");
      return ts_err_plain(err,
                          "import megatron: --recompute-modules: expected module names such as "
                          "core_attn, found '%s'",
                          shown);
    }
    fprintf(o, k < 0 ? "  recompute_modules: [%s" : ", %s", module);
    if (k == m->n_more[mods] - 1)
      fprintf(o, "]  # --recompute-modules\n");
  }
  megatron_find(m, "recompute-method"); /* uniform/block: every layer recomputed here */
  megatron_find(m, "recompute-num-layers");
  if (megatron_switch(m, "overlap-grad-reduce"))
    emit(o,
         "--overlap-grad-reduce: Megatron-Core's bucket, max(4e7, 1e6 x dp) fp32 parameters "
         "(160 MB up to dp 40)",
         "dp_bucket_size: 160MB");
  if (megatron_switch(m, "overlap-param-gather"))
    emit(o, "--overlap-param-gather", "overlap_param_gather: true");
  if (megatron_switch(m, "tp-comm-overlap"))
    emit(o, "--tp-comm-overlap", "tp_comm_overlap: true");
  if (megatron_switch(m, "grad-reduce-in-bf16"))
    emit(o, "--grad-reduce-in-bf16", "grad_reduce_in_bf16: true");
  /* what trainsim did not read: listed, so that nothing passes silently */
  char unread[1024] = "";
  for (int i = 0; i < m->n; i++)
    if (!m->is_read[i] && strlen(unread) + strlen(m->name[i]) + 4 < sizeof unread) {
      char clean[64];
      ts_text_copy(clean, sizeof clean, m->name[i]);
      snprintf(unread + strlen(unread), sizeof unread - strlen(unread), " --%s", clean);
    }
  if (unread[0] != '\0')
    fprintf(o, "# not read (no bearing on the iteration, or not modelled):%s\n", unread);
  if (m->valued_switch >= 0) {
    char shown[64];
    ts_text_copy(shown, sizeof shown, m->value[m->valued_switch]);
    return ts_err_plain(err,
                        "import megatron: --%s takes no value (Megatron-LM's switch: given "
                        "means on), found '%s'",
                        m->name[m->valued_switch], shown);
  }
  return 0;
}

/* `import megatron -- ARGS...`: the workload on stdout, whole, or an error. */
static int import_megatron(const import_args *a, int argc, char **argv) {
  ts_err err = {0};
  if (argc == 0) {
    fprintf(stderr, "trainsim: error: import megatron: expected Megatron-LM's arguments after "
                    "'--', found none\n");
    return TS_ARGS_EXIT_INPUT;
  }
  static megatron_args m;
  megatron_parse(argc, argv, &m);
  if (m.given > 512) {
    fprintf(stderr,
            "trainsim: error: import megatron: expected at most 512 flags after '--', found %d\n",
            m.given);
    return TS_ARGS_EXIT_INPUT;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&text, &len);
  if (o == NULL) {
    fprintf(stderr, "trainsim: error: import: out of memory\n");
    return TS_ARGS_EXIT_INPUT;
  }
  char name[128];
  workload_name(a->name != NULL ? a->name : "megatron", "", name, sizeof name);
  fprintf(o, "# A workload from a Megatron-LM launch line by `trainsim import megatron`: each\n"
             "# value with its flag; data parallelism is the job's (run's --gpus).\n");
  fprintf(o, "name: %s\n", name);
  int rc = write_megatron(&m, a, o, &err);
  fclose(o);
  if (rc == 0)
    rc = check_written("the launch line", text, len, &err);
  if (rc != 0) {
    free(text);
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  fwrite(text, 1, len, stdout);
  free(text);
  return 0;
}

int ts_import_main(int argc, char **argv) {
  ts_err err = {0};
  import_args a = {.seq = 4096, .global_batch = 1024, .micro_batch = 1};
  int own = 0; /* trainsim's arguments come before "--", Megatron-LM's after */
  while (own < argc && strcmp(argv[own], "--") != 0)
    own++;
  ts_args cli = {&ts_import_command, own, argv, 0, &a, false};
  const ts_flag *flag = NULL;
  const char *value = NULL, *source = NULL, *path = NULL;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &err)) != TS_ARGS_END;) {
    if (item < 0) {
      ts_args_report(&err, NULL);
      return TS_ARGS_EXIT_INPUT;
    }
    if (item == TS_ARGS_HELP) {
      ts_args_usage(stdout, &ts_import_command);
      return 0;
    }
    if (item != TS_ARGS_ARGUMENT)
      continue;
    if (source == NULL) {
      source = value;
    } else if (path == NULL) {
      path = value;
    } else {
      fprintf(stderr, "trainsim: error: import takes one CONFIG file, found a second one: '%s'\n",
              value);
      return TS_ARGS_EXIT_INPUT;
    }
  }
  if (source != NULL && strcmp(source, "megatron") == 0 && path == NULL)
    return import_megatron(&a, argc - own - (own < argc), argv + own + (own < argc));
  if (source == NULL || strcmp(source, "hf") != 0) {
    char shown[64];
    ts_text_copy(shown, sizeof shown, source != NULL ? source : "nothing");
    fprintf(stderr,
            "trainsim: error: import: expected 'hf CONFIG.json' or 'megatron -- ARGS...', found "
            "'%s'\n",
            shown);
    return TS_ARGS_EXIT_INPUT;
  }
  if (path == NULL) {
    fprintf(stderr, "trainsim: error: import hf: expected a config.json file, found nothing\n");
    return TS_ARGS_EXIT_INPUT;
  }
  if (a.global_batch % a.micro_batch != 0) {
    fprintf(stderr,
            "trainsim: error: --micro-batch-size (%ld) must divide --global-batch-size (%ld)\n",
            a.micro_batch, a.global_batch);
    return TS_ARGS_EXIT_INPUT;
  }
  config c = {.err = &err};
  if (ts_doc_load_file(path, &c.doc, &err) != 0) {
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  c.root = ts_doc_root(c.doc);
  const char *type = NULL, *dtype = NULL;
  int rc = 0;
  if (c.root == 0 || !ts_doc_is_map(c.doc, c.root)) {
    ts_loc loc = {path, 0, 0, NULL, NULL};
    rc = ts_err_at(&err, loc, "expected a Hugging Face config (a JSON object with model_type)");
  } else if (ts_doc_check_json(c.doc, &err) != 0 || ts_doc_check_unique_keys(c.doc, &err) != 0) {
    rc = -1;
  } else if (get_string(&c, "model_type", &type) != 0) {
    rc = -1;
  } else if (type == NULL) {
    rc = ts_doc_missing(c.doc, c.root, "config", "model_type", &err);
  }
  family f = DENSE;
  if (rc == 0) {
    int k = 0;
    while (k < N_KNOWN && strcmp(known[k].model_type, type) != 0)
      k++;
    if (k == N_KNOWN)
      rc = ts_err_at(&err, ts_doc_loc(c.doc, ts_doc_get(c.doc, c.root, "model_type")),
                     "key 'model_type': expected one of llama, mistral, mixtral, qwen2, qwen3, "
                     "qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3; found '%s'",
                     type);
    else
      f = known[k].family;
  }
  if (rc == 0 && (get_string(&c, "torch_dtype", &dtype) != 0 ||
                  (dtype == NULL && get_string(&c, "dtype", &dtype) != 0)))
    rc = -1;
  char *text = NULL;
  size_t len = 0;
  FILE *o = rc == 0 ? open_memstream(&text, &len) : NULL;
  if (rc == 0 && o == NULL)
    rc = ts_err_plain(&err, "import: out of memory");
  if (rc == 0) { /* written to memory, printed whole once every key has been read */
    char name[128];
    workload_name(a.name, path, name, sizeof name);
    fprintf(o, "# A workload from a Hugging Face config by `trainsim import hf` (model_type %s).\n",
            type);
    fprintf(o, "# The model from the config (the key each value came from); the training length\n"
               "# and batch from import's flags; the layout is one GPU's: set it with run's flags\n"
               "# (--gpus, --tp, --pp, --ep).\n");
    fprintf(o, "name: %s\n", name);
    rc = write_model(&c, type, f, a.seq, o);
  }
  if (rc == 0) {
    const char *precision = dtype != NULL && strcmp(dtype, "float16") == 0   ? "fp16"
                            : dtype != NULL && strcmp(dtype, "float32") == 0 ? "fp32"
                                                                             : "bf16";
    fprintf(o, "training:\n");
    emit(o, "--global-batch-size", "global_batch_size: %ld", a.global_batch);
    emit(o, "--micro-batch-size", "micro_batch_size: %ld", a.micro_batch);
    char from[96] = "torch_dtype absent: bf16 ASSUMED";
    if (dtype != NULL) { /* the config's text, cleaned: no newline may start a key */
      char clean[64];
      ts_text_copy(clean, sizeof clean, dtype);
      snprintf(from, sizeof from, "torch_dtype %s", clean);
    }
    emit(o, from, "precision: %s", precision);
    fprintf(o, "  optimizer: adam\n");
    fprintf(o, "parallelism:\n");
    fprintf(o, "  tensor: 1\n");
    fprintf(o, "  pipeline: 1\n");
    /* what trainsim did not read: listed, so that nothing passes silently */
    char unread[2048] = "";
    int key = 0, item = 0;
    for (int i = 0; ts_doc_map_item(c.doc, c.root, i, &key, &item) == 0; i++) {
      const char *name = ts_doc_scalar(c.doc, key);
      bool asked = name == NULL;
      for (int k = 0; k < c.n_asked && !asked; k++)
        asked = strcmp(c.asked[k], name) == 0;
      char clean[64];
      if (!asked) {
        ts_text_copy(clean, sizeof clean, name);
        if (strlen(unread) + strlen(clean) + 2 < sizeof unread)
          snprintf(unread + strlen(unread), sizeof unread - strlen(unread), " %s", clean);
      }
    }
    if (unread[0] != '\0')
      fprintf(o, "# not read (no bearing on the iteration, or not modelled):%s\n", unread);
  }
  if (o != NULL)
    fclose(o);
  ts_doc_free(c.doc);
  if (rc == 0)
    rc = check_written(path, text, len, &err);
  if (rc != 0) {
    free(text);
    ts_args_report(&err, NULL);
    return TS_ARGS_EXIT_INPUT;
  }
  fwrite(text, 1, len, stdout);
  free(text);
  return 0;
}
