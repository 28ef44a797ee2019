"""The kernels PyTorch's automatic mixed precision adds to a linear layer, timed on the GPU.

training.autocast (workloads/README.md) prices them from the kernel table's add_fwd (a + b in
bf16, 6 bytes an element) at the elements that move as many bytes. This measures each against
that add, by bytes moved, so the assumption can be checked or replaced:
  cast_fp32_bf16   w.to(torch.bfloat16)       the forward's weight cast (4 + 2 bytes)
  cast_bf16_fp32   g.to(torch.float32)        the weight gradient cast back (2 + 4)
  add_fp32         grad.add_(g32)             AccumulateGrad into the fp32 .grad (4 + 4 + 4)
  add_bf16         a + b, bf16                the table's add_fwd (2 + 2 + 2)
  accum_mixed      main_grad.add_(g_bf16)     the table's grad_accum (2 + 4 + 4)

  python3 autocast_kernels.py OUT.csv     (about 20 s on an H200)
"""
import csv
import sys

import torch

from cuda_timing import time_ms

SIZES = [1 << 16, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28]


def cases(n):
    w32 = torch.randn(n, device="cuda", dtype=torch.float32)
    g16 = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    g32 = torch.randn(n, device="cuda", dtype=torch.float32)
    a16 = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    return [
        ("cast_fp32_bf16", 6, lambda: w32.to(torch.bfloat16)),
        ("cast_bf16_fp32", 6, lambda: g16.to(torch.float32)),
        ("add_fp32", 12, lambda: w32.add_(g32)),
        ("add_bf16", 6, lambda: a16 + g16),
        ("accum_mixed", 10, lambda: w32.add_(g16)),
    ]


def main():
    out = sys.argv[1]
    rows = []
    for n in SIZES:
        for name, bytes_per, fn in cases(n):
            ms = time_ms(fn, warmup=5, reps=30)
            rows.append({"kernel": name, "elements": n, "bytes_per_element": bytes_per,
                         "time_us": round(ms * 1e3, 3),
                         "TBps": round(bytes_per * n / (ms * 1e-3) / 1e12, 3)})
            print(rows[-1], flush=True)
        torch.cuda.empty_cache()
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
