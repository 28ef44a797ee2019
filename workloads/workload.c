/* workload: loading, overriding and validating workloads; see workload.h. */
#include "workload.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "text.h"

const char *const ts_precision_names[] = {"bf16", "fp16", "fp32", "fp64", NULL};
const char *const ts_schedule_names[] = {"gpipe",    "1f1b", "interleaved", "zb-h1",
                                         "dualpipe", "zb-v", NULL};
const char *const ts_recompute_names[] = {"none", "selective", "full", "op", NULL};
const char *const ts_recompute_module_names[] = {
    "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts", NULL};
const char *const ts_order_names[] = {"tp-dp-pp", "tp-pp-dp", "dp-tp-pp", "dp-pp-tp",
                                      "pp-tp-dp", "pp-dp-tp", NULL};
static const ts_axis order_axes[][TS_AXIS_COUNT] = {
    {TS_AXIS_TP, TS_AXIS_DP, TS_AXIS_PP}, {TS_AXIS_TP, TS_AXIS_PP, TS_AXIS_DP},
    {TS_AXIS_DP, TS_AXIS_TP, TS_AXIS_PP}, {TS_AXIS_DP, TS_AXIS_PP, TS_AXIS_TP},
    {TS_AXIS_PP, TS_AXIS_TP, TS_AXIS_DP}, {TS_AXIS_PP, TS_AXIS_DP, TS_AXIS_TP}};

static const char *const top_keys[] = {"name",     "description", "model",
                                       "training", "parallelism", "placement",
                                       "stack",    "checkpoint",  NULL};
static const char *const checkpoint_keys[] = {"interval", "async", NULL};
static const char *const stack_keys[] = {"framework",
                                         "attention",
                                         "fused_kernels",
                                         "rccl_version",
                                         "nccl_version",
                                         "deepspeed_version",
                                         "allocator",
                                         "unpad_input",
                                         "rms_norm",
                                         "rope",
                                         "compile",
                                         "gate_up",
                                         "fsdp_version",
                                         "fp8_linear",
                                         "contiguous_gradients",
                                         "cp_attention",
                                         "gelu",
                                         "score_divisions",
                                         "causal_mask",
                                         "eager_attention",
                                         "gradient_as_bucket_view",
                                         NULL};
static const char *const model_keys[] = {"num_layers",
                                         "hidden_size",
                                         "num_attention_heads",
                                         "num_query_groups",
                                         "seq_length",
                                         "vocab_size",
                                         "ffn_hidden_size",
                                         "swiglu",
                                         "normalization",
                                         "position_embedding_type",
                                         "untie_embeddings_and_output_weights",
                                         "add_bias_linear",
                                         "attention_dropout",
                                         "hidden_dropout",
                                         "num_experts",
                                         "moe_router_topk",
                                         "moe_ffn_hidden_size",
                                         "moe_shared_expert_intermediate_size",
                                         "moe_layer_freq",
                                         "moe_grouped_gemm",
                                         "moe_token_dispatcher_type",
                                         "moe_router_num_groups",
                                         "moe_deepep_num_sms",
                                         "moe_router_group_topk",
                                         "moe_expert_capacity_factor",
                                         "moe_pad_expert_input_to_capacity",
                                         "moe_load_imbalance",
                                         "moe_router_enable_expert_bias",
                                         "moe_router_score_function",
                                         "moe_aux_loss_coeff",
                                         "multi_latent_attention",
                                         "q_lora_rank",
                                         "kv_lora_rank",
                                         "qk_head_dim",
                                         "qk_pos_emb_head_dim",
                                         "v_head_dim",
                                         "kv_channels",
                                         "squared_relu",
                                         "rotary_percent",
                                         "mtp_num_layers",
                                         NULL};
/* Megatron-Core's token dispatchers trainsim models: alltoall (NCCL's all-to-all over the
 * expert-parallel group) and flex (DeepEP's kernels: a token crosses the network once per node
 * it reaches, then NVLink spreads its copies). */
static const char *const dispatcher_names[] = {"alltoall", "flex", NULL};
/* Megatron-Core's moe_router_score_function values (ts_moe_score's order). */
static const char *const score_names[] = {"softmax", "sigmoid", NULL};
static const char *const norm_names[] = {"LayerNorm", "RMSNorm", NULL};
static const char *const position_names[] = {"learned_absolute", "rope", NULL};
static const char *const training_keys[] = {"global_batch_size",   "micro_batch_size",
                                            "precision",           "optimizer",
                                            "train_tokens",        "gradient_accumulation_fusion",
                                            "bias_dropout_fusion", "framework",
                                            "adam_implementation", "exp_avg_dtype",
                                            "exp_avg_sq_dtype",    "fp8",
                                            "fp8_recipe",          "autocast",
                                            "master_weights",      NULL};
static const char *const parallel_keys[] = {"tensor",
                                            "pipeline",
                                            "data",
                                            "zero_stage",
                                            "schedule",
                                            "recompute",
                                            "recompute_modules",
                                            "flash_attention",
                                            "sequence_parallel",
                                            "scatter_gather_tensors_in_pipeline",
                                            "virtual_stages",
                                            "dp_bucket_size",
                                            "decoder_first_pipeline_num_layers",
                                            "decoder_last_pipeline_num_layers",
                                            "overlap_param_gather",
                                            "tp_comm_overlap",
                                            "overlap_p2p_comm",
                                            "grad_reduce_in_bf16",
                                            "stage3_prefetch_bucket_size",
                                            "stage3_param_persistence_threshold",
                                            "stage3_max_reuse_distance",
                                            "stage3_max_live_parameters",
                                            "expert",
                                            "expert_tensor",
                                            "context",
                                            "account_for_embedding_in_pipeline_split",
                                            "account_for_loss_in_pipeline_split",
                                            "pipeline_model_parallel_layout",
                                            "reshard_after_forward",
                                            "data_parallel_shard_degree",
                                            NULL};
static const char *const placement_keys[] = {"order", NULL};
static const char *const optimizers[] = {"adam", NULL};
const char *const ts_adam_implementation_names[] = {"fused", "foreach", NULL};
const char *const ts_fp8_names[] = {"none", "e4m3", "hybrid", NULL};
const char *const ts_fp8_recipe_names[] = {"delayed", "tensorwise", "blockwise", NULL};

/* Largest value for sizes and counts: keeps every product below 2^63 (checked again where
 * products are formed). */
#define BIG 100000000L

typedef struct reader {
  const ts_doc *doc;
  const char *path; /* outlives the workload, unlike the document */
  ts_err *err;
} reader;

static ts_loc here(const reader *r, int map, const char *key) {
  ts_loc loc = ts_doc_loc(r->doc, ts_doc_get(r->doc, map, key));
  loc.file = r->path;
  return loc;
}

/* Megatron-Core's pipeline_model_parallel_layout string (PipelineParallelLayerLayout
 * .parse_str_to_list): commas are cosmetic; "(X)*n" repeats X (no parenthesis inside), then
 * "c*n" a character; '|' separates the stages, in virtual-stage order; E is the embedding, L the
 * loss, t a transformer layer, m a multi-token-prediction layer. Into wl: each stage's
 * transformer layers, the MTP layers and their stage; 0, or -1 with an error at `at`
 * (validate_layer_layout's rules that need no other key too: E first and L last, once each,
 * no decoder layer after an MTP layer, all MTP layers in one stage). */
#define LAYOUT_MAX_CHARS 65536
static int parse_layout(const char *text, ts_loc at, ts_workload *wl, ts_err *err) {
  static char a[LAYOUT_MAX_CHARS + 1], b[LAYOUT_MAX_CHARS + 1];
  size_t n = 0;
  for (const char *c = text; *c != '\0'; c++)
    if (*c != ',' && n < LAYOUT_MAX_CHARS)
      a[n++] = *c;
  a[n] = '\0';
  /* the two unrolling passes, left to right as re.sub runs them */
  for (int pass = 0; pass < 2; pass++) {
    const char *src = pass == 0 ? a : b;
    char *dst = pass == 0 ? b : a;
    size_t o = 0;
    for (size_t i = 0; src[i] != '\0';) {
      size_t start = i, len = 1, end = i + 1;
      if (pass == 0 && src[i] == '(') { /* \(([^)]+)\)\*(\d+) */
        size_t close = i + 1;
        while (src[close] != '\0' && src[close] != ')')
          close++;
        start = i + 1;
        len = close - start;
        end = src[close] == ')' ? close + 1 : close;
        if (len == 0 || src[close] != ')')
          end = i; /* no match */
      } else if (pass == 1 && src[i + 1] == '*') { /* (.)\*(\d+) */
        end = i + 1;
      } else {
        end = i;
      }
      long times = 0;
      size_t digits = end;
      if (end > i && src[end] == '*')
        for (digits = end + 1; src[digits] >= '0' && src[digits] <= '9' && times <= 100000;
             digits++)
          times = 10 * times + (src[digits] - '0');
      if (end == i || src[end] != '*' || digits == end + 1) { /* no repetition here */
        if (o >= LAYOUT_MAX_CHARS)
          return ts_err_at(err, at, "expected a layout of at most %d layers and separators",
                           LAYOUT_MAX_CHARS);
        dst[o++] = src[i++];
        continue;
      }
      if ((double)times * (double)len + (double)o > LAYOUT_MAX_CHARS)
        return ts_err_at(err, at, "expected a layout of at most %d layers and separators",
                         LAYOUT_MAX_CHARS);
      for (long k = 0; k < times; k++, o += len)
        memcpy(dst + o, src + start, len);
      i = digits;
    }
    dst[o] = '\0';
  }
  long layers = 0, embeddings = 0, losses = 0, items = 0;
  wl->n_layout_stages = 0;
  wl->layout_mtp = 0;
  wl->layout_mtp_vstage = -1;
  for (const char *c = a;; c++) {
    if (*c == '|' || *c == '\0') {
      if (wl->n_layout_stages >= TS_LAYOUT_MAX_STAGES)
        return ts_err_at(err, at, "expected at most %d stages, found more", TS_LAYOUT_MAX_STAGES);
      wl->layout_layers[wl->n_layout_stages++] = (int16_t)layers;
      layers = 0;
      if (*c == '\0')
        break;
      continue;
    }
    if (*c == 'm') {
      if (wl->layout_mtp > 0 && wl->layout_mtp_vstage != wl->n_layout_stages)
        return ts_err_at(err, at,
                         "All of the MTP layers must be in the same one virtual pipeline stage: "
                         "found 'm' in stages %d and %d of '%s'",
                         wl->layout_mtp_vstage, wl->n_layout_stages, text);
      wl->layout_mtp_vstage = wl->n_layout_stages;
      if (++wl->layout_mtp > 64)
        return ts_err_at(err, at, "expected at most 64 MTP layers (m)");
    }
    if (*c == 't' && wl->layout_mtp > 0)
      return ts_err_at(err, at, "decoder layers must be placed before MTP layers: found '%s'",
                       text);
    if (*c != 'E' && *c != 'L' && *c != 't' && *c != 'm')
      return ts_err_at(err, at,
                       "invalid layer character '%c' (known layer characters: 'E', 'L', 't', "
                       "'m'), found in '%s'",
                       *c, text);
    if ((*c == 'E' && items > 0) || (*c != 'L' && losses > 0))
      return ts_err_at(err, at,
                       "the first layer must be embedding (E) and the last loss (L): "
                       "found '%s'",
                       text);
    embeddings += *c == 'E';
    losses += *c == 'L';
    layers += *c == 't';
    if (layers > 30000)
      return ts_err_at(err, at, "expected at most 30000 layers a stage");
    items++;
  }
  if (embeddings != 1 || losses != 1)
    return ts_err_at(err, at,
                     "the first layer must be embedding (E) and the last loss (L), each exactly "
                     "once: found '%s'",
                     text);
  return 0;
}

/* One of recompute_modules' names (len bytes at name) into wl; -1 with an error at `at`. */
static int recompute_module(const reader *r, ts_loc at, const char *name, size_t len,
                            ts_workload *wl) {
  int k = 0;
  while (ts_recompute_module_names[k] != NULL &&
         (strlen(ts_recompute_module_names[k]) != len ||
          strncmp(name, ts_recompute_module_names[k], len) != 0))
    k++;
  if (ts_recompute_module_names[k] == NULL)
    return ts_err_at(r->err, at,
                     "expected one of Megatron-Core's recompute modules core_attn, moe_act, "
                     "layernorm, mla_up_proj, mlp, moe, shared_experts, found '%.*s'",
                     (int)(len < 64 ? len : 64), name);
  if (k >= 4)
    return ts_err_at(r->err, at,
                     "recomputing the module '%s' is not modelled: trainsim recomputes "
                     "core_attn, moe_act, layernorm and mla_up_proj",
                     ts_recompute_module_names[k]);
  wl->recompute_modules |= 1u << k;
  return 0;
}

/* parallelism.recompute_modules: Megatron-Core's module names, a list or one string of them
 * separated by commas or spaces (--recompute-modules' form; what --set can give); default
 * core_attn (ts_workload_recomputes). */
static int read_recompute_modules(const reader *r, int p, ts_workload *wl) {
  wl->recompute_modules = 0;
  int node = ts_doc_get(r->doc, p, "recompute_modules");
  wl->locs.recompute_modules = wl->locs.tp;
  if (node == 0)
    return 0;
  ts_loc at = here(r, p, "recompute_modules");
  wl->locs.recompute_modules = at;
  wl->is_recompute_modules_set = true;
  const char *text = ts_doc_scalar(r->doc, node);
  if (text != NULL) {
    for (const char *c = text;;) {
      c += strspn(c, " ,[]");
      size_t len = strcspn(c, " ,[]");
      if (len == 0)
        return 0;
      if (recompute_module(r, at, c, len, wl) != 0)
        return -1;
      c += len;
    }
  }
  if (!ts_doc_is_seq(r->doc, node))
    return ts_err_at(r->err, at,
                     "expected a list of module names (recompute_modules: [layernorm, moe_act])");
  for (int i = 0; i < ts_doc_seq_len(r->doc, node); i++) {
    int item = ts_doc_seq_item(r->doc, node, i);
    ts_loc item_at = ts_doc_loc(r->doc, item);
    item_at.file = r->path;
    const char *name = ts_doc_scalar(r->doc, item);
    if (name == NULL)
      return ts_err_at(r->err, item_at, "expected a module name, found a list or mapping");
    if (recompute_module(r, item_at, name, strlen(name), wl) != 0)
      return -1;
  }
  return 0;
}

/* A long in [lo, hi]; `required` turns absence into an error. */
static int get_long(const reader *r, int map, const char *what, const char *key, bool required,
                    long lo, long *out, ts_loc *loc) {
  int rc = ts_doc_get_long(r->doc, map, key, lo, BIG, out, r->err);
  if (rc < 0)
    return -1;
  if (rc == 0 && required)
    return ts_doc_missing(r->doc, map, what, key, r->err);
  if (rc == 1)
    *loc = here(r, map, key);
  return 0;
}

static int section(const reader *r, int root, const char *key, const char *const *keys,
                   bool required, int *out) {
  int node = ts_doc_get(r->doc, root, key);
  if (node == 0) {
    *out = 0;
    return required ? ts_doc_missing(r->doc, root, "workload", key, r->err) : 0;
  }
  *out = node;
  return ts_doc_check_map(r->doc, node, key, keys, r->err);
}

