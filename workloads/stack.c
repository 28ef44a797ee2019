/* stack: frameworks, attention implementations and kernel fusions; see stack.h. */
#include "stack.h"

#include <stdio.h>
#include <stdlib.h>

const char *const ts_framework_names[] = {"megatron", "pytorch", "megatron-deepspeed", "gpt-neox",
                                          NULL};
const char *const ts_attention_names[] = {"flash2",     "unfused", "sdpa",
                                          "sdpa_flash", "flash1",  NULL};
const char *const ts_rms_norm_names[] = {"functional", "eager_fp32", NULL};
const char *const ts_gelu_names[] = {"functional", "eager_tanh", NULL};
const char *const ts_causal_mask_names[] = {"masked_fill", "where", NULL};
const char *const ts_eager_attention_names[] = {"matmul", "baddbmm", NULL};
const char *const ts_rope_names[] = {"rotate_half", "complex", NULL};
const char *const ts_gate_up_names[] = {"fused", "separate", NULL};
const char *const ts_fp8_linear_names[] = {"transformer_engine", "torchao", NULL};
const char *const ts_cp_attention_names[] = {"transformer_engine", "pytorch", NULL};
const char *const ts_allocator_names[] = {"caching", "expandable", NULL};
const char *const ts_fusion_names[] = {
    "masked_softmax", "bias_gelu",     "bias_dropout",           "gradient_accumulation", "swiglu",
    "rope",           "cross_entropy", "dropout_add_layer_norm", "dense_gelu_dense",      NULL};

#define BIT(f) (1u << (f))

unsigned ts_framework_default_fusions(ts_framework fw) {
  switch (fw) {
  case TS_FRAMEWORK_MEGATRON:
    /* Megatron-LM, megatron/training/arguments.py: every fusion is on unless switched off
     * (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-dropout-fusion,
     * --no-gradient-accumulation-fusion, --no-bias-swiglu-fusion, --no-rope-fusion). */
    return BIT(TS_FUSE_MASKED_SOFTMAX) | BIT(TS_FUSE_BIAS_GELU) | BIT(TS_FUSE_BIAS_DROPOUT) |
           BIT(TS_FUSE_GRADIENT_ACCUMULATION) | BIT(TS_FUSE_SWIGLU) | BIT(TS_FUSE_ROPE);
  case TS_FRAMEWORK_MEGATRON_DEEPSPEED:
    /* Microsoft's Megatron-DeepSpeed, megatron/arguments.py: the four --no-*-fusion flags it
     * inherited from Megatron-LM, on by default; its SwiGLU and rotary embedding are eager
     * PyTorch (ASSUMED from its model code: no fusion flag for either). */
    return BIT(TS_FUSE_MASKED_SOFTMAX) | BIT(TS_FUSE_BIAS_GELU) | BIT(TS_FUSE_BIAS_DROPOUT) |
           BIT(TS_FUSE_GRADIENT_ACCUMULATION);
  case TS_FRAMEWORK_GPT_NEOX:
    /* GPT-NeoX, megatron/neox_arguments/neox_args.py: scaled_upper_triang_masked_softmax_fusion,
     * bias_gelu_fusion, bias_dropout_fusion and rope_fusion all default to False; gradients
     * accumulate in DeepSpeed's engine, apart from the GEMMs. */
  case TS_FRAMEWORK_PYTORCH:
  case TS_FRAMEWORK_COUNT:
    break;
  }
  return 0;
}

void ts_fusions_describe(unsigned mask, char *buf, int n) {
  int at = snprintf(buf, (size_t)n, "%s", mask == 0 ? "none" : "");
  for (int f = 0; f < TS_FUSION_COUNT && at >= 0 && at < n; f++)
    if (mask & BIT(f))
      at += snprintf(buf + at, (size_t)(n - at), "%s%s", at > 0 ? ", " : "", ts_fusion_names[f]);
}

long ts_stack_parse_version(const char *text) {
  long part[3] = {0, 0, 0};
  const char *c = text;
  for (int i = 0; i < 3; i++) {
    if (*c < '0' || *c > '9')
      return -1;
    char *end = NULL;
    part[i] = strtol(c, &end, 10);
    if (end - c > 2)
      return -1;
    c = end;
    long version = part[0] * 10000 + part[1] * 100 + part[2];
    if (*c == '\0')
      return i >= 1 && version > 0 ? version : -1; /* 0.0.0 is no release */
    if (*c++ != '.')
      return -1;
  }
  return -1;
}

void ts_stack_version_text(long version, char *buf, int n) {
  snprintf(buf, (size_t)n, "%ld.%ld.%ld", version / 10000, version / 100 % 100, version % 100);
}

bool ts_framework_is_pytorch(ts_framework fw) {
  return fw == TS_FRAMEWORK_PYTORCH;
}

ts_deepspeed_path ts_deepspeed_zero3_path(long version) {
  if (version <= 0 || version >= 600) /* 0.6.0 */
    return TS_DEEPSPEED_COALESCED;
  return version < 505 ? TS_DEEPSPEED_LIST : TS_DEEPSPEED_SYNCED; /* 0.5.5 */
}
