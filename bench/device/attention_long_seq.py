"""Attention past the kernel tables' longest sequence, on one NVIDIA GPU.

    python3 bench/device/attention_long_seq.py OUT.csv

The kernel tables measure attention up to 32,768 tokens; trainsim prices a longer sequence as
that one's time times the square of the ratio (workloads/kernels.c, ts_kernels_time: the rate
held). This times the kernels the tables hold (F.scaled_dot_product_attention's flash backend,
causal or not, and PyTorch's default backend, causal: cuDNN's on Hopper), forward and backward,
with q, k and v of (1, batch x heads, seq, head_dim) as kernel_table.py lays them out, at
16,384 to 131,072 tokens, and writes each time with its ratio to the 32,768-token time over
(seq / 32,768)^2: 1 where the rule holds. Times: CUDA events, median of 5 after 2 warm-ups.
"""
import datetime
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import time_ms, write_csv

SEQS = [16384, 32768, 65536, 131072]
EDGE = 32768


def kernel(backend, causal, bh, s, d, direction):
    grad = direction == "bwd"
    q, k, v = (torch.randn(1, bh, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=grad)
               for _ in range(3))

    def fwd():
        if backend == "flash":
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    if direction == "fwd":
        return fwd
    out = fwd()
    dout = torch.randn_like(out)

    def bwd():
        torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)

    return bwd


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "attention_long_seq.csv"
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for backend, causal in (("flash", True), ("flash", False), ("default", True)):
        for d in (64, 128):
            for bh in (4, 16):
                for direction in ("fwd", "bwd"):
                    times = {}
                    for s in SEQS:
                        fn = kernel(backend, causal, bh, s, d, direction)
                        times[s] = time_ms(fn, warmup=2, reps=5) * 1e-3
                        del fn
                        torch.cuda.empty_cache()
                    for s in SEQS:
                        rule = times[s] / (times[EDGE] * (s / EDGE) ** 2)
                        rows.append((backend, "causal" if causal else "full", d, bh, direction, s,
                                     "%.6g" % times[s], "%.4f" % rule))
                        print(",".join(map(str, rows[-1])), flush=True)
    write_csv(out, "attention_long_seq.py",
              "rule = time / (time at 32,768 x (seq / 32,768)^2): 1 where the square rule holds",
              ("backend", "mask", "head_dim", "batch_heads", "direction", "seq", "time_s", "rule"),
              rows, started)


if __name__ == "__main__":
    main()