/* Sets bit i of mask for each value of Megatron's list form of moe_layer_freq: a YAML sequence
 * of 0 and 1, or its Python expression such as "([0]*3+[1]*58)" (lists of 0 and 1, each
 * optionally repeated, joined by +). Returns the number of layers described, or -1 when the
 * text is not of that form or describes more than TS_MOE_MAX_LAYERS. */
static long moe_pattern_expr(const char *text, uint64_t *mask) {
  const char *c = text;
  long n = 0;
  bool paren = *c == '(';
  c += paren;
  for (;;) {
    long start = n;
    if (*c++ != '[')
      return -1;
    for (;;) {
      if ((*c != '0' && *c != '1') || n >= TS_MOE_MAX_LAYERS)
        return -1;
      if (*c == '1')
        mask[n / 64] |= (uint64_t)1 << (n % 64);
      n++;
      c++;
      while (*c == ' ')
        c++;
      if (*c == ']')
        break;
      if (*c++ != ',')
        return -1;
      while (*c == ' ')
        c++;
    }
    c++;
    if (*c == '*') { /* the list so far, [start, n), repeated */
      char *end = NULL;
      long times = strtol(c + 1, &end, 10), len = n - start;
      if (end == c + 1 || times < 1 || times > TS_MOE_MAX_LAYERS ||
          len * times > TS_MOE_MAX_LAYERS - start)
        return -1;
      for (long k = 1; k < times; k++)
        for (long i = start; i < n; i++) {
          long j = i + k * len;
          if (mask[i / 64] >> (i % 64) & 1)
            mask[j / 64] |= (uint64_t)1 << (j % 64);
        }
      n = start + len * times;
      c = end;
    }
    if (*c != '+')
      break;
    c++;
  }
  if (paren && *c++ != ')')
    return -1;
  return *c == '\0' ? n : -1;
}

/* moe_layer_freq: an integer N (every N-th layer from the first is MoE) or the list form. */
static int read_moe_layer_freq(const reader *r, int m, ts_model *md, ts_loc *loc) {
  int node = ts_doc_get(r->doc, m, "moe_layer_freq");
  md->moe_layer_freq = 1;
  if (node == 0)
    return 0;
  *loc = here(r, m, "moe_layer_freq");
  const char *text = ts_doc_scalar(r->doc, node);
  long n = -1;
  if (text != NULL && ts_parse_long(text, &md->moe_layer_freq) == 0) {
    if (md->moe_layer_freq >= 1 && md->moe_layer_freq <= BIG)
      return 0;
  } else if (text != NULL) {
    md->moe_layer_freq = 0;
    n = moe_pattern_expr(text, md->moe_layer_mask);
  } else if (ts_doc_is_seq(r->doc, node) && ts_doc_seq_len(r->doc, node) <= TS_MOE_MAX_LAYERS) {
    md->moe_layer_freq = 0;
    n = ts_doc_seq_len(r->doc, node);
    for (int i = 0; i < n; i++) {
      const char *v = ts_doc_scalar(r->doc, ts_doc_seq_item(r->doc, node, i));
      if (v == NULL || (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)) {
        n = -1;
        break;
      }
      if (v[0] == '1')
        md->moe_layer_mask[i / 64] |= (uint64_t)1 << (i % 64);
    }
  }
  if (n < 0)
    return ts_err_at(r->err, *loc,
                     "key 'moe_layer_freq': expected an integer >= 1 (every N-th layer is MoE) or "
                     "a list of 0 and 1 per layer, at most %d, such as [0, 1, 1] or "
                     "\"([0]*3+[1]*58)\", found '%s'",
                     TS_MOE_MAX_LAYERS, text != NULL ? text : "a mapping or a longer list");
  if (n != md->n_layers)
    return ts_err_at(r->err, *loc,
                     "key 'moe_layer_freq': the list describes %ld layers, but num_layers is %ld",
                     n, md->n_layers);
  return 0;
}

/* The mixture-of-experts keys; with num_experts absent (or 0) the model is dense and the other
 * moe_ keys are refused. */
static int read_moe(const reader *r, int m, ts_workload *wl) {
  ts_model *md = &wl->model;
  ts_workload_locs *l = &wl->locs;
  md->moe_topk = 2; /* Megatron-Core's default moe_router_topk */
  wl->moe_load_imbalance = 1;
  int dispatcher = 0, score = TS_MOE_SOFTMAX;
  if (ts_doc_get_long(r->doc, m, "num_experts", 0, BIG, &md->n_experts, r->err) < 0 ||
      get_long(r, m, "model", "moe_router_topk", false, 1, &md->moe_topk, &l->moe_topk) != 0 ||
      get_long(r, m, "model", "moe_ffn_hidden_size", false, 1, &md->moe_ffn_hidden,
               &l->moe_ffn_hidden) != 0 ||
      get_long(r, m, "model", "moe_shared_expert_intermediate_size", false, 1, &md->moe_shared_ffn,
               &l->moe_shared_ffn) != 0 ||
      read_moe_layer_freq(r, m, md, &l->moe_layer_freq) != 0 ||
      ts_doc_get_bool(r->doc, m, "moe_grouped_gemm", &wl->moe_grouped_gemm, r->err) < 0 ||
      ts_doc_get_enum(r->doc, m, "moe_token_dispatcher_type", dispatcher_names, &dispatcher,
                      r->err) < 0 ||
      ts_doc_get_double(r->doc, m, "moe_expert_capacity_factor", 0, 1e6, &wl->moe_capacity_factor,
                        r->err) < 0 ||
      ts_doc_get_bool(r->doc, m, "moe_pad_expert_input_to_capacity", &wl->moe_pad_to_capacity,
                      r->err) < 0 ||
      ts_doc_get_double(r->doc, m, "moe_load_imbalance", 1, 1e6, &wl->moe_load_imbalance, r->err) <
          0 ||
      ts_doc_get_bool(r->doc, m, "moe_router_enable_expert_bias", &md->moe_expert_bias, r->err) <
          0 ||
      ts_doc_get_enum(r->doc, m, "moe_router_score_function", score_names, &score, r->err) < 0 ||
      ts_doc_get_double(r->doc, m, "moe_aux_loss_coeff", 0, 1e6, &md->moe_aux_loss_coeff, r->err) <
          0)
    return -1;
  md->moe_score = (ts_moe_score)score;
  wl->moe_flex = dispatcher == 1;
  wl->moe_deepep_sms = 20; /* Megatron-Core's moe_deepep_num_sms */
  ts_loc sms_at = here(r, m, "moe_token_dispatcher_type");
  if (get_long(r, m, "model", "moe_deepep_num_sms", false, 1, &wl->moe_deepep_sms, &sms_at) != 0)
    return -1;
  l->moe_deepep_sms = sms_at;
  if (wl->moe_deepep_sms > 255 ||
      (ts_doc_get(r->doc, m, "moe_deepep_num_sms") != 0 && !wl->moe_flex))
    return ts_err_at(r->err, sms_at,
                     "moe_deepep_num_sms is DeepEP's (moe_token_dispatcher_type: flex), from 1 to "
                     "255 SMs; found %ld%s",
                     wl->moe_deepep_sms, wl->moe_flex ? "" : " without the flex dispatcher");
  ts_loc groups_at = here(r, m, "moe_router_num_groups");
  if (get_long(r, m, "model", "moe_router_num_groups", false, 1, &md->moe_router_groups,
               &groups_at) != 0 ||
      get_long(r, m, "model", "moe_router_group_topk", false, 1, &md->moe_router_group_topk,
               &groups_at) != 0)
    return -1;
  l->n_experts = here(r, m, "num_experts");
  l->moe_capacity_factor = here(r, m, "moe_expert_capacity_factor");
  if (ts_doc_get(r->doc, m, "moe_expert_capacity_factor") != 0 && wl->moe_capacity_factor == 0)
    return ts_err_at(r->err, l->moe_capacity_factor,
                     "moe_expert_capacity_factor 0 gives each expert a capacity of 0 tokens "
                     "(Megatron-Core: ceil(tokens x topk / num_experts x factor)): every token "
                     "would be dropped; expected a factor above 0, or no key for dropless routing");
  if (md->n_experts == 0) { /* the other moe_ keys describe what is not there */
    for (int i = 0; model_keys[i] != NULL; i++)
      if (strncmp(model_keys[i], "moe_", 4) == 0 && ts_doc_get(r->doc, m, model_keys[i]) != 0)
        return ts_err_at(r->err, here(r, m, model_keys[i]),
                         "key '%s' describes mixture-of-experts layers: set num_experts too",
                         model_keys[i]);
    return 0;
  }
  if (md->moe_ffn_hidden == 0) { /* Megatron: moe_ffn_hidden_size defaults to ffn_hidden_size */
    md->moe_ffn_hidden = md->ffn_hidden;
    l->moe_ffn_hidden = l->ffn_hidden;
  }
  if (md->moe_topk > md->n_experts)
    return ts_err_at(r->err, l->moe_topk,
                     "moe_router_topk (%ld) routes each token to more experts than num_experts "
                     "(%ld)",
                     md->moe_topk, md->n_experts);
  /* Group-limited routing (Megatron-Core's group_limited_topk; DeepSeek-V3's node-limited
   * routing): each token's experts within its group_topk best of num_groups expert groups. */
  long groups = md->moe_router_groups, group_topk = md->moe_router_group_topk;
  if ((groups > 0) != (group_topk > 0))
    return ts_err_at(r->err, groups_at,
                     "moe_router_num_groups and moe_router_group_topk go together (group-limited "
                     "routing): set both or neither");
  if (groups > 0 && (md->n_experts % groups != 0 || group_topk > groups))
    return ts_err_at(r->err, groups_at,
                     "moe_router_num_groups (%ld) must divide num_experts (%ld), and "
                     "moe_router_group_topk (%ld) be at most it",
                     groups, md->n_experts, group_topk);
  if (groups > 0 && md->moe_topk > group_topk * (md->n_experts / groups))
    return ts_err_at(r->err, groups_at,
                     "moe_router_topk (%ld) is more experts than moe_router_group_topk (%ld) "
                     "groups of %ld hold",
                     md->moe_topk, group_topk, md->n_experts / groups);
  if (wl->moe_pad_to_capacity && wl->moe_capacity_factor == 0)
    return ts_err_at(r->err, here(r, m, "moe_pad_expert_input_to_capacity"),
                     "moe_pad_expert_input_to_capacity pads each expert's tokens to its capacity: "
                     "set moe_expert_capacity_factor too");
  return 0;
}

/* Multi-head latent attention's keys (Megatron-Core's defaults: no query latent, a key-value
 * latent of 32, heads of 128 + 64 rotary, values of 128); refused without
 * multi_latent_attention. */
static int read_mla(const reader *r, int m, ts_model *md) {
  static const char *const mla_only[] = {"q_lora_rank",         "kv_lora_rank", "qk_head_dim",
                                         "qk_pos_emb_head_dim", "v_head_dim",   NULL};
  long *fields[] = {&md->q_lora_rank, &md->kv_lora_rank, &md->qk_head_dim, &md->qk_pos_emb_head_dim,
                    &md->v_head_dim};
  md->kv_lora_rank = 32;
  md->qk_head_dim = 128;
  md->qk_pos_emb_head_dim = 64;
  md->v_head_dim = 128;
  if (ts_doc_get_bool(r->doc, m, "multi_latent_attention", &md->mla, r->err) < 0)
    return -1;
  for (int i = 0; mla_only[i] != NULL; i++) {
    if (!md->mla && ts_doc_get(r->doc, m, mla_only[i]) != 0)
      return ts_err_at(r->err, here(r, m, mla_only[i]),
                       "key '%s' shapes multi-head latent attention: set "
                       "multi_latent_attention: true too",
                       mla_only[i]);
    ts_loc unused;
    if (get_long(r, m, "model", mla_only[i], false, 1, fields[i], &unused) != 0)
      return -1;
  }
  if (md->mla && md->bias)
    return ts_err_at(r->err, here(r, m, "multi_latent_attention"),
                     "multi_latent_attention with add_bias_linear is not modelled (DeepSeek's "
                     "layers have no biases): set add_bias_linear: false");
  if (md->mla) /* every head has its own keys and values, from the latent */
    md->n_query_groups = md->n_heads;
  return 0;
}

static int read_model(const reader *r, int root, ts_workload *wl) {
  int m = 0;
  if (section(r, root, "model", model_keys, true, &m) != 0)
    return -1;
  ts_model *md = &wl->model;
  ts_workload_locs *l = &wl->locs;
  int has_layers =
      ts_doc_get_long(r->doc, m, "num_layers", 1, TS_MAX_LAYERS, &md->n_layers, r->err);
  if (has_layers < 0 ||
      (has_layers == 0 && ts_doc_missing(r->doc, m, "model", "num_layers", r->err) != 0))
    return -1;
  l->n_layers = here(r, m, "num_layers");
  if (get_long(r, m, "model", "hidden_size", true, 1, &md->hidden, &l->hidden) != 0 ||
      get_long(r, m, "model", "num_attention_heads", true, 1, &md->n_heads, &l->n_heads) != 0 ||
      get_long(r, m, "model", "seq_length", true, 1, &md->seq, &l->seq) != 0 ||
      get_long(r, m, "model", "vocab_size", true, 1, &md->vocab, &l->vocab) != 0)
    return -1;
  md->n_query_groups = md->n_heads;
  l->n_query_groups = l->n_heads;
  md->bias = true;
  int norm = 0, position = 0;
  if (ts_doc_get_bool(r->doc, m, "swiglu", &md->swiglu, r->err) < 0 ||
      ts_doc_get_enum(r->doc, m, "normalization", norm_names, &norm, r->err) < 0 ||
      ts_doc_get_enum(r->doc, m, "position_embedding_type", position_names, &position, r->err) <
          0 ||
      ts_doc_get_bool(r->doc, m, "untie_embeddings_and_output_weights", &md->untied, r->err) < 0 ||
      ts_doc_get_bool(r->doc, m, "add_bias_linear", &md->bias, r->err) < 0)
    return -1;
  md->attention_dropout = md->hidden_dropout = 0.1; /* Megatron-LM's defaults */
  int rc_attention_dropout =
      ts_doc_get_double(r->doc, m, "attention_dropout", 0, 0.99, &md->attention_dropout, r->err);
  if (rc_attention_dropout < 0 ||
      ts_doc_get_double(r->doc, m, "hidden_dropout", 0, 0.99, &md->hidden_dropout, r->err) < 0)
    return -1;
  md->is_attention_dropout_set = rc_attention_dropout == 1;
  md->rms_norm = norm == 1;
  md->rope = position == 1;
  md->rotary_percent = 1.0;
  if (ts_doc_get_bool(r->doc, m, "squared_relu", &md->squared_relu, r->err) < 0 ||
      ts_doc_get_double(r->doc, m, "rotary_percent", 0.01, 1.0, &md->rotary_percent, r->err) < 0)
    return -1;
  if (md->squared_relu && md->swiglu)
    return ts_err_at(r->err, here(r, m, "squared_relu"),
                     "expected swiglu false with squared_relu (squared ReLU replaces GeLU in an "
                     "ungated MLP), found swiglu true");
  if (md->rotary_percent < 1.0 && !md->rope)
    return ts_err_at(r->err, here(r, m, "rotary_percent"),
                     "rotary_percent is the share of the heads the rotary embedding turns: it "
                     "needs position_embedding_type rope, found learned_absolute");
  /* Megatron-LM's default FFN width (arguments.py): 4h, or for SwiGLU 2/3 of it rounded down
   * to a multiple of 64, so that the gated MLP keeps about the same parameters. */
  md->ffn_hidden = md->swiglu ? (4 * md->hidden * 2 / 3) / 64 * 64 : 4 * md->hidden;
  if (md->ffn_hidden == 0) /* a toy width under 96: unrounded */
    md->ffn_hidden = 4 * md->hidden * 2 / 3 > 0 ? 4 * md->hidden * 2 / 3 : 1;
  l->ffn_hidden = l->hidden;
  if (get_long(r, m, "model", "num_query_groups", false, 1, &md->n_query_groups,
               &l->n_query_groups) != 0 ||
      get_long(r, m, "model", "ffn_hidden_size", false, 1, &md->ffn_hidden, &l->ffn_hidden) != 0)
    return -1;
  ts_loc kv_channels_at = here(r, m, "kv_channels");
  if (get_long(r, m, "model", "kv_channels", false, 1, &md->kv_channels, &kv_channels_at) != 0)
    return -1;
  l->mtp = l->n_layers;
  if (get_long(r, m, "model", "mtp_num_layers", false, 0, &md->mtp_layers, &l->mtp) != 0)
    return -1;
  if (md->mtp_layers > 64)
    return ts_err_at(r->err, l->mtp, "expected mtp_num_layers of at most 64, found %ld",
                     md->mtp_layers);
  if (md->n_heads % md->n_query_groups != 0)
    return ts_err_at(r->err, l->n_query_groups,
                     "num_query_groups (%ld) must divide num_attention_heads (%ld)",
                     md->n_query_groups, md->n_heads);
  if (read_mla(r, m, md) != 0)
    return -1;
  if (md->kv_channels > 0 && md->mla)
    return ts_err_at(r->err, kv_channels_at,
                     "kv_channels sets the heads' width of standard attention; multi-head latent "
                     "attention has its own (qk_head_dim, qk_pos_emb_head_dim, v_head_dim)");
  if (md->kv_channels == 0 && !md->mla && md->hidden % md->n_heads != 0)
    return ts_err_at(r->err, l->n_heads,
                     "num_attention_heads (%ld) must divide hidden_size (%ld), or set kv_channels "
                     "(each head's width)",
                     md->n_heads, md->hidden);
  return read_moe(r, m, wl);
}

