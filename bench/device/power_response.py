"""How fast the 700 W power limit's controller moves the clock, for the power model's
microbenchmark parameters (issue 31, docs/validation/power.md): a training step alternates
kernels of very different power (a GEMM, a memory-bound copy, an idle gap) every millisecond to
tens of milliseconds, and whether each kernel runs at a clock of its own or at one averaged
over the mix depends on how quickly the controller answers a change of load.

    python3 bench/device/power_response.py OUT_DIR [--smoke]

Phases, back to back on one stream (the host stays at most two chunks ahead, so the GPU never
waits): idle; the GPT-1.3B fc1 GEMM (16,384 x 8,192 x 2,048, bf16) alone; a 256 MiB
copy alone; idle, then cuDNN's causal attention forward (PyTorch's choice on Hopper; 16 heads
x 8,192 x 128) alone; idle, then flash attention's, alone (how long each keeps its cool time
after idle is how long the controller takes to answer); GEMM and copy alternating in
stretches of 1, 4, 16 and 64 ms of GEMM (each followed by as long of copy at the copy's cool
rate); GEMM alternating with idle gaps of the same lengths; cuDNN's attention, flash's and the
copy alternating with idle gaps in stretches of 1 and 4 ms (below the limit on average: the
phase's mean power is each kernel's at the boost clock and idle's, weighted by their time).
Every kernel is bracketed by CUDA events, placed on the host's clock through a marker event
recorded right after a synchronisation (off by the launch latency, tens of us), and given
the NVML samples (read every 1 ms: SM clock, instantaneous power; the driver updates both
about every 100 ms on the H100, docs/validation/power.md) that fall inside it. Writes
OUT_DIR/power_response.csv (phase, kernel, start_us, dur_us, sm_mhz, power_w, samples) and
OUT_DIR/power_response_samples.csv (us after the marker, sm_mhz, power_w, and NVML's trailing
one-second average power). Validation and
microbenchmark data; sets no parameter by itself.
"""
import argparse
import bisect
import datetime
import os
import sys
import time

import torch
import torch.nn.functional as F

import gpt
import kernel_table as kt
from cuda_timing import write_csv
from gpu_sampler import Nvml


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    started = datetime.datetime.now(datetime.timezone.utc)
    kt.STREAM = torch.cuda.Stream()
    with torch.cuda.stream(kt.STREAM):
        rows, trace, note = measure(args.smoke)
    write_csv(os.path.join(args.out_dir, "power_response.csv"), "power_response.py", note,
              ["phase", "kernel", "start_us", "dur_us", "sm_mhz", "power_w", "samples"], rows,
              started)
    write_csv(os.path.join(args.out_dir, "power_response_samples.csv"), "power_response.py",
              note, ["us_after_marker", "sm_mhz", "power_w", "power_1s_avg_w"], trace, started)


