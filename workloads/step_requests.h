/* step_requests: the memory requests a plain PyTorch training run on one GPU makes of the CUDA
 * caching allocator, tensor by tensor and in order, from the model's construction on the GPU
 * through its first steps, so that caching_allocator.h can replay them and say whether the
 * default allocator finds every block (the fragmentation a byte count cannot see).
 *
 * The run is the one trainsim's `framework: pytorch` memory model describes (memory.h) and
 * bench/device/allocator.py measures: a model built in fp32 on the GPU and cast with
 * .to(bfloat16) (each weight's copy made before its fp32 tensor is freed), the batches, fp32
 * master weights and main gradients (a post-accumulate hook adds each weight's gradient into
 * its main gradient and frees it), the cache emptied, then steps of forward and backward passes
 * and an AdamW step whose moments appear at the first step. Under automatic mixed precision
 * (training.autocast, plain PyTorch's default; bench/device/amp_steps.py's recipe) the model
 * stays fp32, each microbatch's forward runs in an autocast region (its cache keeps each
 * weight's cast to the region's exit, fp32 activations are cast down where a linear layer
 * takes them, the residual stream and norms stay fp32), the casts' backward pass the gradients
 * up to fp32 .grad tensors, which the step's first microbatch makes and
 * zero_grad(set_to_none=True) frees. Each operation's outputs, its saved
 * tensors and when autograd frees them follow PyTorch's kernels (aten's native functions,
 * autograd's engine, torch.utils.checkpoint without reentry, FlashAttention-2's backward), as
 * the comments in step_requests.c say one by one.
 *
 * Supported (ts_step_requests_supported): dense GPT- and Llama-style models on one GPU, bf16
 * or fp16 (weights, or autocast; not FP8, not compiled), flash attention, no recomputation or
 * full recomputation, the functional GeLU and RMSNorm and rotate_half rotary embedding, no
 * fused kernels, at most 5,000 layer passes (layers x microbatches) a step. Elsewhere trainsim
 * keeps the byte count's verdict. */
#ifndef TS_STEP_REQUESTS_H
#define TS_STEP_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>

#include "caching_allocator.h"
#include "memory.h"
#include "workload.h"

typedef enum ts_step_request_kind {
  TS_STEP_REQUEST_ALLOC,
  TS_STEP_REQUEST_FREE,
  TS_STEP_REQUEST_EMPTY_CACHE
} ts_step_request_kind;

typedef struct ts_step_request {
  ts_step_request_kind kind;
  long tensor; /* the tensor allocated or freed: 0, 1, 2, ... in order of allocation */
  uint64_t bytes;
} ts_step_request;

typedef struct ts_step_requests {
  ts_step_request *v;
  long n, cap;
  long n_tensors;
} ts_step_requests;

/* Whether the workload's run is one step_requests generates (above). */
bool ts_step_requests_supported(const ts_workload *wl);

/* The requests of wl's run through n_steps iterations (each its microbatches' forward and
 * backward passes and the optimizer) into *out, which the caller zeroes first and frees with
 * ts_step_requests_free. wl must be supported. */
void ts_step_requests_build(const ts_workload *wl, int n_steps, ts_step_requests *out);
void ts_step_requests_free(ts_step_requests *r);

/* Whether wl's run (supported) finds every block in a default caching allocator whose segments
 * may total capacity_bytes: its first three steps replayed, as bench/device/allocator.py runs
 * them (the first step makes the optimizer's moments in the cache its passes left; the next two
 * run on what that leaves). *stats gets the allocator's. */
bool ts_step_requests_fit(const ts_workload *wl, uint64_t capacity_bytes,
                          ts_caching_allocator_stats *stats);

/* Whether the default caching allocator's replay decides wl's verdict: its allocator is the
 * default one and its run supported. Wherever the bytes fit, not only within the largest
 * allocation of the limit: on an H100 two runs 8.6 and 14.1 GiB below it failed on requests of
 * 8.4 and 12.3 GiB, 13-14 GiB held in free pieces of segments in use
 * (docs/validation/h100.md, "Out of memory at the edge, under autocast"). */
bool ts_step_requests_decide(const ts_workload *wl);

/* Whether a run whose bytes fit in usable_bytes also finds every block: true under expandable
 * segments or where the run is not supported (where it lies within its largest allocation of
 * the limit, AT RISK: ts_memory_fragmentation_risk); else ts_step_requests_fit decides (into
 * *stats). */
bool ts_step_requests_blocks_fit(const ts_workload *wl, double usable_bytes,
                                 ts_caching_allocator_stats *stats);

/* Replays the requests through a default caching allocator whose segments may total
 * capacity_bytes, stopping at the first request that fails; *stats gets the allocator's. */
void ts_step_requests_replay(const ts_step_requests *r, uint64_t capacity_bytes,
                             ts_caching_allocator_stats *stats);

#endif
