"""Each kernel class's slowdown under the power limit as a function of the mix it runs in, the
power model's microbenchmark (issue 31, docs/validation/power.md). power_response.py showed the
700 W controller answering over tens of milliseconds: kernels alternating faster than that
share one clock, set by the mix's power. This measures that clock's effect directly, with
synthetic mixes of a few kernels rather than training steps.

    python3 bench/device/power_mix.py OUT.csv [--fp8] [--smoke]

Kernels (bf16): the GPT-1.3B fc1 GEMM (16,384 x 8,192 x 2,048, with bias); cuDNN's causal
attention (PyTorch's own choice on Hopper), forward and backward, 16 heads x 8,192 x 128;
flash attention's, forward and backward, same shape; a 256 MiB copy (memory-bound, as
layer norms and element-wise kernels); with --fp8, the fc1 GEMM's shape in FP8 (its own mixes,
FP8_MIXES); an idle gap (one spinning thread, as a host gap; alone, the floor of the board's power). Each
mix gives every class a share of an 8 ms block at its cool time (the forward and backward of an
attention count as one unit) and repeats the block for 2.5 s; every call is bracketed by CUDA
events, and the last 1.5 s (well past the controller's answer) is measured: each kernel's
median duration over its cool time (CUDA graph after 1 s idle, as kernel_table.py times a
point), the classes' measured time shares, NVML's mean SM clock and power over the window
(instant readings, updated about every 100 ms) and its trailing one-second average. Writes
OUT.csv: one row a mix and kernel. Microbenchmark data: the power model's parameters come
from it; no training step is timed here.
"""
import argparse
import datetime
import statistics
import time

import torch
import torch.nn.functional as F

import gpt
import kernel_table as kt
from cuda_timing import write_csv
from gpu_sampler import Nvml

BLOCK_S = 0.008
MIX_S, MEASURE_S = 2.5, 1.5
# (name, {unit: share of the block at cool times}); units below
MIXES = [("idle", {"idle": 1}), ("gemm", {"gemm": 1}), ("sdpa", {"sdpa": 1}),
         ("flash", {"flash": 1}), ("copy", {"copy": 1}),
         ("gemm75_sdpa25", {"gemm": .75, "sdpa": .25}), ("gemm50_sdpa50", {"gemm": .5, "sdpa": .5}),
         ("gemm25_sdpa75", {"gemm": .25, "sdpa": .75}),
         ("gemm50_flash50", {"gemm": .5, "flash": .5}), ("gemm50_copy50", {"gemm": .5, "copy": .5}),
         ("sdpa50_copy50", {"sdpa": .5, "copy": .5}), ("flash50_copy50", {"flash": .5, "copy": .5}),
         ("gemm75_idle25", {"gemm": .75, "idle": .25}), ("gemm50_idle50", {"gemm": .5, "idle": .5}),
         ("sdpa75_idle25", {"sdpa": .75, "idle": .25}), ("sdpa50_idle50", {"sdpa": .5, "idle": .5}),
         ("flash50_idle50", {"flash": .5, "idle": .5}), ("copy50_idle50", {"copy": .5, "idle": .5}),
         ("step_sdpa", {"gemm": .4, "sdpa": .35, "copy": .18, "idle": .07}),
         ("step_flash", {"gemm": .35, "flash": .45, "copy": .15, "idle": .05})]
# --fp8: the same GEMM's shape in FP8 (torch._scaled_mm, E4M3, per-tensor scales, fast
# accumulation: the FP8 forward tables' kernel) beside the classes the model already has, for an
# FP8 class of its own (docs/validation/power.md: the FP8 tables' timing bias)
FP8_MIXES = [("idle", {"idle": 1}), ("gemm", {"gemm": 1}), ("copy", {"copy": 1}),
             ("fp8", {"fp8": 1}), ("fp8_75_idle25", {"fp8": .75, "idle": .25}),
             ("fp8_50_idle50", {"fp8": .5, "idle": .5}), ("fp8_50_copy50", {"fp8": .5, "copy": .5}),
             ("fp8_50_gemm50", {"fp8": .5, "gemm": .5}), ("fp8_50_sdpa50", {"fp8": .5, "sdpa": .5}),
             ("fp8_50_flash50", {"fp8": .5, "flash": .5})]


