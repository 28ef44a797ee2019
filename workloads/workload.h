/* workload: a model, its training run and its parallel layout, read from a workload file
 * (keys follow Megatron-LM's argument names) and overridden from the command line.
 *
 * After ts_workload_resolve() every invariant the generators rely on holds: tp divides the
 * heads, the query groups and the FFN width; dp x micro-batch divides
 * the global batch; tp x pp x dp = GPUs; with sequence parallelism, tp divides the sequence;
 * the stages' layers add up to num_layers (pp divides them, or the middle stages split evenly
 * what the first and last stages leave);
 * with virtual stages v > 1 the schedule is interleaved, pp x v divides the layers and pp divides
 * the microbatches (Megatron-LM's conditions for its interleaved schedule). Each
 * value remembers where it came from so an inconsistency is reported at the key (or flag) that set
 * it.
 */
#ifndef TS_WORKLOAD_H
#define TS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gpu.h"
#include "stack.h"

/* The most layers a moe_layer_freq list may describe. */
#define TS_MOE_MAX_LAYERS 1024
/* The most layers a model may have: a bound on the work layer by layer (memory's and search's
 * layouts of a 100-million-layer model would take hours); today's deepest LLMs have about 100
 * to 200 (Llama 3.1 405B: 126). */
#define TS_MAX_LAYERS 10000
/* The most microbatches a pipeline may run in an iteration (ts_schedule_build's limit on the
 * programs' storage). */
#define TS_MAX_MICROBATCHES 1000000
/* The most (virtual) stages a pipeline_model_parallel_layout may list. */
#define TS_LAYOUT_MAX_STAGES 1024

typedef enum ts_schedule_kind {
  TS_SCHED_GPIPE,
  TS_SCHED_1F1B,
  TS_SCHED_INTERLEAVED, /* 1F1B over virtual stages (Narayanan et al. SC'21, section 2.2) */
  TS_SCHED_ZB_H1, /* zero bubble H1: backward split into B and W (Qi et al., ICLR 2024) */
  TS_SCHED_DUALPIPE, /* DeepSeek-V3's bidirectional schedule (DeepSeek-AI 2024, section 3.2.1) */
  TS_SCHED_ZB_V /* zero bubble V: two chunks a rank in a V (Qi et al., arXiv:2401.10241, 6) */
} ts_schedule_kind;
/* What the backward pass recomputes: nothing; selective (Megatron's: the attention core, or the
 * modules recompute_modules names); full (each layer's forward); op (torchtitan's op-level
 * selective checkpointing, activation_checkpoint.selective_ac_option "op": a layer keeps its
 * input and the outputs of its matrix multiplications but every second one and of its attention
 * kernel, and its backward re-runs the rest of its forward; plain PyTorch only). */
typedef enum ts_recompute {
  TS_RECOMPUTE_NONE,
  TS_RECOMPUTE_SELECTIVE,
  TS_RECOMPUTE_FULL,
  TS_RECOMPUTE_OP
} ts_recompute;
typedef enum ts_axis { TS_AXIS_TP, TS_AXIS_DP, TS_AXIS_PP, TS_AXIS_COUNT } ts_axis;

/* Megatron-Core's recompute_modules (with recompute: selective), a bit each; the last three
 * are Megatron-Core's too but not modelled (refused). */
typedef enum ts_recompute_module {
  TS_RECOMPUTE_CORE_ATTN = 1 << 0, /* the attention core (the default) */
  TS_RECOMPUTE_MOE_ACT = 1 << 1, /* the routed experts' activation function */
  TS_RECOMPUTE_LAYERNORM = 1 << 2, /* the input and pre-MLP norms */
  TS_RECOMPUTE_MLA_UP_PROJ = 1 << 3, /* MLA's latent norms, up projections and rotary part */
  TS_RECOMPUTE_MLP = 1 << 4,
  TS_RECOMPUTE_MOE = 1 << 5,
  TS_RECOMPUTE_SHARED_EXPERTS = 1 << 6
} ts_recompute_module;
extern const char *const ts_recompute_module_names[]; /* in bit order */

extern const char *const ts_schedule_names[]; /* "gpipe", "1f1b", "interleaved" */
extern const char *const ts_recompute_names[]; /* "none", "selective", "full", "op" */
extern const char *const ts_order_names[]; /* "tp-dp-pp", ... innermost first */

/* How a MoE router turns its logits into scores (Megatron-Core's moe_router_score_function). */
typedef enum ts_moe_score { TS_MOE_SOFTMAX, TS_MOE_SIGMOID } ts_moe_score;

