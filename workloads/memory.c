/* memory: per-rank footprint; see memory.h. */
#include "memory.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "alloc.h"
#include "ccl_memory.h"
#include "cost.h"
#include "schedule.h"
#include "step_requests.h"
#include "zero3.h"

const char *const ts_mem_category_names[] = {"weights",     "gradients", "optimizer",
                                             "activations", "buffers",   NULL};

/* What attention without flash keeps of a layer's s x s scores, in bytes: the softmax's output
 * (2 bytes a score) and, with attention dropout, its mask and output (1 + 2); 0 with flash. With
 * the softmax in fp32 (ts_workload_softmax_fp32) its output is 4 bytes a score, and P V keeps the
 * probabilities cast back down (2) as well, or dropout's output of them. */
static double unfused_scores(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  double s = (double)ts_workload_local_seq(wl);
  double drops = m->attention_dropout > 0 ? 1.0 + 2.0 : 0;
  double kept = ts_workload_softmax_fp32(wl) ? 4.0 + 2.0 + (drops > 0 ? 1.0 : 0) : 2.0 + drops;
  return wl->flash_attention
             ? 0
             : kept * (double)m->n_heads * s * s * (double)wl->micro_batch / (double)wl->tp;
}

/* What PyTorch's ring attention (stack.cp_attention pytorch; _templated_ring_attention and its
 * backward at PyTorch 2.11) holds beyond a layer's activations while its backward runs a layer's
 * attention core, in bytes: the keys and values of all cp ranks, which its all-gather rotater
 * keeps to the loop's end (cp x the rank's, in the model's precision); the fp32 gradients of the
 * queries, keys and values it accumulates; the fp32 key and value gradients received from the
 * previous rank and those sent on (held by the transfer in flight); the new fp32 copy of the
 * received key and value gradients that load balancing's _partial_update makes (torch.cat of
 * the chunks) at every step past the first on the ring's last rank; FlashAttention-2's fp32
 * accumulator of the query gradient inside its backward (flash_api.cpp, mha_bwd: dq_accum); and
 * one step's flash gradients and key-value concatenation in the model's precision. Measured on
 * an H100 (bench/device/cp_ring_memory.py, Llama 3 8B's 32 heads of 128, 32,768 tokens a rank):
 * 7,680, 8,704 and 10,752 MiB over the backward's start at cp 2, 4 and 8, against 7,168, 8,192
 * and 10,240 priced: 512 MiB a rank not accounted for. The forward's fp32 running
 * output and a merge's two fp32 temporaries (3 x 4 bytes an output value) beside the same
 * gathered keys and values hold less wherever the keys and values are at least as wide as the
 * output. Transformer Engine's ring (its default elsewhere) passes one block at a time: not
 * modelled. */
static double pytorch_ring_bytes(const ts_workload *wl, double *gathered) {
  *gathered = 0;
  if (wl->cp <= 1 || wl->cp_attention != TS_CP_ATTENTION_PYTORCH)
    return 0;
  const ts_model *m = &wl->model;
  double eb = ts_cost_elem_bytes(wl->precision), t = (double)wl->tp;
  double rows = (double)wl->micro_batch * (double)ts_workload_local_seq(wl);
  double heads = (double)m->n_heads / t,
         kv_heads = (double)(ts_workload_repeats_kv(wl) ? m->n_heads : m->n_query_groups) / t;
  double q = rows * heads * (double)ts_workload_qk_head_dim(wl),
         kv = rows * kv_heads * (double)(ts_workload_qk_head_dim(wl) + ts_workload_v_head_dim(wl));
  *gathered = eb * (double)wl->cp * kv; /* one allocation: the all-gather's output */
  return *gathered + 4.0 * (q + kv) + 3.0 * 4.0 * kv + 4.0 * q + eb * (q + kv / 2 + kv);
}