static int read_training(const reader *r, int root, ts_workload *wl) {
  int t = 0;
  if (section(r, root, "training", training_keys, true, &t) != 0)
    return -1;
  ts_workload_locs *l = &wl->locs;
  wl->micro_batch = 1;
  if (get_long(r, t, "training", "global_batch_size", true, 1, &wl->global_batch,
               &l->global_batch) != 0 ||
      get_long(r, t, "training", "micro_batch_size", false, 1, &wl->micro_batch, &l->micro_batch) !=
          0)
    return -1;
  int prec = TS_PREC_BF16, opt = 0;
  /* Hugging Face's and PyTorch's spellings (torch_dtype) are the same precisions */
  static const char *const dtype_names[] = {"bfloat16", "float16", "float32", "float64", NULL};
  int rc = ts_doc_get_enum(r->doc, t, "precision", ts_precision_names, &prec, NULL);
  if (rc < 0)
    rc = ts_doc_get_enum(r->doc, t, "precision", dtype_names, &prec, NULL);
  if (rc < 0) /* neither: the message names trainsim's spellings */
    rc = ts_doc_get_enum(r->doc, t, "precision", ts_precision_names, &prec, r->err);
  if (rc < 0)
    return -1;
  wl->precision = (ts_precision)prec;
  l->precision = rc == 1 ? here(r, t, "precision") : here(r, t, "global_batch_size");
  if (ts_doc_get_enum(r->doc, t, "optimizer", optimizers, &opt, r->err) < 0 ||
      ts_doc_get_double(r->doc, t, "train_tokens", 1, 1e18, &wl->train_tokens, r->err) < 0)
    return -1;
  int fw = TS_FRAMEWORK_MEGATRON;
  int rc_fw = ts_doc_get_enum(r->doc, t, "framework", ts_framework_names, &fw, r->err);
  if (rc_fw < 0)
    return -1;
  wl->framework = (ts_framework)fw;
  l->framework = rc_fw == 1 ? here(r, t, "framework") : l->precision;
  int adam = TS_ADAM_FUSED;
  if (ts_doc_get_enum(r->doc, t, "adam_implementation", ts_adam_implementation_names, &adam,
                      r->err) < 0)
    return -1;
  wl->adam_implementation = (ts_adam_implementation)adam;
  /* Megatron-Core's --exp-avg-dtype and --exp-avg-sq-dtype (with its precision-aware
   * optimizer; DeepSeek-V3 kept both moments in bf16: DeepSeek-AI 2024, section 3.3.2). */
  static const char *const moment_names[] = {"fp32", "bf16", "fp16", "fp8", NULL};
  static const double moment_bytes[] = {4.0, 2.0, 2.0, 1.0};
  const char *moment_keys[] = {"exp_avg_dtype", "exp_avg_sq_dtype"};
  double *moments[] = {&wl->exp_avg_bytes, &wl->exp_avg_sq_bytes};
  l->exp_avg = l->precision;
  for (int k = 0; k < 2; k++) {
    int d = 0, rc_d = ts_doc_get_enum(r->doc, t, moment_keys[k], moment_names, &d, r->err);
    if (rc_d < 0)
      return -1;
    *moments[k] = moment_bytes[d];
    if (rc_d == 1)
      l->exp_avg = here(r, t, moment_keys[k]);
  }
  /* The optimizer's copy of the weights (workload.h): Megatron-Core's --main-params-dtype,
   * Apex's DistributedFusedAdam as NeMo configures it (megatron_base_model.py). */
  static const char *const master_names[] = {"fp32", "bf16", "fp16", "fp32_remainders",
                                             "none", NULL};
  static const double master_bytes[] = {4.0, 2.0, 2.0, 2.0, 0.0};
  int master = 0,
      rc_master = ts_doc_get_enum(r->doc, t, "master_weights", master_names, &master, r->err);
  if (rc_master < 0)
    return -1;
  wl->master_weight_bytes = master_bytes[master];
  wl->is_master_weights_none = master_bytes[master] == 0;
  wl->is_master_weights_set = rc_master == 1;
  l->master_weights = rc_master == 1 ? here(r, t, "master_weights") : l->precision;
  int fp8 = TS_FP8_NONE;
  int rc_fp8 = ts_doc_get_enum(r->doc, t, "fp8", ts_fp8_names, &fp8, r->err);
  if (rc_fp8 < 0)
    return -1;
  wl->fp8 = (ts_fp8)fp8;
  l->fp8 = rc_fp8 == 1 ? here(r, t, "fp8") : l->precision;
  if (wl->fp8 != TS_FP8_NONE && wl->precision != TS_PREC_BF16 && wl->precision != TS_PREC_FP16)
    return ts_err_at(r->err, l->fp8,
                     "fp8 runs the linear layers' GEMMs in FP8 beside a bf16 or fp16 model, but "
                     "precision is %s",
                     ts_precision_names[wl->precision]);
  int recipe = TS_FP8_RECIPE_DELAYED;
  if (ts_doc_get_enum(r->doc, t, "fp8_recipe", ts_fp8_recipe_names, &recipe, r->err) < 0)
    return -1;
  wl->fp8_recipe = (ts_fp8_recipe)recipe;
  /* as Megatron's --fp8-recipe, it has no effect without fp8 (so --set training.fp8=none
   * asks "what if bf16" of an FP8 workload) */
  int rc_amp = ts_doc_get_bool(r->doc, t, "autocast", &wl->is_autocast, r->err);
  if (rc_amp < 0)
    return -1;
  wl->is_autocast_set = rc_amp == 1;
  l->autocast = rc_amp == 1 ? here(r, t, "autocast") : l->precision;
  if (wl->is_autocast && wl->precision != TS_PREC_BF16 && wl->precision != TS_PREC_FP16)
    return ts_err_at(r->err, l->autocast,
                     "autocast casts fp32 weights to a 16-bit precision at each forward: it "
                     "needs precision bf16 or fp16, found %s",
                     ts_precision_names[wl->precision]);
  if (wl->is_autocast && wl->fp8 != TS_FP8_NONE)
    return ts_err_at(r->err, l->autocast,
                     "autocast with fp8 is not modelled (Transformer Engine keeps its own FP8 "
                     "weight copies): drop one of them");
  return 0;
}

static int read_parallel(const reader *r, int root, ts_workload *wl) {
  int p = 0;
  if (section(r, root, "parallelism", parallel_keys, false, &p) != 0)
    return -1;
  ts_workload_locs *l = &wl->locs;
  wl->tp = wl->pp = 1;
  wl->dp = 0;
  l->tp = l->pp = l->dp = here(r, root, "parallelism");
  if (get_long(r, p, "parallelism", "tensor", false, 1, &wl->tp, &l->tp) != 0 ||
      get_long(r, p, "parallelism", "pipeline", false, 1, &wl->pp, &l->pp) != 0 ||
      get_long(r, p, "parallelism", "data", false, 1, &wl->dp, &l->dp) != 0)
    return -1;
  wl->cp = 1;
  l->cp = l->tp;
  if (get_long(r, p, "parallelism", "context", false, 1, &wl->cp, &l->cp) != 0)
    return -1;
  wl->ep = 1;
  wl->etp = 0; /* resolved to tp */
  l->ep = l->etp = l->tp;
  if (get_long(r, p, "parallelism", "expert", false, 1, &wl->ep, &l->ep) != 0 ||
      get_long(r, p, "parallelism", "expert_tensor", false, 1, &wl->etp, &l->etp) != 0)
    return -1;
  long zero = 0;
  int rc = ts_doc_get_long(r->doc, p, "zero_stage", 0, 3, &zero, r->err);
  if (rc < 0)
    return -1;
  wl->zero_stage = (int)zero;
  l->zero_stage = rc == 1 ? here(r, p, "zero_stage") : l->tp;
  int sched = TS_SCHED_1F1B, rec = TS_RECOMPUTE_NONE;
  if (ts_doc_get_enum(r->doc, p, "schedule", ts_schedule_names, &sched, r->err) < 0 ||
      ts_doc_get_enum(r->doc, p, "recompute", ts_recompute_names, &rec, r->err) < 0)
    return -1;
  wl->schedule = (ts_schedule_kind)sched;
  wl->recompute = (ts_recompute)rec;
  if (read_recompute_modules(r, p, wl) != 0)
    return -1;
  l->schedule = ts_doc_get(r->doc, p, "schedule") != 0 ? here(r, p, "schedule") : l->tp;
  l->recompute = ts_doc_get(r->doc, p, "recompute") != 0 ? here(r, p, "recompute") : l->tp;
  wl->virtual_stages = 1;
  l->virtual_stages = l->tp;
  if (get_long(r, p, "parallelism", "virtual_stages", false, 1, &wl->virtual_stages,
               &l->virtual_stages) != 0)
    return -1;
  l->first_stage_layers = l->last_stage_layers = l->pp;
  if (get_long(r, p, "parallelism", "decoder_first_pipeline_num_layers", false, 1,
               &wl->first_stage_layers, &l->first_stage_layers) != 0 ||
      get_long(r, p, "parallelism", "decoder_last_pipeline_num_layers", false, 1,
               &wl->last_stage_layers, &l->last_stage_layers) != 0)
    return -1;
  if (ts_doc_get_bool(r->doc, p, "account_for_embedding_in_pipeline_split", &wl->account_embedding,
                      r->err) < 0 ||
      ts_doc_get_bool(r->doc, p, "account_for_loss_in_pipeline_split", &wl->account_loss, r->err) <
          0)
    return -1;
  l->account_split = here(r, p,
                          ts_doc_get(r->doc, p, "account_for_embedding_in_pipeline_split") != 0
                              ? "account_for_embedding_in_pipeline_split"
                              : "account_for_loss_in_pipeline_split");
  l->dp_shard = l->zero_stage;
  if (get_long(r, p, "parallelism", "data_parallel_shard_degree", false, 1, &wl->dp_shard,
               &l->dp_shard) != 0)
    return -1;
  int rc_reshard =
      ts_doc_get_bool(r->doc, p, "reshard_after_forward", &wl->reshard_after_forward, r->err);
  if (rc_reshard < 0)
    return -1;
  wl->is_reshard_set = rc_reshard == 1;
  l->reshard = rc_reshard == 1 ? here(r, p, "reshard_after_forward") : l->zero_stage;
  const char *layout = NULL;
  int rc_layout = ts_doc_get_string(r->doc, p, "pipeline_model_parallel_layout", &layout, r->err);
  if (rc_layout < 0)
    return -1;
  wl->n_layout_stages = 0;
  wl->layout_mtp_vstage = -1;
  if (rc_layout == 1) {
    l->layout = here(r, p, "pipeline_model_parallel_layout");
    if (parse_layout(layout, l->layout, wl, r->err) != 0)
      return -1;
  }
  int rc_bucket = ts_doc_get_unit(r->doc, p, "dp_bucket_size", TS_UNITS_BYTES, true,
                                  &wl->dp_bucket_bytes, r->err);
  if (rc_bucket < 0)
    return -1;
  l->dp_bucket = rc_bucket == 1 ? here(r, p, "dp_bucket_size") : l->tp;
  wl->flash_attention = true;
  int rc_fa = ts_doc_get_bool(r->doc, p, "flash_attention", &wl->flash_attention, r->err);
  if (rc_fa < 0)
    return -1;
  wl->attention = wl->flash_attention ? TS_ATTENTION_FLASH2 : TS_ATTENTION_UNFUSED;
  l->attention = rc_fa == 1 ? here(r, p, "flash_attention") : l->tp;
  int rc_sp = ts_doc_get_bool(r->doc, p, "sequence_parallel", &wl->sequence_parallel, r->err);
  if (rc_sp < 0)
    return -1;
  l->sequence_parallel = rc_sp == 1 ? here(r, p, "sequence_parallel") : l->tp;
  if (ts_doc_get_bool(r->doc, p, "scatter_gather_tensors_in_pipeline", &wl->pipeline_scatter_gather,
                      r->err) < 0)
    return -1;
  long prefetch = 50000000, persistence = 100000, reuse = 1000000000, live = 1000000000;
  if (ts_doc_get_long(r->doc, p, "stage3_prefetch_bucket_size", 0, BIG * 100, &prefetch, r->err) <
          0 ||
      ts_doc_get_long(r->doc, p, "stage3_param_persistence_threshold", 0, BIG * 100, &persistence,
                      r->err) < 0 ||
      ts_doc_get_long(r->doc, p, "stage3_max_reuse_distance", 0, BIG * 100, &reuse, r->err) < 0 ||
      ts_doc_get_long(r->doc, p, "stage3_max_live_parameters", 1, BIG * 100, &live, r->err) < 0)
    return -1; /* DeepSpeed's defaults above (deepspeed/runtime/zero/config.py) */
  wl->stage3_prefetch_elems = (double)prefetch;
  wl->stage3_persistence_elems = (double)persistence;
  wl->stage3_max_reuse_elems = (double)reuse;
  wl->stage3_max_live_elems = (double)live;
  int rc_tco = ts_doc_get_bool(r->doc, p, "tp_comm_overlap", &wl->tp_comm_overlap, r->err);
  if (rc_tco < 0)
    return -1;
  l->tp_comm_overlap = rc_tco == 1 ? here(r, p, "tp_comm_overlap") : l->tp;
  int rc_p2p = ts_doc_get_bool(r->doc, p, "overlap_p2p_comm", &wl->overlap_p2p_comm, r->err);
  if (rc_p2p < 0)
    return -1;
  l->overlap_p2p_comm = rc_p2p == 1 ? here(r, p, "overlap_p2p_comm") : l->tp;
  int rc_grb = ts_doc_get_bool(r->doc, p, "grad_reduce_in_bf16", &wl->grad_reduce_in_bf16, r->err);
  if (rc_grb < 0)
    return -1;
  l->grad_reduce_in_bf16 = rc_grb == 1 ? here(r, p, "grad_reduce_in_bf16") : l->tp;
  int rc_opg =
      ts_doc_get_bool(r->doc, p, "overlap_param_gather", &wl->overlap_param_gather, r->err);
  if (rc_opg < 0)
    return -1;
  l->overlap_param_gather = rc_opg == 1 ? here(r, p, "overlap_param_gather") : l->tp;
  return 0;
}