typedef struct ts_model {
  long n_layers; /* num_layers */
  long hidden; /* hidden_size */
  long n_heads; /* num_attention_heads */
  long n_query_groups; /* num_query_groups (GQA); = n_heads for multi-head attention */
  long seq; /* seq_length */
  long vocab; /* vocab_size, before Megatron's padding */
  long ffn_hidden; /* ffn_hidden_size; default 4 x hidden (SwiGLU: Megatron's 2/3 of it) */
  /* Llama-style blocks (Megatron-Core's names; defaults: GPT's). */
  bool swiglu; /* gated MLP: fc1 projects to 2 x ffn_hidden (gate and up), SiLU(gate) x up */
  /* squared ReLU in place of GeLU (Megatron-LM's --squared-relu, Nemotron's activation):
   * relu(x)^2 as Megatron-Core's activations.py computes it, eagerly (no fused kernel) */
  bool squared_relu;
  /* the share of each head's width the rotary embedding turns (Megatron-LM's --rotary-percent,
   * NeMo's rotary_percentage; Nemotron's 0.5); 1 by default */
  double rotary_percent;
  bool rms_norm; /* normalization: RMSNorm (a weight only) instead of LayerNorm */
  bool rope; /* position_embedding_type: rope (rotary, no position table) */
  bool untied; /* untie_embeddings_and_output_weights: the output layer has its own weights */
  bool bias; /* add_bias_linear: the linear layers have biases */
  /* Megatron-LM's attention_dropout (on the attention probabilities) and hidden_dropout (after
   * the projection and FC2); default 0.1 each, but attention_dropout 0 for a plain PyTorch
   * model (is_attention_dropout_set false, framework pytorch): PyTorch's attention drops only
   * what the model's code passes (F.scaled_dot_product_attention's dropout_p and
   * nn.MultiheadAttention's dropout default to 0). At 0 PyTorch's dropout returns its input: no
   * kernel runs and no mask is kept (aten/src/ATen/native/Dropout.cpp, dropout()). */
  double attention_dropout, hidden_dropout;
  bool is_attention_dropout_set;
  /* Multi-head latent attention (DeepSeek-V2/V3; Megatron-Core's multi_latent_attention):
   * queries from a q_lora_rank latent (0: straight from h), keys and values from a shared
   * kv_lora_rank latent, each head's query and key of qk_head_dim + qk_pos_emb_head_dim (the
   * rotary part, a single key head shared by all heads), its value of v_head_dim. */
  bool mla;
  long q_lora_rank, kv_lora_rank, qk_head_dim, qk_pos_emb_head_dim, v_head_dim;
  /* kv_channels (Megatron-LM's --kv-channels, Hugging Face's head_dim): each head's width when
   * it is not hidden / heads (Qwen3-MoE, Mistral NeMo); 0: hidden / heads. */
  long kv_channels;
  /* Mixture of experts (Megatron-Core's names; n_experts = 0: every layer dense). A MoE layer's
   * MLP is a router (a linear h -> E), n_experts experts of moe_ffn_hidden each (SwiGLU or GeLU
   * like the dense MLP) of which every token visits moe_topk, and optionally one shared expert
   * of moe_shared_ffn that every token visits. */
  long n_experts; /* num_experts */
  long moe_topk; /* moe_router_topk (Megatron's default 2) */
  long moe_ffn_hidden; /* moe_ffn_hidden_size (default ffn_hidden_size) */
  long moe_shared_ffn; /* moe_shared_expert_intermediate_size (0: no shared expert) */
  bool moe_expert_bias; /* moe_router_enable_expert_bias: n_experts routing biases a layer */
  ts_moe_score moe_score; /* moe_router_score_function (Megatron's default softmax) */
  double moe_aux_loss_coeff; /* moe_aux_loss_coeff: > 0 adds the load-balancing loss's kernels */
  /* moe_layer_freq: layer i (from 0) is MoE when i % moe_layer_freq == 0, or, when
   * moe_layer_freq is 0, when bit i of moe_layer_mask is set (Megatron's list form). */
  long moe_layer_freq;
  uint64_t moe_layer_mask[TS_MOE_MAX_LAYERS / 64];
  /* moe_router_num_groups, moe_router_group_topk (Megatron-Core's group-limited routing;
   * DeepSeek-V3's node-limited routing, 8 groups, 4 of them): each token's experts lie in its
   * group_topk best groups; 0: no limit. */
  long moe_router_groups, moe_router_group_topk;
  /* mtp_num_layers (Megatron-Core's; Hugging Face's num_nextn_predict_layers): multi-token
   * prediction modules after the decoder (DeepSeek-AI 2024, section 2.2), module k predicting
   * token i + k + 1: the embedding of token i + k and module k - 1's hidden state, each
   * normalised, concatenated and projected 2h -> h (eh_proj), one transformer layer of the last
   * decoder layer's kind, a final norm, the shared output layer and a loss of its own. */
  long mtp_layers;
} ts_model;