/* A layer's activations; moe: with a mixture-of-experts MLP. */
static double layer_activations(const ts_workload *wl, bool moe) {
  const ts_model *m = &wl->model;
  /* s: the tokens of a sequence the rank holds (context parallelism splits them) */
  double s = (double)ts_workload_local_seq(wl), b = (double)wl->micro_batch, h = (double)m->hidden;
  double t = (double)wl->tp, a = (double)m->n_heads;
  /* Korthikanti et al. Table 2, in units of sbh (2 bytes a value, 1 a dropout mask): 10 are
   * replicated across TP ranks unless sequence parallelism shards them too (the two norms'
   * inputs 4, QKV's and FC1's inputs 2 + 2, two dropout masks); the rest are split: Q 2, K and V
   * 2 g/a each (grouped-query attention), the projection's input 2, and the MLP's: GeLU's input
   * and FC2's input, 2 f/h each, or with SwiGLU the gate and up outputs (4 f/h) and FC2's input
   * (2 f/h), and eager SwiGLU's silu(gate) (2 f/h; below). A GPT layer (g = a, f = 4h): 10 + 24
   * = 34. */
  /* With the heads' widths (MLA's differ from h / a): Q and the projection's input 2 a d_qk / h
   * and 2 a d_v / h, K and V 2 g (d_qk + d_v) / h. MLA also keeps its latents, before and after
   * their norms, on every TP rank (its down projections are replicated): 2 (2 q_lora + 2 kv_lora
   * + rotary) / h. */
  /* A linear layer's input is kept for its weight gradient: 2 bytes a value, or 1 with FP8,
   * where Transformer Engine keeps the FP8 copy its GEMMs read (module/linear.py: saves
   * inputmat_t, the FP8 transpose, in 1.x; the column-wise FP8 data alone in 2.x) - the same
   * storage DeepSeek-V3 describes (DeepSeek-AI 2024, section 3.3.2). The router's input stays in
   * the model's precision (its GEMM is not FP8), beside the shared expert's FP8 copy. Block
   * scaling (fp8_recipe blockwise) keeps an fp32 scale per 128 values with it. */
  double fp8_value = 1.0 + (wl->fp8_recipe == TS_FP8_RECIPE_BLOCKWISE ? 4.0 / 128.0 : 0.0);
  double lin = wl->fp8 != TS_FP8_NONE ? fp8_value : 2.0;
  /* torchao's float8 linears, compiled (stack.fp8_linear torchao): the graph keeps neither the
   * norms' outputs nor SwiGLU's product, nor their FP8 casts, and redoes them in the backward;
   * the projection's input (the attention's output) stays in bf16. Measured on an H100
   * (bench/device/float8_block.py): a layer keeps exactly those bf16 bytes fewer than bf16's,
   * 0.738 GB of 2.485 at Llama 3 8B's shape, micro-batch 2 x 8,192, and alike at two others. */
  double lin_proj = lin;
  if (wl->fp8 != TS_FP8_NONE && wl->fp8_linear == TS_FP8_LINEAR_TORCHAO) {
    lin = 0;
    lin_proj = ts_cost_elem_bytes(wl->precision);
  }
  bool shared = moe && m->moe_shared_ffn > 0;
  /* Megatron-Core's recompute modules drop what they recompute: the norms' outputs
   * (layernorm), MLA's normed latents and Q, K, V (mla_up_proj), the experts' FC2 inputs
   * (moe_act). */
  bool norms = ts_workload_recomputes(wl, TS_RECOMPUTE_LAYERNORM),
       up = ts_workload_recomputes(wl, TS_RECOMPUTE_MLA_UP_PROJ),
       act = ts_workload_recomputes(wl, TS_RECOMPUTE_MOE_ACT);
  double f = (double)m->ffn_hidden / h, g = (double)m->n_query_groups;
  double dq = (double)ts_workload_qk_head_dim(wl), dv = (double)ts_workload_v_head_dim(wl);
  /* An MLP's intermediates in units of its width over h: GeLU's input, or SwiGLU's gate and up
   * outputs, FC2's input (unless recomputed) and, SwiGLU run eagerly (without its fusion),
   * F.silu(gate) too for the product's backward (measured: bench/device/h200_llama_steps.csv,
   * docs/validation/h200.md). Hugging Face's eager gelu_new (stack.gelu eager_tanh) keeps tanh's
   * output, 1 + that and 0.5 x beside its input for its products' backward: three more; under
   * autocast pow's fp32 copy of x in place of x, and tanh's output and 1 + that in fp32: 12
   * bytes more (measured on an H100: 12.0, bench/device/h100_hf_gpt2_steps.csv). */
  bool eager = m->swiglu && !ts_workload_fuses(wl, TS_FUSE_SWIGLU);
  bool eager_gelu = wl->gelu_impl == TS_GELU_EAGER_TANH && !wl->is_compiled;
  double mlp = (m->swiglu ? 4.0 : 2.0) + (eager ? 2.0 : 0) +
               (eager_gelu ? (wl->is_autocast ? 12.0 : 6.0) : 0) + lin;
  double mlp_experts = (m->swiglu ? 4.0 : 2.0) + (act ? 0 : (eager ? 2.0 : 0) + lin);
  /* K and V repeated to every head before SDPA (ts_workload_repeats_kv): SDPA keeps the copies */
  double kv_heads = ts_workload_repeats_kv(wl) ? a : g;
  double attention = (up ? 0 : 2.0 * (a * dq + kv_heads * (dq + dv)) / h) + lin_proj * a * dv / h;
  /* flash-attn's pad_input (stack.unpad_input): the projection's input is the padded copy of the
   * output FlashAttention-2 keeps unpadded for its backward, both live. */
  if (wl->is_unpad_input)
    attention += 2.0 * a * dv / h;
  double split = attention + (moe ? mlp * (double)m->moe_shared_ffn / h : mlp * f);
  /* Without hidden dropout its two masks are not kept. torchtitan's eager RMSNorm (stack.h)
   * keeps its fp32 upcast (pow's input) and the normalised values (the weight product's input)
   * where F.rms_norm keeps its input: 4 bytes more a value a norm (a Llama 3 8B layer's
   * activations measured 215,145 bytes a token on an H100, 212,668 here:
   * bench/device/h100_op_sac.csv). flash-attn's fused_dropout_add_ln keeps each norm's input
   * as its fp32 residual (stack.h), and so does nn.LayerNorm under autocast
   * (ts_workload_residual_fp32): 2 bytes more a value a norm. */
  double replicated =
      4.0 + (m->hidden_dropout > 0 ? 2.0 : 0) +
      (m->rms_norm && wl->rms_norm_impl == TS_RMS_NORM_EAGER_FP32 && !wl->is_compiled ? 8.0 : 0) +
      (ts_workload_fuses(wl, TS_FUSE_DROPOUT_ADD_LAYER_NORM) || ts_workload_residual_fp32(wl) ? 4.0
                                                                                              : 0);
  if (!norms)
    replicated += lin + (moe ? 2.0 + (shared && lin < 2.0 ? 1.0 : 0) : lin);
  double per = wl->sequence_parallel ? (replicated + split) / t : replicated + split / t;
  if (m->mla) {
    double q = (double)m->q_lora_rank, kv = (double)m->kv_lora_rank;
    per += (2.0 * (q + kv) + 2.0 * (double)m->qk_pos_emb_head_dim + (up ? 0 : lin * (q + kv))) / h;
  }
  /* A MoE MLP (the 10 keep the router's input where FC1's was): each rank's experts keep their
   * input, 2 bytes a value of the r = k etp / t x the token factor copies of the rank's
   * tokens (per token of b s), and their FC1 outputs and FC2 input, (6 or 4) f_e / (etp h)
   * each (8 eager); and what weighing their outputs keeps (below). */
  /* The weighting of the expert outputs by the router's probabilities keeps what the scores'
   * gradient needs: torchtitan casts the expert outputs to fp32 and multiplies them (moe.py,
   * `routed_output.to(torch.float32) * top_scores`: 4 bytes a value of the k / t copies), as
   * plain PyTorch here; today's Megatron-Core multiplies inside the experts' activation
   * (experts.py, activation_func_with_probs; the dispatcher's combine_preprocess only restores
   * the order), keeping each copy's fp32 probability. The router keeps its fp32 scores (E
   * values a token) and the top-k's indices and scores (8 + 4 bytes each). */
  if (moe) {
    double etp = (double)ts_workload_etp(wl), k = (double)m->moe_topk;
    double r = k * etp / t * ts_workload_moe_token_factor(wl);
    double weighed = ts_framework_is_pytorch(wl->framework) ? 4.0 * k / t : 4.0 * r / h;
    double router = (4.0 * (double)m->n_experts + 12.0 * k) / h;
    per += lin * r + mlp_experts * r * (double)m->moe_ffn_hidden / (etp * h) + weighed + router / t;
  }
  bool scores =
      wl->recompute == TS_RECOMPUTE_NONE || (wl->recompute == TS_RECOMPUTE_SELECTIVE &&
                                             !ts_workload_recomputes(wl, TS_RECOMPUTE_CORE_ATTN));
  /* Under autocast each linear layer keeps the cast copy of its weight for the backward (dense
   * layers only: workload.c refuses autocast with experts), made anew at every microbatch's
   * forward; the norms' weights are counted with them (4h of 12h^2). */
  double copies =
      wl->is_autocast ? ts_cost_elem_bytes(wl->precision) * ts_cost_layer_params(wl) : 0;
  /* A plain PyTorch Llama block projects q, k and v apart: under autocast each casts the fp32
   * norm output anew and keeps its copy, two more than a fused projection's (measured on an
   * H100, bench/device/h100_amp_steps.csv: without them the peaks were 1.0-2.2% low) */
  if (wl->is_autocast && ts_framework_is_pytorch(wl->framework) && m->rope)
    copies += 2.0 * ts_cost_elem_bytes(wl->precision) * s * b * h / (double)wl->tp;
  return s * b * h * per + (scores ? unfused_scores(wl) : 0) + copies;
}

