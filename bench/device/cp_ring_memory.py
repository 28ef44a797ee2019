"""What PyTorch's ring-attention loop holds while it runs, on one GPU (stack.cp_attention pytorch;
workloads/memory.c prices it as pytorch_ring_bytes). Microbenchmark data; sets no parameter.

    python3 bench/device/cp_ring_memory.py OUT.csv [--smoke]

cp_ring_loop.py's setting (torch's _templated_ring_attention and its backward as rank r of cp,
a shim answering r and cp; Llama 3 8B's 32 heads of 128 after repeat_kv, micro-batch 1, 32,768
tokens a rank), with rotaters that hold what the real ones hold instead of handing back the
buffer given: the keys' and values' all-gather output of every rank (_AllGatherRotater's one
allocation, cp times the rank's) and, for the gradients (_AllToAllRotater's permute), a newly
allocated received buffer beside the one sent. The flash calls run for real. Recorded:
torch.cuda.max_memory_allocated over each pass less what was allocated before it (the inputs,
and for the backward the forward's outputs), in MiB.
"""
import sys

import torch

from cp_ring_loop import aten, ring_inputs, ring_main


class HeldRotater:
    """A rotater holding what the real ones hold: the all-gathered keys and values of all cp
    ranks (gather), or a received gradient buffer beside the one sent (the permute)."""

    def __init__(self, cp, gather):
        self.cp, self.gather, self.buffer, self.sent = cp, gather, None, None

    def exchange_buffers(self, buffer):
        if self.gather:
            if self.buffer is None:
                self.buffer = buffer.new_empty(self.cp * buffer.numel())
                self.buffer.view(self.cp, -1)[0].copy_(buffer)
            return
        self.sent, self.buffer = buffer, torch.empty_like(buffer)
        self.buffer.copy_(buffer)

    def next_buffer(self):
        return self.buffer.view(self.cp, -1)[0] if self.gather else self.buffer


def peak_over(fn):
    """fn's peak allocation over what was allocated before it, MiB; and fn's result."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    res = fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**20, res


def case(mod, rank, cp, local):
    q, k, v, group = ring_inputs(mod, rank, cp, local)
    # the gradient rotater is the one created with the ALL_TO_ALL method
    mod._create_rotater = lambda pg, seq_dim, method=None: HeldRotater(
        cp, method is None or getattr(method, "name", "") != "ALL_TO_ALL")
    fwd_mib, res = peak_over(lambda: mod._templated_ring_attention(
        group, 2, aten._scaled_dot_product_flash_attention, query=q, key=k, value=v,
        is_causal=True))
    out, lse, rest = res[0], res[1], res[2:]
    grad_out = torch.randn_like(out)
    kwargs = dict(cum_seq_q=rest[0], cum_seq_k=rest[1], max_q=rest[2], max_k=rest[3],
                  dropout_p=0.0, philox_seed=rest[4], philox_offset=rest[5])
    bwd_mib, grads = peak_over(lambda: mod._templated_ring_attention_backward(
        group, 2, aten._scaled_dot_product_flash_attention_backward.default,
        grad_out=grad_out, grad_out_name="grad_out", query=q, key=k, value=v, out=out,
        logsumexp=lse, is_causal=True, **kwargs))
    del grads
    return [cp, rank, local, f"{fwd_mib:.1f}", f"{bwd_mib:.1f}"]


if __name__ == "__main__":
    sys.exit(ring_main(
        case, "cp_ring_memory",
        "PyTorch's ring-attention loop as rank r of cp, rotaters holding what the real ones hold; "
        "Llama 3 8B's 32 heads of 128, micro-batch 1; peak allocation over each pass's start, MiB",
        ["cp", "rank", "local_tokens", "fwd_peak_over_start_mib", "bwd_peak_over_start_mib"]))