/* Where each user-settable value came from, for messages. */
typedef struct ts_workload_locs {
  ts_loc n_layers, hidden, n_heads, n_query_groups, seq, vocab, ffn_hidden;
  ts_loc global_batch, micro_batch, precision;
  ts_loc tp, pp, dp, zero_stage, schedule, recompute, gpus, sequence_parallel, virtual_stages;
  ts_loc overlap_p2p_comm, grad_reduce_in_bf16;
  ts_loc dp_bucket, first_stage_layers, last_stage_layers, overlap_param_gather, tp_comm_overlap;
  ts_loc account_split; /* account_for_embedding/loss_in_pipeline_split */
  ts_loc layout; /* pipeline_model_parallel_layout */
  ts_loc reshard; /* reshard_after_forward */
  ts_loc dp_shard; /* data_parallel_shard_degree */
  ts_loc n_experts, moe_topk, moe_ffn_hidden, moe_shared_ffn, moe_layer_freq, ep, etp;
  ts_loc moe_capacity_factor, fp8, cp, autocast;
  ts_loc framework, attention, fusions, rccl_version, nccl_version, deepspeed_version, unpad_input,
      rms_norm, rope, gelu, score_divisions, causal_mask, eager_attention, compile, gate_up,
      fsdp_version, fp8_linear, contiguous_gradients, cp_attention,
      gradient_as_bucket_view; /* the stack's keys */
  ts_loc checkpoint_async;
  ts_loc mtp; /* mtp_num_layers */
  ts_loc recompute_modules;
  ts_loc exp_avg; /* exp_avg_dtype or exp_avg_sq_dtype, whichever was given */
  ts_loc master_weights;
  ts_loc moe_deepep_sms; /* moe_deepep_num_sms, or the dispatcher's key */
} ts_workload_locs;

/* How Adam's step runs: one fused kernel per parameter chunk (Apex/Transformer Engine FusedAdam
 * in Megatron-LM and DeepSpeed, torch.optim.AdamW(fused=True)) or torch.optim.AdamW's default
 * on CUDA, the foreach implementation (a multi-tensor kernel per elementwise operation). */
typedef enum ts_adam_implementation { TS_ADAM_FUSED, TS_ADAM_FOREACH } ts_adam_implementation;
extern const char *const ts_adam_implementation_names[]; /* "fused", "foreach" */

/* FP8 GEMMs as Transformer Engine runs them (Megatron-Core's fp8): none, E4M3 everywhere, or
 * hybrid (E4M3 forward, E5M2 gradients). */
typedef enum ts_fp8 { TS_FP8_NONE, TS_FP8_E4M3, TS_FP8_HYBRID } ts_fp8;
extern const char *const ts_fp8_names[]; /* "none", "e4m3", "hybrid" */

/* How FP8 tensors are scaled (Megatron-Core's --fp8-recipe, Transformer Engine's recipes):
 * delayed (DelayedScaling: a scale per tensor from the amax history), tensorwise
 * (Float8CurrentScaling: a scale per tensor from its own amax, a pass over it before the cast)
 * or blockwise (Float8BlockScaling, DeepSeek-V3's fine-grained quantisation, [DSV3] 3.3.1:
 * activations and gradients scaled per 1 x 128 tile, weights per 128 x 128 block, the GEMM
 * promoting its partial sums to fp32 every 128 of its reduction). */
typedef enum ts_fp8_recipe {
  TS_FP8_RECIPE_DELAYED,
  TS_FP8_RECIPE_TENSORWISE,
  TS_FP8_RECIPE_BLOCKWISE
} ts_fp8_recipe;
extern const char *const ts_fp8_recipe_names[]; /* "delayed", "tensorwise", "blockwise" */