/* The older spelling sec_name.old of a stack key, refused beside the stack's own. */
static int once(const reader *r, int sec, const char *sec_name, const char *old, int stack,
                const char *key) {
  int node = sec != 0 ? ts_doc_get(r->doc, sec, old) : 0;
  if (node == 0 || stack == 0 || ts_doc_get(r->doc, stack, key) == 0)
    return 0;
  char where[32] = "given by --set";
  if (here(r, sec, old).line > 0)
    snprintf(where, sizeof where, "line %d", here(r, sec, old).line);
  return ts_err_at(r->err, here(r, stack, key),
                   "stack.%s and %s.%s (%s) both say it: keep stack.%s (%s.%s is its older "
                   "spelling)",
                   key, sec_name, old, where, key, sec_name, old);
}

/* The kernel fusions: the framework's defaults, or the stack's fused_kernels list (every
 * fusion that ran), or the older training keys switching one each. */
static int read_fusions(const reader *r, int t, int st, ts_workload *wl) {
  wl->fusions = ts_framework_default_fusions(wl->framework);
  wl->locs.fusions = wl->locs.framework;
  int list = st != 0 ? ts_doc_get(r->doc, st, "fused_kernels") : 0;
  if (list != 0) {
    wl->locs.fusions = here(r, st, "fused_kernels");
    char names[256] = "";
    for (int f = 0; ts_fusion_names[f] != NULL; f++) {
      size_t used = strlen(names);
      snprintf(names + used, sizeof names - used, "%s%s", f > 0 ? ", " : "", ts_fusion_names[f]);
    }
    if (!ts_doc_is_seq(r->doc, list))
      return ts_err_at(r->err, wl->locs.fusions,
                       "key 'fused_kernels': expected a list of fusions (of %s), found '%s'", names,
                       ts_doc_scalar(r->doc, list) != NULL ? ts_doc_scalar(r->doc, list) : "a map");
    wl->fusions = 0;
    for (int i = 0; i < ts_doc_seq_len(r->doc, list); i++) {
      int item = ts_doc_seq_item(r->doc, list, i);
      const char *name = ts_doc_scalar(r->doc, item);
      int f = 0;
      while (name != NULL && ts_fusion_names[f] != NULL && strcmp(ts_fusion_names[f], name) != 0)
        f++;
      if (name == NULL || ts_fusion_names[f] == NULL) {
        const char *near = name != NULL ? ts_did_you_mean(name, ts_fusion_names) : NULL;
        return ts_err_at(r->err, ts_doc_loc(r->doc, item),
                         "key 'fused_kernels' item %d: expected one of %s, found '%s'%s%s%s", i + 1,
                         names, name != NULL ? name : "a list or map",
                         near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
      }
      if (wl->fusions & (1u << f))
        return ts_err_at(r->err, wl->locs.fusions, "key 'fused_kernels': '%s' is listed twice",
                         name);
      wl->fusions |= 1u << f;
    }
  }
  static const struct {
    const char *key;
    ts_fusion fusion;
  } older[] = {{"gradient_accumulation_fusion", TS_FUSE_GRADIENT_ACCUMULATION},
               {"bias_dropout_fusion", TS_FUSE_BIAS_DROPOUT}};
  for (size_t i = 0; i < sizeof older / sizeof older[0]; i++) {
    if (once(r, t, "training", older[i].key, st, "fused_kernels") != 0)
      return -1;
    bool on = (wl->fusions >> older[i].fusion) & 1u;
    if (ts_doc_get_bool(r->doc, t, older[i].key, &on, r->err) < 0)
      return -1;
    wl->fusions = on ? wl->fusions | 1u << older[i].fusion : wl->fusions & ~(1u << older[i].fusion);
  }
  /* Under autocast each weight's own fp32 .grad accumulates the cast low-precision gradient:
   * there is no main_grad for the weight-gradient GEMM to accumulate into. */
  unsigned accum = 1u << TS_FUSE_GRADIENT_ACCUMULATION;
  if (wl->is_autocast && (wl->fusions & accum)) {
    bool named = list != 0 || ts_doc_get(r->doc, t, "gradient_accumulation_fusion") != 0;
    if (named)
      return ts_err_at(r->err, wl->locs.autocast,
                       "autocast keeps fp32 weights whose own gradients accumulate the cast "
                       "low-precision ones: the gradient_accumulation fusion (Megatron's main_grad "
                       "in the weight-gradient GEMM) cannot run with it; leave it out");
    wl->fusions &= ~accum;
  }
  /* flash-attn's kernels replace plain PyTorch's; a framework of its own runs its own. */
  static const struct {
    ts_fusion fusion;
    const char *what;
  } flash_attn[] = {
      {TS_FUSE_CROSS_ENTROPY, "flash-attn's fused loss, in place of F.cross_entropy"},
      {TS_FUSE_DROPOUT_ADD_LAYER_NORM,
       "flash-attn's fused_dropout_add_ln, in place of dropout, the residual add and LayerNorm"},
      {TS_FUSE_DENSE_GELU_DENSE, "flash-attn's fused_dense_gelu_dense, in place of F.gelu"}};
  for (size_t i = 0; i < sizeof flash_attn / sizeof flash_attn[0]; i++)
    if (ts_workload_fuses(wl, flash_attn[i].fusion) && !ts_framework_is_pytorch(wl->framework))
      return ts_err_at(r->err, wl->locs.fusions,
                       "key 'fused_kernels': %s (%s) runs in a plain PyTorch model and needs "
                       "framework pytorch, found '%s', whose own kernels are priced instead",
                       ts_fusion_names[flash_attn[i].fusion], flash_attn[i].what,
                       ts_framework_names[wl->framework]);
  const ts_model *m = &wl->model;
  if (ts_workload_fuses(wl, TS_FUSE_DROPOUT_ADD_LAYER_NORM) && m->rms_norm)
    return ts_err_at(r->err, wl->locs.fusions,
                     "key 'fused_kernels': dropout_add_layer_norm is flash-attn's LayerNorm "
                     "kernel (as its 2022 GPT training ran it), found normalization RMSNorm");
  if (ts_workload_fuses(wl, TS_FUSE_DENSE_GELU_DENSE) &&
      (m->swiglu || m->squared_relu || m->n_experts > 0))
    return ts_err_at(r->err, wl->locs.fusions,
                     "key 'fused_kernels': dense_gelu_dense fuses GeLU into a dense MLP's GEMMs, "
                     "found %s",
                     m->n_experts > 0 ? "experts"
                     : m->swiglu      ? "a SwiGLU MLP"
                                      : "a squared-ReLU MLP");
  return 0;
}

/* A collective library's release (stack.h): 0 when the key is absent. */
static int read_version(const reader *r, int st, const char *key, long *out, ts_loc *loc) {
  const char *text = NULL;
  if (ts_doc_get_string(r->doc, st, key, &text, r->err) < 0)
    return -1;
  if (text == NULL)
    return 0;
  *loc = here(r, st, key);
  *out = ts_stack_parse_version(text);
  if (*out < 0)
    return ts_err_at(r->err, *loc, "key '%s': expected a release such as %s, found '%s'", key,
                     key[0] == 'r'   ? "2.17.1 (RCCL of ROCm 5.7)"
                     : key[0] == 'd' ? "0.3.16"
                                     : "2.30.7",
                     text);
  return 0;
}

/* The stack section (stack.h): framework, attention implementation, fused kernels. Their
 * older spellings (training.framework, parallelism.flash_attention and the training fusion
 * switches) still work, but not beside the stack's own key. */
static int read_stack(const reader *r, int root, ts_workload *wl) {
  int st = 0, t = ts_doc_get(r->doc, root, "training"), p = ts_doc_get(r->doc, root, "parallelism");
  if (section(r, root, "stack", stack_keys, false, &st) != 0 ||
      once(r, t, "training", "framework", st, "framework") != 0 ||
      once(r, p, "parallelism", "flash_attention", st, "attention") != 0)
    return -1;
  /* Without an attention key, plain PyTorch calls SDPA; the Megatron family its flash kernel. */
  bool attention_given = ts_doc_get(r->doc, p, "flash_attention") != 0 ||
                         (st != 0 && ts_doc_get(r->doc, st, "attention") != 0);
  if (st != 0) {
    int fw = (int)wl->framework, attn = (int)wl->attention;
    int rc_fw = ts_doc_get_enum(r->doc, st, "framework", ts_framework_names, &fw, r->err);
    int rc_attn = rc_fw < 0
                      ? -1
                      : ts_doc_get_enum(r->doc, st, "attention", ts_attention_names, &attn, r->err);
    if (rc_attn < 0)
      return -1;
    wl->framework = (ts_framework)fw;
    wl->attention = (ts_attention)attn;
    if (rc_fw == 1)
      wl->locs.framework = here(r, st, "framework");
    if (rc_attn == 1)
      wl->locs.attention = here(r, st, "attention");
    int allocator = TS_ALLOCATOR_CACHING;
    if (ts_doc_get_enum(r->doc, st, "allocator", ts_allocator_names, &allocator, r->err) < 0)
      return -1;
    wl->allocator = (ts_allocator)allocator;
    if (ts_doc_get_bool(r->doc, st, "unpad_input", &wl->is_unpad_input, r->err) < 0)
      return -1;
    wl->locs.unpad_input = here(r, st, "unpad_input");
    if (ts_doc_get_bool(r->doc, st, "gradient_as_bucket_view", &wl->is_gradient_as_bucket_view,
                        r->err) < 0)
      return -1;
    wl->locs.gradient_as_bucket_view = here(r, st, "gradient_as_bucket_view");
    int norm = TS_RMS_NORM_FUNCTIONAL, rope = TS_ROPE_ROTATE_HALF;
    int rc_norm = ts_doc_get_enum(r->doc, st, "rms_norm", ts_rms_norm_names, &norm, r->err);
    int rc_rope =
        rc_norm < 0 ? -1 : ts_doc_get_enum(r->doc, st, "rope", ts_rope_names, &rope, r->err);
    if (rc_rope < 0)
      return -1;
    wl->rms_norm_impl = (ts_rms_norm_impl)norm;
    wl->rope_impl = (ts_rope_impl)rope;
    wl->locs.rms_norm = here(r, st, "rms_norm");
    wl->locs.rope = here(r, st, "rope");
    int gelu = TS_GELU_FUNCTIONAL;
    if (ts_doc_get_enum(r->doc, st, "gelu", ts_gelu_names, &gelu, r->err) < 0 ||
        ts_doc_get_long(r->doc, st, "score_divisions", 0, 2, &wl->score_divisions, r->err) < 0)
      return -1;
    wl->gelu_impl = (ts_gelu_impl)gelu;
    wl->locs.gelu = here(r, st, "gelu");
    wl->locs.score_divisions = here(r, st, "score_divisions");
    int causal_mask = TS_CAUSAL_MASK_MASKED_FILL;
    if (ts_doc_get_enum(r->doc, st, "causal_mask", ts_causal_mask_names, &causal_mask, r->err) < 0)
      return -1;
    wl->causal_mask = (ts_causal_mask)causal_mask;
    wl->locs.causal_mask = here(r, st, "causal_mask");
    int eager_attention = TS_EAGER_ATTENTION_MATMUL;
    if (ts_doc_get_enum(r->doc, st, "eager_attention", ts_eager_attention_names, &eager_attention,
                        r->err) < 0)
      return -1;
    wl->eager_attention = (ts_eager_attention)eager_attention;
    wl->locs.eager_attention = here(r, st, "eager_attention");
    if (ts_doc_get_bool(r->doc, st, "compile", &wl->is_compiled, r->err) < 0)
      return -1;
    wl->locs.compile = here(r, st, "compile");
    int gate_up = TS_GATE_UP_FUSED;
    if (ts_doc_get_enum(r->doc, st, "gate_up", ts_gate_up_names, &gate_up, r->err) < 0)
      return -1;
    wl->gate_up = (ts_gate_up)gate_up;
    wl->locs.gate_up = here(r, st, "gate_up");
    int fp8_linear = TS_FP8_LINEAR_TE;
    if (ts_doc_get_enum(r->doc, st, "fp8_linear", ts_fp8_linear_names, &fp8_linear, r->err) < 0)
      return -1;
    wl->fp8_linear = (ts_fp8_linear)fp8_linear;
    wl->locs.fp8_linear = here(r, st, "fp8_linear");
    int cp_attention = TS_CP_ATTENTION_TE;
    int rc_cp_attention =
        ts_doc_get_enum(r->doc, st, "cp_attention", ts_cp_attention_names, &cp_attention, r->err);
    if (rc_cp_attention < 0)
      return -1;
    wl->cp_attention = (ts_cp_attention)cp_attention;
    wl->is_cp_attention_set = rc_cp_attention == 1;
    wl->locs.cp_attention = here(r, st, "cp_attention");
    if (ts_doc_get_long(r->doc, st, "fsdp_version", 1, 2, &wl->fsdp_version, r->err) < 0)
      return -1;
    wl->locs.fsdp_version = here(r, st, "fsdp_version");
    int rc_contiguous =
        ts_doc_get_bool(r->doc, st, "contiguous_gradients", &wl->contiguous_gradients, r->err);
    if (rc_contiguous < 0)
      return -1;
    wl->is_contiguous_gradients_set = rc_contiguous == 1;
    wl->locs.contiguous_gradients = here(r, st, "contiguous_gradients");
    if (read_version(r, st, "rccl_version", &wl->rccl_version, &wl->locs.rccl_version) != 0 ||
        read_version(r, st, "nccl_version", &wl->nccl_version, &wl->locs.nccl_version) != 0 ||
        read_version(r, st, "deepspeed_version", &wl->deepspeed_version,
                     &wl->locs.deepspeed_version) != 0)
      return -1;
  }
  if (!attention_given)
    wl->attention = wl->framework == TS_FRAMEWORK_PYTORCH ? TS_ATTENTION_SDPA : TS_ATTENTION_FLASH2;
  wl->flash_attention = wl->attention != TS_ATTENTION_UNFUSED;
  if (wl->is_gradient_as_bucket_view && wl->framework != TS_FRAMEWORK_PYTORCH)
    return ts_err_at(r->err, wl->locs.gradient_as_bucket_view,
                     "key 'gradient_as_bucket_view': PyTorch DistributedDataParallel's option "
                     "(gradients as views of its all-reduce buckets) needs framework pytorch, "
                     "found '%s'",
                     ts_framework_names[wl->framework]);
  if (wl->is_unpad_input &&
      (wl->framework != TS_FRAMEWORK_PYTORCH || wl->attention != TS_ATTENTION_FLASH2))
    return ts_err_at(r->err, wl->locs.unpad_input,
                     "key 'unpad_input': flash-attn's unpad_input and pad_input wrap "
                     "FlashAttention-2's variable-length kernel in a plain PyTorch model: it "
                     "needs framework pytorch and attention flash2, found framework '%s' and "
                     "attention '%s'",
                     ts_framework_names[wl->framework], ts_attention_names[wl->attention]);
  const ts_model *m = &wl->model;
  if ((wl->rms_norm_impl != TS_RMS_NORM_FUNCTIONAL &&
       (!ts_framework_is_pytorch(wl->framework) || !m->rms_norm)))
    return ts_err_at(r->err, wl->locs.rms_norm,
                     "key 'rms_norm': eager_fp32 is a plain PyTorch model's RMSNorm written as "
                     "eager operations: it needs framework pytorch and normalization RMSNorm, "
                     "found framework '%s' and normalization %s",
                     ts_framework_names[wl->framework], m->rms_norm ? "RMSNorm" : "LayerNorm");
  if (wl->rope_impl != TS_ROPE_ROTATE_HALF && (!ts_framework_is_pytorch(wl->framework) || !m->rope))
    return ts_err_at(r->err, wl->locs.rope,
                     "key 'rope': complex is a plain PyTorch model's eager rotary embedding: it "
                     "needs framework pytorch and position_embedding_type rope, found framework "
                     "'%s' and %s position embeddings",
                     ts_framework_names[wl->framework], m->rope ? "rope" : "non-rotary");
  if (wl->gelu_impl != TS_GELU_FUNCTIONAL &&
      (!ts_framework_is_pytorch(wl->framework) || m->swiglu || m->squared_relu))
    return ts_err_at(r->err, wl->locs.gelu,
                     "key 'gelu': eager_tanh is Hugging Face's gelu_new written as eager "
                     "operations in a plain PyTorch GeLU MLP: it needs framework pytorch and a "
                     "GeLU activation, found framework '%s' and %s",
                     ts_framework_names[wl->framework],
                     m->swiglu         ? "swiglu"
                     : m->squared_relu ? "squared_relu"
                                       : "GeLU");
  if (wl->score_divisions > 0 && (!ts_framework_is_pytorch(wl->framework) ||
                                  wl->attention != TS_ATTENTION_UNFUSED || wl->is_compiled))
    return ts_err_at(r->err, wl->locs.score_divisions,
                     "key 'score_divisions': eager divisions of the attention scores need "
                     "framework pytorch, attention unfused and no compile, found framework '%s', "
                     "attention '%s'%s",
                     ts_framework_names[wl->framework], ts_attention_names[wl->attention],
                     wl->is_compiled ? " and compile" : "");
  if (read_fusions(r, t, st, wl) != 0)
    return -1;
  if (wl->causal_mask == TS_CAUSAL_MASK_WHERE &&
      (!ts_framework_is_pytorch(wl->framework) || wl->attention != TS_ATTENTION_UNFUSED ||
       wl->is_compiled || ts_workload_fuses(wl, TS_FUSE_MASKED_SOFTMAX)))
    return ts_err_at(
        r->err, wl->locs.causal_mask,
        "key 'causal_mask': where is an eager torch.where over the unfused "
        "attention's scores: it needs framework pytorch, attention unfused, no "
        "compile and no masked_softmax fusion, found framework '%s', attention '%s'%s%s",
        ts_framework_names[wl->framework], ts_attention_names[wl->attention],
        wl->is_compiled ? ", compile" : "",
        ts_workload_fuses(wl, TS_FUSE_MASKED_SOFTMAX) ? ", masked_softmax fused" : "");
  if (wl->eager_attention != TS_EAGER_ATTENTION_MATMUL && !ts_workload_eager_heads(wl))
    return ts_err_at(r->err, wl->locs.eager_attention,
                     "key 'eager_attention': baddbmm describes a plain PyTorch GPT's unfused "
                     "attention: it needs framework pytorch, attention unfused, no compile and "
                     "learned positions, found framework '%s', attention '%s'%s%s",
                     ts_framework_names[wl->framework], ts_attention_names[wl->attention],
                     wl->is_compiled ? ", compile" : "", m->rope || m->mla ? ", rotary" : "");
  if (wl->gelu_impl == TS_GELU_EAGER_TANH && ts_workload_fuses(wl, TS_FUSE_DENSE_GELU_DENSE))
    return ts_err_at(r->err, wl->locs.gelu,
                     "key 'gelu': eager_tanh is the eager gelu_new, but fused_kernels runs "
                     "dense_gelu_dense, GeLU in the GEMMs' epilogues, in its place: drop one");
  if (wl->rope_impl == TS_ROPE_COMPLEX && ts_workload_fuses(wl, TS_FUSE_ROPE))
    return ts_err_at(r->err, wl->locs.rope,
                     "key 'rope': complex is the eager rotary embedding, but fused_kernels runs "
                     "the fused rope kernel in its place: drop one");
  if (wl->gate_up == TS_GATE_UP_SEPARATE &&
      (!ts_framework_is_pytorch(wl->framework) || !m->swiglu || m->n_experts > 0))
    return ts_err_at(r->err, wl->locs.gate_up,
                     "key 'gate_up': separate is a plain PyTorch SwiGLU MLP's two linears: it "
                     "needs framework pytorch, swiglu and no experts, found framework '%s'%s%s",
                     ts_framework_names[wl->framework], m->swiglu ? "" : ", no swiglu",
                     m->n_experts > 0 ? ", experts" : "");
  if (wl->is_compiled && !ts_framework_is_pytorch(wl->framework))
    return ts_err_at(r->err, wl->locs.compile,
                     "key 'compile': torch.compile of a plain PyTorch model's blocks needs "
                     "framework pytorch, found framework '%s' (whose fused kernels "
                     "fused_kernels lists)",
                     ts_framework_names[wl->framework]);
  if (wl->is_compiled && wl->is_unpad_input)
    return ts_err_at(r->err, wl->locs.compile,
                     "key 'compile': a compiled block with unpad_input is not modelled (its "
                     "host synchronisations break the graph)");
  /* Inductor fuses the rotary embedding and SwiGLU (workload.h, is_compiled) */
  if (wl->is_compiled)
    wl->fusions |= 1u << TS_FUSE_ROPE | 1u << TS_FUSE_SWIGLU;
  return 0;
}

static int read_placement(const reader *r, int root, ts_workload *wl) {
  int pl = 0;
  if (section(r, root, "placement", placement_keys, false, &pl) != 0)
    return -1;
  int order = 0;
  if (ts_doc_get_enum(r->doc, pl, "order", ts_order_names, &order, r->err) < 0)
    return -1;
  memcpy(wl->order, order_axes[order], sizeof wl->order);
  return 0;
}

/* checkpoint: how often (iterations, Megatron-LM's --save-interval; absent: Daly's optimum)
 * and whether the write runs behind training (analysis/reliability.h). */
static int read_checkpoint(const reader *r, int root, ts_workload *wl) {
  int c = 0;
  if (section(r, root, "checkpoint", checkpoint_keys, false, &c) != 0 ||
      ts_doc_get_long(r->doc, c, "interval", 1, BIG, &wl->checkpoint_interval, r->err) < 0 ||
      ts_doc_get_bool(r->doc, c, "async", &wl->is_checkpoint_async, r->err) < 0)
    return -1;
  wl->locs.checkpoint_async = here(r, c, "async");
  return 0;
}

/* Reads a parsed document; `path` names it in messages and must outlive the workload. */
static int load_doc(const ts_doc *doc, const char *path, ts_workload *out, ts_err *err) {
  reader r = {doc, path, err};
  ts_workload wl;
  memset(&wl, 0, sizeof wl);
  int root = ts_doc_root(doc);
  if (root == 0) {
    ts_loc loc = {path, 0, 0, NULL, NULL};
    return ts_err_at(err, loc,
                     "empty workload file: expected a mapping with keys 'model', "
                     "'training' and optionally 'parallelism', 'placement'");
  }
  const char *name = NULL;
  if (ts_doc_check_map(doc, root, "workload", top_keys, err) != 0 ||
      ts_doc_get_string(doc, root, "name", &name, err) < 0 || read_model(&r, root, &wl) != 0 ||
      read_training(&r, root, &wl) != 0 || read_parallel(&r, root, &wl) != 0 ||
      read_stack(&r, root, &wl) != 0 || read_placement(&r, root, &wl) != 0 ||
      read_checkpoint(&r, root, &wl) != 0)
    return -1;
  ts_text_copy(wl.name, sizeof wl.name, name ? name : path);
  wl.locs.gpus = wl.locs.dp;
  *out = wl;
  return 0;
}

int ts_workload_load_file(const char *path, ts_workload *out, ts_err *err) {
  ts_doc *doc = NULL;
  if (ts_doc_load_file(path, &doc, err) != 0)
    return -1;
  int rc =
      ts_doc_apply_overrides(doc, TS_DOC_WORKLOAD, err) != 0 ? -1 : load_doc(doc, path, out, err);
  ts_doc_free(doc);
  return rc;
}

int ts_workload_parse(const char *name, const char *text, size_t len, ts_workload *out,
                      ts_err *err) {
  ts_doc *doc = NULL;
  if (ts_doc_parse(name, text, len, &doc, err) != 0)
    return -1;
  int rc =
      ts_doc_apply_overrides(doc, TS_DOC_WORKLOAD, err) != 0 ? -1 : load_doc(doc, name, out, err);
  ts_doc_free(doc);
  return rc;
}

static void apply_overrides(ts_workload *wl, const ts_overrides *ov) {
  ts_workload_locs *l = &wl->locs;
#define OVERRIDE(flag_set, field, value, locfield, flagname)                                       \
  if (ov->flag_set) {                                                                              \
    wl->field = ov->value;                                                                         \
    l->locfield = (ts_loc){NULL, 0, 0, flagname, NULL};                                            \
  }
  OVERRIDE(is_tp_set, tp, tp, tp, "--tp")
  OVERRIDE(is_pp_set, pp, pp, pp, "--pp")
  OVERRIDE(is_dp_set, dp, dp, dp, "--dp")
  OVERRIDE(is_cp_set, cp, cp, cp, "--cp")
  OVERRIDE(is_ep_set, ep, ep, ep, "--ep")
  OVERRIDE(is_etp_set, etp, etp, etp, "--etp")
  OVERRIDE(is_micro_batch_set, micro_batch, micro_batch, micro_batch, "--micro-batch-size")
  OVERRIDE(is_global_batch_set, global_batch, global_batch, global_batch, "--global-batch-size")
  OVERRIDE(is_zero_stage_set, zero_stage, zero_stage, zero_stage,
           ov->is_fsdp ? "--fsdp" : "--zero-stage")
  wl->is_fsdp = ov->is_fsdp || ts_framework_is_pytorch(wl->framework);
  OVERRIDE(is_schedule_set, schedule, schedule, schedule, "--schedule")
  OVERRIDE(is_virtual_stages_set, virtual_stages, virtual_stages, virtual_stages,
           "--virtual-stages")
  OVERRIDE(is_dp_bucket_set, dp_bucket_bytes, dp_bucket_bytes, dp_bucket, "--dp-bucket-size")
  OVERRIDE(is_first_stage_layers_set, first_stage_layers, first_stage_layers, first_stage_layers,
           "--first-stage-layers")
  OVERRIDE(is_last_stage_layers_set, last_stage_layers, last_stage_layers, last_stage_layers,
           "--last-stage-layers")
  OVERRIDE(is_recompute_set, recompute, recompute, recompute, "--recompute")
#undef OVERRIDE
  if (ov->is_gpus_set)
    l->gpus = (ts_loc){NULL, 0, 0, "--gpus", NULL};
  if (ov->is_scatter_gather_set)
    wl->pipeline_scatter_gather = true;
  if (ov->is_sequence_parallel_set) {
    wl->sequence_parallel = true;
    l->sequence_parallel = (ts_loc){NULL, 0, 0, "--sequence-parallel", NULL};
  }
}

/* The layers of each (virtual) stage, with Megatron-Core's rules and messages
 * (get_num_layers_to_build, PipelineParallelLayerLayout): a layout string; or the first and last
 * stages' own counts, the stages between splitting the rest evenly; or the embedding and the
 * loss accounted as layers; or an even split; each stage's share then split evenly over its
 * virtual stages. */
int ts_workload_check_stage_layers(const ts_workload *wl, ts_err *err) {
  const ts_workload_locs *l = &wl->locs;
  long first = wl->first_stage_layers, last = wl->last_stage_layers, pp = wl->pp;
  long n = wl->model.n_layers, v = wl->virtual_stages;
  bool accounted = wl->account_embedding || wl->account_loss;
  if (wl->schedule == TS_SCHED_DUALPIPE && (accounted || wl->n_layout_stages > 0))
    return ts_err_at(err, accounted ? l->account_split : l->layout,
                     "dualpipe places the same blocks in both directions of its pipeline: the "
                     "embedding and loss accounting and layout strings are not modelled with it; "
                     "use an even split or decoder_first/last_pipeline_num_layers");
  if (wl->schedule == TS_SCHED_ZB_V) {
    if (accounted || wl->n_layout_stages > 0 || first > 0 || last > 0)
      return ts_err_at(err, l->schedule,
                       "zb-v splits the layers evenly over its V of 2 x pipeline stages: uneven "
                       "first or last stages, the embedding and loss accounting and layout strings "
                       "are not modelled with it");
    if (n % (2 * pp) != 0)
      return ts_err_at(err, l->pp,
                       "zb-v's V of 2 x pipeline (%ld) stages must divide num_layers (%ld)", 2 * pp,
                       n);
    return 0;
  }
  if (wl->n_layout_stages > 0) {
    if (first > 0 || last > 0 || accounted)
      return ts_err_at(err, l->layout,
                       "pipeline_model_parallel_layout places every layer: drop "
                       "decoder_first/last_pipeline_num_layers and "
                       "account_for_embedding/loss_in_pipeline_split");
    if (wl->n_layout_stages % pp != 0)
      return ts_err_at(err, l->layout,
                       "pipeline_model_parallel_layout must be divisible by "
                       "pipeline_model_parallel_size (%d stages, pipeline %ld)",
                       wl->n_layout_stages, pp);
    long decoders = 0;
    for (int i = 0; i < wl->n_layout_stages; i++)
      decoders += wl->layout_layers[i];
    if (decoders != n)
      return ts_err_at(err, l->layout, "number of decoder layers %ld (t) must match num_layers %ld",
                       decoders, n);
    if (v != wl->n_layout_stages / pp)
      return ts_err_at(err, l->virtual_stages,
                       "the layout's %d stages over pipeline %ld make %ld virtual stages, but "
                       "virtual_stages is %ld",
                       wl->n_layout_stages, pp, wl->n_layout_stages / pp, v);
    if (wl->layout_mtp != wl->model.mtp_layers)
      return ts_err_at(err, l->layout,
                       "Number of mtp layers in layout must match mtp_num_layers: %d in the "
                       "layout, mtp_num_layers %ld",
                       wl->layout_mtp, wl->model.mtp_layers);
    if (wl->layout_mtp > 0 && wl->layout_mtp_vstage / pp != v - 1)
      return ts_err_at(err, l->layout,
                       "Currently we restrict that the MTP should be always in the last virtual "
                       "pipeline stage of that rank: found in stage %d of %d (pipeline %ld)",
                       wl->layout_mtp_vstage, wl->n_layout_stages, pp);
    return 0;
  }
  if (accounted) {
    if (first > 0 || last > 0)
      return ts_err_at(err, l->account_split,
                       "account_for_embedding/loss_in_pipeline_split and the first or last "
                       "stage's own layer count both place layers: use one or the other");
    long total = n + wl->account_embedding + wl->account_loss;
    if (total % pp != 0)
      return ts_err_at(err, l->account_split,
                       "num_layers (%ld)%s%s = %ld must be divisible by pipeline (%ld), as "
                       "Megatron-Core splits them",
                       n, wl->account_embedding ? " + the embedding (1)" : "",
                       wl->account_loss ? " + the loss (1)" : "", total, pp);
    if (total / pp % v != 0)
      return ts_err_at(err, l->account_split,
                       "num_layers_per_pipeline_rank %ld should be divisible by vp_size %ld (the "
                       "virtual stages), as Megatron-Core asserts",
                       total / pp, v);
    return 0;
  }
  if (first == 0 && last == 0) {
    if (n % pp != 0)
      return ts_err_at(err, l->pp, "pipeline parallelism (%ld) must divide num_layers (%ld)", pp,
                       n);
    if (n / pp % v != 0)
      return ts_err_at(err, l->virtual_stages,
                       "pipeline (%ld) x virtual_stages (%ld) must divide num_layers (%ld)", pp, v,
                       n);
    return 0;
  }
  ts_loc at = first > 0 ? l->first_stage_layers : l->last_stage_layers;
  if (pp < 2)
    return ts_err_at(err, at,
                     "the first or last stage's layers need pipeline parallelism > 1, "
                     "found 1");
  long middle = pp - (first > 0) - (last > 0), rest = n - first - last;
  if (rest < 0 || (middle == 0 && rest != 0) ||
      (middle > 0 && (rest < middle || rest % middle != 0)))
    return ts_err_at(err, at,
                     "first stage %ld and last stage %ld layers leave %ld of num_layers (%ld) for "
                     "%ld middle stages, which must split them evenly (at least one each)",
                     first, last, rest, n, middle);
  long shares[3] = {first, last, middle > 0 ? rest / middle : 0};
  for (int k = 0; k < 3; k++)
    if (shares[k] % v != 0)
      return ts_err_at(err, k < 2 ? at : l->virtual_stages,
                       "num_layers_per_pipeline_rank %ld (the %s) should be divisible by vp_size "
                       "%ld (the virtual stages), as Megatron-Core asserts",
                       shares[k],
                       k == 0   ? "first stage's"
                       : k == 1 ? "last stage's"
                                : "middle stages'",
                       v);
  return 0;
}

/* Megatron-LM's interleaved schedule: 1F1B over v model chunks per rank. With v > 1 the 1f1b
 * schedule becomes interleaved (as in Megatron); GPipe has no interleaved form here. */
static int resolve_virtual_stages(ts_workload *wl, ts_err *err) {
  const ts_workload_locs *l = &wl->locs;
  long v = wl->virtual_stages, m = ts_workload_microbatches(wl);
  if (wl->schedule == TS_SCHED_ZB_V) { /* ScheduleZBVZeroBubble's */
    if (v > 1)
      return ts_err_at(err, l->virtual_stages,
                       "zb-v holds two chunks a rank of its own (the V's way down and back up): "
                       "virtual_stages must be 1, found %ld",
                       v);
    if (wl->zero_stage >= 2)
      return ts_err_at(err, l->zero_stage,
                       "zb-v runs each backward's weight gradients apart from it, while ZeRO-%d "
                       "reduces gradients inside the backward pass: not modelled together",
                       wl->zero_stage);
    return 0;
  }
  if (wl->schedule == TS_SCHED_DUALPIPE) { /* DualPipe.step's assertions */
    if (v > 1)
      return ts_err_at(err, l->virtual_stages,
                       "dualpipe holds two chunks a rank of its own (one a direction): "
                       "virtual_stages must be 1, found %ld",
                       v);
    if (wl->pp < 2 || wl->pp % 2 != 0)
      return ts_err_at(err, l->schedule,
                       "dualpipe needs an even pipeline size (num_ranks %% 2 == 0), found %ld",
                       wl->pp);
    if (m % 2 != 0 || m < 2 * wl->pp)
      return ts_err_at(err, l->schedule,
                       "dualpipe feeds half the microbatches from each end: it needs an even "
                       "number of at least twice the pipeline size (%ld), found %ld per pipeline",
                       2 * wl->pp, m);
    if (wl->zero_stage >= 2 || wl->dp_bucket_bytes > 0 || wl->overlap_param_gather)
      return ts_err_at(err, wl->zero_stage >= 2 ? l->zero_stage : l->dp_bucket,
                       "dualpipe reduces gradients after the pipeline here: ZeRO-2/3, "
                       "dp_bucket_size and overlap_param_gather are not modelled with it");
    return 0;
  }
  if (v == 1) {
    if (wl->schedule == TS_SCHED_INTERLEAVED)
      return ts_err_at(err, l->schedule,
                       "the interleaved schedule needs virtual_stages > 1 (model chunks per "
                       "pipeline rank), found 1");
    return 0;
  }
  if (wl->schedule == TS_SCHED_GPIPE || wl->schedule == TS_SCHED_ZB_H1)
    return ts_err_at(err, l->virtual_stages,
                     "virtual_stages (%ld) interleave the 1f1b schedule; the %s schedule has "
                     "no interleaved form",
                     v, ts_schedule_names[wl->schedule]);
  wl->schedule = TS_SCHED_INTERLEAVED;
  if (wl->pp < 2)
    return ts_err_at(err, l->virtual_stages,
                     "virtual_stages (%ld) interleave a pipeline, but pipeline parallelism is 1",
                     v);
  if (m % wl->pp != 0)
    return ts_err_at(err, l->virtual_stages,
                     "the interleaved schedule runs microbatches in groups of the pipeline size "
                     "(%ld), which must divide the %ld microbatches per pipeline",
                     wl->pp, m);
  return 0;
}

int ts_workload_resolve(ts_workload *wl, const ts_overrides *ov, ts_err *err) {
  apply_overrides(wl, ov);
  const ts_model *m = &wl->model;
  const ts_workload_locs *l = &wl->locs;
  long tp_pp = wl->tp * wl->pp; /* both <= BIG, so no overflow */
  long replica = tp_pp; /* GPUs of one model replica: tp x cp x pp */
  char shape[96], short_shape[96];
  snprintf(shape, sizeof shape, "tensor (%ld) x pipeline (%ld)", wl->tp, wl->pp);
  snprintf(short_shape, sizeof short_shape, "tp %ld x pp %ld", wl->tp, wl->pp);
  if (wl->cp > 1) {
    if (tp_pp > BIG / wl->cp)
      return ts_err_at(err, l->cp,
                       "tp x cp x pp = %ld x %ld x %ld GPUs, more than the %ld trainsim accepts",
                       wl->tp, wl->cp, wl->pp, BIG);
    replica = tp_pp * wl->cp;
    snprintf(shape, sizeof shape, "tensor (%ld) x context (%ld) x pipeline (%ld)", wl->tp, wl->cp,
             wl->pp);
    snprintf(short_shape, sizeof short_shape, "tp %ld x cp %ld x pp %ld", wl->tp, wl->cp, wl->pp);
  }
  if (ov->is_gpus_set) {
    if (ov->gpus % replica != 0)
      return ts_err_at(err, l->gpus, "%ld GPUs cannot be split into %s = %ld-GPU model replicas",
                       ov->gpus, shape, replica);
    long dp = ov->gpus / replica;
    /* --gpus wins over the file's data parallelism; only an explicit --dp can disagree. */
    if (ov->is_dp_set && wl->dp != dp)
      return ts_err_at(err, l->dp, "data parallelism %ld disagrees with --gpus %ld / (%s) = %ld",
                       wl->dp, ov->gpus, short_shape, dp);
    wl->dp = dp;
  } else if (wl->dp == 0) {
    return ts_err_plain(err, "the GPU count is unknown: give --gpus N, --dp N or the "
                             "workload key parallelism.data");
  }
  if (wl->dp > BIG / replica && wl->cp > 1)
    return ts_err_at(err, l->dp,
                     "tp x cp x pp x dp = %ld x %ld x %ld x %ld GPUs, more than the %ld trainsim "
                     "accepts",
                     wl->tp, wl->cp, wl->pp, wl->dp, BIG);
  if (wl->dp > BIG / replica)
    return ts_err_at(err, l->dp,
                     "tp x pp x dp = %ld x %ld x %ld GPUs, more than the %ld trainsim accepts",
                     wl->tp, wl->pp, wl->dp, BIG);
  wl->n_gpus = replica * wl->dp;
  if (wl->cp > 1 && m->seq % (2 * wl->cp) != 0) /* Transformer Engine's load-balanced chunks */
    return ts_err_at(err, l->cp,
                     "context parallelism splits seq_length (%ld) into 2 x %ld chunks, so 2 x cp "
                     "must divide it",
                     m->seq, wl->cp);
  if (wl->cp > 1 && !wl->flash_attention)
    return ts_err_at(err, l->cp,
                     "context parallelism runs inside fused (flash) attention, as Transformer "
                     "Engine's does, but the stack's attention (line %d) is unfused: set "
                     "stack.attention: flash2",
                     l->attention.line);

  long qk_dim = ts_workload_qk_head_dim(wl), v_dim = ts_workload_v_head_dim(wl);
  if (wl->attention == TS_ATTENTION_FLASH1 && (qk_dim != v_dim || qk_dim > 128))
    return ts_err_at(err, l->attention,
                     "attention flash1: FlashAttention-1 takes one head dimension of up to 128 "
                     "for queries, keys and values (its README), found %ld for queries and keys "
                     "and %ld for values",
                     qk_dim, v_dim);
  if (m->n_heads % wl->tp != 0)
    return ts_err_at(err, l->tp, "tensor parallelism (%ld) must divide num_attention_heads (%ld)",
                     wl->tp, m->n_heads);
  if (m->n_query_groups % wl->tp != 0)
    return ts_err_at(err, l->tp, "tensor parallelism (%ld) must divide num_query_groups (%ld)",
                     wl->tp, m->n_query_groups);
  if (m->ffn_hidden % wl->tp != 0)
    return ts_err_at(err, l->tp, "tensor parallelism (%ld) must divide ffn_hidden_size (%ld)",
                     wl->tp, m->ffn_hidden);
  if (!wl->is_reshard_set)
    wl->reshard_after_forward = wl->pp == 1; /* torchtitan's default */
  wl->fsdp_keeps_weights =
      wl->zero_stage == 3 && wl->is_fsdp && !wl->reshard_after_forward && wl->pp > 1;
  wl->fsdp_keeps_to_backward =
      wl->zero_stage == 3 && wl->is_fsdp && !wl->reshard_after_forward && wl->pp == 1;
  wl->fsdp_reshards_pp =
      wl->zero_stage == 3 && wl->is_fsdp && wl->pp > 1 && wl->reshard_after_forward;
  if (wl->is_reshard_set && !(wl->zero_stage == 3 && wl->is_fsdp))
    return ts_err_at(err, l->reshard,
                     "reshard_after_forward is FSDP's: it needs zero_stage 3 with FSDP (--fsdp, "
                     "or framework pytorch)");
  if (wl->fsdp_reshards_pp && (wl->schedule == TS_SCHED_ZB_H1 || wl->schedule == TS_SCHED_ZB_V ||
                               wl->schedule == TS_SCHED_DUALPIPE))
    return ts_err_at(err, l->reshard,
                     "FSDP resharding after each forward with the %s schedule is not modelled: "
                     "reshard_after_forward false, torchtitan's default with pipelines",
                     ts_schedule_names[wl->schedule]);
  if (wl->fsdp_version > 0 && !(wl->zero_stage == 3 && wl->is_fsdp))
    return ts_err_at(err, l->fsdp_version,
                     "fsdp_version names PyTorch's FSDP API (2: fully_shard, 1: "
                     "FullyShardedDataParallel) that ran ZeRO-3: it needs zero_stage 3 with FSDP "
                     "(--fsdp, or framework pytorch), found zero_stage %d with framework %s",
                     wl->zero_stage, ts_framework_names[wl->framework]);
  if (wl->dp_shard > 0 && !(wl->zero_stage == 3 && wl->is_fsdp))
    return ts_err_at(err, l->dp_shard,
                     "data_parallel_shard_degree shards FSDP's weights over part of the "
                     "data-parallel ranks (HSDP): it needs zero_stage 3 with FSDP (--fsdp, or "
                     "framework pytorch)");
  if (wl->dp_shard > 0 && wl->dp % wl->dp_shard != 0)
    return ts_err_at(err, l->dp_shard,
                     "data_parallel_shard_degree (%ld) must divide data parallelism (%ld): the "
                     "replicas are dp / shard degree",
                     wl->dp_shard, wl->dp);
  if (wl->fsdp_keeps_weights && wl->dp_bucket_bytes > 0)
    return ts_err_at(err, l->dp_bucket,
                     "FSDP reduce-scatters a layer's gradients at a time: dp_bucket_size does not "
                     "apply to it");
  if (ts_workload_zero_refuses_pipeline(wl))
    return ts_err_at(err, l->zero_stage,
                     "ZeRO-%d shards %s over data-parallel ranks, which DeepSpeed does not "
                     "support with pipeline parallelism (pipeline %ld); use ZeRO-1 or pipeline 1",
                     wl->zero_stage, wl->zero_stage == 2 ? "gradients" : "weights and gradients",
                     wl->pp);
  if (wl->schedule == TS_SCHED_ZB_H1 && wl->zero_stage >= 2)
    return ts_err_at(err, l->schedule,
                     "zb-h1 runs each backward's weight gradients (W) apart from it, while "
                     "ZeRO-%d reduces gradients inside the backward pass: not modelled together; "
                     "use zero_stage 0 or 1",
                     wl->zero_stage);
  bool deepspeed =
      wl->framework == TS_FRAMEWORK_MEGATRON_DEEPSPEED || wl->framework == TS_FRAMEWORK_GPT_NEOX;
  bool low_moments = (wl->exp_avg_bytes > 0 && wl->exp_avg_bytes != 4.0) ||
                     (wl->exp_avg_sq_bytes > 0 && wl->exp_avg_sq_bytes != 4.0);
  char release[32];
  ts_stack_version_text(wl->deepspeed_version, release, sizeof release);
  if (wl->deepspeed_version > 0 && !deepspeed)
    return ts_err_at(err, l->deepspeed_version,
                     "deepspeed_version names the DeepSpeed release under frameworks "
                     "megatron-deepspeed and gpt-neox; framework %s does not run DeepSpeed%s",
                     ts_framework_names[wl->framework],
                     wl->is_fsdp ? " (its ZeRO-3 is FSDP)"
                                 : " (its ZeRO-3 plays as DeepSpeed's newest)");
  if (wl->deepspeed_version > 0 && wl->zero_stage == 3 && wl->is_fsdp)
    return ts_err_at(err, l->deepspeed_version,
                     "deepspeed_version %s chooses DeepSpeed's ZeRO-3, but --fsdp plays this "
                     "run's ZeRO-3 as PyTorch FSDP; drop one of them",
                     release);
  if (wl->deepspeed_version > 0 && wl->deepspeed_version < TS_DEEPSPEED_FIRST_ZERO3 &&
      wl->zero_stage == 3)
    return ts_err_at(err, l->deepspeed_version,
                     "ZeRO-3 first shipped in DeepSpeed 0.3.12 (2021-03-12); deepspeed_version "
                     "%s is older",
                     release);
  if (wl->is_contiguous_gradients_set && !(deepspeed && wl->zero_stage == 3 && !wl->is_fsdp))
    return ts_err_at(err, l->contiguous_gradients,
                     "contiguous_gradients is DeepSpeed's ZeRO-3 key (zero_stage 3 under "
                     "frameworks megatron-deepspeed and gpt-neox, not FSDP), modelled there only; "
                     "found zero_stage %d with framework %s%s",
                     wl->zero_stage, ts_framework_names[wl->framework],
                     wl->is_fsdp ? " as FSDP" : "");
  if (!wl->is_contiguous_gradients_set) /* the release's default (constants.py, PR #1199) */
    wl->contiguous_gradients = wl->deepspeed_version <= 0 || wl->deepspeed_version >= 403;
  bool plain = ts_framework_is_pytorch(wl->framework);
  if (wl->is_cp_attention_set && wl->cp_attention == TS_CP_ATTENTION_PYTORCH && !plain)
    return ts_err_at(err, l->cp_attention,
                     "cp_attention pytorch is PyTorch's context_parallel, which wraps a plain "
                     "PyTorch model's scaled_dot_product_attention (framework pytorch); found "
                     "framework %s",
                     ts_framework_names[wl->framework]);
  if (!wl->is_cp_attention_set)
    wl->cp_attention = plain ? TS_CP_ATTENTION_PYTORCH : TS_CP_ATTENTION_TE;
  if (!wl->is_autocast_set)
    wl->is_autocast = ts_workload_autocast_default(wl);
  if (plain && !wl->model.is_attention_dropout_set) /* PyTorch's attention: dropout_p 0 */
    wl->model.attention_dropout = 0;
  if (wl->is_autocast && deepspeed)
    return ts_err_at(err, l->autocast,
                     "autocast keeps fp32 weights, but %s runs DeepSpeed's engine, which casts the "
                     "model to its 16-bit precision: use framework megatron or pytorch",
                     ts_framework_names[wl->framework]);
  if (wl->is_autocast && (wl->zero_stage == 3 || m->n_experts > 0 || m->mla))
    return ts_err_at(err, l->autocast,
                     "autocast is modelled for dense models without ZeRO-3 (found %s): drop "
                     "autocast to price the run with low-precision weights",
                     wl->zero_stage == 3 ? "zero_stage 3"
                     : m->mla            ? "multi_latent_attention"
                                         : "num_experts");
  if (((wl->master_weight_bytes > 0 && wl->master_weight_bytes != 4.0) ||
       wl->is_master_weights_none) &&
      (deepspeed || wl->is_autocast || wl->precision == TS_PREC_FP32 ||
       (wl->zero_stage == 3 && ts_framework_is_pytorch(wl->framework))))
    return ts_err_at(err, l->master_weights,
                     "master_weights sets the optimizer's copy of bf16 or fp16 weights "
                     "(Megatron-Core's --main-params-dtype, Apex's DistributedFusedAdam); this "
                     "run keeps %s",
                     deepspeed                       ? "DeepSpeed's fp32 master weights"
                     : wl->precision == TS_PREC_FP32 ? "fp32 weights and no copy"
                                                     : "fp32 weights (autocast or PyTorch's "
                                                       "FSDP) and no copy");
  if (deepspeed && low_moments)
    return ts_err_at(err, l->exp_avg,
                     "exp_avg_dtype and exp_avg_sq_dtype set Megatron-Core's precision-aware "
                     "optimizer: %s keeps DeepSpeed's fp32 moments",
                     ts_framework_names[wl->framework]);
  const ts_loc *rm = &l->recompute_modules;
  if (ov->is_recompute_set && ov->recompute != TS_RECOMPUTE_SELECTIVE) { /* the flag's choice */
    wl->is_recompute_modules_set = false;
    wl->recompute_modules = 0;
  }
  if (wl->is_recompute_modules_set && wl->recompute != TS_RECOMPUTE_SELECTIVE)
    return ts_err_at(err, *rm,
                     "recompute_modules chooses what selective recomputation redoes: it needs "
                     "recompute: selective, found %s",
                     ts_recompute_names[wl->recompute]);
  /* torchao's float8 linears as torchtitan runs them (stack.h, ts_fp8_linear): measured compiled,
   * on a dense plain PyTorch block without tensor parallelism (bench/device/float8_block.py);
   * eager, its casts run as separate kernels (slower than bf16 there) and op-level
   * checkpointing keeps every amax's abs output: not modelled. */
  if (wl->fp8_linear == TS_FP8_LINEAR_TORCHAO) {
    char found[96] = "";
    if (wl->fp8 == TS_FP8_NONE)
      snprintf(found, sizeof found, "training.fp8 none");
    else if (wl->fp8_recipe != TS_FP8_RECIPE_TENSORWISE)
      snprintf(found, sizeof found, "fp8_recipe %s", ts_fp8_recipe_names[wl->fp8_recipe]);
    else if (!ts_framework_is_pytorch(wl->framework))
      snprintf(found, sizeof found, "framework '%s'", ts_framework_names[wl->framework]);
    else if (!wl->is_compiled)
      snprintf(found, sizeof found, "no compile (eager)");
    else if (wl->tp > 1)
      snprintf(found, sizeof found, "tensor parallelism %ld", wl->tp);
    else if (m->n_experts > 0 || m->mla)
      snprintf(found, sizeof found, "%s", m->mla ? "multi-head latent attention" : "experts");
    if (found[0] != '\0')
      return ts_err_at(err, l->fp8_linear,
                       "key 'fp8_linear': torchao is torchao's Float8Linear as torchtitan runs it "
                       "(training.fp8 with fp8_recipe tensorwise, framework pytorch, compile "
                       "true, a dense model without tensor parallelism); found %s",
                       found);
  }
  if (wl->recompute == TS_RECOMPUTE_OP) {
    /* torchtitan's policy as measured on its Llama block (bench/device/op_sac.py; with torchao's
     * float8 linears, compiled: bench/device/float8_block.py, which keep what bf16 keeps): what
     * its save list keeps elsewhere (bias GEMMs run addmm, Transformer Engine's FP8 GEMMs,
     * unfused attention's bmm, the TP and CP collectives, the experts) is not modelled. */
    char fw[64];
    snprintf(fw, sizeof fw, "framework '%s'", ts_framework_names[wl->framework]);
    const char *off = !ts_framework_is_pytorch(wl->framework) ? fw
                      : m->bias                               ? "linear layers with biases"
                      : wl->tp > 1                            ? "tensor parallelism"
                      : wl->cp > 1                            ? "context parallelism"
                      : m->n_experts > 0                      ? "mixture-of-experts layers"
                      : m->mla                                ? "multi-head latent attention"
                      : wl->fp8 != TS_FP8_NONE && wl->fp8_linear == TS_FP8_LINEAR_TE
                          ? "Transformer Engine's fp8"
                      : wl->is_autocast                       ? "autocast"
                      : wl->attention == TS_ATTENTION_UNFUSED ? "unfused attention"
                      : wl->attention == TS_ATTENTION_FLASH1  ? "FlashAttention-1"
                      : wl->is_unpad_input                    ? "unpad_input"
                                                              : NULL;
    if (off != NULL)
      return ts_err_at(err, l->recompute,
                       "key 'recompute': op is torchtitan's op-level selective checkpointing of a "
                       "plain PyTorch layer; found %s, with which it is not modelled (use none, "
                       "selective or full)",
                       off);
  }
  if (ts_workload_recomputes(wl, TS_RECOMPUTE_MLA_UP_PROJ) && !m->mla)
    return ts_err_at(err, *rm,
                     "mla_up_proj recomputes multi-head latent attention's up projections: the "
                     "model has no multi_latent_attention");
  if (ts_workload_recomputes(wl, TS_RECOMPUTE_MOE_ACT) && m->n_experts == 0)
    return ts_err_at(err, *rm,
                     "moe_act recomputes the experts' activation function: the model has no "
                     "experts (num_experts)");
  if (m->mtp_layers > 0 && wl->zero_stage == 3 && !wl->fsdp_keeps_weights)
    return ts_err_at(err, l->zero_stage,
                     "ZeRO-3 gathering weights layer by layer with MTP layers (mtp_num_layers %ld) "
                     "is not modelled: use zero_stage 0, 1 or 2, or FSDP with pipelines keeping "
                     "its weights (reshard_after_forward false)",
                     m->mtp_layers);
  if (m->mla && wl->zero_stage == 3)
    return ts_err_at(
        err, l->zero_stage,
        "ZeRO-3 with multi_latent_attention is not modelled: use zero_stage 0, 1 or 2");
  if (wl->overlap_param_gather && (wl->zero_stage < 1 || wl->zero_stage > 2))
    return ts_err_at(err, l->overlap_param_gather,
                     "overlap_param_gather overlaps the distributed optimizer's all-gather of "
                     "updated weights, which needs zero_stage 1 or 2, found zero_stage %d",
                     wl->zero_stage);
  if (wl->grad_reduce_in_bf16 &&
      (wl->precision != TS_PREC_BF16 || wl->is_autocast || wl->framework != TS_FRAMEWORK_MEGATRON ||
       ts_workload_zero(wl) > 2))
    return ts_err_at(err, l->grad_reduce_in_bf16,
                     "grad_reduce_in_bf16 makes Megatron's fp32 gradient buffers bf16: it needs "
                     "precision bf16 (weights in bf16, not autocast), framework megatron and "
                     "zero_stage 0 to 2, found precision %s%s, framework %s, zero_stage %d",
                     ts_precision_names[wl->precision], wl->is_autocast ? " (autocast)" : "",
                     ts_framework_names[wl->framework], ts_workload_zero(wl));
  if (wl->overlap_p2p_comm && wl->virtual_stages < 2)
    return ts_err_at(err, l->overlap_p2p_comm,
                     "overlap_p2p_comm overlaps the interleaved schedule's pipeline sends and "
                     "receives with its chunks' compute: it needs virtual_stages of 2 or more, "
                     "found %ld",
                     wl->virtual_stages);
  if (wl->tp_comm_overlap && wl->tp > 1 && !wl->sequence_parallel)
    return ts_err_at(err, l->tp_comm_overlap,
                     "tp_comm_overlap overlaps the all-gathers and reduce-scatters of sequence "
                     "parallelism with GEMMs: set sequence_parallel (Megatron-Core requires it)");
  if (wl->sequence_parallel && ts_workload_local_seq(wl) % wl->tp != 0)
    return ts_err_at(err, l->sequence_parallel,
                     "sequence parallelism splits seq_length (%ld%s) over tensor parallelism "
                     "(%ld), which must divide it",
                     ts_workload_local_seq(wl), wl->cp > 1 ? " a context-parallel rank" : "",
                     wl->tp);
  if (wl->n_layout_stages > 0 && !ov->is_virtual_stages_set && wl->virtual_stages == 1 &&
      wl->n_layout_stages % wl->pp == 0) {
    wl->virtual_stages = wl->n_layout_stages / wl->pp; /* the layout's, as Megatron-Core */
    wl->locs.virtual_stages = wl->locs.layout;
  }
  if (wl->virtual_stages > BIG / wl->pp)
    return ts_err_at(err, l->virtual_stages, "expected at most %ld virtual stages", BIG / wl->pp);
  if (ts_workload_check_stage_layers(wl, err) != 0 || ts_workload_check_experts(wl, err) != 0)
    return -1;
  long per_step = wl->micro_batch * wl->dp;
  if (wl->micro_batch > BIG / wl->dp || wl->global_batch % per_step != 0)
    return ts_err_at(err, l->global_batch,
                     "global_batch_size (%ld) must be a multiple of micro_batch_size (%ld) x "
                     "data parallelism (%ld) = %ld",
                     wl->global_batch, wl->micro_batch, wl->dp, per_step);
  return resolve_virtual_stages(wl, err);
}

double ts_workload_norm_params(const ts_workload *wl) {
  return (wl->model.rms_norm ? 1.0 : 2.0) * (double)wl->model.hidden;
}

double ts_workload_position_params(const ts_workload *wl) {
  return wl->model.rope ? 0 : (double)wl->model.seq * (double)wl->model.hidden;
}

double ts_workload_head_params(const ts_workload *wl) {
  double word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)wl->model.hidden;
  /* zb-v's V ends on the first rank, beside the embedding: one copy */
  bool copy = wl->pp > 1 && wl->schedule != TS_SCHED_ZB_V;
  return ts_workload_norm_params(wl) + (wl->model.untied || copy ? word : 0);
}

