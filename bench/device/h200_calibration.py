"""Calibration microbenchmarks for platforms/hgx-h200.yaml, run on one NVIDIA H200.

Measures what the platform file needs and what trainsim's cost model assumes:
  * bf16 GEMM throughput of large square products (the achievable ceiling, `gemm_ceiling`);
  * bf16 GEMM throughput of the transformer GEMMs trainsim simulates (QKV, projection, FC1,
    FC2 of GPT-22B / 175B / 1T at their tensor-parallel widths, micro-batch 1, seq 2048), to
    hold the tile-and-wave efficiency model against real kernels;
  * HBM bandwidth of a device copy (read + write) and of a reduction (read);
  * the gap between dependent small kernels on one stream (`kernel_launch`).
Prints CSV on stdout and writes h200_calibration.csv into $OUT when set. Timings use CUDA
events: 5 warm-ups, then the median of 20 timed runs (each run one launch).
"""
import csv
import os
import sys

import torch

from cuda_timing import time_ms

assert torch.cuda.is_available(), "needs a CUDA GPU"
dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False


rows = []


def gemm(label, m, n, k):
    x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    ms = time_ms(lambda: torch.matmul(x, w))
    tflops = 2.0 * m * n * k / (ms * 1e-3) / 1e12
    rows.append(("gemm", label, m, n, k, ms, tflops))


# The ceiling: large square products.
for s in (4096, 8192, 16384):
    gemm(f"square{s}", s, s, s)

# Transformer layer GEMMs, tokens = micro-batch 1 x seq 2048 (M), as trainsim shapes them:
# QKV [h, 3h/t], projection [h/t, h], FC1 [h, 4h/t], FC2 [4h/t, h].
models = {"22b": (6144, 2), "175b": (12288, 8), "1t": (25600, 8)}
for name, (h, t) in models.items():
    tokens = 2048
    gemm(f"{name}_qkv_tp{t}", tokens, 3 * h // t, h)
    gemm(f"{name}_proj_tp{t}", tokens, h, h // t)
    gemm(f"{name}_fc1_tp{t}", tokens, 4 * h // t, h)
    gemm(f"{name}_fc2_tp{t}", tokens, h, 4 * h // t)
    gemm(f"{name}_logits_tp{t}", tokens, 50304 // t, h)

# Wave quantisation: N sweeps across multiples of the tile at a fixed M, K.
for n in range(1024, 8193, 512):
    gemm(f"sweep_n{n}", 2048, n, 8192)

# HBM: device-to-device copy (counts read + write) and a sum (read only), 4 GiB.
nbytes = 4 << 30
src = torch.empty(nbytes // 2, device=dev, dtype=torch.bfloat16).normal_()
dst = torch.empty_like(src)
ms = time_ms(lambda: dst.copy_(src))
rows.append(("hbm", "copy_read_write", nbytes, 0, 0, ms, 2 * nbytes / (ms * 1e-3) / 1e12))
ms = time_ms(lambda: src.sum(dtype=torch.float32))
rows.append(("hbm", "sum_read", nbytes, 0, 0, ms, nbytes / (ms * 1e-3) / 1e12))
del src, dst

# Launch gap: 1,000 dependent tiny kernels on one stream, per kernel.
t = torch.zeros(1, device=dev)


def chain():
    for _ in range(1000):
        t.add_(1)


ms = time_ms(chain, warmup=2, reps=10)
rows.append(("launch", "dependent_add_per_kernel", 1000, 0, 0, ms / 1000, 0.0))

header = ("kind", "label", "m_or_bytes", "n", "k", "ms", "tflops_or_TBps")
out = csv.writer(sys.stdout)
out.writerow(header)
out.writerows(rows)
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], "h200_calibration.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", file=sys.stderr)
