"""How far the kernel table's GEMM points sit from the boost clock (issue 31, the power model;
docs/validation/power.md): kernel_table.py times its thousands of GEMM shapes back to back, so
the GPU runs them partly at its 700 W limit, and four points were 6-12% over their cool times.
A power model that slows GEMMs under the limit needs the table at the boost clock, or the bias.

    python3 bench/device/gemm_bias.py TABLE.yaml OUT.csv [--per-kernel N] [--kernels K,...] [--smoke]

Samples N measured points of each of TABLE's gemm_fwd, gemm_dgrad and gemm_wgrad, or of the
kernels --kernels names (the FP8 tables', gemm_fp8_fwd and gemm_fp8_bwd) (evenly over those of
at least 100 us, where launch gaps do not matter), and times each as kernel_table.py
does (a CUDA graph of about 4 ms, median of 5 replays) twice: cool (1 s idle before the
replays, well past the controller's 46-59 ms answer) and hot (right after 0.5 s of the fc1 GEMM
16,384 x 8,192 x 2,048 back to back, which holds the GPU at its limit). Writes OUT.csv: kernel,
m, n, k, the table's time, cool and hot (us). Microbenchmark data; sets no parameter.
"""
import argparse
import datetime
import json
import re
import time

import torch
import torch.nn.functional as F

import kernel_table as kt
from cuda_timing import write_csv

KERNELS = ("gemm_fwd", "gemm_dgrad", "gemm_wgrad")


def table_points(path, kernel):
    """[(point, time_us)] of a kernel's measured points in a trainsim kernel table (its axes
    and times are JSON-compatible flow lists)."""
    text = open(path).read()
    block = text[text.index(f"\n  {kernel}:\n"):]
    block = block[:block.index("time_us:")] + block[block.index("time_us:"):].split("]")[0] + "]"
    axes = [json.loads(v) for v in re.findall(r"\n      \w+: (\[[^\]]*\])", block)]
    times = json.loads(block[block.index("time_us:") + len("time_us:"):])
    points = [()]
    for values in axes:
        points = [p + (v,) for p in points for v in values]
    return [(p, t) for p, t in zip(points, times) if t is not None]


def heat():
    x, w, b = kt.rand(16384, 2048), kt.rand(8192, 2048), kt.rand(8192)
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        for _ in range(20):
            F.linear(x, w, b)
        torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table")
    ap.add_argument("out")
    ap.add_argument("--per-kernel", type=int, default=40)
    ap.add_argument("--kernels", default=",".join(KERNELS),
                    help="the table's GEMM kernels to sample (default: the bf16 three; the FP8 "
                    "tables: gemm_fp8_fwd,gemm_fp8_bwd)")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    kt.STREAM = torch.cuda.Stream()
    kt.SECTION = "gemm"
    kt.gemm_tables()
    kt.SECTION = "fp8"
    kt.fp8_tables()
    makers = {table.name: make for _, table, make, _, _ in kt.SPECS}
    rows = []
    n = 2 if args.smoke else args.per_kernel
    for kernel in args.kernels.split(","):
        pts = [(p, t) for p, t in table_points(args.table, kernel) if t >= 100]
        if args.smoke:
            pts = [(p, t) for p, t in pts if 2 * p[0] * p[1] * p[2] < 1e11]
        for p, t in pts[:: max(1, len(pts) // n)][:n]:
            with torch.cuda.stream(kt.STREAM):
                fn = makers[kernel](*p)
                if fn is None:
                    continue
                kt.COOL_S = 1.0
                cool = kt.median_graph_s(fn)
                kt.COOL_S = 0.0
                heat()
                hot = kt.median_graph_s(fn)
            rows.append([kernel, *p, f"{t:.2f}", f"{cool * 1e6:.2f}", f"{hot * 1e6:.2f}"])
            print(f"gemm_bias: {kernel} {p}: table {t:.1f} us, cool {cool * 1e6:.1f}, "
                  f"hot {hot * 1e6:.1f}", flush=True)
            fn = None
            torch.cuda.empty_cache()
    write_csv(args.out, "gemm_bias.py", f"table {args.table}; microseconds",
              ["kernel", "m", "n", "k", "table_us", "cool_us", "hot_us"], rows, started)


if __name__ == "__main__":
    main()