double ts_memory_layer_activations(const ts_workload *wl) {
  return layer_activations(wl, false);
}

double ts_memory_moe_layer_activations(const ts_workload *wl) {
  return layer_activations(wl, true);
}

/* What torchtitan's op-level selective checkpointing (recompute: op) keeps of a layer, in bytes
 * a microbatch: the layer's input, and the outputs of the operations its save list names
 * (torchtitan parallelize_llama.py at 9dec370, _save_list and _custom_policy): every aten.mm
 * of the layer's forward but every second one (in order wq, wk, wv, wo, then w1, w3, w2 with
 * SwiGLU's gate and up separate, torchtitan's, or fc1, fc2: wq, wv, w1 and w2 are kept, or wq,
 * wv and fc1, twice the FFN wide with SwiGLU's gate and up fused) and the attention
 * kernel's output with its fp32 log-sum-exp (4 bytes a head). Measured on an H100
 * (bench/device/h100_op_sac.csv): 63,615 bytes a token of a Llama 3 8B layer, 63,616 here. */
static double op_saved(const ts_workload *wl) {
  const ts_model *m = &wl->model;
  double eb = ts_cost_elem_bytes(wl->precision), h = (double)m->hidden, a = (double)m->n_heads;
  double g = (double)m->n_query_groups, f = (double)m->ffn_hidden;
  double dq = (double)ts_workload_qk_head_dim(wl), dv = (double)ts_workload_v_head_dim(wl);
  /* compiled (stack.compile), the graph keeps only what the backward needs: not w2's output
   * (measured: 55,420 bytes a token, bench/device/h100_compile_block.csv) */
  double last = m->swiglu && !wl->is_compiled ? h : 0;
  bool split = m->swiglu && wl->gate_up == TS_GATE_UP_SEPARATE;
  double mm[] = {a * dq,        g * dq,          g * dv, h, split ? f : m->swiglu ? 2 * f : f,
                 split ? f : h, split ? last : 0};
  double per = h + a * dv + 4.0 * a / eb;
  for (int k = 0; k < 7; k += 2) /* the first, third, ... */
    per += mm[k];
  return eb * per * (double)ts_workload_local_seq(wl) * (double)wl->micro_batch;
}

/* What a deferred weight gradient (zb-h1's W) keeps of a layer, in bytes a microbatch: what
 * its GEMMs read, the inputs of QKV, the projection, FC1 and FC2 and the gradients of their
 * outputs (Qi et al., ICLR 2024, section 2: W needs a linear layer's input and its output's
 * gradient), as stored between B and W on each TP rank: sequence parallelism keeps the h-wide
 * ones s/t-sharded. A MoE layer: the router's and its experts' (on their token copies) and
 * the shared expert's. MLA's latent GEMMs are counted as standard attention's (ASSUMED). */