long ts_workload_padded_vocab(const ts_workload *wl) {
  if (ts_framework_is_pytorch(wl->framework)) /* tensor-parallel shards of ceil(vocab / tp) */
    return (wl->model.vocab + wl->tp - 1) / wl->tp * wl->tp;
  long multiple = 128 * wl->tp;
  return (wl->model.vocab + multiple - 1) / multiple * multiple;
}

long ts_workload_microbatches(const ts_workload *wl) {
  return wl->global_batch / (wl->micro_batch * wl->dp);
}

int ts_workload_zero(const ts_workload *wl) {
  if (wl->fsdp_keeps_to_backward) /* whole weights from a forward to its backward, gradients
                                   * reduce-scattered each backward: ZeRO-2's memory */
    return 2;
  return wl->fsdp_keeps_weights || wl->fsdp_reshards_pp ? 1 : wl->zero_stage;
}

bool ts_workload_gathers_params(const ts_workload *wl) {
  return wl->overlap_param_gather || wl->fsdp_keeps_weights;
}

bool ts_workload_is_hsdp(const ts_workload *wl) {
  return wl->dp_shard > 0 && wl->dp_shard < wl->dp;
}

long ts_workload_shard_ranks(const ts_workload *wl) {
  return ts_workload_is_hsdp(wl) ? wl->dp_shard * wl->cp : ts_workload_dp_cp(wl);
}

