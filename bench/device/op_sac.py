"""torchtitan's op-level selective activation checkpointing on a Llama block, measured against no
recomputation and full recomputation (issue 31; docs/validation/torchtitan.md). Validation and
microbenchmark data for `parallelism.recompute: op`: nothing here sets a trainsim parameter.

    python3 bench/device/op_sac.py OUT.csv [--smoke]

The block is torchtitan's Llama 3 TransformerBlock as of its commit 9dec370 (2024-12-26, the
one its H100 benchmarks ran; torchtitan/models/llama/model.py and models/norms.py): RMSNorm
computed in fp32 then cast (x.float(), rsqrt of the mean square, type_as, times the weight);
wq, wk, wv without biases; the rotary embedding through complex multiplication in fp32;
repeat_kv by expand and reshape; causal F.scaled_dot_product_attention with the flash backend
(the default of that date's PyTorch: cuDNN attention was opt-in after pytorch/pytorch#138522),
its output made contiguous; wo; FeedForward w2(silu(w1 x) * w3 x). The policies are torchtitan's
(parallelize_llama.py at 9dec370): `op` saves the outputs of aten.mm (all but every second mm of
a block's forward), the flash and efficient SDPA ops, reduce_scatter, abs and max, and recomputes
the rest (create_selective_checkpoint_contexts); `full` recomputes the block; both through
torch.utils.checkpoint (use_reentrant=False, preserve_rng_state=False, as torchtitan's
checkpoint_wrapper), whose default early stop ends the recomputation once the backward's tensors
exist (FC2's input: w2 and the last residual add are not re-run); `full_no_early_stop` turns that
off (set_checkpoint_early_stop(False)) to measure it. Parameters in bf16 (FSDP's unsharded
copies), grads kept allocated.

Each case runs `layers` blocks on a bf16 input that requires grad, backward from a fixed output
gradient; 3 warm-ups, then 10 steps: forward and backward times (CUDA events; medians), the
bytes held after the forward over the base (the saved activations and the output), and the
step's peak allocated bytes and the growth of reserved bytes over the base (0: the cache held
enough from the warm-ups). The second section shards a two-block
model with FSDP2 on one rank (MixedPrecisionPolicy bf16 / fp32, torchtitan's) and reports the
bytes a parameter of its states: the sharded parameters, their gradients, AdamW's moments.
"""
import argparse
import datetime
import os
import statistics
import sys
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.checkpoint import (CheckpointPolicy, checkpoint,
                                    create_selective_checkpoint_contexts,
                                    set_checkpoint_early_stop)

from cuda_timing import write_csv

# torchtitan 9dec370, parallelize_llama.py: _save_list
SAVE_LIST = {
    torch.ops.aten.mm.default,
    torch.ops.aten._scaled_dot_product_efficient_attention.default,
    torch.ops.aten._scaled_dot_product_flash_attention.default,
    torch.ops._c10d_functional.reduce_scatter_tensor.default,
    torch.ops.aten.abs.default,
    torch.ops.aten.max.default,
}