typedef struct ts_workload {
  char name[64];
  ts_model model;
  long global_batch; /* sequences per iteration */
  long micro_batch;
  ts_precision precision;
  double train_tokens; /* 0 = not given */
  /* checkpoint.interval: iterations between checkpoints (0: Daly's optimum); checkpoint.async:
   * written behind training (analysis/reliability.h) */
  long checkpoint_interval;
  bool is_checkpoint_async;
  ts_framework framework;
  ts_adam_implementation adam_implementation;
  ts_fp8 fp8; /* the linear layers' GEMMs in FP8 (the rest stays in `precision`) */
  ts_fp8_recipe fp8_recipe;
  /* training.autocast: PyTorch's automatic mixed precision (torch.autocast): the weights, their
   * gradients and the optimizer stay fp32 and each linear layer casts its weight to `precision`
   * at every forward; otherwise the weights are in `precision` and the optimizer keeps fp32
   * master copies (Megatron-LM, DeepSpeed). Not set (is_autocast_set false), a plain PyTorch
   * model in bf16 or fp16 trains under it where it is modelled (ts_workload_autocast_default). */
  bool is_autocast, is_autocast_set;
  /* Adam's first and second moments, bytes a value: 4 (fp32; 0 also means it, in a workload
   * built in code), or Megatron-Core's precision-aware optimizer's exp_avg_dtype /
   * exp_avg_sq_dtype (bf16, fp16: 2; fp8: 1). */
  double exp_avg_bytes, exp_avg_sq_bytes;
  /* The optimizer's copy of a low-precision model's weights (master_weights), bytes a value:
   * fp32 4 (0 in a workload built in code also means it); bf16, fp16 2 (Megatron-Core's
   * precision-aware optimizer, --main-params-dtype); fp32_remainders 2 (Apex's
   * DistributedFusedAdam with store_param_remainders: the fp32 master rebuilt from the bf16
   * weight and its low 16 bits); none: no copy, the optimizer steps the weights themselves
   * (DistributedFusedAdam whose dtype is the model's: NeMo then sets store_params false). */
  double master_weight_bytes;
  bool is_master_weights_none, is_master_weights_set;
  /* The kernel fusions that ran (a bit per ts_fusion, stack.h): the framework's defaults
   * unless the stack's fused_kernels (or the older training keys gradient_accumulation_fusion
   * and bias_dropout_fusion) say otherwise. */
  unsigned fusions;
  /* stack.rccl_version, stack.nccl_version: the release of each collective library that ran
   * (stack.h encoding), used on platforms running that library; 0: the platform's. */
  long rccl_version, nccl_version;
  /* stack.deepspeed_version: the DeepSpeed release whose ZeRO-3 ran (stack.h encoding; 0: the
   * newest modelled), for frameworks megatron-deepspeed and gpt-neox (ts_deepspeed_path). */
  long deepspeed_version;
  /* stack.contiguous_gradients: DeepSpeed's zero_optimization.contiguous_gradients under its
   * ZeRO-3; when not given (is_contiguous_gradients_set false), the release's default: false
   * from 0.3.12 to 0.4.2, true from 0.4.3 (deepspeed/runtime/zero/constants.py; PR #1199). Before
   * 0.6.0, false all-reduces each reduce bucket's gradients flattened (ts_deepspeed_path). */
  bool contiguous_gradients, is_contiguous_gradients_set;
  /* stack.fsdp_version: PyTorch's FSDP API that ran ZeRO-3 (is_fsdp): 2, fully_shard, whose
   * copies in and out of its collectives' flat buffers run on the compute stream
   * (ts_cost_fsdp_copies); 1, FullyShardedDataParallel, whose flat parameter the all-gather
   * fills in place. */
  long fsdp_version;
  long tp, pp, dp; /* dp = 0 until resolved when neither file nor flags give it */
  /* Context parallelism (Megatron-Core's context_parallel_size): cp ranks split each
   * sequence, every rank holding 2 of its 2 cp chunks (chunks i and 2 cp - 1 - i, which
   * balances causal attention), and pass keys and values around a ring for attention. They
   * hold the same weights, so gradients are reduced over dp x cp ranks (ts_workload_dp_cp). */
  long cp;
  /* Expert parallelism (Megatron-Core's parallel folding): the tp x dp ranks of a pipeline stage
   * are regrouped for the experts into etp (expert tensor parallel) x ep (expert parallel) x
   * edp (expert data parallel), etp fastest; etp defaults to tp. Each rank holds
   * n_experts / ep experts, each split etp ways, and reduces their gradients over edp. */
  long ep, etp; /* etp 0: as tp (ts_workload_etp) */
  /* Tokens per expert: dropless (capacity factor 0), or at most capacity_factor x the mean,
   * the rest dropped, or, with moe_pad_to_capacity, exactly that many (padded). The busiest
   * expert receives moe_load_imbalance x the mean (1: the router spreads tokens evenly). */
  double moe_capacity_factor, moe_load_imbalance;
  bool moe_pad_to_capacity;
  bool
      moe_grouped_gemm; /* the local experts' GEMMs as one grouped GEMM (Megatron's default: off) */
  /* moe_token_dispatcher_type flex: DeepEP's dispatch and combine (ts_job.is_ep_flex), whose
   * kernels take moe_deepep_num_sms SMs (Megatron-Core's default 20; DeepSeek-V3's 20) from
   * the compute they overlap. */
  bool moe_flex;
  long moe_deepep_sms;
  long n_gpus; /* 0 until resolved */
  int zero_stage; /* 0, 1 (optimizer states sharded), 2 (gradients too) or 3 (weights too: ZeRO-3
                    / FSDP); 2 and 3 need pp = 1 */
  double dp_bucket_bytes; /* > 0: gradients reduced in buckets of this size during the backward
                             pass, overlapped with it; 0: after the pipeline flush */
  ts_schedule_kind schedule;
  long virtual_stages; /* model chunks per pipeline rank; > 1 only with TS_SCHED_INTERLEAVED */
  /* Layers of the first and last pipeline stages when not an even share (0), as Megatron-LM's
   * --decoder-first/last-pipeline-num-layers: fewer layers beside the embedding and the
   * logits balance the stages; the stages between split the rest evenly. */
  long first_stage_layers, last_stage_layers;
  /* Megatron-Core's account_for_embedding_in_pipeline_split and
   * account_for_loss_in_pipeline_split: the embedding (the loss) counts as a layer in the split,
   * so the first (last) virtual stage holds one transformer layer fewer. */
  bool account_embedding, account_loss;
  /* FSDP2's reshard_after_forward (torchtitan's name and default: false with pipeline
   * parallelism, true without); fsdp_keeps_weights, set by resolve: FSDP with pipelines keeping
   * its weights, played as ts_workload_zero and its helpers say. */
  bool reshard_after_forward, is_reshard_set, fsdp_keeps_weights, fsdp_reshards_pp;
  bool fsdp_keeps_to_backward; /* FSDP without pipelines not resharding after the forward */
  /* HSDP: torchtitan's data_parallel_shard_degree, the data-parallel ranks that shard the
   * weights, gradients and optimizer states (each with its context-parallel ranks, as
   * torchtitan folds them in); the others replicate those shards. 0: all of them (FSDP). */
  long dp_shard;
  /* Megatron-Core's pipeline_model_parallel_layout, as the transformer layers of each virtual
   * stage (index chunk x pipeline + stage, the layout's own order); n_layout_stages 0: none.
   * Its stages / pipeline is the virtual stages. */
  int n_layout_stages;
  int16_t layout_layers[TS_LAYOUT_MAX_STAGES];
  /* The layout's multi-token-prediction layers ('m') and the virtual stage holding them (-1:
   * none); without a layout the MTP layers go with the output layer, as Megatron-Core's. */
  int layout_mtp, layout_mtp_vstage;
  ts_recompute recompute;
  /* What selective recomputation redoes (ts_recompute_module bits) when is_recompute_modules_set,
   * else core_attn (ts_workload_recomputes): a module's outputs are dropped after the forward
   * and recomputed in the backward (Megatron-Core's CheckpointWithoutOutput). */
  unsigned recompute_modules;
  bool is_recompute_modules_set;
  ts_attention attention; /* stack.attention */
  ts_allocator allocator; /* stack.allocator */
  /* stack.unpad_input: FlashAttention-2's variable-length kernel behind flash-attn's
   * bert_padding.unpad_input and pad_input as llm-foundry's MPT calls them (`attn_impl: flash`):
   * each layer gathers Q, K and V into unpadded rows, scatters the output back, and
   * synchronises the host twice a gather (cost.c, unpad_input). */
  bool is_unpad_input;
  /* stack.gradient_as_bucket_view: PyTorch DDP's gradient_as_bucket_view (default false, as
   * DistributedDataParallel's): the gradients are views of the reducer's buckets, which
   * otherwise hold a second copy of them (memory.c). */
  bool is_gradient_as_bucket_view;
  ts_rms_norm_impl rms_norm_impl; /* stack.rms_norm */
  ts_rope_impl rope_impl; /* stack.rope */
  ts_gelu_impl gelu_impl; /* stack.gelu */
  /* stack.score_divisions: eager divisions of the unfused attention's scores (0-2), each a kernel
   * over the scores forward and backward (stack.h, beside ts_gelu_impl) */
  long score_divisions;
  ts_causal_mask causal_mask; /* stack.causal_mask */
  ts_eager_attention eager_attention; /* stack.eager_attention */
  ts_gate_up gate_up; /* stack.gate_up */
  ts_fp8_linear fp8_linear; /* stack.fp8_linear: whose linear layers run training.fp8 */
  /* stack.cp_attention: whose ring attention context parallelism runs; resolved from the
   * framework where not given (stack.h) */
  ts_cp_attention cp_attention;
  bool is_cp_attention_set;
  /* stack.compile: torch.compile of each block (torchtitan's apply_compile): Inductor fuses the
   * element-wise work between the GEMMs and the attention into kernels of their own, which
   * trainsim prices as fused: the norms as one kernel each (the table's rms_norm, whatever
   * rms_norm says the eager code was), the rotary embedding and SwiGLU on the roofline; the
   * graph keeps only what the backward needs (under recompute: op, not w2's output).
   * Measured on an H100 (bench/device/compile_block.py). */
  bool is_compiled;
  bool flash_attention; /* a fused attention kernel that stores no scores: flash2 or sdpa */
  bool sequence_parallel; /* Megatron's: needs seq divisible by tp; no effect when tp = 1 */
  /* Megatron-LM's scatter_gather_tensors_in_pipeline: each TP rank sends 1/tp of an activation
   * to the next stage, which all-gathers it over TP (Narayanan et al. SC'21, section 4.1) */
  bool pipeline_scatter_gather;
  /* Megatron-Core's overlap_param_gather (with the distributed optimizer, ZeRO-1/2): the
   * updated weights' all-gather, bucket by bucket, runs under the next iteration's first
   * forward pass, each layer waiting only for its own bucket. */
  bool overlap_param_gather;
  /* Megatron-Core's tp_comm_overlap (Transformer Engine's userbuffers; needs sequence
   * parallelism): each TP all-gather and reduce-scatter runs in chunks under the GEMM beside
   * it. */
  bool tp_comm_overlap;
  /* Megatron's overlap_p2p_comm (--overlap-p2p-communication, on by default in Megatron-LM's
   * arguments since 2023; NeMo's yamls set it): in the interleaved schedule each step's sends
   * and receives are posted without waiting and waited for only after the next chunk's compute,
   * so a rank's sends complete under that compute instead of at its next receive. */
  bool overlap_p2p_comm;
  /* Gradients accumulated and reduced in bf16, not fp32: Megatron-LM's --grad-reduce-in-bf16
   * (DDP's grad_reduce_in_fp32 off: the main_grad buffers are bf16), NeMo's
   * optim.grad_sync_dtype bf16 (Apex's DistributedFusedAdam). */
  bool grad_reduce_in_bf16;
  /* ZeRO-3 as PyTorch FSDP runs it (--fsdp, or framework pytorch): one gather per layer; else
   * as DeepSpeed runs it (Megatron-DeepSpeed): one per weight matrix, prefetched while they
   * fit in stage3_prefetch_bucket_size elements, parameters under
   * stage3_param_persistence_threshold elements kept whole on every rank (DeepSpeed's
   * defaults: 5e7 and 1e5, deepspeed/runtime/zero/config.py). */
  bool is_fsdp;
  double stage3_prefetch_elems, stage3_persistence_elems;
  /* stage3_max_reuse_distance: a weight is kept after use when the elements of the weights used
   * before its next use are fewer (DeepSpeed's default: 1e9; 0 in a workload built in code:
   * never kept). */
  double stage3_max_reuse_elems;
  /* stage3_max_live_parameters: no prefetch while this many elements are gathered or in
   * flight (DeepSpeed's default: 1e9; 0 in a workload built in code: no limit). */
  double stage3_max_live_elems;
  ts_axis order[TS_AXIS_COUNT]; /* innermost first; default tp, dp, pp */
  ts_workload_locs locs;
} ts_workload;

