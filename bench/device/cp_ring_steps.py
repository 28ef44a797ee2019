"""One rank's attention work under PyTorch's ring attention (context parallelism as torchtitan's
Table 2 ran it), on one NVIDIA GPU: where the published runs at 4 and 8 ranks lose time that
trainsim does not price (issue 31; docs/validation/torchtitan.md). Microbenchmark data; sets no
parameter.

    python3 bench/device/cp_ring_steps.py OUT.csv [--smoke]

PyTorch's _templated_ring_attention (torch/distributed/tensor/experimental/_attention.py, with
round-robin load balancing, its default) runs on each rank, whose queries are two chunks of s /
2cp tokens: step 0 the causal attention of its own keys, then cp - 1 steps each half a full
block (both query chunks against the first key chunk of an earlier rank, or the second query
chunk against both key chunks of a later one), each step's output and log-sum-exp merged into
the running result in fp32 (_SDPAMerger: out - sigmoid(lse_i - lse) (out - out_i), lse -
logsigmoid(lse - lse_i), the second half through chunk and cat where the step was partial);
its backward runs each step's flash backward and sums the query, key and value gradients in
fp32. This replays the middle rank's steps (rank cp / 2) of a Llama 3 8B layer (32 heads of
128 after repeat_kv, micro-batch 1, s / cp = 32,768 tokens a rank) without the communication,
timing apart: the flash kernels alone (forward, backward), the merges, and the gradient sums
(CUDA events, median of 5 after 2 warm-ups), beside one causal flash attention over the rank's
own tokens as the baseline.
"""
import argparse
import datetime
import sys

import torch
import torch.nn.functional as F

from cuda_timing import time_ms, write_csv

HEADS, DIM = 32, 128


def flash(q, k, v, causal):
    """Flash attention forward with its log-sum-exp (the op the ring calls)."""
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, is_causal=causal)[:2]
    return out, lse


def steps_of(rank, cp, q, k, v):
    """The (q, k, v, causal, partial) of each step of the rank (keys of other ranks random)."""
    half = q.shape[2] // 2
    out = [(q, k, v, True, False)]
    for i in range(1, cp):
        kk, vv = torch.randn_like(k), torch.randn_like(v)
        if i <= rank:  # both query chunks against the earlier rank's first key chunk
            out.append((q, kk[:, :, :half], vv[:, :, :half], False, False))
        else:  # the second query chunk against both key chunks of a later rank
            out.append((q[:, :, half:], kk, vv, False, True))
    return out


def merge(acc, out, lse, partial):
    """_SDPAMerger._merge_one in fp32, with _partial_update's chunk and cat."""
    out, lse = out.float(), lse.float().unsqueeze(-1)
    if acc is None:
        return out, lse
    a_out, a_lse = acc
    t_out = a_out.chunk(2, dim=2)[1] if partial else a_out
    t_lse = a_lse.chunk(2, dim=2)[1] if partial else a_lse
    n_out = t_out - torch.sigmoid(lse - t_lse) * (t_out - out)
    n_lse = t_lse - F.logsigmoid(t_lse - lse)
    if partial:
        n_out = torch.cat([a_out.chunk(2, dim=2)[0], n_out], dim=2)
        n_lse = torch.cat([a_lse.chunk(2, dim=2)[0], n_lse], dim=2)
    return n_out, n_lse


def timed_ms(fn):
    """Median ms of 5 after 2 warm-ups (cuda_timing.time_ms)."""
    return time_ms(fn, warmup=2, reps=5)


def rank_case(cp, local):
    torch.manual_seed(0)
    mk = lambda: torch.randn(1, HEADS, local, DIM, device="cuda", dtype=torch.bfloat16)
    q, k, v = mk(), mk(), mk()
    steps = steps_of(cp // 2, cp, q, k, v)
    outs = [flash(*s[:4]) for s in steps]
    fwd_kernels = timed_ms(lambda: [flash(*s[:4]) for s in steps])

    def merges():
        acc = None
        for (o, l), s in zip(outs, steps):
            acc = merge(acc, o, l, s[4])
        return acc
    fwd_merges = timed_ms(merges)
    # backward: each step's flash backward from a gradient of its output's shape, and the
    # gradients summed in fp32 (the query's, and the key's and value's)
    grads = []
    for s in steps:
        qq, kk, vv = (t.detach().requires_grad_() for t in s[:3])
        o = F.scaled_dot_product_attention(qq, kk, vv, is_causal=s[3])
        grads.append((o, (qq, kk, vv), torch.randn_like(o)))

    def backward_kernels():
        for o, ins, g in grads:
            torch.autograd.grad(o, ins, g, retain_graph=True)
    bwd_kernels = timed_ms(backward_kernels)
    parts = [torch.autograd.grad(o, ins, g, retain_graph=True) for o, ins, g in grads]

    def grad_sums():
        dq = torch.zeros(q.shape, device="cuda", dtype=torch.float32)
        dk = torch.zeros(k.shape, device="cuda", dtype=torch.float32)
        dv = torch.zeros(v.shape, device="cuda", dtype=torch.float32)
        for s, (gq, gk, gv) in zip(steps, parts):
            if s[4]:
                dq[:, :, local // 2:] += gq.float()
            else:
                dq += gq.float()
            n = gk.shape[2]
            dk[:, :, :n] += gk.float()
            dv[:, :, :n] += gv.float()
        return dq, dk, dv
    bwd_sums = timed_ms(grad_sums)
    qq, kk, vv = (t.detach().requires_grad_() for t in (q, k, v))
    base_fwd = timed_ms(lambda: flash(q, k, v, True))
    o = F.scaled_dot_product_attention(qq, kk, vv, is_causal=True)
    g = torch.randn_like(o)
    base_bwd = timed_ms(lambda: torch.autograd.grad(o, (qq, kk, vv), g, retain_graph=True))
    del steps, outs, grads, parts
    torch.cuda.empty_cache()
    return [cp, local, f"{fwd_kernels:.3f}", f"{fwd_merges:.3f}", f"{bwd_kernels:.3f}",
            f"{bwd_sums:.3f}", f"{base_fwd:.3f}", f"{base_bwd:.3f}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    local = 1024 if args.smoke else 32768
    rows = []
    for cp in (2, 4, 8):
        rows.append(rank_case(cp, local))
        print("cp_ring_steps:", ",".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    write_csv(args.out, "cp_ring_steps.py",
              "one rank (cp / 2) of PyTorch's load-balanced ring attention, Llama 3 8B's 32 heads "
              "of 128, micro-batch 1, no communication; ms, median of 5 after 2 warm-ups",
              ["cp", "local_tokens", "fwd_kernels_ms", "fwd_merges_ms", "bwd_kernels_ms",
               "bwd_grad_sums_ms", "causal_fwd_ms", "causal_bwd_ms"], rows, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