double ts_workload_grad_bytes(const ts_workload *wl) {
  return wl->grad_reduce_in_bf16 ? 2.0 : 4.0;
}

long ts_workload_chunks(const ts_workload *wl) {
  return wl->schedule == TS_SCHED_DUALPIPE || wl->schedule == TS_SCHED_ZB_V ? 2
                                                                            : wl->virtual_stages;
}

bool ts_workload_stage_has_embedding(const ts_workload *wl, long stage) {
  return stage == 0 || (wl->schedule == TS_SCHED_DUALPIPE && stage == wl->pp - 1);
}

bool ts_workload_stage_has_head(const ts_workload *wl, long stage) {
  if (wl->schedule == TS_SCHED_ZB_V) /* the V ends where it began */
    return stage == 0;
  return stage == wl->pp - 1 || (wl->schedule == TS_SCHED_DUALPIPE && stage == 0);
}

long ts_workload_vstage_layers(const ts_workload *wl, long vstage) {
  long p = wl->pp, v = wl->virtual_stages, n = wl->model.n_layers, stage = vstage % p;
  long first = wl->first_stage_layers, last = wl->last_stage_layers;
  if (wl->schedule == TS_SCHED_DUALPIPE) { /* chunk 1: the backward pipeline's block */
    stage = vstage < p ? stage : p - 1 - stage;
    vstage = stage;
    v = 1;
  }
  if (wl->schedule == TS_SCHED_ZB_V) /* an even split over the V's 2p stages */
    return n / (2 * p);
  if (wl->n_layout_stages > 0)
    return wl->layout_layers[vstage];
  if (wl->account_embedding || wl->account_loss) {
    long per = (n + wl->account_embedding + wl->account_loss) / (p * v);
    return per - (vstage == 0 && wl->account_embedding) - (vstage == p * v - 1 && wl->account_loss);
  }
  if (first == 0 && last == 0)
    return n / (p * v);
  long middle = p - (first > 0) - (last > 0);
  long rank = stage == 0 && first > 0      ? first
              : stage == p - 1 && last > 0 ? last
                                           : (n - first - last) / middle;
  return rank / v;
}