/* Command-line values; a field is used when its is_set flag is true. */
typedef struct ts_overrides {
  long gpus, tp, pp, dp, cp, ep, etp, micro_batch, global_batch, virtual_stages;
  long first_stage_layers, last_stage_layers;
  int zero_stage;
  double dp_bucket_bytes;
  ts_schedule_kind schedule;
  ts_recompute recompute;
  bool is_gpus_set, is_tp_set, is_pp_set, is_dp_set, is_cp_set, is_ep_set, is_etp_set;
  bool is_micro_batch_set, is_global_batch_set;
  bool is_zero_stage_set, is_schedule_set, is_recompute_set, is_sequence_parallel_set;
  bool is_scatter_gather_set;
  bool is_virtual_stages_set, is_dp_bucket_set, is_first_stage_layers_set, is_last_stage_layers_set;
  bool is_fsdp; /* ZeRO-3 came from --fsdp (messages name that flag) */
} ts_overrides;

/* Reads a workload file into *out (written only on success). The file's path is kept in the
 * locations, so `path` must outlive *out. */
int ts_workload_load_file(const char *path, ts_workload *out, ts_err *err);
/* The same from text in memory (len bytes, not necessarily NUL-terminated); `name` is used in
 * messages and must outlive *out. */
int ts_workload_parse(const char *name, const char *text, size_t len, ts_workload *out,
                      ts_err *err);