def measure(smoke):
    """(kernel rows, NVML sample rows, the CSVs' note) of the phases on the current stream."""
    m, n, k = (1024, 1024, 1024) if smoke else (16384, 8192, 2048)
    x, w, b = kt.rand(m, k), kt.rand(n, k), kt.rand(n)
    src = kt.rand(32 << 20 if smoke else 128 << 20)
    dst = torch.empty_like(src)
    bh, seq, d = (4, 1024, 64) if smoke else (16, 8192, 128)
    q, k_, v = (kt.rand(1, bh, seq, d) for _ in range(3))

    def flash():
        with gpt.sdpa_kernel(gpt.SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k_, v, is_causal=True)
    kernels = {"gemm": lambda: F.linear(x, w, b), "copy": lambda: dst.copy_(src),
               "sdpa": lambda: F.scaled_dot_product_attention(q, k_, v, is_causal=True),
               "flash": flash}
    cool = {}
    for name, fn in kernels.items():
        torch.cuda.synchronize()
        time.sleep(1.0)
        cool[name] = kt.median_graph_s(fn)
    scale = 0.1 if smoke else 1.0
    phases = [("idle", [("idle", 1.0)]), ("gemm", [("gemm", 1.5)]), ("copy", [("copy", 1.0)]),
              ("idle_2", [("idle", 1.0)]), ("sdpa", [("sdpa", 1.5)]),
              ("idle_3", [("idle", 1.0)]), ("flash", [("flash", 1.5)])]
    for ms in (1, 4, 16, 64):
        phases.append((f"gemm_copy_{ms}ms", [("gemm", ms / 1e3), ("copy", ms / 1e3)]))
        phases.append((f"gemm_idle_{ms}ms", [("gemm", ms / 1e3), ("idle", ms / 1e3)]))
    for name in ("sdpa", "flash", "copy"):  # each one's power at the boost clock: below the
        for ms in (1, 4):  # limit on average, its share of the phase's mean reading
            phases.append((f"{name}_idle_{ms}ms", [(name, ms / 1e3), ("idle", ms / 1e3)]))
    phase_len = 1.5 * scale

    nvml = Nvml(period_s=0.001)
    marker = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    t_host = time.perf_counter()
    marker.record()
    launched, chunk_ends = [], []
    for phase, pattern in phases:
        total = pattern[0][1] * scale if len(pattern) == 1 else phase_len
        elapsed = 0.0
        while elapsed < total:
            chunk = 0.0
            for name, secs in pattern:
                # idle: one thread spinning (torch.cuda._sleep counts cycles; at the boost
                # clock, 1.98 GHz, the gap lasts secs)
                calls = 1 if name == "idle" else max(1, round(secs * scale / cool[name]))
                for _ in range(calls):
                    a = torch.cuda.Event(enable_timing=True)
                    e = torch.cuda.Event(enable_timing=True)
                    a.record()
                    if name == "idle":
                        torch.cuda._sleep(int(secs * scale * 1.98e9))
                    else:
                        kernels[name]()
                    e.record()
                    launched.append((phase, name, a, e))
                chunk += secs * scale
            elapsed += chunk
            done = torch.cuda.Event()
            done.record()
            chunk_ends.append(done)
            if len(chunk_ends) > 2:
                chunk_ends[-3].synchronize()
    torch.cuda.synchronize()
    nvml.close()
    samples = [s for s in nvml.samples if s[0] >= t_host - 0.01]
    times = [s[0] for s in samples]
    rows = []
    for phase, name, a, e in launched:
        s_ms, e_ms = marker.elapsed_time(a), marker.elapsed_time(e)
        h0, h1 = t_host + s_ms * 1e-3, t_host + e_ms * 1e-3
        inside = samples[bisect.bisect_left(times, h0):bisect.bisect_right(times, h1)]
        mhz = sum(s[1] for s in inside) / len(inside) if inside else float("nan")
        watts = sum(s[2] for s in inside) / len(inside) if inside else float("nan")
        rows.append([phase, name, f"{s_ms * 1e3:.1f}", f"{(e_ms - s_ms) * 1e3:.1f}",
                     f"{mhz:.0f}", f"{watts:.0f}", len(inside)])
    for phase, _ in phases:
        mine = [r for r in rows if r[0] == phase]
        for name in list(kernels) + ["idle"]:
            d = sorted(float(r[3]) for r in mine if r[1] == name)
            if d:
                cool_us = f"{cool[name] * 1e6:.1f}" if name in cool else "-"
                print(f"power_response: {phase} {name}: {len(d)} calls, median {d[len(d) // 2]:.1f}"
                      f" us (cool {cool_us})", file=sys.stderr, flush=True)
    end = times[-1] if times else t_host
    trace = [[f"{(s[0] - t_host) * 1e6:.0f}", s[1], f"{s[2]:.1f}", f"{s[3]:.1f}"]
             for s in samples if s[0] <= end]
    note = ("NVML SM clock and instantaneous power every 1 ms; cool times "
            + ", ".join(f"{name} {t * 1e6:.1f} us" for name, t in cool.items()))
    return rows, trace, note


if __name__ == "__main__":
    main()