static double wgrad_pending(const ts_workload *wl, bool moe) {
  const ts_model *m = &wl->model;
  double t = (double)wl->tp, h = (double)m->hidden, a = (double)m->n_heads;
  double g = (double)m->n_query_groups, glu = m->swiglu ? 2.0 : 1.0;
  double dq = (double)ts_workload_qk_head_dim(wl), dv = (double)ts_workload_v_head_dim(wl);
  double wide = wl->sequence_parallel ? h / t : h; /* an h-wide input or gradient */
  /* QKV's input and the projection's output gradient; the projection's input; QKV's output
   * gradient */
  double attn = 2 * wide + a * dv / t + (a * dq + g * (dq + dv)) / t;
  double mlp_of = moe ? (double)m->moe_shared_ffn : (double)m->ffn_hidden;
  /* FC1's input and FC2's output gradient; FC2's input and FC1's output gradient */
  double per = attn + (mlp_of > 0 ? 2 * wide + (1 + glu) * mlp_of / t : 0);
  if (moe) {
    double etp = (double)ts_workload_etp(wl), k = (double)m->moe_topk;
    double r = k * etp / t * ts_workload_moe_token_factor(wl);
    per +=
        (h + (double)m->n_experts) / t + r * (2 * h + (1 + glu) * (double)m->moe_ffn_hidden / etp);
  }
  return ts_cost_elem_bytes(wl->precision) * (double)ts_workload_local_seq(wl) *
         (double)wl->micro_batch * per;
}

/* zb-h1 and zb-v: a chunk keeps its activations from its F to its B, and what its W reads from
 * its B to its W. The most a stage holds at once over its pass order, of `whole` bytes a
 * microbatch of the stage's activations and `pending` bytes a microbatch of deferred W's (each
 * chunk its share); *in_flight the microbatches' worth of activations then. */
static double zero_bubble_peak(const ts_workload *wl, long stage, double whole, double pending,
                               double *in_flight) {
  long v = ts_workload_chunks(wl), m = ts_workload_microbatches(wl);
  long *steps = ts_alloc((size_t)ts_schedule_n_blocks(wl), sizeof(long));
  long n = ts_schedule_order(wl->schedule, wl->pp, v, stage, m, steps);
  double layers = (double)ts_workload_stage_layers(wl, stage), held = 0, waiting = 0, peak = 0;
  *in_flight = 0;
  for (long k = 0; k < n; k++) {
    long c = ts_schedule_step_chunk(steps[k], v);
    double share = layers > 0 ? (double)ts_workload_vstage_layers(wl, c * wl->pp + stage) / layers
                              : 1.0 / (double)v;
    char pass = ts_schedule_step_pass(steps[k]);
    held += pass == 'F' ? share : pass == 'B' ? -share : 0;
    waiting += pass == 'B' ? share : pass == 'W' ? -share : 0;
    if (held * whole + waiting * pending > peak) {
      peak = held * whole + waiting * pending;
      *in_flight = held;
    }
  }
  free(steps);
  return peak;
}

long ts_memory_chunks_in_flight(const ts_workload *wl, long stage) {
  long p = wl->pp, v = ts_workload_chunks(wl), total = ts_workload_microbatches(wl) * v;
  /* dualpipe: p + 1 chunks' activations (DeepSeek-AI 2024, Table 2: PP + 1, counted in a
   * 1F1B stage's microbatch, which a chunk's is), on every rank (its peak) */
  if (wl->schedule == TS_SCHED_ZB_V) { /* the most chunks between their F and their B */
    double in_flight = 0;
    zero_bubble_peak(wl, stage, 1.0, 0.0, &in_flight);
    return (long)(in_flight * (double)v + 0.5);
  }
  long held = wl->schedule == TS_SCHED_GPIPE      ? total
              : wl->schedule == TS_SCHED_DUALPIPE ? p + 1
              : wl->schedule == TS_SCHED_1F1B || wl->schedule == TS_SCHED_ZB_H1
                  ? p - stage
                  : 2 * (p - stage - 1) + (v - 1) * p + 1;
  return held < total ? held : total;
}

ts_state_bytes ts_memory_state_bytes(const ts_workload *wl) {
  double eb = ts_cost_elem_bytes(wl->precision);
  bool low = wl->precision != TS_PREC_FP32;
  bool deepspeed = (wl->framework == TS_FRAMEWORK_MEGATRON_DEEPSPEED ||
                    wl->framework == TS_FRAMEWORK_GPT_NEOX) &&
                   (ts_workload_zero(wl) == 1 || ts_workload_zero(wl) == 2) && low;
  if (deepspeed)
    return (ts_state_bytes){eb, eb, 16.0, true};
  /* the master weights (a low-precision model: fp32, or master_weights'), Adam's two
   * moments; DeepSpeed's ZeRO-3
   * keeps its gradient partitions in the model's precision (stage3.py's averaged_gradients,
   * reduced through its ipg buckets), casting them to fp32 only at the step (below) */
  double moments = (wl->exp_avg_bytes > 0 ? wl->exp_avg_bytes : 4.0) +
                   (wl->exp_avg_sq_bytes > 0 ? wl->exp_avg_sq_bytes : 4.0);
  if (wl->is_autocast) /* fp32 weights and gradients, no master copy */
    return (ts_state_bytes){4.0, 4.0, moments, false};
  bool deepspeed3 = ts_workload_zero(wl) == 3 && !wl->is_fsdp;
  /* Plain PyTorch's FSDP (ZeRO-3) under a mixed-precision policy keeps its shards in fp32,
   * casting them at each gather, and the optimizer steps the shards themselves: no master copy
   * (measured with FSDP2, MixedPrecisionPolicy(bf16, fp32), AdamW: 4.000, 4.002 and 8.000 bytes
   * a parameter, bench/device/h100_op_sac_fsdp2.csv). Megatron's --fsdp is left as it was. */
  if (ts_workload_zero(wl) == 3 && ts_framework_is_pytorch(wl->framework) && low)
    return (ts_state_bytes){4.0, 4.0, moments, false};
  double master =
      wl->master_weight_bytes > 0 || wl->is_master_weights_none ? wl->master_weight_bytes : 4.0;
  return (ts_state_bytes){eb, deepspeed3 ? eb : ts_workload_grad_bytes(wl),
                          (low ? master : 0) + moments, false};
}