def kernels(smoke):
    """{kernel: callable} and {unit: [kernel, ...]} on the current stream."""
    m, n, k = (1024, 1024, 1024) if smoke else (16384, 8192, 2048)
    x, w, b = kt.rand(m, k), kt.rand(n, k), kt.rand(n)
    src = kt.rand(32 << 20 if smoke else 128 << 20)
    dst = torch.empty_like(src)
    bh, seq, d = (4, 1024, 64) if smoke else (16, 8192, 128)

    def attention(flash):
        q, k_, v = (kt.rand(1, seq, bh, d).transpose(1, 2).detach().requires_grad_(True)
                    for _ in range(3))

        def fwd():
            if flash:
                with gpt.sdpa_kernel(gpt.SDPBackend.FLASH_ATTENTION):
                    return F.scaled_dot_product_attention(q, k_, v, is_causal=True)
            return F.scaled_dot_product_attention(q, k_, v, is_causal=True)
        def fwd_no_grad():  # as kernel_table.py times the forward: no autograd record
            with torch.no_grad():
                return fwd()
        return fwd_no_grad, kt.backward(fwd(), (q, k_, v))

    sdpa_fwd, sdpa_bwd = attention(False)
    flash_fwd, flash_bwd = attention(True)
    a8, b8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn).t()  # b column-major
    one = torch.ones((), device=x.device, dtype=torch.float32)
    calls = {"gemm": lambda: F.linear(x, w, b), "sdpa_fwd": sdpa_fwd, "sdpa_bwd": sdpa_bwd,
             "flash_fwd": flash_fwd, "flash_bwd": flash_bwd, "copy": lambda: dst.copy_(src),
             "fp8": lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                             out_dtype=torch.bfloat16, use_fast_accum=True)}
    units = {"gemm": ["gemm"], "sdpa": ["sdpa_fwd", "sdpa_bwd"],
             "flash": ["flash_fwd", "flash_bwd"], "copy": ["copy"], "idle": ["idle"],
             "fp8": ["fp8"]}
    return calls, units


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--fp8", action="store_true", help="the FP8 GEMM's mixes (FP8_MIXES)")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    started = datetime.datetime.now(datetime.timezone.utc)
    kt.STREAM = torch.cuda.Stream()
    with torch.cuda.stream(kt.STREAM):
        rows, note = measure(args.smoke, FP8_MIXES if args.fp8 else MIXES)
    write_csv(args.out, "power_mix.py", note,
              ["mix", "kernel", "share_cool", "share_measured", "calls", "median_us", "cool_us",
               "stretch", "sm_mhz", "power_w", "power_1s_avg_w", "samples"], rows, started)


def measure(smoke, mixes):
    calls, units = kernels(smoke)
    cool = {}
    for name, fn in calls.items():
        torch.cuda.synchronize()
        time.sleep(1.0)
        cool[name] = kt.median_graph_s(fn)
    unit_s = {u: sum(cool[kname] for kname in ks) for u, ks in units.items() if u != "idle"}
    scale = 0.2 if smoke else 1.0
    nvml = Nvml(period_s=0.001)
    rows = []
    for mix, shares in mixes:
        block = []  # (kernel, idle seconds or None)
        for unit, share in shares.items():
            if unit == "idle":
                block.append(("idle", share * BLOCK_S))
                continue
            for _ in range(max(1, round(share * BLOCK_S / unit_s[unit]))):
                block += [(kname, None) for kname in units[unit]]
        torch.cuda.synchronize()
        marker = torch.cuda.Event(enable_timing=True)
        t_host = time.perf_counter()
        marker.record()
        launched, chunk_ends, elapsed = [], [], 0.0
        while elapsed < MIX_S * scale:
            for kname, idle_s in block:
                a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                if idle_s is None:
                    calls[kname]()
                else:  # torch.cuda._sleep counts cycles; at the boost clock, 1.98 GHz
                    torch.cuda._sleep(int(idle_s * 1.98e9))
                e.record()
                launched.append((kname, a, e))
            elapsed += BLOCK_S
            done = torch.cuda.Event()
            done.record()
            chunk_ends.append(done)
            if len(chunk_ends) > 2:  # the host stays at most two blocks ahead
                chunk_ends[-3].synchronize()
        torch.cuda.synchronize()
        spans = [(kname, marker.elapsed_time(a) * 1e-3, marker.elapsed_time(e) * 1e-3)
                 for kname, a, e in launched]
        w0 = spans[-1][2] - MEASURE_S * scale
        kept = [s for s in spans if s[1] >= w0]
        window = kept[-1][2] - kept[0][1]
        samples = [s for s in nvml.samples
                   if t_host + kept[0][1] <= s[0] <= t_host + kept[-1][2]]
        mhz = statistics.mean(s[1] for s in samples) if samples else float("nan")
        watts = statistics.mean(s[2] for s in samples) if samples else float("nan")
        avg = samples[-1][3] if samples else float("nan")
        for kname in dict.fromkeys(k for k, _ in block):
            d = [s[2] - s[1] for s in kept if s[0] == kname]
            unit = next(u for u, ks in units.items() if kname in ks)
            med = statistics.median(d)
            base = cool.get(kname)
            rows.append([mix, kname, f"{shares[unit]:.2f}", f"{sum(d) / window:.3f}", len(d),
                         f"{med * 1e6:.1f}", f"{base * 1e6:.1f}" if base else "-",
                         f"{med / base:.4f}" if base else "-", f"{mhz:.0f}", f"{watts:.0f}",
                         f"{avg:.0f}", len(samples)])
            print(f"power_mix: {mix} {kname}: {len(d)} calls, median {med * 1e6:.1f} us"
                  + (f", x{med / base:.3f} of cool" if base else "")
                  + f"; {mhz:.0f} MHz, {watts:.0f} W (1 s avg {avg:.0f} W)", flush=True)
    nvml.close()
    note = ("cool times " + ", ".join(f"{k} {t * 1e6:.1f} us" for k, t in cool.items())
            + f"; blocks of {BLOCK_S * 1e3:.0f} ms for {MIX_S * scale:.1f} s a mix, the last "
            f"{MEASURE_S * scale:.1f} s measured")
    return rows, note


if __name__ == "__main__":
    main()
