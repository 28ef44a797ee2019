"""Flash attention (SDPA's flash backend, causal) timed alone on two layouts of the same
problem (issue 31): the kernel table's (q, k, v of (1, batch x heads, seq, head_dim),
contiguous: bench/device/kernel_table.py, attention_tables) and a plain PyTorch GPT's (gpt.py:
the fused projection's output viewed as (batch, seq, 3, heads, head_dim), unbound and
transposed to (batch, heads, seq, head_dim) views). Forward, and backward alone (autograd
over the kept graph, a random output gradient, as the table times it), by CUDA events (cuda_timing.time_ms: median of 20 after 5 warm-ups);
microseconds. Microbenchmark data: whether the table's layout prices the model's kernels.

    python3 bench/device/flash_layouts.py OUT.csv
"""
import argparse
import datetime

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import cuda_timing
from cuda_timing import write_csv

SHAPES = [(8, 16, 2048, 128), (4, 32, 2048, 80), (2, 16, 8192, 128), (1, 32, 4096, 128),
          (16, 12, 1024, 64)]


def tensors(layout, b, h, s, d):  # the table's three leaves, or the model's projection output
    if layout == "table":
        return [torch.randn(1, b * h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                for _ in range(3)], None
    qkv = torch.randn(b, s, 3 * h * d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    return None, qkv


def attention(layout, leaves, qkv, b, h, s, d):
    if layout == "table":
        q, k, v = leaves
    else:
        q, k, v = (t.transpose(1, 2) for t in qkv.view(b, s, 3, h, d).unbind(2))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for b, h, s, d in SHAPES:
        for layout in ("table", "model"):
            leaves, qkv = tensors(layout, b, h, s, d)
            with torch.no_grad():
                fwd_us = cuda_timing.time_ms(lambda: attention(layout, leaves, qkv, b, h, s, d)) * 1e3
            out = attention(layout, leaves, qkv, b, h, s, d)
            dout = torch.randn_like(out)
            inputs = tuple(leaves) if leaves else (qkv,)

            bwd_us = cuda_timing.time_ms(
                lambda: torch.autograd.grad(out, inputs, dout, retain_graph=True)) * 1e3
            rows.append([b, h, s, d, layout, f"{fwd_us:.1f}", f"{bwd_us:.1f}"])
            print(*rows[-1], flush=True)
        torch.cuda.empty_cache()
    write_csv(args.out, "flash_layouts.py", "microseconds, median of 20 after 5 warm-ups",
              ["batch", "heads", "seq", "head_dim", "layout", "fwd_us", "bwd_us"], rows, started)


if __name__ == "__main__":
    main()