/* DeepSpeed's ZeRO-3 step: each sub-group of the rank's partition (sub_group_size elements:
 * 1e12 to 0.4.0, 1e9 from 0.4.1, deepspeed/runtime/zero/constants.py) has its gradients
 * flattened and cast to fp32 (_prepare_fp32_grad_for_sub_group: flatten(...).to(fp32)), the
 * two copies alive at once, and the fp32 one until that sub-group is stepped; an fp32 model's
 * cast returns the flat copy itself. */
static double deepspeed_zero3_step_bytes(const ts_workload *wl, double partition_elems) {
  long v = wl->deepspeed_version;
  double sub_group = v > 0 && v <= 400 ? 1e12 : 1e9;
  double elems = partition_elems < sub_group ? partition_elems : sub_group;
  double eb = ts_cost_elem_bytes(wl->precision);
  return (eb + (eb < 4.0 ? 4.0 : 0.0)) * elems;
}

void ts_memory_stage(const ts_workload *wl, long stage, ts_memory *out) {
  const ts_model *m = &wl->model;
  double params = ts_cost_stage_params(wl, stage), expert = ts_cost_stage_expert_params(wl, stage);
  ts_state_bytes per = ts_memory_state_bytes(wl);
  /* The distributed optimizer shards the experts' states over expert data parallelism. */
  double shard = ts_workload_zero(wl) >= 1 ? (double)ts_workload_shard_ranks(wl) : 1.0;
  double expert_shard = ts_workload_zero(wl) >= 1 ? (double)ts_workload_edp(wl) : 1.0;
  double elem = ts_cost_elem_bytes(wl->precision), d = (double)ts_workload_shard_ranks(wl);
  out->bytes[TS_MEM_WEIGHTS] = params * per.weight / (ts_workload_zero(wl) >= 3 ? d : 1.0);
  bool deepspeed3 = ts_workload_zero(wl) == 3 && d > 1 && !wl->is_fsdp;
  double gathered = 0, whole = 0;
  if (deepspeed3) { /* DeepSpeed's small parameters whole on every rank */
    ts_zero3_stage_memory(wl, stage, &gathered, &whole);
    out->bytes[TS_MEM_WEIGHTS] = elem * ((params - whole) / d + whole);
  }
  if (wl->fp8 != TS_FP8_NONE && wl->fp8_linear == TS_FP8_LINEAR_TE) {
    /* Transformer Engine's FP8 copy of each layer weight and its transpose (1 + 1 bytes, and an
     * fp32 scale per 128 x 128 block of each with block scaling; the embedding and output stay
     * bf16); torchao's casts its weights anew at every microbatch */
    double edges =
        (ts_workload_stage_has_embedding(wl, stage)
             ? (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)m->hidden +
                   ts_workload_position_params(wl)
             : 0) +
        (ts_workload_stage_has_head(wl, stage) ? ts_workload_head_params(wl) : 0);
    double scales = wl->fp8_recipe == TS_FP8_RECIPE_BLOCKWISE ? 4.0 / (128.0 * 128.0) : 0.0;
    out->bytes[TS_MEM_WEIGHTS] += 2.0 * (1.0 + scales) * (params - edges);
  }
  out->bytes[TS_MEM_GRADIENTS] = params * per.gradient / (ts_workload_zero(wl) >= 2 ? d : 1.0);
  out->bytes[TS_MEM_OPTIMIZER] = ((params - expert) / shard + expert / expert_shard) * per.sharded;
  double layer = ts_cost_layer_params(wl),
         word = (double)ts_workload_padded_vocab(wl) / (double)wl->tp * (double)m->hidden;
  out->bytes[TS_MEM_BUFFERS] = 0;
  double embedding = word + ts_workload_position_params(wl);
  double gathered_alloc = 0; /* ZeRO-3's largest gathered or reduced tensor, one allocation */
  if (deepspeed3) {
    /* DeepSpeed: the weights its trace holds gathered at most (zero3.h), one reduce bucket in
     * the model's precision, and the largest weight's gradient before its copy into it */
    double bucket =
        wl->dp_bucket_bytes > 0 ? wl->dp_bucket_bytes : TS_DEEPSPEED_BUCKET_ELEMS * elem;
    ts_zero3_module mods[TS_ZERO3_LAYER_MODULES];
    ts_zero3_layer_modules(wl, mods);
    double position = ts_workload_position_params(wl);
    double largest = word > position ? word : position;
    for (int i = 0; i < TS_ZERO3_LAYER_MODULES; i++)
      largest = mods[i].elems[0] > largest ? mods[i].elems[0] : largest;
    /* Before 0.6.0 every reduce-scatter (and before 0.5.5 every gather) goes through
     * PyTorch's list API, whose ProcessGroupNCCL flattens the list into a new tensor of the
     * whole parameter (flatten_for_scatter_gather: newLikeFlat, world size x the shard), freed
     * once the collective and its copies end: one at a time, since each gather follows a
     * device synchronisation; the largest parameter's */
    ts_deepspeed_path path = ts_deepspeed_zero3_path(wl->deepspeed_version);
    double flattened = path != TS_DEEPSPEED_COALESCED ? largest : 0;
    out->bytes[TS_MEM_BUFFERS] = elem * gathered +
                                 (bucket < elem * params ? bucket : elem * params) +
                                 elem * (largest + flattened);
    gathered_alloc = elem * largest; /* a parameter gathered whole (and its flat copy) */
    if (path != TS_DEEPSPEED_COALESCED && !wl->contiguous_gradients) {
      /* no bucket buffer: a bucket's gradients (the largest alone where it exceeds the bucket)
       * and their flattened copy under its all-reduce (stage3.py, allreduce_bucket); the flat
       * copy of a list gather before 0.5.5 */
      double reduced = bucket > elem * largest ? bucket : elem * largest;
      reduced = reduced < elem * params ? reduced : elem * params;
      out->bytes[TS_MEM_BUFFERS] =
          elem * gathered + 2.0 * reduced + (path == TS_DEEPSPEED_LIST ? elem * largest : 0);
      gathered_alloc = reduced > gathered_alloc ? reduced : gathered_alloc;
    }
  } else if (ts_workload_zero(wl) == 3 && d > 1) { /* the first gather carries the embedding */
    out->bytes[TS_MEM_BUFFERS] =
        elem * (2.0 * layer + embedding) + 4.0 * (layer > embedding ? layer : embedding);
    gathered_alloc = 4.0 * (layer > embedding ? layer : embedding); /* a unit's fp32 gradients */
  } else if (per.is_deepspeed) /* its two reduction buckets (memory.h) */
    out->bytes[TS_MEM_BUFFERS] = 2.0 * TS_DEEPSPEED_BUCKET_ELEMS * elem;
  else if (ts_framework_is_pytorch(wl->framework) && ts_workload_zero(wl) <= 1 &&
           ts_workload_dp_cp(wl) > 1 && !wl->is_gradient_as_bucket_view)
    /* PyTorch DDP (and ZeroRedundancyOptimizer beside it): its reducer all-reduces buckets of
     * the gradients, in the parameters' dtype, kept for the whole run; unless the gradients are
     * views of them (gradient_as_bucket_view, default False: "the saved memory size will be
     * equal to the total gradients size", torch.nn.parallel.DistributedDataParallel's docs) */
    out->bytes[TS_MEM_BUFFERS] = (wl->is_autocast ? 4.0 : elem) * params;
  else if (ts_workload_zero(wl) == 2 && d > 1)
    out->bytes[TS_MEM_BUFFERS] =
        ts_cost_bucket_bytes(wl) > 0 && ts_cost_bucket_bytes(wl) < 4.0 * params
            ? ts_cost_bucket_bytes(wl)
            : 4.0 * params;

  long micro = ts_workload_microbatches(wl);
  /* Layer activations scale with stage-microbatches in flight: chunks / v. The logits live
   * from the last chunk's forward to its backward: one microbatch but under GPipe. */
  double in_flight = (double)ts_memory_chunks_in_flight(wl, stage) / (double)ts_workload_chunks(wl);
  double logits_in_flight = wl->schedule == TS_SCHED_GPIPE ? (double)micro : 1.0;
  /* MTP modules keep a layer's activations each (their layer of the last decoder layer's
   * kind), and their entry's inputs: the embedding and the hidden state its norms read, and
   * eh_proj's 2h-wide input. */
  double mtp = (double)ts_workload_stage_mtp_layers(wl, stage);
  double layers = (double)ts_workload_stage_layers(wl, stage) + mtp;
  double moe_layers = (double)ts_workload_stage_moe_layers(wl, stage) +
                      (ts_workload_is_moe_layer(wl, m->n_layers) ? mtp : 0);
  double s = (double)ts_workload_local_seq(wl), b = (double)wl->micro_batch, h = (double)m->hidden;
  double dense = ts_memory_layer_activations(wl);
  double moe = moe_layers > 0 ? ts_memory_moe_layer_activations(wl) : 0;
  double input = 2.0 * s * b * h / (wl->sequence_parallel ? (double)wl->tp : 1.0);
  double all = (layers - moe_layers) * dense + moe_layers * moe + mtp * 4.0 * input;
  /* Full recomputation keeps each layer's input: 2sbh, or 2sbh/t sequence-sharded, and one
   * layer's activations while it is recomputed; recomputed attention (full or selective)
   * without flash also holds one layer's scores then. torchtitan's op policy keeps op_saved a
   * layer, and one layer's activations while it is recomputed (measured: 3.66 GB over the
   * kept at a Llama 3 8B layer's backward, whose activations are 3.53 GB, h100_op_sac.csv). */
  bool full = wl->recompute == TS_RECOMPUTE_FULL, op = wl->recompute == TS_RECOMPUTE_OP;
  /* a layer, recomputing all or ops; an fp32 residual stream keeps the input in fp32 */
  double kept = full ? input * (ts_workload_residual_fp32(wl) ? 2.0 : 1.0) : op ? op_saved(wl) : 0;
  double recomputed = moe > dense ? moe : dense;
  bool recomputes_core = full || ts_workload_recomputes(wl, TS_RECOMPUTE_CORE_ATTN);
  if (recomputes_core && layers > 0)
    recomputed += unfused_scores(wl);
  double ring_gathered = 0, ring = layers > 0 ? pytorch_ring_bytes(wl, &ring_gathered) : 0;
  recomputed += ring; /* a layer's backward, beside its activations */
  double act = full || op ? layers * in_flight * kept : in_flight * all;
  if (wl->schedule == TS_SCHED_ZB_H1 || wl->schedule == TS_SCHED_ZB_V) {
    double pending =
        (layers - moe_layers) * wgrad_pending(wl, false) + moe_layers * wgrad_pending(wl, true);
    act = zero_bubble_peak(wl, stage, full || op ? layers * kept : all, pending, &in_flight);
  }
  /* The logits at the loss (workload.h, ts_framework): Megatron-LM's cross-entropy works in
   * place on one fp32 copy beside the low-precision logits; PyTorch's F.cross_entropy on fp32
   * logits keeps its log-softmax (4 B) and, when the backward starts, nll_loss's dense fp32
   * gradient (4) and log-softmax's input gradient (4), all live at once; flash-attn's fused
   * cross-entropy (stack.h) keeps the low-precision logits and writes their gradient (2 eb). */
  double eb = ts_cost_elem_bytes(wl->precision);
  bool fused_ce = ts_workload_fuses(wl, TS_FUSE_CROSS_ENTROPY);
  double per_logit = fused_ce                                 ? 2.0 * eb
                     : ts_framework_is_pytorch(wl->framework) ? 12.0
                                                              : eb + (eb < 4.0 ? 4.0 : 0.0);
  /* Each MTP module's loss keeps logits of its own beside the output layer's. */
  double losses = (ts_workload_stage_has_head(wl, stage) ? 1.0 : 0.0) + mtp;
  double logit_values =
      logits_in_flight * losses * s * b * (double)ts_workload_padded_vocab(wl) / (double)wl->tp;
  double head_cast = wl->is_autocast && ts_workload_stage_has_head(wl, stage) /* its cast copy */
                         ? eb * (double)ts_workload_padded_vocab(wl) / (double)wl->tp * h
                         : 0;
  double logits = logit_values * per_logit + head_cast;
  /* Beside the logits at the loss: the final norm's input (the last layer's output, kept by the
   * norm) and its output (kept by the output layer's matmul for its weight gradient), sequence-
   * sharded with sequence parallelism; and, on the embedding's stage, the embedding dropout's
   * mask (1 byte a value) of every microbatch in flight, kept to the embedding's backward. The
   * terms Korthikanti et al. (arXiv:2205.05198) count for the input and output layers. Without
   * them the backward peaks of bench/device/h100_allocator_expandable.csv exceeded the model by
   * 2.5 sbh values of GPT (gpt.py: hidden dropout 0.1), 0.77-0.85 GiB with full recomputation. */
  double final_norm =
      ts_workload_stage_has_head(wl, stage)
          ? logits_in_flight * 2.0 * eb * s * b * h / (wl->sequence_parallel ? (double)wl->tp : 1.0)
          : 0;
  if (ts_workload_stage_has_embedding(wl, stage) && m->hidden_dropout > 0)
    act += in_flight * input / 2.0;
  /* Without full (or op) recomputation the logits come on top of every layer's activations (all
   * live at the loss); with it, a layer's activations exist only while it is recomputed, after the
   * loss's backward has freed the logits' buffers: the larger of the two is live. */
  if (full || op)
    act += logits + final_norm > recomputed ? logits + final_norm : recomputed;
  else /* the ring's working set comes after the loss's backward has freed the logits */
    act += (recomputes_core && layers > 0 ? unfused_scores(wl) : 0) +
           (logits + final_norm > ring ? logits + final_norm : ring);
  /* What the step holds beside the weights, optimizer and buffers at its peak: the activations
   * with every gradient, as a rule. PyTorch's automatic mixed precision holds two other moments
   * that can peak. The forward's end, inside the autocast region: torch.autocast caches the
   * cast copy of each fp32 weight it casts until the region exits (aten/src/ATen/
   * autocast_mode.cpp, cached_cast; cleared on exit), so under full recomputation, whose layers
   * keep no cast of their own, every layer's copy is live at the loss; and plain PyTorch's loss
   * then holds the low-precision logits, their fp32 copy and log-softmax's output (eb + 8 bytes
   * a logit, where the backward's start holds 12). The gradients: zero_grad(set_to_none=True),
   * PyTorch's default since 2.0, frees every .grad after the step and the first backward makes
   * them anew as it goes: with one microbatch a step none exists at the loss, and all of them at
   * the backward's end beside the first layer's working set. Measured on an H100
   * (bench/device/h100_amp_steps.csv). */
  double grads = out->bytes[TS_MEM_GRADIENTS], held = act + grads;
  if (wl->is_autocast) {
    double cache = full ? eb * layers * ts_cost_layer_params(wl) : 0;
    double logits_fwd = fused_ce || !ts_framework_is_pytorch(wl->framework)
                            ? logits
                            : logit_values * (eb + 8.0) + head_cast;
    double forward_end =
        (full ? layers * in_flight * kept : in_flight * all) + cache + final_norm + logits_fwd;
    double at_loss = fmax(forward_end, act);
    double late = full ? kept + recomputed : dense; /* the first layer's, at the backward's end */
    bool made_in_backward = micro == 1;
    held = fmax(at_loss + (made_in_backward ? 0 : grads), late + grads);
    act = held == late + grads ? late : at_loss;
  }
  out->bytes[TS_MEM_ACTIVATIONS] = act;
  out->microbatches_in_flight = in_flight;
  /* torch.optim's foreach Adam (_multi_tensor_adam) takes exp_avg_sq_sqrt =
   * torch._foreach_sqrt(exp_avg_sqs): a new list as large as the second moments it steps,
   * alive until the parameters are updated; the fused kernel works in place. */
  double stepped = out->bytes[TS_MEM_OPTIMIZER] / per.sharded; /* the rank's parameters */
  out->step_bytes = wl->adam_implementation == TS_ADAM_FOREACH
                        ? stepped * (wl->exp_avg_sq_bytes > 0 ? wl->exp_avg_sq_bytes : 4.0)
                        : 0;
  if (ts_workload_zero(wl) == 3 && !wl->is_fsdp)
    out->step_bytes += deepspeed_zero3_step_bytes(wl, stepped);
  out->total_bytes = fmax(held, out->step_bytes + grads);
  for (int c = 0; c < TS_MEM_COUNT; c++)
    if (c != TS_MEM_ACTIVATIONS && c != TS_MEM_GRADIENTS)
      out->total_bytes += out->bytes[c];
  double local = s * b / (double)wl->tp, width = (double)m->ffn_hidden * (m->swiglu ? 2.0 : 1.0);
  double largest = layers > 0 ? eb * local * width : 0;
  if (moe_layers > 0) {
    double moe_width = (double)m->moe_ffn_hidden * (m->swiglu ? 2.0 : 1.0);
    double copies = eb * s * b / (double)wl->tp * (double)m->moe_topk *
                    ts_workload_moe_token_factor(wl) * (h > moe_width ? h : moe_width);
    largest = copies > largest ? copies : largest;
  }
  double logits_alloc = losses > 0 ? (fused_ce ? eb : 4.0) * s * b *
                                         (double)ts_workload_padded_vocab(wl) / (double)wl->tp
                                   : 0;
  out->largest_alloc_bytes = fmax(fmax(fmax(logits_alloc, largest), gathered_alloc), ring_gathered);
}