/* Applies command-line overrides, derives dp / GPU count and checks every invariant. */
int ts_workload_resolve(ts_workload *wl, const ts_overrides *ov, ts_err *err);

/* The vocabulary as the framework lays it out: the Megatron family pads it to a multiple of
 * 128 x tp (Megatron-LM's make-vocab-size-divisible-by, 128 by default; GPT-NeoX's alike);
 * plain PyTorch (nn.Embedding, nn.Linear) keeps it as given (tensor-parallel shards of
 * ceil(vocab / tp), DTensor's uneven split, the largest counted), so GPT-2's 50,257 tokens leave
 * the logits' rows off the GEMMs' alignment (cost.c prices that). */
long ts_workload_padded_vocab(const ts_workload *wl);
/* Parameters of one normalization layer (LayerNorm: weight and bias; RMSNorm: weight) and of
 * the position table (learned_absolute: seq x hidden; rope: none). */
double ts_workload_norm_params(const ts_workload *wl);
double ts_workload_position_params(const ts_workload *wl);
/* What the last pipeline stage holds after its layers: the final norm and the output layer's
 * weights (its own when untied; with tied weights a copy of the embedding when pp > 1). */
double ts_workload_head_params(const ts_workload *wl);
long ts_workload_microbatches(const ts_workload *wl); /* per pipeline, per iteration */
/* Transformer layers of virtual stage `vstage` (chunk x pipeline + stage): the layout string's,
 * the first or last stage's own count (split over its chunks), Megatron-Core's accounting of
 * the embedding and the loss, or an even share; 0 is possible (a stage of the embedding or the
 * loss alone). */