long ts_workload_stage_layers(const ts_workload *wl, long stage) {
  long n = 0;
  for (long c = 0; c < ts_workload_chunks(wl); c++)
    n += ts_workload_vstage_layers(wl, c * wl->pp + stage);
  return n;
}

void ts_workload_layout_label(const ts_workload *wl, char *out, size_t size) {
  char cp[32] = "", ep[48] = "";
  if (wl->cp > 1)
    snprintf(cp, sizeof cp, " x CP %ld", wl->cp);
  if (wl->model.n_experts > 0 && ts_workload_etp(wl) != wl->tp)
    snprintf(ep, sizeof ep, ", EP %ld x ETP %ld", wl->ep, ts_workload_etp(wl));
  else if (wl->model.n_experts > 0)
    snprintf(ep, sizeof ep, ", EP %ld", wl->ep);
  snprintf(out, size, "TP %ld%s x PP %ld x DP %ld%s", wl->tp, cp, wl->pp, wl->dp, ep);
}

void ts_workload_schedule_label(const ts_workload *wl, char *out, size_t size) {
  if (wl->virtual_stages > 1)
    snprintf(out, size, "%s, %ld virtual stages", ts_schedule_names[wl->schedule],
             wl->virtual_stages);
  else
    snprintf(out, size, "%s", ts_schedule_names[wl->schedule]);
}