bool ts_memory_fragmentation_risk(const ts_workload *wl, const ts_memory *m, double usable_bytes) {
  return wl->allocator == TS_ALLOCATOR_CACHING && m->total_bytes <= usable_bytes &&
         m->total_bytes + m->largest_alloc_bytes > usable_bytes;
}

double ts_memory_peak(const ts_workload *wl, long *stage) {
  long best = 0;
  double peak = -1;
  for (long s = 0; s < wl->pp; s++) {
    ts_memory mem;
    ts_memory_stage(wl, s, &mem);
    if (mem.total_bytes > peak) {
      peak = mem.total_bytes;
      best = s;
    }
  }
  if (stage != NULL)
    *stage = best;
  return peak;
}

int ts_memory_smallest_layout(const ts_workload *wl, long max_tp, long max_gpus, const ts_gpu *gpu,
                              ts_workload *out) {
  const ts_model *m = &wl->model;
  ts_workload best, c = *wl; /* the workload's own first and last stage layers kept */
  double best_peak = 0;
  long best_gpus = 0;
  for (long tp = 1; tp <= max_tp; tp++) {
    if (m->n_heads % tp != 0 || m->n_query_groups % tp != 0 || m->ffn_hidden % tp != 0 ||
        (wl->sequence_parallel && ts_workload_local_seq(wl) % tp != 0))
      continue;
    for (long pp = 1; pp <= m->n_layers; pp++) {
      bool interleaved = wl->virtual_stages > 1;
      c.pp = pp;
      if (ts_workload_check_stage_layers(&c, NULL) != 0 || ts_workload_zero_refuses_pipeline(&c) ||
          (interleaved && (pp < 2 || m->n_layers % (pp * wl->virtual_stages) != 0)))
        continue;
      for (long dp = 1; dp * wl->micro_batch <= wl->global_batch; dp++) {
        long gpus = tp * pp * dp * wl->cp; /* context parallelism kept as given */
        if (gpus > max_gpus || (best_gpus > 0 && gpus > best_gpus))
          break; /* larger dp only adds GPUs */
        if (wl->global_batch % (wl->micro_batch * dp) != 0 ||
            (interleaved && wl->global_batch / (wl->micro_batch * dp) % pp != 0))
          continue;
        c.tp = tp;
        c.pp = pp;
        c.dp = dp;
        c.n_gpus = gpus;
        if (ts_workload_check_experts(&c, NULL) != 0)
          continue;
        long stage = 0;
        double peak = ts_memory_peak(&c, &stage);
        if (peak > ts_gpu_usable_bytes(gpu) ||
            (best_gpus > 0 && (gpus > best_gpus || (gpus == best_gpus && peak >= best_peak))))
          continue;
        double usable = ts_usable_bytes(gpu, &c); /* NCCL's for this layout: only where needed */
        if (peak > usable)
          continue;
        ts_caching_allocator_stats st;
        if (ts_step_requests_blocks_fit(&c, usable, &st)) {
          best = c;
          best_gpus = gpus;
          best_peak = peak;
        }
      }
    }
  }
  if (best_gpus == 0)
    return -1;
  *out = best;
  return 0;
}