long ts_workload_vstage_layers(const ts_workload *wl, long vstage);
/* Layers of pipeline stage `stage` (all its chunks). */
long ts_workload_stage_layers(const ts_workload *wl, long stage);
/* What the run plays of data parallelism. FSDP2 with pipeline parallelism as torchtitan runs
 * it (reshard_after_forward false; torch.distributed.pipelining keeps the weights after each
 * backward and syncs gradients at the last one) gathers each layer's weights at the first
 * microbatch's forward, keeps them, accumulates its gradients unsharded and reduce-scatters
 * them at the last backward, the optimizer sharded: Megatron's distributed optimizer (ZeRO-1)
 * with the weights' all-gather under the first forward and a gradient bucket a layer, which is
 * how it is played (cost.h's ts_cost_bucket_bytes the bucket). Otherwise: zero_stage and
 * overlap_param_gather. */
int ts_workload_zero(const ts_workload *wl);
bool ts_workload_gathers_params(const ts_workload *wl);
/* The ranks a ZeRO/FSDP shard spreads over: the data-parallel ranks (dp x cp), or under HSDP one
 * shard group's (data_parallel_shard_degree x cp); ts_workload_is_hsdp: whether those differ. */
long ts_workload_shard_ranks(const ts_workload *wl);
bool ts_workload_is_hsdp(const ts_workload *wl);
/* Bytes a gradient element of Megatron's buffers and reductions: 4 (fp32, Megatron-LM's
 * accumulate_allreduce_grads_in_fp32 for bf16 models), 2 with grad_reduce_in_bf16. */
double ts_workload_grad_bytes(const ts_workload *wl);

/* Model chunks a pipeline rank holds: virtual_stages, or dualpipe's two (rank r holds block r
 * of the pipeline going forward and block p - 1 - r of the one going back: two copies of the
 * model over the pipeline), or zb-v's two (rank r holds virtual stages r and 2p - 1 - r of one
 * model: the pipeline runs down the ranks and back up). */
long ts_workload_chunks(const ts_workload *wl);
/* Whether pipeline stage `stage` holds the embedding / the final norm and output layer: the
 * first / the last; under dualpipe both ends both; under zb-v the first both. */
bool ts_workload_stage_has_embedding(const ts_workload *wl, long stage);
bool ts_workload_stage_has_head(const ts_workload *wl, long stage);
/* Whether the backward recomputes `module` (recompute: selective, its modules). */
bool ts_workload_recomputes(const ts_workload *wl, ts_recompute_module module);
/* The multi-token-prediction layers that model chunk `chunk` of stage `stage` runs after its
 * decoder layers (all of them, or none), and that stage `stage` holds (all its chunks). */
long ts_workload_chunk_mtp_layers(const ts_workload *wl, long stage, long chunk);
long ts_workload_stage_mtp_layers(const ts_workload *wl, long stage);
/* Whether layer `layer` (of the whole model, from 0) has a mixture-of-experts MLP; layers from
 * num_layers on are the MTP modules' (each of the last decoder layer's kind, as Megatron-Core
 * builds them from that layer's spec). */
bool ts_workload_is_moe_layer(const ts_workload *wl, long layer);
/* The model's index of the first layer of model chunk `chunk` of pipeline stage `stage`. */
long ts_workload_chunk_first_layer(const ts_workload *wl, long stage, long chunk);
/* A head's query and key width (MLA: qk_head_dim + qk_pos_emb_head_dim; else h / heads) and
 * its value width (MLA: v_head_dim). */
long ts_workload_qk_head_dim(const ts_workload *wl);
long ts_workload_v_head_dim(const ts_workload *wl);
/* Whether grouped-query attention repeats its keys and values to every query head before the
 * attention core, as a plain PyTorch model calling SDPA does (Hugging Face's and torchtitan's
 * repeat_kv; SDPA's enable_gqa, which avoids the copies, is not modelled): framework pytorch,
 * attention sdpa, fewer query groups than heads. Megatron's and DeepSpeed's attention kernels
 * and flash_attn_func take grouped keys and values as they are. */
bool ts_workload_repeats_kv(const ts_workload *wl);
/* Whether attention without flash runs its softmax in fp32: autocast runs softmax with its dtype
 * set to float (aten/src/ATen/autocast_mode.h: softmax in AT_FORALL_FP32_SET_OPT_DTYPE, the
 * fp32_set_opt_dtype policy), so eager attention's probabilities are fp32, kept so for the
 * backward and cast back down for P V. Megatron's fused masked softmax is its own kernel,
 * outside autocast's lists. */
