"""Does a kernel run slower when it runs for seconds than in the short burst kernel_table.py
times? For validation only (nothing here sets a trainsim parameter): a training step keeps the
GPU busy for seconds, the table times each kernel in a burst of milliseconds, and a 700 W
Hopper running its tensor cores near their peak may clock down to hold its power limit (issue
31: the SDPA steps, whose cuDNN attention runs at GEMM rates, land 2-9% slower than the table
adds up to on both the H100 and the H200).

    python3 bench/device/sustained.py OUT.csv [--seconds S] [--smoke]

Each kernel: 3 s idle, a burst as kernel_table.py times it (5 warm-ups, median of 20 with CUDA
events), then S seconds back to back, each call timed with events (median per second), then
the burst again on the hot GPU. nvidia-smi samples the clocks and power throughout
(gpu_sampler.py). Kernels, at a GPT-1.3B layer's shapes at sequence 16,384 (batch 1, 16
heads of 128): the FC1 GEMM forward, causal attention forward + backward by PyTorch's default
backend (cuDNN on Hopper) and by the flash backend, and a 1 GiB copy (memory-bound, for
contrast).
"""
import argparse
import datetime
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import time_ms, write_csv
from gpu_sampler import WINDOW_HEAD, Sampler, window_fields


def kernels(smoke):
    s, h, heads = (2048, 512, 4) if smoke else (16384, 2048, 16)
    d = h // heads
    x = torch.randn(s, h, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4 * h, h, device="cuda", dtype=torch.bfloat16)

    def gemm():
        return F.linear(x, w)

    qkv = [torch.randn(1, s, heads, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
           .requires_grad_() for _ in range(3)]
    grad = torch.randn(1, heads, s, d, device="cuda", dtype=torch.bfloat16)

    def attention(backend):
        def run():
            if backend is None:
                out = F.scaled_dot_product_attention(*qkv, is_causal=True)
            else:
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(*qkv, is_causal=True)
            torch.autograd.grad(out, qkv, grad)
        return run

    src = torch.empty(1 << (26 if smoke else 29), device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)

    def copy():
        dst.copy_(src)

    return [("gemm_fc1_fwd", gemm), ("sdpa_default_fwd_bwd", attention(None)),
            ("sdpa_flash_fwd_bwd", attention(SDPBackend.FLASH_ATTENTION)), ("copy_1gib", copy)]


def sustained(fn, seconds, now):
    """[(second, median ms, calls, wall start, wall end)] over `seconds` of back-to-back calls;
    now() is the wall clock the samples are stamped with."""
    out, t_start = [], time.perf_counter()
    while time.perf_counter() - t_start < seconds:
        pairs = []
        t_win, wall0 = time.perf_counter(), now()
        while time.perf_counter() - t_win < 1.0:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            pairs.append((a, b))
            if len(pairs) % 8 == 0:
                b.synchronize()  # keep the queue short so the window holds what it timed
        torch.cuda.synchronize()
        out.append((len(out), statistics.median(a.elapsed_time(b) for a, b in pairs),
                    len(pairs), wall0, now()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    seconds = 2 if args.smoke else args.seconds
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    with Sampler() as smi:
        marks = []
        for name, fn in kernels(args.smoke):
            time.sleep(3)
            t0 = smi.now()
            cold = time_ms(fn, warmup=5, reps=20)
            marks.append((name, "burst_idle", "", cold, 20, t0, smi.now()))
            for sec, ms, calls, w0, w1 in sustained(fn, seconds, smi.now):
                marks.append((name, "sustained", sec, ms, calls, w0, w1))
            t0 = smi.now()
            hot = time_ms(fn, warmup=5, reps=20)
            marks.append((name, "burst_hot", "", hot, 20, t0, smi.now()))
            print(f"sustained: {name}: idle burst {cold:.3f} ms, hot burst {hot:.3f} ms",
                  file=sys.stderr, flush=True)
    for name, phase, sec, ms, calls, t0, t1 in marks:
        rows.append([name, phase, sec, f"{ms:.4f}", calls] + window_fields(smi.window(t0, t1)))
    write_csv(args.out, "sustained.py", "validation data, sets no parameter",
              ["kernel", "phase", "second", "median_ms", "calls"] + WINDOW_HEAD, rows, started)


if __name__ == "__main__":
    main()
