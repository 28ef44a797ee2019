"""How a kernel's time depends on the clock its 700 W power limit leaves it, for validation and
for the power model's microbenchmark parameters (issue 31): kernel_table.py times each kernel
in a short burst whose clock depends on what ran before it, and a training step runs every
kernel at the clock its mix of kernels leaves (bench/device/step_kernels.py, sustained.py).

    python3 bench/device/power_probe.py OUT.csv [--smoke]

For each kernel (kernel_table.py's own construction and timing: randn operands, r calls
captured in a CUDA graph, median of 5 replays), three states:
  cool       after 1.5 s idle: the clock the GPU boosts to when its power is low;
  hot        right after 2 s of a large randn GEMM back to back (the power limit's clock);
  sustained  the kernel alone back to back for 4 s (median of the last second's calls):
             the clock at which this kernel by itself meets the power limit.
The SM clock and the power are read through NVML (libnvidia-ml, by ctypes) every 2 ms by a
thread, and averaged over each timed stretch. From cool and sustained: the kernel's time at
two clocks and its power at the clock it holds by itself. The hot state's clock rises back
while it is timed (the window's mean is written), so it bounds rather than measures. The
sustained state's eager calls synchronise each, so a short kernel carries its launch.
"""
import argparse
import datetime
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gpt
import kernel_table as kt
from cuda_timing import write_csv
from gpu_sampler import Nvml


def kernels(smoke):
    """(name, table, shape, callable): the step shapes of a GPT-1.3B (hidden 2,048) at
    sequences 8k and 16k, as kernel_table.py builds them."""
    rand, out = kt.rand, []
    gemms = [(8192, 8192, 2048), (16384, 8192, 2048), (8192, 2048, 2048), (8192, 2048, 8192),
             (8192, 50304, 2048)]
    attn = [(16, 8192, 128), (16, 16384, 128)]
    if smoke:
        gemms, attn = [(1024, 1024, 1024)], [(4, 1024, 64)]
    for m, n, k in gemms:
        x, w, b = rand(m, k), rand(n, k), rand(n)
        out.append(("gemm_fwd", (m, n, k), lambda x=x, w=w, b=b: F.linear(x, w, b)))
    for bh, s, d in attn:
        for table in ("sdpa", "flash"):
            for direction in ("fwd", "bwd"):
                if table == "sdpa":
                    q, k_, v = (rand(1, s, bh, d).transpose(1, 2).detach()
                                .requires_grad_(direction == "bwd") for _ in range(3))

                    def fwd(q=q, k_=k_, v=v):
                        return F.scaled_dot_product_attention(q, k_, v, is_causal=True)
                else:
                    q, k_, v = (rand(1, bh, s, d, grad=direction == "bwd") for _ in range(3))

                    def fwd(q=q, k_=k_, v=v):
                        with gpt.sdpa_kernel(gpt.SDPBackend.FLASH_ATTENTION):
                            return F.scaled_dot_product_attention(q, k_, v, is_causal=True)
                fn = fwd if direction == "fwd" else kt.backward(fwd(), (q, k_, v))
                out.append((f"{table}_{direction}_causal", (bh, s, d), fn))
    tok, h = (2048, 512) if smoke else (16384, 2048)
    x, wln, bln = rand(tok, h), rand(h), rand(h)
    out.append(("layer_norm_fwd", (tok, h), lambda: F.layer_norm(x, (h,), wln, bln)))
    y = rand(tok * 4 * h // 8 if smoke else tok * 4 * h)
    out.append(("gelu_fwd", (y.numel(),), lambda: gpt.gelu(y)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    kt.STREAM = torch.cuda.Stream()
    started = datetime.datetime.now(datetime.timezone.utc)
    nvml = Nvml()
    hx = kt.rand(16384, 8192)
    hw = kt.rand(8192, 8192)
    rows = []
    with torch.cuda.stream(kt.STREAM):
        ks = kernels(args.smoke)
        for name, shape, fn in ks:
            for state in ("cool", "hot", "sustained"):
                if state == "cool":
                    torch.cuda.synchronize()
                    time.sleep(0.3 if args.smoke else 1.5)
                elif state == "hot":
                    t_end = time.perf_counter() + (0.3 if args.smoke else 2.0)
                    while time.perf_counter() < t_end:
                        for _ in range(8):
                            hx @ hw
                        torch.cuda.synchronize()
                if state == "sustained":
                    t_end = time.perf_counter() + (0.5 if args.smoke else 4.0)
                    pairs, t_last = [], t_end - (0.25 if args.smoke else 1.0)
                    while time.perf_counter() < t_end:
                        a = torch.cuda.Event(enable_timing=True)
                        b = torch.cuda.Event(enable_timing=True)
                        a.record()
                        fn()
                        b.record()
                        b.synchronize()
                        if time.perf_counter() >= t_last:
                            pairs.append((a, b))
                    t0, t1 = t_last, time.perf_counter()
                    us = statistics.median(a.elapsed_time(b) for a, b in pairs) * 1e3
                else:
                    t0 = time.perf_counter()
                    us = kt.median_graph_s(fn) * 1e6
                    t1 = time.perf_counter()
                clk, watts, n = nvml.window(t0, t1)
                rows.append([name, "x".join(map(str, shape)), state, f"{us:.2f}",
                             f"{clk:.0f}" if n else "", f"{watts:.0f}" if n else "", n])
                print(f"power_probe: {name} {shape} {state}: {us:.1f} us at "
                      f"{clk if n else float('nan'):.0f} MHz", file=sys.stderr, flush=True)
    nvml.close()
    write_csv(args.out, "power_probe.py", "NVML clock and power sampled every 2 ms",
              ["kernel", "shape", "state", "time_us", "sm_mhz", "power_w", "samples"], rows,
              started)


if __name__ == "__main__":
    main()
