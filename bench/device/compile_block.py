"""torchtitan's Llama block compiled as torchtitan compiles it (torch.compile of each
TransformerBlock, fullgraph=True, after its activation checkpointing wrapper: parallelize_llama.py
at 9dec370, apply_ac then apply_compile) against the same block eager (issue 31;
docs/validation/torchtitan.md): what Inductor's fused kernels take of a layer's forward, backward
and recomputation, and what the compiled graph keeps for the backward. Microbenchmark data; sets
no parameter.

    python3 bench/device/compile_block.py OUT.csv [--smoke]

The cases and timing are op_sac.py's (4 blocks, micro-batch 2 x 8,192 at Llama 3 8B's shape; 3
warm-ups, which include the compilation, then 10 steps: medians of the forward and backward by
CUDA events, the bytes held after the forward over the base), for no recomputation, op-level
selective checkpointing and full recomputation, eager and compiled.
"""
import argparse
import datetime
import statistics
import sys

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

import op_sac
from cuda_timing import write_csv


def wrap(blk, mode, compiled):
    """A block as torchtitan builds it: the checkpoint wrapper, then torch.compile."""
    if mode == "none":
        fn = blk
    else:
        kw = {"context_fn": op_sac.op_context} if mode == "op" else {}

        def fn(x, freqs, blk=blk, kw=kw):
            return checkpoint(blk, x, freqs, use_reentrant=False, preserve_rng_state=False, **kw)
    return torch.compile(fn, fullgraph=True) if compiled else fn


def run_fns(fns, x, freqs):
    for fn in fns:
        x = fn(x, freqs)
    return x


def case(name, layers, h, heads, kv, ffn, seq, mbs, mode, compiled, warmup, reps):
    torch.manual_seed(0)
    torch._dynamo.reset()
    blocks = nn.ModuleList(op_sac.Block(h, heads, kv, ffn) for _ in range(layers)).to(
        "cuda", torch.bfloat16)
    fns = [wrap(b, mode, compiled) for b in blocks]
    freqs = op_sac.rope_table(h // heads, seq).cuda()
    x = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16)
    fwd, bwd, held, _, _ = op_sac.timed_steps(blocks.parameters(), x, g, warmup, reps,
                                              run_fns, fns, x, freqs)
    del blocks, fns, x, g
    torch.cuda.empty_cache()
    return [name, layers, h, heads, kv, ffn, seq, mbs, mode, "compiled" if compiled else "eager",
            f"{statistics.median(fwd):.3f}", f"{statistics.median(bwd):.3f}", max(held)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    warmup, reps = (2, 2) if args.smoke else (3, 10)
    shapes = op_sac.SMOKE if args.smoke else op_sac.CASES[:1]
    rows = []
    for c in shapes:
        for mode in ("none", "op", "full"):
            for compiled in (False, True):
                rows.append(case(*c, mode, compiled, warmup, reps))
                print("compile_block:", ",".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    write_csv(args.out, "compile_block.py",
              "blocks of torchtitan's Llama 3 (9dec370), flash SDPA, eager and torch.compile "
              "(fullgraph, per block, after the checkpoint wrapper); times median of 10 after 3 "
              "warm-ups; bytes held after the forward over the base",
              ["name", "layers", "hidden", "heads", "kv_heads", "ffn", "seq", "micro_batch", "mode",
               "build", "fwd_ms", "bwd_ms", "held_bytes"], rows, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