def op_context():
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "recompute_mm_count" if ctx.is_recompute else "forward_mm_count"
        if func == torch.ops.aten.mm.default:
            meta[key] += 1
        save = func in SAVE_LIST and not (func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(dim))

    def forward(self, x):
        y = x.float()
        return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_table(head_dim, seq, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    return torch.polar(torch.ones(seq, head_dim // 2), torch.outer(torch.arange(seq).float(), freqs))


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    f = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    return (torch.view_as_real(xq_ * f).flatten(3).type_as(xq),
            torch.view_as_real(xk_ * f).flatten(3).type_as(xk))


def repeat_kv(x, n_rep):
    bs, slen, kv, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, :, None, :].expand(bs, slen, kv, n_rep, d).reshape(bs, slen, kv * n_rep, d)


class Block(nn.Module):
    def __init__(self, h, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv, self.d = heads, kv_heads, h // heads
        self.wq = nn.Linear(h, heads * self.d, bias=False)
        self.wk = nn.Linear(h, kv_heads * self.d, bias=False)
        self.wv = nn.Linear(h, kv_heads * self.d, bias=False)
        self.wo = nn.Linear(heads * self.d, h, bias=False)
        self.w1 = nn.Linear(h, ffn, bias=False)
        self.w2 = nn.Linear(ffn, h, bias=False)
        self.w3 = nn.Linear(h, ffn, bias=False)
        self.attention_norm, self.ffn_norm = RMSNorm(h), RMSNorm(h)

    def attention(self, x, freqs_cis):
        bs, s, _ = x.shape
        xq = self.wq(x).view(bs, s, -1, self.d)
        xk = self.wk(x).view(bs, s, -1, self.d)
        xv = self.wv(x).view(bs, s, -1, self.d)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        rep = self.heads // self.kv
        keys, values = repeat_kv(xk, rep), repeat_kv(xv, rep)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = F.scaled_dot_product_attention(xq.transpose(1, 2), keys.transpose(1, 2),
                                                 values.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(bs, s, -1))

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))


def run_blocks(blocks, x, freqs_cis, mode):
    # full_no_early_stop: full recomputation of the whole block (set_checkpoint_early_stop(False));
    # by default torch.utils.checkpoint stops recomputing once the backward's tensors exist
    with set_checkpoint_early_stop(mode != "full_no_early_stop"):
        for blk in blocks:
            if mode == "none":
                x = blk(x, freqs_cis)
            else:
                kw = {"context_fn": op_context} if mode == "op" else {}
                x = checkpoint(blk, x, freqs_cis, use_reentrant=False, preserve_rng_state=False,
                               **kw)
    return x


def timed_steps(params, x, g, warmup, reps, forward, *args):
    """Times forward(*args) and its backward from g after warm-ups, zeroing gradients between steps;
    returns per-step lists: forward ms, backward ms, bytes held after the forward, peak bytes and
    peak reserved bytes, each over the step's starting allocation."""
    params = list(params)
    fwd, bwd, held, peak, reserved = [], [], [], [], []
    for i in range(warmup + reps):
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
        x.grad = None
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base, base_res = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
        e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        e[0].record()
        out = forward(*args)
        e[1].record()
        torch.cuda.synchronize()
        after = torch.cuda.memory_allocated()
        out.backward(g)
        e[2].record()
        torch.cuda.synchronize()
        del out
        if i >= warmup:
            fwd.append(e[0].elapsed_time(e[1]))
            bwd.append(e[1].elapsed_time(e[2]))
            held.append(after - base)
            peak.append(torch.cuda.max_memory_allocated() - base)
            reserved.append(torch.cuda.max_memory_reserved() - base_res)
    return fwd, bwd, held, peak, reserved


def layer_case(name, layers, h, heads, kv, ffn, seq, mbs, mode, warmup, reps):
    torch.manual_seed(0)
    blocks = nn.ModuleList(Block(h, heads, kv, ffn) for _ in range(layers)).to("cuda", torch.bfloat16)
    for p in blocks.parameters():
        if p.dim() > 1:
            nn.init.normal_(p, std=0.02)
    freqs = rope_table(h // heads, seq).cuda()
    x = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16)
    try:
        fwd, bwd, held, peak, reserved = timed_steps(
            blocks.parameters(), x, g, warmup, reps, run_blocks, blocks, x, freqs, mode)
        status = "ok"
    except torch.OutOfMemoryError:
        status = "oom"
    row = [name, layers, h, heads, kv, ffn, seq, mbs, mode, status]
    if status == "ok":
        row += [f"{statistics.median(fwd):.3f}", f"{statistics.median(bwd):.3f}", max(held),
                max(peak), max(reserved)]
    else:
        row += ["", "", "", "", ""]
    del blocks, x, g
    torch.cuda.empty_cache()
    return row


def fsdp_states(h, heads, kv, ffn):
    """Bytes a parameter of FSDP2's states on one rank: sharded parameters after fully_shard,
    their gradients after a backward, AdamW's (foreach) moments after a step."""
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.empty_cache()
    start = torch.cuda.memory_allocated()
    torch.manual_seed(0)
    model = nn.ModuleList(Block(h, heads, kv, ffn) for _ in range(2)).cuda()  # fp32, as torchtitan
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for blk in model:  # each block a unit, as torchtitan wraps its TransformerBlocks
        fully_shard(blk, mp_policy=mp)
    n = sum(p.numel() for p in model.parameters())
    params = torch.cuda.memory_allocated() - start
    freqs = rope_table(h // heads, 2048).cuda()
    x = torch.randn(1, 2048, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    y = x
    for blk in model:
        y = blk(y, freqs)
    y.float().pow(2).mean().backward()
    del y, x
    torch.cuda.synchronize()
    grads = torch.cuda.memory_allocated() - start - params
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    opt.step()
    torch.cuda.synchronize()
    moments = torch.cuda.memory_allocated() - start - params - grads
    dtypes = sorted({str(p.dtype) for p in model.parameters()})
    dist.destroy_process_group()
    return [n, "/".join(dtypes), f"{params / n:.3f}", f"{grads / n:.3f}", f"{moments / n:.3f}"]


# name, layers, hidden, heads, kv heads, ffn, seq, micro-batch
CASES = [("llama3-8b", 4, 4096, 32, 8, 14336, 8192, 2),
         ("llama3-8b", 4, 4096, 32, 8, 14336, 8192, 1),
         ("llama3-1b", 8, 2048, 32, 8, 8192, 4096, 4)]
SMOKE = [("tiny", 2, 256, 4, 2, 512, 512, 2)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    warmup, reps = (1, 2) if args.smoke else (3, 10)
    rows = []
    for c in SMOKE if args.smoke else CASES:
        for mode in ("none", "op", "full", "full_no_early_stop"):
            rows.append(layer_case(*c, mode, warmup, reps))
            print("op_sac:", ",".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    head = ["name", "layers", "hidden", "heads", "kv_heads", "ffn", "seq", "micro_batch", "mode",
            "status", "fwd_ms", "bwd_ms", "held_bytes", "peak_bytes", "peak_reserved_bytes"]
    write_csv(args.out, "op_sac.py", "blocks of torchtitan's Llama 3 (9dec370), flash SDPA; times "
              "median of 10 after 3 warm-ups; bytes over the step's base (parameters, grads, input)",
              head, rows, started)
    shape = SMOKE[0][2:6] if args.smoke else CASES[0][2:6]
    states = fsdp_states(*shape)
    print("op_sac: fsdp2 states", states, file=sys.stderr, flush=True)
    write_csv(args.out.replace(".csv", "_fsdp2.csv"), "op_sac.py",
              "FSDP2 on one rank, MixedPrecisionPolicy(bf16, fp32), AdamW foreach: bytes a parameter",
              ["params", "param_dtypes", "param_bytes", "grad_bytes", "adam_bytes"], [states], started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
