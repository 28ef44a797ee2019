"""PyTorch's own ring-attention loop on one GPU, its communication replaced by local buffers:
what its eager kernels around the flash calls cost (stack.cp_attention pytorch; workloads/
cost.c prices them for the ring's last rank). Microbenchmark data; sets no parameter.

    python3 bench/device/cp_ring_loop.py OUT.csv [--smoke]

Runs torch's _scaled_dot_product_ring_flash_attention and its backward (torch/distributed/
tensor/experimental, _templated_ring_attention: the code torchtitan's context parallelism
calls) as rank r of cp ranks, for r = cp - 1 (every step past its own a whole merge: the rank
trainsim plays) and r = cp / 2, on a Llama 3 8B layer's 32 heads of 128 (after repeat_kv),
micro-batch 1, 32,768 tokens a rank. The loop asks torch.distributed for its rank and the ring's
size, and a rotater for the keys and values and the gradients: here a shim answers r and cp,
and a rotater that hands back the buffer it was given (same shape, no transfer). Timed with CUDA
events (median of 5 after 2 warm-ups): the loop forward and backward, the same steps' flash
calls alone (the ops the loop issues, at its shapes), and the loop with its flash ops answered
from results computed beforehand: its eager kernels alone (the loop less the flash calls
confounds them with the flash kernels' own variation between the two runs).
"""
import argparse
import datetime
import sys
import tempfile
import types

import torch
import torch.distributed as dist

from cuda_timing import time_ms, write_csv

HEADS, DIM = 32, 128
aten = torch.ops.aten


def ring_module():
    """The module holding _templated_ring_attention (moved into a package in later releases)."""
    for name in ("torch.distributed.tensor.experimental._context_parallel._attention",
                 "torch.distributed.tensor.experimental._attention"):
        try:
            mod = __import__(name, fromlist=["_templated_ring_attention"])
        except ImportError:
            continue
        if hasattr(mod, "_templated_ring_attention"):
            return mod
    raise ImportError("no _templated_ring_attention in this torch")


class LocalRotater:
    """A rotater that hands back the last buffer it was given (no communication)."""

    def __init__(self, *args, **kwargs):
        self.buffer = None

    def exchange_buffers(self, buffer):
        self.buffer = buffer

    def next_buffer(self):
        return self.buffer


def answered(op, shape_of):
    """op, its result computed once for each shape of the call (shape_of(args)) and handed back
    after: the loop's own kernels then run without the flash kernels'."""
    results = {}

    def call(*args, **kwargs):
        shape = shape_of(*args, **kwargs)
        if shape not in results:
            results[shape] = op(*args, **kwargs)
        return results[shape]
    return call


def flash_steps(rank, cp, q, k, v):
    """The (q, k, v, causal) of each step the loop runs on that rank (round-robin balance)."""
    half = q.shape[2] // 2
    out = [(q, k, v, True)]
    for i in range(1, cp):
        if i <= rank:
            out.append((q, k[:, :, :half], v[:, :, :half], False))
        else:
            out.append((q[:, :, half:], k, v, False))
    return out


def ring_inputs(mod, rank, cp, local):
    """A layer's q, k, v for one rank (32 heads of 128, micro-batch 1) and the group, with the
    ring module's torch.distributed answering rank and cp."""
    torch.manual_seed(0)
    mk = lambda: torch.randn(1, HEADS, local, DIM, device="cuda", dtype=torch.bfloat16)
    mod.dist = types.SimpleNamespace(get_rank=lambda g=None: rank,
                                     get_world_size=lambda g=None: cp,
                                     ProcessGroup=dist.ProcessGroup)
    return mk(), mk(), mk(), dist.group.WORLD