bool ts_workload_softmax_fp32(const ts_workload *wl);
/* Whether the residual stream and the norms run in fp32 under autocast: the residual stream,
 * begun by fp32 embeddings, stays fp32 through the adds of low-precision branches (type
 * promotion), and a plain PyTorch model's norm of it is fp32 (nn.LayerNorm is on autocast's
 * fp32 list, aten/src/ATen/autocast_mode.h, AT_FORALL_FP32: layer_norm; F.rms_norm of fp32
 * values with an fp32 weight is fp32), so each linear after a norm casts its input down. Not
 * with flash-attn's dropout_add_layer_norm (its own fp32 residual), an eager fp32 RMSNorm
 * (priced as such), or compile. */
/* Whether a workload that does not set training.autocast trains under it: a plain PyTorch model
 * (framework pytorch) in bf16 or fp16 whose recipe names no optimizer copy of its own (no
 * master_weights, no low-precision moments, no gradient_accumulation fusion), where autocast is
 * modelled (no fp8, no FSDP, no experts or latent attention; not torchtitan's op-level
 * checkpointing, modelled on bf16 weights). */
bool ts_workload_autocast_default(const ts_workload *wl);
bool ts_workload_residual_fp32(const ts_workload *wl);
/* Whether the unfused attention of a plain PyTorch GPT (learned positions: nanoGPT's, Hugging
 * Face GPT-2's) copies its heads: q, k, v split from the fused projection and permuted into
 * torch.matmul (cost.c, eager_head_copies). Not compiled, not rotary or latent attention (whose
 * eager code is not measured). */
bool ts_workload_eager_heads(const ts_workload *wl);
/* Whether full recomputation stops at the last tensor the layer's backward needs, FC2's input,
 * leaving FC2 and the residual add unrun: torch.utils.checkpoint without reentrance does so by
 * default (its early stop, set_checkpoint_early_stop), as a plain PyTorch model checkpoints
 * its blocks (measured on an H100, bench/device/h100_op_sac.csv: a Llama 3 8B layer's full
 * recomputation 14.7 ms, and 17.7 ms with set_checkpoint_early_stop(False)). Hidden dropout after
 * FC2 keeps a mask the backward needs, so FC2 runs then. Modelled without tensor
 * parallelism only (its all-reduce after FC2 would be skipped too). */
bool ts_workload_recompute_stops_early(const ts_workload *wl);
/* The stack's pieces that differ from their defaults, for people ("; torch.compile; RMSNorm
 * eager_fp32; rope complex"; "" when none) into buf of size n. */
void ts_workload_eager_describe(const ts_workload *wl, char *buf, int n);
/* Whether the step runs kernel fusion f (stack.h). */
bool ts_workload_fuses(const ts_workload *wl, ts_fusion f);
/* MoE layers of the model. */
long ts_workload_moe_layer_count(const ts_workload *wl);
/* MoE layers held by pipeline stage `stage` (all its chunks). */
long ts_workload_stage_moe_layers(const ts_workload *wl, long stage);
/* An expert's capacity over the mean tokens it is routed (Megatron-Core rounds the capacity up
 * to whole tokens: never below one), 0 when dropless. */
double ts_workload_moe_capacity(const ts_workload *wl);
/* Tokens the busiest expert processes, over the mean (moe_load_imbalance, capped or padded by
 * the capacity). */
double ts_workload_moe_token_factor(const ts_workload *wl);
/* The ranks that hold the same weights and reduce their gradients: dp x cp. */
long ts_workload_dp_cp(const ts_workload *wl);
/* Tokens of a sequence one rank holds: seq_length / cp. */
long ts_workload_local_seq(const ts_workload *wl);
/* Expert tensor parallelism (etp, or tp when not given) and expert data parallelism. */
long ts_workload_etp(const ts_workload *wl);
long ts_workload_edp(const ts_workload *wl);
/* Checks the expert layout of a workload whose tp, dp and pp are set: 0, or -1 with an error. */
int ts_workload_check_experts(const ts_workload *wl, ts_err *err);
/* Whether its ZeRO stage rules its pipeline out: DeepSpeed's ZeRO-2/3 run no pipeline (FSDP's
 * ZeRO-3 does). */
bool ts_workload_zero_refuses_pipeline(const ts_workload *wl);
/* The stages' layers: pp divides num_layers, or the first and last stages' own counts
 * (decoder_first/last_pipeline_num_layers) leave the middle stages an even split; -1 with an
 * error (err may be NULL) where they do not. */
int ts_workload_check_stage_layers(const ts_workload *wl, ts_err *err);
/* The layout for people: "TP 8 x PP 16 x DP 64", with " x CP 2" and ", EP 8" (", EP 8 x ETP
 * 2") where they apply. */
void ts_workload_layout_label(const ts_workload *wl, char *out, size_t size);
/* The schedule for people: "1f1b", "gpipe" or "interleaved, 2 virtual stages". */
void ts_workload_schedule_label(const ts_workload *wl, char *out, size_t size);

#endif