long ts_workload_etp(const ts_workload *wl) {
  return wl->etp > 0 ? wl->etp : wl->tp;
}

long ts_workload_edp(const ts_workload *wl) {
  return wl->tp * ts_workload_dp_cp(wl) / (ts_workload_etp(wl) * wl->ep);
}

long ts_workload_dp_cp(const ts_workload *wl) {
  return wl->dp * wl->cp;
}

long ts_workload_local_seq(const ts_workload *wl) {
  return wl->model.seq / wl->cp;
}

bool ts_workload_zero_refuses_pipeline(const ts_workload *wl) {
  return wl->zero_stage >= 2 && wl->pp > 1 && !(wl->zero_stage == 3 && wl->is_fsdp);
}

int ts_workload_check_experts(const ts_workload *wl, ts_err *err) {
  const ts_model *m = &wl->model;
  const ts_workload_locs *l = &wl->locs;
  long etp = ts_workload_etp(wl);
  if (m->n_experts == 0) {
    if (wl->ep > 1 || wl->etp > 0)
      return ts_err_at(err, wl->ep > 1 ? l->ep : l->etp,
                       "expert parallelism splits mixture-of-experts layers, but the model has "
                       "none: set model.num_experts");
    return 0;
  }
  if (m->n_experts % wl->ep != 0)
    return ts_err_at(err, l->ep, "expert parallelism (%ld) must divide num_experts (%ld)", wl->ep,
                     m->n_experts);
  if (m->moe_ffn_hidden % etp != 0)
    return ts_err_at(err, wl->etp > 0 ? l->etp : l->tp,
                     "expert tensor parallelism (%ld) must divide moe_ffn_hidden_size (%ld)", etp,
                     m->moe_ffn_hidden);
  if (m->moe_shared_ffn % wl->tp != 0)
    return ts_err_at(err, l->tp,
                     "tensor parallelism (%ld) must divide moe_shared_expert_intermediate_size "
                     "(%ld)",
                     wl->tp, m->moe_shared_ffn);
  /* Megatron-Core's parallel folding (parallel_state.py): the expert grid etp x ep x edp x pp
   * covers the same ranks as tp x dp x pp, so etp x ep divides each stage's tp x dp ranks. */
  long stage_ranks = wl->tp * ts_workload_dp_cp(wl);
  if (etp > BIG / wl->ep || stage_ranks % (etp * wl->ep) != 0)
    return ts_err_at(err, l->ep,
                     "expert tensor parallelism (%ld) x expert parallelism (%ld) must divide the "
                     "%ld ranks of a pipeline stage (tensor %ld x data %ld x context %ld)",
                     etp, wl->ep, stage_ranks, wl->tp, wl->dp, wl->cp);
  if (wl->tp > 1 && !wl->sequence_parallel) /* megatron/core/transformer/moe/moe_layer.py */
    return ts_err_at(err, l->sequence_parallel,
                     "mixture-of-experts layers with tensor parallelism (%ld) need "
                     "sequence_parallel (Megatron-Core refuses to train without it)",
                     wl->tp);
  if (wl->zero_stage >= 2)
    return ts_err_at(
        err, l->zero_stage,
        "ZeRO-%d with mixture-of-experts layers is not modelled: use zero_stage 0 or 1 "
        "(Megatron-Core's distributed optimizer)",
        wl->zero_stage);
  return 0;
}

bool ts_workload_recomputes(const ts_workload *wl, ts_recompute_module module) {
  if (wl->recompute != TS_RECOMPUTE_SELECTIVE)
    return false;
  return (wl->is_recompute_modules_set ? wl->recompute_modules : TS_RECOMPUTE_CORE_ATTN) & module;
}

long ts_workload_chunk_mtp_layers(const ts_workload *wl, long stage, long chunk) {
  long p = wl->pp, mtp = wl->model.mtp_layers;
  bool here;
  if (wl->n_layout_stages > 0 && wl->layout_mtp > 0)
    here = chunk * p + stage == wl->layout_mtp_vstage;
  else if (wl->schedule == TS_SCHED_DUALPIPE) /* each copy's output layer */
    here = chunk == 0 ? stage == p - 1 : stage == 0;
  else if (wl->schedule == TS_SCHED_ZB_V)
    here = chunk == 1 && stage == 0;
  else
    here = chunk == ts_workload_chunks(wl) - 1 && stage == p - 1;
  return here ? mtp : 0;
}

long ts_workload_stage_mtp_layers(const ts_workload *wl, long stage) {
  long n = 0;
  for (long c = 0; c < ts_workload_chunks(wl); c++)
    n += ts_workload_chunk_mtp_layers(wl, stage, c);
  return n;
}

bool ts_workload_is_moe_layer(const ts_workload *wl, long layer) {
  const ts_model *m = &wl->model;
  if (m->n_experts == 0)
    return false;
  if (layer >= m->n_layers && m->n_layers > 0)
    layer = m->n_layers - 1; /* an MTP layer: the last decoder layer's kind */
  if (m->moe_layer_freq > 0)
    return layer % m->moe_layer_freq == 0;
  return layer < TS_MOE_MAX_LAYERS && (m->moe_layer_mask[layer / 64] >> (layer % 64) & 1);
}

long ts_workload_chunk_first_layer(const ts_workload *wl, long stage, long chunk) {
  long first = 0, vstage = chunk * wl->pp + stage;
  if (wl->schedule == TS_SCHED_DUALPIPE) /* the block's place in one copy of the model */
    vstage = chunk == 0 ? stage : wl->pp - 1 - stage;
  if (wl->schedule == TS_SCHED_ZB_V) /* the V: down the ranks, then back up */
    return (chunk == 0 ? stage : 2 * wl->pp - 1 - stage) * (wl->model.n_layers / (2 * wl->pp));
  for (long u = 0; u < vstage; u++)
    first += ts_workload_vstage_layers(wl, u);
  return first;
}

long ts_workload_moe_layer_count(const ts_workload *wl) {
  long n = 0;
  for (long l = 0; wl->model.n_experts > 0 && l < wl->model.n_layers; l++)
    n += ts_workload_is_moe_layer(wl, l);
  return n;
}

long ts_workload_stage_moe_layers(const ts_workload *wl, long stage) {
  if (wl->model.n_experts == 0)
    return 0;
  long n = 0;
  for (long c = 0; c < ts_workload_chunks(wl); c++) {
    long first = ts_workload_chunk_first_layer(wl, stage, c);
    for (long i = 0; i < ts_workload_vstage_layers(wl, c * wl->pp + stage); i++)
      n += ts_workload_is_moe_layer(wl, first + i);
  }
  return n;
}

double ts_workload_moe_capacity(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  if (wl->moe_capacity_factor == 0 || m->n_experts == 0)
    return 0;
  /* Megatron-Core's get_capacity: ceil(tokens x topk / num_experts x factor) tokens an expert,
   * over the tokens a rank routes (a micro-batch's, split over tensor parallelism). */
  double mean = (double)(wl->micro_batch * ts_workload_local_seq(wl)) / (double)wl->tp *
                (double)m->moe_topk / (double)m->n_experts;
  return ceil(mean * wl->moe_capacity_factor) / mean;
}

double ts_workload_moe_token_factor(const ts_workload *wl) {
  double cap = ts_workload_moe_capacity(wl), load = wl->moe_load_imbalance;
  if (wl->moe_pad_to_capacity)
    return cap;
  return cap > 0 && cap < load ? cap : load;
}

bool ts_workload_fuses(const ts_workload *wl, ts_fusion f) {
  return (wl->fusions >> f) & 1u;
}

long ts_workload_qk_head_dim(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  return m->mla               ? m->qk_head_dim + m->qk_pos_emb_head_dim
         : m->kv_channels > 0 ? m->kv_channels
                              : m->hidden / m->n_heads;
}

bool ts_workload_repeats_kv(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  return ts_framework_is_pytorch(wl->framework) &&
         (wl->attention == TS_ATTENTION_SDPA || wl->attention == TS_ATTENTION_SDPA_FLASH) &&
         !m->mla && m->n_query_groups < m->n_heads;
}

bool ts_workload_softmax_fp32(const ts_workload *wl) {
  return !wl->flash_attention && wl->is_autocast && !ts_workload_fuses(wl, TS_FUSE_MASKED_SOFTMAX);
}

bool ts_workload_eager_heads(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  return !wl->flash_attention && ts_framework_is_pytorch(wl->framework) && !wl->is_compiled &&
         !m->rope && !m->mla;
}

/* PyTorch's own recipe for mixed precision is automatic mixed precision: the model's fp32
 * weights cast by torch.autocast at each forward (pytorch.org/docs/stable/amp), what Hugging
 * Face Trainer's bf16 and fp16 (transformers' mixed_precision_training), Lightning's bf16-mixed
 * and torchtitan without FSDP (maybe_enable_amp) run. */
bool ts_workload_autocast_default(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  bool low_moments = (wl->exp_avg_bytes > 0 && wl->exp_avg_bytes != 4.0) ||
                     (wl->exp_avg_sq_bytes > 0 && wl->exp_avg_sq_bytes != 4.0);
  return ts_framework_is_pytorch(wl->framework) &&
         (wl->precision == TS_PREC_BF16 || wl->precision == TS_PREC_FP16) &&
         wl->fp8 == TS_FP8_NONE && wl->zero_stage != 3 && m->n_experts == 0 && !m->mla &&
         !wl->is_master_weights_set && !low_moments && wl->recompute != TS_RECOMPUTE_OP &&
         !ts_workload_fuses(wl, TS_FUSE_GRADIENT_ACCUMULATION);
}

bool ts_workload_residual_fp32(const ts_workload *wl) {
  return wl->is_autocast && ts_framework_is_pytorch(wl->framework) &&
         !(wl->model.rms_norm && wl->rms_norm_impl == TS_RMS_NORM_EAGER_FP32) && !wl->is_compiled &&
         !ts_workload_fuses(wl, TS_FUSE_DROPOUT_ADD_LAYER_NORM);
}

bool ts_workload_recompute_stops_early(const ts_workload *wl) {
  return ts_framework_is_pytorch(wl->framework) && wl->model.hidden_dropout == 0 && wl->tp == 1;
}

void ts_workload_eager_describe(const ts_workload *wl, char *buf, int n) {
  char divisions[64] = "";
  if (wl->score_divisions > 0)
    snprintf(divisions, sizeof divisions, "; scores divided apart %ld time%s", wl->score_divisions,
             wl->score_divisions > 1 ? "s" : "");
  snprintf(buf, (size_t)n, "%s%s%s%s%s%s%s%s%s%s%s", wl->is_compiled ? "; torch.compile" : "",
           wl->fp8 != TS_FP8_NONE && wl->fp8_linear == TS_FP8_LINEAR_TORCHAO
               ? "; torchao float8 linears"
               : "",
           wl->gate_up == TS_GATE_UP_SEPARATE ? "; gate and up separate" : "",
           wl->rms_norm_impl != TS_RMS_NORM_FUNCTIONAL ? "; RMSNorm " : "",
           wl->rms_norm_impl != TS_RMS_NORM_FUNCTIONAL ? ts_rms_norm_names[wl->rms_norm_impl] : "",
           wl->rope_impl != TS_ROPE_ROTATE_HALF ? "; rope " : "",
           wl->rope_impl != TS_ROPE_ROTATE_HALF ? ts_rope_names[wl->rope_impl] : "",
           wl->gelu_impl != TS_GELU_FUNCTIONAL ? "; GeLU eager_tanh" : "", divisions,
           wl->causal_mask == TS_CAUSAL_MASK_WHERE ? "; causal mask by torch.where" : "",
           wl->eager_attention == TS_EAGER_ATTENTION_BADDBMM ? "; heads unbound, scores by baddbmm"
                                                             : "");
}

long ts_workload_v_head_dim(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  return m->mla ? m->v_head_dim : m->kv_channels > 0 ? m->kv_channels : m->hidden / m->n_heads;
}