def case(mod, rank, cp, local):
    q, k, v, group = ring_inputs(mod, rank, cp, local)
    mod._create_rotater = lambda *a, **kw: LocalRotater()

    def forward():
        return mod._templated_ring_attention(group, 2, aten._scaled_dot_product_flash_attention,
                                             query=q, key=k, value=v, is_causal=True)
    res = forward()
    out, lse = res[0], res[1]
    loop_fwd = time_ms(forward, warmup=2, reps=5)
    steps = flash_steps(rank, cp, q, k, v)
    flash_fwd = time_ms(lambda: [aten._scaled_dot_product_flash_attention(a, b, c, is_causal=s)
                                 for a, b, c, s in steps], warmup=2, reps=5)
    # the backward: the loop with the flash backward op, from the forward's saved outputs
    rest = res[2:]
    grad_out = torch.randn_like(out)
    kwargs = dict(cum_seq_q=rest[0], cum_seq_k=rest[1], max_q=rest[2], max_k=rest[3],
                  dropout_p=0.0, philox_seed=rest[4], philox_offset=rest[5])

    def backward():
        return mod._templated_ring_attention_backward(
            group, 2, aten._scaled_dot_product_flash_attention_backward.default,
            grad_out=grad_out, grad_out_name="grad_out", query=q, key=k, value=v, out=out,
            logsumexp=lse, is_causal=True, **kwargs)
    backward()
    loop_bwd = time_ms(backward, warmup=2, reps=5)
    half = local // 2
    bwd_args = []
    for i, (a, b, c, s) in enumerate(steps):
        o, l = (out, lse) if a.shape[2] == local else (out[:, :, half:], lse[:, :, half:].contiguous())
        g = grad_out if a.shape[2] == local else grad_out[:, :, half:]
        bwd_args.append((g, a, b, c, o, l, s))

    def flash_backward():
        for g, a, b, c, o, l, s in bwd_args:
            aten._scaled_dot_product_flash_attention_backward.default(
                g, a, b, c, o, l, rest[0], rest[1], rest[2], rest[3], 0.0, s, rest[4], rest[5])
    flash_bwd = time_ms(flash_backward, warmup=2, reps=5)
    # the loop again with the flash ops answered from results computed beforehand (by the
    # shape of the queries and keys they are given): its eager kernels alone, which the
    # difference above confounds with the flash kernels' own variation (clocks, L2)
    fwd_answered = answered(aten._scaled_dot_product_flash_attention,
                            lambda query, key, *a, **kw: (query.shape[2], key.shape[2]))
    bwd_answered = answered(aten._scaled_dot_product_flash_attention_backward.default,
                            lambda **kw: (kw["query"].shape[2], kw["key"].shape[2]))
    eager_fwd = time_ms(lambda: mod._templated_ring_attention(
        group, 2, fwd_answered, query=q, key=k, value=v, is_causal=True), warmup=2, reps=5)
    eager_bwd = time_ms(lambda: mod._templated_ring_attention_backward(
        group, 2, bwd_answered, grad_out=grad_out, grad_out_name="grad_out", query=q, key=k, value=v,
        out=out, logsumexp=lse, is_causal=True, **kwargs), warmup=2, reps=5)
    return [cp, rank, local, f"{loop_fwd:.3f}", f"{flash_fwd:.3f}", f"{loop_fwd - flash_fwd:.3f}",
            f"{eager_fwd:.3f}", f"{loop_bwd:.3f}", f"{flash_bwd:.3f}",
            f"{loop_bwd - flash_bwd:.3f}", f"{eager_bwd:.3f}"]


def run_cases(case, local, tag):
    """case(mod, rank, cp, local) at cp 2, 4, 8, as ranks cp - 1 and cp / 2, on a one-rank gloo
    group, the ring module's shims put back after each; the rows of the cases that ran."""
    mod = ring_module()
    print(f"{tag}: {mod.__name__}, {getattr(mod, '_cp_options', None)}", file=sys.stderr,
          flush=True)
    saved = (mod.dist, mod._create_rotater)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/pg", rank=0, world_size=1)
        try:
            for cp in (2, 4, 8):
                for rank in sorted({cp - 1, cp // 2}):
                    try:
                        rows.append(case(mod, rank, cp, local))
                        print(f"{tag}:", ",".join(map(str, rows[-1])), file=sys.stderr,
                              flush=True)
                    except Exception as e:  # report, keep the other cases
                        print(f"{tag}: cp {cp} rank {rank} failed: {e!r}", file=sys.stderr,
                              flush=True)
                    finally:
                        mod.dist, mod._create_rotater = saved
                        torch.cuda.empty_cache()
        finally:
            dist.destroy_process_group()
    return rows


def ring_main(case, tag, note, head):
    """A ring script's command line (OUT.csv [--smoke]): case at every (cp, rank) of run_cases,
    written to OUT.csv with note and head; exit 1 when no case ran."""
    ap = argparse.ArgumentParser(description=tag)
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = run_cases(case, 1024 if args.smoke else 32768, tag)
    write_csv(args.out, f"{tag}.py", note, head, rows, started)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(ring_main(
        case, "cp_ring_loop",
        "PyTorch's ring-attention loop as rank r of cp, communication replaced by local buffers; "
        "Llama 3 8B's 32 heads of 128, micro-batch 1; ms, median of 5 after 2 warm-ups; eager: "
        "the loop with its flash ops answered from earlier results",
        ["cp", "rank", "local_tokens", "loop_fwd_ms", "flash_fwd_ms", "loop_less_flash_fwd_ms",
         "eager_fwd_ms", "loop_bwd_ms", "flash_bwd_ms", "loop_less_flash_bwd_ms",
         "eager_bwd_ms"]))
