"""What a whole training step's GPU time is made of, kernel by kernel, on one GPU (issue 31
part 1), for validation only (nothing here sets a trainsim parameter): held against
`trainsim profile` on the same workload, it says which kernels a step prediction misprices
and how much of the step the GPU sits idle.

    python3 bench/device/step_kernels.py OUT_DIR [--smoke]

Each case builds steps.py's model and recipe (gpt.py's GPT, llama_steps.py's Llama; SDPA with
PyTorch's own backend choice unless the case forces flash), runs 3 warm-up steps, then one
step under torch.profiler (CUDA activity). Writes OUT_DIR/step_kernels.csv: per case and
kernel name, the calls and their summed device time; and OUT_DIR/step_kernels_summary.csv:
per case, the step's host-clock time with the profiler off (median of 5), the profiled
step's span from its first kernel's start to its last kernel's end, the union of kernel
intervals (busy), the sum of kernel times, and the GPU's mean SM clock, power and peak
temperature over the 5 timed steps (nvidia-smi, gpu_sampler.py: does a step that runs cuDNN
attention at GEMM rates clock the GPU down?). A case that does not fit is written "oom".
"""
import argparse
import datetime
import gc
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import gpt
import llama_steps
from cuda_timing import write_csv
from gpu_sampler import WINDOW_HEAD, Sampler, window_fields


def sdpa_default(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


FLASH = gpt.attention  # gpt.py's forced flash backend

# case, kind, layers, hidden, heads, kv heads, ffn, seq, micro-batch, microbatches, recompute,
# attention
CASES = [
    ("gpt-1.3b-s16k", "gpt", 24, 2048, 16, 16, 8192, 16384, 1, 2, False, "sdpa"),
    ("gpt-1.3b-s16k-flash", "gpt", 24, 2048, 16, 16, 8192, 16384, 1, 2, False, "flash"),
    ("gpt-760m-s16k-mb2", "gpt", 24, 1536, 16, 16, 6144, 16384, 2, 1, False, "sdpa"),
    ("gpt-1.3b-s32k-full", "gpt", 24, 2048, 16, 16, 8192, 32768, 1, 1, True, "sdpa"),
    ("gpt-2.7b-s8k-full", "gpt", 32, 2560, 32, 32, 10240, 8192, 1, 2, True, "sdpa"),
    ("gpt-1.3b-s8k", "gpt", 24, 2048, 16, 16, 8192, 8192, 1, 2, False, "sdpa"),
    ("gpt-1.3b-s8k-flash", "gpt", 24, 2048, 16, 16, 8192, 8192, 1, 2, False, "flash"),
    ("gpt-2.7b-mb16-full", "gpt", 32, 2560, 32, 32, 10240, 2048, 16, 1, True, "sdpa"),
    ("gpt-6.7b-s4k-full", "gpt", 32, 4096, 32, 32, 16384, 4096, 1, 2, True, "sdpa"),
    ("llama-1b-s8k", "llama", 16, 2048, 32, 8, 8192, 8192, 1, 2, False, "sdpa"),
]
SMOKE = [("gpt-tiny", "gpt", 2, 256, 4, 4, 1024, 512, 2, 2, False, "sdpa"),
         ("llama-tiny", "llama", 2, 256, 4, 2, 512, 512, 2, 2, True, "sdpa")]


def build(case):
    _, kind, layers, h, heads, kvh, ffn, seq, mbs, n_micro, recompute, attn = case
    gpt.attention = FLASH if attn == "flash" else sdpa_default
    if kind == "gpt":
        model = gpt.make_model(layers, h, heads, seq, recompute)
        data = gpt.batches(n_micro, mbs, seq)
    else:
        torch.manual_seed(0)
        model = llama_steps.Llama(layers, h, heads, kvh, ffn, seq, recompute).to(
            device="cuda", dtype=torch.bfloat16)
        g = torch.Generator(device="cuda").manual_seed(1)
        data = [(torch.randint(0, llama_steps.VOCAB, (mbs, seq), device="cuda", generator=g),
                 torch.randint(0, llama_steps.VOCAB, (mbs, seq), device="cuda", generator=g))
                for _ in range(n_micro)]
    return gpt.Trainer(model), data


def kernel_intervals(prof):
    """(name, start_us, end_us) of every device kernel the profiler saw."""
    out = []
    for e in prof.events():
        if not str(e.device_type).endswith("CUDA"):  # DeviceType.CUDA, however it is exported
            continue
        out.append((e.name, e.time_range.start, e.time_range.end))
    return out


def union_us(intervals):
    total, cur_s, cur_e = 0.0, None, None
    for _, s, e in sorted(intervals, key=lambda x: x[1]):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    kern_rows, summary_rows = [], []
    summary_head = ["case", "status", "step_us", "span_us", "busy_us", "kernel_sum_us", "kernels",
                    "peak_bytes"] + WINDOW_HEAD
    for case in SMOKE if args.smoke else CASES:
        with Sampler() as smi:
            try:
                row, kernels = profile_case(case, smi)
            except torch.cuda.OutOfMemoryError:
                row, kernels = None, []
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        if row is None:
            summary_rows.append([case[0], "oom"] + [""] * (len(summary_head) - 2))
            print(f"step_kernels: {case[0]}: out of memory", file=sys.stderr, flush=True)
        else:
            wall0, wall1 = row[-2:]
            summary_rows.append([case[0], "ok"] + row[:-2]
                                + window_fields(smi.window(wall0, wall1)))
            kern_rows += [[case[0]] + k for k in kernels]
            print(f"step_kernels: {case[0]}: " + ", ".join(
                f"{h} {v}" for h, v in zip(summary_head[2:], summary_rows[-1][2:])),
                file=sys.stderr, flush=True)
        for fname, head, rows in (("step_kernels.csv", ["case", "kernel", "calls", "total_us"],
                                   kern_rows),
                                  ("step_kernels_summary.csv", summary_head, summary_rows)):
            write_csv(os.path.join(args.out_dir, fname), "step_kernels.py",
                      "validation data, sets no parameter", head, rows, started)


def profile_case(case, smi):
    """The summary row's measured fields followed by the timed steps' wall start and end, and
    the (kernel, calls, total us) list of one profiled step."""
    trainer, data = build(case)
    for _ in range(3):
        trainer.step(data)
    torch.cuda.synchronize()
    times = []
    wall0 = smi.now()
    for _ in range(5):
        t0 = time.perf_counter()
        trainer.step(data)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    wall1 = smi.now()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        trainer.step(data)
        torch.cuda.synchronize()
    ivs = kernel_intervals(prof)
    by_name = {}
    for name, s, e in ivs:
        calls, us = by_name.get(name, (0, 0.0))
        by_name[name] = (calls + 1, us + (e - s))
    kernels = [[name, calls, f"{us:.1f}"]
               for name, (calls, us) in sorted(by_name.items(), key=lambda kv: -kv[1][1])]
    span = max(e for _, _, e in ivs) - min(s for _, s, _ in ivs)
    row = [f"{statistics.median(times) * 1e6:.1f}", f"{span:.1f}", f"{union_us(ivs):.1f}",
           f"{sum(us for _, us in by_name.values()):.1f}", len(ivs),
           torch.cuda.max_memory_allocated(), wall0, wall1]
    return row, kernels


if __name__ == "__main__":
    main()
