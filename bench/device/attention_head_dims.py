"""Attention at head dimensions off the kernel tables' grid, on one NVIDIA GPU.

    python3 bench/device/attention_head_dims.py OUT.csv

The kernel tables measure attention at head dimensions 64, 80 and 128. This times the kernels the
tables hold (F.scaled_dot_product_attention's flash backend, causal or not, and PyTorch's default
backend, causal), forward and backward, with q, k and v of (1, batch x heads, seq, head_dim) as
kernel_table.py lays them out, at head dimensions 32, 64, 128 and 256 (Gemma's), and writes each
time with its ratio to the nearest measured head dimension's: `ratio` = time / time at 64 (for
32) or at 128 (for 256), beside the head dimensions' ratio (the work's). Times: CUDA events,
median of 10 after 3 warm-ups.
"""
import datetime
import sys

import torch

from attention_long_seq import kernel  # the same kernels, laid out as kernel_table.py lays them
from cuda_timing import time_ms, write_csv

DIMS = [32, 64, 128, 256]
NEAREST = {32: 64, 64: 64, 128: 128, 256: 128}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "attention_head_dims.csv"
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for backend, causal in (("flash", True), ("flash", False), ("default", True)):
        for bh in (8, 32):
            for s in (2048, 8192):
                for direction in ("fwd", "bwd"):
                    times = {}
                    for d in DIMS:
                        try:
                            fn = kernel(backend, causal, bh, s, d, direction)
                            times[d] = time_ms(fn, warmup=3, reps=10) * 1e-3
                            del fn
                        except RuntimeError as e:  # a backend that refuses the head dimension
                            print(f"# {backend} d={d}: {str(e).splitlines()[0][:120]}", flush=True)
                        torch.cuda.empty_cache()
                    for d in DIMS:
                        if d not in times:
                            continue
                        base = times.get(NEAREST[d])
                        ratio = "%.4f" % (times[d] / base) if base else ""
                        rows.append((backend, "causal" if causal else "full", bh, s, direction, d,
                                     "%.6g" % times[d], ratio, "%.3g" % (d / NEAREST[d])))
                        print(",".join(map(str, rows[-1])), flush=True)
    write_csv(out, "attention_head_dims.py",
              "ratio = time / time at the nearest measured head dimension (64 for 32, 128 for "
              "256); work_ratio = the head dimensions' ratio",
              ("backend", "mask", "batch_heads", "seq", "direction", "head_dim", "time_s", "ratio",
               "work_ratio"), rows, started)


if __name__ == "__main__":
    main()
